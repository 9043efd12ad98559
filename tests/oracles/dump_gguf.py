#!/usr/bin/env python3
"""Print gguf-py GGUFReader's view of a GGUF file as JSON (gguf==0.19.0).

Usage: dump_gguf.py FILE

{"version", "endian": "little"|"big", "alignment", "data_offset",
 "kvs": [{"key", "types": [type names, outermost first, as gguf-py
          records them], "value": contents(), "n_data": leaf count}],
 "tensors": [{"name", "type": ggml id, "shape": stored order (innermost
              first), "offset": relative to the data section,
              "n_bytes": gguf-py's size, "sha256": of those bytes}]}

Values are gguf-py's `ReaderField.contents()`; nested arrays come back
flattened (a gguf-py quirk, see shared ORACLES.md).
"""

import hashlib
import json
import sys

try:
    from gguf import GGUFReader, GGUFEndian
except ImportError as e:  # pragma: no cover
    sys.exit(f"dump_gguf.py: cannot import gguf-py ({e}); install it with: pip install gguf==0.19.0")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    r = GGUFReader(sys.argv[1])
    out = {
        "version": int(r.fields["GGUF.version"].parts[0][0]),
        "endian": "big" if r.endianess == GGUFEndian.BIG else "little",
        "alignment": int(r.alignment),
        "data_offset": int(r.data_offset),
        "kvs": [],
        "tensors": [],
    }
    for key, field in r.fields.items():
        if key.startswith("GGUF."):
            continue  # the header's counts, not metadata
        out["kvs"].append({
            "key": key,
            "types": [t.name.lower() for t in field.types],
            "value": field.contents(),
            "n_data": len(field.data),
        })
    for t in r.tensors:
        rel = t.data_offset - r.data_offset
        raw = r.data[t.data_offset:t.data_offset + t.n_bytes].tobytes()
        out["tensors"].append({
            "name": t.name,
            "type": int(t.tensor_type),
            "shape": [int(d) for d in t.shape],
            "offset": int(rel),
            "n_bytes": int(t.n_bytes),
            "sha256": hashlib.sha256(raw).hexdigest(),
        })
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
