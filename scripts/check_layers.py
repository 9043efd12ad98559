#!/usr/bin/env python3
"""Fails when a module of gguf-core imports a module of a higher layer.

The layer order below (LAYERS, and SUBLAYERS for the files inside a module)
is written here once; ARCHITECTURE.md draws it and points here. A module may
use modules of its own layer or of lower ones. The rules:

- an import (`use crate::...`, `use super::...`, or a path written inline,
  `crate::x::f()`, `super::x::f()`) may not name a module of a higher layer;
- inside a module listed in SUBLAYERS, the same holds between its files:
  `mod.rs` (named `mod` there) counts as one file, so `super::Name` for an
  item that `mod.rs` defines or re-exports is an import of `mod`;
- no import through the crate root's re-exports (`use crate::GgufFile`):
  code names the module that defines an item. This rule holds in test code
  too;
- test code (files named `tests.rs`, and everything after a file's first
  `#[cfg(test)]` or `#[cfg(all(test, ...))]`) is exempt from the layer
  rules, since tests may build fixtures with any layer.

Usage: python3 scripts/check_layers.py [gguf-core/src]
       python3 scripts/check_layers.py --self-test
"""

import re
import sys
import tempfile
from pathlib import Path

# Lowest first. Modules on one line form one layer.
LAYERS = [
    ["error", "format"],  # the error names format types; format returns errors
    ["journal"],  # the in-place edit journal's on-disk format
    ["codec"],  # the codecs
    ["read"],
    ["naming"],
    ["remote"],  # the transport behind URLs: reads headers with read/, opened by model/'s door
    ["model"],
    ["write"],
    ["metadata"],
    ["edit"],
    ["summary"],
    ["estimate", "llama_load", "quantize", "tokenizer"],  # llama.cpp policies over the summary's header view; its tokenizer
    ["import"],  # Hugging Face checkpoints -> the converter's GGUF (quantized through quantize)
    ["testing"],  # fixtures for tests, never used by the library
]

# The files of a module, lowest first, for the modules whose files are
# ordered too. `mod` is the module's mod.rs.
SUBLAYERS = {
    "edit": [["journal"], ["editor"], ["model_editor"], ["mod"]],
    "remote": [
        ["redact", "redirect"],  # URL helpers: redaction, redirects, error chains
        ["backend"],  # the range-source trait and the identity check
        ["http", "store_http"],
        ["store"],
        ["ollama"],
        ["location"],  # pure location parsing
        ["split", "mod"],  # the dispatcher
    ],
}

USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", re.S | re.M)
# A path written inline: `crate::a::b`, `gguf_core::a`, `super::super::a`.
QUALIFIED = re.compile(
    r"(?<![\w:])((?:crate|gguf_core|self|super)(?:::(?:[A-Za-z_][A-Za-z0-9_]*|\*))+)"
)
TEST_CUT = re.compile(r"#\[cfg\((?:all\()?test\b")


def strip_comments(text: str) -> str:
    """Blanks out comments (keeping line numbers) and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and i + 2 < n and (text[i + 2] == "'" or text[i + 1] == "\\"):
            # A char literal ('"', '\n'); lifetimes ('a) are left alone.
            j = text.find("'", i + 2)
            i = j + 1 if j >= 0 else n
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_path(src: Path, file: Path) -> list[str]:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return parts


def resolve(path: list[str], here: list[str]) -> list[str] | None:
    """The absolute module path (below the crate root) that `path` names."""
    if not path:
        return None
    if path[0] in ("crate", "gguf_core"):
        return path[1:]
    if path[0] in ("super", "self"):
        base, q = list(here), list(path)
        while q and q[0] in ("super", "self"):
            if q.pop(0) == "super":
                base = base[:-1]
        return base + q
    return None


def targets_of_use(tree: str, here: list[str]) -> list[list[str]]:
    """The absolute paths a `use` tree names."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", tree))
    paths = []

    def walk(prefix: list[str], t: str):
        if t.startswith("{") and t.endswith("}"):
            depth, start = 0, 1
            for k in range(1, len(t) - 1):
                if t[k] == "{":
                    depth += 1
                elif t[k] == "}":
                    depth -= 1
                elif t[k] == "," and depth == 0:
                    walk(prefix, t[start:k])
                    start = k + 1
            walk(prefix, t[start:-1])
            return
        if not t:
            return
        head, sep, rest = t.partition("::")
        head = head.split("@")[0]
        if sep:
            walk(prefix + [head], rest)
        else:
            paths.append(prefix + [head])

    walk([], tree)
    return [r for r in (resolve(p, here) for p in paths) if r is not None]


def root_modules(src: Path) -> set[str]:
    return {p.stem if p.is_file() else p.name for p in src.iterdir() if p.suffix == ".rs" or p.is_dir()} - {"lib"}


def children(src: Path, module: str) -> set[str]:
    d = src / module
    if not d.is_dir():
        return set()
    return {p.stem if p.is_file() else p.name for p in d.iterdir() if p.suffix == ".rs" or p.is_dir()} - {"mod"}


