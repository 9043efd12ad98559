"""gguf_rs.Editor: metadata edits through the library's Editor, checked
with gguf-py's reader and ours."""

from __future__ import annotations

import shutil
from pathlib import Path

import gguf
import numpy as np
import pytest
from conftest import SAMPLE

import gguf_rs


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    shutil.copy(SAMPLE, path)
    return path


def test_in_place_edits_are_what_gguf_py_reads(copy: Path) -> None:
    ed = gguf_rs.Editor(copy)
    ed.set("general.name", "renamed")
    ed.set("llama.context_length", 1024)  # an existing key keeps its type (u32)
    ed.set("my.floats", [1.5, 2.5], type="f64")
    ed.remove("general.type")
    planned = ed.plan()
    assert planned == {"in_place": True, "header_bytes": planned["header_bytes"], "slack_bytes": 0}
    size = copy.stat().st_size
    assert ed.commit()["in_place"] is True
    assert copy.stat().st_size == size
    theirs = gguf.GGUFReader(copy)
    assert theirs.fields["general.name"].contents() == "renamed"
    assert theirs.fields["llama.context_length"].types == [gguf.GGUFValueType.UINT32]
    assert theirs.fields["llama.context_length"].contents() == 1024
    assert theirs.fields["my.floats"].types == [gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.FLOAT64]
    assert theirs.fields["my.floats"].contents() == [1.5, 2.5]
    assert "general.type" not in theirs.fields
    before = gguf.GGUFReader(SAMPLE)
    for ours, orig in zip(theirs.tensors, before.tensors):
        assert np.array_equal(ours.data, orig.data)


def test_a_header_that_outgrows_its_room_is_rewritten(copy: Path) -> None:
    ed = gguf_rs.Editor(copy)
    ed.set("my.long", "x" * 100_000)
    ed.set("my.count", 7)  # a new int is i32, as gguf-py writes it
    result = ed.commit()
    assert result["in_place"] is False
    assert result["file_bytes"] == copy.stat().st_size
    assert [p.name for p in copy.parent.iterdir()] == [copy.name]  # no temporary left
    model = gguf_rs.open(copy)
    assert model.metadata["my.long"] == "x" * 100_000
    assert model.value_types["my.count"] == "i32"
    original = gguf_rs.open(SAMPLE)
    for t in original.tensors:
        assert model.tensor(t.name).raw().tobytes() == t.raw().tobytes()


def test_a_rewrite_reserves_slack_so_the_next_edit_is_in_place(copy: Path) -> None:
    ed = gguf_rs.Editor(copy)
    ed.set("general.description", "d" * 2000)
    result = ed.commit()
    assert result["in_place"] is False
    assert result["slack_bytes"] >= 4096
    theirs = gguf.GGUFReader(copy)
    slack = theirs.fields["gguf_rs.metadata_slack"]
    assert slack.types == [gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT8]
    assert len(slack.data) == result["slack_bytes"]
    inode, size = copy.stat().st_ino, copy.stat().st_size
    ed = gguf_rs.Editor(copy)
    ed.set("general.description", "d" * 5000)  # 3000 bytes more
    second = ed.commit()
    assert second["in_place"] is True
    assert second["slack_bytes"] == result["slack_bytes"] - 3000
    assert (copy.stat().st_ino, copy.stat().st_size) == (inode, size)
    assert gguf.GGUFReader(copy).fields["general.description"].contents() == "d" * 5000
    original = gguf_rs.open(SAMPLE)
    model = gguf_rs.open(copy)
    for t in original.tensors:
        assert model.tensor(t.name).raw().tobytes() == t.raw().tobytes()


def test_reserve_on_rewrite_zero_adds_no_slack(copy: Path) -> None:
    ed = gguf_rs.Editor(copy, reserve_on_rewrite=0)
    ed.set("general.description", "d" * 2000)
    result = ed.commit()
    assert result["in_place"] is False and result["slack_bytes"] == 0
    assert "gguf_rs.metadata_slack" not in gguf.GGUFReader(copy).fields
    with pytest.raises(gguf_rs.GGUFError, match="1 GiB"):
        gguf_rs.Editor(copy, reserve_on_rewrite=2**31)


