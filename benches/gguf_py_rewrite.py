#!/usr/bin/env python3
"""Rewrites a GGUF file with gguf-py: GGUFReader in, GGUFWriter out.

Usage: gguf_py_rewrite.py IN OUT

The write benchmark (benches/write.rs) times this against our writer on the
same file. Metadata is copied in order with its types; tensors are handed to
GGUFWriter as the reader's numpy views. Prints the read and write times.
"""

import sys
import time

from gguf import GGMLQuantizationType as Q, GGUFReader, GGUFValueType as VT, GGUFWriter

PLAIN = {Q.F32, Q.F16, Q.F64, Q.I8, Q.I16, Q.I32, Q.I64}


def main():
    src, dst = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    r = GGUFReader(src)
    t1 = time.perf_counter()
    arch = r.fields["general.architecture"].contents()
    w = GGUFWriter(dst, arch)
    for name, field in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        vtype = field.types[0]
        if name == "general.alignment":
            w.add_custom_alignment(field.contents())
        elif vtype == VT.ARRAY:
            w.add_key_value(name, field.contents(), vtype, sub_type=field.types[-1])
        else:
            w.add_key_value(name, field.contents(), vtype)
    for t in r.tensors:
        if t.tensor_type in PLAIN:
            w.add_tensor(t.name, t.data)
        else:
            w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    t2 = time.perf_counter()
    print(f"gguf-py: read {t1 - t0:.3f} s, write {t2 - t1:.3f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
