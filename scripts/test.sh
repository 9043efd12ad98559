#!/usr/bin/env bash
# The whole test suite: installs the Python oracle (gguf-py) the interop
# tests compare against, then runs every Rust test, doc test and UI test.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -r tests/oracles/requirements.txt
cargo test --workspace --all-targets
cargo test --workspace --doc
