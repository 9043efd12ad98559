#!/usr/bin/env python3
"""Fails when a crate of the workspace depends on a higher crate, or a
module of a library crate imports a module of a higher layer.

Both orders are written here once; ARCHITECTURE.md draws them and points
here.

Crates (CRATE_LAYERS): each package's path dependencies ([dependencies],
[dev-dependencies], [build-dependencies], also per target) must be crates
of a lower layer; crates on one line are independent of each other. The
only exceptions are the dev-dependencies in UPWARD_DEV_DEPENDENCIES, each
with its reason (a dev-dependency without a version is dropped from the
published manifest, so it cannot form a cycle on crates.io).

Modules (CRATES[...].layers): a module may use modules of its own layer or
of lower ones. The rules:

- an import (`use crate::...`, `use super::...`, or a path written inline,
  `crate::x::f()`, `super::x::f()`) may not name a module of a higher layer;
  paths into other crates (`gguf_core::...` in the crates above gguf-core)
  are the crate-level check's business and always run downward;
- inside a module listed in the crate's sublayers, the same holds between
  its files: `mod.rs` (named `mod` there) counts as one file, so
  `super::Name` for an item that `mod.rs` defines or re-exports is an
  import of `mod`;
- no import through the crate root's re-exports (`use crate::GgufFile`):
  code names the module that defines an item. This rule holds in test code
  too. A module naming its own item that way (`super::Error` in
  `error.rs`) crosses no boundary and is not counted;
- an item that `lib.rs` itself defines (gguf-tokenizer's `Tokenizer`)
  belongs to the pseudo-module `lib`, which then
  needs a layer; `lib.rs`'s own imports are not checked (it declares and
  re-exports every module);
- test code (files named `tests.rs`, and everything after a file's first
  `#[cfg(test)]` or `#[cfg(all(test, ...))]`) is exempt from the layer
  rules, since tests may build fixtures with any layer; a crate's root
  `tests.rs` needs no layer.

Usage: python3 scripts/check_layers.py [WORKSPACE_ROOT]
       python3 scripts/check_layers.py --self-test
"""

import re
import sys
import tempfile
import tomllib
from pathlib import Path

# The workspace's packages, lowest first. Packages on one line form one
# layer and do not depend on each other.
CRATE_LAYERS = [
    # proc macros: wire codecs, typed metadata; minijinja with gguf-chat's patches (third-party code)
    ["gguf-derive", "gguf-minijinja"],
    ["gguf-core"],  # the format: read, write, edit, codecs, the model door
    ["gguf-tokenizer", "gguf-llama"],  # llama.cpp's tokenizer; its policies (summary, estimate, loader, quantize)
    # Hugging Face checkpoints -> GGUF (quantized through gguf-llama); chat templates (over the tokenizer)
    ["gguf-import", "gguf-chat"],
    ["gguf-kit"],  # the facade (`gguf`) and the CLI
    ["gguf-rs-python"],  # the Python package's extension module
]

# (package, dependency) -> why a dev-dependency may run upward.
UPWARD_DEV_DEPENDENCIES = {
    ("gguf-derive", "gguf-core"): "the derives' tests expand into code that names gguf-core; "
    "without a version, the published manifest drops it",
}


class Crate:
    """A library crate's module order."""

    def __init__(self, src: str, name: str, layers: list[list[str]], sublayers: dict | None = None):
        self.src = src  # relative to the workspace root
        self.name = name  # the crate's own name in paths (`gguf_core::...` inside gguf-core)
        self.layers = layers  # modules, lowest first; modules on one line form one layer
        self.sublayers = sublayers or {}  # module -> its files, lowest first (`mod` is mod.rs)


