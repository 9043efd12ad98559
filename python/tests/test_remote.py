"""gguf_rs.open on every source the library opens beyond paths: http(s)
URLs, hf://, ollama:NAME (the local store) and ollama://HOST/NAME (a
registry), each served on 127.0.0.1 by the Rust suite's own server
(tests/oracles/range_server.py), and each giving what the local file gives."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import gguf
import numpy as np
import pytest
from conftest import REPO, SAMPLE

import gguf_rs

RANGE_SERVER = REPO / "tests" / "oracles" / "range_server.py"


class Server:
    """range_server.py serving `root` on 127.0.0.1 until stopped."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen(
            [sys.executable, str(RANGE_SERVER), str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def stats(self) -> dict:
        """Requests and bytes served since the last call (then reset)."""
        with urllib.request.urlopen(self.url("_stats")) as r:
            stats = json.load(r)
        urllib.request.urlopen(self.url("_reset")).close()
        return stats

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.kill()
        self.proc.wait()


def ollama_store(root: Path) -> Path:
    """A fake Ollama store holding the sample as `tiny:latest` and
    `me/tiny:q8` (as tests/integration/sources.rs lays it out)."""
    data = SAMPLE.read_bytes()
    model = hashlib.sha256(data).hexdigest()
    license = hashlib.sha256(b"license").hexdigest()
    (root / "blobs").mkdir(parents=True)
    (root / "blobs" / f"sha256-{model}").write_bytes(data)
    (root / "blobs" / f"sha256-{license}").write_bytes(b"license")
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": f"sha256:{license}", "size": 7},
        "layers": [
            {"mediaType": "application/vnd.ollama.image.license", "digest": f"sha256:{license}", "size": 7},
            {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{model}", "size": len(data)},
        ],
    }
    for ns, repo, tag in [("library", "tiny", "latest"), ("me", "tiny", "q8")]:
        d = root / "manifests" / "registry.ollama.ai" / ns / repo
        d.mkdir(parents=True)
        (d / tag).write_text(json.dumps(manifest))
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = ollama_store(tmp_path_factory.mktemp("ollama"))
    # The sample and a split copy of it, beside the store, for the plain
    # HTTP and hf:// cases.
    (root / "tiny-llama.gguf").write_bytes(SAMPLE.read_bytes())
    return root


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[Server]:
    s = Server(store)
    yield s
    s.stop()


def same_as_local(model: gguf_rs.Model) -> None:
    """`model` has the sample's metadata, tensors and tensor values."""
    local = gguf_rs.open(SAMPLE)
    assert model.metadata == local.metadata
    assert list(model.metadata) == list(local.metadata)
    assert model.value_types == local.value_types
    assert [(t.name, t.tensor_type, t.shape) for t in model.tensors] == [
        (t.name, t.tensor_type, t.shape) for t in local.tensors
    ]
    for ours, theirs in zip(model.tensors, local.tensors):
        assert ours.raw().tobytes() == theirs.raw().tobytes()
        assert np.array_equal(ours.to_numpy(), theirs.to_numpy())
    assert model.summary() == local.summary()
    assert model.estimate(256) == local.estimate(256)


def test_an_http_url_opens_like_the_file(server: Server) -> None:
    same_as_local(gguf_rs.open(server.url("tiny-llama.gguf")))


def test_a_remote_file_costs_its_header_and_one_read_per_tensor(tmp_path: Path) -> None:
    """A file larger than the library's first read (a 4 MiB tensor): opening
    reads at most 3 ranges and less than the file; a tensor is one more."""
    w = gguf.GGUFWriter(str(tmp_path / "big.gguf"), "llama")
    big = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)
    w.add_tensor("small", np.ones(8, np.float32))
    w.add_tensor("big", big)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    s = Server(tmp_path)
    try:
        model = gguf_rs.open(s.url("big.gguf"))
        header = s.stats()
        assert 1 <= header["requests"] <= 3, header
        assert header["bytes"] < (tmp_path / "big.gguf").stat().st_size, header
        assert np.array_equal(model.tensor("big").to_numpy(), big)
        assert s.stats()["requests"] == 1, "one range read for one tensor"
    finally:
        s.stop()


