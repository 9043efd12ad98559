#!/usr/bin/env bash
# llama.cpp's own converter with gguf_rs.install() (our GGUFWriter, reader and quants in place of
# gguf-py's) against the converter as it is: every run of the import oracle (each converter file
# committed in tests/data/import: NAME.TYPE.gguf from convert_hf_to_gguf.py, mmproj-NAME.TYPE.gguf
# with --mmproj, lora-BASE.TYPE.gguf from convert_lora_to_gguf.py), both ways, in the same run.
# Each output is compared byte for byte with the committed file (the converter's own) and the
# other way's; the totals of wall time and peak resident memory (/usr/bin/time) are printed, with
# the same comparison on one larger checkpoint (a generated 1.25 GB Qwen3-MoE,
# scripts/make_moe_bench_checkpoint.py), where the writer's work shows. Opt-in: needs the
# converter's venv (torch, transformers; scripts/import_oracle.sh makes it). Exits non-zero when
# any output differs.
#
# usage: benches/converter_install.sh [NAME...]      (NAME: only these fixtures' runs)
#   CONVERTER_VENV (default /work/targets/convert-venv), LLAMA_CPP (default the vendored llama.cpp
#   of llama-cpp-python 0.3.36 at /work/targets/open/llama/src/vendor/llama.cpp), WHEEL (the
#   gguf_rs wheel to install into a copy of the venv; default: built with maturin), WORK
#   (default target/bench-converter-install), LARGE=0 to skip the large checkpoint, MOE_CHECKPOINT
#   (where it is, or is generated; default target/bench-moe/qwen3-moe-1g).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${CONVERTER_VENV:-/work/targets/convert-venv}
LLAMA_CPP=${LLAMA_CPP:-/work/targets/open/llama/src/vendor/llama.cpp}
WORK=$(realpath -m "${WORK:-$ROOT/target/bench-converter-install}")
only=("$@")
mkdir -p "$WORK"
[ -x "$VENV/bin/python" ] || { echo "no converter venv at $VENV (scripts/import_oracle.sh makes it)" >&2; exit 2; }

wheel=${WHEEL:-}
if [ -z "$wheel" ]; then
    rm -rf "$WORK/dist"
    "$VENV/bin/python" -m pip install -q -c "$ROOT/python/build-requirements.txt" maturin >&2
    "$VENV/bin/maturin" build --quiet --release -m "$ROOT/python/Cargo.toml" --out "$WORK/dist" >&2
    wheel=$(ls "$WORK"/dist/gguf_rs-*.whl)
fi
# gguf_rs goes into the converter's venv without its dependencies: the converter brings its own
# gguf-py (run_converter.py puts it first) and numpy.
"$VENV/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel" >&2

# A copy of the converter with the fixtures' BPE hashes registered, as scripts/import_oracle.sh
# makes it: the pre-tokenizer of each fixture from tests/integration/import_oracle.rs's FIXTURES.
CONV=$WORK/converter
rm -rf "$CONV" && mkdir -p "$CONV"
cp -r "$LLAMA_CPP/convert_hf_to_gguf.py" "$LLAMA_CPP/convert_hf_to_gguf_update.py" \
    "$LLAMA_CPP/convert_lora_to_gguf.py" "$LLAMA_CPP/conversion" "$LLAMA_CPP/gguf-py" "$CONV/"
mapfile -t pairs < <(sed -n 's/^ *("\([^"]*\)", Some("\([^"]*\)"), .*/tests\/data\/import\/\1=\2/p' \
    "$ROOT/tests/integration/import_oracle.rs")
(cd "$ROOT" && "$VENV/bin/python" scripts/import_oracle.py register "$CONV" "${pairs[@]}" >/dev/null)

