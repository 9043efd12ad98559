#!/usr/bin/env python3
"""Writes the tiny Hugging Face checkpoints under tests/data/import/<name>/.

They are the inputs of issue 24's import tests: `gguf import` and llama.cpp's
`convert_hf_to_gguf.py` (scripts/import_oracle.sh) both read them. Weights are
random (numpy PCG64, one fixed seed per checkpoint); tokenizers are trained on
scripts/import_fixtures_corpus.txt. Rerunning gives the same bytes; the script
checks that by default (`--check` compares with what is on disk).

Needs: numpy, safetensors, tokenizers, sentencepiece, transformers (see scripts/import_oracle.sh
for the pinned versions). Usage:

    python3 scripts/make_import_fixtures.py [--out tests/data/import] [--check]
"""

from __future__ import annotations

import argparse
import filecmp
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import safetensors
import sentencepiece as spm
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "scripts" / "import_fixtures_corpus.txt"

# Shapes shared by the llama-family checkpoints: small, but with grouped-query
# attention (4 query heads, 2 key/value heads) and an FFN width of 256 so that
# ffn_down rows are long enough for k-quants (the other rows use llama-quantize's
# fallback types, which is worth testing too).
HIDDEN = 64
LAYERS = 2
HEADS = 4
KV_HEADS = 2
FFN = 256

LLAMA3_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


# ---------------------------------------------------------------- weights


