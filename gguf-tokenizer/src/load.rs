//! Building a [`Tokenizer`] from a model's metadata, step by step as
//! llama.cpp's `llama_vocab::impl::load` does: the vocabulary type and its
//! defaults, the pre-tokenizer, the token arrays, the special token ids and
//! flags, then the attribute fixes llama.cpp makes by token text.

use rustc_hash::FxHashMap;

use crate::error::{Error, LookupError, Result, TokenizerError};
use gguf_core::Gguf;
use gguf_core::{Value, ValueType};

use super::attr::{TokenAttr, VocabType};
use super::pre::{self, Family, Step};
use super::ugm::{Ugm, KEY_CHARSMAP};
use super::{Flags, Specials, TokenData, Tokenizer};

fn bad_key(key: &str, reason: impl Into<String>) -> Error {
    TokenizerError::BadKey {
        key: key.into(),
        reason: reason.into(),
    }
    .into()
}

/// A string key, if present; llama.cpp refuses other types.
fn opt_str<'a>(model: &'a impl Gguf, key: &str) -> Result<Option<&'a str>> {
    match model.value(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(bad_key(
            key,
            format!("has type {}, expected string", v.value_type()),
        )),
    }
}

fn opt_bool(model: &impl Gguf, key: &str) -> Result<Option<bool>> {
    match model.value(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(v) => Err(bad_key(
            key,
            format!("has type {}, expected bool", v.value_type()),
        )),
    }
}

fn opt_u32(model: &impl Gguf, key: &str) -> Result<Option<u32>> {
    match model.value(key) {
        None => Ok(None),
        Some(Value::U32(n)) => Ok(Some(n)),
        Some(v) => Err(bad_key(
            key,
            format!("has type {}, expected u32", v.value_type()),
        )),
    }
}

const KEY_MODEL: &str = "tokenizer.ggml.model";
const KEY_PRE: &str = "tokenizer.ggml.pre";
const KEY_TOKENS: &str = "tokenizer.ggml.tokens";
const KEY_SCORES: &str = "tokenizer.ggml.scores";
const KEY_TYPES: &str = "tokenizer.ggml.token_type";
const KEY_MERGES: &str = "tokenizer.ggml.merges";

/// The vocabulary type of a `tokenizer.ggml.model` value, or why not.
fn vocab_type(model: &str) -> Result<VocabType> {
    let unsupported = |reason: &str| -> Error {
        TokenizerError::UnsupportedModel {
            model: model.into(),
            reason: reason.into(),
        }
        .into()
    };
    Ok(match model {
        "llama" => VocabType::Spm,
        "gpt2" | "gemma4" => VocabType::Bpe,
        "bert" => VocabType::Wpm,
        "t5" => VocabType::Ugm,
        "no_vocab" | "none" => return Err(unsupported("the model has no vocabulary")),
        "rwkv" | "plamo2" | "hybriddna" | "whitespace" | "test" => return Err(unsupported(
            "llama.cpp knows it, but this library builds only spm, bpe, wpm and ugm vocabularies",
        )),
        _ => return Err(unsupported("llama.cpp does not know it either")),
    })
}