runner=$ROOT/python/tools/run_converter.py
out=$WORK/out
mkdir -p "$out"
: > "$WORK/times"
equal=0 total=0 failed=()
wanted() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }
cd "$ROOT"
for golden in tests/data/import/*.gguf; do
    file=$(basename "$golden" .gguf)
    label=${file%.*} outtype=${file##*.}
    case $label in
        mmproj-*) name=${label#mmproj-}; cmd=("$CONV/convert_hf_to_gguf.py" "tests/data/import/$name" --mmproj) ;;
        lora-*) name=$label; cmd=("$CONV/convert_lora_to_gguf.py" "tests/data/import/$label"
                    --base "tests/data/import/${label#lora-}") ;;
        *) name=$label; cmd=("$CONV/convert_hf_to_gguf.py" "tests/data/import/$label") ;;
    esac
    wanted "$name" || continue
    for way in plain install; do
        flag=(); [ "$way" = install ] && flag=(--install)
        target=$out/$file.$way.gguf
        rm -f "$target"
        /usr/bin/time -f "%e %M" -o "$WORK/time" "$VENV/bin/python" "$runner" "${flag[@]}" "${cmd[@]}" \
            --outtype "$outtype" --outfile "$target" > "$WORK/log" 2>&1 ||
            { echo "== $way ${cmd[*]#"$CONV/"} --outtype $outtype failed:" >&2; tail -20 "$WORK/log" >&2; exit 1; }
        echo "$way $(cat "$WORK/time")" >> "$WORK/times"
    done
    total=$((total + 1))
    if cmp -s "$out/$file.plain.gguf" "$golden" && cmp -s "$out/$file.install.gguf" "$golden"; then
        equal=$((equal + 1))
    else
        failed+=("$file")
    fi
done
sum() { awk -v w="$1" '$1 == w { t += $2; if ($3 > m) m = $3 } END { printf "%.2f %d", t, m / 1024 }' "$WORK/times"; }
read -r pw pm <<< "$(sum plain)"
read -r iw im <<< "$(sum install)"
echo "import oracle: $equal/$total converter runs give the committed bytes both ways"
printf '%-34s %12s %18s\n' 'convert_hf_to_gguf / lora' 'total wall s' 'largest peak MiB'
printf '%-34s %12s %18s\n' 'as it is (gguf-py)' "$pw" "$pm"
printf '%-34s %12s %18s\n' 'with gguf_rs.install()' "$iw" "$im"
[ ${#failed[@]} -eq 0 ] || echo "different: ${failed[*]}"

if [ "${LARGE:-1}" != 0 ] && [ ${#only[@]} -eq 0 ]; then
    CKPT=${MOE_CHECKPOINT:-$ROOT/target/bench-moe/qwen3-moe-1g}
    [ -f "$CKPT/config.json" ] || "$VENV/bin/python" scripts/make_moe_bench_checkpoint.py "$CKPT" >&2
    for outtype in f16 q8_0; do
        for way in plain install; do
            flag=(); [ "$way" = install ] && flag=(--install)
            rm -f "$out/large.$outtype.$way.gguf"
            sync
            /usr/bin/time -f "%e %M" -o "$WORK/large.$outtype.$way" "$VENV/bin/python" "$runner" "${flag[@]}" \
                "$CONV/convert_hf_to_gguf.py" "$CKPT" --outtype "$outtype" \
                --outfile "$out/large.$outtype.$way.gguf" > "$WORK/log" 2>&1 ||
                { tail -20 "$WORK/log" >&2; exit 1; }
        done
        same=no; cmp -s "$out/large.$outtype.plain.gguf" "$out/large.$outtype.install.gguf" && same=yes
        read -r a b < "$WORK/large.$outtype.plain"
        read -r c d < "$WORK/large.$outtype.install"
        printf '1.25 GB Qwen3-MoE --outtype %-5s as it is %7.2f s %6d MiB | with install() %7.2f s %6d MiB | same bytes: %s\n' \
            "$outtype" "$a" $((b / 1024)) "$c" $((d / 1024)) "$same"
        [ "$same" = yes ] || failed+=("large.$outtype")
        rm -f "$out"/large.$outtype.*.gguf
    done
fi
[ ${#failed[@]} -eq 0 ]
