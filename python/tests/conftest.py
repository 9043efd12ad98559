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


@pytest.fixture(scope="session")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gguf-py's GGUFWriter output of every value type, tensor type,
    alignment and byte order (tests/oracles/make_fixtures.py)."""
    out = tmp_path_factory.mktemp("fixtures")
    subprocess.run([sys.executable, str(MAKE_FIXTURES), str(out), *FIXTURES], check=True)
    return out


def repo_files() -> list[Path]:
    return [SAMPLE, CORE_TINY]
