"""``gguf_rs.import_hf``, ``gguf_rs.quantize`` and ``gguf_rs.imatrix``:
the bytes ``gguf import`` and ``gguf quantize`` give, which the Rust suite
checks against llama.cpp's converter and llama-quantize. Here the same
references: the converter's files committed in ``tests/data/import`` and
the sha256 llama-quantize gave on them (``llama-quantize.sha256``)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gguf_rs

from conftest import REPO

IMPORT = REPO / "tests" / "data" / "import"


def pre_tokenizers() -> dict[str, str]:
    """Each fixture's BPE pre-tokenizer, from the Rust suite's table
    (tests/integration/import_oracle.rs's FIXTURES), the one place it is
    written; a fixture without one is SentencePiece or has a hash the
    converter knows."""
    text = (REPO / "tests" / "integration" / "import_oracle.rs").read_text()
    found = dict(re.findall(r'^\s*\("([^"]+)", Some\("([^"]+)"\), (?:true|false)\),', text, re.M))
    assert found, "no FIXTURES rows found in import_oracle.rs"
    return found


PRE_TOKENIZER = pre_tokenizers()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def converter_outputs() -> list[tuple[str, str]]:
    """(name, type) of every file the converter wrote from a fixture."""
    out = []
    for f in sorted(IMPORT.glob("*.gguf")):
        name, ty = f.name[: -len(".gguf")].rsplit(".", 1)
        out.append((name, ty))
    return out


def import_args(name: str) -> tuple[Path, dict]:
    """The checkpoint directory and keywords that give ``name``'s file."""
    if name.startswith("lora-"):
        base = name[len("lora-") :]
        return IMPORT / name, {"lora_base": IMPORT / base, "pre_tokenizer": PRE_TOKENIZER.get(base)}
    if name.startswith("mmproj-"):
        return IMPORT / name[len("mmproj-") :], {"mmproj": True}
    return IMPORT / name, {"pre_tokenizer": PRE_TOKENIZER.get(name)}


def recorded() -> list[tuple[str, str, bool, str]]:
    """(fixture, preset, with an importance matrix, sha256) llama-quantize gave."""
    rows = []
    for line in (IMPORT / "llama-quantize.sha256").read_text().splitlines():
        m = re.fullmatch(r"(\S+) (\S+)( imatrix)? = (\S+)", line)
        if m and m.group(4) != "refused":
            rows.append((m.group(1), m.group(2), bool(m.group(3)), m.group(4)))
    return rows


def no_temp_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize(("name", "ty"), converter_outputs(), ids=lambda v: str(v))
def test_import_hf_writes_the_converters_bytes(tmp_path: Path, name: str, ty: str) -> None:
    directory, kwargs = import_args(name)
    out = tmp_path / "out.gguf"
    report = gguf_rs.import_hf(directory, out, type=ty, **kwargs)
    assert out.read_bytes() == (IMPORT / f"{name}.{ty}.gguf").read_bytes()
    assert report["files"] == [str(out)]
    assert report["bytes"] == out.stat().st_size
    assert report["tensors"] > 0 and report["parameters"] > 0


@pytest.mark.parametrize(("name", "preset", "with_imatrix", "digest"), recorded(), ids=lambda v: str(v))
def test_import_hf_and_quantize_give_llama_quantizes_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, preset: str, with_imatrix: bool, digest: str
) -> None:
    # What the Rust suite runs (import_oracle.rs): the matrix path as given
    # from the repository root is recorded in the file.
    monkeypatch.chdir(REPO)
    matrix = f"tests/data/import/imatrix/{name}.gguf" if with_imatrix else None
    imported = tmp_path / "imported.gguf"
    gguf_rs.import_hf(IMPORT / name, imported, type=preset, imatrix=matrix, pre_tokenizer=PRE_TOKENIZER.get(name))
    assert sha256(imported) == digest
    quantized = tmp_path / "quantized.gguf"
    report = gguf_rs.quantize(f"tests/data/import/{name}.f16.gguf", quantized, preset, imatrix=matrix)
    assert sha256(quantized) == digest
    assert report["files"] == [str(quantized)] and report["file_bytes"] == quantized.stat().st_size


