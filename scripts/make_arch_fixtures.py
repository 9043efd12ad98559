#!/usr/bin/env python3
"""Writes tiny Hugging Face checkpoints of newer architectures under tests/data/import/<name>/.

Companion of scripts/make_import_fixtures.py (which writes the llama-family fixtures by hand).
Here every checkpoint is written by transformers' own model class, so tensor names, shapes and
config.json are exactly what `save_pretrained` produces for that architecture:

  1. a small config of the architecture's config class (hidden 64, 2 layers, 4 query heads,
     2 KV heads, head_dim 16, FFN 256; MoE: 4 experts, 2 per token, expert FFN 256),
  2. `AutoModelForCausalLM.from_config(config)` in float32,
  3. every tensor of its state dict (parameters and persistent buffers) overwritten with values
     drawn from numpy's PCG64 with a fixed per-fixture seed, in state-dict order, so the bytes do
     not depend on torch's initialisation (matrices and biases: normal, std 0.02; norm weights:
     1 + normal(0.05), or normal(0.05) for the families whose norms store weight - 1),
  4. cast to the fixture's dtype and `save_pretrained(dir, safe_serialization=True)`,
  5. for qwen3-next and glm4-moe, the multi-token-prediction layer their Hugging Face
     repositories ship beside the model (transformers does not load it): a decoder layer built by
     the same class plus its projection and norms, added to model.safetensors under the names
     the repositories use (`mtp.*`, `model.layers.<n_layers>.*`),
  6. tokenizer files copied from the existing fixtures (tests/data/import/{qwen2-bias,llama-bpe,
     llama-spm,mistral-swa,gemma3}), with special tokens added where the converter's set_vocab
     of the architecture needs them (glm4, glm4-moe) and Phi-3's chat tokens for phi3.

Besides (same steps, then):

  - quantized checkpoints: qwen3-fp8 and deepseek-v3-fp8 store the decoder layers' nn.Linear
    weights as float8_e4m3fn + `weight_scale_inv` ([32, 32] blocks, amax / 448, F32 or BF16
    scales) as DeepSeek and Qwen FP8 repositories do; gpt-oss-mxfp4 stores the experts as
    openai's MXFP4 `_blocks` / `_scales` (seeded random bytes); both with the repositories'
    `quantization_config` in config.json,
  - vision-language checkpoints (gemma3-vl, qwen2-vl, qwen2.5-vl, qwen3-vl) built by
    `AutoModelForImageTextToText.from_config`, with the processor files the converter reads
    (preprocessor_config.json, processor_config.json) and the image tokens in the tokenizer,
  - LoRA adapters (lora-<base>) made by peft on a fixture loaded with from_pretrained, every
    lora_A / lora_B overwritten with seeded values, peft's save_pretrained. The script re-runs
    itself with PYTHONHASHSEED=0, as peft writes target_modules in set order.

Run it after scripts/make_import_fixtures.py (it reads that script's tokenizer files). Rerunning
gives the same bytes; `--check` regenerates into a temporary directory and compares.

Needs (exact pins; torch comes from PyPI, its CUDA libraries are unused):

    pip install 'torch==2.11.0' 'transformers==4.57.6' 'tokenizers==0.22.2' 'numpy==2.2.6' \\
        'safetensors==0.8.0' 'sentencepiece==0.2.3' 'protobuf>=4.21.0,<5.0.0' 'huggingface-hub==0.36.2' \
        'peft==0.21.2' 'accelerate==1.16.0'

(scripts/import_oracle.sh creates that venv; `IMPORT_ORACLE_VENV`, default /work/targets/convert-venv).

    python3 scripts/make_arch_fixtures.py [--out tests/data/import] [--check] [NAME...]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM, AutoModelForImageTextToText

REPO = Path(__file__).resolve().parent.parent
IMPORT = REPO / "tests" / "data" / "import"

HIDDEN = 64
LAYERS = 2
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 16
FFN = 256
EXPERTS = 4
EXPERTS_USED = 2
EXPERT_FFN = 256

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


# ---------------------------------------------------------------- weights


def is_norm(name: str) -> bool:
    leaf = name.rsplit(".", 2)
    module = leaf[-2] if len(leaf) >= 2 else ""
    return name.endswith(".weight") and (
        "norm" in module or module in ("enorm", "hnorm", "ln_f", "ln_q"))


def fill(tensors: dict[str, torch.Tensor], rng: np.random.Generator, norm_mean: float,
         overrides: dict[str, float] | None = None) -> None:
    """Overwrites every tensor in place (state-dict order; tied tensors once)."""
    seen: set[int] = set()
    for name, t in tensors.items():
        if t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        mean = 0.0
        std = 0.02
        if is_norm(name):
            mean, std = norm_mean, 0.05
            for suffix, m in (overrides or {}).items():
                if name.endswith(suffix):
                    mean = m
        if name.endswith(".A_log"):
            # Gated DeltaNet: A = exp(A_log) in [1, 16], as Qwen3-Next initialises it
            values = np.log(rng.uniform(1.0, 16.0, size=tuple(t.shape)))
        else:
            values = mean + std * rng.standard_normal(tuple(t.shape))
        with torch.no_grad():
            t.copy_(torch.from_numpy(values.astype(np.float32)))


def make_model(config, seed: int, norm_mean: float, overrides: dict[str, float] | None = None,
               auto=AutoModelForCausalLM):
    """The model class's own instance in float32, every tensor filled from PCG64(seed)."""
    torch.manual_seed(0)
    model = auto.from_config(config, torch_dtype=torch.float32)
    rng = np.random.default_rng(seed)
    fill(model.state_dict(keep_vars=True), rng, norm_mean, overrides)
    return model, rng


def save(model, dtype: str, out: Path, quantization_config: dict | None = None):
    model = model.to(DTYPES[dtype])
    if quantization_config is not None:
        # config.json as the quantized repositories ship it (the weights are replaced afterwards)
        model.config.quantization_config = quantization_config
    model.save_pretrained(out, safe_serialization=True)
    return model


def build(config, seed: int, dtype: str, norm_mean: float, out: Path,
          overrides: dict[str, float] | None = None, auto=AutoModelForCausalLM,
          quantization_config: dict | None = None):
    model, rng = make_model(config, seed, norm_mean, overrides, auto)
    model = save(model, dtype, out, quantization_config)
    return model, rng


