//! A chat template: read from a model or given, probed once for what it supports, rendered as
//! llama.cpp's `common_chat_templates_apply` renders it.

use std::io;
use std::ops::Range;

use gguf_core::Gguf;
use gguf_tokenizer::Tokenizer;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value, ValueKind};
use minijinja::{Environment, ErrorKind};
use serde_json::{json, Map, Value as Json};

use crate::conversation::{concat_parts, Content, Conversation};
use crate::engine::{bounded, environment, probe_string, RAISED};
use crate::error::{Error, Limit, Result};
use crate::handlers::Handler;
use crate::options::{strftime, Limits, RenderOptions};
use crate::rendered::Rendered;
use crate::values::from_json;

/// What a template supports, found by rendering probe conversations (llama.cpp's `caps_get`
/// tracks which inputs a probe render touched; we look at what reached the output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Content as a string reaches the output.
    pub string_content: bool,
    /// Content as a list of typed parts reaches the output.
    pub typed_content: bool,
    /// A leading system message reaches the output.
    pub system_role: bool,
    /// An assistant message's tool calls reach the output.
    pub tool_calls: bool,
    /// Tool-call arguments given as an object reach the output (the template reads them as
    /// an object, so string arguments are parsed before rendering).
    pub object_arguments: bool,
}

/// A chat template, ready to render conversations.
///
/// ```
/// use gguf_chat::{ChatTemplate, Conversation, RenderOptions};
/// let t = ChatTemplate::new("{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}", "<s>", "</s>")?;
/// let conv = Conversation::from_json(&serde_json::json!([{"role": "user", "content": "hi"}]))?;
/// assert_eq!(t.render(&conv, &RenderOptions::new())?.text, "<s>hi");
/// # Ok::<(), gguf_chat::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ChatTemplate {
    source: String,
    bos_token: String,
    eos_token: String,
    add_bos: bool,
    add_eos: bool,
    caps: Caps,
}

const NEEDLE: &str = "GGUF_CHAT_PROBE_5d1e";
const NEEDLE2: &str = "GGUF_CHAT_PROBE_2_9c4b";

/// HF's `{% generation %}` ... `{% endgeneration %}` (a marker for training masks; it renders
/// its body) as a block minijinja knows, keeping every other byte where it was.
fn without_generation_tags(source: &str) -> std::borrow::Cow<'_, str> {
    if !source.contains("generation") {
        return source.into();
    }
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(i) = rest.find("{%") {
        out.push_str(&rest[..i]);
        let tag = &rest[i..];
        let Some(end) = tag.find("%}") else {
            out.push_str(tag);
            rest = "";
            break;
        };
        let inner = tag[2..end].trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        let (l, r) = (
            if tag[2..].starts_with('-') { "-" } else { "" },
            if tag[..end].ends_with('-') { "-" } else { "" },
        );
        match inner {
            "generation" => out.push_str(&format!("{{%{l} if true {r}%}}")),
            "endgeneration" => out.push_str(&format!("{{%{l} endif {r}%}}")),
            _ => out.push_str(&tag[..end + 2]),
        }
        rest = &tag[end + 2..];
    }
    out.push_str(rest);
    out.into()
}

/// 1-based line and column (in characters) of a byte offset.
fn line_col(source: &str, at: usize) -> (usize, usize) {
    let at = at.min(source.len());
    let before = source.get(..at).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// An engine error as the crate's, with the template position.
/// The formatting budget of one probe render (its output is at most 1 MiB).
const PROBE_FORMAT_BYTES: u64 = 4 << 20;

pub(crate) fn engine_error(source: &str, e: &minijinja::Error, limits: &Limits) -> Error {
    let detail = e.detail().unwrap_or("");
    if e.kind() == ErrorKind::OutOfFuel {
        return Error::Limit {
            limit: Limit::Fuel,
            max: limits.fuel,
        };
    }
    if detail == minijinja::budget::SPENT {
        return Error::Limit {
            limit: Limit::FormatBytes,
            max: limits.format_bytes,
        };
    }
    if e.kind() == ErrorKind::WriteFailure {
        return Error::Limit {
            limit: Limit::OutputBytes,
            max: limits.output_bytes,
        };
    }
    if detail.contains("recursion limit") || e.to_string().contains("recursion limit") {
        return Error::Limit {
            limit: Limit::Recursion,
            max: limits.recursion as u64,
        };
    }
    // A raise_exception deep in a macro arrives wrapped: look through the chain.
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(m) = err.downcast_ref::<minijinja::Error>()
            && let Some((_, msg)) = m.detail().and_then(|d| d.split_once(RAISED))
        {
            return Error::Raised {
                line: m.line().or(e.line()),
                message: msg.to_string(),
            };
        }
        cur = err.source();
    }
    let (line, column) = match e.range() {
        Some(r) => {
            let (l, c) = line_col(source, r.start);
            (Some(l), Some(c))
        }
        None => (e.line(), None),
    };
    let message = match e.detail() {
        Some(d) => format!("{}: {d}", e.kind()),
        None => e.kind().to_string(),
    };
    Error::Template {
        line,
        column,
        message,
    }
}

