"""``Model.chat``: the prompt ``gguf chat`` prints (the library's render,
checked against llama.cpp's own renders in the Rust suite), its ids with
special-token text typed in a message kept as text, and its errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import REPO
from test_summary import gguf_binary

import gguf_rs

VOCAB = REPO / "tests" / "data" / "tokenizer" / "llama-bpe.gguf"
TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
    "{{ m.content }}<|eot_id|>{% endfor %}{% if add_generation_prompt %}"
    "<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
    "{% if tools %}[{{ tools | length }} tools]{% endif %}{% if flavour %}({{ flavour }}){% endif %}"
)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> gguf_rs.Model:
    path = tmp_path_factory.mktemp("chat") / "chat.gguf"
    b = gguf_rs.Builder.from_file(VOCAB)
    b.set("tokenizer.chat_template", TEMPLATE)
    b.set("tokenizer.chat_template.short", "{% for m in messages %}{{ m.content }}|{% endfor %}")
    b.write(path)
    return gguf_rs.open(path)


def test_the_prompt_and_its_ids(model: gguf_rs.Model) -> None:
    prompt = model.chat([{"role": "user", "content": "Hi <|eot_id|>"}])
    assert prompt.text == (
        "<|start_header_id|>user<|end_header_id|>\n\nHi <|eot_id|><|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    tok = model.tokenizer()
    eot = tok.token_id("<|eot_id|>")
    # BOS added by the tokenizer; the user's <|eot_id|> is text.
    assert prompt.ids[0] == tok.specials["bos"]
    assert prompt.ids.count(eot) == 1
    start, end = prompt.input_ranges[0]
    assert prompt.text.encode()[start:end] == b"Hi <|eot_id|>"
    assert str(prompt) == prompt.text and "tokens" in repr(prompt)


def test_the_options_reach_the_template(model: gguf_rs.Model) -> None:
    messages = [{"role": "user", "content": "x"}]
    assert not model.chat(messages, add_generation_prompt=False).text.endswith("\n\n")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    assert model.chat(messages, tools=tools).text.endswith("[1 tools]")
    assert model.chat({"messages": messages, "chat_template_kwargs": {"flavour": "a"}}).text.endswith("(a)")
    assert model.chat(messages, chat_template_kwargs={"flavour": "b"}).text.endswith("(b)")
    assert model.chat_templates() == ["default", "short"]
    assert model.chat(messages, template="short").text == "x|"
    assert model.chat(messages, template_source="<{{ messages[0].content }}>").text == "<x>"


def test_the_prompt_is_what_gguf_chat_prints(model: gguf_rs.Model, tmp_path: Path) -> None:
    binary = gguf_binary()
    if binary is None:
        pytest.skip("no gguf binary (cargo build, or set GGUF_BIN) to compare gguf chat with")
    path = tmp_path / "chat.gguf"
    b = gguf_rs.Builder.from_file(VOCAB)
    b.set("tokenizer.chat_template", TEMPLATE)
    b.write(path)
    conversation = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    ids = subprocess.run(
        [str(binary), "chat", str(path), "--ids"], input=json.dumps(conversation), capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(ids) == gguf_rs.open(path).chat(conversation).ids


def test_errors(model: gguf_rs.Model) -> None:
    with pytest.raises(gguf_rs.GGUFError, match="raised: no"):
        model.chat([{"role": "user", "content": "x"}], template_source="{{ raise_exception('no') }}")
    with pytest.raises(gguf_rs.GGUFError, match="line 1"):
        model.chat([{"role": "user", "content": "x"}], template_source="{% for %}")
    with pytest.raises(gguf_rs.GGUFError, match="rag"):
        model.chat([{"role": "user", "content": "x"}], template="rag")
    with pytest.raises(gguf_rs.GGUFError, match="no chat template"):
        gguf_rs.open(VOCAB).chat([{"role": "user", "content": "x"}])
