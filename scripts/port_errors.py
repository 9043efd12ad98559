#!/usr/bin/env python3
"""Ports code from gguf 0.1's flat `Error` variants to 0.2's groups.

    python3 scripts/port_errors.py ROOT FILE.rs...

ROOT is how FILE names the library: `crate` inside gguf-core, `gguf` or
`gguf_core` elsewhere. `Error::X { .. }` (a construction or a pattern, with
any path before `Error`) becomes `Error::Group(GroupError::X { .. })` and a
`use ROOT::error::GroupError;` line is added; a bare `Error::X` (a doc link)
becomes `GroupError::X` and is listed for a look. Run it again after a merge:
code already ported is left alone. `Error::Io(..)` is listed, not changed:
a construction becomes `Error::from(io_error)`, a pattern
`Error::Io { source, .. }`. Run `cargo fmt` afterwards.
"""

import re
import sys

GROUPS = {
    'BuildError': ['ArchUnknown', 'Encode', 'InvalidKey', 'InvalidTensor', 'MissingTensorData', 'TensorDataSize', 'TensorExists', 'TensorOrder'],
    'CodecError': ['LengthMismatch', 'PartialBlock', 'TensorCodec', 'UnknownTensorType', 'UnsupportedType', 'ViewUnavailable'],
    'EditError': ['BadJournal', 'ConcurrentModification', 'Locked'],
    'FormatError': ['AlignmentType', 'ArrayTooDeep', 'BadMagic', 'ByteSizeOverflow', 'CountTooLarge', 'DuplicateKey', 'DuplicateTensor', 'ElementCountOverflow', 'EmptyKey', 'HeaderTooLarge', 'InvalidAlignment', 'InvalidBool', 'InvalidUtf8', 'InvalidValueType', 'MisalignedTensor', 'OverlappingTensors', 'RowNotBlockMultiple', 'TensorOutOfBounds', 'TooManyDims', 'Truncated', 'UnsupportedVersion'],
    'LookupError': ['DataNotLoaded', 'KeyNotFound', 'TensorNotFound', 'TypeMismatch'],
    'RemoteError': ['BadContentRange', 'Deadline', 'HttpStatus', 'Network', 'RangeIgnored', 'RedirectRefused', 'RemoteChanged', 'ShortBody', 'Timeout'],
    'SourceError': ['BadManifest', 'BadUrl', 'ShortRead'],
    'SplitError': ['Shard', 'ShardCount', 'ShardDuplicateTensor', 'ShardMissing', 'ShardName', 'ShardNumber', 'ShardTensorCount'],
}


def match_close(s, i):
    # s[i] is '{' or '('; return index after matching close, skipping strings/chars
    depth = 0
    j = i
    n = len(s)
    while j < n:
        c = s[j]
        if c == '"':
            j += 1
            while s[j] != '"':
                if s[j] == '\\': j += 1
                j += 1
        elif c == "'" :
            # char literal or lifetime
            m = re.match(r"'(\\.|[^\\'])'", s[j:])
            if m: j += len(m.group(0)) - 1
        elif c in '{([':
            depth += 1
        elif c in '})]':
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise Exception('unbalanced')

def rewrite(path, group_prefix):
    s = open(path).read()
    out = []
    pos = 0
    used = set()
    unwrapped = []
    while True:
        m = pat.search(s, pos)
        if not m: break
        prefix, var = m.group(1), m.group(2)
        if prefix.endswith(FOREIGN) or prefix in FOREIGN:
            out.append(s[pos:m.end()]); pos = m.end(); continue
        ty = MAPPING[var]
        grp = ty[:-5]  # FormatError -> Format
        k = m.end()
        while k < len(s) and s[k] in ' \t\n': k += 1
        out.append(s[pos:m.start()])
        tyref = group_prefix(prefix) + ty
        if k < len(s) and s[k] in '{(':
            end = match_close(s, k)
            inner = s[m.end():end]
            out.append(f'{prefix}Error::{grp}({tyref}::{var}{inner})')
            pos = end
        else:
            out.append(f'{tyref}::{var}')
            unwrapped.append((s[:m.start()].count('\n')+1, var))
            pos = m.end()
        if not group_prefix(prefix): used.add(ty)
    out.append(s[pos:])
    new = ''.join(out)
    if new != s:
        open(path, 'w').write(new)
    return used, unwrapped


def add_use(path, used, root):
    lines = open(path).read().split('\n')
    have = ' '.join(l for l in lines if l.startswith(f'use {root}::error::'))
    used = {t for t in used if not re.search(rf'\b{t}\b', have)}
    if not used:
        return
    line = f"use {root}::error::{{{', '.join(sorted(used))}}};" if len(used)>1 else f"use {root}::error::{sorted(used)[0]};"
    idx = next((i for i,l in enumerate(lines) if l.startswith('use ')), None)
    if idx is None:
        idx = 0
        while idx < len(lines) and (lines[idx].startswith('//!') or lines[idx].startswith('#![')): idx += 1
        lines.insert(idx, ''); idx += 1
    lines.insert(idx, line)
    open(path,'w').write('\n'.join(lines))


MAPPING = {v: t for t, vs in GROUPS.items() for v in vs}
NAMES = sorted(MAPPING, key=len, reverse=True)
pat = re.compile(r"(?<![A-Za-z0-9_])((?:[A-Za-z_][A-Za-z0-9_]*::)*)Error::(" + "|".join(NAMES) + r")\b")
FOREIGN = ("binrw::", "syn::", "io::", "object_store::", "reqwest::", "serde_json::", "fmt::")
IO = re.compile(r"(?<![A-Za-z0-9_:])(?:[A-Za-z_][A-Za-z0-9_]*::)*(?<!io::)(?<!binrw::)Error::Io\(")


def used_in_code(path):
    """The groups a file names bare outside comments (imports included)."""
    code = "\n".join(l for l in open(path).read().split("\n") if not l.lstrip().startswith("//"))
    code = re.sub(r"^use [^;]*;", "", code, flags=re.M | re.S)
    return {t for t in GROUPS if re.search(rf"(?<![:\w]){t}::", code)}


def main():
    root = sys.argv[1]
    group_prefix = lambda prefix: "" if prefix in ("", "crate::") else prefix if prefix.endswith("error::") else prefix + "error::"
    for path in sys.argv[2:]:
        # Twice: a variant nested in another (a codec error inside
        # `TensorCodec`) is reached on the second pass.
        _, unwrapped = rewrite(path, group_prefix)
        _, unwrapped2 = rewrite(path, group_prefix)
        add_use(path, used_in_code(path), root)
        for line, var in unwrapped + unwrapped2:
            print(f"{path}:{line}: {var} not followed by {{ or (: check the path or link")
        for n, text in enumerate(open(path).read().split("\n"), 1):
            if IO.search(text):
                print(f"{path}:{n}: Error::Io(..): now Error::from(e) or Error::Io {{ source, .. }}")


if __name__ == "__main__":
    main()
