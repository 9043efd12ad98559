#!/usr/bin/env bash
# Benchmark: `gguf import --type f16|bf16|q8_0` against copying the same checkpoint (`cp -r` then
# `sync`), in the same run: is the import bounded by reading and writing the bytes? Each command
# runs on a cold page cache (caches dropped before each run when run as root; otherwise warm, and
# the table says so) and its time includes `sync`, so both sides have their bytes on the disk.
# Medians of RUNS rounds; peak resident memory from `/usr/bin/time -v`. With CONVERTER_VENV and LLAMA_CPP
# set (as for benches/import_vs_converter.sh), each output is compared with llama.cpp's
# convert_hf_to_gguf.py's for the same --outtype, byte for byte.
#
# usage: benches/import_vs_copy.sh [RUNS]
#   CKPT: the checkpoint (default $WORK/llama-bench-24, made once by
#     scripts/make_import_bench_checkpoint.py --layers 24: 2.4 GB of bf16 in two shards; needs
#     numpy, safetensors, sentencepiece and tokenizers).
#   WORK: where the checkpoint and outputs go (default target/bench-import-copy; ~8 GB).
#   CONVERTER_VENV, LLAMA_CPP: a venv with the converter's requirements and the llama.cpp source tree
#     (convert_hf_to_gguf.py); without them the "same bytes" column says "-".
#   Our binary: target/release/gguf (built here with `cargo build --release --bin gguf`).
set -euo pipefail
RUNS=${1:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(realpath -m "${WORK:-$ROOT/target/bench-import-copy}")
mkdir -p "$WORK"
cargo build --release --bin gguf --manifest-path "$ROOT/Cargo.toml" >&2
OURS="${CARGO_TARGET_DIR:-$ROOT/target}/release/gguf"
CKPT=${CKPT:-$WORK/llama-bench-24}
[ -f "$CKPT/config.json" ] || python3 "$ROOT/scripts/make_import_bench_checkpoint.py" "$CKPT" --layers 24 >&2

cache=warm
drop() { :; }
if [ "$(id -u)" = 0 ] && sync && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
  cache=cold
  drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
fi

# Runs "$@" then sync once, after `drop`; prints the wall time (s) and the peak RSS (MiB). $OUT
# is removed after the run.
measure() {
  local log="$WORK/time.log"
  rm -rf "$OUT"
  drop
  /usr/bin/time -v bash -c '"$@" >/dev/null && sync' _ "$@" 2>"$log" || { cat "$log" >&2; exit 1; }
  awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; w=s}
    /Maximum resident set size/ {r=$2/1024} END {printf "%s %.0f\n", w, r}' "$log"
  rm -rf "$OUT"
}

# The median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

bytes_in=$(du -sb "$CKPT" | cut -f1)
# Rounds: the copy and each import once per round, in turn, so that all see the same states of
# the machine (a virtual disk's speed drifts by 2-3x over minutes here); medians over the rounds.
declare -A times rss
for _ in $(seq "$RUNS"); do
  OUT="$WORK/copy"
  read -r t _ < <(measure cp -r "$CKPT" "$OUT")
  times[cp]+="$t "
  for ty in f16 bf16 q8_0; do
    OUT="$WORK/ours-$ty.gguf"
    read -r t m < <(measure "$OURS" import "$CKPT" "$OUT" --type "$ty")
    times[$ty]+="$t "
    rss[$ty]=$m
  done
done
# shellcheck disable=SC2086
ct=$(median ${times[cp]})
printf '%-6s | %10s | %12s | %6s | %13s | %12s | %10s\n' type "ours (s)" "cp+sync (s)" ratio "ours peak MiB" "output bytes" "same bytes"
for ty in f16 bf16 q8_0; do
  OUT="$WORK/ours-$ty.gguf"
  "$OURS" import "$CKPT" "$OUT" --type "$ty" >/dev/null
  size=$(stat -c %s "$OUT")
  same=-
  if [ -n "${CONVERTER_VENV:-}" ] && [ -n "${LLAMA_CPP:-}" ]; then
    "$CONVERTER_VENV/bin/python" "$LLAMA_CPP/convert_hf_to_gguf.py" "$CKPT" --outtype "$ty" \
      --outfile "$WORK/theirs-$ty.gguf" >/dev/null 2>&1
    same=no
    cmp -s "$OUT" "$WORK/theirs-$ty.gguf" && same=yes
    rm -f "$WORK/theirs-$ty.gguf"
  fi
  rm -f "$OUT"
  # shellcheck disable=SC2086
  ot=$(median ${times[$ty]})
  ratio=$(awk "BEGIN{printf \"%.2f\", $ot / $ct}")
  printf '%-6s | %10s | %12s | %6s | %13s | %12s | %10s\n' "$ty" "$ot" "$ct" "$ratio" "${rss[$ty]}" "$size" "$same"
done
echo "all times (s): cp: ${times[cp]}| f16: ${times[f16]}| bf16: ${times[bf16]}| q8_0: ${times[q8_0]}"
echo "checkpoint: $bytes_in bytes of bf16 safetensors; $cache page cache; threads: $(nproc); medians of $RUNS rounds;"
echo "ratio = ours / (cp -r + sync) (at most 1: as fast as copying the bytes)"
