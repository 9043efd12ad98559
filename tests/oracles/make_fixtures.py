#!/usr/bin/env python3
"""Write GGUF fixtures with gguf-py's GGUFWriter (pinned: gguf==0.19.0).

Usage: make_fixtures.py OUTDIR [NAME ...]

Without NAMEs every fixture is written; with NAMEs only those (for example
`make_fixtures.py target/bench-fixtures llama150k`). Fixtures:

  all_types     every metadata value type, scalar and array of each (nested
                arrays too), and one tensor of every type gguf-py can write
  big_endian    the same content written with endianess=GGUFEndian.BIG
  align64       custom alignment 64
  align1        custom alignment 1 (no padding at all)
  llama150k     a llama-shaped file: 150,000-token vocabulary with scores,
                token types and 150,000 merges, plus a few tensors

Everything is deterministic (fixed seeds), so two runs give identical bytes.
"""

import os
import sys

PINNED = "0.19.0"

try:
    import numpy as np
    import gguf
    from gguf import GGUFWriter, GGUFValueType as VT, GGMLQuantizationType as QT, GGUFEndian
    from importlib.metadata import version
except ImportError as e:  # pragma: no cover - reported to the Rust test
    sys.exit(f"make_fixtures.py: cannot import gguf-py ({e}); install it with: pip install gguf=={PINNED}")

if version("gguf") != PINNED:
    sys.exit(f"make_fixtures.py: gguf-py {version('gguf')} is installed, the oracle is pinned to {PINNED}: pip install gguf=={PINNED}")

PLAIN = {
    "F32": np.float32,
    "F16": np.float16,
    "F64": np.float64,
    "I8": np.int8,
    "I16": np.int16,
    "I32": np.int32,
    "I64": np.int64,
}


def add_every_value(w: GGUFWriter) -> None:
    w.add_key_value("test.u8", 200, VT.UINT8)
    w.add_key_value("test.i8", -100, VT.INT8)
    w.add_key_value("test.u16", 60000, VT.UINT16)
    w.add_key_value("test.i16", -30000, VT.INT16)
    w.add_key_value("test.u32", 4000000000, VT.UINT32)
    w.add_key_value("test.i32", -2000000000, VT.INT32)
    w.add_key_value("test.f32", 1.25, VT.FLOAT32)
    w.add_key_value("test.f32.neg_zero", -0.0, VT.FLOAT32)
    w.add_key_value("test.bool.true", True, VT.BOOL)
    w.add_key_value("test.bool.false", False, VT.BOOL)
    w.add_key_value("test.string", "héllo, 世界 \u2603\n\t\"quoted\"", VT.STRING)
    w.add_key_value("test.u64", 2**64 - 1, VT.UINT64)
    w.add_key_value("test.i64", -(2**63), VT.INT64)
    w.add_key_value("test.f64", -1.0e300, VT.FLOAT64)
    arrays = {
        VT.UINT8: [0, 1, 255],
        VT.INT8: [-128, 0, 127],
        VT.UINT16: [0, 65535],
        VT.INT16: [-32768, 32767],
        VT.UINT32: [0, 1, 2**32 - 1],
        VT.INT32: [-(2**31), 2**31 - 1],
        VT.FLOAT32: [0.5, -3.0, 1.0e-20, 3.4e38],
        VT.BOOL: [True, False, True, True],
        VT.STRING: ["a", "bc", "ü", "spaces and\nnewlines"],
        VT.UINT64: [0, 2**64 - 1],
        VT.INT64: [-(2**63), 2**63 - 1],
        VT.FLOAT64: [3.141592653589793, -2.5e-300],
    }
    for vt, values in arrays.items():
        w.add_key_value(f"test.array.{vt.name.lower()}", values, VT.ARRAY, sub_type=vt)
    # Nested arrays: uniform inner types, and mixed (a gguf-py reader quirk).
    w.add_key_value("test.array.nested_u32", [[1, 2, 3], [4], [5, 6]], VT.ARRAY, sub_type=VT.ARRAY)
    w.add_key_value("test.array.nested_str", [["x", "y"], ["z"]], VT.ARRAY, sub_type=VT.ARRAY)
    w.add_key_value("test.array.nested_mixed", [[7, 8], ["m", "n", "o"]], VT.ARRAY, sub_type=VT.ARRAY)
    w.add_key_value("test.array.nested3", [[[1], [2, 3]], [[4, 5, 6]]], VT.ARRAY, sub_type=VT.ARRAY)


