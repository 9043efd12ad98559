//! Differential test against llama.cpp's chat templates, live: for every template of
//! `tests/data/chat/templates/` (llama.cpp's `models/templates/`) and more conversations than
//! the goldens hold, llama.cpp's `test-chat-template --json IN --output OUT TEMPLATE` (through
//! `common_chat_templates_apply`, with the generation prompt) against `gguf::chat`. Opt-in:
//! `GGUF_LLAMA_TOOLS` names the llama tools directory (`bin/test-chat-template`); otherwise it
//! prints a `skipped:` line. Prints the tally per template and every difference; fails when fewer
//! than nine in ten prompts agree or when we panic.
//!
//! Then the token ids: every prompt both engines rendered the same, tokenized by llama.cpp
//! (`llama_tokenize(prompt, add_special, parse_special)` through llama-cpp-python, as its
//! server tokenizes a rendered prompt) and by `Rendered::encode`, with Gemma 3
//! (`GGUF_GEMMA_MODEL`) and llama.cpp's vocabularies (`GGUF_LLAMA_VOCABS`, its `models/`
//! directory; by default the one next to the tools' llama.cpp source). A prompt whose
//! conversation holds the text of one of the vocabulary's special tokens is not compared: there
//! we keep that text plain by design (the crate's documented difference), and it is counted
//! apart. Fails on any other difference.

use std::path::{Path, PathBuf};
use std::process::Command;

use gguf::chat::{ChatTemplate, Conversation, Error, RenderOptions, Rendered};
use gguf::tokenizer::Tokenizer;
use gguf::GgufFile;
use serde_json::{json, Value as Json};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chat")
}

