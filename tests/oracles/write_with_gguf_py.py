#!/usr/bin/env python3
"""Writes GGUF files with gguf-py's GGUFWriter and describes what it wrote.

Usage: write_with_gguf_py.py OUTDIR

For each case, OUTDIR/<case>.gguf is the file GGUFWriter wrote and
OUTDIR/cases.json lists every case: byte order, alignment, the metadata in
the order it was added (type, element type and values), and the tensors in
order with their ggml type id, shape in ggml order (innermost first, the
reverse of numpy's) and their data as little-endian hex, i.e. the numbers
before GGUFWriter byte-swaps them for a big-endian file.

The Rust tests build the same content with our Builder and compare bytes
(tests/integration/gguf_py.rs).
"""

import json
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFEndian, GGUFValueType as VT, GGUFWriter
from gguf.constants import GGML_QUANT_SIZES

TYPE_NAMES = {
    VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16",
    VT.UINT32: "u32", VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool",
    VT.STRING: "string", VT.ARRAY: "array", VT.UINT64: "u64",
    VT.INT64: "i64", VT.FLOAT64: "f64",
}


def describe_array(values, sub_type=None):
    """The JSON form of an array as GGUFWriter types it: an explicit
    sub_type, or the type of the first element (int -> i32, float -> f32)."""
    elem = sub_type if sub_type is not None else VT.get_type(values[0])
    if elem == VT.ARRAY:
        return {"element_type": "array", "value": [describe_array(v) for v in values]}
    return {"element_type": TYPE_NAMES[elem], "value": list(values)}


def every_value(w, kvs):
    """Adds one entry of every value type, arrays of every element type and
    nested arrays, recording each in `kvs` in the order added."""

    def add(key, value, vtype, sub_type=None):
        w.add_key_value(key, value, vtype, sub_type=sub_type)
        if vtype == VT.ARRAY:
            kvs.append({"key": key, "type": "array", **describe_array(value, sub_type)})
        else:
            kvs.append({"key": key, "type": TYPE_NAMES[vtype], "value": value})

    add("t.u8", 200, VT.UINT8)
    add("t.i8", -100, VT.INT8)
    add("t.u16", 60000, VT.UINT16)
    add("t.i16", -30000, VT.INT16)
    add("t.u32", 4_000_000_000, VT.UINT32)
    add("t.i32", -2_000_000_000, VT.INT32)
    add("t.f32", -1.25, VT.FLOAT32)
    add("t.bool_true", True, VT.BOOL)
    add("t.bool_false", False, VT.BOOL)
    add("t.string", "héllo wörld ✓", VT.STRING)
    add("t.u64", 2**64 - 2, VT.UINT64)
    add("t.i64", -(2**63) + 1, VT.INT64)
    add("t.f64", 3.141592653589793, VT.FLOAT64)
    add("a.u8", [0, 1, 255], VT.ARRAY, VT.UINT8)
    add("a.i8", [-128, 0, 127], VT.ARRAY, VT.INT8)
    add("a.u16", [1, 65535], VT.ARRAY, VT.UINT16)
    add("a.i16", [-32768, 5], VT.ARRAY, VT.INT16)
    add("a.u32", [7, 4_000_000_000], VT.ARRAY, VT.UINT32)
    add("a.i32", [-1, 2, -3], VT.ARRAY, VT.INT32)
    add("a.f32", [0.5, -2.0, 0.125], VT.ARRAY, VT.FLOAT32)
    add("a.bool", [True, False, True], VT.ARRAY, VT.BOOL)
    add("a.string", ["<s>", "</s>", "▁the", "x" * 300], VT.ARRAY, VT.STRING)
    add("a.u64", [2**64 - 1, 0], VT.ARRAY, VT.UINT64)
    add("a.i64", [-(2**63), 1], VT.ARRAY, VT.INT64)
    add("a.f64", [1.5, -1e300], VT.ARRAY, VT.FLOAT64)
    # Nested arrays: GGUFWriter infers inner element types (int -> i32,
    # float -> f32, str -> string), which may differ between inner arrays.
    add("a.nested", [[1, 2], ["x", "yz"], [0.25]], VT.ARRAY)
    add("a.nested2", [[[1], [2, 3]], [[4]]], VT.ARRAY)
    # Empty strings and arrays: stock GGUFWriter drops them (add_string("")
    # and add_array([]) return silently, add_key_value raises on []), so
    # they cannot be part of a byte comparison (ORACLES.md).
    w.add_string("t.dropped_empty_string", "")
    w.add_array("t.dropped_empty_array", [])


def plain_tensors(rng):
    """numpy arrays of every dtype GGUFWriter maps to a ggml type, plus BF16
    as uint16 with raw_dtype (numpy has no bfloat16)."""
    return [
        ("f32.2d", rng.standard_normal((3, 5)).astype(np.float32), None),
        ("f16.1d", rng.standard_normal(7).astype(np.float16), None),
        ("bf16.3d", rng.integers(0, 2**16, (2, 2, 3), dtype=np.uint16), Q.BF16),
        ("f64.1d", rng.standard_normal(3), None),
        ("i8.1d", rng.integers(-128, 128, 5, dtype=np.int8), None),
        ("i16.2d", rng.integers(-(2**15), 2**15, (3, 3), dtype=np.int16), None),
        ("i32.4d", rng.integers(-(2**31), 2**31, (2, 3, 1, 2), dtype=np.int32), None),
        ("i64.1d", rng.integers(-(2**63), 2**63, 3, dtype=np.int64), None),
        ("f32.scalarish", np.array([1.5], dtype=np.float32), None),
    ]


