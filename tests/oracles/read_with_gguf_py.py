#!/usr/bin/env python3
"""Dumps what gguf-py's GGUFReader sees in GGUF files, as JSON.

Usage: read_with_gguf_py.py FILE...

Prints one JSON list with, per file: version, byte order, alignment, data
offset, every metadata entry in file order (type, element type for arrays,
value via ReaderField.contents(), number of leaf values) and every tensor
in order (ggml type id, shape in ggml order, byte count, offset, and the
sha256 of its data bytes as they are stored in the file).

GGUFReader flattens nested arrays and garbles inner arrays of mixed types
(ORACLES.md): for those only the leaf count is meaningful.
"""

import hashlib
import json
import sys

import numpy as np
from gguf import GGUFEndian, GGUFReader, GGUFValueType as VT

TYPE_NAMES = {
    VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16",
    VT.UINT32: "u32", VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool",
    VT.STRING: "string", VT.ARRAY: "array", VT.UINT64: "u64",
    VT.INT64: "i64", VT.FLOAT64: "f64",
}


def plain(v):
    """numpy scalars and lists to JSON-able values; non-finite floats as strings."""
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, (np.generic,)):
        v = v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return repr(v)
    return v


def dump(path):
    r = GGUFReader(path)
    kvs = []
    for key, field in r.fields.items():
        if key.startswith("GGUF."):
            continue
        entry = {"key": key, "type": TYPE_NAMES[field.types[0]]}
        if field.types[0] == VT.ARRAY:
            entry["element_type"] = TYPE_NAMES[field.types[1]] if len(field.types) > 1 else None
            entry["leaf_count"] = len(field.data)
        entry["value"] = plain(field.contents())
        kvs.append(entry)
    tensors = []
    for t in r.tensors:
        data = np.ascontiguousarray(t.data)
        raw = data.tobytes()
        tensors.append({
            "name": t.name,
            "type": int(t.tensor_type),
            "shape": [int(d) for d in t.shape],
            "n_bytes": int(t.n_bytes),
            "offset": int(t.data_offset) - int(r.data_offset),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "data_len": len(raw),
        })
    return {
        "path": str(path),
        "version": int(r.fields["GGUF.version"].parts[0][0]),
        "endian": "big" if r.endianess == GGUFEndian.BIG else "little",
        "alignment": int(r.alignment),
        "data_offset": int(r.data_offset),
        "kvs": kvs,
        "tensors": tensors,
    }


def main():
    print(json.dumps([dump(p) for p in sys.argv[1:]], ensure_ascii=False))


if __name__ == "__main__":
    main()
