"""Broken and hostile files: ours raises GGUFError (a ValueError) with the
library's message and offset; where gguf-py 0.19 also refuses, both raise;
where gguf-py reads something wrong, the difference is named."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
from conftest import SAMPLE

import gguf_rs


def ours_refuses(path: Path) -> gguf_rs.GGUFError:
    with pytest.raises(gguf_rs.GGUFError) as info:
        gguf_rs.GGUFReader(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert str(err)
    assert err.offset is None or isinstance(err.offset, int)
    return err


def gguf_py_refuses(path: Path) -> bool:
    try:
        gguf.GGUFReader(path)
    except Exception:  # gguf-py fails with whatever numpy or Python raises
        return True
    return False


def test_truncated_headers_raise_in_both(tmp_path: Path) -> None:
    """Every cut inside the header region (a sample of offsets): both refuse;
    ours says where (an offset within the file or at its end)."""
    data = SAMPLE.read_bytes()
    header_len = gguf_rs.GGUFReader(SAMPLE).data_offset
    for cut in list(range(0, 64)) + list(range(64, header_len, 97)):
        path = tmp_path / f"cut{cut}.gguf"
        path.write_bytes(data[:cut])
        if cut == 0:
            # An empty file: np.memmap cannot map it; we say so.
            assert gguf_py_refuses(path)
            ours_refuses(path)
            continue
        err = ours_refuses(path)
        assert err.offset is not None and err.offset <= cut, (cut, str(err))
        assert gguf_py_refuses(path), cut


def test_truncated_tensor_data_is_refused(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()
    path = tmp_path / "short.gguf"
    path.write_bytes(data[:-1])
    err = ours_refuses(path)
    assert "tensor" in str(err)
    # gguf-py refuses too (numpy cannot reshape the short view).
    assert gguf_py_refuses(path)


def test_bad_magic(tmp_path: Path) -> None:
    path = tmp_path / "magic.gguf"
    path.write_bytes(b"GGUX" + SAMPLE.read_bytes()[4:])
    err = ours_refuses(path)
    assert err.offset == 0 and "magic" in str(err)
    assert gguf_py_refuses(path)


def test_five_dimensions_gguf_py_accepts(tmp_path: Path) -> None:
    path = tmp_path / "five.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tensor("t", np.zeros((1, 1, 1, 2, 2), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert not gguf_py_refuses(path)  # gguf-py's quirk (ORACLES.md): accepted
    err = ours_refuses(path)
    assert "5 dimensions" in str(err) and err.offset is not None


def test_misaligned_tensor_offset_gguf_py_accepts(tmp_path: Path) -> None:
    path = tmp_path / "misaligned.gguf"
    path.write_bytes(SAMPLE.read_bytes())
    reader = gguf_rs.GGUFReader(path, "r+")
    offset_part = reader.tensors[1].field.parts[5]
    offset_part[0] += 1  # the second tensor's data offset, off the 32-byte grid
    reader.data.flush()
    file_offset = reader.data_offset + int(offset_part[0])
    del reader, offset_part
    assert not gguf_py_refuses(path)  # gguf-py's quirk (ORACLES.md): accepted
    err = ours_refuses(path)
    # The library names the tensor and where in the file its data would
    # start (the data section's start plus the info's offset).
    assert "blk.0.attn_norm.weight" in str(err) and "alignment" in str(err)
    assert err.offset == file_offset, str(err)


def test_huge_array_count(tmp_path: Path) -> None:
    """An array whose count claims 2^62 elements: refused at once, with the
    count's offset (gguf-py loops until it runs off the end of the file)."""
    path = tmp_path / "count.gguf"
    path.write_bytes(SAMPLE.read_bytes())
    reader = gguf_rs.GGUFReader(path, "r+")
    field = reader.fields["tokenizer.ggml.tokens"]
    count_part = field.parts[4]
    count_at = field.offset + 8 + len(field.name) + 4 + 4
    count_part[0] = 1 << 62
    reader.data.flush()
    del reader, field, count_part
    err = ours_refuses(path)
    assert err.offset == count_at, str(err)


def test_missing_file_is_file_not_found() -> None:
    with pytest.raises(FileNotFoundError):
        gguf_rs.GGUFReader("no/such/model.gguf")


# The cases of llama.cpp's newer gguf-py reader tests
# (gguf-py/tests/test_gguf_reader_validation.py), written for both readers:
# gguf-py 0.19 predates those checks, so where it misbehaves we only check
# that ours refuses.


def one_tensor_file(path: Path, n_dims: int, dims: list[int]) -> None:
    import struct

    name = b"t"
    raw = b"GGUF" + struct.pack("<IQQ", 3, 1, 0) + struct.pack("<Q", len(name)) + name
    raw += struct.pack("<I", n_dims) + b"".join(struct.pack("<Q", d) for d in dims)
    raw += struct.pack("<IQ", 0, 0) + bytes(64)
    path.write_bytes(raw)


def one_array_file(path: Path, elem_type: int, count: int, payload: bytes) -> None:
    import struct

    key = b"arr"
    raw = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    raw += struct.pack("<IIQ", 9, elem_type, count) + payload
    path.write_bytes(raw)


def test_a_million_dimensions(tmp_path: Path) -> None:
    path = tmp_path / "ndims.gguf"
    one_tensor_file(path, 1_000_000, [1] * 8)
    err = ours_refuses(path)
    assert "dimensions" in str(err) and err.offset is not None


def test_dimensions_whose_product_overflows(tmp_path: Path) -> None:
    path = tmp_path / "overflow.gguf"
    dims = [4194305, 4194305, 211106198978564]  # the product wraps to 4 in uint64
    one_tensor_file(path, len(dims), dims)
    ours_refuses(path)


def test_array_longer_than_the_file(tmp_path: Path) -> None:
    """5,000,000 float64 (40 MB) declared in a 5 MB file: refused at once."""
    path = tmp_path / "array.gguf"
    one_array_file(path, 12, 5_000_000, bytes(5_200_008))
    err = ours_refuses(path)
    assert err.offset is not None


def test_small_and_empty_arrays_read_the_same(tmp_path: Path) -> None:
    cases = {"u8": (0, 64, b"\x01" * 64, [1] * 64), "empty": (12, 0, b"", [])}
    for name, (elem_type, count, payload, expected) in cases.items():
        path = tmp_path / f"{name}.gguf"
        one_array_file(path, elem_type, count, payload)
        # gguf-py 0.19 reads both; ours the same.
        assert gguf.GGUFReader(path).fields["arr"].contents() == expected
        field = gguf_rs.GGUFReader(path).fields["arr"]
        assert field.contents() == expected
        assert field.types == gguf.GGUFReader(path).fields["arr"].types
