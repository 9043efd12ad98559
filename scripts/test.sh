#!/usr/bin/env bash
# The whole test suite: installs the Python oracle (gguf-py) the interop
# tests compare against, then runs every Rust test, doc test and UI test.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -r tests/oracles/requirements.txt
# `gguf report`'s browser test (tests/integration/report_browser.rs) needs
# headless Chromium: Debian's package, installed when apt can; without it
# the test prints that it was skipped.
if ! command -v chromium-headless-shell >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] &&
        { apt-get install -y -qq chromium-headless-shell >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium-headless-shell >/dev/null 2>&1; }; }; then
        echo "installed chromium-headless-shell for the report's browser test"
    else
        echo "note: chromium-headless-shell is not installed (apt-get install chromium-headless-shell): the report's browser test will be skipped"
    fi
fi
# A library user (default features off) compiles none of the CLI's
# dependencies, no network stack, no Hugging Face import (tokenizers,
# safetensors, prost, yaml-rust2) and no thread pool (rayon comes with the
# default `parallel` feature), whether they depend on gguf-kit or gguf-core.
for package in gguf-kit gguf-core; do
    if cargo tree -p "$package" -e normal --no-default-features --prefix none | grep -E '^(clap|clap_complete|indicatif|serde|serde_json|sha1|sha2|xxhash-rust|uuid|object_store|reqwest|tokio|hyper|rayon|signal-hook|tokenizers|safetensors|prost|yaml-rust2) '; then
        echo "error: $package without default features depends on CLI, network, thread-pool or import crates (listed above)" >&2
        exit 1
    fi
done
# A lean core: gguf-core with default features off depends on exactly
# these packages (on Linux, the platform CI runs on): the six it was
# designed on (binrw, half, indexmap, memmap2, tempfile, thiserror), its
# derive crate (gguf-derive), the four small crates README's "What
# gguf-core depends on" justifies (bytemuck, crc32fast, libc, simdutf8),
# and what those bring. A package outside the list fails here by name:
# justify it in README and add it, or do without it. Sorted; computed with
# `cargo tree -p gguf-core --no-default-features -e normal --prefix none`.
core_allowed=(
    array-init binrw binrw_derive bitflags bytemuck bytemuck_derive cfg-if
    crc32fast either equivalent fastrand getrandom gguf-derive half
    hashbrown indexmap libc linux-raw-sys memmap2 once_cell owo-colors
    proc-macro-crate proc-macro2 quote rustix simdutf8 syn tempfile
    thiserror thiserror-impl toml_datetime toml_edit toml_parser
    unicode-ident winnow zerocopy zerocopy-derive
)
core_deps=$(cargo tree -p gguf-core --no-default-features -e normal --prefix none | awk '$1 != "gguf-core" { print $1 }' | sort -u)
core_extra=$(comm -23 <(echo "$core_deps") <(printf '%s\n' "${core_allowed[@]}" | sort -u))
core_gone=$(comm -13 <(echo "$core_deps") <(printf '%s\n' "${core_allowed[@]}" | sort -u))
if [ -n "$core_extra" ]; then
    echo "error: gguf-core without default features depends on packages outside its allowed list (scripts/test.sh, core_allowed): $(echo $core_extra)" >&2
    exit 1
fi
if [ -n "$core_gone" ]; then
    echo "error: gguf-core without default features no longer depends on $(echo $core_gone): take them out of core_allowed in scripts/test.sh" >&2
    exit 1
fi
# The local-only tool (README, "The first build": `--no-default-features
# --features cli`) compiles without warnings and with no HTTP, TLS or
# async-runtime crate; a URL given to it is refused, saying why (a unit
# test of src/bin/gguf/open.rs). Only gguf-core and the tool are checked
# again: the other crates' check results are shared with clippy's run.
if cargo tree -p gguf-kit -e normal --no-default-features --features cli --prefix none | grep -E '^(object_store|reqwest|tokio|hyper|rustls|ring|futures) '; then
    echo "error: the local-only tool (--no-default-features --features cli) depends on network crates (listed above)" >&2
    exit 1