impl Tokenizer {
    /// Builds the tokenizer llama.cpp builds from a model's metadata.
    ///
    /// Reads only the header (`tokenizer.ggml.*` keys and `general.name` /
    /// `general.architecture`, which llama.cpp consults for a few token
    /// attributes), so a header-only remote model works as well as a local
    /// one. Errors name the key or the unsupported type.
    ///
    /// ```
    /// # fn main() -> gguf_tokenizer::Result<()> {
    /// # let mut b = gguf_core::write::Builder::new();
    /// # use gguf_core::format::OwnedValue;
    /// # b.set("tokenizer.ggml.model", "llama")?;
    /// # b.set("tokenizer.ggml.tokens", OwnedValue::from(vec!["<unk>", "<s>", "</s>", "\u{2581}a", "a"]))?;
    /// # b.set("tokenizer.ggml.scores", OwnedValue::from(vec![0f32, 0.0, 0.0, -1.0, -2.0]))?;
    /// # b.set("tokenizer.ggml.token_type", OwnedValue::from(vec![2i32, 3, 3, 1, 1]))?;
    /// # let model = b.preview()?;
    /// use gguf_tokenizer::{Tokenizer, VocabType};
    /// // `model`: a GgufFile, a Model, a header-only remote model
    /// let tok = Tokenizer::from_model(&model)?;
    /// assert_eq!(tok.vocab_type(), VocabType::Spm);
    /// assert_eq!(tok.n_tokens(), 5);
    /// assert_eq!(tok.encode("a a", true, false)?, [1, 3, 3]); // <s> ▁a ▁a
    /// # Ok(()) }
    /// ```
    pub fn from_model(model: &impl Gguf) -> Result<Tokenizer> {
        let model_name = opt_str(model, KEY_MODEL)?.ok_or_else(|| {
            Error::Gguf(gguf_core::Error::Lookup(LookupError::KeyNotFound {
                key: KEY_MODEL.into(),
            }))
        })?;
        let kind = vocab_type(model_name)?;
        let mut pre_name = opt_str(model, KEY_PRE)?.map(str::to_owned);
        if model_name == "gemma4" {
            pre_name = Some("gemma4".into());
        }

        let mut sp = Specials::default();
        let mut flags = Flags::default();
        match kind {
            VocabType::Spm => {
                sp.bos = Some(1);
                sp.eos = Some(2);
                sp.unk = Some(0);
                flags.add_space_prefix = true;
                flags.add_bos = true;
            }
            VocabType::Wpm => {
                sp.bos = Some(101);
                sp.unk = Some(100);
                sp.sep = Some(102);
                sp.pad = Some(0);
                sp.mask = Some(103);
                flags.add_sep = true;
                flags.add_bos = true;
                flags.clean_spaces = true;
            }
            VocabType::Bpe => {
                if model_name == "gpt2" {
                    sp.bos = Some(11);
                    sp.eos = Some(11);
                }
                flags.escape_whitespaces = false;
                flags.clean_spaces = true;
            }
            VocabType::Ugm => {
                sp.eos = Some(1);
                sp.unk = Some(2);
                sp.pad = Some(0);
                flags.add_eos = true;
            }
        }

        let mut family = None;
        if kind == VocabType::Bpe {
            let name = pre_name.as_deref().unwrap_or("default");
            let Some((fam, o)) = pre::lookup(name) else {
                return Err(TokenizerError::UnsupportedPre {
                    pre: name.into(),
                    reason: "llama.cpp does not know it either".into(),
                }
                .into());
            };
            family = Some(fam);
            flags.clean_spaces = !o.no_clean_spaces;
            flags.ignore_merges = o.ignore_merges;
            flags.add_bos |= o.add_bos;
            flags.add_sep |= o.add_sep;
            flags.escape_whitespaces |= o.escape_whitespaces;
            if o.no_bos_id {
                sp.bos = None;
            }
        }
        if let Some(v) = opt_bool(model, "tokenizer.ggml.add_space_prefix")? {
            flags.add_space_prefix = v;
        }
        if let Some(v) = opt_bool(model, "tokenizer.ggml.remove_extra_whitespaces")? {
            flags.remove_extra_whitespaces = v;
        }

        let tokens = read_tokens(model)?;
        let n = tokens.len();
        let max_token_len = tokens.iter().map(|t| t.text.len()).max().unwrap_or(0);
        let mut token_to_id = FxHashMap::with_capacity_and_hasher(n, Default::default());
        for (i, t) in tokens.iter().enumerate() {
            token_to_id.insert(t.text.clone().into_boxed_str(), i as u32);
        }

        let merges = if kind == VocabType::Bpe {
            // llama.cpp lets Kimi-K2 go without merges (every word then
            // falls apart into its characters' tokens).
            let optional = family == Some(Family::KimiK2);
            read_merges(model, optional)?
        } else {
            FxHashMap::default()
        };

        let steps = match family {
            Some(f) => pre::patterns(f)
                .iter()
                .map(|p| Step::new(p))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|reason| TokenizerError::UnsupportedPre {
                    pre: pre_name.clone().unwrap_or_default(),
                    reason,
                })?,
            None => Vec::new(),
        };