def add_tensors(out: Path, extra: dict[str, torch.Tensor], remove: tuple[str, ...] = ()) -> None:
    """Adds tensors to (and removes some from) the single model.safetensors save_pretrained wrote."""
    path = out / "model.safetensors"
    tensors = load_file(str(path))
    for name in remove:
        del tensors[name]
    for name in extra:
        assert name not in tensors, name
    tensors.update({k: v.contiguous() for k, v in extra.items()})
    save_file(tensors, str(path), metadata={"format": "pt"})


def mtp_layer(layer_cls, config, layer_idx: int, prefix: str, rng: np.random.Generator,
              dtype: str, norm_mean: float, overrides: dict[str, float] | None = None
              ) -> dict[str, torch.Tensor]:
    """A decoder layer of the model's own class, as the repositories' MTP block holds it."""
    layer = layer_cls(config, layer_idx)
    sd = {f"{prefix}{k}": v for k, v in layer.state_dict(keep_vars=True).items()}
    fill(sd, rng, norm_mean, overrides)
    return {k: v.detach().to(DTYPES[dtype]).clone() for k, v in sd.items()}


def extra_normal(rng: np.random.Generator, shape: tuple[int, ...], dtype: str,
                 mean: float = 0.0, std: float = 0.02) -> torch.Tensor:
    values = (mean + std * rng.standard_normal(shape)).astype(np.float32)
    return torch.from_numpy(values).to(DTYPES[dtype])


# ---------------------------------------------------------------- tokenizers


def write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def copy_files(src: str, out: Path, names: list[str]) -> None:
    for n in names:
        shutil.copyfile(IMPORT / src / n, out / n)


QWEN2_FILES = ["tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"]
LLAMA_BPE_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]
MISTRAL_FILES = ["tokenizer.model", "tokenizer.json", "tokenizer_config.json"]
GEMMA_FILES = ["tokenizer.model", "tokenizer.json", "tokenizer_config.json"]

# token ids of the copied tokenizers (asserted against the files in tokenizer_ids())
QWEN2 = {"<|endoftext|>": 340, "<|im_start|>": 341, "<|im_end|>": 342}
QWEN2_VOCAB = 343
LLAMA3 = {"<|begin_of_text|>": 360, "<|end_of_text|>": 361, "<|eom_id|>": 367, "<|eot_id|>": 368}
LLAMA3_VOCAB = 370


def bpe_ids(src: str) -> dict[str, int]:
    tok = read_json(IMPORT / src / "tokenizer.json")
    return {t["content"]: t["id"] for t in tok["added_tokens"]}


def bpe_size(tok: dict) -> int:
    return max([*tok["model"]["vocab"].values(), *(t["id"] for t in tok["added_tokens"])]) + 1


def check_ids() -> None:
    for src, ids, size in (("qwen2-bias", QWEN2, QWEN2_VOCAB), ("llama-bpe", LLAMA3, LLAMA3_VOCAB)):
        have = bpe_ids(src)
        for k, v in ids.items():
            assert have[k] == v, (src, k, have.get(k), v)
        assert bpe_size(read_json(IMPORT / src / "tokenizer.json")) == size, src


def sp_size(out: Path) -> int:
    import sentencepiece as spm
    return spm.SentencePieceProcessor(model_file=str(out / "tokenizer.model")).vocab_size()


def sp_id(out: Path, piece: str) -> int:
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(out / "tokenizer.model"))
    i = sp.piece_to_id(piece)
    assert sp.id_to_piece(i) == piece, piece
    return i


def added(content: str, special: bool = True, rstrip: bool = False) -> dict:
    return {"content": content, "lstrip": False, "normalized": False, "rstrip": rstrip,
            "single_word": False, "special": special}


# GLM-4's specials, in the order its tokenizer numbers them; set_vocab needs <|endoftext|> and
# <|user|> (Glm4ForCausalLM) or [gMASK], <|user|>, <|endoftext|>, <|observation|> (Glm4Moe);
# <sop>, <|system|> and <|assistant|> are what the chat template uses besides.
GLM_SPECIALS = ["<|endoftext|>", "[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>",
                "<|observation|>"]
GLM_TEMPLATE = (
    "[gMASK]<sop>{%- for message in messages %}"
    "{{- '<|' + message['role'] + '|>\\n' + message['content'] }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{- '<|assistant|>\\n' }}{%- endif %}"
)


def glm_tokenizer(out: Path) -> dict[str, int]:
    """llama-bpe's byte-level BPE (its regex is the one llama.cpp's glm4 pre-tokenizer uses) with
    GLM-4's special tokens appended and, as GLM tokenizers do, no BOS added by the post-processor
    (the chat template starts with [gMASK]<sop>). Returns the specials' ids."""
    tok = read_json(IMPORT / "llama-bpe" / "tokenizer.json")
    first = bpe_size(tok)
    ids = {s: first + i for i, s in enumerate(GLM_SPECIALS)}
    for s, i in ids.items():
        tok["added_tokens"].append({"id": i, "content": s, "single_word": False, "lstrip": False,
                                    "rstrip": False, "normalized": False, "special": True})
    procs = tok["post_processor"]["processors"]
    assert procs[0]["type"] == "ByteLevel" and procs[1]["type"] == "TemplateProcessing"
    tok["post_processor"] = procs[0]
    write_json(out / "tokenizer.json", tok)
    decoder = {str(t["id"]): added(t["content"], t["special"]) for t in tok["added_tokens"]}
    write_json(out / "tokenizer_config.json", {
        "added_tokens_decoder": decoder,
        "additional_special_tokens": GLM_SPECIALS[1:],
        "chat_template": GLM_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "do_lower_case": False,
        "eos_token": "<|endoftext|>",
        "extra_special_tokens": {},
        "model_input_names": ["input_ids", "attention_mask"],
        "model_max_length": 128000,
        "pad_token": "<|endoftext|>",
        "padding_side": "left",
        "remove_space": False,
        "tokenizer_class": "PreTrainedTokenizerFast",
    })
    return ids


PHI3_SPECIALS = ["<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>"]
PHI3_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'system' %}"
    "{{'<|system|>\\n' + message['content'] + '<|end|>\\n'}}"
    "{% elif message['role'] == 'user' %}{{'<|user|>\\n' + message['content'] + '<|end|>\\n'}}"
    "{% elif message['role'] == 'assistant' %}{{'<|assistant|>\\n' + message['content'] + '<|end|>\\n'}}"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% else %}{{ eos_token }}{% endif %}"
)


