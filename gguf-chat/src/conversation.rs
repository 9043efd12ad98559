//! The conversation: llama-server's request body read as llama.cpp reads it
//! (`common_chat_msgs_parse_oaicompat`, `common_chat_tools_parse_oaicompat`).

use serde_json::{json, Map, Value as Json};

use crate::error::{Error, Result};

/// One piece of a message's content given as parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentPart {
    /// `text`, or `media_marker` (where an image or audio goes).
    pub kind: String,
    /// The text.
    pub text: String,
}

/// A message's content: text, or parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Plain text (empty when the request had none or `null`).
    Text(String),
    /// Typed parts (`[{"type": "text", "text": ...}]`).
    Parts(Vec<ContentPart>),
}

/// A call of a tool the assistant made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id (may be empty).
    pub id: String,
    /// The function's name.
    pub name: String,
    /// The arguments as JSON text (objects in the request are written out, as llama.cpp does).
    pub arguments: String,
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// `system`, `user`, `assistant`, `tool`, or any other role the template knows.
    pub role: String,
    /// The content.
    pub content: Content,
    /// The assistant's reasoning (`reasoning_content`; empty when none).
    pub reasoning_content: String,
    /// A tool result's tool name (`name`; empty when none).
    pub name: String,
    /// The call a tool result answers (`tool_call_id`; empty when none).
    pub tool_call_id: String,
    /// The tools the assistant called.
    pub tool_calls: Vec<ToolCall>,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// The function's name.
    pub name: String,
    /// Its description (empty when none).
    pub description: String,
    /// Its JSON-schema parameters (`{}` when none).
    pub parameters: Json,
}

/// The messages and tools of a chat request.
///
/// ```
/// use gguf_chat::Conversation;
/// let conv = Conversation::from_json(&serde_json::json!({
///     "model": "ignored",
///     "messages": [
///         {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
///         {"role": "assistant", "tool_calls": [{"type": "function",
///             "function": {"name": "f", "arguments": {"x": 1}}}]},
///         {"role": "tool", "tool_call_id": "1", "content": "ok"}
///     ]
/// }))?;
/// assert_eq!(conv.messages.len(), 3);
/// assert_eq!(conv.messages[1].tool_calls[0].arguments, r#"{"x":1}"#);
/// # Ok::<(), gguf_chat::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conversation {
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// The tools (empty when the request has none).
    pub tools: Vec<Tool>,
}

fn bad(what: impl Into<String>) -> Error {
    Error::Conversation(what.into())
}

fn string_at(obj: &Map<String, Json>, key: &str, what: &str) -> Result<String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(String::new()),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(other) => Err(bad(format!(
            "{what}: '{key}' must be a string, got {other}"
        ))),
    }
}

