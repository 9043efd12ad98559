"""gguf_rs.Builder: files written by the library's Builder from values and
numpy arrays, read back by gguf-py and by us."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gguf
import numpy as np
import pytest
from conftest import SAMPLE

import gguf_rs

Q = gguf.GGMLQuantizationType


def rows(n: int = 4, width: int = 64) -> np.ndarray:
    return np.sin(np.arange(n * width, dtype=np.float32) * 0.37).reshape(n, width)


def filled() -> gguf_rs.Builder:
    b = gguf_rs.Builder()
    b.set("general.architecture", "llama").set("llama.context_length", 4096, type="u32")
    b.set("my.strings", ["a", "b"]).set("my.f64", 0.25, type="f64").set("my.flag", True)
    b.add_tensor("f32", rows())
    b.add_tensor("f16", rows().astype(np.float16))
    b.add_tensor("i32", np.arange(6, dtype=np.int32).reshape(2, 3))
    b.add_tensor("bf16", rows(), type="BF16")
    b.add_tensor("q8_0", rows(), type=Q.Q8_0)
    return b


def test_values_and_arrays_read_back_in_gguf_py(tmp_path: Path) -> None:
    path = tmp_path / "out.gguf"
    assert filled().write(path) == path.stat().st_size
    r = gguf.GGUFReader(path)
    assert r.fields["llama.context_length"].types == [gguf.GGUFValueType.UINT32]
    assert r.fields["llama.context_length"].contents() == 4096
    assert r.fields["my.strings"].contents() == ["a", "b"]
    assert r.fields["my.f64"].types == [gguf.GGUFValueType.FLOAT64]
    assert r.fields["my.flag"].contents() is True
    t = {x.name: x for x in r.tensors}
    assert [x.name for x in r.tensors] == ["f32", "f16", "i32", "bf16", "q8_0"]
    assert np.array_equal(t["f32"].data, rows())
    assert np.array_equal(t["f16"].data, rows().astype(np.float16))
    assert t["i32"].tensor_type == Q.I32 and np.array_equal(t["i32"].data, np.arange(6).reshape(2, 3))
    # Quantized by the library when written: the bytes gguf-py's own
    # quantizers produce.
    assert t["bf16"].tensor_type == Q.BF16
    assert t["bf16"].data.tobytes() == gguf.quants.quantize(rows(), Q.BF16).tobytes()
    assert t["q8_0"].tensor_type == Q.Q8_0
    assert t["q8_0"].data.tobytes() == gguf.quants.quantize(rows(), Q.Q8_0).tobytes()


def test_the_three_write_modes_give_the_same_bytes(tmp_path: Path) -> None:
    expected = filled().to_bytes()
    single, reserve, first = (tmp_path / n for n in ("single.gguf", "reserve.gguf", "first.gguf"))
    filled().write(single)
    filled().write(reserve, mode="reserve")
    b = filled()
    b.add_tensor_info("late", Q.F32, (2, 32))
    asked: list[str] = []

    def data(name: str) -> np.ndarray:
        asked.append(name)
        return np.full((2, 32), 1.5, dtype=np.float32)

    b.write_metadata_first(first, data)
    assert single.read_bytes() == expected
    assert reserve.read_bytes() == expected
    assert asked == ["late"]  # only the tensor declared without data
    model = gguf_rs.open(first)
    assert np.array_equal(model.tensor("late").to_numpy(), np.full((2, 32), 1.5, dtype=np.float32))
    assert model.tensor("q8_0").raw().tobytes() == gguf_rs.open(single).tensor("q8_0").raw().tobytes()
    with pytest.raises(ValueError, match="mode: expected 'single' or 'reserve'"):
        filled().write(tmp_path / "x.gguf", mode="fast")


def test_raw_quantized_bytes_round_trip(tmp_path: Path) -> None:
    original = gguf_rs.open(SAMPLE)
    b = gguf_rs.Builder()
    for t in original.tensors:
        b.add_tensor(t.name, t.raw(), type=t.tensor_type, shape=t.shape)
    path = tmp_path / "copy.gguf"
    b.write(path)
    copy = gguf_rs.open(path)
    for t in original.tensors:
        assert copy.tensor(t.name).tensor_type == t.tensor_type
        assert copy.tensor(t.name).raw().tobytes() == t.raw().tobytes()


def test_big_endian_files_hold_the_same_numbers(tmp_path: Path) -> None:
    path = tmp_path / "be.gguf"
    b = gguf_rs.Builder(big_endian=True)
    b.set("n", 258, type="u32").add_tensor("w", rows())
    b.write(path)
    assert path.read_bytes()[4:8] == (3).to_bytes(4, "big")
    model = gguf_rs.open(path)
    assert model.metadata["n"] == 258
    assert np.array_equal(model.tensor("w").to_numpy(), rows())


def test_refusals_carry_the_library_message_and_leave_files_alone(tmp_path: Path) -> None:
    b = gguf_rs.Builder()
    with pytest.raises(gguf_rs.GGUFError, match="tensor \"raw\": data is 3 bytes, its shape and type need 64"):
        b.add_tensor("raw", b"abc", type="F32", shape=(16,))
    with pytest.raises(gguf_rs.GGUFError, match="block size|multiple"):
        b.add_tensor("q", np.ones((2, 48), dtype=np.float32), type="Q4_K")
    with pytest.raises(gguf_rs.GGUFError, match="unknown GGML type"):
        b.add_tensor("q", rows(), type="Q9_9")
    with pytest.raises(TypeError, match="needs type="):
        b.add_tensor("u", np.ones(4, dtype=np.uint16))
    with pytest.raises(gguf_rs.GGUFError, match="empty"):
        b.set("", 1)
    with pytest.raises(gguf_rs.GGUFError):
        gguf_rs.Builder(alignment=3)
    assert b.tensor_names == [] and b.keys == []
    # A write that fails half way: the target keeps its bytes, no temporary.
    target = tmp_path / "keep.gguf"
    target.write_bytes(b"original")
    b.add_tensor_info("late", "F32", (4,))

    def broken(name: str) -> bytes:
        raise RuntimeError(f"no data for {name}")

    with pytest.raises(RuntimeError, match="no data for late"):
        b.write_metadata_first(target, broken)
    with pytest.raises(gguf_rs.GGUFError, match="late"):
        b.write_metadata_first(target, lambda name: b"short")
    with pytest.raises(ValueError, match="no data callback"):
        b.write_metadata_first(target)
    assert target.read_bytes() == b"original"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.gguf"]


def test_value_types_implied_by_python_and_numpy_values() -> None:
    b = gguf_rs.Builder()
    b.set("int", 5).set("big", 2**40).set("huge", 2**63).set("float", 0.5).set("flag", False)
    b.set("ints", [1, 2**40]).set("u32s", np.array([1, 2], dtype=np.uint32))
    b.set("f64s", np.array([0.5, 1.5])).set("nested", [[1, 2], ["a"]]).set("np_int", np.int64(3))
    b.set("as_u8", [1, 2], type="u8").set("np_bool", np.bool_(True))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "v.gguf"
        path.write_bytes(b.to_bytes())
        model = gguf_rs.open(path)
        types = model.value_types
        assert types["int"] == "i32" and types["big"] == "i64" and types["huge"] == "u64"
        assert types["float"] == "f32" and types["flag"] == "bool" and types["np_bool"] == "bool"
        assert types["np_int"] == "i32"
        theirs = gguf.GGUFReader(path)
        V = gguf.GGUFValueType
        assert theirs.fields["ints"].types == [V.ARRAY, V.INT64]
        assert theirs.fields["u32s"].types == [V.ARRAY, V.UINT32]
        assert theirs.fields["f64s"].types == [V.ARRAY, V.FLOAT64]
        assert theirs.fields["as_u8"].types == [V.ARRAY, V.UINT8]
        assert model.metadata["nested"] == [[1, 2], ["a"]]
        assert model.metadata["huge"] == 2**63 and model.metadata["ints"] == [1, 2**40]


def test_from_file_writes_the_file_back_and_takes_edits(tmp_path: Path) -> None:
    original = SAMPLE.read_bytes()
    assert gguf_rs.Builder.from_file(SAMPLE).to_bytes() == original

    path = tmp_path / "model.gguf"
    path.write_bytes(original)
    theirs = gguf.GGUFReader(SAMPLE)
    names = [t.name for t in theirs.tensors]
    f32 = next(t for t in theirs.tensors[1:-1] if t.tensor_type == gguf.GGMLQuantizationType.F32)
    b = gguf_rs.Builder.from_file(path)
    assert b.tensor_names == names
    b.set("general.name", "rebuilt").rename_key("general.type", "general.kind")
    b.remove_tensor(names[-1]).rename_tensor(names[0], "renamed.weight")
    b.requantize_tensor(f32.name, "F16")
    with pytest.raises(gguf_rs.GGUFError):
        b.remove_tensor("no.such.tensor")
    b.write(path)  # over its own source: atomic, the source stays mapped

    out = gguf.GGUFReader(path)
    assert out.fields["general.name"].contents() == "rebuilt"
    assert out.fields["general.kind"].contents() == theirs.fields["general.type"].contents()
    assert [t.name for t in out.tensors] == ["renamed.weight", *names[1:-1]]
    got = out.get_tensor([t.name for t in out.tensors].index(f32.name))
    assert got.tensor_type == gguf.GGMLQuantizationType.F16
    assert np.array_equal(got.data.astype(np.float32), f32.data.astype(np.float16).astype(np.float32))
    for t in out.tensors:
        if t.name not in (f32.name, "renamed.weight"):
            assert t.data.tobytes() == theirs.tensors[names.index(t.name)].data.tobytes(), t.name


def test_from_file_of_any_shard_merges_the_model(tmp_path: Path) -> None:
    arrays = {f"t{i}": np.arange(8, dtype=np.float32) * i for i in range(5)}

    def write(path: Path, **split: int) -> None:
        w = gguf.GGUFWriter(str(path), "llama", **split)
        w.add_string("general.name", "merged")
        for name, values in arrays.items():
            w.add_tensor(name, values)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()

    write(tmp_path / "whole.gguf")
    write(tmp_path / "split.gguf", split_max_tensors=2)
    merged = gguf_rs.Builder.from_file(tmp_path / "split-00003-of-00003.gguf").to_bytes()
    assert merged == (tmp_path / "whole.gguf").read_bytes()