/// The goldens' conversations and more: developer role, parallel tool calls with object
/// arguments, a final assistant message, empty content, template syntax in user text, a long
/// exchange.
fn conversations() -> Vec<(String, Json)> {
    let mut out: Vec<(String, Json)> = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(data().join("conversations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for p in files {
        let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        out.push((p.file_stem().unwrap().to_string_lossy().into_owned(), v));
    }
    let tools = out.iter().find(|(n, _)| n == "tools").unwrap().1["tools"].clone();
    // JSON-schema keys that are also built-in names (`items`, `keys`, `values`): llama.cpp's
    // engine reads `spec.items` as the method.
    out.push(("schema_builtins".into(), json!({"tools": [{"type": "function", "function": {
        "name": "add_items", "description": "Adds items.", "parameters": {"type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string"}, "description": "What to add"},
            "keys": {"type": "object", "description": "Keys", "values": {"type": "integer"}}},
        "required": ["items"]}}}], "messages": [{"role": "user", "content": "Add milk."}]})));
    out.push(("developer".into(), json!({"messages": [
        {"role": "developer", "content": "Answer in French."}, {"role": "user", "content": "Hello"}]})));
    out.push(("parallel_calls".into(), json!({"tools": tools, "messages": [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Rome", "unit": "celsius"}}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_b", "content": "rainy"},
        {"role": "user", "content": "Which is warmer?"}]})));
    out.push((
        "assistant_last".into(),
        json!({"messages": [
        {"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "Hi!"}]}),
    ));
    out.push(("empty".into(), json!({"messages": [
        {"role": "user", "content": ""}, {"role": "assistant", "content": ""}, {"role": "user", "content": "ok"}]})));
    out.push((
        "jinja_text".into(),
        json!({"messages": [
        {"role": "user", "content": "{{ 7*7 }} {% if x %}{# c #} \\n ' \" ` \u{0} \u{7f}"}]}),
    ));
    let mut long = Vec::new();
    for i in 0..12 {
        long.push(
            json!({"role": "user", "content": format!("Question {i}: {}", "why? ".repeat(i))}),
        );
        long.push(json!({"role": "assistant", "content": format!("  Answer {i}.\n\n  ")}));
    }
    long.push(json!({"role": "user", "content": "Last."}));
    out.push(("long".into(), json!({"messages": long})));
    out
}

#[test]
fn templates_render_as_llama_cpp_renders_them() {
    let Some(tools) = std::env::var_os("GGUF_LLAMA_TOOLS") else {
        eprintln!("skipped: GGUF_LLAMA_TOOLS is not set");
        return;
    };
    let tool = PathBuf::from(tools).join("bin/test-chat-template");
    if !tool.exists() {
        eprintln!("skipped: no {}", tool.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let convs = conversations();
    let mut templates: Vec<_> = std::fs::read_dir(data().join("templates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    templates.sort();
    // The tool renders with today's date (its clock, UTC here); so do we.
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let mut opts = RenderOptions::new();
    opts.now = secs / 86_400 * 86_400;
    let (mut total, mut equal) = (0, 0);
    let mut diffs = Vec::new();
    let mut same_prompts: Vec<(String, Rendered)> = Vec::new();
    for t in &templates {
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(t).unwrap();
        let ours_t = ChatTemplate::new(&source, "<s>", "</s>");
        let (mut t_eq, mut t_n) = (0, 0);
        for (cname, conv) in &convs {
            let input = dir.path().join("in.json");
            let output = dir.path().join("out.txt");
            let _ = std::fs::remove_file(&output);
            let mut req = conv.clone();
            req["bos_token"] = "<s>".into();
            req["eos_token"] = "</s>".into();
            std::fs::write(&input, req.to_string()).unwrap();
            let run = Command::new(&tool)
                .arg("--json")
                .arg(&input)
                .arg("--output")
                .arg(&output)
                .arg(t)
                .output()
                .unwrap();
            let theirs = if run.status.success() {
                std::fs::read_to_string(&output).ok()
            } else {
                None
            };
            let rendered = match &ours_t {
                Ok(tm) => Conversation::from_json(conv).and_then(|c| tm.render(&c, &opts)),
                Err(e) => Err(Error::Model(e.to_string())),
            };
            let ours = rendered
                .as_ref()
                .map(|r| r.text.clone())
                .map_err(|e| e.to_string());
            total += 1;
            t_n += 1;
            let same = match (&theirs, &ours) {
                (Some(a), Ok(b)) => a == b,
                (None, Err(_)) => true,
                _ => false,
            };
            if let (true, Ok(r)) = (same, rendered) {
                same_prompts.push((format!("{name} × {cname}"), r));
            }
            if same {
                equal += 1;
                t_eq += 1;
            } else {
                diffs.push(format!(
                    "{name} × {cname}:\n  llama.cpp {theirs:?}\n  ours      {ours:?}"
                ));
            }
        }
        println!("{name}: {t_eq}/{t_n}");
    }
    println!("differential: {equal}/{total} prompts equal");
    for d in &diffs {
        println!("{d}\n");
    }
    assert!(
        equal * 10 >= total * 9,
        "only {equal}/{total} prompts equal"
    );
    token_ids_match(&same_prompts);
}

/// The vocabularies the token ids are compared on.
fn vocabularies() -> Vec<PathBuf> {
    let mut models: Vec<PathBuf> = std::env::var_os("GGUF_GEMMA_MODEL")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    let dir = std::env::var_os("GGUF_LLAMA_VOCABS")
        .map(PathBuf::from)
        .or_else(|| {
            let tools = PathBuf::from(std::env::var_os("GGUF_LLAMA_TOOLS")?);
            Some(tools.join("src/vendor/llama.cpp/models"))
        });
    if let Some(dir) = dir.filter(|d| d.is_dir()) {
        models.extend(super::tokenize_oracle::vocab_files(&dir));
    }
    models
}

fn token_ids_match(prompts: &[(String, Rendered)]) {
    let Some(python) = super::tokenize_oracle::oracle_python() else {
        eprintln!("skipped: token ids not compared: no llama-cpp-python (GGUF_LLAMA_TOOLS/venv)");
        return;
    };
    let models = vocabularies();
    if models.is_empty() {
        eprintln!("skipped: token ids not compared: set GGUF_GEMMA_MODEL or GGUF_LLAMA_VOCABS");
        return;
    }
    let texts: Vec<String> = prompts.iter().map(|(_, r)| r.text.clone()).collect();
    let (mut total, mut equal, mut kept_plain) = (0, 0, 0);
    let mut diffs = Vec::new();
    for model in &models {
        let vocab = model.file_name().unwrap().to_string_lossy().into_owned();
        let tok = match Tokenizer::from_model(&GgufFile::open(model).unwrap()) {
            Ok(t) => t,
            Err(e) => {
                println!("{vocab}: not compared: {e}");
                continue;
            }
        };
        let answer = super::tokenize_oracle::ask(&python, model, &texts, false);
        let (mut v_eq, mut v_n) = (0, 0);
        for ((label, r), case) in prompts.iter().zip(answer["cases"].as_array().unwrap()) {
            let theirs: Vec<u32> = case["both"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            let ours = r.encode(&tok, true).unwrap();
            // Special-token text from the conversation: ours stays plain text, by design.
            if ours != tok.encode(&r.text, true, true).unwrap() {
                kept_plain += 1;
                continue;
            }
            total += 1;
            v_n += 1;
            if ours == theirs {
                equal += 1;
                v_eq += 1;
            } else if diffs.len() < 20 {
                diffs.push(format!(
                    "{vocab} {label}:\n  llama.cpp {theirs:?}\n  ours      {ours:?}"
                ));
            }
        }
        println!("{vocab}: {v_eq}/{v_n} token ids equal");
    }
    println!(
        "token ids: {equal}/{total} prompts equal ({kept_plain} with special-token text from the conversation, kept plain, not compared)"
    );
    for d in &diffs {
        println!("{d}\n");
    }
    assert_eq!(equal, total, "token ids differ");
}
