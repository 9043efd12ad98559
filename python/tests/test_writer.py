"""gguf_rs.GGUFWriter against gguf-py 0.19's GGUFWriter: the same calls on
both, the files compared byte for byte.

Each case is a function of the writer class and an output path; it is run
once with gguf-py's class (taken at import, before any install()) and once
with ours, each in a directory of its own, and every file both leave is
compared. A case where gguf-py raises must raise under ours too (ours may
raise earlier: when the value is added rather than written)."""

from __future__ import annotations

import contextlib
import inspect
import io
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from gguf import constants
from gguf.constants import GGMLQuantizationType as Q
from gguf.constants import GGUFEndian, GGUFValueType as V
from gguf.gguf_writer import GGUFWriter as TheirWriter
from gguf.lazy import LazyNumpyTensor

import gguf.quants as gguf_py_quants

import gguf_rs
from gguf_rs import GGUFError, GGUFWriter as OurWriter

Case = Callable[[type, Path], None]
CASES: dict[str, Case] = {}
# Cases gguf-py refuses (when writing): ours must refuse them too.
REFUSED: set[str] = set()


def case(name: str, refused: bool = False) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        CASES[name] = fn
        if refused:
            REFUSED.add(name)
        return fn

    return register


def finish(w: Any) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def outcome(fn: Case, cls: type, out: Path) -> tuple[str, Any]:
    out.mkdir(parents=True)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as stdout:
            fn(cls, out / "m.gguf")
    except SystemExit:
        return "exit", stdout.getvalue().replace(str(out), "OUT")
    except Exception as e:  # noqa: BLE001 - compared below
        return "raised", e
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert files and all(len(b) > 24 for b in files.values()), f"{fn.__name__} under {cls.__module__} wrote {files.keys()}"
    return "files", files


def compare(name: str, tmp: Path) -> str | None:
    """None when both writers agree, else what differs."""
    fn = CASES[name]
    theirs = outcome(fn, TheirWriter, tmp / "theirs")
    ours = outcome(fn, OurWriter, tmp / "ours")
    if (theirs[0] == "raised") != (name in REFUSED):
        return f"gguf-py: {theirs[0]} {theirs[1]!r}" if theirs[0] == "raised" else "gguf-py did not refuse it"
    if theirs[0] == "raised":
        if ours[0] != "raised":
            return f"gguf-py raised {theirs[1]!r}, ours did not"
        if isinstance(theirs[1], ValueError) and not isinstance(ours[1], ValueError):
            return f"gguf-py raised {theirs[1]!r}, ours {ours[1]!r}"
        return None
    if ours[0] == "raised":
        return f"ours raised {ours[1]!r}"
    if theirs[0] != ours[0]:
        return f"{theirs[0]} vs {ours[0]}"
    if theirs[0] == "exit":
        return None if theirs[1] == ours[1] else f"printed {theirs[1]!r} vs {ours[1]!r}"
    a, b = theirs[1], ours[1]
    if a.keys() != b.keys():
        return f"files {sorted(a)} vs {sorted(b)}"
    for f in a:
        if a[f] != b[f]:
            at = next((i for i, (x, y) in enumerate(zip(a[f], b[f])) if x != y), min(len(a[f]), len(b[f])))
            return f"{f}: {len(a[f])} vs {len(b[f])} bytes, first difference at {at}"
    return None


# ---- values ----

SCALARS: list[tuple[V, list[Any]]] = [
    (V.UINT8, [0, 1, 255, np.uint8(7)]),
    (V.INT8, [-128, 0, 127]),
    (V.UINT16, [0, 65535]),
    (V.INT16, [-32768, 32767]),
    (V.UINT32, [0, 2**32 - 1, True]),
    (V.INT32, [-(2**31), 2**31 - 1, np.int64(-5)]),
    (V.UINT64, [0, 2**64 - 1]),
    (V.INT64, [-(2**63), 2**63 - 1]),
    (V.FLOAT32, [0.0, -0.0, 1.5, 1e-45, 3.4e38, float("inf"), float("-inf"), float("nan"), 0.1, 7, np.float64(2.5)]),
    (V.FLOAT64, [0.0, -0.0, 0.1, 1e308, 5e-324, float("inf"), float("nan"), 3]),
    (V.BOOL, [True, False, 0, 2, "x"]),
    (V.STRING, ["", "hello", "ünïcödé ✓", "a\x00b", b"raw bytes", "x" * 1000]),
]

