#!/usr/bin/env python3
"""Writes a llama-shaped Hugging Face checkpoint of about 1 GB for the import benchmark
(issue 24: `gguf import` against convert_hf_to_gguf.py, benches/import_vs_converter.sh).

TinyLlama's shapes with 9 layers instead of 22: hidden 2048, 32 query heads, 4 KV heads,
FFN 5632, vocabulary 32000; 527M parameters in bf16 (1.05 GB) in two shards with
model.safetensors.index.json. Random weights from a fixed seed (same bytes on every run);
the SentencePiece tokenizer of the llama-spm fixture (the config's vocab_size pads it with
[PADn] tokens, as the converter does), so the stock converter needs no pre-tokenizer hash.
Memory: one shard at a time (peak RSS 1.8 GB, 24 s here).

    python3 scripts/make_import_bench_checkpoint.py OUT_DIR [--layers N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_import_fixtures import REPO, serialize, to_bf16_bits, write_json  # noqa: E402

HIDDEN = 2048
HEADS = 32
KV_HEADS = 4
HEAD_DIM = HIDDEN // HEADS
FFN = 5632
VOCAB = 32000
SHARDS = 2


def tensors(layers: int) -> list[tuple[str, tuple[int, ...]]]:
    """Names and shapes in the order save_pretrained writes a LlamaForCausalLM."""
    v = [("model.embed_tokens.weight", (VOCAB, HIDDEN))]
    for i in range(layers):
        p = f"model.layers.{i}"
        v += [
            (f"{p}.self_attn.q_proj.weight", (HEADS * HEAD_DIM, HIDDEN)),
            (f"{p}.self_attn.k_proj.weight", (KV_HEADS * HEAD_DIM, HIDDEN)),
            (f"{p}.self_attn.v_proj.weight", (KV_HEADS * HEAD_DIM, HIDDEN)),
            (f"{p}.self_attn.o_proj.weight", (HIDDEN, HEADS * HEAD_DIM)),
            (f"{p}.mlp.gate_proj.weight", (FFN, HIDDEN)),
            (f"{p}.mlp.up_proj.weight", (FFN, HIDDEN)),
            (f"{p}.mlp.down_proj.weight", (HIDDEN, FFN)),
            (f"{p}.input_layernorm.weight", (HIDDEN,)),
            (f"{p}.post_attention_layernorm.weight", (HIDDEN,)),
        ]
    v += [("model.norm.weight", (HIDDEN,)), ("lm_head.weight", (VOCAB, HIDDEN))]
    return v


def shard_plan(items: list[tuple[str, tuple[int, ...]]]) -> list[list[tuple[str, tuple[int, ...]]]]:
    sizes = [2 * int(np.prod(shape)) for _, shape in items]
    limit = sum(sizes) / SHARDS
    plan: list[list[tuple[str, tuple[int, ...]]]] = [[]]
    size = 0
    for item, n in zip(items, sizes):
        if size + n > limit and plan[-1] and len(plan) < SHARDS:
            plan.append([])
            size = 0
        plan[-1].append(item)
        size += n
    return plan


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, default=9)
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(24_100)
    plan = shard_plan(tensors(args.layers))
    weight_map = {}
    total = 0
    for i, shard in enumerate(plan):
        fname = f"model-{i + 1:05d}-of-{len(plan):05d}.safetensors"
        data = {}
        for name, shape in shard:
            x = rng.standard_normal(shape, dtype=np.float32)
            if name.endswith("norm.weight"):
                x = 1.0 + 0.05 * x
            else:
                x *= 0.02
            bits = to_bf16_bits(x)
            del x
            data[name] = ("bfloat16", shape, bits)
            weight_map[name] = fname
            total += bits.nbytes
        serialize(out / fname, data)
        print(f"{fname}: {len(shard)} tensors", file=sys.stderr)
    write_json(out / "model.safetensors.index.json",
               {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})

    spm = REPO / "tests" / "data" / "import" / "llama-spm"
    for f in ["tokenizer.model", "tokenizer_config.json", "special_tokens_map.json",
              "generation_config.json"]:
        shutil.copyfile(spm / f, out / f)
    write_json(out / "config.json", {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": FFN,
        "max_position_embeddings": 2048,
        "model_type": "llama",
        "num_attention_heads": HEADS,
        "num_hidden_layers": args.layers,
        "num_key_value_heads": KV_HEADS,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.35.0",
        "use_cache": True,
        "vocab_size": VOCAB,
    })
    print(f"{out}: {total / 1e9:.2f} GB of weights", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
