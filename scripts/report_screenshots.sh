#!/usr/bin/env bash
# Regenerates the README's pictures of `gguf report`: one PNG per section
# in docs/report/, from headless Chromium (chromium-headless-shell).
#
#     [GGUF=path/to/gguf] scripts/report_screenshots.sh [MODEL]
#
# MODEL defaults to $GGUF_GEMMA_MODEL (Gemma 3 270M, Q4_K_M: a mixed
# preset shows in the bits-per-layer chart), else the bundled sample.
# Each PNG must stay under 150 KB (the script fails otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-${GGUF_GEMMA_MODEL:-samples/tiny-llama.gguf}}
out=docs/report
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# GGUF names a gguf binary to use instead of building one (the page is
# the same from any build).
if [ -z "${GGUF:-}" ]; then
    cargo build --quiet --release --bin gguf
    GGUF=${CARGO_TARGET_DIR:-target}/release/gguf
fi
gguf=$(realpath "$GGUF")
# From the model's directory, so the page names the file, not a local path.
(cd "$(dirname "$model")" && "$gguf" report "$(basename "$model")" -o "$work/page.html")
rm -f "$out"/*.png
python3 tests/browser/report_page.py --screenshots "$out" "$work/page.html" >"$work/seen.json"
if grep -q '"skipped"' "$work/seen.json"; then
    echo "error: chromium-headless-shell is needed (apt-get install chromium-headless-shell)" >&2
    exit 1
fi
status=0
for png in "$out"/*.png; do
    size=$(stat -c %s "$png")
    echo "$png: $size bytes"
    if [ "$size" -gt 153600 ]; then
        echo "error: $png is over 150 KB" >&2
        status=1
    fi
done
exit $status