CRATES = {
    "gguf-derive": Crate(
        "gguf-derive/src",
        "gguf_derive",
        [["codec", "metadata"]],  # two derives, independent of each other
        {
            "codec": [["parse"], ["codegen"], ["mod"]],
            "metadata": [["parse"], ["codegen"], ["mod"]],
        },
    ),
    "gguf-core": Crate(
        "gguf-core/src",
        "gguf_core",
        [
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
            ["testing"],  # fixtures for tests, never used by the library
        ],
        {
            "edit": [["journal"], ["editor"], ["model_editor"], ["mod"]],
            # write/modes.rs and read/incremental.rs as rooms, lowest first
            "write/modes": [
                ["options"],  # WriteMode, WriteOptions, Progress
                ["sink"],  # zeros, the data sinks
                ["kernel"],  # kernel-side copies of mapped tensors
                ["single"],  # the single pass: write, to_vec, the data
                ["reserve"],  # header space first, header last
                ["metadata_first"],  # the header now, tensors later
                ["output"],  # Output, write_with, write_to_path
                ["mod"],
                ["tests"],
            ],
            "read/incremental": [
                ["options"],  # ReadOptions and its defaults
                ["read_at"],  # positioned reads over files and streams
                ["walk"],  # the smallest header end
                ["parser"],  # HeaderParser, the state machine
                ["driver"],  # read_header: the parser over a source
                ["mod"],
                ["tests"],
            ],
            "remote": [
                ["redact", "redirect"],  # URL helpers: redaction, redirects, error chains
                ["backend"],  # the range-source trait and the identity check
                ["http", "store_http"],
                ["store"],
                ["ollama"],
                ["location"],  # pure location parsing
                ["split", "mod"],  # the dispatcher
            ],
        },
    ),
    "gguf-tokenizer": Crate(
        "gguf-tokenizer/src",
        "gguf_tokenizer",
        [
            ["error", "attr", "unicode"],  # token attributes and vocabulary types; code-point classes
            ["split_custom", "split_regex"],  # llama.cpp's hand-written splitters; its regex path
            ["pre", "merge"],  # pre-tokenizer names -> patterns; the merge loop spm and bpe share
            ["lib"],  # Tokenizer, TokenData, Flags, Specials: the type every algorithm extends
            ["bpe", "spm", "wpm", "ugm", "special", "decode"],  # the algorithms, special-token splitting, decoding
            ["load"],  # the metadata -> a Tokenizer (types, defaults, special ids, attribute fixes)
            ["lint"],  # a missing pre-tokenizer, for `gguf check`
        ],
    ),
    "gguf-llama": Crate(
        "gguf-llama/src",
        "gguf_llama",
        [
            ["error"],
            ["summary", "llama_load"],  # what a model is; what llama.cpp's loader refuses
            ["estimate", "quantize"],  # memory (over the summary); llama-quantize (its key rules from llama_load)
        ],
    ),
    "gguf-chat": Crate(
        "gguf-chat/src",
        "gguf_chat",
        [
            ["error", "options", "values"],  # the error and limits; JSON <-> engine values, llama.cpp's text of values
            # the request as llama.cpp reads it; minijinja with llama.cpp's built-ins; its model-specific handlers
            ["conversation", "engine", "handlers"],
            ["rendered"],  # the marked prompt and its tokens
            ["template"],  # ChatTemplate: probes, workarounds, render
            ["lint"],  # what `gguf check` says of a model's templates
        ],
    ),
    "gguf-import": Crate(
        "gguf-import/src",
        "gguf_import",
        [
            ["error"],
            ["config"],  # config.json with the transformers defaults
            # per-architecture tables, the model card, safetensors, rope_freqs, tokenizer.*
            ["arch", "card", "checkpoint", "rope", "vocab"],
            ["hparams"],
            ["general"],  # general.* heuristics
            ["options"],  # ImportOptions, Target, OutType, Stage, ImportReport: what the rooms below are told
            ["tensors"],  # plan and convert while writing
            ["lora"],  # LoRA adapters, through the tensors' plan
            ["mmproj"],  # the vision projector (--mmproj): its tables, clip.* keys, tensors
        ],
        {
            "arch": [
                ["table"],  # what a table says; the rules tables share
                ["llama", "qwen", "gemma", "phi", "olmo", "glm", "deepseek", "gpt_oss"],  # one file per family
                ["qwen_vl"],  # the vision-language text models, over the Qwen tables
                ["mod"],  # ARCHITECTURES
            ],
            "tensors": [
                ["piece"],  # Planned, Origin, Piece: what an output tensor is made of
                ["names"],  # checkpoint names as the converter sees them
                ["check"],  # hyper-parameters and shapes against the tensors
                ["quantized"],  # FP8 scales, MXFP4 blocks
                ["cut"],  # tensors cut into several
                ["plan"],  # the output tensors in order
                ["write"],  # the conversion while written
                ["mod"],
            ],
            "mmproj": [["tables"], ["keys", "tensors"], ["mod"]],
        },
    ),
}

