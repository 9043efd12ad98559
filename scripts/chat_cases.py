#!/usr/bin/env python3
"""Extracts llama.cpp's chat-template test cases as data (run once; rerun to refresh).

Reads the llama.cpp that llama-cpp-python 0.3.36 vendors (LLAMA_CPP, default
/work/targets/open/llama/src/vendor/llama.cpp) and writes:

- tests/data/chat/jinja_cases.json: every `test_template(t, NAME, TEMPLATE, VARS, EXPECTED)` of
  tests/test-jinja.cpp (the engine cases: the template rendered with VARS as the context, every
  string of VARS marked as input), VARS translated from nlohmann::json's C++ initializers;
- tests/data/chat/chat_template_cases.json: the TestCase table of tests/test-chat-template.cpp's
  automated tests, with the conversation they all render (plus each case's extra messages) and
  the prompt llama.cpp's jinja path gives (`expected_output_jinja`, else `expected_output`),
  rendered through common_chat_templates_apply with add_generation_prompt;
- tests/data/chat/generation_prompt_cases.json: test-chat.cpp's generation-prompt checks (the
  prompt of a system and a user message ends with the template's generation prompt).

Usage: scripts/chat_cases.py [LLAMA_CPP]
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests/data/chat"

TOKEN = re.compile(
    r"""(?P<ws>\s+|//[^\n]*|/\*.*?\*/)
      |(?P<raw>(?:u8)?R"(?P<delim>[^(]*)\((?P<body>.*?)\)(?P=delim)")
      |(?P<chr>'(?:[^'\\\n]|\\.)+')
      |(?P<str>(?:u8)?"(?:[^"\\]|\\.)*")
      |(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
      |(?P<id>[A-Za-z_][\w]*(?:::[A-Za-z_]\w*)*)
      |(?P<p>[{}(),;&=])
      |(?P<other>.)""",
    re.S | re.X,
)
ESC = {"\n": "", "n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0", "b": "\b", "f": "\f", "v": "\v"}


def unescape(s: str) -> str:
    out, i = [], 0
    raw = s.encode("utf-8")
    buf = bytearray()
    while i < len(raw):
        c = raw[i]
        if c == 0x5C:
            n = chr(raw[i + 1])
            if n == "x":
                m = re.match(rb"[0-9a-fA-F]+", raw[i + 2 :])
                buf.append(int(m.group(0), 16))
                i += 2 + len(m.group(0))
                continue
            if n == "u":
                buf += chr(int(raw[i + 2 : i + 6], 16)).encode()
                i += 6
                continue
            buf += ESC[n].encode()
            i += 2
        else:
            buf.append(c)
            i += 1
    # A few engine cases hold bytes that are not UTF-8; they are left out (see main).
    return buf.decode("utf-8", "surrogateescape")


def tokens(src: str):
    for m in TOKEN.finditer(src):
        k = m.lastgroup
        if k == "ws":
            continue
        if k == "raw":
            yield ("str", m.group("body"))
        elif k == "str":
            yield ("str", unescape(m.group(0)[m.group(0).index('"') + 1 : -1]))
        elif k == "chr":
            yield ("other", m.group(0))
        elif k == "delim" or k == "body":
            continue
        else:
            yield (k, m.group(0))


class Init(list):
    """A braced initializer list, resolved the way nlohmann::json does."""


def resolve(v):
    if isinstance(v, Init):
        items = [resolve(x) if not isinstance(x, Init) else x for x in v]
        if items and all(isinstance(x, Init) and len(x) == 2 and isinstance(x[0], str) for x in items):
            return {x[0]: resolve(x[1]) for x in items}
        return [resolve(x) for x in items]
    if isinstance(v, list):
        return [resolve(x) for x in v]
    return v


class Parser:
    def __init__(self, toks):
        self.t = toks
        self.i = 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else (None, None)

    def next(self):
        tok = self.t[self.i]
        self.i += 1
        return tok

    def expect(self, v):
        k, got = self.next()
        assert got == v, (v, got, self.t[self.i - 5 : self.i + 5])

    def value(self):
        k, v = self.peek()
        if k == "str":
            s = ""
            while self.peek()[0] == "str":
                s += self.next()[1]
            return s
        if k == "num":
            self.next()
            return float(v) if "." in v or "e" in v.lower() else int(v)
        if v == "{":
            self.next()
            items = Init()
            while self.peek()[1] != "}":
                items.append(self.value())
                if self.peek()[1] == ",":
                    self.next()
            self.next()
            return items
        if k == "id":
            self.next()
            if v == "true":
                return True
            if v == "false":
                return False
            if v in ("nullptr", "NULL"):
                return None
            if v in ("json::object", "json::array", "json::parse", "json", "std::string", "U8C"):
                if self.peek()[1] == "{":
                    inner = self.value()
                    return resolve(inner) if v == "json" else resolve(inner)
                self.expect("(")
                args = []
                while self.peek()[1] != ")":
                    args.append(self.value())
                    if self.peek()[1] == ",":
                        self.next()
                self.next()
                if v == "json::object":
                    return resolve(args[0]) if args else {}
                if v == "json::array":
                    return list(resolve(args[0])) if args else []
                if v == "json::parse":
                    return json.loads(args[0])
                return args[0] if args else None
            raise ValueError("unknown identifier " + v)
        raise ValueError("unexpected token %r" % (v,))


def jinja_cases(src: str):
    toks = list(tokens(src))
    cases = []
    i = 0
    while i < len(toks):
        if toks[i] == ("id", "test_template") and toks[i + 1][1] == "(" and toks[i + 2] == ("id", "t") and toks[i + 3][1] == ",":
            p = Parser(toks)
            p.i = i + 4
            name = p.value()
            p.expect(",")
            tmpl = p.value()
            p.expect(",")
            vars_ = resolve(p.value())
            p.expect(",")
            expect = p.value()
            p.expect(")")
            case = {"name": name, "template": tmpl, "vars": vars_, "expected": expect}
            try:
                json.dumps(case, ensure_ascii=False).encode("utf-8")
                cases.append(case)
            except UnicodeEncodeError:
                print("left out (not UTF-8, our templates are &str):", name)
            i = p.i
        else:
            i += 1
    return cases


def chat_template_cases(src: str):
    body = src[src.index("int main_automated_tests(void)") :]
    toks = list(tokens(body))
    p = Parser(toks)
    # the conversation
    while toks[p.i] != ("id", "conversation"):
        p.i += 1
    p.i += 1
    conv = p.value()  # pairs, not an object: roles repeat
    conversation = [{"role": r, "content": c} for r, c in conv]
    while toks[p.i] != ("id", "test_cases"):
        p.i += 1
    p.i += 1
    table = p.value()
    cases = []
    for row in table:
        if not row:
            continue
        row = list(row) + [None] * 8
        name, tmpl, expected, expected_jinja, bos, eos, supported, extra = row[:8]
        if supported is False:
            continue
        extra = [{"role": r, "content": c} for r, c in (extra or [])]
        cases.append(
            {
                "name": name,
                "template": tmpl,
                "bos_token": bos or "",
                "eos_token": eos or "",
                "messages": conversation + extra,
                "expected": expected_jinja or expected,
            }
        )
    return cases


def generation_prompt_cases(src: str):
    """test-chat.cpp's test_template_generation_prompt: for each template, the prompt of its
    basic() conversation (the system message and message_user) must end with the generation
    prompt given (common_chat_templates_apply with add_generation_prompt, enable_thinking)."""
    body = src[src.index("static void test_template_generation_prompt()") :]
    body = body[: body.index("\n}\n")]
    system = re.search(r'system_msg\.content\s*=\s*"([^"]*)"', body).group(1)
    user = re.search(r'const common_chat_msg message_user\{\s*"user",\s*"([^"]*)"', src).group(1)
    cases = []
    for block in re.finditer(r'read_templates\("models/templates/([^"]+)"\);(.*?)\n    \}', body, re.S):
        m = re.search(r'check\(tmpls, basic\(\),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\);', block.group(2))
        if m:
            lit = "".join(unescape(x[1:-1]) for x in re.findall(r'"(?:[^"\\]|\\.)*"', m.group(1)))
            cases.append(
                {
                    "template": block.group(1),
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
                    "generation_prompt": lit,
                }
            )
    return cases


def main() -> None:
    llama = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/targets/open/llama/src/vendor/llama.cpp")
    jc = jinja_cases((llama / "tests/test-jinja.cpp").read_text())
    ct = chat_template_cases((llama / "tests/test-chat-template.cpp").read_text())
    (OUT / "jinja_cases.json").write_text(json.dumps(jc, indent=1, ensure_ascii=False) + "\n")
    (OUT / "chat_template_cases.json").write_text(json.dumps(ct, indent=1, ensure_ascii=False) + "\n")
    gp = generation_prompt_cases((llama / "tests/test-chat.cpp").read_text())
    (OUT / "generation_prompt_cases.json").write_text(json.dumps(gp, indent=1, ensure_ascii=False) + "\n")
    print("test-jinja.cpp:", len(jc), "cases; test-chat-template.cpp:", len(ct), "cases; test-chat.cpp:", len(gp), "generation prompts")


if __name__ == "__main__":
    main()
