//! `tokenizer.json` loaded as `transformers`' `AutoTokenizer` would give it
//! to the converter: the `tokenizers` crate's tokenizer, with the two
//! changes `transformers` 4.57 (the converter's pinned version) makes when
//! it loads one. Both change the ids of the converter's check text, so the
//! pre-tokenizer hash depends on them:
//! - the Llama and Gemma tokenizer classes replace the post-processor by
//!   `[bos] $A [eos]` from `tokenizer_config.json`'s `add_bos_token` /
//!   `add_eos_token` (defaults: BOS yes, EOS no);
//! - a top-level pre-tokenizer with an `add_prefix_space` field gets
//!   `tokenizer_config.json`'s value (default `false`).

use serde_json::{json, Value};
use tokenizers::Tokenizer;

use super::files::{bad, Dir};
use crate::error::Result;

/// The parsed `tokenizer.json`, the tokenizer `transformers` would run,
/// and the `tokenizer_config.json` beside it (with `special_tokens_map.json`
/// as `transformers` applies it).
pub(super) struct HfTokenizer {
    pub(super) json: Value,
    pub(super) tokenizer: Tokenizer,
    pub(super) config: Option<Value>,
}

/// Which `transformers` class loads the tokenizer, as far as it changes
/// what the tokenizer does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    /// `LlamaTokenizerFast` (also Mistral's and CodeLlama's).
    Llama,
    /// `GemmaTokenizerFast`.
    Gemma,
    /// Any other class: the tokenizer as `tokenizer.json` has it.
    Plain,
}

