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

Run it after scripts/make_import_fixtures.py (it reads that script's tokenizer files). Rerunning
gives the same bytes; `--check` regenerates into a temporary directory and compares.

Needs (exact pins; torch comes from PyPI, its CUDA libraries are unused):

    pip install 'torch==2.11.0' 'transformers==4.57.6' 'tokenizers==0.22.2' 'numpy==2.2.6' \\
        'safetensors==0.8.0' 'sentencepiece==0.2.3' 'protobuf>=4.21.0,<5.0.0' 'huggingface-hub==0.36.2'

(scripts/import_oracle.sh creates that venv; `IMPORT_ORACLE_VENV`, default /work/targets/convert-venv).

    python3 scripts/make_arch_fixtures.py [--out tests/data/import] [--check] [NAME...]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM

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
        "norm" in module or module in ("enorm", "hnorm", "ln_f"))


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


def build(config, seed: int, dtype: str, norm_mean: float, out: Path,
          overrides: dict[str, float] | None = None):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
    rng = np.random.default_rng(seed)
    fill(model.state_dict(keep_vars=True), rng, norm_mean, overrides)
    model = model.to(DTYPES[dtype])
    model.save_pretrained(out, safe_serialization=True)
    return model, rng


def add_tensors(out: Path, extra: dict[str, torch.Tensor]) -> None:
    """Adds tensors to the single model.safetensors save_pretrained wrote."""
    path = out / "model.safetensors"
    tensors = load_file(str(path))
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


def make_qwen3(out: Path) -> None:
    """Qwen3: q/k RMSNorm per head, no biases, tied embeddings (as Qwen3-0.6B), qwen2 BPE."""
    copy_files("qwen2-bias", out, QWEN2_FILES)
    c = cfg("Qwen3Config", vocab_size=QWEN2_VOCAB, hidden_size=HIDDEN, intermediate_size=FFN,
            num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
            head_dim=HEAD_DIM, max_position_embeddings=40960, rms_norm_eps=1e-6,
            rope_theta=1000000.0, tie_word_embeddings=True, attention_bias=False,
            bos_token_id=QWEN2["<|endoftext|>"], eos_token_id=QWEN2["<|im_end|>"],
            max_window_layers=LAYERS, use_sliding_window=False, sliding_window=None)
    build(c, 24_101, "bfloat16", 1.0, out)


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
    c = cfg("DeepseekV3Config", vocab_size=LLAMA3_VOCAB, hidden_size=HIDDEN,
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
    build(c, 24_112, "bfloat16", 1.0, out)


def make_gpt_oss(out: Path) -> None:
    """gpt-oss: attention sinks, q/k/v/o biases, experts as fused 3-D tensors (gate_up_proj
    interleaved gate/up, with biases) in bf16 rather than MXFP4, router with bias, alternating
    sliding/full attention, yarn rope, llama-bpe's BPE."""
    copy_files("llama-bpe", out, LLAMA_BPE_FILES)
    c = cfg("GptOssConfig", vocab_size=LLAMA3_VOCAB, hidden_size=HIDDEN,
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
    build(c, 24_113, "bfloat16", 1.0, out)


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
