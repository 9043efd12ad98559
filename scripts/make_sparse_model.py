#!/usr/bin/env python3
"""Writes a sparse Qwen3-MoE model of any size for the larger-than-memory benchmark (issue 37,
benches/larger_than_memory.sh): the headers are real, the tensor data are holes, so a 40 GB model
costs no disk and reads as zeros.

    python3 scripts/make_sparse_model.py gguf OUT.gguf [--layers N] ...   an F16 GGUF (qwen3moe,
        the tensors `gguf import --type f16` writes, stacked experts [hidden, ffn, experts])
    python3 scripts/make_sparse_model.py shards PREFIX [--layers N] ...   the same GGUF split as
        `gguf split --max-size` splits it (shards of --shard-bytes of data, default 4 GB):
        PREFIX-00001-of-0000N.gguf, ...
    python3 scripts/make_sparse_model.py hf OUT_DIR [--layers N] ...      a bf16 safetensors
        checkpoint (one tensor per expert, shards of about 4 GB, model.safetensors.index.json,
        config.json, the qwen2-bias fixture's tokenizer padded by vocab_size)

Defaults: hidden 2048, 32 layers, 128 experts of FFN 768 (one expert's matrix 3 MiB, a stacked
expert tensor 384 MiB), vocabulary 32768: 40.1 GB. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEADS, KV_HEADS, HEAD_DIM = 32, 4, 128
ALIGN = 32


def hf_tensors(a) -> list[tuple[str, tuple[int, ...], str]]:
    """Names, shapes (row-major, as torch) and dtypes in save_pretrained's order."""
    h, f, e = a.hidden, a.ffn, a.experts
    v = [("model.embed_tokens.weight", (a.vocab, h), "BF16")]
    for i in range(a.layers):
        p = f"model.layers.{i}"
        v += [
            (f"{p}.self_attn.q_proj.weight", (HEADS * HEAD_DIM, h), "BF16"),
            (f"{p}.self_attn.k_proj.weight", (KV_HEADS * HEAD_DIM, h), "BF16"),
            (f"{p}.self_attn.v_proj.weight", (KV_HEADS * HEAD_DIM, h), "BF16"),
            (f"{p}.self_attn.o_proj.weight", (h, HEADS * HEAD_DIM), "BF16"),
            (f"{p}.self_attn.q_norm.weight", (HEAD_DIM,), "BF16"),
            (f"{p}.self_attn.k_norm.weight", (HEAD_DIM,), "BF16"),
            (f"{p}.mlp.gate.weight", (e, h), "BF16"),
        ]
        for x in range(e):
            v += [
                (f"{p}.mlp.experts.{x}.gate_proj.weight", (f, h), "BF16"),
                (f"{p}.mlp.experts.{x}.up_proj.weight", (f, h), "BF16"),
                (f"{p}.mlp.experts.{x}.down_proj.weight", (h, f), "BF16"),
            ]
        v += [
            (f"{p}.input_layernorm.weight", (h,), "BF16"),
            (f"{p}.post_attention_layernorm.weight", (h,), "BF16"),
        ]
    v += [("model.norm.weight", (h,), "BF16"), ("lm_head.weight", (a.vocab, h), "BF16")]
    return v


def gguf_tensors(a) -> list[tuple[str, tuple[int, ...], int]]:
    """Names, ggml dimensions (fastest first) and ggml types (0 F32, 1 F16)."""
    h, f, e = a.hidden, a.ffn, a.experts
    v = [("token_embd.weight", (h, a.vocab), 1)]
    for i in range(a.layers):
        p = f"blk.{i}"
        v += [
            (f"{p}.attn_norm.weight", (h,), 0),
            (f"{p}.attn_q.weight", (h, HEADS * HEAD_DIM), 1),
            (f"{p}.attn_k.weight", (h, KV_HEADS * HEAD_DIM), 1),
            (f"{p}.attn_v.weight", (h, KV_HEADS * HEAD_DIM), 1),
            (f"{p}.attn_output.weight", (HEADS * HEAD_DIM, h), 1),
            (f"{p}.attn_q_norm.weight", (HEAD_DIM,), 0),
            (f"{p}.attn_k_norm.weight", (HEAD_DIM,), 0),
            (f"{p}.ffn_gate_inp.weight", (h, e), 0),
            (f"{p}.ffn_gate_exps.weight", (h, f, e), 1),
            (f"{p}.ffn_up_exps.weight", (h, f, e), 1),
            (f"{p}.ffn_down_exps.weight", (f, h, e), 1),
            (f"{p}.ffn_norm.weight", (h,), 0),
        ]
    v += [("output_norm.weight", (h,), 0), ("output.weight", (h, a.vocab), 1)]
    return v


