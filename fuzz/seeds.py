#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (run by scripts/fuzz.sh).

Usage: seeds.py CORPUS_DIR

Seeds, each a few KiB at most:
  - hand-made files: every metadata value type (nested arrays too), small
    tensors of several types, v1/v2/v3, both byte orders, alignments 1..4096,
    and the reproducers of every finding (fuzz_regressions.rs);
  - the bundled sample samples/tiny-llama.gguf reduced to its metadata, and
    its header region alone;
  - the gguf-py fixtures of tests/oracles/make_fixtures.py, when gguf-py is
    installed (skipped with a message otherwise).
The `edit` target reads an edit script first: its seeds are prefixed with
one; `codecs` gets blocks of every type. The plain files also go to
CORPUS_DIR/base, from which fuzz/src/split_seeds.rs makes the `split`
target's seeds with the library's own split writer.
Deterministic: two runs write identical files.
"""

import os
import random
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["parse", "reader_agree", "round_trip", "edit"]

# ggml type id -> (block size, type size), for the hand-made tensors.
TYPES = {0: (1, 4), 1: (1, 2), 8: (32, 34), 2: (32, 18), 12: (256, 144), 30: (1, 2), 24: (1, 1)}
# Every sized type id, in GgmlType::ALL order, for the codecs seeds.
ALL_TYPE_COUNT = 35


class W:
    """A minimal GGUF writer: enough to build seeds by hand."""

    def __init__(self, version=3, big=False):
        self.v, self.e = version, ">" if big else "<"
        self.b = bytearray()

    def p(self, fmt, *a):
        self.b += struct.pack(self.e + fmt, *a)
        return self

    def count(self, n):
        return self.p("I" if self.v == 1 else "Q", n)

    def s(self, text):
        raw = text.encode()
        self.count(len(raw))
        self.b += raw
        return self

    def header(self, n_tensors, n_kvs):
        self.b += b"GGUF"
        self.p("I", self.v)
        return self.count(n_tensors).count(n_kvs)

    def value(self, t, v):
        fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
        if t == 8:
            return self.s(v)
        if t == 9:
            et, items = v
            self.p("I", et).count(len(items))
            for x in items:
                self.value(et, x)
            return self
        return self.p(fmt[t], v)

    def kv(self, key, t, v):
        self.s(key).p("I", t)
        return self.value(t, v)

    def info(self, name, dims, ty, offset):
        self.s(name).p("I", len(dims))
        for d in dims:
            self.count(d)
        return self.p("I", ty).p("Q", offset)

    def pad(self, align):
        self.b += b"\0" * (-len(self.b) % align)
        return self


def rich(version, big, align, rng):
    """Every value type, a nested array and a few small tensors."""
    tensors = [("t.f32", [4, 2], 0), ("t.f16", [8], 1), ("t.q8_0", [32, 2], 8),
               ("t.q4_0", [64], 2), ("t.q4_k", [256], 12), ("t.bf16", [3], 30),
               ("t.i8", [5, 1, 1], 24)]
    kvs = [("general.architecture", 8, "llama"), ("general.alignment", 4, align),
           ("u8", 0, 200), ("i8", 1, -3), ("u16", 2, 65000), ("i16", 3, -300),
           ("u32", 4, 4096), ("i32", 5, -7), ("f32", 6, 1.5), ("bool", 7, True),
           ("str", 8, "héllo ✓"), ("u64", 10, 1 << 40), ("i64", 11, -(1 << 40)),
           ("f64", 12, 2.25), ("arr.u8", 9, (0, [1, 2, 3])),
           ("arr.str", 9, (8, ["a", "", "ü"])),
           ("arr.nested", 9, (9, [(4, [1, 2]), (8, ["x"]), (9, [(0, [])])])),
           ("tokenizer.ggml.tokens", 9, (8, ["<s>", "</s>", "a", "b"])),
           ("llama.context_length", 4, 4096)]
    w = W(version, big).header(len(tensors), len(kvs))
    for k, t, v in kvs:
        w.kv(k, t, v)
    offset, sizes = 0, []
    for name, dims, ty in tensors:
        bs, ts = TYPES[ty]
        n = 1
        for d in dims:
            n *= d
        size = n // bs * ts
        w.info(name, dims, ty, offset)
        sizes.append(size)
        offset += size + (-size % align)
    w.pad(align)
    for size in sizes:
        w.b += bytes(rng.getrandbits(8) for _ in range(size))
        w.pad(align)
    return bytes(w.b)


def one_tensor(name, dims, ty, offset, data=b""):
    w = W().header(1, 0).info(name, dims, ty, offset).pad(32)
    w.b += data
    return bytes(w.b)


def hand_made(rng):
    seeds = {}
    for version in (1, 2, 3):
        for big in (False, True):
            if version == 1 and big:
                continue
            for align in (1, 32, 4096) if version == 3 and not big else (32,):
                name = f"rich_v{version}_{'be' if big else 'le'}_a{align}"
                seeds[name] = rich(version, big, align, rng)
    seeds["empty"] = bytes(W().header(0, 0).b)
    # The findings (tests/integration/fuzz_regressions.rs).
    seeds["finding_q4_0_no_dims"] = one_tensor("q", [], 2, 0)
    seeds["finding_empty_offset_max"] = one_tensor("e", [0, 4], 0, (1 << 64) - 32)
    seeds["finding_rows_2_40"] = one_tensor("e.weight", [1 << 40, 0], 0, 0)
    seeds["finding_rows_overflow"] = one_tensor("e.weight", [0, 5, 1 << 62], 0, 0)
    seeds["finding_rows_endless"] = one_tensor("e.weight", [0, 3, 1 << 62], 0, 0)
    seeds["scalar_f32"] = one_tensor("s", [], 0, 0, struct.pack("<f", 2.5))
    return seeds


def sample_seeds():
    """The bundled sample: its metadata alone, and its header region."""
    path = os.path.join(ROOT, "samples", "tiny-llama.gguf")
    with open(path, "rb") as f:
        data = f.read()
    n_tensors, n_kvs = struct.unpack_from("<QQ", data, 8)
    # Walk the metadata to find where the tensor infos start.
    pos = 24

    def skip(t, pos):
        sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
        if t == 8:
            (n,) = struct.unpack_from("<Q", data, pos)
            return pos + 8 + n
        if t == 9:
            et, n = struct.unpack_from("<IQ", data, pos)
            pos += 12
            if et in sizes:
                return pos + n * sizes[et]
            for _ in range(n):
                pos = skip(et, pos)
            return pos
        return pos + sizes[t]

    for _ in range(n_kvs):
        (klen,) = struct.unpack_from("<Q", data, pos)
        pos += 8 + klen
        (t,) = struct.unpack_from("<I", data, pos)
        pos = skip(t, pos + 4)
    meta = bytearray(data[:pos])
    struct.pack_into("<Q", meta, 8, 0)
    meta += b"\0" * (-len(meta) % 32)
    # The header region with every tensor info (its data cut off).
    infos = data[:pos + 4096]
    return {"sample_metadata": bytes(meta), "sample_header": bytes(infos)}, n_tensors


def fixture_seeds():
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(ROOT, "tests", "oracles", "make_fixtures.py")
        names = ["all_types", "big_endian", "align64", "align1"]
        r = subprocess.run([sys.executable, script, d, *names], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"seeds.py: skipped the gguf-py fixtures ({r.stderr.strip()})", file=sys.stderr)
            return {}
        out = {}
        for n in names:
            with open(os.path.join(d, n + ".gguf"), "rb") as f:
                out["gguf_py_" + n] = f.read()
        return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rng = random.Random(13)
    files = hand_made(rng)
    sample, _ = sample_seeds()
    files.update(sample)
    files.update(fixture_seeds())
    for target in TARGETS + ["base"]:
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for name, data in sorted(files.items()):
            if target == "edit":
                script = bytes(rng.getrandbits(8) for _ in range(24))
                data = bytes([len(script)]) + script + data
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    d = os.path.join(out, "codecs")
    os.makedirs(d, exist_ok=True)
    for i in range(ALL_TYPE_COUNT):
        for flags in (0, 1, 13):
            body = bytes(rng.getrandbits(8) for _ in range(1200))
            with open(os.path.join(d, f"type{i}_{flags}"), "wb") as f:
                f.write(bytes([i, flags]) + body)
    print(f"seeds.py: {len(files)} files for {', '.join(TARGETS)}; {ALL_TYPE_COUNT * 3} for codecs")


if __name__ == "__main__":
    main()
