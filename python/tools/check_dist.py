#!/usr/bin/env python3
"""Checks the publishing metadata of the built wheel and sdist.

Usage: python check_dist.py WHEEL SDIST

Run by scripts/test.sh with the build tools' interpreter (python/build-requirements.txt:
trove-classifiers, PyPI's own list of classifiers). `twine check` validates the metadata's
syntax and the long description's rendering; this checks what twine does not: the name,
the version (the workspace's), the abi3 tag, the licence expression and both licence texts
inside each archive, the classifiers PyPI accepts (an unknown one makes an upload fail),
the project URLs and keywords, and that the README PyPI shows starts with the install line.
"""

from __future__ import annotations

import email.parser
import re
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

from trove_classifiers import classifiers as KNOWN_CLASSIFIERS
from trove_classifiers import deprecated_classifiers as DEPRECATED_CLASSIFIERS

REPO = Path(__file__).resolve().parents[2]
LICENSES = ["LICENSE-MIT", "LICENSE-APACHE"]
# Each prefix must open at least one classifier.
REQUIRED_CLASSIFIERS = [
    "Development Status :: ",
    "Programming Language :: Python :: 3 :: Only",
    "Programming Language :: Python :: 3.10",
    "Programming Language :: Python :: 3.11",
    "Programming Language :: Python :: 3.12",
    "Programming Language :: Python :: 3.13",
    "Programming Language :: Rust",
    "Operating System :: ",
    "Topic :: ",
]

errors: list[str] = []


def check(ok: bool, message: str) -> None:
    if not ok:
        errors.append(message)


def check_metadata(kind: str, text: str, version: str) -> None:
    md = email.parser.Parser().parsestr(text)
    check(md["Name"] == "gguf-rs", f"{kind}: Name is {md['Name']!r}, not 'gguf-rs'")
    check(md["Version"] == version, f"{kind}: Version is {md['Version']!r}, not the workspace's {version!r}")
    check(md["Requires-Python"] == ">=3.10", f"{kind}: Requires-Python is {md['Requires-Python']!r}")
    requires = md.get_all("Requires-Dist") or []
    for dep in ("gguf==0.19.*", "numpy"):
        check(dep in requires, f"{kind}: Requires-Dist lacks {dep} ({requires})")
    check(
        md["License-Expression"] == "MIT OR Apache-2.0",
        f"{kind}: License-Expression is {md['License-Expression']!r}",
    )
    check(
        sorted(md.get_all("License-File") or []) == sorted(LICENSES),
        f"{kind}: License-File is {md.get_all('License-File')}, not {LICENSES}",
    )
    found = md.get_all("Classifier") or []
    for c in found:
        check(c in KNOWN_CLASSIFIERS, f"{kind}: classifier {c!r} is not one PyPI knows (trove-classifiers)")
        check(c not in DEPRECATED_CLASSIFIERS, f"{kind}: classifier {c!r} is deprecated")
        # PEP 639: the licence expression supersedes them; setuptools and flit
        # refuse the pair, and package indexes may.
        check(not c.startswith("License :: "), f"{kind}: {c!r} next to License-Expression (PEP 639)")
    for prefix in REQUIRED_CLASSIFIERS:
        check(any(c.startswith(prefix) for c in found), f"{kind}: no classifier {prefix!r}")
    urls = dict(u.split(", ", 1) for u in md.get_all("Project-URL") or [])
    for label in ("Homepage", "Documentation"):
        check(urls.get(label, "").startswith("https://"), f"{kind}: Project-URL {label} is missing ({urls})")
    check(len((md["Keywords"] or "").split(",")) >= 3, f"{kind}: Keywords are {md['Keywords']!r}")
    check(
        (md["Description-Content-Type"] or "").startswith("text/markdown"),
        f"{kind}: Description-Content-Type is {md['Description-Content-Type']!r}",
    )
    body = md.get_payload()
    first_code = re.search(r"```(?:sh|console|bash)?\n(.*?)```", body, re.S)
    check(
        first_code is not None and first_code.group(1).lstrip().startswith("pip install gguf-rs"),
        f"{kind}: the README's first code block does not start with `pip install gguf-rs`",
    )


def main() -> int:
    wheel, sdist = Path(sys.argv[1]), Path(sys.argv[2])
    workspace = tomllib.loads((REPO / "Cargo.toml").read_text())
    version = workspace["workspace"]["package"]["version"]
    licence_bytes = {name: (REPO / name).read_bytes() for name in LICENSES}

    # gguf_rs-VERSION-cp310-abi3-PLATFORM.whl: one wheel for every CPython >= 3.10.
    m = re.fullmatch(r"gguf_rs-([^-]+)-cp310-abi3-([^-]+)\.whl", wheel.name)
    check(m is not None, f"wheel: {wheel.name} is not gguf_rs-VERSION-cp310-abi3-PLATFORM.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        dist_info = f"gguf_rs-{version}.dist-info"
        check(f"{dist_info}/METADATA" in names, f"wheel: no {dist_info}/METADATA")
        if f"{dist_info}/METADATA" in names:
            check_metadata("wheel", z.read(f"{dist_info}/METADATA").decode(), version)
        for name in LICENSES:
            path = f"{dist_info}/licenses/{name}"
            check(path in names, f"wheel: no {path}")
            if path in names:
                check(z.read(path) == licence_bytes[name], f"wheel: {path} differs from the repository's {name}")
        check("gguf_rs/_native.abi3.so" in names, "wheel: no gguf_rs/_native.abi3.so (the abi3 extension)")
        for module in ("__init__.py", "_native.pyi", "py.typed"):
            check(f"gguf_rs/{module}" in names, f"wheel: no gguf_rs/{module}")

    root = f"gguf_rs-{version}"
    check(sdist.name == f"{root}.tar.gz", f"sdist: {sdist.name} is not {root}.tar.gz")
    with tarfile.open(sdist) as t:
        members = {member.name: member for member in t.getmembers()}
        check(f"{root}/PKG-INFO" in members, f"sdist: no {root}/PKG-INFO")
        if f"{root}/PKG-INFO" in members:
            check_metadata("sdist", t.extractfile(members[f"{root}/PKG-INFO"]).read().decode(), version)
        for name in LICENSES:
            path = f"{root}/{name}"
            member = members.get(path)
            check(member is not None and member.isfile(), f"sdist: no {path} (a file)")
            if member is not None and member.isfile():
                check(t.extractfile(member).read() == licence_bytes[name], f"sdist: {path} differs from {name}")
        for path in ("pyproject.toml", "Cargo.toml", "Cargo.lock", "python/Cargo.toml", "gguf_rs/__init__.py"):
            check(f"{root}/{path}" in members, f"sdist: no {root}/{path}")

    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    if not errors:
        print(f"the wheel and the sdist hold the publishing metadata: {wheel.name}, {sdist.name}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
