#!/usr/bin/env python3
"""Dumps the tensor values gguf-py's GGUFReader reads from GGUF files, as JSON.

Usage: values_with_gguf_py.py [--tensors NAME,NAME...] FILE...

Prints one JSON object per file (a list), mapping each tensor name to its
ggml type id, shape in ggml order, the sha256 of its data bytes as stored,
and its values as little-endian float64 hex: plain types (F32, F16, BF16,
F64, integers) as GGUFReader decodes them in the file's byte order,
quantized types through gguf.quants.dequantize. gguf-py dequantizes
little-endian blocks only, so quantized tensors of big-endian files get no
values ("values": null): compare their bytes instead. With --tensors, only the
named tensors get values (the others: null), to keep big models quick.
"""

import hashlib
import json
import sys

import numpy as np
from gguf import GGMLQuantizationType as QT, GGUFEndian, GGUFReader, quants

PLAIN = {QT.F32, QT.F16, QT.F64, QT.I8, QT.I16, QT.I32, QT.I64}


def values(r, t, only):
    if only is not None and t.name not in only:
        return None
    if t.tensor_type in PLAIN:
        return np.asarray(t.data).astype(np.float64)
    if r.endianess == GGUFEndian.BIG and t.tensor_type != QT.BF16:
        return None
    data = np.asarray(t.data)
    if t.tensor_type == QT.BF16 and r.endianess == GGUFEndian.BIG:
        data = data.view(np.uint16).byteswap().view(np.uint8)
    return quants.dequantize(data, t.tensor_type).astype(np.float64)


def dump(path, only):
    r = GGUFReader(path)
    out = {}
    for t in r.tensors:
        v = values(r, t, only)
        out[t.name] = {
            "type": int(t.tensor_type),
            "shape": [int(d) for d in t.shape],
            "sha256": hashlib.sha256(np.ascontiguousarray(t.data).tobytes()).hexdigest(),
            "values": None if v is None else v.astype("<f8").tobytes().hex(),
        }
    return out


def main():
    args = sys.argv[1:]
    only = None
    if args[:1] == ["--tensors"]:
        only = set(args[1].split(","))
        args = args[2:]
    print(json.dumps([dump(p, only) for p in args]))


if __name__ == "__main__":
    main()