def test_dry_run_returns_the_plan_the_run_follows_and_writes_nothing(tmp_path: Path) -> None:
    source = IMPORT / "qwen3-moe.f16.gguf"
    out = tmp_path / "q.gguf"
    plan = gguf_rs.quantize(source, out, "q4_k_m", dry_run=True)
    assert not out.exists() and plan["files"] == []
    done = gguf_rs.quantize(source, out, "Q4_K_M")
    assert [(t["name"], t["type"]) for t in plan["tensors"]] == [(t["name"], t["type"]) for t in done["tensors"]]
    assert plan["output_bytes"] == done["output_bytes"]
    types = {t["type"] for t in done["tensors"]}
    assert "Q4_K" in types and "F32" in types
    model = gguf_rs.open(out)
    first = plan["tensors"][0]
    assert list(model.tensor(first["name"]).shape) == first["shape"]


def test_quantize_flags_are_the_clis(tmp_path: Path) -> None:
    source = IMPORT / "llama-bpe.f16.gguf"
    out = tmp_path / "q.gguf"
    report = gguf_rs.quantize(
        source,
        out,
        "Q4_K_M",
        tensor_type={"attn_q": "q8_0"},
        output_tensor_type="f16",
        override_kv={"general.name": "renamed", "llama.context_length": 64},
        prune_layers=[1],
    )
    by_name = {t["name"]: t["type"] for t in report["tensors"]}
    assert by_name["blk.0.attn_q.weight"] == "Q8_0"
    assert by_name["output.weight"] == "F16"
    assert not any(n.startswith("blk.1.") for n in by_name)
    meta = gguf_rs.open(out).metadata
    assert meta["general.name"] == "renamed" and meta["llama.context_length"] == 64
    assert meta["llama.block_count"] == 1


def test_split_imports_write_shards_the_converter_names(tmp_path: Path) -> None:
    out = tmp_path / "model.gguf"
    report = gguf_rs.import_hf(IMPORT / "llama-bpe", out, pre_tokenizer="llama-bpe", split_max_tensors=10)
    names = [Path(f).name for f in report["files"]]
    assert names == ["model-00001-of-00003.gguf", "model-00002-of-00003.gguf", "model-00003-of-00003.gguf"]
    whole = gguf_rs.open(report["files"][1])
    assert len(whole.tensors) == 22
    sized = gguf_rs.import_hf(IMPORT / "llama-bpe", tmp_path / "sized.gguf", pre_tokenizer="llama-bpe", split_max_size="100K")
    assert len(sized["files"]) > 1


def test_progress_reaches_a_callable_and_ends_at_the_total(tmp_path: Path) -> None:
    # A float type counts the bytes written ("convert"); a preset is one
    # pass, the conversion streaming into the quantizer ("quantize", work).
    for ty, stage in (("f16", "convert"), ("q4_k_m", "quantize")):
        seen: list[tuple[str, int, int]] = []
        gguf_rs.import_hf(
            IMPORT / "qwen3",
            tmp_path / f"{ty}.gguf",
            type=ty,
            pre_tokenizer="qwen2",
            progress=lambda s, done, total: seen.append((s, done, total)),
        )
        assert seen and {s for s, _, _ in seen} == {stage}, seen
        assert seen[-1][1] == seen[-1][2] > 0
    seen = []
    gguf_rs.quantize(IMPORT / "qwen3.f16.gguf", tmp_path / "q.gguf", "Q4_K_M", progress=lambda *a: seen.append(a))
    assert seen and seen[-1][0] == "quantize" and seen[-1][1] == seen[-1][2] > 0


def test_a_progress_callback_that_raises_stops_the_call_leaving_nothing(tmp_path: Path) -> None:
    class Stop(Exception):
        pass

    def stop(stage: str, done: int, total: int) -> None:
        raise Stop

    out = tmp_path / "q.gguf"
    with pytest.raises(Stop):
        gguf_rs.quantize(IMPORT / "qwen3-moe.f16.gguf", out, "Q4_K_M", progress=stop)
    with pytest.raises(Stop):
        gguf_rs.import_hf(IMPORT / "qwen3-moe", out, pre_tokenizer="qwen2", progress=stop)
    assert not out.exists()
    assert no_temp_files(tmp_path) == []


