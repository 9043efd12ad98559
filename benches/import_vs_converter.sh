#!/usr/bin/env bash
# Benchmark: `gguf import` against llama.cpp's convert_hf_to_gguf.py (of the llama.cpp that
# llama-cpp-python 0.3.36 vendors) on a generated ~1 GB llama-shaped bf16 checkpoint (two shards), in
# the same run: wall time and peak resident memory (`/usr/bin/time -v`) for --type f16 (against
# `convert --outtype f16`) and --type q4_k_m (against convert to f16 followed by llama-quantize Q4_K_M),
# and whether the outputs are the same bytes. Each time includes the sync of its output.
#
# usage: benches/import_vs_converter.sh [RUNS]
#   CONVERTER_VENV: a venv with the converter's requirements (torch, transformers, sentencepiece, ...),
#     default /work/targets/convert-venv (scripts/import_oracle.sh makes it).
#   LLAMA_CPP: the vendored llama.cpp source tree (convert_hf_to_gguf.py), default
#     /work/targets/open/llama/src/vendor/llama.cpp.
#   TOOLS_DIR: llama.cpp's tools (bin/llama-quantize), default /work/targets/llama-tools.
#   WORK: where the checkpoint and outputs go (default target/bench-import; ~4 GB).
#   CKPT: the checkpoint (default $WORK/llama-bench, made once by scripts/make_import_bench_checkpoint.py).
#   Our binary: target/release/gguf (built here with `cargo build --release --bin gguf`).
set -euo pipefail
RUNS=${1:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${CONVERTER_VENV:-/work/targets/convert-venv}
LLAMA_CPP=${LLAMA_CPP:-/work/targets/open/llama/src/vendor/llama.cpp}
TOOLS=${TOOLS_DIR:-/work/targets/llama-tools}
WORK=$(realpath -m "${WORK:-$ROOT/target/bench-import}")
THREADS=$(nproc)
mkdir -p "$WORK"

cargo build --release --bin gguf --manifest-path "$ROOT/Cargo.toml" >&2
OURS="${CARGO_TARGET_DIR:-$ROOT/target}/release/gguf"

CKPT=${CKPT:-$WORK/llama-bench}
[ -f "$CKPT/config.json" ] || "$VENV/bin/python" "$ROOT/scripts/make_import_bench_checkpoint.py" "$CKPT" >&2

# Runs "$@" RUNS times; prints the best wall time (s) and the peak RSS (MiB) of the best run.
measure() {
  local best="" best_rss="" log="$WORK/time.log"
  for _ in $(seq "$RUNS"); do
    # Each side's output synced inside its time (ours syncs before its rename anyway), and the
    # other side's dirty pages written out before, so that neither pays for the other's writeback.
    sync
    /usr/bin/time -v bash -c '"$@" >/dev/null && sync' _ "$@" 2>"$log" || { cat "$log" >&2; exit 1; }
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$log")
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; best_rss=$rss; fi
  done
  echo "$best $best_rss"
}

convert() { "$VENV/bin/python" "$LLAMA_CPP/convert_hf_to_gguf.py" "$CKPT" --outtype f16 --outfile "$1"; }
convert_then_quantize() { convert "$WORK/conv-f16-for-q.gguf" && "$TOOLS/bin/llama-quantize" "$WORK/conv-f16-for-q.gguf" "$1" Q4_K_M "$THREADS"; }

printf '%-8s | %-10s | %10s | %10s | %6s | %14s | %14s\n' type "same bytes" "ours (s)" "theirs (s)" ratio "ours peak MiB" "theirs peak MiB"
for ty in f16 q4_k_m; do
  o="$WORK/ours-$ty.gguf"
  t="$WORK/theirs-$ty.gguf"
  if [ "$ty" = f16 ]; then
    read -r tt tm < <(measure bash -c "$(declare -f convert); CKPT='$CKPT' VENV='$VENV' LLAMA_CPP='$LLAMA_CPP' convert '$t'")
  else
    # Peak memory of a pipeline: the larger of its two processes (each measured alone by time -v
    # would need two runs; bash -c reports the largest child).
    read -r tt tm < <(measure bash -c "$(declare -f convert convert_then_quantize); CKPT='$CKPT' VENV='$VENV' LLAMA_CPP='$LLAMA_CPP' TOOLS='$TOOLS' WORK='$WORK' THREADS='$THREADS' convert_then_quantize '$t'")
  fi
  read -r ot om < <(measure "$OURS" import "$CKPT" "$o" --type "$ty")
  same=no
  cmp -s "$o" "$t" && same=yes
  ratio=$(awk "BEGIN{printf \"%.2f\", $tt / $ot}")
  printf '%-8s | %-10s | %10s | %10s | %6s | %14s | %14s\n' "$ty" "$same" "$ot" "$tt" "${ratio}x" "$om" "$tm"
done
largest=$(awk 'BEGIN{printf "%.0f", 32000*2048*2/1048576}')
echo "threads: $THREADS, best of $RUNS runs; ratio = theirs / ours (above 1: we are faster);"
echo "largest tensor (token_embd / output, 32000 x 2048 bf16): $largest MiB"