def test_any_remote_shard_opens_the_whole_split_model(tmp_path: Path) -> None:
    w = gguf.GGUFWriter(str(tmp_path / "split.gguf"), "llama", split_max_tensors=2)
    w.add_string("general.name", "split")
    arrays = {f"t{i}": np.full((2, 4), i, np.float32) for i in range(5)}
    for name, values in arrays.items():
        w.add_tensor(name, values)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    s = Server(tmp_path)
    try:
        model = gguf_rs.open(s.url("split-00002-of-00003.gguf"))
        assert model.shard_count == 3
        assert model.metadata["general.name"] == "split"
        for name, values in arrays.items():
            assert np.array_equal(model.tensor(name).to_numpy(), values)
    finally:
        s.stop()


def test_hf_urls_read_from_the_hub_endpoint(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.port}")
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token")
    server.stats()
    same_as_local(gguf_rs.open("hf://owner/repo/tiny-llama.gguf"))
    assert "Bearer hf_secret_token" in server.stats()["auth"]


def test_the_local_ollama_store_opens_like_the_file(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_MODELS", str(store))
    for name in ["ollama:tiny", "ollama:tiny:latest", "ollama:me/tiny:q8"]:
        same_as_local(gguf_rs.open(name))
    with pytest.raises(gguf_rs.GGUFError, match="is it pulled"):
        gguf_rs.open("ollama:missing")


def test_an_ollama_registry_opens_like_the_file(server: Server) -> None:
    same_as_local(gguf_rs.open(f"ollama://127.0.0.1:{server.port}/me/tiny:q8"))
    with pytest.raises(gguf_rs.GGUFError, match="404"):
        gguf_rs.open(f"ollama://127.0.0.1:{server.port}/missing")


def test_remote_errors_name_the_url_without_its_credentials(server: Server) -> None:
    url = f"http://user:hunter2@127.0.0.1:{server.port}/missing.gguf?X-Amz-Signature=s3cr3t"
    with pytest.raises(gguf_rs.GGUFError) as info:
        gguf_rs.open(url)
    message = str(info.value)
    assert "404" in message and f"127.0.0.1:{server.port}/missing.gguf" in message, message
    assert "hunter2" not in message and "s3cr3t" not in message, message
    # A server that sends a broken file: the library's format error, with
    # the offset.
    with pytest.raises(gguf_rs.GGUFError) as info:
        gguf_rs.open(server.url("blobs/sha256-" + hashlib.sha256(b"license").hexdigest()))
    assert info.value.offset is not None or "magic" in str(info.value), str(info.value)


def test_an_s3_object_opens_like_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """s3:// through object_store, against moto's S3 server
    (tests/oracles/s3_server.py, run by the oracle interpreter the Rust
    suite uses: GGUF_PYTHON, else python3 with tests/oracles/requirements.txt)."""
    import os
    import shutil as sh

    python = os.environ.get("GGUF_PYTHON") or sh.which("python3")
    probe = subprocess.run([python, "-c", "import moto, boto3"], capture_output=True) if python else None
    if probe is None or probe.returncode != 0:
        pytest.skip("moto is not installed for the oracle interpreter (pip install -r tests/oracles/requirements.txt)")
    proc = subprocess.Popen(
        [python, str(REPO / "tests" / "oracles" / "s3_server.py"), "models", str(SAMPLE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        for key, value in {
            "AWS_ENDPOINT": f"http://127.0.0.1:{port}",
            "AWS_ALLOW_HTTP": "true",
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
        monkeypatch.delenv("AWS_PROFILE", raising=False)
        same_as_local(gguf_rs.open("s3://models/tiny-llama.gguf"))
        with pytest.raises(gguf_rs.GGUFError, match="s3://models/missing.gguf"):
            gguf_rs.open("s3://models/missing.gguf")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.kill()
        proc.wait()