impl Conversation {
    /// Reads `{"messages": [...], "tools": [...]}` (llama-server's request body; other fields
    /// are ignored) or a bare list of messages, as llama.cpp does: a message needs `role` and
    /// `content` or `tool_calls`; content is a string, `null` or a list of `text` /
    /// `media_marker` parts; tool calls are of type `function`, their arguments a string or
    /// JSON (written out); tools are of type `function`.
    pub fn from_json(request: &Json) -> Result<Conversation> {
        let (messages, tools) = match request {
            Json::Array(_) => (request, None),
            Json::Object(o) => (
                o.get("messages")
                    .ok_or_else(|| bad("the request has no 'messages'"))?,
                o.get("tools"),
            ),
            other => {
                return Err(bad(format!(
                    "expected an object with 'messages' or a list of messages, got {}",
                    kind(other)
                )));
            }
        };
        let Json::Array(list) = messages else {
            return Err(bad("'messages' must be a list"));
        };
        let messages = list
            .iter()
            .enumerate()
            .map(|(i, m)| message(m).map_err(|e| bad(format!("message {i}: {e}"))))
            .collect::<Result<Vec<_>>>()?;
        let tools = match tools {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(t)) => t
                .iter()
                .enumerate()
                .map(|(i, t)| tool(t).map_err(|e| bad(format!("tool {i}: {e}"))))
                .collect::<Result<Vec<_>>>()?,
            Some(_) => return Err(bad("'tools' must be a list")),
        };
        Ok(Conversation { messages, tools })
    }

    /// The text of every string the conversation gives a template, in message order: what
    /// input marking looks for in a prompt.
    pub(crate) fn input_strings(&self) -> Vec<String> {
        let mut leaves = Vec::new();
        let mut out: Vec<&str> = Vec::new();
        for m in &self.messages {
            if !m.reasoning_content.is_empty() {
                out.push(m.reasoning_content.as_str());
            }
            match &m.content {
                Content::Text(t) => out.push(t.as_str()),
                Content::Parts(p) => out.extend(p.iter().map(|p| p.text.as_str())),
            }
            for c in &m.tool_calls {
                out.push(c.arguments.as_str());
            }
        }
        // Arguments a template gets as an object reach the output as their values.
        for m in &self.messages {
            for c in &m.tool_calls {
                if let Ok(v) = serde_json::from_str::<Json>(&c.arguments) {
                    leaf_strings(&v, &mut leaves);
                }
            }
        }
        let mut out: Vec<String> = out.into_iter().map(String::from).collect();
        out.extend(leaves);
        out.retain(|s| !s.is_empty());
        out
    }

    /// The messages as llama.cpp hands them to a template (`common_chat_msg::to_json_oaicompat`).
    pub(crate) fn messages_json(&self) -> Vec<Json> {
        self.messages.iter().map(Message::to_json).collect()
    }

    /// The tools as llama.cpp hands them to a template (`common_chat_tools_to_json_oaicompat`).
    pub(crate) fn tools_json(&self) -> Option<Json> {
        if self.tools.is_empty() {
            return None;
        }
        Some(Json::Array(
            self.tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect(),
        ))
    }
}