# Quantized types as raw bytes. Q8_1 is left out: gguf-py's table gives it
# 40 bytes per block, ggml's block is 36 (ORACLES.md), so gguf-py would
# compute a different shape from the same bytes.
QUANT = [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q2_K, Q.Q3_K, Q.Q4_K,
         Q.Q5_K, Q.Q6_K, Q.Q8_K, Q.IQ2_XXS, Q.IQ2_XS, Q.IQ3_XXS, Q.IQ1_S,
         Q.IQ4_NL, Q.IQ3_S, Q.IQ2_S, Q.IQ4_XS, Q.IQ1_M, Q.TQ1_0, Q.TQ2_0,
         Q.MXFP4]


def quant_tensors(rng):
    out = []
    for i, q in enumerate(QUANT):
        block, size = GGML_QUANT_SIZES[q]
        rows = 1 + i % 3
        raw = rng.integers(0, 256, (rows, 2 * size), dtype=np.uint8)
        out.append((f"q.{q.name.lower()}", raw, q))
    return out


def write_case(outdir, name, *, endian, alignment, kvs_fn, tensors, **writer_args):
    """Writes one case; `writer_args` go to GGUFWriter (split limits)."""
    path = outdir / f"{name}.gguf"
    w = GGUFWriter(path, "llama", endianess=endian, **writer_args)
    kvs = [{"key": "general.architecture", "type": "string", "value": "llama"}]
    if alignment is not None:
        w.add_custom_alignment(alignment)
        kvs.append({"key": "general.alignment", "type": "u32", "value": alignment})
    if kvs_fn is not None:
        kvs_fn(w, kvs)
    described = []
    for tname, arr, raw_dtype in tensors:
        w.add_tensor(tname, arr, raw_dtype=raw_dtype)
        if raw_dtype is None or arr.dtype != np.uint8:
            ggml_type = raw_dtype if raw_dtype is not None else {
                np.dtype(np.float32): Q.F32, np.dtype(np.float16): Q.F16,
                np.dtype(np.float64): Q.F64, np.dtype(np.int8): Q.I8,
                np.dtype(np.int16): Q.I16, np.dtype(np.int32): Q.I32,
                np.dtype(np.int64): Q.I64}[arr.dtype]
            shape = list(reversed(arr.shape))
        else:
            ggml_type = raw_dtype
            block, size = GGML_QUANT_SIZES[raw_dtype]
            shape = list(reversed(arr.shape))
            shape[0] = shape[0] // size * block
        described.append({
            "name": tname,
            "type": int(ggml_type),
            "shape": [int(d) for d in shape],
            "data_le": arr.astype(arr.dtype.newbyteorder("<")).tobytes().hex(),
        })
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return {
        "name": name,
        "file": path.name,
        "endian": "big" if endian == GGUFEndian.BIG else "little",
        "alignment": alignment if alignment is not None else 32,
        "kvs": kvs,
        "tensors": described,
    }


def write_cases(outdir, **writer_args):
    """Writes every case into outdir; returns their descriptions.
    `writer_args` go to every GGUFWriter (split_with_gguf_py.py)."""
    outdir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(42)
    LE, BE = GGUFEndian.LITTLE, GGUFEndian.BIG
    plain = plain_tensors(rng)
    quant = quant_tensors(rng)
    cases = [
        write_case(outdir, "le_all", endian=LE, alignment=None, kvs_fn=every_value,
                   tensors=plain + quant, **writer_args),
        write_case(outdir, "le_align1", endian=LE, alignment=1, kvs_fn=every_value,
                   tensors=plain[:3] + quant[:2], **writer_args),
        write_case(outdir, "le_align64", endian=LE, alignment=64, kvs_fn=every_value,
                   tensors=plain + quant[:4], **writer_args),
        write_case(outdir, "le_align4096", endian=LE, alignment=4096, kvs_fn=None,
                   tensors=plain[:2], **writer_args),
        write_case(outdir, "le_no_tensors", endian=LE, alignment=None, kvs_fn=every_value,
                   tensors=[], **writer_args),
        # Big-endian: plain types only. GGUFWriter(endianess=BIG) leaves
        # the f16 scales inside quantized blocks little-endian, which our
        # rule (DESIGN.md section 3) does not reproduce (ORACLES.md).
        write_case(outdir, "be_all", endian=BE, alignment=None, kvs_fn=every_value,
                   tensors=plain, **writer_args),
        # The little-endian twin of be_all (same content), for the
        # byte-order conversion tests.
        write_case(outdir, "le_plain", endian=LE, alignment=None, kvs_fn=every_value,
                   tensors=plain, **writer_args),
        write_case(outdir, "be_align64", endian=BE, alignment=64, kvs_fn=every_value,
                   tensors=plain, **writer_args),
    ]
    return cases


def main():
    outdir = Path(sys.argv[1])
    cases = write_cases(outdir)
    (outdir / "cases.json").write_text(json.dumps(cases, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