pub(super) fn load(dir: &Dir, json: Value) -> Result<HfTokenizer> {
    let path = dir.path("tokenizer.json");
    let config = with_special_tokens_map(dir, dir.tokenizer_config()?)?;
    let mut adjusted = json.clone();
    let class = class(config.as_ref(), dir.config());
    if class != Class::Plain {
        let post = template_post_processor(&adjusted, config.as_ref(), class)
            .map_err(|reason| bad(&path, reason))?;
        adjusted["post_processor"] = post;
    }
    let add_prefix_space = config
        .as_ref()
        .and_then(|c| c.get("add_prefix_space"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if let Some(pre) = adjusted
        .get_mut("pre_tokenizer")
        .and_then(Value::as_object_mut)
        && pre.contains_key("add_prefix_space")
    {
        pre.insert("add_prefix_space".into(), Value::Bool(add_prefix_space));
    }
    let tokenizer: Tokenizer = adjusted
        .to_string()
        .parse()
        .map_err(|e| bad(&path, format!("the tokenizers crate cannot load it: {e}")))?;
    Ok(HfTokenizer {
        json,
        tokenizer,
        config,
    })
}

/// `tokenizer_config.json` as `transformers` reads it: when it has no
/// `added_tokens_decoder` (an older file), `special_tokens_map.json`'s
/// entries replace its own.
fn with_special_tokens_map(dir: &Dir, config: Option<Value>) -> Result<Option<Value>> {
    let legacy = config
        .as_ref()
        .is_none_or(|c| c.get("added_tokens_decoder").is_none());
    if !legacy {
        return Ok(config);
    }
    let Some(Value::Object(map)) = dir.json("special_tokens_map.json")? else {
        return Ok(config);
    };
    let mut merged = match config {
        Some(Value::Object(c)) => c,
        _ => serde_json::Map::new(),
    };
    for (k, v) in map {
        merged.insert(k, v);
    }
    Ok(Some(Value::Object(merged)))
}

/// `AutoTokenizer`'s choice: `tokenizer_config.json`'s `tokenizer_class`,
/// else the class registered for `config.json`'s `model_type`.
fn class(tokenizer_config: Option<&Value>, config: &Value) -> Class {
    let named = tokenizer_config
        .and_then(|c| c.get("tokenizer_class"))
        .and_then(Value::as_str);
    match named {
        Some(name) => match name.strip_suffix("Fast").unwrap_or(name) {
            "LlamaTokenizer" | "CodeLlamaTokenizer" => Class::Llama,
            "GemmaTokenizer" => Class::Gemma,
            _ => Class::Plain,
        },
        None => match config.get("model_type").and_then(Value::as_str) {
            Some("llama" | "mistral" | "mixtral" | "code_llama") => Class::Llama,
            Some("gemma" | "gemma2" | "gemma3" | "gemma3_text") => Class::Gemma,
            _ => Class::Plain,
        },
    }
}

/// A special token of `tokenizer_config.json`: a string or `{content}`.
pub(super) fn token_content(v: Option<&Value>) -> Option<&str> {
    match v? {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("content").and_then(Value::as_str),
        _ => None,
    }
}

/// `LlamaTokenizerFast.update_post_processor` (Gemma's is the same).
fn template_post_processor(
    json: &Value,
    config: Option<&Value>,
    class: Class,
) -> std::result::Result<Value, String> {
    let get = |key: &str| config.and_then(|c| c.get(key));
    let add_bos = get("add_bos_token")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let add_eos = get("add_eos_token")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (bos_default, eos_default) = match class {
        Class::Gemma => ("<bos>", "<eos>"),
        _ => ("<s>", "</s>"),
    };
    // A token set to null is no token (transformers then refuses to add
    // it); an absent one is the class's default.
    let named = |key: &str, default: &'static str| match get(key) {
        None => Some(default),
        Some(v) => token_content(Some(v)),
    };
    let bos = named("bos_token", bos_default);
    let eos = named("eos_token", eos_default);
    let (bos, eos) = match (bos, eos) {
        (Some(b), Some(e)) => (b, e),
        (None, _) if add_bos => {
            return Err("tokenizer_config.json has add_bos_token but a null bos_token".into())
        }
        (_, None) if add_eos => {
            return Err("tokenizer_config.json has add_eos_token but a null eos_token".into())
        }
        (b, e) => (b.unwrap_or(bos_default), e.unwrap_or(eos_default)),
    };
    let mut single = Vec::new();
    let mut pair = Vec::new();
    let mut specials = serde_json::Map::new();
    let special =
        |token: &str, type_id: u32| json!({"SpecialToken": {"id": token, "type_id": type_id}});
    let sequence = |id: &str, type_id: u32| json!({"Sequence": {"id": id, "type_id": type_id}});
    for (seq, type_id) in [("A", 0u32), ("B", 1)] {
        let out = if seq == "A" { &mut single } else { &mut pair };
        if add_bos {
            out.push(special(bos, type_id));
        }
        out.push(sequence(seq, type_id));
        if add_eos {
            out.push(special(eos, type_id));
        }
    }
    let pair: Vec<Value> = single.iter().cloned().chain(pair).collect();
    for (wanted, token) in [(add_bos, bos), (add_eos, eos)] {
        if !wanted {
            continue;
        }
        let id = token_id(json, token).ok_or_else(|| {
            format!("the tokenizer adds {token:?} to every text but has no such token")
        })?;
        specials.insert(
            token.into(),
            json!({"id": token, "ids": [id], "tokens": [token]}),
        );
    }
    Ok(json!({
        "type": "TemplateProcessing",
        "single": single,
        "pair": pair,
        "special_tokens": specials,
    }))
}

/// A token's id in `tokenizer.json`: an added token, else the model's
/// vocabulary.
fn token_id(json: &Value, token: &str) -> Option<u64> {
    let added = json.get("added_tokens").and_then(Value::as_array);
    added
        .into_iter()
        .flatten()
        .find(|t| t.get("content").and_then(Value::as_str) == Some(token))
        .and_then(|t| t.get("id"))
        .and_then(Value::as_u64)
        .or_else(|| {
            json.get("model")
                .and_then(|m| m.get("vocab"))
                .and_then(|v| v.get(token))
                .and_then(Value::as_u64)
        })
}