fn leaf_strings(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::String(s) => out.push(s.clone()),
        Json::Array(a) => a.iter().for_each(|x| leaf_strings(x, out)),
        Json::Object(o) => o.values().for_each(|x| leaf_strings(x, out)),
        _ => {}
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

fn message(m: &Json) -> Result<Message> {
    let Json::Object(o) = m else {
        return Err(bad(format!("expected an object, got {}", kind(m))));
    };
    let role = match o.get("role") {
        Some(Json::String(r)) => r.clone(),
        Some(_) => return Err(bad("'role' must be a string")),
        None => return Err(bad("missing 'role'")),
    };
    let has_calls = o.contains_key("tool_calls");
    let content = match o.get("content") {
        None if !has_calls => return Err(bad("expected 'content' or 'tool_calls'")),
        None | Some(Json::Null) => Content::Text(String::new()),
        Some(Json::String(s)) => Content::Text(s.clone()),
        Some(Json::Array(parts)) => Content::Parts(
            parts
                .iter()
                .map(|p| {
                    let Json::Object(p) = p else {
                        return Err(bad("a content part must be an object"));
                    };
                    let kind = match p.get("type") {
                        Some(Json::String(t)) if t == "text" || t == "media_marker" => t.clone(),
                        Some(t) => return Err(bad(format!("unsupported content part type {t}"))),
                        None => return Err(bad("a content part has no 'type'")),
                    };
                    Ok(ContentPart {
                        kind,
                        text: string_at(p, "text", "content part")?,
                    })
                })
                .collect::<Result<_>>()?,
        ),
        Some(other) => {
            return Err(bad(format!(
                "'content' must be a string or a list of parts, got {}",
                kind(other)
            )));
        }
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = o.get("tool_calls") {
        let Json::Array(calls) = calls else {
            return Err(bad("'tool_calls' must be a list"));
        };
        for c in calls {
            let Json::Object(c) = c else {
                return Err(bad("a tool call must be an object"));
            };
            if c.get("type").and_then(Json::as_str) != Some("function") {
                return Err(bad("unsupported tool call type (only 'function')"));
            }
            let Some(Json::Object(f)) = c.get("function") else {
                return Err(bad("a tool call has no 'function'"));
            };
            let name = match f.get("name") {
                Some(Json::String(n)) => n.clone(),
                _ => return Err(bad("a tool call has no function name")),
            };
            let arguments = match f.get("arguments") {
                Some(Json::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => return Err(bad("a tool call has no 'arguments'")),
            };
            tool_calls.push(ToolCall {
                id: string_at(c, "id", "tool call")?,
                name,
                arguments,
            });
        }
    }
    Ok(Message {
        role,
        content,
        reasoning_content: string_at(o, "reasoning_content", "message")?,
        name: string_at(o, "name", "message")?,
        tool_call_id: string_at(o, "tool_call_id", "message")?,
        tool_calls,
    })
}

fn tool(t: &Json) -> Result<Tool> {
    let Json::Object(t) = t else {
        return Err(bad("a tool must be an object"));
    };
    if t.get("type").and_then(Json::as_str) != Some("function") {
        return Err(bad("unsupported tool type (only 'function')"));
    }
    let Some(Json::Object(f)) = t.get("function") else {
        return Err(bad("a tool has no 'function'"));
    };
    let name = match f.get("name") {
        Some(Json::String(n)) => n.clone(),
        _ => return Err(bad("a tool has no function name")),
    };
    Ok(Tool {
        name,
        description: string_at(f, "description", "tool")?,
        parameters: f.get("parameters").cloned().unwrap_or_else(|| json!({})),
    })
}

impl Message {
    fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("role".into(), self.role.clone().into());
        let content = match &self.content {
            Content::Text(t) => Json::String(t.clone()),
            Content::Parts(p) if p.is_empty() => Json::String(String::new()),
            Content::Parts(p) if p.iter().any(|p| p.kind == "media_marker") => Json::String(
                concat_parts(p.iter().map(|p| (p.kind.as_str(), p.text.as_str()))),
            ),
            Content::Parts(p) => Json::Array(
                p.iter()
                    .map(|p| json!({"type": p.kind, "text": p.text}))
                    .collect(),
            ),
        };
        m.insert("content".into(), content);
        if !self.reasoning_content.is_empty() {
            m.insert(
                "reasoning_content".into(),
                self.reasoning_content.clone().into(),
            );
        }
        if !self.name.is_empty() {
            m.insert("name".into(), self.name.clone().into());
        }
        if !self.tool_call_id.is_empty() {
            m.insert("tool_call_id".into(), self.tool_call_id.clone().into());
        }
        if !self.tool_calls.is_empty() {
            let calls = self
                .tool_calls
                .iter()
                .map(|c| {
                    let mut tc = Map::new();
                    tc.insert("type".into(), "function".into());
                    tc.insert(
                        "function".into(),
                        json!({"name": c.name, "arguments": c.arguments}),
                    );
                    if !c.id.is_empty() {
                        tc.insert("id".into(), c.id.clone().into());
                    }
                    Json::Object(tc)
                })
                .collect();
            m.insert("tool_calls".into(), Json::Array(calls));
        }
        Json::Object(m)
    }
}

/// Parts joined as llama.cpp joins them: a newline between texts, none around media markers.
pub(crate) fn concat_parts<'a>(parts: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut text = String::new();
    let mut last_media = false;
    for (kind, t) in parts {
        let newline = match kind {
            "text" => {
                let nl = !last_media && !text.is_empty();
                last_media = false;
                nl
            }
            "media_marker" => {
                last_media = true;
                false
            }
            _ => continue,
        };
        if newline {
            text.push('\n');
        }
        text.push_str(t);
    }
    text
}