        let mut tok = Tokenizer {
            kind,
            model: model_name.to_owned(),
            pre: pre_name,
            family,
            byte_encode: family.is_some_and(pre::byte_encode),
            steps,
            tokens,
            token_to_id,
            merges,
            specials: sp,
            flags,
            special_cache: Vec::new(),
            normalizer_lowercase: true,
            max_token_len,
            normalizer_strip_accents: false,
            ugm: None,
            special_matchers: Default::default(),
        };
        if kind == VocabType::Ugm {
            // Built before the attribute fixes below, as llama.cpp builds
            // its Unigram tokenizer.
            let charsmap = read_charsmap(model)?;
            tok.ugm = Some(Box::new(Ugm::new(&tok.tokens, charsmap)?));
        }
        tok.read_special_ids(model)?;
        tok.fix_attributes(model)?;
        Ok(tok)
    }

    /// Special token ids and the add_* flags, as llama.cpp reads them: a
    /// default out of range is dropped, a stored id out of range is ignored.
    fn read_special_ids(&mut self, model: &impl Gguf) -> Result<()> {
        let n = self.tokens.len() as u64;
        type Slot = fn(&mut Specials) -> &mut Option<u32>;
        let slots: [(&str, Slot); 17] = [
            ("tokenizer.ggml.bos_token_id", |s| &mut s.bos),
            ("tokenizer.ggml.eos_token_id", |s| &mut s.eos),
            ("tokenizer.ggml.eot_token_id", |s| &mut s.eot),
            ("tokenizer.ggml.eom_token_id", |s| &mut s.eom),
            ("tokenizer.ggml.unknown_token_id", |s| &mut s.unk),
            ("tokenizer.ggml.seperator_token_id", |s| &mut s.sep),
            ("tokenizer.ggml.padding_token_id", |s| &mut s.pad),
            ("tokenizer.ggml.mask_token_id", |s| &mut s.mask),
            ("tokenizer.ggml.fim_pre_token_id", |s| &mut s.fim_pre),
            ("tokenizer.ggml.fim_suf_token_id", |s| &mut s.fim_suf),
            ("tokenizer.ggml.fim_mid_token_id", |s| &mut s.fim_mid),
            ("tokenizer.ggml.fim_pad_token_id", |s| &mut s.fim_pad),
            ("tokenizer.ggml.fim_rep_token_id", |s| &mut s.fim_rep),
            ("tokenizer.ggml.fim_sep_token_id", |s| &mut s.fim_sep),
            // Deprecated names, read after the new ones (as llama.cpp does).
            ("tokenizer.ggml.prefix_token_id", |s| &mut s.fim_pre),
            ("tokenizer.ggml.suffix_token_id", |s| &mut s.fim_suf),
            ("tokenizer.ggml.middle_token_id", |s| &mut s.fim_mid),
        ];
        for (key, slot) in slots {
            let slot = slot(&mut self.specials);
            if slot.is_some_and(|id| u64::from(id) >= n) {
                *slot = None;
            }
            if let Some(id) = opt_u32(model, key)?
                && u64::from(id) < n
            {
                *slot = Some(id);
            }
        }
        if let Some(v) = opt_bool(model, "tokenizer.ggml.add_bos_token")? {
            self.flags.add_bos = v;
        }
        if let Some(v) = opt_bool(model, "tokenizer.ggml.add_eos_token")? {
            self.flags.add_eos = v;
        }
        if let Some(v) = opt_bool(model, "tokenizer.ggml.add_sep_token")? {
            self.flags.add_sep = v;
        }
        if self.family == Some(Family::Gemma4) {
            // llama.cpp forces BOS on for Gemma 4 whatever the file says.
            self.flags.add_bos = true;
        }
        if let Some(v) = opt_bool(model, "tokenizer.ggml.normalizer.lowercase")? {
            self.normalizer_lowercase = v;
        }
        self.normalizer_strip_accents = self.normalizer_lowercase;
        if let Some(v) = opt_bool(model, "tokenizer.ggml.normalizer.strip_accents")? {
            self.normalizer_strip_accents = v;
        }
        Ok(())
    }

    /// llama.cpp's fixes of token attributes by token text (control-looking
    /// tokens, unused ones, gpt-oss's rendered markers, end-of-generation
    /// exceptions), the special-token cache, and the per-model strip rules.
    fn fix_attributes(&mut self, model: &impl Gguf) -> Result<()> {
        let id_of = |t: &Tokenizer, text: &str| t.token_to_id.get(text).copied();
        let control =
            |t: &mut Tokenizer, id: u32| t.tokens[id as usize].attr.set(TokenAttr::CONTROL, true);

        // Tokens found by text when the metadata names none. llama.cpp walks
        // a hash map, so with several candidates it takes whichever comes
        // first; we take the first in its list that exists.
        type Slot = fn(&mut Specials) -> &mut Option<u32>;
        let detect: [(&[&str], Slot); 8] = [
            (
                &[
                    "<|eot_id|>",
                    "<|im_end|>",
                    "<|end|>",
                    "<end_of_turn>",
                    "<|endoftext|>",
                    "<|end_of_text|>",
                    "<EOT>",
                    "_<EOT>",
                    "[EOT]",
                    "<｜end▁of▁sentence｜>",
                    "<end_of_utterance>",
                ],
                |s| &mut s.eot,
            ),
            (&["<|eom_id|>"], |s| &mut s.eom),
            (
                &[
                    "<|fim_prefix|>",
                    "<fim-prefix>",
                    "<fim_prefix>",
                    "<｜fim▁begin｜>",
                    "<PRE>",
                    "▁<PRE>",
                    "<|code_prefix|>",
                    "<|prefix|>",
                ],
                |s| &mut s.fim_pre,
            ),
            (
                &[
                    "<|fim_suffix|>",
                    "<fim-suffix>",
                    "<fim_suffix>",
                    "<｜fim▁hole｜>",
                    "<SUF>",
                    "▁<SUF>",
                    "<|code_suffix|>",
                    "<|suffix|>",
                ],
                |s| &mut s.fim_suf,
            ),
            (
                &[
                    "<|fim_middle|>",
                    "<fim-middle>",
                    "<fim_middle>",
                    "<｜fim▁end｜>",
                    "<MID>",
                    "▁<MID>",
                    "<|code_middle|>",
                    "<|middle|>",
                ],
                |s| &mut s.fim_mid,
            ),
            (
                &["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"],
                |s| &mut s.fim_pad,
            ),
            (
                &[
                    "<|fim_repo|>",
                    "<|repo_name|>",
                    "<fim-repo>",
                    "<REPO>",
                    "<reponame>",
                ],
                |s| &mut s.fim_rep,
            ),
            (&["<|file_sep|>"], |s| &mut s.fim_sep),
        ];
        for (texts, slot) in detect {
            if slot(&mut self.specials).is_some() {
                continue;
            }
            if let Some(id) = texts.iter().find_map(|t| id_of(self, t)) {
                *slot(&mut self.specials) = Some(id);
                control(self, id);
            }
        }

        // Control tokens named "unused" are unused.
        for t in &mut self.tokens {
            if t.attr.has(TokenAttr::CONTROL) && t.text.contains("unused") {
                t.attr.set(TokenAttr::UNUSED, true);
            }
        }

        // End-of-generation tokens: all are control tokens.
        const EOG: &[&str] = &[
            "<|eot_id|>",
            "<|im_end|>",
            "<|end|>",
            "<|return|>",
            "<|call|>",
            "<|flush|>",
            "<|calls|>",
            "<end_of_turn>",
            "<|endoftext|>",
            "</s>",
            "<|eom_id|>",
            "<EOT>",
            "_<EOT>",
            "[EOT]",
            "[EOS]",
            "<|end_of_text|>",
            "<end_of_utterance>",
            "<eos>",
            "<turn|>",
            "<|tool_response>",
            "<｜end▁of▁sentence｜>",
            "[e~[",
        ];
        let sp = &self.specials;
        let mut eog: Vec<u32> = [sp.fim_pad, sp.fim_rep, sp.fim_sep]
            .into_iter()
            .flatten()
            .collect();
        for text in EOG {
            if let Some(id) = id_of(self, text) {
                eog.push(id);
                control(self, id);
            }
        }
        for text in ["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"] {
            if let Some(id) = id_of(self, text) {
                self.tokens[id as usize].attr = TokenAttr::USER_DEFINED;
            }
        }
        let sp = &self.specials;
        eog.extend([sp.eos, sp.eot, sp.eom].into_iter().flatten());
        let in_eog = |t: &Tokenizer, text: &str| {
            eog.iter()
                .find(|&&id| t.tokens[id as usize].text == text)
                .copied()
        };
        let has = |t: &Tokenizer, text: &str| in_eog(t, text).is_some();
        if let Some(end) = in_eog(self, "<|end|>") {
            let call = has(self, "<|call|>") || has(self, "<|calls|>");
            if call && (has(self, "<|return|>") || has(self, "<|flush|>")) {
                self.tokens[end as usize].attr = TokenAttr::USER_DEFINED;
            }
        }
        if (has(self, "<|tool_response>") || has(self, "<|plamo:eos|>"))
            && let Some(s) = in_eog(self, "</s>")
        {
            self.tokens[s as usize].attr = TokenAttr::NORMAL;
        }

        // Special tokens, longest first (a stable sort: llama.cpp's
        // `std::sort` leaves equal lengths in an unspecified order).
        let special =
            TokenAttr(TokenAttr::CONTROL.0 | TokenAttr::USER_DEFINED.0 | TokenAttr::UNKNOWN.0);
        let mut cache: Vec<u32> = (0..self.tokens.len() as u32)
            .filter(|&id| self.tokens[id as usize].attr.has(special))
            .collect();
        cache.sort_by_key(|&id| std::cmp::Reverse(self.tokens[id as usize].text.len()));
        self.special_cache = cache;

        // Per-model strip rules, by name.
        let name = opt_str(model, "general.name")?.unwrap_or("").to_lowercase();
        let pre = self.pre.clone().unwrap_or_default();
        let arch = opt_str(model, "general.architecture")?.unwrap_or("");
        let contains_any = |s: &str, subs: &[&str]| subs.iter().any(|x| s.contains(x));
        let set_text = |t: &mut Tokenizer, text: &str, a: TokenAttr, on: bool| {
            if let Some(id) = t.token_to_id.get(text).copied() {
                t.tokens[id as usize].attr.set(a, on);
            }
        };
        if contains_any(&pre, &["jina-v2-de", "jina-v2-es", "jina-v2-code"])
            || contains_any(arch, &["nomic-bert-moe", "jina-bert-v3"])
        {
            set_text(self, "<mask>", TokenAttr::LSTRIP, true);
        } else if contains_any(&name, &["phi-3", "phi3"]) {
            for i in 0..self.special_cache.len() {
                let id = self.special_cache[i];
                self.tokens[id as usize].attr.set(TokenAttr::RSTRIP, true);
            }
            set_text(self, "</s>", TokenAttr::RSTRIP, true);
            for text in ["<unk>", "<s>", "<|endoftext|>"] {
                set_text(self, text, TokenAttr::RSTRIP, false);
            }
        } else if contains_any(&name, &["modern-bert"]) {
            set_text(self, "[MASK]", TokenAttr::LSTRIP, true);
        }
        Ok(())
    }
}

