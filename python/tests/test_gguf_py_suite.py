"""gguf-py's own tests (llama.cpp's gguf-py/tests/) run twice, under
gguf-py 0.19's reader and under ours (swapped in by gguf_py_conftest.py as
their conftest.py): every test has the same outcome, or passes under ours
where it fails under gguf-py (we are stricter).

Opt-in, like the Rust suite's llama.cpp comparisons: GGUF_PY_TESTS names the
directory (in llama-cpp-python 0.3.36's sdist:
vendor/llama.cpp/gguf-py/tests). Their files are copied into a temporary
directory first, so their `sys.path` lines cannot pick up the gguf-py beside
them instead of the installed 0.19.

Which of their tests apply (python/README.md, "gguf-py's own tests"):
test_gguf_reader_validation.py opens files with `GGUFReader`;
test_metadata.py tests `gguf.Metadata`, which reads no file, so it must
simply pass both ways; test_quants.py has no pytest tests: it is a script
comparing gguf.quants with a libggml build through ctypes, run here as a
script under both readers' `dequantize` when GGUF_LLAMA_TOOLS also names
a directory holding libggml-base.so (as for the Rust suite's ggml tests).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
GGUF_PY_TESTS = os.environ.get("GGUF_PY_TESTS")

# Outcomes under gguf-py 0.19 that are known and why (checked below, so a
# change in either reader shows up).
KNOWN_UNDER_GGUF_PY = {
    # Written for a gguf-py newer than 0.19: 0.19 raises numpy's "When
    # changing to a larger dtype..." ValueError, and we raise GGUFError
    # ("1000000 dimensions at offset 42, at most 4 allowed"); both are
    # ValueErrors, neither says "exceeds GGML_MAX_DIMS", so both fail.
    "test_gguf_reader_validation.test_n_dims_upper_bound": "failed",
}


def run_suite(tests: Path, reader: str, tmp: Path) -> tuple[dict[str, str], str]:
    """Runs pytest on `tests` with the given reader; returns each test's
    outcome (passed, failed, error, skipped) and pytest's output."""
    report = tmp / f"{reader}.xml"
    env = dict(os.environ, GGUF_RS_READER=reader, GGUF_RS_OPENED=str(tmp / "opened"), NO_LOCAL_GGUF="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", str(tests)],
        cwd=tests,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[name] = {"failure": "failed", "error": "error", "skipped": "skipped"}.get(
            kinds[0] if kinds else "", "passed"
        )
    return outcomes, proc.stdout + proc.stderr


