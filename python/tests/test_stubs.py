"""The type stubs and docstrings editors complete from: every public name of
the native module is in _native.pyi with the same methods, and the
examples in the modules' docstrings run."""

from __future__ import annotations

import ast
import doctest
from pathlib import Path

import gguf_rs
import gguf_rs._native as native
import gguf_rs.builder

STUB = Path(__file__).resolve().parents[1] / "gguf_rs" / "_native.pyi"


def stubbed() -> dict[str, set[str]]:
    """Each top-level name of the stub, with its methods for a class."""
    names: dict[str, set[str]] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = set()
    return names


def test_every_native_name_and_method_is_stubbed() -> None:
    stubs = stubbed()
    public = {n for n in dir(native) if not n.startswith("_")}
    assert public == set(stubs)
    for name in public:
        obj = getattr(native, name)
        if isinstance(obj, type) and not issubclass(obj, Exception):
            methods = {m for m in vars(obj) if not m.startswith("_")}
            assert methods == {m for m in stubs[name] if not m.startswith("_")}, name


def test_the_version_is_stubbed() -> None:
    annotated = {
        node.target.id
        for node in ast.parse(STUB.read_text()).body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    assert "__version__" in annotated
    assert isinstance(native.__version__, str) and native.__version__ == gguf_rs.__version__


def test_the_new_api_has_docstrings() -> None:
    for obj in (
        gguf_rs.Editor.set,
        gguf_rs.Editor.commit,
        gguf_rs.Builder.add_tensor,
        gguf_rs.Builder.write,
        gguf_rs.Builder.write_metadata_first,
        gguf_rs.Model.summary,
        gguf_rs.Model.estimate,
        gguf_rs.ModelEditor,
        gguf_rs.ModelEditor.set,
        gguf_rs.ModelEditor.commit,
        gguf_rs.Builder.from_file,
        gguf_rs.Builder.requantize_tensor,
    ):
        assert obj.__doc__ and len(obj.__doc__) > 40, obj


def test_docstring_examples_run() -> None:
    result = doctest.testmod(gguf_rs.builder, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_the_writer_has_docstrings_and_its_example_runs() -> None:
    import gguf_rs.writer

    for obj in (gguf_rs.GGUFWriter, gguf_rs.writer, native.WriterCore.write, native.WriterCore.plan):
        assert obj.__doc__ and len(obj.__doc__) > 40, obj
    result = doctest.testmod(gguf_rs.writer, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