def phi3_tokenizer(out: Path) -> dict[str, int]:
    """llama-spm's SentencePiece model plus Phi-3's chat tokens after it, declared the way the
    Phi-3 repositories do (added_tokens.json and tokenizer_config.json's added_tokens_decoder)."""
    shutil.copyfile(IMPORT / "llama-spm" / "tokenizer.model", out / "tokenizer.model")
    n = sp_size(out)
    ids = {s: n + i for i, s in enumerate(PHI3_SPECIALS)}
    write_json(out / "added_tokens.json", ids)
    cfg = read_json(IMPORT / "llama-spm" / "tokenizer_config.json")
    for s, i in ids.items():
        cfg["added_tokens_decoder"][str(i)] = added(s, rstrip=s != "<|endoftext|>")
    cfg["chat_template"] = PHI3_TEMPLATE
    cfg["eos_token"] = "<|endoftext|>"
    cfg["pad_token"] = "<|endoftext|>"
    write_json(out / "tokenizer_config.json", cfg)
    smap = read_json(IMPORT / "llama-spm" / "special_tokens_map.json")
    smap["eos_token"] = {**smap["eos_token"], "content": "<|endoftext|>"}
    smap["pad_token"] = {**smap["eos_token"], "content": "<|endoftext|>"}
    write_json(out / "special_tokens_map.json", smap)
    return ids


# ---------------------------------------------------------------- fixtures


def cfg(cls_name: str, **kw):
    return getattr(transformers, cls_name)(**kw)


def qwen3_config(intermediate_size: int = FFN):
    return cfg("Qwen3Config", vocab_size=QWEN2_VOCAB, hidden_size=HIDDEN,
               intermediate_size=intermediate_size, num_hidden_layers=LAYERS,
               num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM,
               max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000.0,
               tie_word_embeddings=True, attention_bias=False,
               bos_token_id=QWEN2["<|endoftext|>"], eos_token_id=QWEN2["<|im_end|>"],
               max_window_layers=LAYERS, use_sliding_window=False, sliding_window=None)


def make_qwen3(out: Path) -> None:
    """Qwen3: q/k RMSNorm per head, no biases, tied embeddings (as Qwen3-0.6B), qwen2 BPE."""
    copy_files("qwen2-bias", out, QWEN2_FILES)
    build(qwen3_config(), 24_101, "bfloat16", 1.0, out)


def make_qwen3_moe(out: Path) -> None:
    """Qwen3-MoE: per-expert gate/up/down tensors, router `mlp.gate`, q/k norms, qwen2 BPE."""
    copy_files("qwen2-bias", out, QWEN2_FILES)
    c = cfg("Qwen3MoeConfig", vocab_size=QWEN2_VOCAB, hidden_size=HIDDEN, intermediate_size=FFN,
            num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
            head_dim=HEAD_DIM, max_position_embeddings=40960, rms_norm_eps=1e-6,
            rope_theta=1000000.0, tie_word_embeddings=False, num_experts=EXPERTS,
            num_experts_per_tok=EXPERTS_USED, moe_intermediate_size=EXPERT_FFN,
            decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True,
            bos_token_id=QWEN2["<|endoftext|>"], eos_token_id=QWEN2["<|im_end|>"],
            max_window_layers=LAYERS, use_sliding_window=False, sliding_window=None)
    build(c, 24_102, "bfloat16", 1.0, out)


