"""Runs one of gguf-py's scripts (gguf.scripts.NAME) as __main__, after
gguf_rs.install() when the first argument is `ours`: run_script.py
ours|theirs NAME ARGS... With `ours`, stderr says whenever our reader opens
a file, so the caller can check that the script used it."""

import runpy
import sys

which, name, *args = sys.argv[1:]
if which == "ours":
    import gguf_rs

    gguf_rs.install()
    opened = gguf_rs.GGUFReader.__init__

    def traced(self, *a, **k):
        print("gguf_rs.GGUFReader opened a file", file=sys.stderr)
        opened(self, *a, **k)

    gguf_rs.GGUFReader.__init__ = traced
sys.argv = [name, *args]
runpy.run_module(f"gguf.scripts.{name}", run_name="__main__")