def test_errors_carry_the_library_message(copy: Path) -> None:
    original = copy.read_bytes()
    ed = gguf_rs.Editor(copy)
    with pytest.raises(gguf_rs.GGUFError, match='metadata key "nope" not found'):
        ed.remove("nope")
    with pytest.raises(ValueError, match='unknown value type "u128"'):
        ed.set("a.b", 1, type="u128")
    with pytest.raises(OverflowError):
        ed.set("llama.context_length", -1)  # u32 in the file
    with pytest.raises(TypeError, match="cannot store a dict"):
        ed.set("a.b", {})
    ed.commit()
    with pytest.raises(RuntimeError, match="already committed"):
        ed.commit()
    assert copy.read_bytes() == original  # the refused edits were never queued
    with pytest.raises(FileNotFoundError):
        gguf_rs.Editor(copy.parent / "missing.gguf")
    broken = copy.parent / "broken.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(gguf_rs.GGUFError) as err:
        gguf_rs.Editor(broken)
    assert err.value.offset is not None


def write_split(base: Path, arrays: dict[str, np.ndarray], split_max_tensors: int = 2) -> list[Path]:
    """`arrays` as gguf-py writes them split (general.name "split"), with
    room in each header for in-place edits; the shards in order."""
    w = gguf.GGUFWriter(str(base), "llama", split_max_tensors=split_max_tensors)
    w.add_string("general.name", "split")
    w.add_uint32("llama.context_length", 64)
    for name, values in arrays.items():
        w.add_tensor(name, values)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return sorted(base.parent.glob(f"{base.stem}-*-of-*.gguf"))


def test_a_split_model_is_edited_through_any_shard(tmp_path: Path) -> None:
    arrays = {f"t{i}": np.full((2, 4), i, np.float32) for i in range(5)}
    shards = write_split(tmp_path / "split.gguf", arrays)
    assert len(shards) == 3
    before = [s.read_bytes() for s in shards]
    ed = gguf_rs.ModelEditor(shards[2])
    assert [Path(p) for p in ed.paths()] == shards
    ed.set("general.name", "edited")
    ed.set("llama.context_length", 4096)  # keeps its type, u32
    ed.rename_tensor("t3", "output.weight")  # in the second shard
    with pytest.raises(gguf_rs.GGUFError, match="split"):
        ed.set("split.count", 5)
    with pytest.raises(gguf_rs.GGUFError):
        ed.rename_tensor("t0", "t4")  # taken, in another shard
    planned = ed.plan()
    assert [Path(p) for p, _ in planned] == shards[:2]
    assert [s.read_bytes() for s in shards] == before, "plan() wrote nothing"
    done = ed.commit()
    assert [(Path(p), d["in_place"]) for p, d in done] == [(p, d["in_place"]) for p, d in planned]
    assert shards[2].read_bytes() == before[2], "the third shard had no edit"
    with pytest.raises(RuntimeError):
        ed.commit()

    first = gguf.GGUFReader(shards[0])
    assert first.fields["general.name"].contents() == "edited"
    assert first.fields["llama.context_length"].types == [gguf.GGUFValueType.UINT32]
    assert first.fields["llama.context_length"].contents() == 4096
    assert first.fields["split.count"].contents() == 3
    second = gguf.GGUFReader(shards[1])
    assert [t.name for t in second.tensors] == ["t2", "output.weight"]
    model = gguf_rs.open(shards[0])
    assert [t.name for t in model.tensors] == ["t0", "t1", "t2", "output.weight", "t4"]
    for name, values in arrays.items():
        assert np.array_equal(model.tensor("output.weight" if name == "t3" else name).to_numpy(), values)


def test_a_model_editor_on_one_file_edits_it(copy: Path) -> None:
    ed = gguf_rs.ModelEditor(copy)
    ed.set("general.name", "one file")
    ed.remove("general.type")
    planned = ed.plan()
    ((path, result),) = ed.commit()
    assert Path(path) == copy and [(path, result)] == planned
    theirs = gguf.GGUFReader(copy)
    assert theirs.fields["general.name"].contents() == "one file"
    assert "general.type" not in theirs.fields
