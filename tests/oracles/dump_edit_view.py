#!/usr/bin/env python3
"""Print what gguf-py's GGUFReader sees in a GGUF file, as JSON.

Used by the editor interop tests (tests/integration/edit_interop.rs):
`dump_edit_view.py FILE...` prints one line per file:

    {"version": 3, "endian": "LITTLE", "alignment": 32, "data_offset": N,
     "metadata": [{"key": K, "type": "UINT32", "value": 4096}, ...
                  {"key": K, "type": "ARRAY", "element_type": "STRING",
                   "len": 300, "sha256": H}, ...],
     "tensors": [{"name": N, "type": "F32", "shape": [...],
                  "n_bytes": B, "sha256": H}, ...]}

Arrays of more than 16 elements are summarised by length and the sha256
of their elements (strings as UTF-8 followed by NUL, numbers as repr()
followed by a comma). Tensor hashes are of the raw bytes gguf-py
locates for each tensor (data_offset, n_bytes), whatever the byte order.
Only GGUFReader is used (see shared/ORACLES.md for its quirks).
"""

import hashlib
import json
import sys

from gguf import GGUFReader, GGUFValueType

FULL_ARRAY_MAX = 16


def array_digest(items, element_type):
    h = hashlib.sha256()
    for x in items:
        if element_type == GGUFValueType.STRING:
            h.update(x.encode("utf-8") + b"\0")
        else:
            h.update(repr(x).encode() + b",")
    return h.hexdigest()


def field_json(field):
    main = field.types[0]
    out = {"key": field.name, "type": main.name}
    if main == GGUFValueType.ARRAY:
        sub = field.types[-1]
        if len(field.types) > 2:
            # Nested arrays: gguf-py flattens them (ORACLES.md); report
            # only the outer length.
            out["element_type"] = "ARRAY"
            out["len"] = len(field.data)
            return out
        items = field.contents()
        out["element_type"] = sub.name
        out["len"] = len(items)
        if len(items) <= FULL_ARRAY_MAX:
            out["value"] = items
        else:
            out["sha256"] = array_digest(items, sub)
        return out
    out["value"] = field.contents()
    return out


def view(path):
    reader = GGUFReader(path)
    meta = [
        field_json(f)
        for name, f in reader.fields.items()
        if not name.startswith("GGUF.")
    ]
    tensors = []
    for t in reader.tensors:
        raw = reader.data[t.data_offset : t.data_offset + t.n_bytes]
        tensors.append(
            {
                "name": t.name,
                "type": t.tensor_type.name,
                "shape": [int(d) for d in t.shape],
                "n_bytes": int(t.n_bytes),
                "sha256": hashlib.sha256(raw.tobytes()).hexdigest(),
            }
        )
    doc = {
        "version": int(reader.fields["GGUF.version"].contents()),
        "endian": reader.endianess.name,
        "alignment": int(reader.alignment),
        "data_offset": int(reader.data_offset),
        "metadata": meta,
        "tensors": tensors,
    }
    return doc


def main(paths):
    # One JSON document per line, one line per file (numpy's import is
    # the slow part: read many files per run).
    for path in paths:
        json.dump(view(path), sys.stdout)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
