//! `gguf chat MODEL [MESSAGES]`: a conversation rendered with the model's
//! chat template as llama.cpp renders it (`gguf::chat`), printed as the
//! prompt, its token ids, or both.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use gguf::chat::{ChatTemplate, Conversation, RenderOptions, Rendered};
use gguf::tokenizer::Tokenizer;
use gguf::Model;

#[derive(clap::Args)]
pub struct Args {
    /// The model: a path (any shard of a split model), ollama:NAME[:TAG] or
    /// a URL (only its header is fetched).
    model: PathBuf,
    /// The conversation, as llama-server's chat request body takes it
    /// (`{"messages": [...], "tools": [...]}`, other fields ignored) or a
    /// bare list of messages; `-` or nothing for standard input.
    messages: Option<PathBuf>,
    /// The tools the conversation may call: a JSON list of OpenAI tool
    /// definitions (`[{"type": "function", "function": {...}}]`), in place
    /// of the request's own `tools`.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// Do not end the prompt with the start of the assistant's turn
    /// (llama.cpp's `add_generation_prompt` false).
    #[arg(long)]
    no_generation_prompt: bool,
    /// Set the template's `enable_thinking` to true (llama.cpp's default).
    #[arg(long, conflicts_with = "no_thinking")]
    enable_thinking: bool,
    /// Set the template's `enable_thinking` to false.
    #[arg(long)]
    no_thinking: bool,
    /// Extra template variables, a JSON object (llama-server's
    /// `chat_template_kwargs`), over the request's own
    /// `chat_template_kwargs`.
    #[arg(long, value_name = "JSON")]
    chat_template_kwargs: Option<String>,
    /// The template: a name of the model's (`default`, or NAME of
    /// `tokenizer.chat_template.NAME`, e.g. `tool_use`), or a Jinja file to
    /// try with the model's vocabulary.
    #[arg(long, value_name = "NAME|FILE")]
    template: Option<String>,
    /// Print the prompt's token ids (`[1, 2, 3]`, as `gguf tokenize --ids`),
    /// special tokens parsed only in the template's own text.
    #[arg(long)]
    ids: bool,
    /// Print a JSON document: the prompt, which of its bytes came from the
    /// conversation, its token ids and the template used.
    #[arg(long, conflicts_with = "ids")]
    json: bool,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// Reads a JSON document from `path` (or standard input), at most
/// [`gguf::read::MAX_TEXT_INPUT`] bytes.
fn read_json(path: Option<&Path>, what: &str) -> Result<serde_json::Value, String> {
    let limit = gguf::read::MAX_TEXT_INPUT;
    let (name, mut bytes) = match path.filter(|p| p.as_os_str() != "-") {
        Some(p) => {
            let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let mut buf = Vec::new();
            f.take(limit + 1)
                .read_to_end(&mut buf)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            (p.display().to_string(), buf)
        }
        None => {
            let mut buf = Vec::new();
            std::io::stdin()
                .take(limit + 1)
                .read_to_end(&mut buf)
                .map_err(|e| format!("<stdin>: {e}"))?;
            ("<stdin>".to_owned(), buf)
        }
    };
    if bytes.len() as u64 > limit {
        return Err(format!("{name}: {what} is larger than {limit} bytes"));
    }
    // A UTF-8 byte order mark, as editors on some systems write one.
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes.drain(..3);
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{name}: {what} is not JSON: {e}"))
}

/// The template `--template` names (or the model's default).
fn template(model: &Model<'_>, choice: Option<&str>) -> Result<(ChatTemplate, String), String> {
    let names = ChatTemplate::names(model);
    match choice {
        None => Ok((
            ChatTemplate::from_model(model, None).map_err(|e| e.to_string())?,
            "default".to_owned(),
        )),
        Some(name) if names.iter().any(|n| n == name) => {
            let key = (name != "default").then_some(name);
            Ok((
                ChatTemplate::from_model(model, key).map_err(|e| e.to_string())?,
                name.to_owned(),
            ))
        }
        Some(file) if Path::new(file).is_file() => {
            let source = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            let t =
                ChatTemplate::with_source(model, &source).map_err(|e| format!("{file}: {e}"))?;
            Ok((t, file.to_owned()))
        }
        Some(other) => Err(if names.is_empty() {
            format!("--template {other:?}: no such file, and the model has no named templates")
        } else {
            format!(
                "--template {other:?}: no such file, and not one of the model's templates: {}",
                names.join(", ")
            )
        }),
    }
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let shown = crate::open::shown(&args.model);
    let mut request = read_json(args.messages.as_deref(), "the conversation")?;
    if let Some(tools) = &args.tools {
        let tools = read_json(Some(tools), "--tools")?;
        if !tools.is_array() {
            return Err(crate::usage_error(
                "chat",
                "--tools: a JSON list of tool definitions",
            ));
        }
        if request.is_array() {
            request = serde_json::json!({ "messages": request });
        }
        if let Some(obj) = request.as_object_mut() {
            obj.insert("tools".into(), tools);
        }
    }
    let conversation = Conversation::from_json(&request)?;
    let mut options = RenderOptions::new();
    options.add_generation_prompt = !args.no_generation_prompt;
    options.enable_thinking = match (args.enable_thinking, args.no_thinking) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    if let Some(kwargs) = request
        .get("chat_template_kwargs")
        .and_then(|v| v.as_object())
    {
        options.extra.extend(kwargs.clone());
    }
    if let Some(text) = &args.chat_template_kwargs {
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => options.extra.extend(map),
            _ => {
                return Err(crate::usage_error(
                    "chat",
                    "--chat-template-kwargs: a JSON object ({\"name\": value, ...})",
                ))
            }
        }
    }

    let model = crate::open(&args.model, &args.source)?;
    let (template, name) =
        template(&model, args.template.as_deref()).map_err(|e| format!("{shown}: {e}"))?;
    let rendered = template
        .render(&conversation, &options)
        .map_err(|e| format!("{shown}: template {name}: {e}"))?;

    if args.json || args.ids {
        let tok = Tokenizer::from_model(&model).map_err(|e| format!("{shown}: {e}"))?;
        // llama-server tokenizes the prompt with special tokens added.
        let ids = rendered
            .encode(&tok, true)
            .map_err(|e| format!("{shown}: {e}"))?;
        if args.ids {
            let list: Vec<String> = ids.iter().map(u32::to_string).collect();
            return crate::print(&format!("[{}]", list.join(", ")));
        }
        return crate::json::print_pretty(&json_doc(&shown, &name, &rendered, &ids));
    }
    print_prompt(&rendered.text)
}

fn json_doc(model: &str, template: &str, r: &Rendered, ids: &[u32]) -> serde_json::Value {
    let input: Vec<[usize; 2]> = r.input_ranges().iter().map(|r| [r.start, r.end]).collect();
    serde_json::json!({
        "model": model,
        "template": template,
        "prompt": r.text,
        "input_ranges": input,
        "count": ids.len(),
        "ids": ids,
    })
}

/// The prompt as it is for a pipe or a file (what a program feeds the
/// model); on a terminal its control characters but line feeds escaped, as
/// everything this tool shows (the template is the file's text).
fn print_prompt(text: &str) -> Result<(), Box<dyn std::error::Error>> {
    if std::io::stdout().is_terminal() {
        return crate::print(text);
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
