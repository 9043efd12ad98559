"""What a file that cannot be read raises, on every path: ``gguf_rs.open``
(the library's ``Model::open``), our ``GGUFReader`` and gguf-py 0.19's
``GGUFReader`` raise the same class for the same problem (an ``OSError``
subclass when the file cannot be opened, a ``ValueError`` when its bytes are
wrong), with the path in the message. Also ``__version__`` and the tensor
types of ``gguf_rs.open``."""

from __future__ import annotations

import errno
import importlib.metadata
import os
import re
import select
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import gguf
import numpy as np
import pytest
from conftest import REPO, SAMPLE
from gguf.constants import GGMLQuantizationType

import gguf_rs

# Every way to open a file: ours twice (the library's model door and the
# drop-in reader), and gguf-py's reader, the oracle.
OPENERS: dict[str, Callable[[object], object]] = {
    "gguf_rs.open": gguf_rs.open,
    "gguf_rs.GGUFReader": gguf_rs.GGUFReader,
    "gguf.GGUFReader": gguf.GGUFReader,
}


def raised(opener: Callable[[object], object], path: object) -> BaseException:
    with pytest.raises(Exception) as info:
        opener(path)
    return info.value


@pytest.mark.parametrize("name", list(OPENERS))
@pytest.mark.parametrize("as_path", [False, True])
def test_a_missing_file_is_file_not_found(tmp_path: Path, name: str, as_path: bool) -> None:
    missing = tmp_path / "no-such-model.gguf"
    err = raised(OPENERS[name], missing if as_path else str(missing))
    assert type(err) is FileNotFoundError, (name, type(err), err)
    assert err.errno == errno.ENOENT
    assert err.filename == str(missing)
    assert str(missing) in str(err)


@pytest.mark.parametrize("name", list(OPENERS))
def test_a_directory_is_a_directory_error(tmp_path: Path, name: str) -> None:
    err = raised(OPENERS[name], str(tmp_path))
    assert type(err) is IsADirectoryError, (name, type(err), err)
    assert err.errno == errno.EISDIR
    assert str(tmp_path) in str(err)


@pytest.fixture
def unreadable() -> Iterator[Path]:
    """A copy of the sample that its reader may not open (mode 000, in a
    directory anyone may enter)."""
    folder = Path(tempfile.mkdtemp(prefix="gguf-rs-perm-"))
    folder.chmod(0o755)
    path = folder / "locked.gguf"
    shutil.copyfile(SAMPLE, path)
    path.chmod(0)
    yield path
    shutil.rmtree(folder)


def classes_raised_without_root(path: Path) -> dict[str, str]:
    """Each opener's exception class on `path`, opened by a user who is not
    root: this process when it is not, else a forked child that gives up
    root first (root reads any file whatever its mode)."""
    if os.geteuid() != 0:
        return {name: type(raised(opener, str(path))).__name__ for name, opener in OPENERS.items()}
    # Each opener once as root first: the child could not import what
    # they import lazily (this Python lives under root's home).
    for opener in OPENERS.values():
        opener(str(SAMPLE))
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's exit code
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            lines = []
            for name, opener in OPENERS.items():
                try:
                    opener(str(path))
                    lines.append(f"{name}=none")
                except Exception as e:  # noqa: BLE001 - the class is the answer
                    lines.append(f"{name}={type(e).__name__}:{str(path) in str(e)}")
            os.write(write_end, "\n".join(lines).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as f:
        # The child writes once, then exits: its pipe closes either way.
        ready, _, _ = select.select([f], [], [], 120)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        report = f.read() if ready else ""
    os.waitpid(pid, 0)
    assert report, "the unprivileged child reported nothing"
    out = {}
    for line in report.splitlines():
        name, _, what = line.partition("=")
        kind, _, names_path = what.partition(":")
        assert names_path == "True", (name, "the message names the path")
        out[name] = kind
    return out


def test_a_file_that_may_not_be_read_is_a_permission_error(unreadable: Path) -> None:
    classes = classes_raised_without_root(unreadable)
    assert classes == {name: "PermissionError" for name in OPENERS}


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"XXXX" + bytes(60), id="bad-magic"),
        pytest.param(b"GGUF" + b"\xff" * 60, id="bad-version"),
        pytest.param(b"", id="empty"),
    ],
)
@pytest.mark.parametrize("name", list(OPENERS))
def test_a_corrupt_file_is_a_value_error(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / "corrupt.gguf"
    path.write_bytes(content)
    err = raised(OPENERS[name], str(path))
    assert isinstance(err, ValueError), (name, type(err), err)
    if name.startswith("gguf_rs"):
        assert isinstance(err, gguf_rs.GGUFError)
        assert str(path) in str(err), str(err)


def test_a_missing_shard_is_file_not_found(tmp_path: Path) -> None:
    w = gguf.GGUFWriter(str(tmp_path / "split.gguf"), "llama", split_max_tensors=1)
    for i in range(3):
        w.add_tensor(f"t{i}", np.zeros((2, 4), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shards = sorted(tmp_path.glob("split-*-of-*.gguf"))
    assert len(shards) == 3
    shards[2].unlink()
    with pytest.raises(FileNotFoundError) as info:
        gguf_rs.open(shards[0])
    assert info.value.filename == str(shards[2])
    assert "shard 3 of 3" in str(info.value) and str(shards[2]) in str(info.value)


def test_version_is_the_packages() -> None:
    assert gguf_rs.__version__ == importlib.metadata.version("gguf-rs")
    cargo = (REPO / "Cargo.toml").read_text()
    workspace_version = re.search(r'(?m)^\[workspace\.package\][^\[]*?^version = "([^"]+)"', cargo)
    assert workspace_version is not None
    assert gguf_rs.__version__ == workspace_version.group(1)
    assert "__version__" in gguf_rs.__all__


def test_model_tensor_types_are_gguf_py_enum_members(fixture_dir: Path) -> None:
    """Every tensor type gguf-py writes, as gguf-py's own enum member."""
    for path in [SAMPLE, fixture_dir / "all_types.gguf"]:
        theirs = gguf.GGUFReader(path)
        model = gguf_rs.open(path)
        assert len(model.tensors) == len(theirs.tensors) > 0
        for ours, t in zip(model.tensors, theirs.tensors):
            assert type(ours.tensor_type) is GGMLQuantizationType, (ours.name, ours.tensor_type)
            assert ours.tensor_type is t.tensor_type
            assert ours.tensor_type.name in repr(ours)