fi
if cargo clippy --version >/dev/null 2>&1; then
    cargo clippy -p gguf-kit --no-default-features --features cli --bin gguf -- -D warnings
else
    cargo check -p gguf-kit --no-default-features --features cli --bin gguf
fi
# The layers: every path dependency between the workspace's crates, and
# every import inside each library crate, runs down the orders written
# once in scripts/check_layers.py (ARCHITECTURE.md draws them). The
# self-test first shows that the check fails on a crate depending upward
# and on a module importing upward.
python3 scripts/check_layers.py --self-test
python3 scripts/check_layers.py
# Every published crate packages (the manifests are valid for crates.io,
# path dependencies carry versions), and each package holds its licences,
# its README and the files its doc examples and build read. Not built
# here (the tests build the same sources); .ci/run's `cargo publish
# --dry-run --workspace` builds each package.
cargo package --workspace --exclude gguf-rs-python --no-verify --allow-dirty --quiet
check_package() {
    local package=$1 listing file
    shift
    listing=$(cargo package -p "$package" --list --allow-dirty --quiet)
    for file in LICENSE-MIT LICENSE-APACHE README.md "$@"; do
        if ! grep -qxF "$file" <<<"$listing"; then
            echo "error: the $package package lacks $file (its Cargo.toml's include list)" >&2
            exit 1
        fi
    done
}
check_package gguf-derive
check_package gguf-core tests/data/tiny.gguf
check_package gguf-tokenizer
check_package gguf-llama tests/data/tiny.gguf
check_package gguf-import src/vocab/pre_hashes.tsv src/vocab/chktxt.txt
check_package gguf-chat
check_package gguf-kit samples/tiny-llama.gguf ARCHITECTURE.md CHANGELOG.md
cargo test --workspace --all-targets
# gguf-minijinja's doc examples are upstream's, written for upstream's default features
# (its unit tests ran above).
cargo test --workspace --doc --exclude gguf-minijinja
# gguf-core without `simd` and `parallel` (portable codecs, one thread):
# its unit tests and the codec oracle vectors, the same bytes as with them.
cargo test -p gguf-core --no-default-features --lib --test codecs --test ggml_quant
# The Python package (python/, README "Python"), as users get it: built
# once as a wheel (`maturin build --release`, maturin and the checking
# tools pinned in python/build-requirements.txt), installed into a fresh
# venv whose PATH has no cargo or rustc and with no package index (its
# dependencies from a wheelhouse downloaded first), then its tests run
# against that installed wheel. The sdist builds a wheel too, and twine
# checks both as PyPI would.
python_dir="$(realpath -m "${CARGO_TARGET_DIR:-target}")/python"
python_tools="$python_dir/tools-venv"
python_dist="$python_dir/dist"
python_wheelhouse="$python_dir/wheelhouse"
python_venv="$python_dir/venv"
python_home="$python_dir/home"
rm -rf "$python_dist" "$python_venv" "$python_home"
mkdir -p "$python_dist/sdist-wheel" "$python_wheelhouse" "$python_home"
[ -x "$python_tools/bin/python" ] || python3 -m venv "$python_tools"
"$python_tools/bin/python" -m pip install --quiet --disable-pip-version-check -c python/build-requirements.txt maturin
# While maturin compiles: the other tools, the fresh venv, and a wheelhouse
# of the wheel's dependencies (pyproject.toml's) and the test tools,
# downloaded while the network is allowed; the install then sees only the
# wheelhouse and the wheel.
python_prepare_log="$python_dir/prepare.log"
(
    set -euo pipefail
    "$python_tools/bin/python" -m pip install --quiet --disable-pip-version-check -r python/build-requirements.txt
    python3 -m venv "$python_venv"
    mapfile -t python_deps < <(python3 -c 'import sys, tomllib; print(*tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"], sep="\n")' python/pyproject.toml)
    "$python_tools/bin/python" -m pip download --quiet --disable-pip-version-check --only-binary :all: \
        --dest "$python_wheelhouse" "${python_deps[@]}" pytest tqdm
) >"$python_prepare_log" 2>&1 &
python_prepare_pid=$!
trap 'kill "$python_prepare_pid" 2>/dev/null || true' EXIT
"$python_tools/bin/maturin" build --quiet --release -m python/Cargo.toml --out "$python_dist"
if ! wait "$python_prepare_pid"; then
    cat "$python_prepare_log"
    echo "error: installing the build tools, making the venv or downloading the wheelhouse failed (above)" >&2
    exit 1