def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even."""
    bits = x.astype(np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    return ((bits + rounding) >> 16).astype(np.uint16)


class Weights:
    """Collects named tensors in one storage dtype, drawn from one seeded generator."""

    def __init__(self, seed: int, dtype: str):
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype  # "bfloat16", "float16" or "float32"
        self.tensors: dict[str, np.ndarray] = {}

    def normal(self, name: str, shape: tuple[int, ...], std: float = 0.02, mean: float = 0.0):
        self.tensors[name] = (mean + std * self.rng.standard_normal(shape)).astype(np.float32)

    def spec(self, name: str) -> tuple[str, tuple[int, ...], bytes]:
        x = self.tensors[name]
        if self.dtype == "bfloat16":
            data = to_bf16_bits(x).tobytes()
        elif self.dtype == "float16":
            data = x.astype("<f2").tobytes()
        else:
            data = x.astype("<f4").tobytes()
        return self.dtype, x.shape, data

    def nbytes(self, name: str) -> int:
        return len(self.spec(name)[2])


def llama_layers(w: Weights, n_layers: int, heads: int, kv_heads: int, head_dim: int,
                 qkv_bias: bool = False, gemma: bool = False) -> None:
    for i in range(n_layers):
        p = f"model.layers.{i}"
        # Gemma stores norm weights as offsets from 1 (the model adds 1), llama as scales.
        norm_mean = 0.0 if gemma else 1.0
        w.normal(f"{p}.input_layernorm.weight", (HIDDEN,), std=0.05, mean=norm_mean)
        w.normal(f"{p}.self_attn.q_proj.weight", (heads * head_dim, HIDDEN))
        w.normal(f"{p}.self_attn.k_proj.weight", (kv_heads * head_dim, HIDDEN))
        w.normal(f"{p}.self_attn.v_proj.weight", (kv_heads * head_dim, HIDDEN))
        if qkv_bias:
            w.normal(f"{p}.self_attn.q_proj.bias", (heads * head_dim,))
            w.normal(f"{p}.self_attn.k_proj.bias", (kv_heads * head_dim,))
            w.normal(f"{p}.self_attn.v_proj.bias", (kv_heads * head_dim,))
        w.normal(f"{p}.self_attn.o_proj.weight", (HIDDEN, heads * head_dim))
        if gemma:
            w.normal(f"{p}.self_attn.q_norm.weight", (head_dim,), std=0.05)
            w.normal(f"{p}.self_attn.k_norm.weight", (head_dim,), std=0.05)
        w.normal(f"{p}.post_attention_layernorm.weight", (HIDDEN,), std=0.05, mean=norm_mean)
        if gemma:
            w.normal(f"{p}.pre_feedforward_layernorm.weight", (HIDDEN,), std=0.05)
            w.normal(f"{p}.post_feedforward_layernorm.weight", (HIDDEN,), std=0.05)
        w.normal(f"{p}.mlp.gate_proj.weight", (FFN, HIDDEN))
        w.normal(f"{p}.mlp.up_proj.weight", (FFN, HIDDEN))
        w.normal(f"{p}.mlp.down_proj.weight", (HIDDEN, FFN))


def serialize(path: Path, tensors: dict[str, tuple[str, tuple[int, ...], bytes | np.ndarray]]) -> None:
    """Writes name -> (safetensors dtype name, shape, little-endian bytes or a contiguous array of
    them) with the safetensors package (its numpy front end has no bfloat16, so the raw entry point)."""
    specs = {}
    keep = []
    for name, (dtype, shape, data) in tensors.items():
        buf = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8).copy()
        assert buf.flags.c_contiguous
        keep.append(buf)
        specs[name] = safetensors.TensorSpec(
            dtype=dtype, shape=list(shape), data_ptr=buf.ctypes.data, data_len=buf.nbytes)
    safetensors.serialize_file(specs, str(path), metadata={"format": "pt"})


def save_safetensors(w: Weights, names: list[str], path: Path) -> None:
    serialize(path, {name: w.spec(name) for name in names})


def save_sharded(w: Weights, out: Path, n_shards: int) -> None:
    """Splits in the order Hugging Face's save_pretrained does: tensors in module order,
    a new shard when the running size passes total/n_shards."""
    names = list(w.tensors)
    total = sum(w.nbytes(n) for n in names)
    limit = total / n_shards
    shards: list[list[str]] = [[]]
    size = 0
    for name in names:
        if size + w.nbytes(name) > limit and shards[-1] and len(shards) < n_shards:
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += w.nbytes(name)
    weight_map = {}
    for i, shard in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_safetensors(w, shard, out / fname)
        for name in shard:
            weight_map[name] = fname
    index = {"metadata": {"total_size": total},
             "weight_map": dict(sorted(weight_map.items()))}
    write_json(out / "model.safetensors.index.json", index)


# ---------------------------------------------------------------- tokenizers


def corpus_lines() -> list[str]:
    return CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)


def added(content: str, special: bool = True) -> dict:
    return {"content": content, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": special}


def plain(content: str) -> dict:
    """A special_tokens_map.json entry."""
    return {k: v for k, v in added(content).items() if k != "special"}


def train_byte_level_bpe(regex: str, vocab_size: int, ignore_merges: bool,
                         nfc: bool) -> Tokenizer:
    tok = Tokenizer(models.BPE(byte_fallback=False, ignore_merges=ignore_merges))
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(corpus_lines(), trainer=trainer)
    return tok


def train_sentencepiece(out: Path, vocab_size: int, **options) -> None:
    """Trains a BPE SentencePiece model with byte fallback (as Llama 2, Mistral and Gemma use).
    Lines come from an iterator and the model goes to memory, so no temporary path ends up
    in the model's trainer_spec (which would make reruns differ)."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([l.rstrip("\n") for l in corpus_lines() if l.strip()]), model_writer=model, model_type="bpe",
        vocab_size=vocab_size, byte_fallback=True, split_digits=True,
        character_coverage=0.9995, num_threads=1, minloglevel=2,
        input_sentence_size=0, shuffle_input_sentence=False, max_sentence_length=4192,
        **options)
    (out / "tokenizer.model").write_bytes(model.getvalue())


def fast_tokenizer_json(out: Path, cls_name: str, **kwargs) -> None:
    """The tokenizer.json that transformers converts from tokenizer.model, as Hugging Face
    repositories of SentencePiece models ship it beside the model (llama.cpp's converter then
    resolves special tokens through its added_tokens)."""
    import transformers
    import transformers.convert_slow_tokenizer as convert
    from transformers.utils import sentencepiece_model_pb2_new

    # sentencepiece's own protobuf module wants protobuf >= 5; the converter's requirements pin < 5.
    convert.import_protobuf = lambda *_args, **_kwargs: sentencepiece_model_pb2_new
    tok = getattr(transformers, cls_name)(vocab_file=str(out / "tokenizer.model"), **kwargs)
    tok.backend_tokenizer.save(str(out / "tokenizer.json"))


