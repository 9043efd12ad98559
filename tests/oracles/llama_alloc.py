"""Load a GGUF model with llama-cpp-python (verbose) and print, as JSON, the
allocation figures llama.cpp logs: model params, BPW, model buffer, KV cache
size(s), output buffer and compute buffer, all in the units it prints.

usage: llama_alloc.py MODEL SETTINGS_JSON
SETTINGS_JSON keys: n_ctx, n_batch, n_ubatch, flash_attn (bool),
type_k/type_v (ggml type names), swa_full (bool).
"""
import json
import os
import re
import subprocess
import sys

CHILD = r"""
import json, sys
import llama_cpp
s = json.loads(sys.argv[2])
types = {"f16": 1, "f32": 0, "q8_0": 8, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "bf16": 30}
kw = dict(n_ctx=s["n_ctx"], n_batch=s["n_batch"], n_ubatch=s["n_ubatch"],
          flash_attn=s["flash_attn"], swa_full=s["swa_full"], n_gpu_layers=0, verbose=True)
if s.get("type_k", "f16") != "f16":
    kw["type_k"] = types[s["type_k"]]
if s.get("type_v", "f16") != "f16":
    kw["type_v"] = types[s["type_v"]]
llama_cpp.Llama(model_path=sys.argv[1], **kw)
"""


def main():
    model, settings = sys.argv[1], sys.argv[2]
    out = subprocess.run([sys.executable, "-c", CHILD, model, settings],
                         capture_output=True, text=True)
    log = out.stdout + out.stderr
    if out.returncode != 0:
        print(log[-3000:], file=sys.stderr)
        sys.exit(1)
    def nums(pattern):
        return [float(x) for x in re.findall(pattern, log)]
    params = re.search(r"model params\s*=\s*([\d.]+ [KMBT])", log)
    res = {
        "model_params": params.group(1) if params else None,
        "bpw": nums(r"\(([\d.]+) BPW\)")[:1],
        "model_buffer_mib": nums(r"CPU_Mapped model buffer size =\s*([\d.]+) MiB")
                            + nums(r"\bCPU model buffer size =\s*([\d.]+) MiB"),
        "repack_buffer_mib": nums(r"CPU_REPACK model buffer size =\s*([\d.]+) MiB"),
        "kv_mib": nums(r"llama_kv_cache: size =\s*([\d.]+) MiB"),
        "rs_mib": nums(r"llama_memory_recurrent: size =\s*([\d.]+) MiB"),
        "output_mib": nums(r"output buffer size =\s*([\d.]+) MiB"),
        "compute_mib": nums(r"CPU compute buffer size =\s*([\d.]+) MiB"),
        "version": re.findall(r"build: (\S+)", log)[:1],
    }
    print(json.dumps(res))


if __name__ == "__main__":
    main()
