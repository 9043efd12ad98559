"""The conftest.py that test_gguf_py_suite.py puts beside a copy of
gguf-py's own tests (llama.cpp's gguf-py/tests/): with GGUF_RS_READER=ours
it calls gguf_rs.install() before their modules import gguf, so every
`GGUFReader` and `gguf.quants.dequantize` they use is ours; it counts the
files our reader opens into GGUF_RS_OPENED (a path) so the caller can check
that ours was really used. With GGUF_RS_READER=gguf-py it changes nothing.
"""

import os

if os.environ.get("GGUF_RS_READER") == "ours":
    import gguf_rs

    gguf_rs.install()
    _opened = 0
    _init = gguf_rs.GGUFReader.__init__

    def _counting_init(self, *args, **kwargs):
        global _opened
        _opened += 1
        _init(self, *args, **kwargs)

    gguf_rs.GGUFReader.__init__ = _counting_init

    def pytest_sessionfinish(session, exitstatus):
        path = os.environ.get("GGUF_RS_OPENED")
        if path:
            with open(path, "w") as f:
                f.write(str(_opened))
