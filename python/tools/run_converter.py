"""Runs one of llama.cpp's converter scripts (``convert_hf_to_gguf.py``,
``convert_lora_to_gguf.py``, ...) as ``python SCRIPT ARGS`` would, with
``gguf_rs.install()`` first when the first argument is ``--install``.

The converter puts its own gguf-py (``gguf-py/`` beside it) first on
``sys.path`` before it imports ``gguf``; gguf_rs imports ``gguf`` too, so the
same directory is put first here, before gguf_rs is imported, and both use
that one gguf-py.

    python python/tools/run_converter.py [--install] SCRIPT ARGS...
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    args = sys.argv[1:]
    install = bool(args) and args[0] == "--install"
    if install:
        args = args[1:]
    if not args:
        sys.exit("usage: run_converter.py [--install] SCRIPT ARGS...")
    script = os.path.abspath(args[0])
    here = os.path.dirname(script)
    gguf_py = os.path.join(here, "gguf-py")
    if os.path.isdir(gguf_py) and "NO_LOCAL_GGUF" not in os.environ:
        sys.path.insert(0, gguf_py)
    # As `python SCRIPT` runs it: its directory first (convert_lora_to_gguf
    # imports convert_hf_to_gguf from there).
    sys.path.insert(0, here)
    if install:
        import gguf_rs

        gguf_rs.install()
    sys.argv = [script, *args[1:]]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