INLINE_MOD = re.compile(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")


def inline_modules(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every inline `mod name { ... }` in `text`."""
    spans = []
    for m in INLINE_MOD.finditer(text):
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        spans.append((m.start(), j, m.group(1)))
    return spans


def imports(text: str, here: list[str]) -> list[tuple[int, list[str]]]:
    """(line, absolute path) of every import and inline path in `text`,
    in line order; `super` inside an inline `mod x { }` starts from x."""
    spans = inline_modules(text)

    def module_at(pos: int) -> list[str]:
        return here + [name for start, end, name in spans if start < pos < end]

    found = []
    for m in USE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        for path in targets_of_use(m.group(1), module_at(m.start())):
            found.append((line, path))
    for m in QUALIFIED.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        path = resolve(m.group(1).split("::"), module_at(m.start()))
        if path is not None:
            found.append((line, path))
    return sorted(found, key=lambda f: f[0])


def check(src: Path) -> list[str]:
    """Every import of the tree at `src` that runs the wrong way."""
    modules = root_modules(src)
    layer_of = {m: i for i, names in enumerate(LAYERS) for m in names}
    problems = []
    unknown = sorted(modules - set(layer_of))
    if unknown:
        problems.append(f"{src}: modules without a layer in scripts/check_layers.py: {', '.join(unknown)}")
    sublayer_of, files_of = {}, {}
    for module, order in SUBLAYERS.items():
        sublayer_of[module] = {f: i for i, names in enumerate(order) for f in names}
        files_of[module] = children(src, module)
        if module not in modules:
            continue
        missing = sorted(files_of[module] - set(sublayer_of[module]))
        if missing:
            problems.append(
                f"{src / module}: files without a layer in scripts/check_layers.py (SUBLAYERS): {', '.join(missing)}"
            )
    for file in sorted(src.rglob("*.rs")):
        if file == src / "lib.rs":
            continue
        here = module_path(src, file)
        top = here[0]
        text = strip_comments(file.read_text())
        cut = TEST_CUT.search(text)
        test_from = 0 if file.name == "tests.rs" else (cut.start() if cut else len(text))
        test_line = text.count("\n", 0, test_from) + 1
        reported = set()

        def report(problem: str):
            if problem not in reported:
                reported.add(problem)
                problems.append(problem)

        for line, path in imports(text, here):
            if not path:
                continue
            where = f"{file}:{line}"
            target = path[0]
            if target not in modules:
                if target not in ("self", "*"):
                    report(f"{where}: {top} imports `{target}` through the crate root; name its module")
                continue
            if line >= test_line:
                continue
            if target != top:
                if layer_of.get(target, -1) > layer_of.get(top, -1):
                    report(
                        f"{where}: {top} (layer {layer_of[top]}) imports {target} (layer {layer_of[target]}), a higher layer"
                    )
                continue
            if top not in SUBLAYERS:
                continue
            order = sublayer_of[top]
            own = here[1] if len(here) > 1 else "mod"
            other = path[1] if len(path) > 1 and path[1] in files_of[top] else "mod"
            if own == other or own not in order or other not in order:
                continue
            if order[other] > order[own]:
                report(
                    f"{where}: {top}/{own} (file layer {order[own]}) imports {top}/{other} "
                    f"(file layer {order[other]}), a higher layer"
                )
    return problems


def self_test() -> int:
    """Runs the check on small trees with one import each, good or bad."""
    cases = [
        # (file, line of Rust, problems expected)
        ("read/mod.rs", "use crate::error::Error;", 0),
        ("read/mod.rs", "use crate::edit::Editor;", 1),
        ("read/mod.rs", "use crate::{error::Error, write::Builder};", 1),
        ("read/mod.rs", "fn f() { crate::write::sync_dir(); }", 1),
        ("read/mod.rs", "use super::edit::Editor;", 1),
        ("read/tensor.rs", "use super::super::edit::Editor;", 1),
        ("read/tensor.rs", "use super::GgufFile;", 0),
        ("read/mod.rs", "use crate::GgufFile;", 1),
        ("read/mod.rs", "// use crate::edit::Editor;", 0),
        ("read/mod.rs", 'const S: &str = "use crate::edit::Editor;";', 0),
        ("read/mod.rs", "#[cfg(test)]\nmod tests { use crate::edit::Editor; }", 0),
        ("read/mod.rs", "#[cfg(test)]\nmod tests { use crate::GgufFile; }", 1),
        ("read/tests.rs", "use crate::write::Builder;", 0),
        ("edit/editor.rs", "use crate::read::GgufFile;", 0),
        ("edit/editor.rs", "use super::journal::write;", 0),
        ("edit/journal.rs", "use super::editor::Editor;", 1),
        ("edit/journal.rs", "use super::Editor;", 1),  # through mod.rs, the top file
        ("edit/journal.rs", "fn f() { super::editor::open(); }", 1),
        ("edit/mod.rs", "pub use editor::Editor; use self::journal::recover;", 0),
        ("nothing/mod.rs", "", 1),  # a module without a layer
        ("journal.rs", "fn f() {}\n#[cfg(test)]\nmod tests { use super::f; }", 0),
        ("journal.rs", "mod inner { fn g() { super::super::edit::f(); } }", 1),
        ("read/tensor.rs", "mod a { mod b { use super::super::GgufFile; } }", 0),
    ]
    failures = 0
    for file, line, expected in cases:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp)
            for m in ("error.rs", "read/mod.rs", "read/tensor.rs", "write/mod.rs", "edit/mod.rs"):
                (src / m).parent.mkdir(parents=True, exist_ok=True)
                (src / m).write_text("")
            for f in ("journal", "editor", "model_editor"):
                (src / "edit" / f"{f}.rs").write_text("")
            (src / "lib.rs").write_text("pub use read::GgufFile;\n")
            (src / file).parent.mkdir(parents=True, exist_ok=True)
            (src / file).write_text(line + "\n")
            problems = check(src)
        if len(problems) != expected:
            failures += 1
            print(f"self-test: {file}: {line!r}: expected {expected} problem(s), got {problems}")
    if failures:
        print(f"check_layers self-test: {failures} of {len(cases)} cases failed")
        return 1
    print(f"check_layers self-test: {len(cases)} cases pass")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "gguf-core/src")
    problems = check(src)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} import(s) run the wrong way (layer order: scripts/check_layers.py)")
        return 1
    print(f"check_layers: {len(root_modules(src))} modules, every import runs downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
