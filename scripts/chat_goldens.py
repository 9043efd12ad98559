#!/usr/bin/env python3
"""Records llama.cpp's prompts for the chat-template goldens (run once; rerun to refresh).

For every template in tests/data/chat/templates/ (llama.cpp's models/templates/, copied) and every
conversation in tests/data/chat/conversations/, runs llama.cpp's `test-chat-template` (built from the
llama.cpp that llama-cpp-python 0.3.36 vendors), which renders through `common_chat_templates_apply`
with add_generation_prompt, and writes tests/data/chat/goldens/TEMPLATE.json:

    {"template": "NAME.jinja", "date": "YYYY-MM-DD" (the UTC day the tool rendered on, which
     strftime_now and the date variables see), "bos_token": ..., "eos_token": ...,
     "cases": [{"conversation": "basic", "expected": "..."} | {"conversation": ..., "error": "..."}]}

Usage: scripts/chat_goldens.py [LLAMA_TOOLS_DIR] (default /work/targets/llama-tools)
"""

import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests/data/chat"
BOS, EOS = "<s>", "</s>"


def render(tool: Path, template: Path, conv: dict) -> dict:
    with tempfile.TemporaryDirectory() as d:
        inp = Path(d) / "in.json"
        out = Path(d) / "out.txt"
        inp.write_text(json.dumps({**conv, "bos_token": BOS, "eos_token": EOS}))
        p = subprocess.run(
            [str(tool), "--json", str(inp), "--output", str(out), str(template)],
            capture_output=True,
            timeout=120,
        )
        if p.returncode == 0 and out.exists():
            return {"expected": out.read_text(encoding="utf-8")}
        err = (p.stderr.decode("utf-8", "replace").strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return {"error": err}


def main() -> None:
    tools = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/targets/llama-tools")
    tool = tools / "bin/test-chat-template"
    convs = {p.stem: json.loads(p.read_text()) for p in sorted((DATA / "conversations").glob("*.json"))}
    (DATA / "goldens").mkdir(exist_ok=True)
    for t in sorted((DATA / "templates").glob("*.jinja")):
        day = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        cases = [{"conversation": name, **render(tool, t, c)} for name, c in convs.items()]
        rec = {"template": t.name, "date": day, "bos_token": BOS, "eos_token": EOS, "cases": cases}
        (DATA / "goldens" / (t.stem + ".json")).write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
        print(t.name, sum("expected" in c for c in cases), "/", len(cases))


if __name__ == "__main__":
    main()