/// The token list with scores and attributes; arrays of the wrong type or
/// too short are refused as llama.cpp refuses them.
fn read_tokens(model: &impl Gguf) -> Result<Vec<TokenData>> {
    let texts = match model.value(KEY_TOKENS) {
        None => return Err(bad_key(KEY_TOKENS, "missing: the model has no token list")),
        Some(Value::Array(a)) => a.strings().ok_or_else(|| {
            bad_key(
                KEY_TOKENS,
                format!("is an array of {}, expected strings", a.element_type()),
            )
        })?,
        Some(v) => {
            return Err(bad_key(
                KEY_TOKENS,
                format!("has type {}, expected array", v.value_type()),
            ))
        }
    };
    let n = texts.len();
    let scores: Option<Vec<f32>> = match model.value(KEY_SCORES) {
        None => None,
        Some(Value::Array(a)) if a.element_type() == ValueType::F32 => {
            a.typed::<f32>().map(|it| it.take(n).collect())
        }
        Some(Value::Array(a)) if a.element_type() == ValueType::I32 => a
            .typed::<i32>()
            .map(|it| it.take(n).map(|s| s as f32).collect()),
        Some(v) => {
            return Err(bad_key(
                KEY_SCORES,
                format!("has type {}, expected array of f32 or i32", describe(&v)),
            ))
        }
    };
    let types: Option<Vec<i32>> = match model.value(KEY_TYPES) {
        None => None,
        Some(Value::Array(a)) if a.element_type() == ValueType::I32 => {
            a.typed::<i32>().map(|it| it.take(n).collect())
        }
        Some(v) => {
            return Err(bad_key(
                KEY_TYPES,
                format!("has type {}, expected array of i32", describe(&v)),
            ))
        }
    };
    for (key, len) in [
        (KEY_SCORES, scores.as_ref().map(Vec::len)),
        (KEY_TYPES, types.as_ref().map(Vec::len)),
    ] {
        if let Some(len) = len.filter(|&l| l < n) {
            return Err(bad_key(key, format!("has {len} entries for {n} tokens")));
        }
    }
    Ok(texts
        .enumerate()
        .map(|(i, text)| TokenData {
            text: if text.is_empty() {
                format!("[EMPTY_{i}]")
            } else {
                text.to_owned()
            },
            score: scores.as_ref().map_or(0.0, |s| s[i]),
            attr: types
                .as_ref()
                .map_or(TokenAttr::NORMAL, |t| TokenAttr::from_token_type(t[i])),
        })
        .collect())
}

