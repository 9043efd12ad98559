//! The checkpoint directory: which tokenizer files it has, reading them
//! with errors that name the file, and `config.json`'s values as the
//! converter looks them up.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result, VocabError};

pub(super) struct Dir<'a> {
    path: &'a Path,
    config: &'a Value,
}

impl<'a> Dir<'a> {
    pub(super) fn new(path: &'a Path, config: &'a Value) -> Self {
        Dir { path, config }
    }

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// A file that exists (symlinks followed). The converter asks
    /// `is_file()`, which takes a FIFO or a device for no file at all; here
    /// reading one is an error naming it rather than a silent difference.
    pub(super) fn has(&self, name: &str) -> bool {
        std::fs::metadata(self.path(name)).is_ok()
    }

    pub(super) fn read(&self, name: &str) -> Result<Vec<u8>> {
        Ok(gguf_core::read::read_capped(
            &self.path(name),
            gguf_core::read::MAX_TEXT_INPUT,
        )?)
    }

    pub(super) fn read_text(&self, name: &str) -> Result<String> {
        let bytes = self.read(name)?;
        String::from_utf8(bytes).map_err(|e| {
            bad(
                &self.path(name),
                format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
            )
        })
    }

    /// A JSON file, or `None` when there is no such file.
    pub(super) fn json(&self, name: &str) -> Result<Option<Value>> {
        if !self.has(name) {
            return Ok(None);
        }
        let text = self.read_text(name)?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| bad(&self.path(name), format!("invalid JSON: {e}")))
    }

    /// `tokenizer_config.json` when it is a JSON object (the converter
    /// treats an empty one as absent).
    pub(super) fn tokenizer_config(&self) -> Result<Option<Value>> {
        let name = "tokenizer_config.json";
        match self.json(name)? {
            None => Ok(None),
            Some(v) if v.is_object() => Ok(Some(v)),
            Some(_) => Err(bad(&self.path(name), "not a JSON object")),
        }
    }

    /// The parsed `config.json`.
    pub(super) fn config(&self) -> &Value {
        self.config
    }

    /// The converter's `find_hparam`: the first of `names` that is set,
    /// `text_config`'s value over the top level's (it merges the two).
    pub(super) fn hparam(&self, names: &[&str]) -> Option<&'a Value> {
        let text = self.config.get("text_config");
        names.iter().find_map(|name| {
            text.and_then(|t| t.get(*name))
                .filter(|v| !v.is_null())
                .or_else(|| self.config.get(*name).filter(|v| !v.is_null()))
        })
    }

    pub(super) fn hparam_u64(&self, names: &[&str]) -> Option<u64> {
        self.hparam(names).and_then(Value::as_u64)
    }
}

/// An error about one file.
pub(super) fn bad(file: &Path, reason: impl Into<String>) -> Error {
    VocabError::BadFile {
        file: file.to_owned(),
        reason: reason.into(),
    }
    .into()
}

/// The largest vocabulary accepted (16 Mi tokens; the largest models have
/// about 262 Ki): a `vocab_size` above it is a broken `config.json`, not a
/// reason to build millions of padding tokens.
pub(super) const MAX_VOCAB: usize = 1 << 24;

pub(super) fn check_vocab_size(dir: &Dir, vocab_size: usize) -> Result<()> {
    if vocab_size > MAX_VOCAB {
        return Err(bad(
            &dir.path("config.json"),
            format!("vocab_size {vocab_size} is more than {MAX_VOCAB} tokens"),
        ));
    }
    Ok(())
}
