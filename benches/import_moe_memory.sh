#!/usr/bin/env bash
# Benchmark: the memory of a mixture-of-experts import. `gguf import` writes experts stored one
# tensor per expert into their stacked GGUF tensor expert by expert, so its peak memory is bounded
# by a slab of rows and one expert's mapped pages, not by the stacked tensor (the converter holds a
# block's experts and stacks them). On a generated 1.25 GB Qwen3-MoE checkpoint (4 blocks of 64
# experts of 1.5 MiB per matrix, stacked tensors of 96 MiB; scripts/make_moe_bench_checkpoint.py),
# in the same run: wall time and peak resident memory (`/usr/bin/time`) of `gguf import --type f16`
# and of llama.cpp's convert_hf_to_gguf.py --outtype f16 (a temporary copy with the tokenizer's
# BPE hash registered as qwen2, as scripts/import_oracle.sh does), and whether the outputs are the
# same bytes.
#
# usage: benches/import_moe_memory.sh
#   CONVERTER_VENV (default /work/targets/convert-venv), LLAMA_CPP (default the vendored llama.cpp
#   of llama-cpp-python 0.3.36 at /work/targets/open/llama/src/vendor/llama.cpp), WORK (default
#   target/bench-moe; ~4 GB).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${CONVERTER_VENV:-/work/targets/convert-venv}
LLAMA_CPP=${LLAMA_CPP:-/work/targets/open/llama/src/vendor/llama.cpp}
WORK=$(realpath -m "${WORK:-$ROOT/target/bench-moe}")
mkdir -p "$WORK"
cargo build --release --bin gguf --manifest-path "$ROOT/Cargo.toml" >&2
OURS="${CARGO_TARGET_DIR:-$ROOT/target}/release/gguf"
CKPT=$WORK/qwen3-moe-1g
[ -f "$CKPT/config.json" ] || "$VENV/bin/python" "$ROOT/scripts/make_moe_bench_checkpoint.py" "$CKPT" >&2
CONV=$WORK/converter
if [ ! -f "$CONV/convert_hf_to_gguf.py" ]; then
    mkdir -p "$CONV"
    cp -r "$LLAMA_CPP/convert_hf_to_gguf.py" "$LLAMA_CPP/convert_hf_to_gguf_update.py" \
        "$LLAMA_CPP/conversion" "$LLAMA_CPP/gguf-py" "$CONV/"
    (cd "$ROOT" && "$VENV/bin/python" scripts/import_oracle.py register "$CONV" \
        tests/data/import/qwen2-bias=qwen2 >&2)
fi
sync
cd "$WORK"
/usr/bin/time -f '%e %M' -o ours.time "$OURS" import "$CKPT" ours.f16.gguf --type f16 --pre-tokenizer qwen2 >/dev/null
/usr/bin/time -f '%e %M' -o theirs.time "$VENV/bin/python" "$CONV/convert_hf_to_gguf.py" "$CKPT" \
    --outtype f16 --outfile theirs.f16.gguf >converter.log 2>&1
same=no; cmp -s ours.f16.gguf theirs.f16.gguf && same=yes
read -r ow om < ours.time
read -r tw tm < theirs.time
expert=$((768 * 1024 * 2))
stacked=$((64 * expert))
printf 'largest expert slice %.1f MiB, stacked expert tensor %.1f MiB, checkpoint %s\n' \
    "$(echo "$expert / 1048576" | bc -l)" "$(echo "$stacked / 1048576" | bc -l)" "$(du -sh "$CKPT" | cut -f1)"
printf '%-30s %8s %14s\n' command 'wall s' 'peak RSS MiB'
printf '%-30s %8s %14d\n' 'gguf import --type f16' "$ow" $((om / 1024))
printf '%-30s %8s %14d\n' 'convert_hf_to_gguf --outtype f16' "$tw" $((tm / 1024))
echo "same bytes: $same"