def make_mixtral(out: Path) -> None:
    """Mixtral: block_sparse_moe.experts.N.w1/w2/w3 per expert (the converter stacks them in
    the llama architecture), f16 weights, SentencePiece (mistral-swa's)."""
    copy_files("mistral-swa", out, MISTRAL_FILES)
    c = cfg("MixtralConfig", vocab_size=sp_size(out), hidden_size=HIDDEN, intermediate_size=EXPERT_FFN,
            num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
            max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=1000000.0,
            sliding_window=None, num_local_experts=EXPERTS, num_experts_per_tok=EXPERTS_USED,
            tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
    build(c, 24_103, "float16", 1.0, out)


def make_gemma2(out: Path) -> None:
    """Gemma 2: norms stored as weight - 1, pre/post FFN norms, attention and final logit
    soft-capping, sliding window on alternate layers, tied embeddings, gemma3's SentencePiece."""
    copy_files("gemma3", out, GEMMA_FILES)
    end = sp_id(out, "<end_of_turn>")
    c = cfg("Gemma2Config", vocab_size=sp_size(out), hidden_size=HIDDEN, intermediate_size=FFN,
            num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
            head_dim=HEAD_DIM, query_pre_attn_scalar=HEAD_DIM, max_position_embeddings=8192,
            rms_norm_eps=1e-6, rope_theta=10000.0, hidden_activation="gelu_pytorch_tanh",
            final_logit_softcapping=30.0, attn_logit_softcapping=50.0, sliding_window=512,
            tie_word_embeddings=True, pad_token_id=0, bos_token_id=2, eos_token_id=[1, end])
    build(c, 24_104, "bfloat16", 0.0, out)


def make_phi3(out: Path) -> None:
    """Phi-3 (mini-128k style): fused qkv_proj and gate_up_proj, longrope scaling with
    long/short factors, sliding_window, SentencePiece (llama-spm's) + Phi-3's chat tokens."""
    ids = phi3_tokenizer(out)
    rng = np.random.default_rng(24_190)
    half = HEAD_DIM // 2
    long_factor = [round(float(x), 4) for x in 1.0 + np.sort(rng.uniform(0.0, 30.0, half))]
    short_factor = [round(float(x), 4) for x in 1.0 + np.sort(rng.uniform(0.0, 0.1, half))]
    c = cfg("Phi3Config", vocab_size=len(ids) + sp_size(out), hidden_size=HIDDEN,
            intermediate_size=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS, max_position_embeddings=131072,
            original_max_position_embeddings=4096, rms_norm_eps=1e-5, rope_theta=10000.0,
            rope_scaling={"type": "longrope", "long_factor": long_factor,
                          "short_factor": short_factor},
            sliding_window=262144, tie_word_embeddings=False, bos_token_id=1,
            eos_token_id=ids["<|endoftext|>"], pad_token_id=ids["<|endoftext|>"])
    build(c, 24_105, "bfloat16", 1.0, out)


def make_olmo2(out: Path) -> None:
    """OLMo 2: q/k RMSNorm over the whole projection, post-attention and post-FFN norms only
    (no input norm), llama-bpe's BPE (OLMo 2's regex is Llama 3's)."""
    copy_files("llama-bpe", out, LLAMA_BPE_FILES)
    c = cfg("Olmo2Config", vocab_size=LLAMA3_VOCAB, hidden_size=HIDDEN, intermediate_size=FFN,
            num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
            max_position_embeddings=4096, rms_norm_eps=1e-6, rope_theta=500000.0,
            tie_word_embeddings=False, bos_token_id=LLAMA3["<|begin_of_text|>"],
            eos_token_id=LLAMA3["<|end_of_text|>"], pad_token_id=LLAMA3["<|end_of_text|>"])
    build(c, 24_106, "bfloat16", 1.0, out)


def make_smollm3(out: Path) -> None:
    """SmolLM3: llama layout, `no_rope_layers` as SmolLM3Config computes it (interval 4),
    tied embeddings, llama-bpe's BPE."""
    copy_files("llama-bpe", out, LLAMA_BPE_FILES)
    c = cfg("SmolLM3Config", vocab_size=LLAMA3_VOCAB, hidden_size=HIDDEN, intermediate_size=FFN,
            num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
            max_position_embeddings=65536, rms_norm_eps=1e-6, rope_theta=5000000.0,
            tie_word_embeddings=True, bos_token_id=None, eos_token_id=LLAMA3["<|eot_id|>"],
            pad_token_id=LLAMA3["<|end_of_text|>"], use_sliding_window=False)
    build(c, 24_107, "bfloat16", 1.0, out)


GRANITE_SCALES = dict(embedding_multiplier=12.0, residual_multiplier=0.22,
                      attention_multiplier=0.015625, logits_scaling=8.0)


def make_granite(out: Path) -> None:
    """Granite 3: llama layout plus embedding/residual/attention multipliers and logits
    scaling, tied embeddings, llama-bpe's BPE."""
    copy_files("llama-bpe", out, LLAMA_BPE_FILES)
    c = cfg("GraniteConfig", vocab_size=LLAMA3_VOCAB, hidden_size=HIDDEN, intermediate_size=FFN,
            num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
            max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=10000000.0,
            tie_word_embeddings=True, bos_token_id=LLAMA3["<|begin_of_text|>"],
            eos_token_id=LLAMA3["<|end_of_text|>"], pad_token_id=LLAMA3["<|end_of_text|>"],
            **GRANITE_SCALES)
    build(c, 24_108, "bfloat16", 1.0, out)


def make_granitemoe(out: Path) -> None:
    """Granite 3 MoE: fused per-layer expert tensors (block_sparse_moe.input_linear holds gate
    and up of all experts, output_linear the downs), router, multipliers, qwen2 BPE."""
    copy_files("qwen2-bias", out, QWEN2_FILES)
    c = cfg("GraniteMoeConfig", vocab_size=QWEN2_VOCAB, hidden_size=HIDDEN,
            intermediate_size=EXPERT_FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS, max_position_embeddings=4096, rms_norm_eps=1e-6,
            rope_theta=10000.0, tie_word_embeddings=True, num_local_experts=EXPERTS,
            num_experts_per_tok=EXPERTS_USED, bos_token_id=QWEN2["<|endoftext|>"],
            eos_token_id=QWEN2["<|im_end|>"], pad_token_id=QWEN2["<|endoftext|>"],
            **GRANITE_SCALES)
    build(c, 24_109, "bfloat16", 1.0, out)


def make_glm4(out: Path) -> None:
    """GLM-4-0414: q/k/v biases, fused gate_up_proj, post-attention and post-MLP norms,
    partial rotary (0.5), GLM BPE (llama-bpe's + GLM specials)."""
    ids = glm_tokenizer(out)
    c = cfg("Glm4Config", vocab_size=LLAMA3_VOCAB + len(GLM_SPECIALS), hidden_size=HIDDEN,
            intermediate_size=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM, partial_rotary_factor=0.5,
            max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=10000.0,
            attention_bias=True, tie_word_embeddings=False, pad_token_id=ids["<|endoftext|>"],
            eos_token_id=[ids["<|endoftext|>"], ids["<|user|>"], ids["<|observation|>"]])
    build(c, 24_110, "bfloat16", 1.0, out)


def make_glm4_moe(out: Path) -> None:
    """GLM-4.5: first layer dense (first_k_dense_replace=1), then routed experts with a shared
    expert and sigmoid routing with e_score_correction_bias, q/k norms, q/k/v biases,
    partial rotary, and one MTP layer (model.layers.3.*: eh_proj, enorm, hnorm, shared_head.norm
    and a full decoder layer) as the GLM-4.5 repositories ship it."""
    from transformers.models.glm4_moe.modeling_glm4_moe import Glm4MoeDecoderLayer
    ids = glm_tokenizer(out)
    layers = LAYERS + 1
    c = cfg("Glm4MoeConfig", vocab_size=LLAMA3_VOCAB + len(GLM_SPECIALS), hidden_size=HIDDEN,
            intermediate_size=FFN, num_hidden_layers=layers, num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS, partial_rotary_factor=0.5,
            max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=1000000.0,
            attention_bias=True, use_qk_norm=True, tie_word_embeddings=False,
            moe_intermediate_size=EXPERT_FFN, num_experts_per_tok=EXPERTS_USED,
            n_shared_experts=1, n_routed_experts=EXPERTS, routed_scaling_factor=2.5,
            n_group=1, topk_group=1, first_k_dense_replace=1, norm_topk_prob=True,
            num_nextn_predict_layers=1, pad_token_id=ids["<|endoftext|>"],
            eos_token_id=[ids["<|endoftext|>"], ids["<|user|>"], ids["<|observation|>"]])
    _, rng = build(c, 24_111, "bfloat16", 1.0, out)
    p = f"model.layers.{layers}."
    extra = mtp_layer(Glm4MoeDecoderLayer, c, layers, p, rng, "bfloat16", 1.0)
    extra[p + "eh_proj.weight"] = extra_normal(rng, (HIDDEN, 2 * HIDDEN), "bfloat16")
    for n in ("enorm", "hnorm", "shared_head.norm"):
        extra[p + n + ".weight"] = extra_normal(rng, (HIDDEN,), "bfloat16", 1.0, 0.05)
    add_tensors(out, extra)


def make_deepseek_v3(out: Path) -> None:
    """DeepSeek-V3: MLA (q_lora_rank, kv_lora_rank, split nope/rope heads), first layer dense,
    then 4 routed experts + 1 shared, sigmoid scoring with e_score_correction_bias and noaux_tc
    group-limited routing, yarn rope scaling, llama-bpe's BPE."""
    copy_files("llama-bpe", out, LLAMA_BPE_FILES)
    build(deepseek_v3_config(), 24_112, "bfloat16", 1.0, out)


def deepseek_v3_config():
    return cfg("DeepseekV3Config", vocab_size=LLAMA3_VOCAB, hidden_size=HIDDEN,
               intermediate_size=FFN, moe_intermediate_size=EXPERT_FFN,
               num_hidden_layers=LAYERS + 1, num_attention_heads=HEADS, num_key_value_heads=HEADS,
               n_shared_experts=1, n_routed_experts=EXPERTS, num_experts_per_tok=EXPERTS_USED,
               routed_scaling_factor=2.5, kv_lora_rank=32, q_lora_rank=32, qk_rope_head_dim=16,
               qk_nope_head_dim=32, v_head_dim=32, n_group=2, topk_group=1,
               first_k_dense_replace=1, norm_topk_prob=True, max_position_embeddings=163840,
               rms_norm_eps=1e-6, rope_theta=10000.0,
               rope_scaling={"type": "yarn", "factor": 40.0, "beta_fast": 32, "beta_slow": 1,
                             "mscale": 1.0, "mscale_all_dim": 1.0,
                             "original_max_position_embeddings": 4096},
               tie_word_embeddings=False, bos_token_id=LLAMA3["<|begin_of_text|>"],
               eos_token_id=LLAMA3["<|end_of_text|>"], scoring_func="sigmoid",
               topk_method="noaux_tc")


def make_gpt_oss(out: Path) -> None:
    """gpt-oss: attention sinks, q/k/v/o biases, experts as fused 3-D tensors (gate_up_proj
    interleaved gate/up, with biases) in bf16 rather than MXFP4, router with bias, alternating
    sliding/full attention, yarn rope, llama-bpe's BPE."""
    copy_files("llama-bpe", out, LLAMA_BPE_FILES)
    build(gpt_oss_config(), 24_113, "bfloat16", 1.0, out)


def gpt_oss_config():
    return cfg("GptOssConfig", vocab_size=LLAMA3_VOCAB, hidden_size=HIDDEN,
               intermediate_size=EXPERT_FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
               num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM, num_local_experts=EXPERTS,
               num_experts_per_tok=EXPERTS_USED, sliding_window=128,
               layer_types=["sliding_attention", "full_attention"], max_position_embeddings=131072,
               rms_norm_eps=1e-5, rope_theta=150000.0,
               rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                             "beta_slow": 1.0, "truncate": False,
                             "original_max_position_embeddings": 4096},
               tie_word_embeddings=False, attention_bias=True,
               bos_token_id=LLAMA3["<|begin_of_text|>"], eos_token_id=LLAMA3["<|eot_id|>"],
               pad_token_id=LLAMA3["<|end_of_text|>"])


