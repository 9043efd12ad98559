#!/usr/bin/env bash
# Benchmark (issue 37, "larger than memory"): quantize, import, split and merge a model of 40 GB,
# many times this machine's memory limit, each run in a cgroup v1 memory cgroup with
# memory.limit_in_bytes = 2 GiB (LIMIT). For each command: the wall time, the cgroup's peak
# (memory.max_usage_in_bytes: anonymous memory and page cache together, which the kernel fills up
# to the limit whatever the process does), the peak of its anonymous memory (memory.stat's rss,
# polled every 0.2 s) and of its page cache (cache; mapped_file is what of it is mapped), the peak
# resident set (VmHWM, /usr/bin/time's %M: anonymous plus mapped pages), next to the time of
# reading its input (`cat` on a cold cache) and of writing its output's bytes (`dd` + fsync,
# what `cp` + `sync` costs).
#
# The inputs are generated sparse (scripts/make_sparse_model.py: real headers, tensor data as
# holes, so they cost no disk and read as zeros): a 40.1 GB F16 Qwen3-MoE GGUF (32 layers of 128
# experts, stacked expert tensors of 384 MiB, one expert's slice 3 MiB) and the same model as a
# bf16 safetensors checkpoint of one tensor per expert. The outputs are real files; each is checked
# (it opens, and its per-tensor hashes equal the input's where the bytes are copied: split, merge)
# and removed before the next step, so the disk needs the largest output free (~40 GB; checked
# with df first). Everything under WORK is removed at the end. Zeros quantize faster than
# weights, so the quantizing times are a floor of the compute; the memory is what the run holds.
#
# usage: benches/larger_than_memory.sh        (as root: it makes cgroups under /sys/fs/cgroup/memory)
#   LIMIT (default 2G), LAYERS (default 32: 40.1 GB; 2 gives a 2.6 GB model for a quick try),
#   WORK (default target/ltm), GGUF (default: builds target/release/gguf), STEPS (default
#   "quantize import-q4 import-f16 split merge").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIMIT=${LIMIT:-2G}
LAYERS=${LAYERS:-32}
STEPS=${STEPS:-quantize import-q4 import-f16 split merge}
SPLIT=${SPLIT:-4G}
WORK=$(realpath -m "${WORK:-$ROOT/target/ltm}")
CG_ROOT=/sys/fs/cgroup/memory
[ -w "$CG_ROOT" ] || { echo "no writable cgroup v1 memory controller at $CG_ROOT" >&2; exit 1; }
if [ -z "${GGUF:-}" ]; then
    cargo build --release --bin gguf --manifest-path "$ROOT/Cargo.toml" >&2
    GGUF="${CARGO_TARGET_DIR:-$ROOT/target}/release/gguf"
