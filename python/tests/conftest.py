"""Shared fixtures: the repository's files and gguf-py-made fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "tiny-llama.gguf"
CORE_TINY = REPO / "gguf-core" / "tests" / "data" / "tiny.gguf"
MAKE_FIXTURES = REPO / "tests" / "oracles" / "make_fixtures.py"
# Gemma 3 270M (Q4_K_M): opt-in like the Rust suite's llama.cpp comparisons,
# since gguf-py takes seconds to open it.
GEMMA = os.environ.get("GGUF_GEMMA_MODEL")

FIXTURES = ["all_types", "big_endian", "align64", "align1"]

# scripts/test.sh runs the suite against the wheel it installed into a venv
# and names the venv here: the suite then refuses any other copy of the
# package (python/gguf_rs, an older install).
INSTALLED_IN = os.environ.get("GGUF_RS_INSTALLED_IN")


def pytest_report_header(config: pytest.Config) -> str:
    import gguf_rs

    return f"gguf_rs {gguf_rs.__version__} from {Path(gguf_rs._native.__file__).parent}"


def pytest_sessionstart(session: pytest.Session) -> None:
    import gguf_rs

    native = Path(gguf_rs._native.__file__).resolve()
    if INSTALLED_IN and not native.is_relative_to(Path(INSTALLED_IN).resolve()):
        raise pytest.UsageError(f"gguf_rs is imported from {native}, not from the wheel installed in {INSTALLED_IN}")


@pytest.fixture(scope="session")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gguf-py's GGUFWriter output of every value type, tensor type,
    alignment and byte order (tests/oracles/make_fixtures.py)."""
    out = tmp_path_factory.mktemp("fixtures")
    subprocess.run([sys.executable, str(MAKE_FIXTURES), str(out), *FIXTURES], check=True)
    return out


def repo_files() -> list[Path]:
    return [SAMPLE, CORE_TINY]
