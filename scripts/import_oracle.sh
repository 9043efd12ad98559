#!/usr/bin/env bash
# Runs llama.cpp's own convert_hf_to_gguf.py on the import fixtures (tests/data/import/<name>/) and
# writes what it produces next to them: <name>.f16.gguf and <name>.q8_0.gguf (and, for the
# architecture fixtures of scripts/make_arch_fixtures.py, <name>.bf16.gguf too), the oracle that
# `gguf import` is compared with (issue 24). The vision-language fixtures are converted twice
# (the text model, and the projector with --mmproj into mmproj-<name>.<type>.gguf), the LoRA
# adapters (lora-<base>/) by convert_lora_to_gguf.py with --base tests/data/import/<base>.
# A one-time script: never part of the default test run.
#
#   scripts/import_oracle.sh            # all fixtures
#   scripts/import_oracle.sh NAME...    # only these directories' outputs (the README section
#                                       # keeps the others' rows)
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
# scripts/make_import_fixtures.py's fixtures: f16 and q8_0
fixtures=(llama-bpe llama-spm mistral-swa qwen2-bias gemma3 llama-card)
# scripts/make_arch_fixtures.py's fixtures: f16, bf16 and q8_0
arch_fixtures=(qwen3 qwen3-moe mixtral gemma2 phi3 olmo2 smollm3 granite granitemoe glm4 glm4-moe
    deepseek-v3 gpt-oss qwen3-next qwen3-fp8 deepseek-v3-fp8 gpt-oss-mxfp4
    gemma3-vl qwen2-vl qwen2.5-vl qwen3-vl)
# the vision-language ones among them: their projectors too (--mmproj), f16, bf16 and q8_0
mmproj_fixtures=(gemma3-vl qwen2-vl qwen2.5-vl qwen3-vl)
# scripts/make_arch_fixtures.py's LoRA adapters and the fixture each was made on (--base):
# f16, bf16 and q8_0
lora_fixtures=(lora-llama-spm=llama-spm lora-qwen3=qwen3 lora-gemma3=gemma3 lora-mixtral=mixtral
    lora-deepseek-v3=deepseek-v3)
# BPE fixtures and the pre-tokenizer each is registered under: the real model family's whose
# regex the fixture's tokenizer uses. Fixtures with the same tokenizer files have the same hash
# and so the same name (llama-bpe's files: llama-bpe; qwen2-bias's: qwen2; the GLM fixtures'
# llama-bpe files with GLM specials and no BOS: glm4, whose regex is Llama 3's).
bpe=(llama-bpe=llama-bpe qwen2-bias=qwen2
    qwen3=qwen2 qwen3-moe=qwen2 granitemoe=qwen2 qwen3-next=qwen2
    olmo2=llama-bpe smollm3=llama-bpe granite=llama-bpe deepseek-v3=llama-bpe gpt-oss=llama-bpe
    glm4=glm4 glm4-moe=glm4
    qwen3-fp8=qwen2 deepseek-v3-fp8=llama-bpe gpt-oss-mxfp4=llama-bpe
    qwen2-vl=qwen2 qwen2.5-vl=qwen2 qwen3-vl=qwen2)
only=("$@")

[ -f "$llama/convert_hf_to_gguf.py" ] || { echo "no convert_hf_to_gguf.py in $llama" >&2; exit 1; }

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
py=$venv/bin/python
if ! "$py" -c 'import torch, transformers, sentencepiece, safetensors, tokenizers, peft' 2>/dev/null; then
    "$venv/bin/pip" install -q --no-cache-dir --index-url https://download.pytorch.org/whl/cpu 'torch==2.11.0' ||
        "$venv/bin/pip" install -q --no-cache-dir 'torch==2.11.0'
    # transformers 4.57.6 requires tokenizers <= 0.23.0 (0.22.2 is the newest such release)
    "$venv/bin/pip" install -q --no-cache-dir filelock typing-extensions sympy networkx jinja2 fsspec \
        'transformers==4.57.6' 'numpy==2.2.6' 'sentencepiece==0.2.3' 'protobuf>=4.21.0,<5.0.0' \
        'safetensors==0.8.0' 'tokenizers==0.22.2' 'huggingface-hub==0.36.2' \
        'peft==0.21.2' 'accelerate==1.16.0'  # peft: scripts/make_arch_fixtures.py's LoRA adapters
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy=$work/llama.cpp
mkdir -p "$copy"
cp -r "$llama/convert_hf_to_gguf.py" "$llama/convert_hf_to_gguf_update.py" \
    "$llama/convert_lora_to_gguf.py" "$llama/conversion" "$llama/gguf-py" "$copy/"
