#!/usr/bin/env python3
"""Helpers for scripts/import_oracle.sh (run inside its venv, which has transformers).

    import_oracle.py register CONVERTER_COPY FIXTURE=NAME...
        Computes each BPE fixture's pre-tokenizer hash exactly as llama.cpp's
        convert_hf_to_gguf_update.py does (AutoTokenizer, encode its check text, sha256 of
        str(ids)) and registers it under NAME in the copy's get_vocab_base_pre(), after the
        known hashes, as that script would. Prints "FIXTURE NAME HASH" lines.

    import_oracle.py readme README COMMIT REGISTERED_FILE TIMINGS_FILE ORDER_FILE LORA_FILE
        Rewrites the converter section of tests/data/import/README.md. ORDER_FILE lists every
        "OUTPUT OUTTYPE" the script knows (OUTPUT.OUTTYPE.gguf), in table order; runs missing
        from TIMINGS_FILE keep the row the section had. LORA_FILE lists "ADAPTER BASE" lines.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

BEGIN = "<!-- converter outputs: written by scripts/import_oracle.sh -->"
END = "<!-- end of converter outputs -->"


def check_text(update_script: Path) -> str:
    """The update script's CHK_TXT, read from its source so it cannot drift from the vendored copy."""
    src = update_script.read_text(encoding="utf-8")
    m = re.search(r"^CHK_TXT = (.+)$", src, flags=re.MULTILINE)
    if m is None:
        raise SystemExit(f"{update_script}: no CHK_TXT line")
    return eval(m.group(1), {})  # a string literal from the vendored llama.cpp


def pre_tokenizer_hash(fixture: Path, chktxt: str) -> str:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(fixture))
    ids = tokenizer.encode(chktxt)
    return hashlib.sha256(str(ids).encode()).hexdigest()


def register(copy: Path, pairs: list[str]) -> None:
    base = copy / "conversion" / "base.py"
    src = base.read_text(encoding="utf-8")
    start = src.index("# Marker: Start get_vocab_base_pre")
    end = src.index("# Marker: End get_vocab_base_pre")
    anchor = src.index("        if res is None:", start, end)
    chktxt = check_text(copy / "convert_hf_to_gguf_update.py")
    ifs = ""
    registered: dict[str, tuple[str, str]] = {}  # hash -> (name, first fixture)
    for pair in pairs:
        fixture, name = pair.split("=", 1)
        h = pre_tokenizer_hash(Path(fixture), chktxt)
        if f'"{h}"' in src[start:end]:
            raise SystemExit(f"{fixture}: hash {h} is already known to the converter")
        print(Path(fixture).name, name, h)
        if h in registered:
            # fixtures that share a tokenizer share its hash, so they must share the name
            if registered[h][0] != name:
                raise SystemExit(f"{fixture}: hash {h} is registered as {registered[h][0]!r} "
                                 f"for {registered[h][1]}, not {name!r}")
            continue
        registered[h] = (name, fixture)
        ifs += f'        if chkhsh == "{h}":\n'
        ifs += f"            # ref: gguf-kit {fixture}\n"
        ifs += f'            res = "{name}"\n'
    base.write_text(src[:anchor] + ifs + "\n" + src[anchor:], encoding="utf-8")


def old_timings(text: str) -> dict[tuple[str, str], str]:
    """The timing rows of the section as last written, by (fixture, outtype)."""
    rows = {}
    if BEGIN not in text:
        return rows
    section = text[text.index(BEGIN): text.index(END)]
    for m in re.finditer(r"^\| `([^`]+)` \| (\w+) \| ([0-9.]+ \| [0-9]+) \|$", section, re.MULTILINE):
        rows[(m.group(1), m.group(2))] = m.group(3)
    return rows