# An item defined at a module's top level: `pub struct Name`, `fn name`.
ITEM = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|fn|const|static|union)\s+([A-Za-z_]\w*)", re.M
)
USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", re.S | re.M)
# A path written inline: `crate::a::b`, `gguf_core::a`, `super::super::a`.
QUALIFIED = re.compile(r"(?<![\w:])((?:crate|self|super|gguf_\w+)(?:::(?:[A-Za-z_][A-Za-z0-9_]*|\*))+)")
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


def resolve(path: list[str], here: list[str], name: str) -> list[str] | None:
    """The absolute module path (below the crate root) that `path` names,
    or None for a path into another crate; `name` is the crate's own."""
    if not path:
        return None
    if path[0] in ("crate", name):
        return path[1:]
    if path[0] in ("super", "self"):
        base, q = list(here), list(path)
        while q and q[0] in ("super", "self"):
            if q.pop(0) == "super":
                base = base[:-1]
        return base + q
    return None


def targets_of_use(tree: str, here: list[str], name: str) -> list[list[str]]:
    """The absolute paths a `use` tree names."""
    paths = written_paths(tree, alias=False)
    return [r for r in (resolve(p, here, name) for p in paths) if r is not None]


def written_paths(tree: str, alias: bool) -> list[list[str]]:
    """The paths of a `use` tree as written; the last segment of a renamed
    import (`a::b as c`) is its new name when `alias`, else the name it
    imports."""
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
        name, _, renamed = head.partition("@")
        if sep:
            walk(prefix + [name], rest)
        else:
            paths.append(prefix + [renamed or name if alias else name])

    walk([], tree)
    return paths


def root_modules(src: Path) -> set[str]:
    return {p.stem if p.is_file() else p.name for p in src.iterdir() if p.suffix == ".rs" or p.is_dir()} - {"lib"}


def children(src: Path, module: str) -> set[str]:
    d = src / module
    if not d.is_dir():
        return set()
    return {p.stem if p.is_file() else p.name for p in d.iterdir() if p.suffix == ".rs" or p.is_dir()} - {"mod"}


def root_reexports(src: Path) -> tuple[dict[str, str], set[str]]:
    """The names lib.rs re-exports (name -> the module they come from, or
    "" for another crate's), and the names of the items lib.rs defines."""
    lib = src / "lib.rs"
    text = strip_comments(lib.read_text()) if lib.exists() else ""
    modules = root_modules(src)
    exported = {}
    for m in USE.finditer(text):
        for path in written_paths(m.group(1), alias=True):
            while path and path[0] in ("crate", "self"):
                path = path[1:]
            if path:
                exported[path[-1]] = path[0] if path[0] in modules else ""
    defined = set(ITEM.findall(text))
    return exported, defined - set(exported)


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


def imports(text: str, here: list[str], name: str) -> list[tuple[int, list[str]]]:
    """(line, absolute path) of every import and inline path in `text`,
    in line order; `super` inside an inline `mod x { }` starts from x."""
    spans = inline_modules(text)

    def module_at(pos: int) -> list[str]:
        return here + [inner for start, end, inner in spans if start < pos < end]

    found = []
    for m in USE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        for path in targets_of_use(m.group(1), module_at(m.start()), name):
            found.append((line, path))
    for m in QUALIFIED.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        path = resolve(m.group(1).split("::"), module_at(m.start()), name)
        if path is not None:
            found.append((line, path))
    return sorted(found, key=lambda f: f[0])


