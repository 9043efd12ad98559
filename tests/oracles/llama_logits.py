"""Load GGUF models with llama-cpp-python's C API, evaluate a prompt, and
print one JSON line per model: the prompt's token ids, the sha256 of the
last position's logits (float32, little-endian, the whole vocabulary) and
the first 8 logits. One thread, CPU only, so that two loads of the same
weights give the same bits.

usage: llama_logits.py PROMPT MODEL [MODEL...]
(a model may be the first shard of a split model).

The low-level API rather than `llama_cpp.Llama`: `Llama` cannot turn off
llama.cpp's extra CPU buffer types, and on a CPU with AMX the AMX matmul
they select segfaults in `llama_decode` (`ggml_backend_amx_mul_mat`, seen
with llama-cpp-python 0.3.36, even on the tiny sample). Plain CPU buffers
also keep the weights as the file stores them (no repacking), so the
result does not depend on which extra buffer types a CPU offers.
"""
import ctypes
import hashlib
import json
import sys

import llama_cpp as L

GGML_LOG_LEVEL_WARN = 3


@L.llama_log_callback
def _log(level, text, _user):
    # Warnings and errors only: the loader's info lines run to hundreds.
    if level >= GGML_LOG_LEVEL_WARN and text:
        sys.stderr.write(text.decode("utf-8", "replace"))


def logits(path, prompt):
    mparams = L.llama_model_default_params()
    mparams.n_gpu_layers = 0
    mparams.use_extra_bufts = False
    model = L.llama_model_load_from_file(path.encode(), mparams)
    if not model:
        sys.exit(f"llama.cpp could not load {path}")
    cparams = L.llama_context_default_params()
    cparams.n_ctx = 64
    cparams.n_batch = 64
    cparams.n_ubatch = 64
    cparams.n_threads = 1
    cparams.n_threads_batch = 1
    ctx = L.llama_init_from_model(model, cparams)
    if not ctx:
        sys.exit(f"llama.cpp could not make a context for {path}")
    vocab = L.llama_model_get_vocab(model)
    text = prompt.encode("utf-8")
    buf = (L.llama_token * 64)()
    n = L.llama_tokenize(vocab, text, len(text), buf, 64, True, False)
    if n <= 0:
        sys.exit(f"tokenizing the prompt gave {n}")
    rc = L.llama_decode(ctx, L.llama_batch_get_one(buf, n))
    if rc != 0:
        sys.exit(f"llama_decode returned {rc}")
    n_vocab = L.llama_vocab_n_tokens(vocab)
    row = L.llama_get_logits_ith(ctx, -1)
    raw = ctypes.string_at(row, 4 * n_vocab)
    first = list(ctypes.cast(row, ctypes.POINTER(ctypes.c_float))[:8])
    L.llama_free(ctx)
    L.llama_model_free(model)
    return {
        "model": path,
        "tokens": list(buf[:n]),
        "n_vocab": n_vocab,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "first": first,
    }


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    L.llama_log_set(_log, None)
    L.llama_backend_init()
    prompt = sys.argv[1]
    for model in sys.argv[2:]:
        print(json.dumps(logits(model, prompt)), flush=True)


if __name__ == "__main__":
    main()
