#!/usr/bin/env python3
"""Opening a file: our `GgufFile::open` against llama.cpp's own C reader.

    GGUF_LLAMA_TOOLS=DIR python3 benches/open_vs_llama.py [--runs K] [--opens N] [--rounds R]
        [--compare OPEN_LOOP_BINARY ...] [FILE ...]

DIR holds llama.cpp's GGUF reader, libggml-base.so: either DIR/lib/ (what
`bash benches/build_ggml_base.sh DIR` builds in two minutes) or a llama.cpp
tools directory whose venv has llama-cpp-python (DIR/venv/.../llama_cpp/lib/).
Both sides do the same work: open the file, parse and validate the header,
every metadata entry and every tensor info, then free it all (llama.cpp:
`gguf_init_from_file` with `no_alloc`, no tensor data read; ours:
`GgufFile::open`, through gguf-core/benches/open_loop.rs).

Two measurements, each interleaved so that both sides see the same page
cache and machine load:
- whole process: K runs of a process that opens the file once and exits
  (ours: `open_loop once FILE`; llama.cpp's: benches/llama_open_once.c,
  compiled here against the library; `/bin/true` for the cost of a process
  alone), taken in turn (each round starting with the next side, so that
  none always follows llama.cpp's long process), min and median of
  wall-clock and of CPU time;
- in process: R rounds of N opens each, in turn (llama.cpp's through
  ctypes), best and median per open; ours also times `GgufFile::from_bytes`
  on the same bytes, held in memory, in the same loop.
Ratios are our time over llama.cpp's (0.1x: ours takes a tenth).

Files: the Qwen2-shaped header of gguf-core/benches/open.rs (151,936 tokens,
151,387 merges; written to a temporary directory), $GGUF_GEMMA_MODEL when
set, and every FILE given. `--compare BIN` times another build of open_loop
(for example one built from an older commit) the same way, as a before and
after in one run. Nothing here is asserted: this is a measurement.
"""
import argparse
import ctypes
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


class InitParams(ctypes.Structure):
    # struct gguf_init_params { bool no_alloc; struct ggml_context ** ctx; }
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]


def find_library(tools: str) -> str:
    found = glob.glob(os.path.join(tools, "lib", "libggml-base.so")) + glob.glob(
        os.path.join(tools, "venv", "lib", "python3*", "site-packages", "llama_cpp", "lib",
                     "libggml-base.so"))
    if not found:
        sys.exit(f"open_vs_llama: no libggml-base.so under {tools}/lib or {tools}/venv "
                 "(bash benches/build_ggml_base.sh DIR builds one)")
    return found[0]


def load_library(path: str):
    lib = ctypes.CDLL(path)
    lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, InitParams]
    lib.gguf_init_from_file.restype = ctypes.c_void_p
    lib.gguf_free.argtypes = [ctypes.c_void_p]
    lib.gguf_get_n_tensors.argtypes = [ctypes.c_void_p]
    lib.gguf_get_n_tensors.restype = ctypes.c_int64
    return lib


def build_open_loop() -> str:
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", "gguf-core", "--bench", "open_loop", "--no-run",
         "--message-format=json"],
        cwd=ROOT, check=True, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and msg["target"]["name"] == "open_loop":
            return msg["executable"]
    sys.exit("open_vs_llama: cargo built no open_loop executable")


def build_llama_once(library: str, tmp: str) -> str:
    exe = os.path.join(tmp, "llama_open_once")
    libdir = os.path.dirname(library)
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(ROOT, "benches", "llama_open_once.c"),
                    library, f"-Wl,-rpath,{libdir}"], check=True)
    return exe


def run_once(argv: list) -> tuple:
    """Wall-clock and CPU (user + system) nanoseconds of one process, from
    spawn to exit. CPU time does not count waiting for a core, so it holds
    steady on a loaded machine where wall-clock time does not."""
    start = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter_ns() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"open_vs_llama: {' '.join(argv)} failed")
    return elapsed, int((usage.ru_utime + usage.ru_stime) * 1e9)


def llama_round(lib, path: str, opens: int) -> list:
    name = path.encode()
    params = InitParams(True, None)
    times = []
    for _ in range(opens):
        start = time.perf_counter_ns()
        ctx = lib.gguf_init_from_file(name, params)
        if not ctx:
            sys.exit(f"open_vs_llama: llama.cpp cannot open {path}")
        lib.gguf_get_n_tensors(ctx)
        lib.gguf_free(ctx)
        times.append(time.perf_counter_ns() - start)
    return times