/// A writer that refuses to grow past a size.
struct Bounded {
    buf: Vec<u8>,
    max: u64,
}

impl io::Write for Bounded {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if (self.buf.len() + b.len()) as u64 > self.max {
            return Err(io::Error::other("the output size limit"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ChatTemplate {
    /// A template from its source and the BOS/EOS texts the template receives as `bos_token`
    /// and `eos_token`. Fails with the line and column of a syntax error.
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<ChatTemplate> {
        let limits = Limits::default();
        if source.len() as u64 > limits.template_bytes {
            return Err(Error::Limit {
                limit: Limit::TemplateBytes,
                max: limits.template_bytes,
            });
        }
        let env = environment(&limits, 0);
        let source = without_generation_tags(source);
        env.template_from_str(&source)
            .map_err(|e| engine_error(&source, &e, &limits))?;
        let mut t = ChatTemplate {
            source: source.into_owned(),
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
            add_bos: false,
            add_eos: false,
            caps: Caps {
                string_content: true,
                typed_content: false,
                system_role: true,
                tool_calls: true,
                object_arguments: false,
            },
        };
        t.caps = t.probe(&env);
        Ok(t)
    }

    /// The model's template: `tokenizer.chat_template`, or `tokenizer.chat_template.NAME` with
    /// a name; `bos_token`/`eos_token` are the texts of the vocabulary's BOS and EOS tokens
    /// (empty when it has none), as llama.cpp passes them. Where the model adds BOS (EOS),
    /// a prompt that starts with the BOS text (ends with the EOS text) loses it, as in
    /// llama.cpp, so that tokenizing with `add_special` does not double it.
    pub fn from_model(model: &impl Gguf, name: Option<&str>) -> Result<ChatTemplate> {
        let key = match name {
            Some(n) => format!("tokenizer.chat_template.{n}"),
            None => "tokenizer.chat_template".to_string(),
        };
        let source = match model.value(&key) {
            Some(v) => v
                .as_str()
                .ok_or_else(|| Error::Model(format!("{key} is not a string")))?
                .to_string(),
            None => {
                let names = ChatTemplate::names(model);
                return Err(Error::Model(if names.is_empty() {
                    format!("the model has no chat template ({key})")
                } else {
                    format!(
                        "the model has no {key}; its templates: {}",
                        names.join(", ")
                    )
                }));
            }
        };
        ChatTemplate::with_source(model, &source)
    }

    /// `source` as a template of `model`: its BOS and EOS texts, and its BOS/EOS handling, as
    /// [`from_model`](Self::from_model) gives them; for trying a template on a model that has
    /// another one or none.
    pub fn with_source(model: &impl Gguf, source: &str) -> Result<ChatTemplate> {
        let tok = Tokenizer::from_model(model)?;
        let text = |id: Option<u32>| -> Result<String> {
            match id {
                Some(id) => {
                    Ok(String::from_utf8_lossy(&tok.token_to_piece(id, true)?).into_owned())
                }
                None => Ok(String::new()),
            }
        };
        let specials = tok.specials();
        let mut t = ChatTemplate::new(source, &text(specials.bos)?, &text(specials.eos)?)?;
        t.add_bos = tok.flags().add_bos;
        t.add_eos = tok.flags().add_eos;
        Ok(t)
    }

    /// The names of the model's templates: `default` for `tokenizer.chat_template`, then the
    /// `NAME`s of `tokenizer.chat_template.NAME` (llama.cpp's `tool_use`, `rag`, ...).
    pub fn names(model: &impl Gguf) -> Vec<String> {
        let mut out = Vec::new();
        for k in model.keys() {
            if k == "tokenizer.chat_template" {
                out.insert(0, "default".to_string());
            } else if let Some(n) = k.strip_prefix("tokenizer.chat_template.") {
                out.push(n.to_string());
            }
        }
        out
    }

    /// The template's source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The text the template receives as `bos_token`.
    pub fn bos_token(&self) -> &str {
        &self.bos_token
    }

    /// The text the template receives as `eos_token`.
    pub fn eos_token(&self) -> &str {
        &self.eos_token
    }

    /// What the template supports, as found when it was made.
    pub fn caps(&self) -> Caps {
        self.caps
    }

    /// Whether a leading BOS text (trailing EOS text) is removed from the prompt because the
    /// model's tokenizer adds the token itself (set by [`from_model`](Self::from_model)).
    pub fn with_add_special(mut self, add_bos: bool, add_eos: bool) -> ChatTemplate {
        self.add_bos = add_bos;
        self.add_eos = add_eos;
        self
    }

    fn probe_once(
        &self,
        env: &Environment<'_>,
        messages: Json,
        tools: Option<Json>,
    ) -> Option<String> {
        self.probe_with(env, from_json(&messages), tools)
    }

    fn probe_with(
        &self,
        env: &Environment<'_>,
        messages: Value,
        tools: Option<Json>,
    ) -> Option<String> {
        let mut ctx = Map::new();
        ctx.insert("bos_token".into(), self.bos_token.clone().into());
        ctx.insert("eos_token".into(), self.eos_token.clone().into());
        ctx.insert("add_generation_prompt".into(), true.into());
        if let Some(t) = tools {
            ctx.insert("tools".into(), t);
        }
        let tmpl = env.template_from_str(&self.source).ok()?;
        let mut w = Bounded {
            buf: Vec::new(),
            max: 1 << 20,
        };
        let limits = Limits {
            format_bytes: PROBE_FORMAT_BYTES,
            ..Limits::default()
        };
        let ctx = from_json(&Json::Object(ctx));
        let ctx = minijinja::context! { messages => messages, ..ctx };
        bounded(&limits, || tmpl.render_captured_to(ctx, &mut w)).ok()?;
        String::from_utf8(w.buf).ok()
    }

    fn probe(&self, env: &Environment<'_>) -> Caps {
        let mut env = env.clone();
        env.set_fuel(Some(2_000_000));
        env.add_filter("string", probe_string);
        let user = |c: Json| json!([{"role": "user", "content": c}]);
        // Whether the template tests `content is string`, as llama.cpp's probe records it.
        let tests_string = Arc::new(AtomicBool::new(false));
        let seen = tests_string.clone();
        env.add_test("string", move |v: Value| {
            if v.as_str() == Some(NEEDLE) {
                seen.store(true, Ordering::Relaxed);
            }
            v.kind() == ValueKind::String
        });
        let as_string = self.probe_once(&env, user(NEEDLE.into()), None);
        // Parts reach the output as text only if neither their `type` nor their layout as a
        // list does (a template that writes the list with `~` or `tojson` does not read parts).
        let as_parts = self.probe_once(
            &env,
            user(json!([{"type": "text", "text": NEEDLE}, {"type": "text", "text": NEEDLE2}])),
            None,
        );
        let typed_content = if tests_string.load(Ordering::Relaxed) {
            // A template that tells strings from lists reads parts, for llama.cpp, if given an
            // empty list it renders and iterates or indexes it; otherwise llama.cpp joins the
            // parts into a string before rendering.
            let list = Arc::new(ProbeList::default());
            let messages = Value::from(vec![minijinja::context! {
                role => "user",
                content => Value::from_dyn_object(list.clone()),
            }]);
            self.probe_with(&env, messages, None).is_some() && list.read.load(Ordering::Relaxed)
        } else {
            as_parts.as_deref().is_some_and(|o| {
                o.contains(NEEDLE)
                    && o.contains(NEEDLE2)
                    && !o.contains("'type'")
                    && !o.contains("\"type\"")
            })
        };
        let string_content = match &as_string {
            None => false,
            Some(o) => o.contains(NEEDLE) || !typed_content,
        };
        let system = self.probe_once(
            &env,
            json!([{"role": "system", "content": NEEDLE}, {"role": "user", "content": "User message"}]),
            None,
        );
        let system_role = system.as_deref().is_some_and(|o| o.contains(NEEDLE));
        let tools = json!([{"type": "function", "function": {"name": "tool1", "description": "Tool description",
            "parameters": {"type": "object", "properties": {"arg": {"type": "string", "description": "Arg description"}},
            "required": ["arg"]}}}]);
        let calls = |args: Json| {
            json!([
                {"role": "user", "content": "User message"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "call00001", "type": "function",
                    "function": {"name": "tool1", "arguments": args}}]},
                {"role": "tool", "content": "Tool response", "tool_call_id": "call00001"},
                {"role": "assistant", "content": "The tool response was 'tool response'"},
                {"role": "user", "content": "User message"},
            ])
        };
        let object = self.probe_once(&env, calls(json!({"arg": NEEDLE})), Some(tools.clone()));
        // llama.cpp counts the arguments as read as an object when their item is used: read
        // by name, iterated, or written whole by `tojson`/`string` (JSON here, see
        // `probe_string`); not when the object is only written whole by `+`, `~` or `{{ }}`
        // (Python's `repr`, single quotes).
        let object_arguments = object
            .as_deref()
            .is_some_and(|o| o.contains(NEEDLE) && !o.contains(&format!("'arg': '{NEEDLE}'")));
        let tool_calls = object_arguments || {
            let s = self.probe_once(
                &env,
                calls(json!({"arg": NEEDLE}).to_string().into()),
                Some(tools),
            );
            s.as_deref().is_some_and(|o| o.contains(NEEDLE))
        };
        Caps {
            string_content,
            typed_content,
            system_role,
            tool_calls,
            object_arguments,
        }
    }

    /// The template alone with exactly these variables: no workarounds, no llama.cpp context
    /// (what llama.cpp's `test-jinja` checks its engine with).
    ///
    /// ```
    /// let t = gguf_chat::ChatTemplate::new("{{ x|tojson }} {{ 2.0 }} {{ none }}", "", "")?;
    /// let vars = serde_json::json!({"x": {"a": [1, true]}});
    /// let out = t.render_vars(vars.as_object().unwrap(), &gguf_chat::RenderOptions::new())?;
    /// assert_eq!(out, r#"{"a": [1, true]} 2.0 None"#);
    /// # Ok::<(), gguf_chat::Error>(())
    /// ```
    pub fn render_vars(&self, vars: &Map<String, Json>, opts: &RenderOptions) -> Result<String> {
        let limits = &opts.limits;
        let env = environment(limits, opts.now);
        let err = |e: minijinja::Error| engine_error(&self.source, &e, limits);
        let tmpl = env.template_from_str(&self.source).map_err(err)?;
        let mut w = Bounded {
            buf: Vec::new(),
            max: limits.output_bytes,
        };
        bounded(limits, || {
            tmpl.render_captured_to(from_json(&Json::Object(vars.clone())), &mut w)
        })
        .map_err(err)?;
        String::from_utf8(w.buf).map_err(|_| Error::Template {
            line: None,
            column: None,
            message: "the output is not UTF-8".into(),
        })
    }

    /// The messages as this template gets them: llama.cpp's workarounds applied.
    fn messages_for_template(&self, conv: &Conversation) -> Result<Vec<Json>> {
        let mut conv = conv.clone();
        if self
            .source
            .contains("You have access to the following functions in JSONSchema format")
        {
            // StepFun: contents trimmed (llama.cpp's trim_all_content).
            for m in &mut conv.messages {
                match &mut m.content {
                    Content::Text(t) => *t = t.trim().to_string(),
                    Content::Parts(p) => {
                        for part in p.iter_mut().filter(|p| p.kind == "text") {
                            part.text = part.text.trim().to_string();
                        }
                    }
                }
                m.reasoning_content = m.reasoning_content.trim().to_string();
            }
        }
        let mut messages = conv.messages_json();
        let caps = self.caps;
        let only_string = caps.string_content && !caps.typed_content;
        let only_typed = !caps.string_content && caps.typed_content;
        for m in &mut messages {
            let Some(c) = m.get_mut("content") else {
                continue;
            };
            if only_typed && c.is_string() {
                *c = json!([{"type": "text", "text": c.as_str().unwrap_or("")}]);
            } else if only_string && c.is_array() {
                let parts: Vec<(String, String)> = c
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| {
                        (
                            p["type"].as_str().unwrap_or("").to_string(),
                            p["text"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect();
                *c = concat_parts(parts.iter().map(|(k, t)| (k.as_str(), t.as_str()))).into();
            }
        }
        if !self.source.contains("<|channel|>") {
            for m in &mut messages {
                if m["role"] == "developer" {
                    m["role"] = "system".into();
                }
            }
        }
        if !caps.system_role && messages.first().is_some_and(|m| m["role"] == "system") {
            let first = messages.remove(0);
            if let Some(next) = messages.first_mut() {
                let (Some(a), Some(b)) = (first["content"].as_str(), next["content"].as_str())
                else {
                    return Err(Error::Conversation(
                        "the template has no system role and the system message cannot be merged into the next (content parts)".into(),
                    ));
                };
                next["content"] = format!("{a}\n{b}").into();
            }
        }
        if caps.object_arguments {
            for m in &mut messages {
                let Some(calls) = m.get_mut("tool_calls").and_then(Json::as_array_mut) else {
                    continue;
                };
                for c in calls {
                    let args = &mut c["function"]["arguments"];
                    if let Some(s) = args.as_str() {
                        *args = serde_json::from_str(s).map_err(|e| {
                            Error::Conversation(format!("tool call arguments are not JSON: {e}"))
                        })?;
                    }
                }
            }
        }
        Ok(messages)
    }

    /// The prompt for a conversation, as llama.cpp's `common_chat_templates_apply` renders it
    /// (see the [crate](crate) documentation for the known differences), with the byte ranges
    /// that came from the conversation.
    pub fn render(&self, conv: &Conversation, opts: &RenderOptions) -> Result<Rendered> {
        let limits = &opts.limits;
        let handler = Handler::of(&self.source);
        let mut ctx = Map::new();
        ctx.insert(
            "messages".into(),
            Json::Array(handler.messages(self.messages_for_template(conv)?)),
        );
        ctx.insert("bos_token".into(), self.bos_token.clone().into());
        ctx.insert("eos_token".into(), self.eos_token.clone().into());
        ctx.insert(
            "enable_thinking".into(),
            opts.enable_thinking.unwrap_or(true).into(),
        );
        if let Some(t) = conv.tools_json() {
            ctx.insert("tools".into(), t);
        }
        ctx.insert("datetime".into(), strftime("%b %d %Y", opts.now).into());
        ctx.insert("date_string".into(), strftime("%d %b %Y", opts.now).into());
        for (k, v) in &opts.extra {
            ctx.insert(k.clone(), v.clone());
        }
        if opts.add_generation_prompt {
            ctx.insert("add_generation_prompt".into(), true.into());
        }
        let ctx: Value = from_json(&Json::Object(ctx));

        let env = environment(limits, opts.now);
        let err = |e: minijinja::Error| engine_error(&self.source, &e, limits);
        let tmpl = env.template_from_str(&self.source).map_err(err)?;
        // First bounded: the output limit is checked as it is written.
        let mut w = Bounded {
            buf: Vec::new(),
            max: limits.output_bytes,
        };
        bounded(limits, || {
            tmpl.render_captured_to(ctx.clone(), &mut w).map(|_| ())
        })
        .map_err(err)?;
        let text = String::from_utf8(w.buf).map_err(|_| Error::Template {
            line: None,
            column: None,
            message: "the output is not UTF-8".into(),
        })?;
        // Then again for where each piece of output came from (the same, now known bounded).
        let expressions: Vec<Range<usize>> = match bounded(limits, || tmpl.render_with_spans(ctx)) {
            Ok((again, spans)) if again == text => spans
                .iter()
                .filter(|s| s.kind() == minijinja::OutputSpanKind::Expression)
                .map(|s| s.output_range())
                .collect(),
            _ => std::iter::once(0..text.len()).collect(),
        };
        // A `{{ m.role }}` is template text to us (see the crate docs): spans that write exactly
        // a role are no place for content.
        let expressions: Vec<Range<usize>> = expressions
            .into_iter()
            .filter(|r| !conv.messages.iter().any(|m| m.role == text[r.clone()]))
            .collect();
        let inputs = conv.input_strings();
        let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let mut input = crate::rendered::mark(&text, &expressions, &inputs);
        let mut text = text;
        let suffix = handler.suffix(&text, opts.add_generation_prompt);
        text.push_str(suffix);
        if self.add_bos && !self.bos_token.is_empty() && text.starts_with(&self.bos_token) {
            let n = self.bos_token.len();
            text.drain(..n);
            input = input
                .into_iter()
                .filter_map(|r| {
                    let r = r.start.saturating_sub(n)..r.end.saturating_sub(n);
                    (r.start < r.end).then_some(r)
                })
                .collect();
        }
        if self.add_eos && !self.eos_token.is_empty() && text.ends_with(&self.eos_token) {
            let len = text.len() - self.eos_token.len();
            text.truncate(len);
            input = input
                .into_iter()
                .filter_map(|r| {
                    let r = r.start.min(len)..r.end.min(len);
                    (r.start < r.end).then_some(r)
                })
                .collect();
        }
        Ok(Rendered::new(text, input))
    }
}

/// An empty list that records whether a template iterated or indexed it (what llama.cpp's
/// probe counts as reading content as a list); its length, its truth and writing it as text
/// are not reads.
#[derive(Debug, Default)]
struct ProbeList {
    read: AtomicBool,
}

impl Object for ProbeList {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, _key: &Value) -> Option<Value> {
        self.read.store(true, Ordering::Relaxed);
        None
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.read.store(true, Ordering::Relaxed);
        Enumerator::Seq(0)
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(0)
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[]")
    }
}
