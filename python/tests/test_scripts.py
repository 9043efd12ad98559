"""gguf-py's own scripts run under gguf-py's reader and, after
gguf_rs.install(), under ours: the same output and the same file bytes.

The differences are the documented ones, and only where a file has them:
nested arrays (gguf-py flattens them, ours come back nested) and Q8_1's size
(gguf-py's table says 40 bytes per block, ggml's block is 36)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GEMMA, SAMPLE

RUNNER = Path(__file__).with_name("run_script.py")
TRACE = "gguf_rs.GGUFReader opened a file"
WRITER_TRACE = "gguf_rs.GGUFWriter made"
DUMP_MODES = [[], ["--json"], ["--json", "--json-array"], ["--markdown"], ["--data-offset"], ["--data-alignment"], ["--no-tensors"]]


def run(which: str, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    # gguf_convert_endian asks for a typed YES before it writes.
    done = subprocess.run(
        [sys.executable, str(RUNNER), which, script, *args],
        capture_output=True,
        text=True,
        check=False,
        input="YES\n",
    )
    assert done.returncode == 0, f"{which} {script} {args}: {done.stderr[-2000:]}"
    assert (TRACE in done.stderr) == (which == "ours"), f"{which} {script}: reader used"
    return done


def without_known_differences(mode: list[str], text: str) -> object:
    if "--json" in mode:
        doc = json.loads(text)
        doc["metadata"] = {k: v for k, v in doc["metadata"].items() if "nested" not in k}
        return doc
    # Bits per weight count Q8_1's bytes too.
    known = ("nested", "Q8_1", "Bits per Weight", "Total BPW")
    return [line for line in text.splitlines() if not any(k in line for k in known)]


def dump_files(fixture_dir: Path) -> list[tuple[Path, bool]]:
    """(file, whether it has the known differences)."""
    files = [(SAMPLE, False), (fixture_dir / "align64.gguf", False)]
    files += [(fixture_dir / "all_types.gguf", True), (fixture_dir / "big_endian.gguf", True)]
    if GEMMA:
        files.append((Path(GEMMA), False))
    return files


@pytest.mark.parametrize("mode", DUMP_MODES, ids=lambda m: " ".join(m) or "default")
def test_gguf_dump(fixture_dir: Path, mode: list[str]) -> None:
    for path, differs in dump_files(fixture_dir):
        theirs = run("theirs", "gguf_dump", str(path), *mode).stdout
        ours = run("ours", "gguf_dump", str(path), *mode).stdout
        if differs:
            assert without_known_differences(mode, ours) == without_known_differences(mode, theirs), path
        else:
            assert ours == theirs, path


def test_gguf_hash(fixture_dir: Path) -> None:
    for path in (SAMPLE, fixture_dir / "align64.gguf"):
        assert run("ours", "gguf_hash", str(path)).stdout == run("theirs", "gguf_hash", str(path)).stdout


def copies(tmp_path: Path, source: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "theirs.gguf", tmp_path / "ours.gguf"
    shutil.copyfile(source, a)
    shutil.copyfile(source, b)
    return a, b


def test_gguf_set_metadata(tmp_path: Path) -> None:
    a, b = copies(tmp_path, SAMPLE)
    run("theirs", "gguf_set_metadata", str(a), "llama.context_length", "777", "--force")
    run("ours", "gguf_set_metadata", str(b), "llama.context_length", "777", "--force")
    assert a.read_bytes() == b.read_bytes() != SAMPLE.read_bytes()


@pytest.mark.parametrize("order", ["big", "little"])
def test_gguf_convert_endian(tmp_path: Path, order: str) -> None:
    source = SAMPLE
    if order == "little":
        # The sample made big-endian, to convert back.
        big = tmp_path / "big.gguf"
        shutil.copyfile(source, big)
        run("theirs", "gguf_convert_endian", str(big), "big")
        source = big
    a, b = copies(tmp_path, source)
    run("theirs", "gguf_convert_endian", str(a), order)
    run("ours", "gguf_convert_endian", str(b), order)
    assert a.read_bytes() == b.read_bytes() != source.read_bytes()


NEW_METADATA_ARGS = [
    ["--general-description", "copied", "--remove-metadata", "general.name", "--force"],
    ["--chat-template", "{{ messages }}", "--force"],
    ["--general-name", "renamed", "--pre-tokenizer", "llama3", "--force"],
]


def log(stderr: str, output: Path) -> list[str]:
    """A script's log without our traces and its progress bars (timings),
    with its output's name."""
    return [line.replace(str(output), "OUT") for line in stderr.splitlines() if "gguf_rs." not in line and "%|" not in line]


@pytest.mark.parametrize("args", NEW_METADATA_ARGS, ids=lambda a: a[0])
def test_gguf_new_metadata(tmp_path: Path, fixture_dir: Path, args: list[str]) -> None:
    # gguf_new_metadata copies a file through GGUFWriter (add_tensor_info,
    # write_tensor_data): under install() both reader and writer are ours.
    for source in (SAMPLE, fixture_dir / "align64.gguf", fixture_dir / "align1.gguf"):
        a, b = tmp_path / "theirs.gguf", tmp_path / "ours.gguf"
        theirs = run("theirs", "gguf_new_metadata", str(source), str(a), *args)
        ours = run("ours", "gguf_new_metadata", str(source), str(b), *args)
        assert WRITER_TRACE in ours.stderr and WRITER_TRACE not in theirs.stderr
        assert a.read_bytes() == b.read_bytes(), source
        assert ours.stdout == theirs.stdout
        assert log(ours.stderr, b) == log(theirs.stderr, a), source


def test_gguf_new_metadata_big_endian(tmp_path: Path, fixture_dir: Path) -> None:
    # The big-endian fixture has nested arrays, which gguf-py's reader
    # flattens (a known reader difference), so a copy keeps them nested
    # under ours; a file of its tensors and flat metadata is compared.
    flat = tmp_path / "flat_big.gguf"
    run("theirs", "gguf_new_metadata", str(SAMPLE), str(flat), "--force")
    big = tmp_path / "big.gguf"
    shutil.copyfile(flat, big)
    run("theirs", "gguf_convert_endian", str(big), "big")
    a, b = tmp_path / "theirs.gguf", tmp_path / "ours.gguf"
    run("theirs", "gguf_new_metadata", str(big), str(a), "--general-name", "big", "--force")
    run("ours", "gguf_new_metadata", str(big), str(b), "--general-name", "big", "--force")
    assert a.read_bytes() == b.read_bytes() != big.read_bytes()


def test_install_is_reversible() -> None:
    import gguf
    import gguf.gguf_reader
    import gguf.quants

    import gguf_rs

    theirs = (gguf.GGUFReader, gguf.gguf_reader.GGUFReader, gguf.dequantize, gguf.quants.dequantize)
    gguf_rs.install()
    gguf_rs.install()  # twice is harmless
    try:
        assert gguf_rs.installed()
        assert gguf.GGUFReader is gguf_rs.GGUFReader
        assert gguf.gguf_reader.GGUFReader is gguf_rs.GGUFReader
        assert gguf.quants.dequantize is gguf_rs.quants.dequantize
        assert gguf.dequantize is gguf_rs.quants.dequantize
    finally:
        gguf_rs.uninstall()
    assert not gguf_rs.installed()
    assert (gguf.GGUFReader, gguf.gguf_reader.GGUFReader, gguf.dequantize, gguf.quants.dequantize) == theirs
