//! The input changes of llama.cpp's model-specific handlers (`common/parsers/*.cpp`) that reach
//! the prompt: the messages a handler renders instead of the generic ones, and what it appends.

use serde_json::{json, Value as Json};

/// Which of llama.cpp's handlers, chosen as `common_chat_try_specialized_template` chooses them
/// (by the template's source), changes the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handler {
    /// Ministral 3 / Magistral (and templates like Devstral's with the same markers):
    /// reasoning and content as typed blocks of system and assistant messages.
    Ministral3,
    /// Gemma 4: a model turn opened after a closed turn; older templates also get tool results
    /// folded into the assistant message (`tool_responses`).
    Gemma4 { fold_tool_results: bool },
    /// Every other template: the generic path.
    Generic,
}

impl Handler {
    pub(crate) fn of(src: &str) -> Handler {
        if src.contains("[SYSTEM_PROMPT]")
            && src.contains("[TOOL_CALLS]")
            && src.contains("[ARGS]")
            && !src.contains("[CALL_ID]")
        {
            return Handler::Ministral3;
        }
        // GPT-OSS, Muse Glimmer, Functionary 3.2 and Kimi K2 come first in llama.cpp's order;
        // their handlers render the generic messages.
        if src.contains("<|channel|>")
            || (src.contains("<atem:function_calls>") && src.contains("<|eom|>"))
            || (src.contains(">>>all") && src.contains(">>>${recipient}"))
            || (src.contains("<|tool_calls_section_begin|>") && src.contains("<|tool_call_begin|>"))
        {
            return Handler::Generic;
        }
        if src.contains("'<|tool_call>call:'") {
            return Handler::Gemma4 {
                fold_tool_results: !src.contains("{#- OpenAI Chat Completions:"),
            };
        }
        Handler::Generic
    }

    /// The messages the handler renders.
    pub(crate) fn messages(self, messages: Vec<Json>) -> Vec<Json> {
        match self {
            Handler::Ministral3 => messages.into_iter().map(ministral3_message).collect(),
            Handler::Gemma4 {
                fold_tool_results: true,
            } => fold_gemma4(messages),
            _ => messages,
        }
    }

    /// What the handler appends to the rendered prompt.
    pub(crate) fn suffix(self, prompt: &str, add_generation_prompt: bool) -> &'static str {
        match self {
            Handler::Gemma4 { .. } if add_generation_prompt && prompt.ends_with("<turn|>\n") => {
                "<|turn>model\n"
            }
            _ => "",
        }
    }
}

/// llama.cpp's `common_chat_params_init_ministral_3`: a system or assistant message's
/// reasoning becomes a `thinking` block and its content a `text` block (parts stay parts).
fn ministral3_message(mut m: Json) -> Json {
    let role = m["role"].as_str().unwrap_or("");
    if role != "system" && role != "assistant" {
        return m;
    }
    let mut blocks = Vec::new();
    if let Some(r) = m.get("reasoning_content").and_then(Json::as_str) {
        blocks.push(json!({"type": "thinking", "thinking": r}));
    }
    match m.get("content") {
        Some(Json::String(s)) => blocks.push(json!({"type": "text", "text": s})),
        Some(Json::Array(parts)) => blocks.extend(parts.iter().cloned()),
        _ => {}
    }
    if let Some(o) = m.as_object_mut() {
        o.remove("reasoning_content");
        o.insert("content".into(), Json::Array(blocks));
    }
    m
}

fn has_tool_calls(m: &Json) -> bool {
    m.get("tool_calls")
        .and_then(Json::as_array)
        .is_some_and(|c| !c.is_empty())
}

fn has_content(m: &Json) -> bool {
    match m.get("content") {
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        _ => false,
    }
}

/// llama.cpp's `convert_tool_responses_gemma4`: an assistant message with tool calls, the tool
/// results after it and a final assistant answer become one assistant message with
/// `tool_responses` (each result parsed as JSON when it is JSON, named by its call).
fn fold_gemma4(messages: Vec<Json>) -> Vec<Json> {
    let mut out = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        if m["role"] != "assistant" || !has_tool_calls(m) {
            out.push(m.clone());
            i += 1;
            continue;
        }
        let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
        let reasoning = m
            .get("reasoning_content")
            .filter(|r| r.is_string())
            .cloned();
        i += 1;
        let mut responses = Vec::new();
        while i < messages.len() && messages[i]["role"] == "tool" {
            let t = &messages[i];
            let response = match t.get("content") {
                Some(Json::String(s)) => {
                    serde_json::from_str(s).unwrap_or_else(|_| Json::String(s.clone()))
                }
                Some(other) => other.clone(),
                None => Json::Null,
            };
            let mut name = calls
                .get(responses.len())
                .and_then(|c| c["function"]["name"].as_str())
                .unwrap_or("")
                .to_string();
            if name.is_empty() {
                name = t["tool_call_id"].as_str().unwrap_or("").to_string();
            }
            responses.push(json!({"name": name, "response": response}));
            i += 1;
        }
        let mut content = None;
        if i < messages.len() && messages[i]["role"] == "assistant" {
            let next = &messages[i];
            if !has_tool_calls(next) && has_content(next) {
                content = Some(next["content"].clone());
                i += 1;
            }
        }
        let mut msg = json!({"role": "assistant", "tool_calls": calls});
        if !responses.is_empty() {
            msg["tool_responses"] = Json::Array(responses);
        }
        if let Some(c) = content {
            msg["content"] = c;
        }
        if let Some(r) = reasoning {
            msg["reasoning_content"] = r;
        }
        out.push(msg);
    }
    out
}