def make_qwen3_next(out: Path) -> None:
    """Qwen3-Next: hybrid layers (Gated DeltaNet linear attention, then gated full attention,
    full_attention_interval 2), zero-centred norms (weight - 1) except the gated linear-attention
    norm, 4 routed experts + shared expert with its sigmoid gate, partial rotary 0.25, and the
    MTP block (mtp.*) the Qwen3-Next repositories ship; qwen2 BPE."""
    from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextDecoderLayer
    copy_files("qwen2-bias", out, QWEN2_FILES)
    c = cfg("Qwen3NextConfig", vocab_size=QWEN2_VOCAB, hidden_size=HIDDEN,
            intermediate_size=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM, partial_rotary_factor=0.25,
            linear_conv_kernel_dim=4, linear_key_head_dim=16, linear_value_head_dim=16,
            linear_num_key_heads=2, linear_num_value_heads=4, decoder_sparse_step=1,
            moe_intermediate_size=EXPERT_FFN, shared_expert_intermediate_size=EXPERT_FFN,
            num_experts_per_tok=EXPERTS_USED, num_experts=EXPERTS, norm_topk_prob=True,
            mlp_only_layers=[], full_attention_interval=2, max_position_embeddings=262144,
            rms_norm_eps=1e-6, rope_theta=10000000.0, tie_word_embeddings=False,
            bos_token_id=QWEN2["<|endoftext|>"], eos_token_id=QWEN2["<|im_end|>"])
    assert c.layer_types == ["linear_attention", "full_attention"], c.layer_types
    keep = {"linear_attn.norm.weight": 1.0}
    _, rng = build(c, 24_114, "bfloat16", 0.0, out, keep)
    full = c.layer_types.index("full_attention")
    extra = mtp_layer(Qwen3NextDecoderLayer, c, full, "mtp.layers.0.", rng, "bfloat16", 0.0, keep)
    extra["mtp.fc.weight"] = extra_normal(rng, (HIDDEN, 2 * HIDDEN), "bfloat16")
    for n in ("pre_fc_norm_embedding", "pre_fc_norm_hidden", "norm"):
        extra[f"mtp.{n}.weight"] = extra_normal(rng, (HIDDEN,), "bfloat16", 0.0, 0.05)
    add_tensors(out, extra)


# ---------------------------------------------------------------- quantized checkpoints


FP8_BLOCK = [32, 32]
FP8_MAX = 448.0  # largest float8_e4m3fn


def fp8_config() -> dict:
    """The quantization_config DeepSeek-V3 and Qwen3-*-FP8 repositories ship (smaller blocks)."""
    return {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
            "weight_block_size": list(FP8_BLOCK)}