fi
mkdir -p "$WORK"
CG=""
cleanup() {
    [ -n "$CG" ] && [ -d "$CG" ] && rmdir "$CG" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

bytes() { stat -c %s "$@" | awk '{s += $1} END {printf "%.0f\n", s}'; }
gb() { awk -v b="$1" 'BEGIN {printf "%.2f GB", b / 1e9}'; }
mib() { awk -v b="$1" 'BEGIN {printf "%d", b / 1048576}'; }
# Drops the page cache of files (clean pages only; `sync` them first), so the next read is cold.
uncache() { for f in "$@"; do dd if="$f" iflag=nocache count=0 status=none; done; }

# run_limited LABEL CMD...: runs CMD in a fresh memory cgroup of LIMIT, prints one line of figures.
run_limited() {
    local label=$1; shift
    CG=$CG_ROOT/gguf-ltm-$$
    mkdir "$CG"
    echo "$LIMIT" > "$CG/memory.limit_in_bytes"
    local t0 t1 status=0
    t0=$(date +%s.%N)
    sh -c 'cg=$0 t=$1; shift; echo $$ > "$cg/cgroup.procs" && exec /usr/bin/time -f "%e %M" -o "$t" "$@"' \
        "$CG" "$WORK/time.txt" "$@" > "$WORK/out.log" 2>&1 &
    local pid=$! rss=0 cache=0 mapped=0 dirty=0
    while kill -0 "$pid" 2>/dev/null; do
        read -r r c m d < <(awk '$1=="rss"{r=$2} $1=="cache"{c=$2} $1=="mapped_file"{m=$2}
            $1=="dirty"||$1=="writeback"{d+=$2} END {print r+0, c+0, m+0, d+0}' "$CG/memory.stat")
        ((r > rss)) && rss=$r; ((c > cache)) && cache=$c
        ((m > mapped)) && mapped=$m; ((d > dirty)) && dirty=$d
        sleep 0.2
    done
    wait "$pid" || status=$?
    t1=$(date +%s.%N)
    local peak fail oom
    peak=$(cat "$CG/memory.max_usage_in_bytes")
    fail=$(cat "$CG/memory.failcnt")
    oom=$(awk '$1=="oom_kill"{print $2}' "$CG/memory.oom_control")
    rmdir "$CG"; CG=""
    if [ "$status" != 0 ]; then
        echo "$label: FAILED (exit $status, oom_kill ${oom:-?})" >&2; tail -5 "$WORK/out.log" >&2; exit 1
    fi
    local hwm
    hwm=$(awk '{print $2 * 1024}' "$WORK/time.txt")
    printf '%-26s %8.1f %10s %8s %8s %8s %8s %8s %8s\n' "$label" "$(echo "$t1 - $t0" | bc)" \
        "$(mib "$peak")" "$(mib "$rss")" "$(mib "$cache")" "$(mib "$mapped")" "$(mib "$dirty")" \
        "$(mib "$hwm")" "${oom:-0}"
}

# baseline LABEL OUT_BYTES INPUT...: the time of `cat INPUT > /dev/null` on a cold cache and of
# writing OUT_BYTES to a file with fsync (unconstrained).
baseline() {
    local label=$1 out=$2; shift 2
    sync; uncache "$@"
    local t0 t1 t2
    t0=$(date +%s.%N)
    cat "$@" > /dev/null
    t1=$(date +%s.%N)
    dd if=/dev/zero of="$WORK/baseline.bin" bs=16M count=$((out / 16777216 + 1)) conv=fsync status=none
    t2=$(date +%s.%N)
    rm -f "$WORK/baseline.bin"
    printf '%-26s read %s in %.1f s, write %s in %.1f s: %.1f s\n' "$label" "$(gb "$(bytes "$@")")" \
        "$(echo "$t1 - $t0" | bc)" "$(gb "$out")" "$(echo "$t2 - $t1" | bc)" "$(echo "$t2 - $t0" | bc)"
}

# Per-tensor hashes (`gguf hash --algo xxh64`): name and hash columns.
hashes() { "$GGUF" hash --algo xxh64 "$1" | awk '/^xxh64 / && $3 ~ /\.gguf:/ {n = $3; sub(/^.*\.gguf:/, "", n); print n, $2}' | sort; }

input_hashes() {
    [ -f "$WORK/input.hashes" ] || hashes "$IN_COPY" > "$WORK/input.hashes"
    cat "$WORK/input.hashes"
}

free_disk() { df --output=avail -B1 "$WORK" | tail -1; }

IN=$WORK/sparse.f16.gguf
HF=$WORK/sparse-hf
python3 "$ROOT/scripts/make_sparse_model.py" gguf "$IN" --layers "$LAYERS"
python3 "$ROOT/scripts/make_sparse_model.py" hf "$HF" --layers "$LAYERS"
SIZE=$(bytes "$IN")
# A step whose output is as large as its input (import f16, split, merge) needs that much disk: when
# less is free (keeping 2 GB), it runs on a model of fewer layers that fits, and says so.
PER_LAYER=$(( (SIZE - 2 * 2048 * 32768 * 2) / LAYERS ))
FIT=$(( ($(free_disk) - 2000000000 - 2 * 2048 * 32768 * 2) / PER_LAYER ))
COPY_LAYERS=$(( FIT < LAYERS ? FIT : LAYERS ))
if ((COPY_LAYERS < 1)); then echo "not enough free disk in $WORK" >&2; exit 1; fi
if ((COPY_LAYERS < LAYERS)); then
    IN_COPY=$WORK/copy.f16.gguf HF_COPY=$WORK/copy-hf
    python3 "$ROOT/scripts/make_sparse_model.py" gguf "$IN_COPY" --layers "$COPY_LAYERS"
    python3 "$ROOT/scripts/make_sparse_model.py" hf "$HF_COPY" --layers "$COPY_LAYERS"
    echo "free disk $(gb "$(free_disk)"): import f16, split and merge (outputs as large as the" \
        "input) run on $COPY_LAYERS layers, $(gb "$(bytes "$IN_COPY")")"
else
    IN_COPY=$IN HF_COPY=$HF
fi
echo "model: $(gb "$SIZE") GGUF, $(gb "$(bytes "$HF"/*.safetensors)") safetensors (sparse:" \
    "$(du -sh "$WORK" | cut -f1) on disk); largest tensor $(mib $((2048 * 768 * 128 * 2))) MiB" \
    "(stacked experts), one expert's slice 3 MiB; limit $LIMIT (cgroup v1 memory.limit_in_bytes)"
echo "free disk $(gb "$(free_disk)"), $(nproc) cores; $("$GGUF" --version)"
printf '%-26s %8s %10s %8s %8s %8s %8s %8s %8s\n' command 'wall s' 'cg peak' 'rss' 'cache' \
    'mapped' 'dirty' 'VmHWM' 'oom' 
printf '%-26s %8s %10s %8s %8s %8s %8s %8s %8s\n' '' '' 'MiB' 'MiB' 'MiB' 'MiB' 'MiB' 'MiB' ''
BASE=()
for step in $STEPS; do
    sync; uncache "$IN" "$HF"/*.safetensors "$IN_COPY" "$HF_COPY"/*.safetensors
    # Other work on the machine may have taken disk since the start.
    case $step in import-f16 | split | merge)
        if (($(free_disk) < $(bytes "$IN_COPY") + 1000000000)); then
            echo "$step: skipped, $(gb "$(free_disk)") free for a $(gb "$(bytes "$IN_COPY")") output"
            continue
        fi ;;
    esac
    case $step in
    quantize)
        run_limited "quantize Q4_K_M" "$GGUF" quantize "$IN" "$WORK/q4.gguf" Q4_K_M
        out=$(bytes "$WORK/q4.gguf")
        "$GGUF" inspect "$WORK/q4.gguf" > /dev/null
        rm -f "$WORK/q4.gguf"
        BASE+=("quantize:$out:$IN") ;;
    import-q4)
        run_limited "import --type q4_k_m" "$GGUF" import "$HF" "$WORK/iq4.gguf" --type q4_k_m \
            --pre-tokenizer qwen2
        out=$(bytes "$WORK/iq4.gguf")
        "$GGUF" inspect "$WORK/iq4.gguf" > /dev/null
        rm -f "$WORK/iq4.gguf"
        BASE+=("import-q4:$out:$HF/*.safetensors") ;;
    import-f16)
        run_limited "import --type f16" "$GGUF" import "$HF_COPY" "$WORK/if16.gguf" --type f16 \
            --pre-tokenizer qwen2
        out=$(bytes "$WORK/if16.gguf")
        # The imported tensors are the sparse GGUF's (zeros of the same types and shapes).
        [ "$(hashes "$WORK/if16.gguf")" = "$(input_hashes)" ] || { echo "import f16: hashes differ" >&2; exit 1; }
        rm -f "$WORK/if16.gguf"
        BASE+=("import-f16:$out:$HF_COPY/*.safetensors") ;;
    split)
        run_limited "split --max-size $SPLIT" "$GGUF" split --max-size "$SPLIT" "$IN_COPY" "$WORK/shard"
        out=$(bytes "$WORK"/shard*.gguf)
        [ "$(hashes "$(ls "$WORK"/shard*.gguf | head -1)")" = "$(input_hashes)" ] || { echo "split: hashes differ" >&2; exit 1; }
        rm -f "$WORK"/shard*.gguf
        BASE+=("split:$out:$IN_COPY") ;;
    merge)
        # Shards to merge, sparse as the input (the split's own were removed for the disk's sake).
        python3 "$ROOT/scripts/make_sparse_model.py" shards "$WORK/sparse" --layers "$COPY_LAYERS" --shard-bytes "$(numfmt --from=si "$SPLIT")"
        sync; uncache "$WORK"/sparse-0*.gguf
        run_limited "merge" "$GGUF" merge "$WORK/sparse-00001-of-"*.gguf "$WORK/merged.gguf"
        out=$(bytes "$WORK/merged.gguf")
        [ "$(hashes "$WORK/merged.gguf")" = "$(input_hashes)" ] || { echo "merge: hashes differ" >&2; exit 1; }
        rm -f "$WORK/merged.gguf"
        BASE+=("merge:$out:$WORK/sparse-0*.gguf") ;;
    esac
done
echo "baselines (unconstrained): cat of the input on a cold cache, dd of the output's bytes + fsync"
for b in "${BASE[@]}"; do
    IFS=: read -r label out files <<< "$b"
    # shellcheck disable=SC2086
    baseline "$label" "$out" $files
done
