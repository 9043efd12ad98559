"""Builds the tiny Hugging Face tokenizer directories the unit tests read (testdata/<name>/).

Trained here with the `tokenizers` and `sentencepiece` packages (the versions transformers 4.57.6 uses),
then `converter_keys.py` gives each one's expected keys (testdata/<name>.expected.json).
Usage: python make_fixtures.py OUT_DIR
"""
import json
import shutil
import sys
from pathlib import Path

import sentencepiece as spm
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

out = Path(sys.argv[1])
CORPUS = [
    "The quick brown fox jumps over the lazy dog. I've been told he's there, 'RE you sure?",
    "Llamas eat grass; 3 33 333 3333 numbers and 3.14 and 1314151 too!",
    "нещо на Български, 我想在apple工作, emojis 🚀 🦙 and tabs\tand\nnew lines.",
    "Hello world, hello tokenizer, hello merges and pieces and scores.",
] * 20


def write(d, name, obj):
    (d / name).write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def fresh(name):
    d = out / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    return d


def byte_level_bpe(split_regex, nfc):
    tok = Tokenizer(models.BPE())
    if nfc:
        tok.normalizer = normalizers.NFC()
    if split_regex:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(split_regex), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return tok


LLAMA3_RE = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2_RE = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"

# llama, byte-level BPE (Llama 3 style): a BOS template, merges as strings, padding to vocab_size,
# a special, a look-special, a user-defined and a non-normalized added token.
d = fresh("llama-bpe")
tok = byte_level_bpe(LLAMA3_RE, nfc=False)
n = tok.get_vocab_size()
tok.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>"])
tok.add_tokens(["<|eot_id|>", "hello\u2581world"])
tok.post_processor = processors.Sequence([
    processors.ByteLevel(trim_offsets=False),
    processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                  special_tokens=[("<|begin_of_text|>", n)]),
])
tok.save(str(d / "tokenizer.json"))
j = json.loads((d / "tokenizer.json").read_text())
j["model"]["merges"] = [" ".join(m) for m in j["model"]["merges"]]
j["model"]["ignore_merges"] = True
write(d, "tokenizer.json", j)
write(d, "tokenizer_config.json", {
    "bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>", "tokenizer_class": "PreTrainedTokenizerFast",
    "clean_up_tokenization_spaces": True,
    "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}",
})
write(d, "config.json", {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": n + 8,
                         "bos_token_id": n, "eos_token_id": [n + 1, n + 2]})
write(d, "generation_config.json", {"bos_token_id": n, "eos_token_id": n + 1})

# qwen2, byte-level BPE: NFC, merges as pairs, ByteLevel post-processor, the Qwen2 class.
d = fresh("qwen2-bpe")
tok = byte_level_bpe(QWEN2_RE, nfc=True)
n = tok.get_vocab_size()
tok.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
tok.post_processor = processors.ByteLevel(trim_offsets=False)
tok.save(str(d / "tokenizer.json"))
write(d, "tokenizer_config.json", {
    "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "tokenizer_class": "Qwen2Tokenizer",
    "add_prefix_space": False, "chat_template": "{{ messages }}",
})
write(d, "config.json", {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": n + 3,
                         "bos_token_id": n, "eos_token_id": n + 2})

# SentencePiece (BPE with byte fallback), shared by the SentencePiece fixtures.
spm_dir = out / "_spm"
spm_dir.mkdir(parents=True, exist_ok=True)
(spm_dir / "corpus.txt").write_text("\n".join(CORPUS), encoding="utf-8")
spm.SentencePieceTrainer.train(input=str(spm_dir / "corpus.txt"), model_prefix=str(spm_dir / "m"), vocab_size=400,
                               model_type="bpe", byte_fallback=True, character_coverage=1.0,
                               user_defined_symbols=["<start_of_turn>"], control_symbols=["<ctrl>"], normalization_rule_name="identity",
                               minloglevel=2)

# llama, SentencePiece: padding, added_tokens.json, added_tokens_decoder, add_bos/add_eos.
d = fresh("llama-spm")
shutil.copy(spm_dir / "m.model", d / "tokenizer.model")
write(d, "added_tokens.json", {"<extra_user>": 401})
write(d, "tokenizer_config.json", {
    "add_bos_token": True, "add_eos_token": False, "bos_token": "<s>", "eos_token": {"content": "</s>", "special": True},
    "unk_token": "<unk>", "pad_token": None, "add_prefix_space": True,
    "added_tokens_decoder": {
        "0": {"content": "<unk>", "special": True}, "1": {"content": "<s>", "special": True},
        "2": {"content": "</s>", "special": True}, "402": {"content": "<|tool|>", "special": False},
        "403": {"content": "my\u2581word", "special": False},
    },
    "chat_template": [{"name": "default", "template": "{{ a }}"}, {"name": "tool use", "template": "{{ b }}"}],
})
write(d, "config.json", {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 406,
                         "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 405})

# gemma3, SentencePiece: add_space_prefix false after the special vocabulary, a Gemma template.
d = fresh("gemma3-spm")
shutil.copy(spm_dir / "m.model", d / "tokenizer.model")
write(d, "tokenizer_config.json", {"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True,
                                   "add_eos_token": False})
(d / "chat_template.jinja").write_text("{{ bos_token }}{{ messages }}", encoding="utf-8")
write(d, "config.json", {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "vocab_size": 400,
                         "bos_token_id": 1, "eos_token_id": [2, 3]})

# llama, a Llama 2 style tokenizer.json (byte-fallback BPE) without tokenizer.model.
d = fresh("llama-hf")
from transformers import LlamaTokenizerFast  # noqa: E402
LlamaTokenizerFast(vocab_file=str(spm_dir / "m.model"), legacy=True, from_slow=True).save_pretrained(str(d))
(d / "tokenizer.model").unlink(missing_ok=True)
tj = json.loads((d / "tokenizer.json").read_text())
tj["added_tokens"].append({"id": 400, "content": "<extra_added>", "single_word": False, "lstrip": False,
                           "rstrip": False, "normalized": False, "special": True})
write(d, "tokenizer.json", tj)
cfg = json.loads((d / "tokenizer_config.json").read_text())
cfg.pop("add_prefix_space", None)
write(d, "tokenizer_config.json", cfg)
write(d, "config.json", {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 401})
shutil.rmtree(spm_dir)