def check_modules(src: Path, crate: Crate) -> list[str]:
    """Every import of the crate at `src` that runs the wrong way."""
    modules = root_modules(src)
    exported, defined = root_reexports(src)
    layer_of = {m: i for i, names in enumerate(crate.layers) for m in names}
    problems = []
    # A root `tests.rs` is test code, which has no layer.
    unknown = sorted(modules - set(layer_of) - {"tests"})
    if unknown:
        problems.append(f"{src}: modules without a layer in scripts/check_layers.py: {', '.join(unknown)}")
    sublayer_of, files_of = {}, {}
    for module, order in crate.sublayers.items():
        sublayer_of[module] = {f: i for i, names in enumerate(order) for f in names}
        files_of[module] = children(src, module)
        if not (src / module).is_dir():
            continue
        missing = sorted(files_of[module] - set(sublayer_of[module]))
        if missing:
            problems.append(
                f"{src / module}: files without a layer in scripts/check_layers.py (sublayers): {', '.join(missing)}"
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

        for line, path in imports(text, here, crate.name):
            if not path:
                continue
            where = f"{file}:{line}"
            target = path[0]
            if target not in modules:
                if target in ("self", "*"):
                    continue
                if target in defined:
                    target = "lib"
                    if "lib" not in layer_of:
                        report(f"{where}: {top} imports `{path[0]}`, which lib.rs defines; give `lib` a layer")
                        continue
                else:
                    if exported.get(target) != top:
                        report(f"{where}: {top} imports `{target}` through the crate root; name its module")
                    continue
            if line >= test_line:
                continue
            if target != top:
                if layer_of.get(target, -1) > layer_of.get(top, -1):
                    report(
                        f"{where}: {top} (layer {layer_of[top]}) imports {target} "
                        f"(layer {layer_of[target]}), a higher layer"
                    )
                continue
            # The deepest module with ordered files that holds both this
            # file and the import (`write/modes` before `write`).
            inside = [
                k for k in crate.sublayers
                if here[: len(k.split("/"))] == k.split("/") and path[: len(k.split("/"))] == k.split("/")
            ]
            if not inside:
                continue
            module = max(inside, key=lambda k: len(k.split("/")))
            depth = len(module.split("/"))
            order = sublayer_of[module]
            own = here[depth] if len(here) > depth else "mod"
            named = path[depth] if len(path) > depth else "mod"
            other = named if named in files_of[module] or named in order else "mod"
            if own == other or own not in order or other not in order:
                continue
            if order[other] > order[own]:
                report(
                    f"{where}: {module}/{own} (file layer {order[own]}) imports {module}/{other} "
                    f"(file layer {order[other]}), a higher layer"
                )
    return problems


def manifests(root: Path) -> dict[str, tuple[Path, dict]]:
    """package name -> (directory, parsed Cargo.toml) of the workspace at
    `root`: the root package and every member."""
    top = tomllib.loads((root / "Cargo.toml").read_text())
    dirs = [root] + [root / m for m in top.get("workspace", {}).get("members", [])]
    found = {}
    for d in dirs:
        manifest = tomllib.loads((d / "Cargo.toml").read_text())
        if "package" in manifest:
            found[manifest["package"]["name"]] = (d, manifest)
    return found


def path_dependencies(d: Path, manifest: dict) -> list[tuple[str, str]]:
    """(table, package name) of each path dependency of a manifest."""
    tables = [("", manifest)] + [(f"target.{t}.", v) for t, v in manifest.get("target", {}).items()]
    deps = []
    for prefix, holder in tables:
        for kind in ("dependencies", "dev-dependencies", "build-dependencies"):
            for key, spec in holder.get(kind, {}).items():
                if isinstance(spec, dict) and "path" in spec:
                    target = tomllib.loads((d / spec["path"] / "Cargo.toml").read_text())
                    deps.append((prefix + kind, target["package"]["name"]))
    return deps


def check_crates(root: Path) -> list[str]:
    """Every path dependency between the workspace's packages that runs
    upward or sideways."""
    layer_of = {c: i for i, names in enumerate(CRATE_LAYERS) for c in names}
    problems = []
    found = manifests(root)
    unknown = sorted(set(found) - set(layer_of))
    if unknown:
        problems.append(
            f"{root}: packages without a layer in scripts/check_layers.py (CRATE_LAYERS): {', '.join(unknown)}"
        )
    for package, (d, manifest) in sorted(found.items()):
        if package not in layer_of:
            continue
        for table, dep in path_dependencies(d, manifest):
            if dep not in layer_of or layer_of[dep] < layer_of[package]:
                continue
            if table.endswith("dev-dependencies") and (package, dep) in UPWARD_DEV_DEPENDENCIES:
                continue
            where = "a higher" if layer_of[dep] > layer_of[package] else "the same"
            problems.append(
                f"{d / 'Cargo.toml'}: [{table}] {package} (crate layer {layer_of[package]}) depends on "
                f"{dep} (crate layer {layer_of[dep]}), {where} layer"
            )
    return problems


def check(root: Path) -> list[str]:
    """Both levels: the crates, then the modules inside each library crate."""
    problems = check_crates(root)
    for crate in CRATES.values():
        src = root / crate.src
        if src.is_dir():
            problems += check_modules(src, crate)
    return problems


def self_test() -> int:
    """Runs the checks on small trees with one import or dependency each,
    good or bad."""
    core = CRATES["gguf-core"]
    upper = Crate("", "gguf_upper", [["error"], ["lower"], ["lib"], ["higher"]])
    module_cases = [
        # (crate, file, line of Rust, problems expected)
        (core, "read/mod.rs", "use crate::error::Error;", 0),
        (core, "read/mod.rs", "use crate::edit::Editor;", 1),
        (core, "read/mod.rs", "use crate::{error::Error, write::Builder};", 1),
        (core, "read/mod.rs", "fn f() { crate::write::sync_dir(); }", 1),
        (core, "read/mod.rs", "fn f() { gguf_core::write::sync_dir(); }", 1),
        (core, "read/mod.rs", "use super::edit::Editor;", 1),
        (core, "read/tensor.rs", "use super::super::edit::Editor;", 1),
        (core, "read/tensor.rs", "use super::GgufFile;", 0),
        (core, "write/mod.rs", "use crate::GgufFile;", 1),
        (core, "read/tensor.rs", "use crate::GgufFile;", 0),  # read's own item: no boundary crossed
        (core, "read/mod.rs", "// use crate::edit::Editor;", 0),
        (core, "read/mod.rs", 'const S: &str = "use crate::edit::Editor;";', 0),
        (core, "read/mod.rs", "#[cfg(test)]\nmod tests { use crate::edit::Editor; }", 0),
        (core, "write/mod.rs", "#[cfg(test)]\nmod tests { use crate::GgufFile; }", 1),
        (core, "read/tests.rs", "use crate::write::Builder;", 0),
        (core, "edit/editor.rs", "use crate::read::GgufFile;", 0),
        (core, "edit/editor.rs", "use super::journal::write;", 0),
        (core, "edit/journal.rs", "use super::editor::Editor;", 1),
        (core, "edit/journal.rs", "use super::Editor;", 1),  # through mod.rs, the top file
        (core, "edit/journal.rs", "fn f() { super::editor::open(); }", 1),
        (core, "edit/mod.rs", "pub use editor::Editor; use self::journal::recover;", 0),
        # Files of a nested module with its own order (write/modes).
        (core, "write/modes/single.rs", "use super::sink::AnySink;", 0),
        (core, "write/modes/sink.rs", "use super::single::write_data;", 1),
        (core, "write/modes/options.rs", "use crate::write::modes::output::Output;", 1),
        (core, "nothing/mod.rs", "", 1),  # a module without a layer
        (core, "tests.rs", "use crate::edit::Editor;", 0),
        (core, "journal.rs", "fn f() {}\n#[cfg(test)]\nmod tests { use super::f; }", 0),
        (core, "journal.rs", "mod inner { fn g() { super::super::edit::f(); } }", 1),
        (core, "read/tensor.rs", "mod a { mod b { use super::super::GgufFile; } }", 0),
        # A crate above gguf-core: its paths into gguf-core run downward
        # whatever they name; its own follow its order, and lib.rs's items
        # are the module `lib`.
        (upper, "lower.rs", "use gguf_core::edit::Editor;", 0),
        (upper, "lower.rs", "use crate::higher::f;", 1),
        (upper, "lower.rs", "fn f() { gguf_upper::higher::f(); }", 1),
        (upper, "higher.rs", "use crate::lower::f;", 0),
        (upper, "lower.rs", "use crate::Root;", 1),  # lib.rs's own item, a higher layer
        (upper, "higher.rs", "use crate::Root;", 0),
        (upper, "higher.rs", "use crate::Error;", 1),  # a re-export of error's
        (upper, "error.rs", "fn f(e: super::Error) {}", 0),  # error's own item
    ]
    failures = 0
    for crate, file, line, expected in module_cases:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp)
            if crate is core:
                for m in ("error.rs", "read/mod.rs", "read/tensor.rs", "write/mod.rs", "edit/mod.rs"):
                    (src / m).parent.mkdir(parents=True, exist_ok=True)
                    (src / m).write_text("")
                for f in ("journal", "editor", "model_editor"):
                    (src / "edit" / f"{f}.rs").write_text("")
                (src / "lib.rs").write_text("pub use read::GgufFile;\n")
            else:
                for m in ("error.rs", "lower.rs", "higher.rs"):
                    (src / m).write_text("")
                (src / "lib.rs").write_text("pub use error::Error;\npub struct Root;\n")
            (src / file).parent.mkdir(parents=True, exist_ok=True)
            (src / file).write_text(line + "\n")
            problems = check_modules(src, crate)
        if len(problems) != expected:
            failures += 1
            print(f"self-test: {file}: {line!r}: expected {expected} problem(s), got {problems}")
    # (package, table, dependency, problems expected) on a workspace of the
    # crates in CRATE_LAYERS, each depending on nothing else.
    crate_cases = [
        ("gguf-llama", "dependencies", "gguf-core", 0),
        ("gguf-import", "dependencies", "gguf-llama", 0),
        ("gguf-core", "dependencies", "gguf-llama", 1),
        ("gguf-core", "dev-dependencies", "gguf-import", 1),
        ("gguf-tokenizer", "dependencies", "gguf-llama", 1),  # the same layer
        ("gguf-core", 'target."cfg(unix)".dependencies', "gguf-kit", 1),
        ("gguf-derive", "dev-dependencies", "gguf-core", 0),  # UPWARD_DEV_DEPENDENCIES
        ("gguf-derive", "dependencies", "gguf-core", 1),
        ("gguf-kit", "dependencies", "gguf-unplaced", 1),  # a package without a layer
    ]
    for package, table, dep, expected in crate_cases:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            names = [c for layer in CRATE_LAYERS for c in layer if c != "gguf-kit"] + [dep]
            members = []
            for name in dict.fromkeys(names):
                (root / name).mkdir(exist_ok=True)
                (root / name / "Cargo.toml").write_text(f'[package]\nname = "{name}"\n')
                members.append(name)
            (root / "Cargo.toml").write_text(
                f'[workspace]\nmembers = {members!r}\n\n[package]\nname = "gguf-kit"\n'.replace("'", '"')
            )
            manifest = root / (package if package != "gguf-kit" else "") / "Cargo.toml"
            path = f"../{dep}" if package != "gguf-kit" else dep
            manifest.write_text(manifest.read_text() + f'\n[{table}]\n{dep} = {{ path = "{path}" }}\n')
            problems = check_crates(root)
        if len(problems) != expected:
            failures += 1
            print(f"self-test: {package} [{table}] {dep}: expected {expected} problem(s), got {problems}")
    cases = len(module_cases) + len(crate_cases)
    if failures:
        print(f"check_layers self-test: {failures} of {cases} cases failed")
        return 1
    print(f"check_layers self-test: {cases} cases pass ({len(crate_cases)} of crates, {len(module_cases)} of modules)")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(
            f"check_layers: {len(problems)} dependency(ies) or import(s) run the wrong way "
            "(orders: scripts/check_layers.py)"
        )
        return 1
    crates = [c for c in CRATES.values() if (root / c.src).is_dir()]
    modules = sum(len(root_modules(root / c.src)) for c in crates)
    print(
        f"check_layers: {len(manifests(root))} packages, every dependency runs downward; "
        f"{modules} modules in {len(crates)} library crates, every import runs downward"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