def add_every_tensor(w: GGUFWriter, rng) -> None:
    # Plain types from numpy arrays: numpy shape (rows, cols) is stored as [cols, rows].
    for name, dtype in PLAIN.items():
        if np.issubdtype(dtype, np.floating):
            data = rng.standard_normal((3, 16)).astype(dtype)
        else:
            info = np.iinfo(dtype)
            data = rng.integers(info.min, info.max, size=(3, 16), dtype=dtype, endpoint=True)
        w.add_tensor(f"plain.{name}", data)
    # BF16 has no numpy dtype: raw uint16 bits.
    bf16 = rng.integers(0, 2**16, size=(2, 32), dtype=np.uint16)
    w.add_tensor("plain.BF16", bf16, raw_dtype=QT.BF16)
    # Quantized types as raw bytes: 2 rows of 2 blocks, per gguf-py's block table.
    for qt, (block, size) in gguf.GGML_QUANT_SIZES.items():
        if block == 1:
            continue
        data = rng.integers(0, 256, size=(2, 2 * size), dtype=np.uint8)
        w.add_tensor(f"quant.{qt.name}", data, raw_dtype=qt)
    # A 1-D, a 3-D, a 4-D tensor, and a zero-element one is not writable by gguf-py.
    w.add_tensor("shape.1d", np.arange(5, dtype=np.float32))
    w.add_tensor("shape.3d", np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    w.add_tensor("shape.4d", np.arange(120, dtype=np.int16).reshape(2, 3, 4, 5))


def write(path: str, w: GGUFWriter) -> None:
    w.write_header_to_file(path)
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def all_types(path: str, endianess=GGUFEndian.LITTLE) -> None:
    w = GGUFWriter(None, "testarch", endianess=endianess)
    w.add_name("all types")
    add_every_value(w)
    add_every_tensor(w, np.random.default_rng(1))
    write(path, w)


def big_endian(path: str) -> None:
    all_types(path, GGUFEndian.BIG)


def aligned(path: str, alignment: int) -> None:
    rng = np.random.default_rng(alignment)
    w = GGUFWriter(None, "llama")
    w.add_custom_alignment(alignment)
    w.add_key_value("test.odd_string", "xyz", VT.STRING)  # an odd-length header
    w.add_tensor("a", rng.standard_normal(3).astype(np.float32))
    w.add_tensor("b", rng.standard_normal((5, 7)).astype(np.float16))
    w.add_tensor("c", rng.integers(0, 256, size=(1, 34), dtype=np.uint8), raw_dtype=QT.Q8_0)
    w.add_tensor("d", rng.integers(-9, 9, size=11, dtype=np.int8))
    write(path, w)


def llama150k(path: str) -> None:
    n_vocab = 150_000
    rng = np.random.default_rng(150)
    w = GGUFWriter(None, "llama")
    w.add_name("llama-shaped fixture")
    w.add_context_length(4096)
    w.add_embedding_length(64)
    w.add_block_count(2)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(15)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("llama-bpe")
    tokens = [f"tok{i}" if i % 7 else f"Ġwörd{i}" for i in range(n_vocab)]
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    w.add_token_list(tokens)
    w.add_token_scores([float(-i) / 3.0 for i in range(n_vocab)])
    w.add_token_types([1 + (i % 6) for i in range(n_vocab)])
    w.add_token_merges([f"t{i % 997} o{i}" for i in range(n_vocab)])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    embd = 64
    w.add_tensor("token_embd.weight", rng.integers(0, 256, size=(1024, 2 * 144), dtype=np.uint8), raw_dtype=QT.Q4_K)
    for layer in range(2):
        w.add_tensor(f"blk.{layer}.attn_norm.weight", rng.standard_normal(embd).astype(np.float32))
        for m in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(f"blk.{layer}.{m}.weight", rng.integers(0, 256, size=(embd, 2 * 34), dtype=np.uint8), raw_dtype=QT.Q8_0)
        w.add_tensor(f"blk.{layer}.ffn_norm.weight", rng.standard_normal(embd).astype(np.float32))
        for m in ("ffn_gate", "ffn_up"):
            w.add_tensor(f"blk.{layer}.{m}.weight", rng.standard_normal((128, embd)).astype(np.float16))
        w.add_tensor(f"blk.{layer}.ffn_down.weight", rng.integers(0, 256, size=(embd, 210), dtype=np.uint8), raw_dtype=QT.Q6_K)
    w.add_tensor("output_norm.weight", rng.standard_normal(embd).astype(np.float32))
    write(path, w)


FIXTURES = {
    "all_types": all_types,
    "big_endian": big_endian,
    "align64": lambda p: aligned(p, 64),
    "align1": lambda p: aligned(p, 1),
    "llama150k": llama150k,
}


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    names = sys.argv[2:] or list(FIXTURES)
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        if name not in FIXTURES:
            sys.exit(f"make_fixtures.py: unknown fixture {name!r}; known: {', '.join(FIXTURES)}")
        FIXTURES[name](os.path.join(outdir, f"{name}.gguf"))
        print(name)


if __name__ == "__main__":
    main()
