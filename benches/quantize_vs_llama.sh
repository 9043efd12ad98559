#!/usr/bin/env bash
# Benchmark: `gguf quantize` against llama.cpp's `llama-quantize` on an F16 Gemma 3 270M, for Q4_K_M,
# IQ4_XS and IQ2_XS with an importance matrix, the same thread count, in the same run: wall time (best of
# RUNS) and peak resident memory (`/usr/bin/time -v`) of both, and whether the outputs are the same bytes.
#
# usage: benches/quantize_vs_llama.sh TOOLS_DIR [RUNS] [THREADS]
#   TOOLS_DIR: llama.cpp's tools (bin/llama-quantize, bin/llama-imatrix), as /work/shared/oracles/build-llama-tools.sh
#   builds them. The F16 model and its importance matrix are made once into $WORK (default target/bench-quantize)
#   from GGUF_GEMMA_MODEL (the bundled Q4_K_M Gemma 3 270M) with llama-quantize and llama-imatrix.
#   Our binary: target/release/gguf (built here with `cargo build --release --bin gguf`).
set -euo pipefail
TOOLS=$(realpath "${1:?usage: $0 TOOLS_DIR [RUNS] [THREADS]}")
RUNS=${2:-3}
THREADS=${3:-$(nproc)}
BIN="$TOOLS/bin"
[ -x "$BIN/llama-quantize" ] || BIN="$TOOLS"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(realpath -m "${WORK:-$ROOT/target/bench-quantize}")
GEMMA=${GGUF_GEMMA_MODEL:-/work/models/gemma-3-270m-q4_k_m.gguf}
mkdir -p "$WORK"

cargo build --release --bin gguf --manifest-path "$ROOT/Cargo.toml" >&2
OURS="${CARGO_TARGET_DIR:-$ROOT/target}/release/gguf"

F16="$WORK/gemma-3-270m-f16.gguf"
[ -f "$F16" ] || "$BIN/llama-quantize" --allow-requantize "$GEMMA" "$F16" F16 "$THREADS" >/dev/null 2>&1
IMATRIX="$WORK/gemma-3-270m.imatrix.gguf"
if [ ! -f "$IMATRIX" ]; then
  (cd "$ROOT/tests/data/quantize" && "$BIN/llama-imatrix" -m "$F16" -f imatrix-text.txt -c 128 -b 128 \
    -t "$THREADS" --no-ppl -o "$IMATRIX" >/dev/null 2>&1)
fi

# Runs "$@" RUNS times; prints the best wall time (s) and the peak RSS (MiB) of the best run.
measure() {
  local best="" best_rss="" log="$WORK/time.log"
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -v "$@" >/dev/null 2>"$log" || { cat "$log" >&2; exit 1; }
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$log")
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; best_rss=$rss; fi
  done
  echo "$best $best_rss"
}

printf '%-8s | %-10s | %12s | %12s | %6s | %14s | %14s\n' preset "same bytes" "ours (s)" "llama (s)" ratio "ours peak MiB" "llama peak MiB"
for preset in Q4_K_M IQ4_XS IQ2_XS; do
  o="$WORK/ours-$preset.gguf"
  l="$WORK/llama-$preset.gguf"
  read -r lt lm < <(measure "$BIN/llama-quantize" --imatrix "$IMATRIX" "$F16" "$l" "$preset" "$THREADS")
  read -r ot om < <(measure "$OURS" quantize --imatrix "$IMATRIX" "$F16" "$o" "$preset" "$THREADS")
  same=no
  cmp -s "$o" "$l" && same=yes
  ratio=$(awk "BEGIN{printf \"%.2f\", $ot / $lt}")
  printf '%-8s | %-10s | %12s | %12s | %6s | %14s | %14s\n' "$preset" "$same" "$ot" "$lt" "$ratio" "$om" "$lm"
done
echo "threads: $THREADS, best of $RUNS runs; ratio = ours / llama-quantize (below 1: we are faster)"
