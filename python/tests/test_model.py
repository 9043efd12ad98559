"""gguf_rs.open: the library's own view, checked against the drop-in reader
and gguf-py."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
from conftest import SAMPLE

import gguf_rs


def test_metadata_and_tensors_of_the_sample() -> None:
    model = gguf_rs.open(SAMPLE)
    theirs = gguf.GGUFReader(SAMPLE)
    expected = {k: f.contents() for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    assert model.metadata == expected
    assert list(model.metadata) == list(expected)
    assert model.value_types["general.architecture"] == "string"
    assert model.shard_count == 1
    assert [t.name for t in model.tensors] == [t.name for t in theirs.tensors]
    for ours, t in zip(model.tensors, theirs.tensors):
        assert ours.tensor_type == t.tensor_type
        assert ours.n_elements == t.n_elements
        values = ours.to_numpy()
        assert values.dtype == np.float32 and values.shape == ours.shape
        assert np.array_equal(values.reshape(-1), gguf_rs.quants.dequantize(t.data, t.tensor_type).reshape(-1))
        assert ours.raw().tobytes() == t.data.tobytes()
    assert model.tensor(model.tensors[0].name) is model.tensors[0]


def test_str_and_path_sources() -> None:
    assert gguf_rs.open(str(SAMPLE)).metadata == gguf_rs.open(Path(SAMPLE)).metadata


def test_broken_files_and_urls_raise(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(SAMPLE.read_bytes()[:100])
    with pytest.raises(gguf_rs.GGUFError) as info:
        gguf_rs.open(broken)
    assert info.value.offset is not None
    # Nothing listens on port 9: the library's error, naming the URL.
    with pytest.raises(gguf_rs.GGUFError, match="https://127.0.0.1:9/model.gguf"):
        gguf_rs.open("https://127.0.0.1:9/model.gguf")


def test_any_shard_opens_the_whole_split_model(tmp_path: Path) -> None:
    base = tmp_path / "split.gguf"
    w = gguf.GGUFWriter(str(base), "llama", split_max_tensors=2)
    w.add_string("general.name", "split")
    arrays = {f"t{i}": np.full((2, 4), i, np.float32) for i in range(5)}
    for name, values in arrays.items():
        w.add_tensor(name, values)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shards = sorted(tmp_path.glob("split-*-of-*.gguf"))
    assert len(shards) == 3
    model = gguf_rs.open(shards[1])
    assert model.shard_count == 3
    assert model.metadata["general.name"] == "split"
    assert not any(k.startswith("split.") for k in model.metadata)
    assert [t.name for t in model.tensors] == list(arrays)
    for name, values in arrays.items():
        assert np.array_equal(model.tensor(name).to_numpy(), values)
