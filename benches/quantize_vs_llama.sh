#!/usr/bin/env bash
# Benchmark: `gguf quantize` against llama.cpp's `llama-quantize` on an F16 Gemma 3 270M, for every
# preset both accept, with an importance matrix and without one (where llama-quantize accepts that: the
# IQ1/IQ2/IQ3_XXS mixtures need one), the same thread count, in the same run: wall time (best of RUNS)
# and peak resident memory (`/usr/bin/time -v`) of both, and whether the outputs are the same bytes.
# Each time includes the sync of its output.
#
# usage: benches/quantize_vs_llama.sh TOOLS_DIR [RUNS] [THREADS] [PRESET...]
#   PRESET...: the presets to run (default: all of them, below).
#   TOOLS_DIR: llama.cpp's tools (bin/llama-quantize, bin/llama-imatrix), as /work/shared/oracles/build-llama-tools.sh
#   builds them. The F16 model and its importance matrix are made once into $WORK (default target/bench-quantize)
#   from GGUF_GEMMA_MODEL (the bundled Q4_K_M Gemma 3 270M) with llama-quantize and llama-imatrix.
#   Our binary: target/release/gguf (built here with `cargo build --release --bin gguf`).
set -euo pipefail
TOOLS=$(realpath "${1:?usage: $0 TOOLS_DIR [RUNS] [THREADS]}")
RUNS=${2:-3}
THREADS=${3:-$(nproc)}
shift $(( $# < 3 ? $# : 3 ))
PRESETS=("$@")
[ ${#PRESETS[@]} -gt 0 ] || PRESETS=(Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q1_0 Q2_0 MXFP4_MOE TQ1_0 TQ2_0 Q2_K Q2_K_S
  Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS
  IQ3_XS IQ3_S IQ3_M IQ4_NL IQ4_XS F16 BF16 F32)
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
    # Each output synced inside its time (ours syncs before its rename anyway; llama-quantize
    # leaves its output to the kernel's writeback), and the dirty pages of the run before written
    # out first, so that neither side pays for the other's.
    sync
    /usr/bin/time -v bash -c '"$@" >/dev/null && sync' _ "$@" 2>"$log" || return 1
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$log")
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; best_rss=$rss; fi
  done
  echo "$best $best_rss"
}

printf '%-9s | %-7s | %-10s | %9s | %9s | %6s | %13s | %14s\n' preset imatrix "same bytes" "ours (s)" "llama (s)" ratio "ours peak MiB" "llama peak MiB"
for preset in "${PRESETS[@]}"; do
  for im in yes no; do
    o="$WORK/ours-$preset-$im.gguf"
    l="$WORK/llama-$preset-$im.gguf"
    flags=()
    [ "$im" = yes ] && flags=(--imatrix "$IMATRIX")
    rm -f "$o" "$l"
    if ! out=$(measure "$BIN/llama-quantize" "${flags[@]}" "$F16" "$l" "$preset" "$THREADS"); then
      # llama-quantize refuses this preset without an importance matrix; so must we.
      if [ "$im" = no ] && ! "$OURS" quantize "$F16" "$o" "$preset" "$THREADS" >/dev/null 2>&1; then
        printf '%-9s | %-7s | %-10s | %9s | %9s | %6s | %13s | %14s\n' "$preset" "$im" "both refuse" - - - - -
        continue
      fi
      echo "llama-quantize failed on $preset (imatrix: $im) and we did not" >&2; cat "$WORK/time.log" >&2; exit 1
    fi
    read -r lt lm <<<"$out"
    out=$(measure "$OURS" quantize "${flags[@]}" "$F16" "$o" "$preset" "$THREADS") || { cat "$WORK/time.log" >&2; exit 1; }
    read -r ot om <<<"$out"
    same=no
    cmp -s "$o" "$l" && same=yes
    ratio=$(awk "BEGIN{printf \"%.2f\", $ot / $lt}")
    printf '%-9s | %-7s | %-10s | %9s | %9s | %6s | %13s | %14s\n' "$preset" "$im" "$same" "$ot" "$lt" "$ratio" "$om" "$lm"
    rm -f "$o" "$l"
  done
done
echo "threads: $THREADS, best of $RUNS runs; ratio = ours / llama-quantize (below 1: we are faster)"
