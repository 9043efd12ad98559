#!/usr/bin/env bash
# Benchmark: `gguf tokenize` against llama.cpp's tokenizer through llama-cpp-python (`vocab_only`), in the same
# run: a 262K-token model (Gemma 3 270M) loaded and one short prompt encoded as whole processes, and encode
# throughput on 10 MB of mixed text; the ids must be the same. See benches/tokenize_vs_llama.py for the method.
#
# usage: benches/tokenize_vs_llama.sh [MODEL] [RUNS] [MB]
#   MODEL: default GGUF_GEMMA_MODEL or /work/models/gemma-3-270m-q4_k_m.gguf
#   llama-cpp-python: GGUF_LLAMA_PYTHON, else GGUF_LLAMA_TOOLS/venv/bin/python (as
#   /work/shared/oracles/build-llama-tools.sh makes it).
#   Our binary: release `gguf`, built here.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODEL=${1:-${GGUF_GEMMA_MODEL:-/work/models/gemma-3-270m-q4_k_m.gguf}}
RUNS=${2:-20}
MB=${3:-10}
PY=${GGUF_LLAMA_PYTHON:-${GGUF_LLAMA_TOOLS:+$GGUF_LLAMA_TOOLS/venv/bin/python}}
if [ -z "$PY" ] || ! "$PY" -c "import llama_cpp" 2>/dev/null; then
  echo "set GGUF_LLAMA_PYTHON (or GGUF_LLAMA_TOOLS) to a python with llama-cpp-python" >&2
  exit 2
fi

cargo build --release --bin gguf --manifest-path "$ROOT/Cargo.toml" >&2
OURS="${CARGO_TARGET_DIR:-$ROOT/target}/release/gguf"

echo "model: $MODEL; llama-cpp-python $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')"
"$PY" "$ROOT/benches/tokenize_vs_llama.py" "$OURS" "$MODEL" --python "$PY" --runs "$RUNS" --mb "$MB"
