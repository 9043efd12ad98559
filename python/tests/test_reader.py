"""gguf_rs.GGUFReader against gguf-py 0.19's GGUFReader, field by field.

For each file both readers open, they must agree on every field (name,
offset, types, data indices, every part's dtype, shape, bytes and offset in
the file, contents()), every tensor attribute and the bytes of each tensor's
data, and the reader's own attributes (values and types). The differences
that are deliberate are compared separately and named where they occur.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
from conftest import FIXTURES, GEMMA, SAMPLE, repo_files

import gguf_rs


def address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def part_facts(part: np.ndarray, base: int) -> tuple[Any, ...]:
    return (part.dtype.str, part.shape, part.tobytes(), address(part) - base)


def flatten(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def is_nested(field: gguf.ReaderField) -> bool:
    return len(field.types) > 1 and field.types[0] == gguf.GGUFValueType.ARRAY and field.types[1] == gguf.GGUFValueType.ARRAY


def assert_fields_equal(name: str, theirs: gguf.ReaderField, ours: gguf.ReaderField, tb: int, ob: int) -> None:
    assert isinstance(ours, gguf.ReaderField), name
    assert (ours.offset, ours.name, ours.types) == (theirs.offset, theirs.name, theirs.types), name
    assert [type(t) for t in ours.types] == [type(t) for t in theirs.types], name
    assert list(ours.data) == list(theirs.data), name
    assert len(ours.parts) == len(theirs.parts), name
    for i, (t, o) in enumerate(zip(theirs.parts, ours.parts)):
        assert part_facts(o, ob) == part_facts(t, tb), f"{name} part {i}"
    if not theirs.types:
        return
    if is_nested(theirs):
        # gguf-py flattens nested arrays (and garbles inner arrays of other
        # types than the first); ours come back nested: same leaf count.
        assert len(flatten(ours.contents())) == len(theirs.contents()), name
        return
    expected = theirs.contents()
    got = ours.contents()
    assert got == expected, name
    assert [type(v) for v in flatten(got)] == [type(v) for v in flatten(expected)], name
    if theirs.types[0] == gguf.GGUFValueType.ARRAY and len(theirs.data) > 0:
        assert ours.contents(0) == theirs.contents(0), name
        assert ours.contents(-1) == theirs.contents(-1), name
        assert ours.contents(slice(1, None, 2)) == theirs.contents(slice(1, None, 2)), name


def assert_readers_equal(path: Path) -> None:
    theirs = gguf.GGUFReader(path)
    ours = gguf_rs.GGUFReader(path)
    assert isinstance(ours, gguf.GGUFReader)
    tb, ob = address(theirs.data), address(ours.data)
    assert type(ours.data) is type(theirs.data)
    assert ours.data.shape == theirs.data.shape
    for attr in ("alignment", "data_offset", "endianess", "byte_order"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    assert list(ours.fields) == list(theirs.fields)
    for key, field in theirs.fields.items():
        assert_fields_equal(key, field, ours.fields[key], tb, ob)
        assert ours.get_field(key) is ours.fields[key]
    assert len(ours.tensors) == len(theirs.tensors)
    for i, (t, o) in enumerate(zip(theirs.tensors, ours.tensors)):
        assert isinstance(o, gguf.ReaderTensor)
        assert ours.get_tensor(i) is o
        assert (o.name, o.tensor_type, o.n_elements, o.data_offset) == (t.name, t.tensor_type, t.n_elements, t.data_offset), t.name
        assert type(o.tensor_type) is type(t.tensor_type)
        assert type(o.n_elements) is type(t.n_elements)
        if t.tensor_type == gguf.GGMLQuantizationType.Q8_1:
            # gguf-py's table gives Q8_1 40 bytes per block; ggml's block is 36.
            assert o.n_bytes == t.n_elements // 32 * 36
        else:
            assert o.n_bytes == t.n_bytes, t.name
            assert part_facts(o.data, ob) == part_facts(t.data, tb), t.name
        assert part_facts(o.shape, ob) == part_facts(t.shape, tb), t.name
        assert_fields_equal(t.name, t.field, o.field, tb, ob)


@pytest.mark.parametrize("path", repo_files(), ids=lambda p: p.name)
def test_repo_files_read_the_same(path: Path) -> None:
    assert_readers_equal(path)


@pytest.mark.parametrize("name", FIXTURES)
def test_gguf_py_fixtures_read_the_same(fixture_dir: Path, name: str) -> None:
    assert_readers_equal(fixture_dir / f"{name}.gguf")


def test_gemma_reads_the_same() -> None:
    if not GEMMA:
        pytest.skip("set GGUF_GEMMA_MODEL to compare on Gemma 3 270M")
    assert_readers_equal(Path(GEMMA))


def test_parts_are_built_on_first_access() -> None:
    reader = gguf_rs.GGUFReader(SAMPLE)
    tokens = reader.fields["tokenizer.ggml.tokens"]
    # What gguf_dump asks of every field builds no part.
    assert len(tokens.data) > 6
    assert tokens.contents(slice(6)) == gguf.GGUFReader(SAMPLE).fields["tokenizer.ggml.tokens"].contents(slice(6))
    assert list.__len__(tokens.parts) == 0  # nothing built yet
    # The key's length, bytes and type; the element type and count; each string's length and bytes.
    assert len(tokens.parts) == 3 + 2 + 2 * len(tokens.data)
    assert list.__len__(tokens.parts) > 0
    assert tokens.contents(0) == bytes(tokens.parts[tokens.data[0]]).decode()


def test_nested_arrays_come_back_nested(fixture_dir: Path) -> None:
    reader = gguf_rs.GGUFReader(fixture_dir / "all_types.gguf")
    assert reader.fields["test.array.nested_u32"].contents() == [[1, 2, 3], [4], [5, 6]]
    assert reader.fields["test.array.nested_mixed"].contents() == [[7, 8], ["m", "n", "o"]]
    assert reader.fields["test.array.nested3"].contents() == [[[1], [2, 3]], [[4, 5, 6]]]
    assert reader.fields["test.array.nested_str"].contents(1) == ["z"]


def test_read_write_mode_writes_alias_the_file(tmp_path: Path) -> None:
    copy = tmp_path / "copy.gguf"
    copy.write_bytes(SAMPLE.read_bytes())
    reader = gguf_rs.GGUFReader(copy, "r+")
    field = reader.fields["llama.context_length"]
    field.parts[field.data[0]][0] = 1234
    assert field.contents() == 1234
    reader.data.flush()
    del reader, field
    assert gguf.GGUFReader(copy).fields["llama.context_length"].contents() == 1234


def test_pathlike_and_str_paths_open() -> None:
    assert gguf_rs.GGUFReader(str(SAMPLE)).data_offset == gguf_rs.GGUFReader(SAMPLE).data_offset


def v1_file(path: Path) -> None:
    """A version 1 file (lengths and counts u32): one string, one u32 array,
    one F32 tensor of 2x2 at data offset 0."""
    import struct

    def s(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<I", len(raw)) + raw

    header = b"GGUF" + struct.pack("<III", 1, 1, 2)
    header += s("general.architecture") + struct.pack("<I", 8) + s("llama")
    header += s("test.list") + struct.pack("<III", 9, 4, 3) + struct.pack("<3I", 1, 2, 3)
    header += s("w") + struct.pack("<III", 2, 2, 2) + struct.pack("<I", 0) + struct.pack("<Q", 0)
    header += bytes(-len(header) % 32)
    path.write_bytes(header + np.arange(4, dtype=np.float32).tobytes())


def test_version_1_is_read(tmp_path: Path) -> None:
    path = tmp_path / "v1.gguf"
    v1_file(path)
    with pytest.raises(ValueError):
        gguf.GGUFReader(path)  # gguf-py supports versions 2 and 3 only
    reader = gguf_rs.GGUFReader(path)
    assert reader.fields["GGUF.version"].contents() == 1
    assert reader.fields["GGUF.kv_count"].contents() == 2
    assert reader.fields["general.architecture"].contents() == "llama"
    assert reader.fields["test.list"].contents() == [1, 2, 3]
    assert reader.fields["test.list"].parts[0].dtype == np.uint32  # the key's length, as stored
    tensor = reader.tensors[0]
    assert tensor.name == "w" and list(tensor.shape) == [2, 2]
    assert tensor.data.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_parts_built_once_under_threads() -> None:
    import threading

    for _ in range(5):
        tokens = gguf_rs.GGUFReader(SAMPLE).fields["tokenizer.ggml.tokens"]
        lengths: list[int] = []
        threads = [threading.Thread(target=lambda: lengths.append(len(tokens.parts))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert lengths == [5 + 2 * len(tokens.data)] * 4