def gstr(s: str) -> bytes:
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key: str, value) -> bytes:
    if isinstance(value, tuple):
        ty, v = value
        return gstr(key) + (struct.pack("<IH", 2, v) if ty == "u16" else struct.pack("<Ii", 5, v))
    if isinstance(value, str):
        return gstr(key) + struct.pack("<I", 8) + gstr(value)
    if isinstance(value, float):
        return gstr(key) + struct.pack("<If", 6, value)
    return gstr(key) + struct.pack("<II", 4, value)


def align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def write_gguf(a, out: Path) -> int:
    kvs, tensors = gguf_model(a)
    return write_one(out, kvs, tensors)


def write_shards(a, out: Path) -> int:
    """gguf-py's split (as `gguf split --max-size`): a new shard when the next tensor would pass
    max_bytes of data; the metadata in the first, split.* keys in each."""
    kvs, tensors = gguf_model(a)
    shards: list[list] = [[]]
    size = 0
    for t in tensors:
        n = nbytes(t)
        if shards[-1] and size + n > a.shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(t)
        size += n
    total = 0
    for i, shard in enumerate(shards):
        split = [("split.no", ("u16", i)), ("split.count", ("u16", len(shards))),
                 ("split.tensors.count", ("i32", len(tensors)))]
        path = Path(f"{out}-{i + 1:05d}-of-{len(shards):05d}.gguf")
        total += write_one(path, (kvs if i == 0 else []) + split, shard)
    return total


def nbytes(t) -> int:
    n = 4 if t[2] == 0 else 2
    for d in t[1]:
        n *= d
    return n


def gguf_model(a):
    arch = "qwen3moe"
    kvs = [
        ("general.architecture", arch),
        ("general.name", "sparse"),
        ("general.file_type", 1),
        (f"{arch}.block_count", a.layers),
        (f"{arch}.context_length", 32768),
        (f"{arch}.embedding_length", a.hidden),
        (f"{arch}.feed_forward_length", 4 * a.hidden),
        (f"{arch}.attention.head_count", HEADS),
        (f"{arch}.attention.head_count_kv", KV_HEADS),
        (f"{arch}.attention.key_length", HEAD_DIM),
        (f"{arch}.attention.value_length", HEAD_DIM),
        (f"{arch}.rope.freq_base", 1000000.0),
        (f"{arch}.attention.layer_norm_rms_epsilon", 1e-6),
        (f"{arch}.expert_count", a.experts),
        (f"{arch}.expert_used_count", 8),
        (f"{arch}.expert_feed_forward_length", a.ffn),
    ]
    return kvs, gguf_tensors(a)


def write_one(out: Path, kvs, tensors) -> int:
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    head += b"".join(kv(k, v) for k, v in kvs)
    offset = 0
    for name, dims, ty in tensors:
        head += gstr(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
        head += struct.pack("<IQ", ty, offset)
        offset = align(offset + nbytes((name, dims, ty)))
    head += bytes(align(len(head)) - len(head))
    with open(out, "wb") as f:
        f.write(head)
        f.truncate(len(head) + offset)
    return len(head) + offset


def write_hf(a, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    items = hf_tensors(a)
    shards: list[list] = [[]]
    size = 0
    for item in items:
        n = 2
        for d in item[1]:
            n *= d
        if size + n > a.shard_bytes and shards[-1]:
            shards.append([])
            size = 0
        shards[-1].append((item, n))
        size += n
    weight_map = {}
    total = 0
    for i, shard in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        header = {"__metadata__": {"format": "pt"}}
        at = 0
        for (name, shape, dtype), n in shard:
            header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + n]}
            weight_map[name] = fname
            at += n
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        with open(out / fname, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            f.truncate(8 + len(text) + at)
        total += at
    (out / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, indent=2))
    tok = REPO / "tests" / "data" / "import" / "qwen2-bias"
    for f in ["tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"]:
        shutil.copyfile(tok / f, out / f)
    (out / "config.json").write_text(json.dumps({
        "architectures": ["Qwen3MoeForCausalLM"],
        "attention_bias": False,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "hidden_size": a.hidden,
        "intermediate_size": 4 * a.hidden,
        "max_position_embeddings": 32768,
        "model_type": "qwen3_moe",
        "moe_intermediate_size": a.ffn,
        "norm_topk_prob": True,
        "num_attention_heads": HEADS,
        "num_experts": a.experts,
        "num_experts_per_tok": 8,
        "num_hidden_layers": a.layers,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "vocab_size": a.vocab,
    }, indent=2))
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("kind", choices=["gguf", "shards", "hf"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--ffn", type=int, default=768)
    ap.add_argument("--experts", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--shard-bytes", type=int, default=4_000_000_000)
    a = ap.parse_args()
    n = {"gguf": write_gguf, "shards": write_shards, "hf": write_hf}[a.kind](a, a.out)
    print(f"{a.out}: {n / 1e9:.2f} GB (sparse)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