def fp8_quantize(w: torch.Tensor, scale_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Block-wise float8_e4m3fn as DeepSeek publishes it: per [32, 32] block (the last blocks
    of a row or column cut short when the size is not a multiple of 32) scale = amax / 448,
    stored as `weight_scale_inv` in scale_dtype; fp8 = w / scale, so that the weight is
    fp8.float() * scale_inv (the stored, rounded scale is the one divided by)."""
    rows, cols = w.shape
    br, bc = FP8_BLOCK
    nr, nc = -(-rows // br), -(-cols // bc)
    padded = torch.zeros(nr * br, nc * bc, dtype=torch.float32)
    padded[:rows, :cols] = w.float()
    amax = padded.reshape(nr, br, nc, bc).abs().amax(dim=(1, 3))
    scale = (amax / FP8_MAX).to(scale_dtype)
    full = scale.float().repeat_interleave(br, 0).repeat_interleave(bc, 1)[:rows, :cols]
    q = (w.float() / full).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale.contiguous()


def build_fp8(config, seed: int, out: Path, scale_dtype: torch.dtype) -> None:
    """A bf16 checkpoint of the class whose decoder-layer nn.Linear weights (attention, MLP,
    experts, shared experts; not embeddings, norms, routers or lm_head) are stored as
    float8_e4m3fn + `<name>.weight_scale_inv`, quantized from the seeded float32 values."""
    model, _ = make_model(config, seed, 1.0)
    names = [f"{n}.weight" for n, m in model.named_modules()
             if isinstance(m, torch.nn.Linear) and n.startswith("model.layers.")]
    f32 = {n: t.detach().clone() for n, t in model.state_dict().items() if n in names}
    assert len(f32) == len(names)
    save(model, "bfloat16", out, fp8_config())
    extra = {}
    for n in names:
        q, s = fp8_quantize(f32[n], scale_dtype)
        extra[n] = q
        extra[n + "_scale_inv"] = s
    add_tensors(out, extra, remove=tuple(names))


def make_qwen3_fp8(out: Path) -> None:
    """qwen3 as a Qwen3-*-FP8 repository ships it: q/k/v/o and gate/up/down projections in
    float8_e4m3fn with float32 [32, 32] block scales (`weight_scale_inv`); FFN 272, so that
    gate/up (272 rows) and down (272 columns) end in a cut block (scale unpadding)."""
    copy_files("qwen2-bias", out, QWEN2_FILES)
    build_fp8(qwen3_config(intermediate_size=272), 24_115, out, torch.float32)


def make_deepseek_v3_fp8(out: Path) -> None:
    """deepseek-v3 (same config and seed, so every unquantized tensor is the same) with every
    decoder-layer linear weight (MLA projections, dense MLP, routed and shared experts) in
    float8_e4m3fn with bfloat16 [32, 32] block scales; kv_a_proj_with_mqa has 48 rows."""
    copy_files("llama-bpe", out, LLAMA_BPE_FILES)
    build_fp8(deepseek_v3_config(), 24_112, out, torch.bfloat16)


MXFP4_NOT_CONVERTED = ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                       "model.embed_tokens", "lm_head"]


def make_gpt_oss_mxfp4(out: Path) -> None:
    """gpt-oss (same config and seed, so every other tensor is the same) with its experts as
    openai publishes them: `mlp.experts.{gate_up,down}_proj_blocks` (uint8 [E, rows, cols/32,
    16], two FP4 codes a byte) and `_scales` (uint8 E8M0 [E, rows, cols/32]) in the
    [out, in] layout, biases in bf16, quantization_config mxfp4. Blocks are seeded random
    bytes, scales seeded in 120..130 (2^-7..2^3)."""
    copy_files("llama-bpe", out, LLAMA_BPE_FILES)
    c = gpt_oss_config()
    qc = {"modules_to_not_convert": MXFP4_NOT_CONVERTED, "quant_method": "mxfp4"}
    build(c, 24_113, "bfloat16", 1.0, out, quantization_config=qc)
    rng = np.random.default_rng(24_116)
    extra, remove = {}, []
    shapes = {"gate_up_proj": (2 * EXPERT_FFN, HIDDEN), "down_proj": (HIDDEN, EXPERT_FFN)}
    for layer in range(LAYERS):
        for proj, (rows, cols) in shapes.items():
            p = f"model.layers.{layer}.mlp.experts.{proj}"
            remove.append(p)
            blocks = rng.integers(0, 256, size=(EXPERTS, rows, cols // 32, 16), dtype=np.uint8)
            scales = rng.integers(120, 131, size=(EXPERTS, rows, cols // 32), dtype=np.uint8)
            extra[p + "_blocks"] = torch.from_numpy(blocks)
            extra[p + "_scales"] = torch.from_numpy(scales)
    add_tensors(out, extra, remove=tuple(remove))


# ---------------------------------------------------------------- vision-language checkpoints


def write_processor(out: Path, preprocessor: dict, processor: dict | None = None) -> None:
    write_json(out / "preprocessor_config.json", preprocessor)
    if processor is not None:
        write_json(out / "processor_config.json", processor)


# Qwen2-VL's vision tokens, in the order (and after the chat tokens) as its tokenizer numbers them
QWEN_VL_SPECIALS = ["<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>",
                    "<|video_pad|>"]
QWEN_VL = {s: QWEN2_VOCAB + i for i, s in enumerate(QWEN_VL_SPECIALS)}
QWEN_VL_VOCAB = QWEN2_VOCAB + len(QWEN_VL_SPECIALS)
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


def qwen_vl_tokenizer(out: Path) -> None:
    """qwen2-bias's BPE with Qwen2-VL's vision tokens added after the chat tokens (tokenizer.json
    added_tokens and tokenizer_config.json, as Qwen2-VL repositories declare them)."""
    copy_files("qwen2-bias", out, ["vocab.json", "merges.txt"])
    tok = read_json(IMPORT / "qwen2-bias" / "tokenizer.json")
    assert bpe_size(tok) == QWEN2_VOCAB
    for s, i in QWEN_VL.items():
        tok["added_tokens"].append({"id": i, "content": s, "single_word": False, "lstrip": False,
                                    "rstrip": False, "normalized": False, "special": True})
    write_json(out / "tokenizer.json", tok)
    tc = read_json(IMPORT / "qwen2-bias" / "tokenizer_config.json")
    for s, i in QWEN_VL.items():
        tc["added_tokens_decoder"][str(i)] = added(s)
    tc["additional_special_tokens"] += QWEN_VL_SPECIALS
    write_json(out / "tokenizer_config.json", tc)


def qwen_vl_ids() -> dict:
    return dict(image_token_id=QWEN_VL["<|image_pad|>"], video_token_id=QWEN_VL["<|video_pad|>"],
                vision_start_token_id=QWEN_VL["<|vision_start|>"],
                vision_end_token_id=QWEN_VL["<|vision_end|>"])


def qwen_vl_text(**kw) -> dict:
    return dict(vocab_size=QWEN_VL_VOCAB, hidden_size=HIDDEN, intermediate_size=FFN,
                num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1000000.0,
                tie_word_embeddings=False, bos_token_id=QWEN2["<|endoftext|>"],
                eos_token_id=QWEN2["<|im_end|>"], **kw)


def qwen2_vl_preprocessor(processor_class: str) -> dict:
    return {"min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14, "temporal_patch_size": 2,
            "merge_size": 2, "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
            "image_processor_type": "Qwen2VLImageProcessor", "processor_class": processor_class}


def make_qwen2_vl(out: Path) -> None:
    """Qwen2-VL: ViT with fused qkv, LayerNorms, fc1/fc2 MLP (mlp_ratio), Conv3D patch embedding
    (temporal patch 2), merger ln_q + mlp.0/mlp.2 over 2x2 patches; text model with mrope
    sections [2, 3, 3] (sum head_dim / 2). 3 vision layers: the converter maps merger.mlp.N
    through its block table, so mlp.2 needs at least 3 blocks. `architectures` is passed to the
    config as a Hub config.json gives it: transformers 4.57.6 otherwise writes it only inside
    text_config, and the converter's --mmproj then finds no architecture."""
    qwen_vl_tokenizer(out)
    arch = ["Qwen2VLForConditionalGeneration"]
    c = cfg("Qwen2VLConfig", architectures=arch,
            text_config=qwen_vl_text(rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}),
            vision_config=dict(depth=3, embed_dim=32, hidden_size=HIDDEN, mlp_ratio=4, num_heads=2,
                               in_channels=3, patch_size=14, spatial_merge_size=2,
                               temporal_patch_size=2),
            **qwen_vl_ids())
    build(c, 24_117, "bfloat16", 1.0, out, auto=AutoModelForImageTextToText)
    write_processor(out, qwen2_vl_preprocessor("Qwen2VLProcessor"))


