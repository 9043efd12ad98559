"""Runs one of gguf-py's scripts (gguf.scripts.NAME) as __main__, after
gguf_rs.install() when the first argument is `ours`: run_script.py
ours|theirs NAME ARGS... With `ours`, stderr says whenever our reader opens
a file or our writer is made, so the caller can check that the script used
them."""

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
    made = gguf_rs.GGUFWriter.__init__

    def traced_writer(self, *a, **k):
        print("gguf_rs.GGUFWriter made", file=sys.stderr)
        made(self, *a, **k)

    gguf_rs.GGUFWriter.__init__ = traced_writer
sys.argv = [name, *args]
runpy.run_module(f"gguf.scripts.{name}", run_name="__main__")
