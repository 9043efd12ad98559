//! `gguf chat MODEL [MESSAGES]`: the prompt, its ids and the JSON document,
//! the flags, and the errors, on llama.cpp's Llama 3 test vocabulary with a
//! Llama-3-style template.

use std::path::{Path, PathBuf};

use gguf::chat::{ChatTemplate, Conversation, RenderOptions};
use gguf::tokenizer::Tokenizer;
use gguf::write::Builder;
use gguf::Model;

use super::util::{gguf, stdout};

const TEMPLATE: &str = "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n\
    {{ m.content }}<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n\
    {% endif %}{% if enable_thinking is false %}(no thinking){% endif %}{% if tools %}[{{ tools | length }} tools]{% endif %}";

const TOOL_USE: &str = "{% for m in messages %}TOOL {{ m.role }}: {{ m.content }}\n{% endfor %}";

/// The vocabulary with `TEMPLATE` as its template and `TOOL_USE` as its
/// `tool_use` one, written into `dir`.
fn model(dir: &Path) -> PathBuf {
    let vocab = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tokenizer/llama-bpe.gguf"
    );
    let bytes = std::fs::read(vocab).unwrap();
    let source = Model::open(&bytes).unwrap();
    let mut b = Builder::from_model(&source).unwrap();
    b.set("tokenizer.chat_template", TEMPLATE).unwrap();
    b.set("tokenizer.chat_template.tool_use", TOOL_USE).unwrap();
    let path = dir.join("chat.gguf");
    std::fs::write(&path, b.to_vec().unwrap()).unwrap();
    path
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const CONVERSATION: &str =
    r#"{"model": "x", "messages": [{"role": "user", "content": "Hi <|eot_id|> there"}]}"#;

#[test]
fn the_prompt_is_the_librarys_render_and_the_ids_its_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let conv = write(dir.path(), "conv.json", CONVERSATION);
    let chat = |extra: &[&str]| {
        let mut args = vec!["chat".as_ref(), m.as_os_str(), conv.as_os_str()];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        stdout(&gguf(&args))
    };
    let prompt = chat(&[]);
    // The model adds BOS: the template's leading BOS text is dropped.
    assert_eq!(
        prompt,
        "<|start_header_id|>user<|end_header_id|>\n\nHi <|eot_id|> there<|eot_id|>\
         <|start_header_id|>assistant<|end_header_id|>\n\n"
    );
    let bytes = std::fs::read(&m).unwrap();
    let model = Model::open(&bytes).unwrap();
    let tok = Tokenizer::from_model(&model).unwrap();
    let r = ChatTemplate::from_model(&model, None)
        .unwrap()
        .render(
            &Conversation::from_json(&serde_json::from_str(CONVERSATION).unwrap()).unwrap(),
            &RenderOptions::new(),
        )
        .unwrap();
    let want: Vec<u32> = r.encode(&tok, true).unwrap();
    let ids = chat(&["--ids"]);
    let list: Vec<String> = want.iter().map(u32::to_string).collect();
    assert_eq!(ids.trim_end(), format!("[{}]", list.join(", ")));
    // The user's <|eot_id|> is text: one eot id per turn, not two.
    let eot = tok.token_id("<|eot_id|>").unwrap();
    assert_eq!(want.iter().filter(|&&i| i == eot).count(), 1);
    assert_eq!(want[0], tok.specials().bos.unwrap());

    let json: serde_json::Value = serde_json::from_str(&chat(&["--json"])).unwrap();
    assert_eq!(json["prompt"], prompt);
    assert_eq!(json["template"], "default");
    assert_eq!(json["count"], want.len());
    assert_eq!(json["ids"], serde_json::json!(want));
    let [start, end] = [&json["input_ranges"][0][0], &json["input_ranges"][0][1]]
        .map(|v| v.as_u64().unwrap() as usize);
    assert_eq!(&prompt[start..end], "Hi <|eot_id|> there");
}

