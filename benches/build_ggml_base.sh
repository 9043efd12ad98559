#!/usr/bin/env bash
# Builds only llama.cpp's GGUF reader library, libggml-base.so (gguf.cpp and
# the ggml core it calls), from the llama.cpp that llama-cpp-python 0.3.36's
# sdist vendors, with the C and C++ compilers alone (no cmake, about two
# minutes on two cores): what benches/open_vs_llama.py times ours against.
#
#     bash benches/build_ggml_base.sh DIR      # then GGUF_LLAMA_TOOLS=DIR
#
# Leaves DIR/lib/libggml-base.so. A full llama.cpp tools directory (its
# venv's llama_cpp package ships the same library) serves the bench as well.
# Flags as llama.cpp's CMake release build: -O3 -DNDEBUG.
set -euo pipefail
W=$(realpath -m "${1:?usage: build_ggml_base.sh DIR}")
mkdir -p "$W/lib" "$W/obj"
cd "$W"
if [ ! -d src/vendor/llama.cpp ]; then
    python3 -m pip download -q --no-deps --no-binary llama-cpp-python -d dl "llama-cpp-python==0.3.36"
    mkdir -p src && tar -xzf dl/llama_cpp_python-0.3.36.tar.gz -C src --strip-components=1
fi
G=src/vendor/llama.cpp/ggml
# What CMake's configure_file writes (ggml/CMakeLists.txt holds the version).
printf '#pragma once\n#define GGML_VERSION "0.25.3"\n#define GGML_COMMIT "llama-cpp-python-0.3.36"\n' >obj/ggml-version.h
flags=(-O3 -DNDEBUG -fPIC -D_GNU_SOURCE -D_XOPEN_SOURCE=600 -I"$G/include" -I"$G/src" -Iobj)
# Two compilers at a time: the machine may be shared.
for f in ggml.c ggml-alloc.c ggml-quants.c ggml.cpp ggml-backend.cpp ggml-backend-meta.cpp \
    ggml-opt.cpp ggml-threading.cpp gguf.cpp; do
    [ "$(jobs -rp | wc -l)" -ge 2 ] && wait -n
    case $f in
    *.c) gcc -std=gnu11 "${flags[@]}" -c "$G/src/$f" -o "obj/$f.o" & ;;
    *) g++ -std=c++17 "${flags[@]}" -c "$G/src/$f" -o "obj/$f.o" & ;;
    esac
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n; done
g++ -shared -o lib/libggml-base.so obj/*.o -lpthread -lm -ldl
ls -l lib/libggml-base.so