def test_ctrl_c_stops_an_import_with_keyboard_interrupt_and_no_temporary_file(tmp_path: Path) -> None:
    # A SIGINT delivered while the library works (from the first progress
    # report): Python's handler raises KeyboardInterrupt at the next one.
    script = textwrap.dedent(
        f"""
        import os, signal, sys, gguf_rs
        def interrupt(stage, done, total):
            os.kill(os.getpid(), signal.SIGINT)
        try:
            gguf_rs.import_hf({str(IMPORT / "qwen3-moe")!r}, {str(tmp_path / "q.gguf")!r},
                              type="q4_k_m", pre_tokenizer="qwen2", progress=interrupt)
        except KeyboardInterrupt:
            sys.exit(130)
        sys.exit(0)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 130, run.stderr
    assert list(tmp_path.iterdir()) == []


def test_errors_are_the_clis(tmp_path: Path) -> None:
    with pytest.raises(gguf_rs.GGUFError, match="Q9_X"):
        gguf_rs.quantize(IMPORT / "llama-bpe.f16.gguf", tmp_path / "q.gguf", "Q9_X")
    with pytest.raises(gguf_rs.GGUFError, match="q9"):
        gguf_rs.import_hf(IMPORT / "llama-bpe", tmp_path / "q.gguf", type="q9")
    with pytest.raises(ValueError, match="preset"):
        gguf_rs.import_hf(IMPORT / "llama-bpe", tmp_path / "q.gguf", imatrix=IMPORT / "imatrix" / "llama-bpe.gguf")
    with pytest.raises(ValueError, match="dry_run"):
        gguf_rs.quantize(IMPORT / "llama-bpe.f16.gguf", None, "Q4_K_M")
    with pytest.raises(FileNotFoundError):
        gguf_rs.quantize(tmp_path / "missing.gguf", tmp_path / "q.gguf", "Q4_K_M")
    with pytest.raises(gguf_rs.GGUFError, match="config.json"):
        gguf_rs.import_hf(tmp_path, tmp_path / "q.gguf")
    # The output may not be what is read.
    matrix = tmp_path / "m.gguf"
    matrix.write_bytes((IMPORT / "imatrix" / "llama-bpe.gguf").read_bytes())
    with pytest.raises(gguf_rs.GGUFError):
        gguf_rs.quantize(IMPORT / "llama-bpe.f16.gguf", matrix, "Q4_K_M", imatrix=matrix)
    assert matrix.read_bytes() == (IMPORT / "imatrix" / "llama-bpe.gguf").read_bytes()
    # An unknown BPE hash is refused unless the pre-tokenizer is named.
    with pytest.raises(gguf_rs.GGUFError, match="pre"):
        gguf_rs.import_hf(IMPORT / "qwen3", tmp_path / "q.gguf")
    assert not (tmp_path / "q.gguf").exists()


def test_imatrix_reads_converts_and_feeds_quantize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    path = "tests/data/import/imatrix/llama-bpe.gguf"
    m = gguf_rs.imatrix(path)
    assert m.format == "gguf" and len(m) == len(m.names()) > 0 and m.path == path
    sums, counts = m.entry(m.names()[0])
    assert sums.dtype == np.float32 and counts.dtype == np.float64 and len(counts) >= 1
    assert np.allclose(m.weights(m.names()[0]), sums / counts[0])
    with pytest.raises(KeyError):
        m.entry("no.such.weight")
    with pytest.warns(UserWarning, match="chunk size"):
        dat = m.convert("dat")
    assert dat.format == "dat" and dat.names() == m.names()
    dat.write(tmp_path / "m.dat")
    back = gguf_rs.imatrix(tmp_path / "m.dat").convert("gguf", chunk_size=m.chunk_size)
    assert back.names() == m.names() and back.chunk_size == m.chunk_size
    # An Imatrix object gives the same bytes as its path.
    digest = next(d for n, p, i, d in recorded() if (n, p, i) == ("llama-bpe", "Q4_K_M", True))
    out = tmp_path / "q.gguf"
    gguf_rs.quantize("tests/data/import/llama-bpe.f16.gguf", out, "Q4_K_M", imatrix=m)
    assert sha256(out) == digest
    with pytest.raises(gguf_rs.GGUFError):
        gguf_rs.imatrix(IMPORT / "llama-bpe" / "config.json")


def test_architectures_are_import_lists() -> None:
    archs = {a["hf_name"]: a for a in gguf_rs.architectures()}
    assert archs["Qwen3MoeForCausalLM"]["gguf"] == "qwen3moe" and archs["Qwen3MoeForCausalLM"]["experts"]
    assert archs["Gemma3ForConditionalGeneration"]["mmproj"]
    assert not archs["LlamaForCausalLM"]["experts"]
