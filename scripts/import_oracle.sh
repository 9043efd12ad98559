#!/usr/bin/env bash
# Runs llama.cpp's own convert_hf_to_gguf.py on the import fixtures (tests/data/import/<name>/) and
# writes what it produces next to them: <name>.f16.gguf and <name>.q8_0.gguf, the oracle that
# `gguf import` is compared with (issue 24). A one-time script: never part of the default test run.
#
#   scripts/import_oracle.sh
#
# Environment:
#   LLAMA_CPP            llama.cpp source tree (default: the one llama-cpp-python 0.3.36 vendors,
#                        /work/targets/open/llama/src/vendor/llama.cpp); never modified
#   IMPORT_ORACLE_VENV   venv to create or reuse (default /work/targets/convert-venv)
#
# The converter needs torch and transformers from PyPI. It uses torch only on the CPU, so the
# CPU wheel from download.pytorch.org is tried first; where that host is unreachable, PyPI's
# default torch comes with its CUDA libraries (about 3.3 GB more: `import torch` loads them even
# on a machine without a GPU).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
llama=${LLAMA_CPP:-/work/targets/open/llama/src/vendor/llama.cpp}
venv=${IMPORT_ORACLE_VENV:-/work/targets/convert-venv}
fixtures=(llama-bpe llama-spm mistral-swa qwen2-bias gemma3 llama-card)
# BPE fixtures and the pre-tokenizer each is registered under (the one its regex copies).
bpe=(llama-bpe=llama-bpe qwen2-bias=qwen2)

[ -f "$llama/convert_hf_to_gguf.py" ] || { echo "no convert_hf_to_gguf.py in $llama" >&2; exit 1; }

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
py=$venv/bin/python
if ! "$py" -c 'import torch, transformers, sentencepiece, safetensors, tokenizers' 2>/dev/null; then
    "$venv/bin/pip" install -q --no-cache-dir --index-url https://download.pytorch.org/whl/cpu 'torch==2.11.0' ||
        "$venv/bin/pip" install -q --no-cache-dir 'torch==2.11.0'
    "$venv/bin/pip" install -q --no-cache-dir filelock typing-extensions sympy networkx jinja2 fsspec \
        'transformers==4.57.6' 'numpy==2.2.6' 'sentencepiece==0.2.3' 'protobuf>=4.21.0,<5.0.0' \
        'safetensors==0.8.0' 'tokenizers==0.23.3'
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy=$work/llama.cpp
mkdir -p "$copy"
cp -r "$llama/convert_hf_to_gguf.py" "$llama/convert_hf_to_gguf_update.py" "$llama/conversion" \
    "$llama/gguf-py" "$copy/"
commit=$(git -C "$llama" rev-parse HEAD 2>/dev/null || echo unknown)

cd "$repo"
args=()
for pair in "${bpe[@]}"; do args+=("tests/data/import/${pair%%=*}=${pair#*=}"); done
"$py" scripts/import_oracle.py register "$copy" "${args[@]}" | tee "$work/registered"

: > "$work/timings"
for name in "${fixtures[@]}"; do
    for outtype in f16 q8_0; do
        out=tests/data/import/$name.$outtype.gguf
        rm -f "$out"
        echo "== $name --outtype $outtype" >&2
        /usr/bin/time -f '%e %M' -o "$work/time" \
            "$py" "$copy/convert_hf_to_gguf.py" "tests/data/import/$name" --outtype "$outtype" \
            --outfile "$out" > "$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
        echo "$name $outtype $(cat "$work/time")" >> "$work/timings"
    done
done

"$py" scripts/import_oracle.py readme tests/data/import/README.md "$commit" "$work/registered" "$work/timings"
cat "$work/timings"
du -cb tests/data/import/*.gguf | tail -1