@pytest.mark.skipif(not GGUF_PY_TESTS, reason="set GGUF_PY_TESTS to llama.cpp's gguf-py/tests to run gguf-py's own tests")
def test_gguf_py_own_tests_have_the_same_outcome_under_our_reader(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    shutil.copytree(Path(GGUF_PY_TESTS), tests, ignore=shutil.ignore_patterns("__pycache__", "conftest.py"))
    # Their __init__.py makes the folder a package named `tests`; pytest
    # then imports test modules as tests.NAME: keep it, the names are theirs.
    shutil.copy(HERE / "gguf_py_conftest.py", tests / "conftest.py")

    theirs, theirs_out = run_suite(tests, "gguf-py", tmp_path)
    ours, ours_out = run_suite(tests, "ours", tmp_path)
    opened = int((tmp_path / "opened").read_text())

    table = "\n".join(f"  {name}: gguf-py {theirs.get(name)}, ours {ours.get(name)}" for name in sorted(theirs))
    print(f"gguf-py's own tests ({len(theirs)}), our reader opened {opened} files:\n{table}")
    assert theirs, f"no tests collected:\n{theirs_out}"
    assert set(ours) == set(theirs), f"different tests collected:\n{ours_out}"
    assert opened > 0, "our reader was not used"
    for name, outcome in theirs.items():
        same = ours[name] == outcome
        stricter = outcome == "failed" and ours[name] == "passed"
        assert same or stricter, f"{name}: gguf-py {outcome}, ours {ours[name]}\n{ours_out}"
    for suffix, outcome in KNOWN_UNDER_GGUF_PY.items():
        found = [name for name in theirs if name.endswith(suffix)]
        assert found and all(theirs[n] == outcome for n in found), f"{suffix}: expected {outcome} under gguf-py\n{theirs_out}"
    # Ours fails that one on the wording alone: the file is refused with
    # the library's message.
    if any(n.endswith("test_n_dims_upper_bound") for n in ours):
        assert "1000000 dimensions at offset 42, at most 4 allowed" in ours_out, ours_out


def libggml_base() -> str | None:
    """libggml-base.so under GGUF_LLAMA_TOOLS, where the Rust suite's ggml
    tests look: lib/, the directory itself, or a venv's llama_cpp package."""
    tools = os.environ.get("GGUF_LLAMA_TOOLS")
    if not tools:
        return None
    candidates = [os.path.join(tools, "lib", "libggml-base.so"), os.path.join(tools, "libggml-base.so")]
    candidates += sorted(glob.glob(os.path.join(tools, "venv", "lib", "python*", "site-packages", "llama_cpp", "lib", "libggml-base.so")))
    return next((c for c in candidates if os.path.isfile(c)), None)


# Runs gguf-py's test_quants.py as __main__, after gguf_rs.install() for
# `ours` (then says so, having checked that gguf.quants.dequantize is ours).
QUANTS_RUNNER = """
import runpy, sys
which, script, *args = sys.argv[1:]
if which == "ours":
    import gguf, gguf.quants, gguf_rs
    gguf_rs.install()
    assert gguf.quants.dequantize is gguf_rs.quants.dequantize is gguf.dequantize
    print("gguf_rs.install() done", flush=True)
sys.argv = [script, *args]
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.skipif(
    not (GGUF_PY_TESTS and libggml_base()),
    reason="set GGUF_PY_TESTS and GGUF_LLAMA_TOOLS (a directory with libggml-base.so) to run gguf-py's test_quants.py",
)
def test_gguf_py_quants_script_gives_the_same_verdicts_under_our_dequantize(tmp_path: Path) -> None:
    """Their script quantizes random data with ggml and compares each
    (de)quantization with ggml's, bit for bit: under ours, every verdict is
    the one gguf-py's own functions get (all "matches exactly" here), and
    the quantizers only ours has match ggml's too."""
    script = tmp_path / "test_quants.py"
    shutil.copy(Path(GGUF_PY_TESTS) / "test_quants.py", script)
    env = dict(os.environ, NO_LOCAL_GGUF="1")
    verdicts = {}
    for which in ("gguf-py", "ours"):
        proc = subprocess.run(
            [sys.executable, "-c", QUANTS_RUNNER, which, str(script), "--libggml", libggml_base()],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert (which == "ours") == ("gguf_rs.install() done" in proc.stdout)
        verdicts[which] = [line for line in proc.stderr.splitlines() if line.startswith(("INFO:", "ERROR:"))]
    print("\n".join(verdicts["ours"]))
    # install() swaps quantize too, and ours quantizes types gguf-py's
    # cannot (K-quants, IQ types): the script then also tests those, so
    # ours gives every verdict gguf-py's gets, in order, plus more, each of
    # which must be a match.
    theirs = iter(verdicts["gguf-py"])
    expected = next(theirs, None)
    extra = []
    for verdict in verdicts["ours"]:
        if verdict == expected:
            expected = next(theirs, None)
        else:
            extra.append(verdict)
    assert expected is None, f"a verdict of gguf-py's is missing or different under ours: {expected}"
    assert all("matches exactly" in v or v.startswith("INFO:test-quants:Testing") for v in extra), extra
    quantized = [v for v in extra if "Quantization to" in v]
    print(f"quantizations only ours can test: {len(quantized)}, all matching ggml's bytes")
    dequantized = [v for v in verdicts["ours"] if "Dequantization from" in v]
    assert len(dequantized) > 20 and all("matches exactly" in v for v in dequantized), verdicts["ours"]
