#!/usr/bin/env python3
"""Writes the cases of write_with_gguf_py.py split into shards by gguf-py's
GGUFWriter(split_max_tensors=..., split_max_size=..., small_first_shard=...).

Usage: split_with_gguf_py.py OUTDIR

OUTDIR/unsplit/ holds every case unsplit. For each configuration below, OUTDIR/<config>/ holds every case as
GGUFWriter splits it (<case>-00001-of-0000N.gguf ..., or <case>.gguf when
everything fits in one shard), and OUTDIR/configs.json lists the
configurations with their limits. The Rust tests split the unsplit files
with the same limits and compare bytes (tests/integration/split.rs).
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import write_with_gguf_py  # noqa: E402

CONFIGS = {
    # One tensor per shard.
    "one_per_shard": dict(split_max_tensors=1),
    "five_per_shard": dict(split_max_tensors=5),
    # By unpadded size: several tensors per shard, and tensors larger
    # than the limit alone in theirs.
    "max_300_bytes": dict(split_max_size=300),
    "metadata_first_7": dict(split_max_tensors=7, small_first_shard=True),
    # A metadata-only shard and one shard with every tensor.
    "metadata_first_only": dict(small_first_shard=True),
    "both_limits": dict(split_max_tensors=3, split_max_size=100),
}


def main():
    outdir = Path(sys.argv[1])
    write_with_gguf_py.write_cases(outdir / "unsplit")
    configs = []
    for name, args in CONFIGS.items():
        write_with_gguf_py.write_cases(outdir / name, **args)
        configs.append({
            "name": name,
            "max_tensors": args.get("split_max_tensors", 0),
            "max_size": args.get("split_max_size", 0),
            "metadata_only_first": args.get("small_first_shard", False),
        })
    (outdir / "configs.json").write_text(json.dumps(configs, indent=1))


if __name__ == "__main__":
    main()
