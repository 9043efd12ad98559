//! A byte-level BPE `tokenizer.json` (`tokenizer.ggml.model = gpt2`): the
//! converter's `_set_vocab_gpt2` and `get_vocab_base`.

use std::collections::HashMap;

use serde_json::Value;

use super::files::{self, bad, Dir};
use super::hf::{self, HfTokenizer};
use super::keys::Keys;
use super::token_type::{CONTROL, NORMAL, UNUSED, USER_DEFINED};
use super::{pre_hash, special};
use crate::error::{Result, VocabError};

pub(super) fn set_vocab(dir: &Dir, keys: &mut Keys, pre_tokenizer: Option<&str>) -> Result<()> {
    set_vocab_with(dir, keys, pre_tokenizer, &[])
}

/// [`set_vocab`], then each `(type, token)` of `specials` sets that special
/// token's id to the added token's, unless already set (GLM's
/// `_set_special_token` calls after loading the special vocabulary).
pub(super) fn set_vocab_with(
    dir: &Dir,
    keys: &mut Keys,
    pre_tokenizer: Option<&str>,
    specials: &[(&str, &str)],
) -> Result<()> {
    let name = "tokenizer.json";
    let path = dir.path(name);
    let json = dir.json(name)?.ok_or_else(|| VocabError::NoTokenizer {
        dir: path.parent().unwrap_or(&path).to_owned(),
        expected: "tokenizer.model or tokenizer.json".into(),
    })?;
    let hf = hf::load(dir, json)?;
    let (tokens, types) = vocab_base(dir, &hf)?;
    let pre = match pre_tokenizer {
        Some(name) => name.to_owned(),
        None => {
            let hash = pre_hash::check_hash(&hf.tokenizer).map_err(|r| bad(&path, r))?;
            match pre_hash::name_for(&hash) {
                Some(name) => name.to_owned(),
                None => return Err(VocabError::UnknownPreTokenizer { file: path, hash }.into()),
            }
        }
    };
    keys.set("tokenizer.ggml.model", "gpt2");
    keys.set("tokenizer.ggml.pre", pre.as_str());
    keys.set_strings("tokenizer.ggml.tokens", tokens);
    keys.set("tokenizer.ggml.token_type", types);
    let mut sv = special::SpecialVocab::load(dir, Some(&hf.json), true, None)?;
    if !specials.is_empty() {
        let added = hf.tokenizer.get_added_tokens_decoder();
        for (typ, token) in specials {
            let id = added
                .iter()
                .find(|(_, t)| t.content == *token)
                .map(|(id, _)| *id)
                .ok_or_else(|| {
                    bad(
                        &path,
                        format!("no added token {token:?}, which the converter takes as the {typ} token"),
                    )
                })?;
            sv.set_default_id(typ, id);
        }
    }
    sv.add_to(keys);
    Ok(())
}

/// `get_vocab_base`: every id below `config.json`'s `vocab_size` (the
/// tokenizer's size when it has none), holes as `[PAD{i}]` (unused),
/// added tokens as control (special, or looking special) or user-defined.
fn vocab_base(dir: &Dir, hf: &HfTokenizer) -> Result<(Vec<String>, Vec<i32>)> {
    let path = dir.path("tokenizer.json");
    let tokenizer = &hf.tokenizer;
    let vocab = tokenizer.get_vocab(true);
    let added = tokenizer.get_added_tokens_decoder();
    let max_id = vocab.values().copied().max();
    let vocab_size = match dir.hparam(&["vocab_size"]) {
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                bad(
                    &dir.path("config.json"),
                    format!("vocab_size {v} is not a count"),
                )
            })?,
        None => vocab.len(),
    };
    files::check_vocab_size(dir, vocab_size)?;
    if let Some(max) = max_id
        && max as usize >= vocab_size
    {
        return Err(bad(
            &path,
            format!("token id {max} is not below config.json's vocab_size {vocab_size}"),
        ));
    }
    // Where two strings share an id, the added token's content wins.
    let mut by_id: HashMap<u32, &str> = HashMap::with_capacity(vocab.len());
    for (text, id) in &vocab {
        by_id.entry(*id).or_insert(text);
    }
    for (id, token) in &added {
        by_id.insert(*id, &token.content);
    }
    let cleanup = hf
        .config
        .as_ref()
        .and_then(|c| c.get("clean_up_tokenization_spaces"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut tokens = Vec::with_capacity(vocab_size);
    let mut types = Vec::with_capacity(vocab_size);
    for i in 0..vocab_size {
        let id = i as u32;
        let Some(text) = by_id.get(&id) else {
            tokens.push(format!("[PAD{i}]"));
            types.push(UNUSED);
            continue;
        };
        let Some(added) = added.get(&id) else {
            tokens.push((*text).to_owned());
            types.push(NORMAL);
            continue;
        };
        let mut token = (*text).to_owned();
        if !added.normalized {
            // The converter re-encodes such tokens and keeps what decoding
            // gives back, so llama.cpp sees them pre-normalized.
            token = round_trip(tokenizer, &token, cleanup)
                .map_err(|e| bad(&path, format!("added token {id} ({token:?}): {e}")))?;
        }
        if added.special || looks_special(&token) {
            types.push(CONTROL);
        } else {
            token = token.replace('\u{2581}', " ");
            types.push(USER_DEFINED);
        }
        tokens.push(token);
    }
    Ok((tokens, types))
}

/// `tokenizer.decode(tokenizer.encode(token, add_special_tokens=False))`.
fn round_trip(
    tokenizer: &tokenizers::Tokenizer,
    token: &str,
    cleanup: bool,
) -> std::result::Result<String, String> {
    let encoding = tokenizer.encode(token, false).map_err(|e| e.to_string())?;
    let text = tokenizer
        .decode(encoding.get_ids(), false)
        .map_err(|e| e.to_string())?;
    Ok(if cleanup {
        clean_up_spaces(&text)
    } else {
        text
    })
}

/// `transformers`' `clean_up_tokenization`.
fn clean_up_spaces(text: &str) -> String {
    text.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}

/// The converter's `does_token_look_special`: added tokens some models
/// forget to mark special.
pub(super) fn looks_special(token: &str) -> bool {
    matches!(token, "<pad>" | "<mask>" | "<2mass>" | "[@BOS@]")
        || (token.starts_with("<|") && token.ends_with("|>"))
        || (token.starts_with("<\u{ff5c}") && token.ends_with("\u{ff5c}>"))
        || (token.starts_with("<unused") && token.ends_with('>'))
}