fi
python_wheels=("$python_dist"/gguf_rs-*.whl)
if [ "${#python_wheels[@]}" != 1 ]; then
    echo "error: expected one wheel in $python_dist, got: ${python_wheels[*]}" >&2
    exit 1
fi
python_wheel=${python_wheels[0]}
echo "built $(basename "$python_wheel") ($(stat -c %s "$python_wheel") bytes)"
# The sdist, a wheel built from it (as pip does where no wheel fits, with
# the pinned maturin), and the publishing checks of both (twine check
# --strict, python/tools/check_dist.py) run in the background while the
# wheel is installed and tested; their output follows the tests. The
# sdist's wheel shares the target directory, so cargo rebuilds only what
# the sdist's sources change; GGUF_SDIST_FRESH=1 builds it in an empty
# target directory instead, every crate compiled from the sdist alone
# (about as long as the first wheel's build again).
python_sdist_log="$python_dir/sdist.log"
(
    set -euo pipefail
    "$python_tools/bin/maturin" sdist -m python/Cargo.toml --out "$python_dist"
    python_sdists=("$python_dist"/gguf_rs-*.tar.gz)
    if [ "${#python_sdists[@]}" != 1 ]; then
        echo "error: expected one sdist in $python_dist, got: ${python_sdists[*]}" >&2
        exit 1
    fi
    python_sdist=${python_sdists[0]}
    COLUMNS=200 "$python_tools/bin/twine" --no-color check --strict "$python_wheel" "$python_sdist"
    "$python_tools/bin/python" python/tools/check_dist.py "$python_wheel" "$python_sdist"
    if [ -n "${GGUF_SDIST_FRESH:-}" ]; then
        sdist_target=$(mktemp -d)
    else
        sdist_target="$(realpath -m "${CARGO_TARGET_DIR:-target}")"
    fi
    PATH="$python_tools/bin:$PATH" CARGO_TARGET_DIR="$sdist_target" "$python_tools/bin/python" -m pip wheel --quiet \
        --disable-pip-version-check --no-deps --no-build-isolation --wheel-dir "$python_dist/sdist-wheel" "$python_sdist"
    if [ -n "${GGUF_SDIST_FRESH:-}" ]; then
        rm -rf "$sdist_target"
        echo "built a wheel from $(basename "$python_sdist") in an empty target directory"
    else
        echo "built a wheel from $(basename "$python_sdist") (reusing the target directory's build: set GGUF_SDIST_FRESH=1 to build it from the sdist alone)"
    fi
) >"$python_sdist_log" 2>&1 &
python_sdist_pid=$!
# A failure in the foreground (set -e) does not leave it running.
trap 'kill "$python_sdist_pid" 2>/dev/null || true' EXIT
no_rust=(env -i PATH=/usr/bin:/bin HOME="$python_home")
if "${no_rust[@]}" sh -c 'command -v cargo || command -v rustc || command -v maturin'; then
    echo "error: the install without a Rust toolchain finds one on PATH=/usr/bin:/bin (above)" >&2
    exit 1
