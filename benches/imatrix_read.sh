#!/usr/bin/env bash
# Benchmark: reading an importance matrix of many entries (issue 32, item 5). Generated matrices of
# 20,000 and 120,000 entries in llama-imatrix's GGUF layout (scripts/make_imatrix.py), each read and
# converted by `gguf imatrix convert IN OUT.dat`: wall time and peak resident memory (`/usr/bin/time -v`).
# Reading was quadratic in the entries (a search of the names seen so far per tensor) and is linear.
#
# usage: benches/imatrix_read.sh [GGUF_BINARY]
#   GGUF_BINARY: the binary to time (default: target/release/gguf, built here); pass an older build to
#     compare. WORK: where the matrices go (default target/bench-imatrix; ~40 MB).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(realpath -m "${WORK:-$ROOT/target/bench-imatrix}")
mkdir -p "$WORK"
if [ $# -ge 1 ]; then
  BIN=$(realpath "$1")
else
  cargo build --release --bin gguf --manifest-path "$ROOT/Cargo.toml" >&2
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/gguf"
fi

printf '%-8s | %10s | %14s\n' entries "wall (s)" "peak RSS MiB"
for n in 20000 120000; do
  im="$WORK/im$n.gguf"
  [ -f "$im" ] || python3 "$ROOT/scripts/make_imatrix.py" "$n" "$im"
  log="$WORK/time.log"
  /usr/bin/time -v "$BIN" imatrix convert "$im" "$WORK/out$n.dat" >/dev/null 2>"$log" || { cat "$log" >&2; exit 1; }
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$log")
  printf '%-8s | %10s | %14s\n' "$n" "$wall" "$rss"
done
