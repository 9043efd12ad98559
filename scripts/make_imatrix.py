#!/usr/bin/env python3
"""Writes a generated importance matrix of N entries, as llama-imatrix lays out its GGUF format
(entries sorted by name, `<name>.in_sum2` [ne0] and `<name>.counts` [1], F32) or its legacy .dat,
for benches/imatrix_read.sh. Standard library only.

usage: scripts/make_imatrix.py N OUT.(gguf|dat) [VALUES_PER_ENTRY]
"""
import struct
import sys


def gguf_string(s: bytes) -> bytes:
    return struct.pack("<Q", len(s)) + s


def write_gguf(path, names, nval):
    kv = []
    kv.append(gguf_string(b"general.type") + struct.pack("<I", 8) + gguf_string(b"imatrix"))
    kv.append(
        gguf_string(b"imatrix.datasets")
        + struct.pack("<IIQ", 9, 8, 1)
        + gguf_string(b"generated.txt")
    )
    kv.append(gguf_string(b"imatrix.chunk_count") + struct.pack("<II", 4, 10))
    kv.append(gguf_string(b"imatrix.chunk_size") + struct.pack("<II", 4, 512))
    infos = []
    data = bytearray()
    sums = struct.pack(f"<{nval}f", *[float(i % 7 + 1) * 512.0 for i in range(nval)])
    count = struct.pack("<f", 5120.0)

    def add(name, dims, payload):
        # Every tensor padded to the default alignment (32).
        while len(data) % 32:
            data.append(0)
        infos.append(
            gguf_string(name)
            + struct.pack("<I", len(dims))
            + b"".join(struct.pack("<Q", d) for d in dims)
            + struct.pack("<IQ", 0, len(data))
        )
        data.extend(payload)

    for name in names:
        add(name + b".in_sum2", [nval], sums)
        add(name + b".counts", [1], count)
    while len(data) % 32:
        data.append(0)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(kv)) + b"".join(kv) + b"".join(infos)
    head += b"\0" * (-len(head) % 32)
    with open(path, "wb") as f:
        f.write(head)
        f.write(data)


def write_dat(path, names, nval):
    out = bytearray(struct.pack("<i", len(names)))
    vals = struct.pack(f"<{nval}f", *[float(i % 7 + 1) for i in range(nval)])
    for name in names:
        out += struct.pack("<i", len(name)) + name + struct.pack("<ii", 10, nval) + vals
    out += struct.pack("<i", 10) + struct.pack("<i", 13) + b"generated.txt"
    with open(path, "wb") as f:
        f.write(out)


def main():
    n = int(sys.argv[1])
    path = sys.argv[2]
    nval = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    names = sorted(f"blk.{i}.ffn_down.weight".encode() for i in range(n))
    if path.endswith(".dat"):
        write_dat(path, names, nval)
    else:
        write_gguf(path, names, nval)


if __name__ == "__main__":
    main()
