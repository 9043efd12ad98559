#!/usr/bin/env python3
"""Writes a Qwen3-MoE Hugging Face checkpoint of about 1.3 GB for measuring the memory of a
mixture-of-experts import (issue 34: experts streamed into their stacked tensor expert by expert,
benches/import_moe_memory.sh).

Qwen3-MoE's naming (one tensor per expert, `model.layers.N.mlp.experts.E.{gate,up,down}_proj`)
with small dense parts and many experts: hidden 1024, 4 layers, 64 experts (8 used) of FFN 768,
so one expert's matrix is 1.5 MiB and one stacked tensor 96 MiB; vocabulary 4096 (the
qwen2-bias fixture's BPE tokenizer, padded by the config's vocab_size). Random bf16 weights from
a fixed seed, in shards of about 300 MB with model.safetensors.index.json. Memory: one shard at
a time.

    python3 scripts/make_moe_bench_checkpoint.py OUT_DIR [--layers N] [--experts N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_import_fixtures import REPO, serialize, to_bf16_bits, write_json  # noqa: E402

HIDDEN = 1024
HEADS = 16
KV_HEADS = 4
HEAD_DIM = 64
MOE_FFN = 768
VOCAB = 4096
SHARD_BYTES = 300_000_000


def tensors(layers: int, experts: int) -> list[tuple[str, tuple[int, ...]]]:
    """Names and shapes in the order save_pretrained writes a Qwen3MoeForCausalLM."""
    v = [("model.embed_tokens.weight", (VOCAB, HIDDEN))]
    for i in range(layers):
        p = f"model.layers.{i}"
        v += [
            (f"{p}.self_attn.q_proj.weight", (HEADS * HEAD_DIM, HIDDEN)),
            (f"{p}.self_attn.k_proj.weight", (KV_HEADS * HEAD_DIM, HIDDEN)),
            (f"{p}.self_attn.v_proj.weight", (KV_HEADS * HEAD_DIM, HIDDEN)),
            (f"{p}.self_attn.o_proj.weight", (HIDDEN, HEADS * HEAD_DIM)),
            (f"{p}.self_attn.q_norm.weight", (HEAD_DIM,)),
            (f"{p}.self_attn.k_norm.weight", (HEAD_DIM,)),
            (f"{p}.mlp.gate.weight", (experts, HIDDEN)),
        ]
        for e in range(experts):
            v += [
                (f"{p}.mlp.experts.{e}.gate_proj.weight", (MOE_FFN, HIDDEN)),
                (f"{p}.mlp.experts.{e}.up_proj.weight", (MOE_FFN, HIDDEN)),
                (f"{p}.mlp.experts.{e}.down_proj.weight", (HIDDEN, MOE_FFN)),
            ]
        v += [
            (f"{p}.input_layernorm.weight", (HIDDEN,)),
            (f"{p}.post_attention_layernorm.weight", (HIDDEN,)),
        ]
    v += [("model.norm.weight", (HIDDEN,)), ("lm_head.weight", (VOCAB, HIDDEN))]
    return v


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--experts", type=int, default=64)
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    items = tensors(args.layers, args.experts)
    plan: list[list[tuple[str, tuple[int, ...]]]] = [[]]
    size = 0
    for item in items:
        n = 2 * int(np.prod(item[1]))
        if size + n > SHARD_BYTES and plan[-1]:
            plan.append([])
            size = 0
        plan[-1].append(item)
        size += n
    rng = np.random.default_rng(34_100)
    weight_map = {}
    total = 0
    for i, shard in enumerate(plan):
        fname = f"model-{i + 1:05d}-of-{len(plan):05d}.safetensors"
        data = {}
        for name, shape in shard:
            x = rng.standard_normal(shape, dtype=np.float32)
            x = 1.0 + 0.05 * x if name.endswith("norm.weight") else 0.02 * x
            bits = to_bf16_bits(x)
            del x
            data[name] = ("bfloat16", shape, bits)
            weight_map[name] = fname
            total += bits.nbytes
        serialize(out / fname, data)
        print(f"{fname}: {len(shard)} tensors", file=sys.stderr)
    write_json(out / "model.safetensors.index.json",
               {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})

    tok = REPO / "tests" / "data" / "import" / "qwen2-bias"
    for f in ["tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"]:
        shutil.copyfile(tok / f, out / f)
    write_json(out / "config.json", {
        "architectures": ["Qwen3MoeForCausalLM"],
        "attention_bias": False,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "intermediate_size": 3072,
        "max_position_embeddings": 32768,
        "model_type": "qwen3_moe",
        "moe_intermediate_size": MOE_FFN,
        "norm_topk_prob": True,
        "num_attention_heads": HEADS,
        "num_experts": args.experts,
        "num_experts_per_tok": 8,
        "num_hidden_layers": args.layers,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "vocab_size": VOCAB,
    })
    print(f"{out}: {total / 1e9:.2f} GB of weights", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
