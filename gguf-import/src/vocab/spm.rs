//! A SentencePiece `tokenizer.model` (`tokenizer.ggml.model = llama`): the
//! converter's `_set_vocab_sentencepiece` and
//! `_create_vocab_sentencepiece`.
//!
//! The file is SentencePiece's `ModelProto` protobuf; the few fields read
//! are declared here for prost (field numbers from SentencePiece's
//! `sentencepiece_model.proto`), and every other field is skipped.

use prost::Message;

use super::files::{self, bad, Dir};
use super::gpt2::looks_special;
use super::keys::Keys;
use super::special::SpecialVocab;
use super::token_type::{BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED};
use crate::error::Result;

/// `ModelProto`: the pieces.
#[derive(Clone, PartialEq, Message)]
struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pieces: Vec<SentencePiece>,
}

/// `ModelProto.SentencePiece`.
#[derive(Clone, PartialEq, Message)]
struct SentencePiece {
    #[prost(string, optional, tag = "1")]
    piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    score: Option<f32>,
    /// `Type`: 1 normal (the default), 2 unknown, 3 control, 4 user
    /// defined, 5 unused, 6 byte.
    #[prost(int32, optional, tag = "3")]
    r#type: Option<i32>,
}

pub(super) fn set_vocab(dir: &Dir, keys: &mut Keys) -> Result<()> {
    let vocab = vocab(dir)?;
    write(dir, vocab, keys)
}

/// phi3's own reading (the converter's `Phi3MiniModel.set_vocab`): the
/// pieces, then the added tokens of `tokenizer_config.json`'s
/// `added_tokens_decoder` and of `tokenizer.json`, each written as given
/// (user-defined, control when marked special).
pub(super) fn set_vocab_phi3(dir: &Dir, keys: &mut Keys) -> Result<()> {
    let (mut tokens, mut scores, mut types) = pieces(dir)?;
    let mut put = |id: usize, content: &str, special: bool| {
        if let Some(slot) = tokens.get_mut(id) {
            *slot = content.to_owned();
            scores[id] = -1000.0;
            types[id] = if special { CONTROL } else { USER_DEFINED };
        }
    };
    for (id, content, special) in added_tokens_decoder(dir)? {
        put(id, &content, special);
    }
    let json_path = dir.path("tokenizer.json");
    if let Some(json) = dir.json("tokenizer.json")?
        && let Some(added) = json.get("added_tokens").and_then(|a| a.as_array())
    {
        for data in added {
            let id = data.get("id").and_then(|i| i.as_u64());
            let content = data.get("content").and_then(|c| c.as_str());
            let (Some(id), Some(content)) = (id, content) else {
                return Err(bad(&json_path, "an added token without an id or content"));
            };
            let special = data.get("special").and_then(|s| s.as_bool()) == Some(true);
            put(usize::try_from(id).unwrap_or(usize::MAX), content, special);
        }
    }
    write(dir, (tokens, scores, types), keys)
}

/// The `tokenizer.*` keys of a SentencePiece vocabulary.
fn write(dir: &Dir, vocab: (Vec<String>, Vec<f32>, Vec<i32>), keys: &mut Keys) -> Result<()> {
    let (tokens, scores, types) = vocab;
    let n_vocab = tokens.len();
    keys.set("tokenizer.ggml.model", "llama");
    keys.set("tokenizer.ggml.pre", "default");
    keys.set_strings("tokenizer.ggml.tokens", tokens);
    keys.set("tokenizer.ggml.scores", scores);
    keys.set("tokenizer.ggml.token_type", types);
    SpecialVocab::load(dir, None, false, Some(n_vocab))?.add_to(keys);
    Ok(())
}