#[test]
fn flags_reach_the_template_and_stdin_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let tools = write(
        dir.path(),
        "tools.json",
        r#"[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]"#,
    );
    let run = |args: &[&std::ffi::OsStr], input: &str| {
        use std::io::Write;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
            .arg("chat")
            .arg(&m)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let bare = r#"[{"role": "user", "content": "x"}]"#;
    let out = stdout(&run(
        &["--no-generation-prompt".as_ref(), "--no-thinking".as_ref()],
        bare,
    ));
    assert_eq!(
        out,
        "<|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>(no thinking)"
    );
    let out = stdout(&run(
        &["-".as_ref(), "--tools".as_ref(), tools.as_os_str()],
        bare,
    ));
    assert!(out.ends_with("[1 tools]"), "{out}");
    let out = stdout(&run(&["--template".as_ref(), "tool_use".as_ref()], bare));
    assert_eq!(out, "TOOL user: x\n");
    let file = write(
        dir.path(),
        "t.jinja",
        "{{ bos_token }}|{% for m in messages %}{{ m.content }}{% endfor %}",
    );
    let out = stdout(&run(&["--template".as_ref(), file.as_os_str()], bare));
    // A file's template gets the model's BOS text, dropped at the start
    // since the model adds BOS.
    assert_eq!(out, "|x");
    let out = stdout(&run(
        &[
            "--chat-template-kwargs".as_ref(),
            r#"{"enable_thinking": false}"#.as_ref(),
        ],
        bare,
    ));
    assert!(out.ends_with("(no thinking)"), "{out}");
}

#[test]
fn errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let conv = write(dir.path(), "conv.json", "{not json");
    let o = gguf(&["chat".as_ref(), m.as_os_str(), conv.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("conv.json: the conversation is not JSON"),
        "{err}"
    );

    let conv = write(dir.path(), "conv.json", CONVERSATION);
    let o = gguf(&[
        "chat".as_ref(),
        m.as_os_str(),
        conv.as_os_str(),
        "--template".as_ref(),
        "rag".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not one of the model's templates: default, tool_use"),
        "{err}"
    );

    // A model without a template says so.
    let vocab = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tokenizer/llama-bpe.gguf"
    );
    let o = gguf(&["chat".as_ref(), vocab.as_ref(), conv.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no chat template"));

    // A template that raises: its message, the template named.
    let bad = write(
        dir.path(),
        "bad.jinja",
        "{{ raise_exception('only user turns') }}",
    );
    let o = gguf(&[
        "chat".as_ref(),
        m.as_os_str(),
        conv.as_os_str(),
        "--template".as_ref(),
        bad.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("only user turns") && err.contains("bad.jinja"),
        "{err}"
    );
}

#[test]
fn check_looks_at_every_template_whatever_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tokenizer/llama-bpe.gguf"
    );
    let bytes = std::fs::read(vocab).unwrap();
    let source = Model::open(&bytes).unwrap();
    // The known exploit, after a megabyte of padding, in a named template;
    // a default template that does not parse.
    let exploit = format!(
        "{}{{% for x in ().__class__.__base__.__subclasses__() %}}{{{{ x()._module.__builtins__['__import__']('os').popen('id') }}}}{{% endfor %}}",
        " ".repeat(1 << 20)
    );
    let mut b = Builder::from_model(&source).unwrap();
    b.set(
        "tokenizer.chat_template",
        "{% for m in messages %}{{ m.content }",
    )
    .unwrap();
    b.set("tokenizer.chat_template.tool_use", exploit.as_str())
        .unwrap();
    let path = dir.path().join("hostile.gguf");
    std::fs::write(&path, b.to_vec().unwrap()).unwrap();

    let o = gguf(&["check".as_ref(), path.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("template: chat template default (line 1"),
        "{out}"
    );
    assert!(
        out.contains("chat template tool_use (line 1, column 1048592): `__class__`"),
        "{out}"
    );
    assert!(out.contains("`.popen(`"), "{out}");

    let o = gguf(&["check".as_ref(), path.as_os_str(), "--json".as_ref()]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["ok"], false);
    let templates: Vec<_> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["check"] == "template")
        .collect();
    assert!(templates.len() >= 5, "{templates:?}");

    // A good template adds nothing to a file's check.
    let m = model(dir.path());
    let o = gguf(&["check".as_ref(), m.as_os_str(), "--json".as_ref()]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        !doc["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["check"] == "template"),
        "{doc}"
    );
}
