//! A Llama 2 style BPE `tokenizer.json` (byte fallback, a `Sequence`
//! decoder) with no `tokenizer.model` beside it: gguf-py's `LlamaHfVocab`,
//! written as a SentencePiece vocabulary (`tokenizer.ggml.model = llama`)
//! with every score -1000.

use serde_json::Value;

use super::files::{bad, Dir};
use super::hf::{self, token_content};
use super::keys::Keys;
use super::special::SpecialVocab;
use super::token_type::{BYTE, CONTROL, NORMAL, USER_DEFINED};
use crate::error::Result;

/// `tokenizer.json` when it is such a tokenizer; `None` sends the converter
/// (and us) on to the byte-level BPE path (Llama 3's tokenizer, a missing
/// or different `tokenizer.json`).
pub(super) fn applies(dir: &Dir) -> Result<Option<Value>> {
    let Some(json) = dir.json("tokenizer.json")? else {
        return Ok(None);
    };
    let model = json.get("model");
    let field = |k: &str| model.and_then(|m| m.get(k)).and_then(Value::as_bool);
    let is_bpe = model.and_then(|m| m.get("type")).and_then(Value::as_str) == Some("BPE");
    let is_llama3 =
        is_bpe && field("ignore_merges") == Some(true) && !field("byte_fallback").unwrap_or(true);
    let decoder = json
        .get("decoder")
        .and_then(|d| d.get("type"))
        .and_then(Value::as_str);
    let llama2 = is_bpe && field("byte_fallback") == Some(true) && decoder == Some("Sequence");
    Ok((llama2 && !is_llama3).then_some(json))
}

pub(super) fn set_vocab(dir: &Dir, json: &Value, keys: &mut Keys) -> Result<()> {
    let path = dir.path("tokenizer.json");
    let hf = hf::load(dir, json.clone())?;
    let tokenizer = &hf.tokenizer;
    let base_size = tokenizer.get_vocab_size(false);
    let vocab = tokenizer.get_vocab(true);
    let mut by_id: Vec<Option<&str>> = vec![None; base_size];
    for (text, id) in &vocab {
        if let Some(slot) = by_id.get_mut(*id as usize) {
            slot.get_or_insert(text);
        }
    }
    let specials: Vec<u32> = special_tokens(hf.config.as_ref(), dir)
        .iter()
        .filter_map(|t| vocab.get(t.as_str()).copied())
        .collect();
    let mut added: Vec<(u32, String)> = tokenizer
        .get_added_tokens_decoder()
        .into_iter()
        .filter(|(id, _)| *id as usize >= base_size)
        .map(|(id, t)| (id, t.content))
        .collect();
    added.sort();
    let mut tokens = Vec::with_capacity(base_size + added.len());
    let mut types = Vec::with_capacity(base_size + added.len());
    for (id, text) in by_id.iter().enumerate() {
        let text = text.ok_or_else(|| bad(&path, format!("no token has id {id}")))?;
        types.push(if is_byte_token(text) {
            BYTE
        } else if specials.contains(&(id as u32)) {
            CONTROL
        } else {
            NORMAL
        });
        tokens.push(text.to_owned());
    }
    for (_, text) in added {
        let special = vocab
            .get(text.as_str())
            .is_some_and(|id| specials.contains(id));
        types.push(if special { CONTROL } else { USER_DEFINED });
        tokens.push(text);
    }
    let n = tokens.len();
    keys.set("tokenizer.ggml.model", "llama");
    keys.set("tokenizer.ggml.pre", "default");
    keys.set_strings("tokenizer.ggml.tokens", tokens);
    keys.set("tokenizer.ggml.scores", vec![-1000.0f32; n]);
    keys.set("tokenizer.ggml.token_type", types);
    SpecialVocab::load(dir, Some(json), false, Some(n))?.add_to(keys);
    Ok(())
}

/// `<0xXX>`.
fn is_byte_token(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 6
        && b.starts_with(b"<0x")
        && b[5] == b'>'
        && b[3..5].iter().all(u8::is_ascii_hexdigit)
}

/// `transformers`' `all_special_tokens`: the named special tokens of
/// `tokenizer_config.json`, the Llama class's defaults for those it does
/// not name, and `additional_special_tokens`.
fn special_tokens(config: Option<&Value>, dir: &Dir) -> Vec<String> {
    let get = |k: &str| config.and_then(|c| c.get(k));
    let llama_class = match get("tokenizer_class").and_then(Value::as_str) {
        Some(name) => name.starts_with("LlamaTokenizer") || name.starts_with("CodeLlamaTokenizer"),
        None => matches!(
            dir.config().get("model_type").and_then(Value::as_str),
            Some("llama" | "mistral" | "mixtral")
        ),
    };
    let mut out = Vec::new();
    for (key, default) in [
        ("bos_token", "<s>"),
        ("eos_token", "</s>"),
        ("unk_token", "<unk>"),
        ("sep_token", ""),
        ("pad_token", ""),
        ("cls_token", ""),
        ("mask_token", ""),
    ] {
        let named = match get(key) {
            Some(Value::Null) => None,
            Some(v) => token_content(Some(v)),
            None if llama_class && !default.is_empty() => Some(default),
            None => None,
        };
        if let Some(t) = named {
            out.push(t.to_owned());
        }
    }
    if let Some(Value::Array(extra)) = get("additional_special_tokens") {
        out.extend(
            extra
                .iter()
                .filter_map(|v| token_content(Some(v)).map(str::to_owned)),
        );
    }
    out
}