for vt, values in SCALARS:

    @case(f"scalar {vt.name}")
    def _scalar(cls: type, path: Path, vt: V = vt, values: list[Any] = values) -> None:
        w = cls(path, "llama")
        for i, v in enumerate(values):
            w.add_key_value(f"test.{vt.name.lower()}.{i}", v, vt)
        finish(w)

    @case(f"array of {vt.name}")
    def _array(cls: type, path: Path, vt: V = vt, values: list[Any] = values) -> None:
        w = cls(path, "llama")
        w.add_key_value(f"test.array.{vt.name.lower()}", list(values), V.ARRAY, sub_type=vt)
        w.add_key_value(f"test.one.{vt.name.lower()}", values[:1], V.ARRAY, sub_type=vt)
        finish(w)


IMPLIED_ARRAYS: dict[str, Any] = {
    "ints": [1, -2, 3],
    "floats": [0.5, -1.25, 1e30],
    "bools": [True, False, True],
    "strings": ["a", "", "ccc"],
    "bytes": b"\x00\x01\xff",
    "bytes strings": [b"x", bytearray(b"yy"), "z"],
    "tuple": (1, 2, 3),
    "str as array": "abc",
    "nested": [[1, 2], [3], [4, 5, 6]],
    "nested strings": [["a", "b"], ["c"]],
    "nested floats": [[0.5], [1.5, 2.5]],
    "twice nested": [[[1], [2, 3]], [[4]]],
    "nested bytes": [b"ab", b"c"],
    "mixed": [1, "a"],
    "mixed int bool": [1, True],
    "nested empty": [[1], []],
    "numpy": np.arange(3, dtype=np.int32),
    "numpy items": [np.int32(1), np.int32(2)],
}

for label, val in IMPLIED_ARRAYS.items():

    @case(f"add_array {label}", refused=label in ("mixed", "mixed int bool", "nested empty", "numpy", "numpy items"))
    def _implied(cls: type, path: Path, val: Any = val) -> None:
        w = cls(path, "llama")
        w.add_array("test.array", val)
        finish(w)