def readme(path: Path, commit: str, registered: Path, timings: Path, order: Path,
           loras: Path) -> None:
    rows = [line.split() for line in registered.read_text().splitlines() if line.strip()]
    runs = [line.split() for line in order.read_text().splitlines() if line.strip()]
    adapters = [line.split() for line in loras.read_text().splitlines() if line.strip()]
    text = path.read_text(encoding="utf-8")
    # rows of fixtures not converted this time stay as they were
    times = old_timings(text)
    for line in timings.read_text().splitlines():
        if line.strip():
            f, t, s, kb = line.split()
            times[(f, t)] = f"{s} | {int(kb) / 1024:.0f}"
    lines = [
        BEGIN,
        "## Converter outputs",
        "",
        "`<name>.f16.gguf` and `<name>.q8_0.gguf` (and, for the fixtures of scripts/make_arch_fixtures.py,",
        "`<name>.bf16.gguf`) were written by `convert_hf_to_gguf.py` from the",
        f"llama.cpp that llama-cpp-python 0.3.36 vendors (`vendor/llama.cpp`, commit `{commit}`), run from",
        "the repository root as",
        "",
        "    python convert_hf_to_gguf.py tests/data/import/<name> --outtype f16 --outfile tests/data/import/<name>.f16.gguf",
        "",
        "(and `--outtype q8_0`, `--outtype bf16`), so its `general.name` heuristics see the directory",
        "`tests/data/import/<name>`. No other option is given (in particular no `--no-mtp`: the MTP layers",
        "of `glm4-moe` and `qwen3-next` are converted, and no `--fp8-as-q8`).",
        "",
        "The vision-language fixtures are converted twice: without `--mmproj` (the text model,",
        "`<name>.<type>.gguf`) and with it (the projector, `mmproj-<name>.<type>.gguf`):",
        "",
        "    python convert_hf_to_gguf.py tests/data/import/<name> --mmproj --outtype f16 --outfile tests/data/import/mmproj-<name>.f16.gguf",
        "",
        "The LoRA adapters go through `convert_lora_to_gguf.py` of the same tree, given the fixture each",
        "was made on (only its `config.json` is read: the output is the same without the base's weights):",
        "",
    ]
    lines += [f"    python convert_lora_to_gguf.py tests/data/import/{a} --base tests/data/import/{b} "
              f"--outtype f16 --outfile tests/data/import/{a}.f16.gguf" for a, b in adapters]
    lines += [
        "",
        "(and `--outtype bf16`, `--outtype q8_0` for both).",
        "",
        "The converter knows only the BPE pre-tokenizer hashes in its own list, so a patched copy of it",
        "(in a temporary directory; the vendored tree is never edited) had these hashes registered the way",
        "`convert_hf_to_gguf_update.py` does (`AutoTokenizer.from_pretrained(dir).encode(CHK_TXT)`, sha256 of",
        "`str(ids)`, a new `if chkhsh == ...: res = NAME` after the known ones; fixtures with the same",
        "tokenizer have the same hash, registered once):",
        "",
        "| fixture | registered as (`tokenizer.ggml.pre`) | chkhsh |",
        "|---------|--------------------------------------|--------|",
    ]
    lines += [f"| `{f}` | `{n}` | `{h}` |" for f, n, h in rows]
    lines += [
        "",
        "The SentencePiece fixtures need no registration (`tokenizer.ggml.pre` = `default`).",
        "",
        "Regenerate (needs network for PyPI the first time; torch, transformers, sentencepiece... go into",
        "`$IMPORT_ORACLE_VENV`, default `/work/targets/convert-venv`):",
        "",
        "    scripts/import_oracle.sh            # rewrites tests/data/import/*.gguf and this section",
        "    scripts/import_oracle.sh NAME...    # only these directories' outputs (and their rows below)",
        "",
        "Converter wall time and peak memory per run, measured by the script with `/usr/bin/time` on a",
        "shared 2-core machine (nearly all of it is Python starting and importing torch and transformers):",
        "",
        "| fixture | outtype | wall s | peak RSS MiB |",
        "|---------|---------|--------|--------------|",
    ]
    for f, t in runs:
        if (f, t) in times:
            lines.append(f"| `{f}` | {t} | {times[(f, t)]} |")
    lines.append(END)
    section = "\n".join(lines) + "\n"
    if BEGIN in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END) + 1:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")


def main() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "register":
        register(Path(sys.argv[2]), sys.argv[3:])
    elif len(sys.argv) == 8 and sys.argv[1] == "readme":
        readme(Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5]), Path(sys.argv[6]),
               Path(sys.argv[7]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
