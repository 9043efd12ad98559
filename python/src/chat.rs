//! `Model.chat(...)`: a conversation rendered with the model's chat
//! template as llama.cpp renders it (gguf-chat), with its token ids.

use gguf::Model;
use gguf_chat::{ChatTemplate, Conversation, RenderOptions};
use gguf_tokenizer::Tokenizer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{to_py_message, tokenizer_to_py};

fn chat_error(py: Python<'_>, e: gguf_chat::Error) -> PyErr {
    match e {
        gguf_chat::Error::Gguf(e) => crate::to_py(py, e),
        gguf_chat::Error::Tokenizer(e) => tokenizer_to_py(py, e),
        other => to_py_message(py, other.to_string(), None),
    }
}

/// The prompt: its text, the byte ranges that came from the conversation,
/// and its token ids (special tokens parsed only in the template's text).
pub(crate) type Prompt = (String, Vec<(usize, usize)>, Vec<u32>);

#[allow(clippy::too_many_arguments)]
pub(crate) fn render(
    py: Python<'_>,
    model: &Model<'static>,
    request: &str,
    add_generation_prompt: bool,
    enable_thinking: Option<bool>,
    template: Option<&str>,
    template_source: Option<&str>,
    extra: Option<&str>,
) -> PyResult<Prompt> {
    let json: serde_json::Value =
        serde_json::from_str(request).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut options = RenderOptions::new();
    options.add_generation_prompt = add_generation_prompt;
    options.enable_thinking = enable_thinking;
    if let Some(extra) = extra {
        match serde_json::from_str(extra) {
            Ok(serde_json::Value::Object(map)) => options.extra.extend(map),
            _ => return Err(PyValueError::new_err("chat_template_kwargs must be a dict")),
        }
    }
    py.detach(|| -> gguf_chat::Result<Prompt> {
        let conversation = Conversation::from_json(&json)?;
        let t = match template_source {
            Some(source) => ChatTemplate::with_source(model, source)?,
            None => ChatTemplate::from_model(model, template.filter(|n| *n != "default"))?,
        };
        let rendered = t.render(&conversation, &options)?;
        let ids = rendered.encode(&Tokenizer::from_model(model)?, true)?;
        let ranges = rendered
            .input_ranges()
            .iter()
            .map(|r| (r.start, r.end))
            .collect();
        Ok((rendered.text.clone(), ranges, ids))
    })
    .map_err(|e| chat_error(py, e))
}

/// The names of the model's templates (`default`, then the named ones).
pub(crate) fn names(model: &Model<'static>) -> Vec<String> {
    ChatTemplate::names(model)
}