@case("empty arrays and strings are skipped")
def _empty(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_array("test.empty", [])
    w.add_string("test.empty_string", "")
    w.add_uint32("test.after", 1)
    finish(w)


@case("empty array through add_key_value", refused=True)
def _empty_kv(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_key_value("test.empty", [], V.ARRAY)
    finish(w)


@case("out of range u8", refused=True)
def _out_of_range(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_uint8("test.x", 256)
    finish(w)


@case("f32 overflow", refused=True)
def _f32_overflow(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_float32("test.x", 1e39)
    finish(w)


@case("float for an int", refused=True)
def _float_for_int(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_uint32("test.x", 1.5)
    finish(w)


@case("duplicate key keeps its place, takes the new type")
def _duplicate(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_uint32("test.a", 1)
    w.add_uint32("test.b", 2)
    w.add_string("test.a", "now a string")
    w.add_architecture()
    finish(w)


# ---- every add_* convenience method, by its signature ----

def plausible(annotation: str) -> list[Any] | None:
    """Arguments for a parameter annotated `annotation` (one per form a
    union allows), or None when there is no plausible one."""
    forms = {
        "int": 7,
        "float": 0.25,
        "bool": True,
        "str": "text",
        "bytes": b"\x00\x01charsmap",
        "Sequence[int]": [1, 2, 3],
        "Sequence[float]": [0.5, 1.5],
        "Sequence[str]": ["a", "b"],
        "Sequence[bool]": [True, False, True],
        "Sequence[bytes]": [b"a", b"b"],
        "Sequence[bytearray]": [bytearray(b"a")],
        "Sequence[TokenType]": [constants.TokenType.NORMAL, constants.TokenType.CONTROL],
        "Sequence[Mapping[str, str]]": [{"name": "default", "template": "{{x}}"}, {"name": "tool_use", "template": "t"}],
    }
    out = []
    for part in annotation.split(" | "):
        part = part.strip()
        if part in forms:
            out.append(forms[part])
        elif hasattr(constants, part) and hasattr(getattr(constants, part), "__members__"):
            out.append(next(iter(getattr(constants, part))))
        else:
            return None
    return out


# Called with their own arguments elsewhere, or the writer's machinery.
NOT_CONVENIENCE = {"add_key_value", "add_tensor", "add_tensor_info", "add_array", "add_shard_kv_data"}
UNCOVERED: list[str] = []

for method_name, method in sorted(inspect.getmembers(TheirWriter, inspect.isfunction)):
    if not method_name.startswith("add_") or method_name in NOT_CONVENIENCE:
        continue
    params = list(inspect.signature(method).parameters.values())[1:]
    per_param = [plausible(str(p.annotation)) for p in params]
    if any(a is None for a in per_param):
        UNCOVERED.append(method_name)
        continue
    n_forms = max((len(a) for a in per_param), default=1)
    for form in range(n_forms):
        args = [a[min(form, len(a) - 1)] for a in per_param]

        # gguf-py checks the alignment; 7 is not a power of two.
        @case(f"{method_name} form {form}", refused=method_name == "add_custom_alignment")
        def _method(cls: type, path: Path, method_name: str = method_name, args: list[Any] = args) -> None:
            w = cls(path, "llama")
            getattr(w, method_name)(*args)
            finish(w)


# ---- tensors ----

RNG = np.random.default_rng(1)
F32 = RNG.standard_normal((4, 64)).astype(np.float32)


Q8 = gguf_py_quants.quantize(F32, Q.Q8_0)
Q4 = gguf_py_quants.quantize(RNG.standard_normal((2, 256)).astype(np.float32), Q.Q4_0)
BF16 = (F32.view(np.uint32) >> 16).astype(np.uint16)


def tensors_of_every_kind() -> list[tuple[str, Any, dict[str, Any]]]:
    q8, q4, bf16 = Q8, Q4, BF16
    return [
        ("f32", F32, {}),
        ("f16", F32.astype(np.float16), {}),
        ("f64", F32[:1].astype(np.float64), {}),
        ("i8", np.arange(-5, 5, dtype=np.int8), {}),
        ("i16", np.arange(6, dtype=np.int16).reshape(2, 3), {}),
        ("i32", np.arange(24, dtype=np.int32).reshape(2, 3, 4), {}),
        ("i64", np.arange(16, dtype=np.int64).reshape(1, 2, 2, 4), {}),
        ("bf16", bf16, {"raw_dtype": Q.BF16}),
        ("q8_0", q8, {"raw_dtype": Q.Q8_0}),
        ("q4_0 flat", q4.reshape(-1), {"raw_shape": q4.shape, "raw_dtype": Q.Q4_0}),
        ("transposed", F32.T, {}),
        ("fortran", np.asfortranarray(F32), {}),
        ("scalar", np.array(3.5, dtype=np.float32), {}),
        ("one", np.ones(1, dtype=np.float32), {}),
    ]


def add_all(w: Any, lazy: bool = False) -> None:
    for name, t, kw in tensors_of_every_kind():
        w.add_tensor(name, LazyNumpyTensor.from_eager(t) if lazy else t, **kw)


for endian in (GGUFEndian.LITTLE, GGUFEndian.BIG):
    for temp in (False, True):

        @case(f"tensors of every kind, {endian.name}{', temp file' if temp else ''}")
        def _tensors(cls: type, path: Path, endian: GGUFEndian = endian, temp: bool = temp) -> None:
            w = cls(path, "llama", endianess=endian, use_temp_file=temp)
            w.add_uint32("test.n", 5)
            w.add_array("test.list", [1.5, 2.5])
            w.add_string("test.s", "big or little")
            add_all(w)
            finish(w)

    @case(f"tensors given in the file's byte order, {endian.name}")
    def _given_order(cls: type, path: Path, endian: GGUFEndian = endian) -> None:
        w = cls(path, "llama", endianess=endian)
        t = F32.byteswap() if endian == GGUFEndian.BIG else F32
        w.add_tensor("t", t, tensor_endianess=endian)
        finish(w)


@case("lazy tensors from eager")
def _lazy(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    add_all(w, lazy=True)
    finish(w)


@case("lazy tensors through operations")
def _lazy_ops(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    base = LazyNumpyTensor.from_eager(F32)
    w.add_tensor("half", base.astype(np.float16))
    w.add_tensor("scaled", base * 2)
    w.add_tensor("reshaped", base.reshape(8, 32))
    w.add_tensor("bf16", gguf_py_quants.quantize(base, Q.BF16), raw_dtype=Q.BF16)
    w.add_tensor("q8", gguf_py_quants.quantize(base, Q.Q8_0), raw_dtype=Q.Q8_0)
    finish(w)


@case("lazy tensor from a meta tensor and a function")
def _lazy_func(cls: type, path: Path) -> None:
    w = cls(path, "llama", endianess=GGUFEndian.BIG)
    meta = LazyNumpyTensor.meta_with_dtype_and_shape(np.float32, (4, 64))
    w.add_tensor("made", LazyNumpyTensor(meta=meta, args=(), func=lambda: F32.copy()))
    finish(w)


for align in (1, 64, 256):

    @case(f"alignment {align}")
    def _align(cls: type, path: Path, align: int = align) -> None:
        w = cls(path, "llama")
        w.add_custom_alignment(align)
        add_all(w)
        finish(w)


SPLITS: dict[str, dict[str, Any]] = {
    "by tensor count": {"split_max_tensors": 3},
    "by tensor count 1": {"split_max_tensors": 1},
    "by size": {"split_max_size": 3000},
    "by size smaller than a tensor": {"split_max_size": 10},
    "by count and size": {"split_max_tensors": 4, "split_max_size": 2000},
    "small first shard": {"small_first_shard": True},
    "small first shard and count": {"small_first_shard": True, "split_max_tensors": 5},
    "limits not reached": {"split_max_tensors": 100, "split_max_size": 10**9},
}

for label, kw in SPLITS.items():

    @case(f"split {label}")
    def _split(cls: type, path: Path, kw: dict[str, Any] = kw) -> None:
        w = cls(path, "llama", **kw)
        w.add_uint32("test.n", 1)
        add_all(w)
        finish(w)

    @case(f"split {label}, big-endian, progress")
    def _split_big(cls: type, path: Path, kw: dict[str, Any] = kw) -> None:
        w = cls(path, "llama", endianess=GGUFEndian.BIG, **kw)
        add_all(w, lazy=True)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file(progress=True)
        w.close()


@case("dry run")
def _dry_run(cls: type, path: Path) -> None:
    w = cls(path, "llama", dry_run=True, split_max_tensors=4)
    add_all(w)
    finish(w)


@case("no tensors")
def _no_tensors(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_name("metadata only")
    finish(w)


@case("vocabulary only: header and metadata, then close")
def _vocab_only(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_token_list(["<s>", "</s>", "a"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()


@case("header path given to write_header_to_file")
def _header_path(cls: type, path: Path) -> None:
    w = cls(None, "llama")
    add_all(w)
    w.write_header_to_file(path=path)
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


for kw_label, kw in {"": {}, ", big-endian": {"endianess": GGUFEndian.BIG}, ", split": {"split_max_tensors": 4}}.items():

    @case(f"add_tensor_info and write_tensor_data{kw_label}")
    def _infos(cls: type, path: Path, kw: dict[str, Any] = kw) -> None:
        w = cls(path, "llama", **kw)
        w.add_uint32("test.n", 1)
        kinds = tensors_of_every_kind()
        for name, t, extra in kinds:
            shape = extra.get("raw_shape", t.shape)
            w.add_tensor_info(name, shape, t.dtype, t.nbytes, raw_dtype=extra.get("raw_dtype"))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_ti_data_to_file()
        for _, t, _ in kinds:
            w.write_tensor_data(t)
        w.close()


@case("write_tensor_data of another byte order")
def _infos_swapped(cls: type, path: Path) -> None:
    w = cls(path, "llama")
    w.add_tensor_info("t", F32.shape, F32.dtype, F32.nbytes)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.write_tensor_data(F32.byteswap(), tensor_endianess=GGUFEndian.BIG)
    w.close()


def test_writer_cases_are_byte_identical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failures = {}
    for i, name in enumerate(CASES):
        why = compare(name, tmp_path / str(i))
        if why is not None:
            failures[name] = why
    n = len(CASES) - len(REFUSED)
    same = n - len(failures.keys() - REFUSED)
    refused = len(REFUSED) - len(failures.keys() & REFUSED)
    with capsys.disabled():
        print(
            f"\nwriter: {same}/{n} cases byte-identical, {refused}/{len(REFUSED)} refused by both"
            f" (add_* methods without a plausible argument: {UNCOVERED or 'none'})"
        )
    assert not failures, "\n".join(f"{k}: {v}" for k, v in failures.items())


# ---- behaviour beyond the bytes ----

def test_same_parameter_count_and_plan(tmp_path: Path) -> None:
    ws = [cls(tmp_path / "m.gguf", "llama", split_max_tensors=3) for cls in (TheirWriter, OurWriter)]
    for w in ws:
        w.add_tensor("blk.0.ffn_up_exps.weight", np.zeros((4, 8, 16), dtype=np.float32))
        w.add_tensor("blk.0.attn_q.weight", np.zeros((16, 16), dtype=np.float16))
        add_all(w)
    assert ws[0].get_total_parameter_count() == ws[1].get_total_parameter_count()
    assert ws[0].format_shard_names(tmp_path / "m.gguf") == ws[1].format_shard_names(tmp_path / "m.gguf")
    theirs = [{k: (tuple(v.shape), v.dtype, v.nbytes) for k, v in s.items()} for s in ws[0].tensors]
    ours = [{k: (tuple(v.shape), v.dtype, v.nbytes) for k, v in s.items()} for s in ws[1].tensors]
    assert theirs == ours


def test_kv_data_as_gguf_pys(tmp_path: Path) -> None:
    ws = [cls(tmp_path / "m.gguf", "llama") for cls in (TheirWriter, OurWriter)]
    for w in ws:
        w.add_uint8("a", 3)
        w.add_float64("b", 0.5)
        w.add_bool("c", True)
        w.add_token_list(["x", "y"])
        w.add_key_value("n", [[1, 2], [3]], V.ARRAY)
        w.add_key_value("f", [1.5], V.ARRAY, sub_type=V.FLOAT32)
    theirs = ws[0].kv_data[0]
    ours = ws[1].kv_data[0]
    assert list(theirs) == list(ours)
    for k in theirs:
        assert (ours[k].value, ours[k].type) == (theirs[k].value, theirs[k].type), k
    assert ours["tokenizer.ggml.tokens"].sub_type == V.STRING and ours["f"].sub_type == V.FLOAT32


def test_lazy_tensors_are_computed_when_written(tmp_path: Path) -> None:
    made: list[str] = []

    def maker(name: str) -> Any:
        def make() -> np.ndarray:
            made.append(name)
            return F32.copy()

        return LazyNumpyTensor(meta=LazyNumpyTensor.meta_with_dtype_and_shape(np.float32, F32.shape), args=(), func=make)

    w = OurWriter(tmp_path / "m.gguf", "llama")
    for name in ("a", "b", "c"):
        w.add_tensor(name, maker(name))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    assert made == []
    w.write_tensors_to_file()
    w.close()
    assert made == ["a", "b", "c"]


def test_refusals(tmp_path: Path) -> None:
    w = OurWriter(tmp_path / "m.gguf", "llama")
    w.add_tensor("t", F32)
    with pytest.raises(ValueError, match="Duplicated tensor name"):
        w.add_tensor("t", F32)
    with pytest.raises(GGUFError, match="alignment"):
        w.add_uint32("general.alignment", 48)
    with pytest.raises(GGUFError, match="u8"):
        w.add_uint8("test.x", -1)
    with pytest.raises(GGUFError, match="UTF-8"):
        w.add_string("test.x", b"\xff")
    with pytest.raises(GGUFError, match="bytes"):
        w.add_tensor_info("bad", (4, 64), np.float32, 12)
    with pytest.raises(ValueError, match="Only F16"):
        w.add_tensor("u", np.zeros(3, dtype=np.uint32))
    with pytest.raises(ValueError, match="same type"):
        w.add_array("test.mixed", [1, "a"])


def test_alignment_must_agree(tmp_path: Path) -> None:
    w = OurWriter(tmp_path / "m.gguf", "llama")
    w.data_alignment = 64
    w.add_tensor("t", F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    with pytest.raises(GGUFError, match="add_custom_alignment"):
        w.write_tensors_to_file()
    assert list(tmp_path.iterdir()) == []


def test_failed_writes_leave_nothing(tmp_path: Path) -> None:
    target = tmp_path / "m.gguf"
    target.write_bytes(b"before")

    def broken() -> np.ndarray:
        raise RuntimeError("the source is gone")

    w = OurWriter(target, "llama", split_max_tensors=1)
    w.add_tensor("a", F32)
    meta = LazyNumpyTensor.meta_with_dtype_and_shape(np.float32, F32.shape)
    w.add_tensor("b", LazyNumpyTensor(meta=meta, args=(), func=broken))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    with pytest.raises(RuntimeError, match="the source is gone"):
        w.write_tensors_to_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.gguf"]
    assert target.read_bytes() == b"before"

    # Tensor data never written: close() refuses, nothing is written.
    w = OurWriter(target, "llama")
    for name in ("a", "b"):
        w.add_tensor_info(name, F32.shape, F32.dtype, F32.nbytes)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.write_tensor_data(F32)
    with pytest.raises(GGUFError, match="closed before"):
        w.close()
    with pytest.raises(GGUFError, match="bytes"):
        OurWriter(target, "llama").add_tensor_info("x", (2,), np.float32, 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.gguf"]
    assert target.read_bytes() == b"before"


def test_context_manager_discards_on_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError):
        with OurWriter(tmp_path / "m.gguf", "llama") as w:
            w.add_tensor_info("a", F32.shape, F32.dtype, F32.nbytes)
            w.write_header_to_file()
            w.write_kv_data_to_file()
            w.write_ti_data_to_file()
            raise KeyError("stop")
    assert list(tmp_path.iterdir()) == []


def test_state_errors_are_gguf_pys(tmp_path: Path) -> None:
    for cls in (TheirWriter, OurWriter):
        w = cls(tmp_path / f"{cls.__module__}.gguf", "llama")
        with pytest.raises(ValueError, match="Expected output file to contain the header"):
            w.write_kv_data_to_file()
        w.write_header_to_file()
        with pytest.raises(ValueError, match="Expected output file to be not yet opened"):
            w.add_tensor("t", F32)


def test_install_swaps_the_writer_and_quantize() -> None:
    import gguf
    import gguf.gguf_writer
    import gguf.quants

    theirs = (gguf.GGUFWriter, gguf.gguf_writer.GGUFWriter, gguf.quants.quantize, gguf.quantize)
    gguf_rs.install()
    try:
        assert gguf.GGUFWriter is gguf.gguf_writer.GGUFWriter is OurWriter
        assert gguf.quants.quantize is gguf.quantize is gguf_rs.quants.quantize
    finally:
        gguf_rs.uninstall()
    assert (gguf.GGUFWriter, gguf.gguf_writer.GGUFWriter, gguf.quants.quantize, gguf.quantize) == theirs
    assert TheirWriter is theirs[0]
