#!/usr/bin/env python3
"""Fails when a module of gguf-core imports a module of a higher layer.

The layer order below is the one ARCHITECTURE.md draws; it is written here
once and the architecture document points here. A module may use modules of
its own layer or of lower ones. Two more rules:

- no import through the crate root's re-exports (`use crate::GgufFile`):
  code names the module that defines an item;
- test code (files named `tests.rs`, and everything after a file's first
  `#[cfg(test)]` or `#[cfg(all(test, ...))]`) is exempt, since tests may build fixtures with any layer.

Usage: python3 scripts/check_layers.py [gguf-core/src]
"""

import re
import sys
from pathlib import Path

# Lowest first. Modules on one line form one layer.
LAYERS = [
    ["error", "format"],  # the error names format types; format returns errors
    ["journal"],  # the in-place edit journal's on-disk format
    ["tensor"],  # the codecs
    ["read"],
    ["naming"],
    ["remote"],  # the transport behind URLs: reads headers with read/, opened by model/'s door
    ["model"],
    ["write"],
    ["metadata"],
    ["edit"],
    ["summary"],
    ["estimate", "llama_load", "quantize"],  # llama.cpp policies over the summary's header view
    ["testing"],  # fixtures for tests, never used by the library
]

LAYER_OF = {m: i for i, names in enumerate(LAYERS) for m in names}

USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", re.S | re.M)
QUALIFIED = re.compile(r"\b(crate|gguf_core)::([A-Za-z_][A-Za-z0-9_]*)")


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


def targets_of_use(tree: str, here: list[str]) -> list[list[str]]:
    """The absolute paths a `use` tree names (first segments suffice)."""
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
    resolved = []
    for p in paths:
        if not p:
            continue
        if p[0] in ("crate", "gguf_core"):
            resolved.append(p[1:])
        elif p[0] in ("super", "self"):
            base = list(here)
            q = list(p)
            while q and q[0] in ("super", "self"):
                if q.pop(0) == "super":
                    base = base[:-1]
            resolved.append(base + q)
    return resolved


def root_modules(src: Path) -> set[str]:
    return {p.stem if p.is_file() else p.name for p in src.iterdir() if p.suffix == ".rs" or p.is_dir()} - {"lib"}


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "gguf-core/src")
    modules = root_modules(src)
    unknown = sorted(modules - set(LAYER_OF))
    problems = []
    if unknown:
        problems.append(f"{src}: modules without a layer in scripts/check_layers.py: {', '.join(unknown)}")
    for file in sorted(src.rglob("*.rs")):
        if file.name == "tests.rs" or file == src / "lib.rs":
            continue
        here = module_path(src, file)
        top = here[0]
        text = strip_comments(file.read_text())
        cut = re.search(r"#\[cfg\((?:all\()?test\b", text)
        if cut:
            text = text[: cut.start()]
        found = []
        for m in USE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            for path in targets_of_use(m.group(1), here):
                found.append((line, path))
        for m in QUALIFIED.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append((line, [m.group(2)]))
        seen = set()
        for line, path in found:
            if not path or path[0] == top:
                continue
            target = path[0]
            key = (line, target)
            if key in seen:
                continue
            seen.add(key)
            where = f"{file}:{line}"
            if target not in modules:
                if target != "self":
                    problems.append(f"{where}: {top} imports `{target}` through the crate root; name its module")
                continue
            if LAYER_OF.get(target, -1) > LAYER_OF.get(top, -1):
                problems.append(
                    f"{where}: {top} (layer {LAYER_OF[top]}) imports {target} (layer {LAYER_OF[target]}), a higher layer"
                )
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} import(s) run the wrong way (layer order: scripts/check_layers.py)")
        return 1
    print(f"check_layers: {len(modules)} modules, every import runs downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
