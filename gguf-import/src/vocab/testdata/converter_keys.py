"""The tokenizer.* keys llama.cpp's converter writes for a checkpoint directory, as JSON.

Runs the vendored convert_hf_to_gguf's own `set_vocab` (conversion/*.py, gguf-py's SpecialVocab) with
torch stubbed out (set_vocab never touches a tensor), so only transformers, tokenizers, sentencepiece and
protobuf are needed (the converter's pinned versions: transformers 4.57.6).

Usage: python converter_keys.py LLAMA_CPP_DIR HF_DIR ARCH_CLASS [PRE_NAME] > expected.json
   ARCH_CLASS: LlamaModel, Qwen2Model or Gemma3Model
   PRE_NAME: the name a BPE tokenizer whose hash the converter does not know is registered under (as
   convert_hf_to_gguf_update.py would add it)
Output: {"chkhsh": the converter's hash of the check text's ids (BPE only), "keys": [[key, type,
element type or null, value], ...] in the converter's order}.
"""
import json
import sys
from pathlib import Path
from unittest import mock

llama_cpp, hf_dir, cls_name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
sys.path.insert(0, str(llama_cpp / "gguf-py"))
sys.path.insert(0, str(llama_cpp))
# transformers decides once, at import, that there is no torch; the stub is for the converter only.
import transformers  # noqa: E402,F401
from transformers import AutoTokenizer  # noqa: E402,F401

for name in ("torch", "torch.nn", "torch.nn.functional"):
    sys.modules[name] = mock.MagicMock()

import gguf  # noqa: E402
from gguf.constants import GGUFValueType  # noqa: E402

module = {"LlamaModel": "llama", "Qwen2Model": "qwen", "Gemma3Model": "gemma"}[cls_name]
cls = getattr(__import__(f"conversion.{module}", fromlist=[cls_name]), cls_name)

import conversion.base as base  # noqa: E402

hashes = []


def recording_sha256(data):
    h = base.hashlib_sha256(data)
    hashes.append(h.hexdigest())
    return h


base.hashlib_sha256 = base.sha256
base.sha256 = recording_sha256
original_pre = base.TextModel.get_vocab_base_pre


def get_vocab_base_pre(self, tokenizer):
    try:
        return original_pre(self, tokenizer)
    except NotImplementedError:
        if len(sys.argv) < 5:
            raise
        return sys.argv[4]


base.TextModel.get_vocab_base_pre = get_vocab_base_pre

config = json.loads((hf_dir / "config.json").read_text())
hparams = {**config, **config.get("text_config", {})}
model = cls.__new__(cls)
model.dir_model = hf_dir
model.hparams = hparams
model.is_mistral_format = False
model.origin_hf_arch = config.get("architectures", [None])[0]
model.gguf_writer = gguf.GGUFWriter(path=None, arch=gguf.MODEL_ARCH_NAMES[cls.model_arch])
model.set_vocab()


def plain(v):
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8")
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return int(v)
    return v


out = []
for key, val in model.gguf_writer.kv_data[0].items():
    if not key.startswith("tokenizer."):
        continue
    sub = None
    if val.type == GGUFValueType.ARRAY:
        sub = GGUFValueType.get_type(val.value[0]).name
    out.append([key, val.type.name, sub, plain(val.value)])
json.dump({"chkhsh": hashes[0] if hashes else None, "keys": out}, sys.stdout, ensure_ascii=False, indent=0)
print()