def make_qwen2_5_vl(out: Path) -> None:
    """Qwen2.5-VL: ViT with RMSNorms, SwiGLU gate/up/down MLP with biases, window attention
    with full attention at fullatt_block_indexes [1, 3] (n_wa_pattern 2; 4 layers, as the
    converter needs at least 3 for merger.mlp.2), merger; text model with mrope sections.
    `architectures` passed as for qwen2-vl."""
    qwen_vl_tokenizer(out)
    arch = ["Qwen2_5_VLForConditionalGeneration"]
    c = cfg("Qwen2_5_VLConfig", architectures=arch,
            text_config=qwen_vl_text(rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}),
            vision_config=dict(depth=4, hidden_size=32, intermediate_size=64, num_heads=2,
                               in_channels=3, out_hidden_size=HIDDEN, patch_size=14,
                               spatial_merge_size=2, temporal_patch_size=2, window_size=112,
                               fullatt_block_indexes=[1, 3]),
            **qwen_vl_ids())
    build(c, 24_118, "bfloat16", 1.0, out, auto=AutoModelForImageTextToText)
    write_processor(out, qwen2_vl_preprocessor("Qwen2_5_VLProcessor"))


def make_qwen3_vl(out: Path) -> None:
    """Qwen3-VL: ViT with learned position embeddings (num_position_embeddings 16: image size
    4 x 16 = 64), patch-embedding bias, linear_fc1/fc2 MLP, deepstack merger after layer 0,
    merger; Qwen3 text model (q/k norms) with interleaved mrope sections."""
    qwen_vl_tokenizer(out)
    c = cfg("Qwen3VLConfig",
            text_config=qwen_vl_text(head_dim=HEAD_DIM, rope_scaling={
                "rope_type": "default", "mrope_section": [2, 3, 3], "mrope_interleaved": True}),
            vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2,
                               in_channels=3, out_hidden_size=HIDDEN, patch_size=16,
                               spatial_merge_size=2, temporal_patch_size=2,
                               num_position_embeddings=16, deepstack_visual_indexes=[0]),
            tie_word_embeddings=False, **qwen_vl_ids())
    build(c, 24_119, "bfloat16", 1.0, out, auto=AutoModelForImageTextToText)
    write_processor(out, {
        "size": {"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": 16,
        "temporal_patch_size": 2, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5], "processor_class": "Qwen3VLProcessor",
        "image_processor_type": "Qwen2VLImageProcessorFast"})


GEMMA_IMAGE_TOKENS = ["<start_of_image>", "<end_of_image>", "<image_soft_token>"]


def gemma_vl_tokenizer(out: Path) -> dict[str, int]:
    """gemma3's SentencePiece + tokenizer.json with the image tokens after the SentencePiece
    pieces (as gemma-3's <image_soft_token> is): added_tokens.json, tokenizer.json added_tokens
    and tokenizer_config.json's added_tokens_decoder. Returns their ids."""
    copy_files("gemma3", out, ["tokenizer.model"])
    n = sp_size(out)
    ids = {s: n + i for i, s in enumerate(GEMMA_IMAGE_TOKENS)}
    write_json(out / "added_tokens.json", ids)
    tok = read_json(IMPORT / "gemma3" / "tokenizer.json")
    for s, i in ids.items():
        tok["added_tokens"].append({"id": i, "content": s, "single_word": False, "lstrip": False,
                                    "rstrip": False, "normalized": False, "special": True})
    write_json(out / "tokenizer.json", tok)
    tc = read_json(IMPORT / "gemma3" / "tokenizer_config.json")
    for s, i in ids.items():
        tc["added_tokens_decoder"][str(i)] = added(s)
    tc["boi_token"], tc["eoi_token"], tc["image_token"] = GEMMA_IMAGE_TOKENS
    write_json(out / "tokenizer_config.json", tc)
    return ids


def make_gemma3_vl(out: Path) -> None:
    """Gemma 3 with its SigLIP vision tower (56 px images, patch 14: 4 x 4 patches, 2 layers,
    width 32), projector (mm_input_projection_weight, mm_soft_emb_norm) pooling to 4 image
    tokens (mm_tokens_per_image; image_seq_length 4 in the processor files, so the converter
    writes a projector scale factor of 2), gemma3's text config (norms store weight - 1,
    SigLIP's LayerNorms do not)."""
    ids = gemma_vl_tokenizer(out)
    end = sp_id(out, "<end_of_turn>")
    text = dict(vocab_size=648, hidden_size=HIDDEN, intermediate_size=FFN,
                num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=1,
                head_dim=32, query_pre_attn_scalar=32, max_position_embeddings=32768,
                rms_norm_eps=1e-6, rope_theta=1000000.0, rope_local_base_freq=10000.0,
                sliding_window=512, layer_types=["sliding_attention", "full_attention"],
                hidden_activation="gelu_pytorch_tanh", pad_token_id=0, bos_token_id=2,
                eos_token_id=[1, end])
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, image_size=56, patch_size=14, vision_use_head=False,
                  layer_norm_eps=1e-6)
    c = cfg("Gemma3Config", text_config=text, vision_config=vision, mm_tokens_per_image=4,
            boi_token_index=ids["<start_of_image>"], eoi_token_index=ids["<end_of_image>"],
            image_token_index=ids["<image_soft_token>"], eos_token_id=[1, end])
    siglip = {"layer_norm1.weight": 1.0, "layer_norm2.weight": 1.0, "post_layernorm.weight": 1.0}
    build(c, 24_120, "bfloat16", 0.0, out, siglip, auto=AutoModelForImageTextToText)
    write_processor(out, {
        "do_convert_rgb": None, "do_normalize": True, "do_pan_and_scan": None, "do_rescale": True,
        "do_resize": True, "image_mean": [0.5, 0.5, 0.5],
        "image_processor_type": "Gemma3ImageProcessor", "image_seq_length": 4,
        "image_std": [0.5, 0.5, 0.5], "pan_and_scan_max_num_crops": None,
        "pan_and_scan_min_crop_size": None, "pan_and_scan_min_ratio_to_activate": None,
        "processor_class": "Gemma3Processor", "resample": 2,
        "rescale_factor": 0.00392156862745098, "size": {"height": 56, "width": 56},
    }, {"image_seq_length": 4, "processor_class": "Gemma3Processor"})


