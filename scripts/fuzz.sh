#!/usr/bin/env bash
# Coverage-guided fuzzing: runs every target of fuzz/ in turn for SECONDS
# each (default 60), showing libFuzzer's own output, and exits non-zero on
# any crash (its input is kept in fuzz/artifacts/TARGET/).
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET ...]
#
# Installs what it needs: cargo-fuzz, built for the nightly toolchain that
# is installed (libFuzzer's instrumentation needs nightly; this script does
# not download toolchains). Targets are built once, optimised, with debug
# assertions and overflow checks, and with the sanitizer FUZZ_SANITIZER:
#   address (default)  AddressSanitizer, for real campaigns;
#   none               no sanitizer: a build several times faster (CI's
#                      smoke); panics, overflows, hangs and runaway memory
#                      are still caught, out-of-bounds reads in unsafe code
#                      are not.
# Each sanitizer builds in its own directory, so switching does not
# rebuild the other. Seeds come from fuzz/seeds.py (and, for `split`, from
# the builder's split writer: fuzz/src/split_seeds.rs); the corpus
# grows in fuzz/corpus/TARGET (not committed). FUZZ_JOBS=N runs N workers
# each.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(parse reader_agree round_trip edit codecs split lane_searches)
fi
sanitizer="${FUZZ_SANITIZER:-address}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "fuzz.sh: no nightly toolchain installed (rustup toolchain list)" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install --locked cargo-fuzz
fi

build=(--sanitizer "$sanitizer")
target_dir=fuzz/target
if [ "$sanitizer" != address ]; then
    target_dir="fuzz/target/sanitizer-$sanitizer"
    build+=(--target-dir "$target_dir")
fi
host="$(rustup run nightly rustc -vV | sed -n 's/^host: //p')"

python3 fuzz/seeds.py fuzz/corpus
# One build of every target.
cargo +nightly fuzz build "${build[@]}"
GGUF_FUZZ_SPLIT_SEEDS=fuzz/corpus/base:fuzz/corpus/split \
    "$target_dir/$host/release/split"

status=0
for t in "${targets[@]}"; do
    echo "=== fuzz target $t: ${seconds}s (sanitizer: $sanitizer) ==="
    mkdir -p "fuzz/corpus/$t"
    # -rss_limit_mb, -malloc_limit_mb: a target that allocates beyond
    # what its input justifies fails (one allocation above 1 GiB for an
    # input of at most 64 KiB is never justified); -max_len covers the
    # seeds (the sample's metadata).
    if ! cargo +nightly fuzz run "${build[@]}" "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -dict=fuzz/gguf.dict -max_len=65536 \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 \
        -print_final_stats=1 \
        ${FUZZ_JOBS:+-jobs=$FUZZ_JOBS -workers=$FUZZ_JOBS}; then
        echo "fuzz.sh: target $t FAILED (reproducer in fuzz/artifacts/$t/)" >&2
        status=1
    fi
done
exit $status