commit=$(git -C "$llama" rev-parse HEAD 2>/dev/null || echo unknown)

cd "$repo"
args=()
for pair in "${bpe[@]}"; do args+=("tests/data/import/${pair%%=*}=${pair#*=}"); done
"$py" scripts/import_oracle.py register "$copy" "${args[@]}" | tee "$work/registered"

: > "$work/timings"
: > "$work/order"
mkdir -p "$work/logs"
# every run: "LABEL OUTTYPE DIRECTORY KIND" (LABEL names the output, LABEL.OUTTYPE.gguf)
runs=()
outtypes_of() { if [[ " ${fixtures[*]} " == *" $1 "* ]]; then echo f16 q8_0; else echo f16 bf16 q8_0; fi; }
for name in "${fixtures[@]}" "${arch_fixtures[@]}"; do
    for outtype in $(outtypes_of "$name"); do runs+=("$name $outtype $name text"); done
done
for name in "${mmproj_fixtures[@]}"; do
    for outtype in f16 bf16 q8_0; do runs+=("mmproj-$name $outtype $name mmproj"); done
done
for pair in "${lora_fixtures[@]}"; do
    for outtype in f16 bf16 q8_0; do runs+=("${pair%%=*} $outtype ${pair%%=*} lora:${pair#*=}"); done
done
for run in "${runs[@]}"; do set -- $run; echo "$1 $2" >> "$work/order"; done
for name in "${only[@]}"; do
    printf '%s\n' "${runs[@]}" | awk -v n="$name" '$3 == n { found = 1 } END { exit !found }' ||
        { echo "unknown fixture $name" >&2; exit 1; }
done
wanted() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }
for run in "${runs[@]}"; do
    set -- $run
    label=$1 outtype=$2 dir=tests/data/import/$3 kind=$4
    wanted "$3" || continue
    out=tests/data/import/$label.$outtype.gguf
    rm -f "$out"
    case $kind in
        text) cmd=("$copy/convert_hf_to_gguf.py" "$dir" --outtype "$outtype" --outfile "$out") ;;
        mmproj) cmd=("$copy/convert_hf_to_gguf.py" "$dir" --mmproj --outtype "$outtype" --outfile "$out") ;;
        lora:*) cmd=("$copy/convert_lora_to_gguf.py" "$dir" --base "tests/data/import/${kind#lora:}"
                     --outtype "$outtype" --outfile "$out") ;;
    esac
    echo "== ${cmd[*]#"$copy/"}" >&2
    /usr/bin/time -f '%e %M' -o "$work/time" "$py" "${cmd[@]}" > "$work/log" 2>&1 ||
        { cat "$work/log" >&2; exit 1; }
    cp "$work/log" "$work/logs/$label.$outtype.log"
    echo "$label $outtype $(cat "$work/time")" >> "$work/timings"
done

for pair in "${lora_fixtures[@]}"; do echo "${pair%%=*} ${pair#*=}"; done > "$work/loras"
"$py" scripts/import_oracle.py readme tests/data/import/README.md "$commit" "$work/registered" \
    "$work/timings" "$work/order" "$work/loras"
# the converter's logs, for reading its warnings (IMPORT_ORACLE_LOGS, default /tmp/import-oracle-logs)
logs=${IMPORT_ORACLE_LOGS:-/tmp/import-oracle-logs}
mkdir -p "$logs" && cp "$work"/logs/*.log "$logs/"
cat "$work/timings"
du -cb tests/data/import/*.gguf | tail -1