fi
(cd "$python_home" && "${no_rust[@]}" "$python_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-index --only-binary :all: --find-links "$python_dist" --find-links "$python_wheelhouse" gguf-rs pytest tqdm)
(cd "$python_home" && "${no_rust[@]}" "$python_venv/bin/python" -c '
import sys, gguf_rs, gguf_rs._native
assert gguf_rs._native.__file__.startswith(sys.prefix), gguf_rs._native.__file__
print(f"installed gguf_rs {gguf_rs.__version__} without a Rust toolchain: {gguf_rs._native.__file__}")')
# The suite against the installed wheel (conftest.py refuses another copy).
GGUF_RS_INSTALLED_IN="$python_venv" "$python_venv/bin/python" -m pytest -q -rs python/tests
if ! wait "$python_sdist_pid"; then
    cat "$python_sdist_log"
    echo "error: the sdist, its wheel or the publishing checks failed (above)" >&2
    exit 1
fi
trap - EXIT
cat "$python_sdist_log"
# The wheel built from the sdist imports and reads the sample too.
"$python_venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
    --target "$python_dir/sdist-wheel-site" "$python_dist"/sdist-wheel/gguf_rs-*.whl
PYTHONPATH="$python_dir/sdist-wheel-site" "$python_venv/bin/python" -c '
import sys, gguf_rs
assert gguf_rs.__file__.startswith(sys.path[1]), (gguf_rs.__file__, sys.path[1])
assert gguf_rs.open(sys.argv[1]).metadata["general.architecture"] == "llama"
print("the wheel built from the sdist imports and reads the sample")' samples/tiny-llama.gguf
rm -rf "$python_dir/sdist-wheel-site"
# The same wheel on other CPythons (the classifiers name 3.10 to 3.13):
# GGUF_WHEEL_PYTHONS lists interpreters, each given a fresh venv with its
# own wheelhouse, the same install without Rust or an index, and a smoke
# test (open the sample, decode a tensor).
for python in ${GGUF_WHEEL_PYTHONS:-}; do
    other="$python_dir/other-python"
    rm -rf "$other"
    "$python" -m venv "$other/venv"
    "$other/venv/bin/python" -m pip download --quiet --disable-pip-version-check --only-binary :all: \
        --dest "$other/wheelhouse" "$python_wheel"
    rm -f "$other"/wheelhouse/gguf_rs-*.whl
    mkdir -p "$other/home"
    (cd "$other/home" && "${no_rust[@]}" "$other/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --no-index --only-binary :all: --find-links "$python_dist" --find-links "$other/wheelhouse" gguf-rs)
    "${no_rust[@]}" "$other/venv/bin/python" -c '
import sys, gguf_rs
model = gguf_rs.open(sys.argv[1])
assert model.metadata["general.architecture"] == "llama"
assert model.tensor("token_embd.weight").to_numpy().shape == (297, 64)
print(f"the wheel on Python {sys.version.split()[0]}: installed, opens the sample, decodes a tensor")' samples/tiny-llama.gguf
    rm -rf "$other"
done
if [ -z "${GGUF_WHEEL_PYTHONS:-}" ]; then
    echo "skipped: the wheel on other CPythons: set GGUF_WHEEL_PYTHONS to interpreters (python3.10 ... python3.13) to run it"
fi
# The opt-in comparisons with llama.cpp's own tools (README, "Tests and
# CI") pass without doing anything when not enabled; say so here, where it
# is seen, rather than only in captured test output.
if [ -z "${GGUF_LLAMA_TOOLS:-}" ]; then
    echo "skipped: the llama.cpp comparisons (llama_tools::*, estimate vs llama.cpp): set GGUF_LLAMA_TOOLS to run them"
elif [ -z "${GGUF_GEMMA_MODEL:-}" ]; then
    echo "skipped: the llama.cpp comparisons on Gemma 3 270M: set GGUF_GEMMA_MODEL to run them"
fi
if [ -z "${GGUF_GEMMA_MODEL:-}" ]; then
    echo "skipped: the Python package's comparisons with gguf-py on Gemma 3 270M: set GGUF_GEMMA_MODEL to run them"
fi
if [ -z "${GGUF_PY_TESTS:-}" ]; then
    echo "skipped: gguf-py's own tests under our reader (python/tests/test_gguf_py_suite.py): set GGUF_PY_TESTS to their directory to run them"
fi