def ours_round(exe: str, path: str, opens: int) -> dict:
    out = subprocess.run([exe, path, str(opens)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def ms(ns: float) -> str:
    return f"{ns / 1e6:.2f}"


def pair(times: list) -> str:
    return f"{ms(min(times))} / {ms(statistics.median(times))} ms"


def ratio(ours: list, theirs: list) -> str:
    return (f"{min(ours) / min(theirs):.3f}x / "
            f"{statistics.median(ours) / statistics.median(theirs):.3f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--runs", type=int, default=30, help="whole-process runs of each side")
    ap.add_argument("--opens", type=int, default=50, help="in-process opens per round")
    ap.add_argument("--rounds", type=int, default=5, help="in-process rounds of each side")
    ap.add_argument("--compare", action="append", default=[],
                    help="another open_loop binary to time the same way")
    args = ap.parse_args()
    tools = os.environ.get("GGUF_LLAMA_TOOLS")
    if not tools:
        sys.exit("open_vs_llama: set GGUF_LLAMA_TOOLS (see the docstring)")
    library = find_library(tools)
    lib = load_library(library)
    tmp = tempfile.TemporaryDirectory()
    ours = {"open_loop": build_open_loop()}
    for exe in args.compare:
        ours[os.path.basename(exe)] = os.path.abspath(exe)
    llama_once = build_llama_once(library, tmp.name)
    qwen2 = os.path.join(tmp.name, "qwen2_header.gguf")
    subprocess.run([ours["open_loop"], "write-qwen2", qwen2], check=True)
    files = [qwen2]
    if os.environ.get("GGUF_GEMMA_MODEL"):
        files.append(os.environ["GGUF_GEMMA_MODEL"])
    files += args.files
    print(f"llama.cpp reader: {library}; ratios are ours / llama.cpp's (min / median)")
    for path in files:
        print(f"{os.path.basename(path)} ({os.path.getsize(path):,} bytes)")
        # Whole process, in turn: each side's K runs interleaved.
        sides = ["llama.cpp", *ours, "/bin/true"]
        wall = {name: [] for name in sides}
        cpu = {name: [] for name in sides}
        argv = {name: [exe, "once", path] for name, exe in ours.items()}
        argv["llama.cpp"], argv["/bin/true"] = [llama_once, path], ["/bin/true"]
        for run in range(args.runs):
            # Each run starts with the next side: whichever side runs right
            # after llama.cpp's long process finds colder caches, and a fixed
            # order gave that handicap to the same binary every time.
            for name in sides[run % len(sides):] + sides[:run % len(sides)]:
                w, c = run_once(argv[name])
                wall[name].append(w)
                cpu[name].append(c)
        print(f"  whole process ({args.runs} runs each, min / median; wall clock, then CPU time):")
        for name in sides:
            line = f"    {name:<31}wall {pair(wall[name])}, CPU {pair(cpu[name])}"
            if name in ours:
                line += (f": {ratio(wall[name], wall['llama.cpp'])} wall, "
                         f"{ratio(cpu[name], cpu['llama.cpp'])} CPU")
            print(line)
        # In process, in turn: R rounds of N opens of each side.
        theirs, mine = [], {name: [] for name in ours}
        for _ in range(args.rounds):
            theirs += llama_round(lib, path, args.opens)
            for name, exe in ours.items():
                mine[name].append(ours_round(exe, path, args.opens))
        best = min(theirs)
        median = statistics.median(theirs)
        print(f"  in process ({args.rounds} rounds of {args.opens} opens, best / median per open):")
        print(f"    llama.cpp gguf_init_from_file  {ms(best)} / {ms(median)} ms")
        for name, results in mine.items():
            ob = min(r["open_best_ns"] for r in results)
            om = statistics.median(r["open_median_ns"] for r in results)
            fb = min(r["from_bytes_best_ns"] for r in results)
            fm = statistics.median(r["from_bytes_median_ns"] for r in results)
            print(f"    {name} GgufFile::open  {ms(ob)} / {ms(om)} ms: "
                  f"{ob / best:.3f}x / {om / median:.3f}x llama.cpp; "
                  f"from_bytes {ms(fb)} / {ms(fm)} ms (open {ob / fb:.2f}x / {om / fm:.2f}x of it)")


if __name__ == "__main__":
    main()
