#!/usr/bin/env python3
"""Time gguf-py's GGUFReader opening a GGUF file: median of 3 runs.

Usage: gguf_py_open.py FILE   (gguf==0.19.0, see tests/oracles/requirements.txt)

The counterpart of `cargo bench -p gguf-core --bench open`, on the same
fixture (`python3 tests/oracles/make_fixtures.py DIR llama150k`).
"""

import statistics
import sys
import time

from gguf import GGUFReader


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        reader = GGUFReader(sys.argv[1])
        times.append(time.perf_counter() - start)
        assert len(reader.tensors) > 0
    print(f"gguf-py GGUFReader: median {statistics.median(times) * 1000:.1f} ms "
          f"(runs: {', '.join(f'{t * 1000:.1f}' for t in times)} ms; {len(reader.fields)} fields, {len(reader.tensors)} tensors)")


if __name__ == "__main__":
    main()