def sp_size(out: Path) -> int:
    return spm.SentencePieceProcessor(model_file=str(out / "tokenizer.model")).vocab_size()


def sp_id(out: Path, piece: str) -> int:
    sp = spm.SentencePieceProcessor(model_file=str(out / "tokenizer.model"))
    i = sp.piece_to_id(piece)
    assert sp.id_to_piece(i) == piece, piece
    return i


# ---------------------------------------------------------------- files


def write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


LLAMA3_TEMPLATE = (
    "{{- bos_token }}\n"
    "{%- for message in messages %}\n"
    "    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n"
    "{%- endif %}\n"
)
LLAMA2_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'system' %}{{ '<<SYS>>\\n' + message['content'] + '\\n<</SYS>>\\n\\n' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' '  + message['content'] + ' ' + eos_token }}"
    "{% endif %}{% endfor %}"
)
MISTRAL_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"
)
CHATML_TEMPLATE = (
    "{%- for message in messages %}\n"
    "    {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}\n"
)
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)


def make_llama_bpe(out: Path) -> None:
    """Llama 3.2 style: byte-level BPE (tokenizer.json only), bf16, two shards, llama3 rope scaling."""
    tok = train_byte_level_bpe(LLAMA3_REGEX, vocab_size=360, ignore_merges=True, nfc=False)
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                "<|reserved_special_token_1|>", "<|start_header_id|>", "<|end_header_id|>",
                "<|reserved_special_token_2|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
    first = tok.get_vocab_size()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    ids = {s: first + i for i, s in enumerate(specials)}
    bos = ids["<|begin_of_text|>"]
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
        processors.TemplateProcessing(
            single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
            special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    tok.save(str(out / "tokenizer.json"))
    vocab = tok.get_vocab_size()

    write_json(out / "tokenizer_config.json", {
        "added_tokens_decoder": {str(ids[s]): added(s) for s in specials},
        "bos_token": "<|begin_of_text|>",
        "chat_template": LLAMA3_TEMPLATE,
        "clean_up_tokenization_spaces": True,
        "eos_token": "<|eot_id|>",
        "model_input_names": ["input_ids", "attention_mask"],
        "model_max_length": 131072,
        "tokenizer_class": "PreTrainedTokenizerFast",
    })
    write_json(out / "special_tokens_map.json", {
        "bos_token": plain("<|begin_of_text|>"),
        "eos_token": plain("<|eot_id|>"),
    })
    write_json(out / "config.json", {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": bos,
        "eos_token_id": [ids["<|end_of_text|>"], ids["<|eom_id|>"], ids["<|eot_id|>"]],
        "head_dim": HIDDEN // HEADS,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": FFN,
        "max_position_embeddings": 131072,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.45.0.dev0",
        "use_cache": True,
        "vocab_size": vocab,
    })
    write_json(out / "generation_config.json", {
        "bos_token_id": bos,
        "do_sample": True,
        "eos_token_id": [ids["<|end_of_text|>"], ids["<|eom_id|>"], ids["<|eot_id|>"]],
        "temperature": 0.6,
        "top_p": 0.9,
        "transformers_version": "4.45.0.dev0",
    })

    w = Weights(seed=24_001, dtype="bfloat16")
    w.normal("model.embed_tokens.weight", (vocab, HIDDEN))
    llama_layers(w, LAYERS, HEADS, KV_HEADS, HIDDEN // HEADS)
    w.normal("model.norm.weight", (HIDDEN,), std=0.05, mean=1.0)
    w.normal("lm_head.weight", (vocab, HIDDEN))
    save_sharded(w, out, n_shards=2)


def make_llama_spm(out: Path) -> None:
    """Llama 2 style: SentencePiece tokenizer.model, f32 weights, tied embeddings (no lm_head)."""
    train_sentencepiece(out, vocab_size=640, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
                        add_dummy_prefix=True, remove_extra_whitespaces=False,
                        normalization_rule_name="identity")
    vocab = sp_size(out)
    write_json(out / "tokenizer_config.json", {
        "add_bos_token": True,
        "add_eos_token": False,
        "added_tokens_decoder": {"0": added("<unk>"), "1": added("<s>"), "2": added("</s>")},
        "bos_token": "<s>",
        "chat_template": LLAMA2_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "</s>",
        "legacy": False,
        "model_max_length": 2048,
        "pad_token": None,
        "padding_side": "right",
        "sp_model_kwargs": {},
        "tokenizer_class": "LlamaTokenizer",
        "unk_token": "<unk>",
        "use_default_system_prompt": False,
    })
    write_json(out / "special_tokens_map.json", {
        "bos_token": plain("<s>"),
        "eos_token": plain("</s>"),
        "unk_token": plain("<unk>"),
    })
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
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "transformers_version": "4.35.0",
        "use_cache": True,
        "vocab_size": vocab,
    })
    write_json(out / "generation_config.json", {
        "bos_token_id": 1,
        "eos_token_id": 2,
        "max_length": 2048,
        "pad_token_id": 0,
        "transformers_version": "4.35.0",
    })
    w = Weights(seed=24_002, dtype="float32")
    w.normal("model.embed_tokens.weight", (vocab, HIDDEN))
    llama_layers(w, LAYERS, HEADS, KV_HEADS, HIDDEN // HEADS)
    w.normal("model.norm.weight", (HIDDEN,), std=0.05, mean=1.0)
    save_safetensors(w, list(w.tensors), out / "model.safetensors")


def make_mistral_swa(out: Path) -> None:
    """Mistral 7B style: MistralForCausalLM (the converter maps it to the llama architecture),
    sliding_window set, SentencePiece with [INST] control tokens (v0.3 style), f16 weights."""
    train_sentencepiece(out, vocab_size=600, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
                        control_symbols=["[INST]", "[/INST]"],
                        add_dummy_prefix=True, remove_extra_whitespaces=False,
                        normalization_rule_name="identity")
    fast_tokenizer_json(out, "LlamaTokenizerFast", add_prefix_space=True)
    vocab = sp_size(out)
    inst, inst_end = sp_id(out, "[INST]"), sp_id(out, "[/INST]")
    write_json(out / "tokenizer_config.json", {
        "add_bos_token": True,
        "add_eos_token": False,
        "add_prefix_space": None,
        "added_tokens_decoder": {"0": added("<unk>"), "1": added("<s>"), "2": added("</s>"),
                                 str(inst): added("[INST]"), str(inst_end): added("[/INST]")},
        "additional_special_tokens": [],
        "bos_token": "<s>",
        "chat_template": MISTRAL_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "</s>",
        "legacy": False,
        "model_max_length": 1000000000000000019884624838656,
        "pad_token": None,
        "sp_model_kwargs": {},
        "spaces_between_special_tokens": False,
        "tokenizer_class": "LlamaTokenizer",
        "unk_token": "<unk>",
        "use_default_system_prompt": False,
    })
    write_json(out / "config.json", {
        "architectures": ["MistralForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": FFN,
        "max_position_embeddings": 32768,
        "model_type": "mistral",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0,
        "sliding_window": 4096,
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
        "transformers_version": "4.42.0.dev0",
        "use_cache": True,
        "vocab_size": vocab,
    })
    write_json(out / "generation_config.json", {
        "bos_token_id": 1,
        "eos_token_id": 2,
        "transformers_version": "4.42.0.dev0",
    })
    w = Weights(seed=24_003, dtype="float16")
    w.normal("model.embed_tokens.weight", (vocab, HIDDEN))
    llama_layers(w, LAYERS, HEADS, KV_HEADS, HIDDEN // HEADS)
    w.normal("model.norm.weight", (HIDDEN,), std=0.05, mean=1.0)
    w.normal("lm_head.weight", (vocab, HIDDEN))
    save_safetensors(w, list(w.tensors), out / "model.safetensors")


def make_qwen2_bias(out: Path) -> None:
    """Qwen2.5 style: byte-level BPE with NFC and Qwen2's regex, biases on q/k/v, no BOS,
    config vocab_size padded past the tokenizer (as Qwen pads to a multiple of 64), bf16."""
    tok = train_byte_level_bpe(QWEN2_REGEX, vocab_size=340, ignore_merges=False, nfc=True)
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False,
                                              use_regex=False)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    first = tok.get_vocab_size()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    ids = {s: first + i for i, s in enumerate(specials)}
    tok.save(str(out / "tokenizer.json"))
    tok.model.save(str(out))  # vocab.json + merges.txt, as Qwen repositories ship them
    n_tok = tok.get_vocab_size()
    vocab = (n_tok + 63) // 64 * 64
    write_json(out / "tokenizer_config.json", {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {str(ids[s]): added(s) for s in specials},
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None,
        "chat_template": CHATML_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    })
    write_json(out / "config.json", {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": ids["<|endoftext|>"],
        "eos_token_id": ids["<|im_end|>"],
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": FFN,
        "max_position_embeddings": 32768,
        "max_window_layers": LAYERS,
        "model_type": "qwen2",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000.0,
        "sliding_window": 32768,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.43.1",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": vocab,
    })
    write_json(out / "generation_config.json", {
        "bos_token_id": ids["<|endoftext|>"],
        "do_sample": True,
        "eos_token_id": [ids["<|im_end|>"], ids["<|endoftext|>"]],
        "pad_token_id": ids["<|endoftext|>"],
        "repetition_penalty": 1.05,
        "temperature": 0.7,
        "top_k": 20,
        "top_p": 0.8,
        "transformers_version": "4.43.1",
    })
    w = Weights(seed=24_004, dtype="bfloat16")
    w.normal("model.embed_tokens.weight", (vocab, HIDDEN))
    llama_layers(w, LAYERS, HEADS, KV_HEADS, HIDDEN // HEADS, qkv_bias=True)
    w.normal("model.norm.weight", (HIDDEN,), std=0.05, mean=1.0)
    w.normal("lm_head.weight", (vocab, HIDDEN))
    save_safetensors(w, list(w.tensors), out / "model.safetensors")


def make_gemma3(out: Path) -> None:
    """Gemma 3 (text) style: SentencePiece without dummy prefix, <start_of_turn>/<end_of_turn>,
    head_dim * heads != hidden, one KV head, q/k norms, tied embeddings, config vocab_size
    past the tokenizer's (as gemma-3-4b), bf16."""
    train_sentencepiece(out, vocab_size=640, pad_id=0, eos_id=1, bos_id=2, unk_id=3,
                        pad_piece="<pad>", eos_piece="<eos>", bos_piece="<bos>", unk_piece="<unk>",
                        user_defined_symbols=["<mask>", "<start_of_turn>", "<end_of_turn>"],
                        add_dummy_prefix=False, remove_extra_whitespaces=False,
                        normalization_rule_name="identity")
    fast_tokenizer_json(out, "GemmaTokenizerFast")
    n_sp = sp_size(out)
    vocab = n_sp + 8
    start, end = sp_id(out, "<start_of_turn>"), sp_id(out, "<end_of_turn>")
    mask = sp_id(out, "<mask>")
    write_json(out / "tokenizer_config.json", {
        "add_bos_token": True,
        "add_eos_token": False,
        "added_tokens_decoder": {"0": added("<pad>"), "1": added("<eos>"), "2": added("<bos>"),
                                 "3": added("<unk>"), str(mask): added("<mask>", special=False),
                                 str(start): added("<start_of_turn>"),
                                 str(end): added("<end_of_turn>")},
        "additional_special_tokens": ["<start_of_turn>", "<end_of_turn>"],
        "bos_token": "<bos>",
        "chat_template": GEMMA_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<eos>",
        "extra_special_tokens": {},
        "model_max_length": 1000000000000000019884624838656,
        "pad_token": "<pad>",
        "padding_side": "left",
        "sp_model_kwargs": None,
        "spaces_between_special_tokens": False,
        "tokenizer_class": "GemmaTokenizer",
        "unk_token": "<unk>",
        "use_default_system_prompt": False,
    })
    head_dim = 32
    kv_heads = 1
    write_json(out / "config.json", {
        "_sliding_window_pattern": 2,
        "architectures": ["Gemma3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "attn_logit_softcapping": None,
        "bos_token_id": 2,
        "eos_token_id": [1, end],
        "final_logit_softcapping": None,
        "head_dim": head_dim,
        "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": FFN,
        "layer_types": ["sliding_attention", "full_attention"],
        "max_position_embeddings": 32768,
        "model_type": "gemma3_text",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": kv_heads,
        "pad_token_id": 0,
        "query_pre_attn_scalar": head_dim,
        "rms_norm_eps": 1e-06,
        "rope_local_base_freq": 10000.0,
        "rope_scaling": None,
        "rope_theta": 1000000.0,
        "sliding_window": 512,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.55.0.dev0",
        "use_bidirectional_attention": False,
        "use_cache": True,
        "vocab_size": vocab,
    })
    write_json(out / "generation_config.json", {
        "bos_token_id": 2,
        "cache_implementation": "hybrid",
        "do_sample": True,
        "eos_token_id": [1, end],
        "pad_token_id": 0,
        "top_k": 64,
        "top_p": 0.95,
        "transformers_version": "4.55.0.dev0",
    })
    w = Weights(seed=24_005, dtype="bfloat16")
    w.normal("model.embed_tokens.weight", (vocab, HIDDEN))
    llama_layers(w, LAYERS, HEADS, kv_heads, head_dim, gemma=True)
    w.normal("model.norm.weight", (HIDDEN,), std=0.05)
    save_safetensors(w, list(w.tensors), out / "model.safetensors")


LLAMA_CARD_README = """---
license: other
license_name: tiny-card-license
license_link: https://example.com/tiny-card-license
language:
- en
- fr
- no
tags:
- text-generation
- gguf-kit-fixture
pipeline_tag: text-generation
base_model:
- meta-llama/Llama-2-7b-chat-hf
- https://huggingface.co/mistralai/Mistral-7B-v0.1
datasets:
- HuggingFaceFW/fineweb-edu
- https://huggingface.co/datasets/allenai/c4
model_name: Tiny Card Llama
model_creator: gguf-kit
description: A tiny random llama with a model card.
---

# Tiny Card Llama

Random weights; only the front matter above matters.
"""


def make_llama_card(out: Path) -> None:
    """llama-spm's shape and weights, plus a model card (README.md with YAML front matter)."""
    make_llama_spm(out)
    (out / "README.md").write_text(LLAMA_CARD_README, encoding="utf-8")


FIXTURES = {
    "llama-bpe": make_llama_bpe,
    "llama-spm": make_llama_spm,
    "mistral-swa": make_mistral_swa,
    "qwen2-bias": make_qwen2_bias,
    "gemma3": make_gemma3,
    "llama-card": make_llama_card,
}


def generate(root: Path) -> None:
    for name, make in FIXTURES.items():
        out = root / name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        make(out)


def same_tree(a: Path, b: Path) -> list[str]:
    diffs = []
    cmp = filecmp.dircmp(a, b)
    diffs += [f"only in {a}: {n}" for n in cmp.left_only]
    diffs += [f"only in {b}: {n}" for n in cmp.right_only]
    for n in cmp.common_files:
        if not filecmp.cmp(a / n, b / n, shallow=False):
            diffs.append(f"differs: {n}")
    for n in cmp.common_dirs:
        diffs += same_tree(a / n, b / n)
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "import")
    ap.add_argument("--check", action="store_true",
                    help="generate into a temporary directory and compare with --out")
    args = ap.parse_args()
    if not args.check:
        generate(args.out)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        diffs = []
        for name in FIXTURES:
            diffs += same_tree(args.out / name, Path(tmp) / name)
    for d in diffs:
        print(d, file=sys.stderr)
    print("same bytes" if not diffs else f"{len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
