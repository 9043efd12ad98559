#!/usr/bin/env bash
# The whole test suite: installs the Python oracle (gguf-py) the interop
# tests compare against, then runs every Rust test, doc test and UI test.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -r tests/oracles/requirements.txt
# A library user (default features off) compiles none of the CLI's dependencies.
if cargo tree -e normal --no-default-features --prefix none | grep -E '^(clap|clap_complete|indicatif|serde_json) '; then
    echo "error: the library without default features depends on CLI crates (listed above)" >&2
    exit 1
fi
cargo test --workspace --all-targets
cargo test --workspace --doc