/// Tokens, scores and types: `config.json`'s `vocab_size` slots (the
/// model's piece count when unset), `[PAD{i}]` where nothing fills one,
/// then `added_tokens.json` written over the pieces.
fn pieces(dir: &Dir) -> Result<(Vec<String>, Vec<f32>, Vec<i32>)> {
    let model_path = dir.path("tokenizer.model");
    let bytes = dir.read("tokenizer.model")?;
    let model = ModelProto::decode(bytes.as_slice())
        .map_err(|e| bad(&model_path, format!("not a SentencePiece model: {e}")))?;
    let pieces = model.pieces;
    if pieces.is_empty() {
        return Err(bad(&model_path, "the model has no pieces"));
    }
    let vocab_size = match dir.hparam_u64(&["vocab_size_per_layer_input", "vocab_size"]) {
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => pieces.len(),
    };
    files::check_vocab_size(dir, vocab_size)?;
    let mut tokens: Vec<String> = (0..vocab_size).map(|i| format!("[PAD{i}]")).collect();
    let mut scores = vec![-10000.0f32; vocab_size];
    let mut types = vec![UNUSED; vocab_size];
    for (id, piece) in pieces.into_iter().enumerate().take(vocab_size) {
        let text = piece
            .piece
            .ok_or_else(|| bad(&model_path, format!("piece {id} has no text")))?;
        types[id] = match piece.r#type.unwrap_or(1) {
            2 => UNKNOWN,
            3 => CONTROL,
            5 => UNUSED,
            6 => BYTE,
            // SentencePiece's user-defined pieces count as normal here: the
            // converter only asks about the other types.
            _ => NORMAL,
        };
        tokens[id] = text;
        scores[id] = piece.score.unwrap_or(0.0);
    }
    let added_path = dir.path("added_tokens.json");
    if let Some(added) = dir.json("added_tokens.json")? {
        let map = added
            .as_object()
            .ok_or_else(|| bad(&added_path, "not a JSON object"))?;
        for (text, id) in map {
            let id = id
                .as_u64()
                .ok_or_else(|| bad(&added_path, format!("{text:?}: id {id} is not a token id")))?;
            let Some(i) = usize::try_from(id).ok().filter(|i| *i < vocab_size) else {
                continue; // out of range: the converter warns and skips it
            };
            tokens[i] = text.clone();
            scores[i] = -1000.0;
            types[i] = USER_DEFINED;
        }
    }
    Ok((tokens, scores, types))
}

/// `tokenizer_config.json`'s `added_tokens_decoder`: (id, content,
/// marked special), in the file's order.
fn added_tokens_decoder(dir: &Dir) -> Result<Vec<(usize, String, bool)>> {
    let Some(config) = dir.tokenizer_config()? else {
        return Ok(Vec::new());
    };
    let config_path = dir.path("tokenizer_config.json");
    let Some(decoder) = config
        .get("added_tokens_decoder")
        .and_then(|d| d.as_object())
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(decoder.len());
    for (key, data) in decoder {
        let id: usize = key.trim().parse().map_err(|_| {
            bad(
                &config_path,
                format!("added_tokens_decoder: {key:?} is not a token id"),
            )
        })?;
        let content = data
            .get("content")
            .and_then(|c| c.as_str())
            .ok_or_else(|| {
                bad(
                    &config_path,
                    format!("added_tokens_decoder[{key:?}] has no content"),
                )
            })?;
        let special = data
            .get("special")
            .is_some_and(|s| s.as_bool() == Some(true));
        out.push((id, content.to_owned(), special));
    }
    Ok(out)
}

/// `_create_vocab_sentencepiece`: the pieces, then `tokenizer_config.json`'s
/// `added_tokens_decoder` over them.
pub(super) fn vocab(dir: &Dir) -> Result<(Vec<String>, Vec<f32>, Vec<i32>)> {
    let (mut tokens, mut scores, mut types) = pieces(dir)?;
    let vocab_size = tokens.len();
    for (id, content, special) in added_tokens_decoder(dir)? {
        if id >= vocab_size {
            continue;
        }
        if special || looks_special(&content) {
            tokens[id] = content;
            types[id] = CONTROL;
        } else {
            tokens[id] = content.replace('\u{2581}', " ");
            types[id] = USER_DEFINED;
        }
        scores[id] = -1000.0;
    }
    Ok((tokens, scores, types))
}