# ---------------------------------------------------------------- LoRA adapters


# name: (base fixture, rank, alpha, target modules, adapter dtype or None for peft's default
# (float32: peft's autocast_adapter_dtype), seed)
LORAS = {
    "lora-llama-spm": ("llama-spm", 8, 16, ["q_proj", "k_proj", "v_proj", "o_proj"], None, 24_121),
    "lora-qwen3": ("qwen3", 4, 8, ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                   "up_proj", "down_proj"], "bfloat16", 24_122),
    "lora-gemma3": ("gemma3", 8, 32, ["q_proj", "v_proj"], None, 24_123),
    "lora-mixtral": ("mixtral", 8, 16, ["w1", "w2", "w3"], "float16", 24_124),
    # every linear layer but kv_b_proj: the converter cuts kv_b_proj per head and transposes
    # k_b (a 3-D transpose), which its LoraTorchTensor cannot do (NotImplementedError)
    "lora-deepseek-v3": ("deepseek-v3", 4, 8, ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa",
                                               "o_proj", "gate_proj", "up_proj", "down_proj"],
                         None, 24_125),
}


def make_lora(name: str):
    base, r, alpha, targets, dtype, seed = LORAS[name]

    def make(out: Path) -> None:
        """A PEFT LoRA adapter of a fixture: peft's get_peft_model on the base model loaded from
        its directory, every lora_A / lora_B overwritten with seeded values (peft starts lora_B
        at zero), save_pretrained (adapter_config.json, adapter_model.safetensors, README.md)."""
        from peft import LoraConfig, get_peft_model
        # the base as the generated tree has it when it was generated in this run (--check)
        base_dir = out.parent / base if (out.parent / base).is_dir() else IMPORT / base
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_pretrained(base_dir, dtype="auto")
        # what base_model_name_or_path (and the model card's base_model) say: the repository path
        model.config._name_or_path = model.name_or_path = f"tests/data/import/{base}"
        lc = LoraConfig(r=r, lora_alpha=alpha, target_modules=targets, lora_dropout=0.0,
                        bias="none", task_type="CAUSAL_LM")
        peft_model = get_peft_model(model, lc, autocast_adapter_dtype=dtype is None)
        rng = np.random.default_rng(seed)
        params = {n: p for n, p in peft_model.named_parameters() if ".lora_" in n}
        assert params and all(".lora_A." in n or ".lora_B." in n for n in params), list(params)
        if dtype is not None:
            assert all(p.dtype == DTYPES[dtype] for p in params.values())
        fill(params, rng, 1.0)
        peft_model.save_pretrained(out, safe_serialization=True)

    make.__doc__ = f"LoRA r={r} alpha={alpha} on {base} ({', '.join(targets)})."
    return make


FIXTURES = {
    "qwen3": make_qwen3,
    "qwen3-moe": make_qwen3_moe,
    "mixtral": make_mixtral,
    "gemma2": make_gemma2,
    "phi3": make_phi3,
    "olmo2": make_olmo2,
    "smollm3": make_smollm3,
    "granite": make_granite,
    "granitemoe": make_granitemoe,
    "glm4": make_glm4,
    "glm4-moe": make_glm4_moe,
    "deepseek-v3": make_deepseek_v3,
    "gpt-oss": make_gpt_oss,
    "qwen3-next": make_qwen3_next,
    "qwen3-fp8": make_qwen3_fp8,
    "deepseek-v3-fp8": make_deepseek_v3_fp8,
    "gpt-oss-mxfp4": make_gpt_oss_mxfp4,
    "gemma3-vl": make_gemma3_vl,
    "qwen2-vl": make_qwen2_vl,
    "qwen2.5-vl": make_qwen2_5_vl,
    "qwen3-vl": make_qwen3_vl,
    **{name: make_lora(name) for name in LORAS},
}


def generate(root: Path, names: list[str]) -> None:
    check_ids()
    torch.set_num_threads(1)
    for name in names:
        out = root / name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        FIXTURES[name](out)


def same_tree(a: Path, b: Path) -> list[str]:
    diffs = []
    cmp = filecmp.dircmp(a, b)
    diffs += [f"only in {a}: {n}" for n in cmp.left_only]
    diffs += [f"only in {b}: {n}" for n in cmp.right_only]
    for n in cmp.common_files:
        if not filecmp.cmp(a / n, b / n, shallow=False):
            diffs.append(f"differs: {a / n}")
    for n in cmp.common_dirs:
        diffs += same_tree(a / n, b / n)
    return diffs


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # peft keeps target_modules as a set and writes it in iteration order: fix str hashing
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=IMPORT)
    ap.add_argument("--check", action="store_true",
                    help="generate into a temporary directory and compare with --out")
    ap.add_argument("names", nargs="*", help=f"fixtures (default: all of {', '.join(FIXTURES)})")
    args = ap.parse_args()
    names = args.names or list(FIXTURES)
    for n in names:
        if n not in FIXTURES:
            ap.error(f"unknown fixture {n!r}")
    transformers.logging.set_verbosity_error()
    if not args.check:
        generate(args.out, names)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), names)
        diffs = []
        for name in names:
            diffs += same_tree(args.out / name, Path(tmp) / name)
    for d in diffs:
        print(d, file=sys.stderr)
    print("same bytes" if not diffs else f"{len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