/// Unigram's precompiled character map: an array of bytes (u8 or i8), if
/// present.
fn read_charsmap(model: &impl Gguf) -> Result<Option<&[u8]>> {
    match model.value(KEY_CHARSMAP) {
        None => Ok(None),
        Some(Value::Array(a)) if matches!(a.element_type(), ValueType::U8 | ValueType::I8) => {
            Ok(Some(a.raw_bytes()))
        }
        Some(v) => Err(bad_key(
            KEY_CHARSMAP,
            format!("has type {}, expected array of u8 or i8", describe(&v)),
        )),
    }
}

fn describe(v: &Value<'_>) -> String {
    match v {
        Value::Array(a) => format!("array of {}", a.element_type()),
        other => other.value_type().to_string(),
    }
}

/// Merge ranks keyed by `"left right"` (the first space after the first
/// byte splits a merge, as in llama.cpp); the first of duplicates wins.
fn read_merges(model: &impl Gguf, optional: bool) -> Result<FxHashMap<Box<str>, u32>> {
    let merges = match model.value(KEY_MERGES) {
        None if optional => return Ok(FxHashMap::default()),
        None => {
            return Err(bad_key(
                KEY_MERGES,
                "missing: a BPE vocabulary needs its merges",
            ))
        }
        Some(Value::Array(a)) => a.strings().ok_or_else(|| {
            bad_key(
                KEY_MERGES,
                format!("is an array of {}, expected strings", a.element_type()),
            )
        })?,
        Some(v) => {
            return Err(bad_key(
                KEY_MERGES,
                format!("has type {}, expected array", v.value_type()),
            ))
        }
    };
    let mut ranks = FxHashMap::with_capacity_and_hasher(merges.len(), Default::default());
    for (rank, m) in merges.enumerate() {
        // A merge without a space (past its first byte) is llama.cpp's
        // pair ("", ""), which no lookup can match.
        if !m.as_bytes().iter().skip(1).any(|&b| b == b' ') {
            continue;
        }
        ranks.entry(m.into()).or_insert(rank as u32);
    }
    Ok(ranks)
}
