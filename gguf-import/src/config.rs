//! `config.json`: the checkpoint's hyper-parameters, as the converter sees
//! them.
//!
//! The converter reads them through `transformers`' `AutoConfig` (`to_dict`),
//! which fills in every default the file leaves out; the architecture's
//! table ([`super::arch::Architecture::defaults`]) lists those defaults, so
//! a `config.json` written without them gives the same keys.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, ImportError, Result};

/// A default `transformers` gives a config key the file leaves out.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Default {
    /// A number.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A list of numbers.
    Ints(&'static [i64]),
    /// `hidden_size / num_attention_heads` (Llama's and Mistral's
    /// `head_dim`).
    HeadDim,
    /// `num_attention_heads` (`num_key_value_heads` when absent).
    HeadCount,
}

/// The parsed `config.json`, with `text_config` merged into the top level
/// and the architecture's defaults filled in, as the converter's `hparams`.
#[derive(Debug)]
pub(crate) struct Config {
    /// The file, for errors.
    pub file: PathBuf,
    /// The file as parsed (what the tokenizer part and the name heuristics
    /// read).
    pub raw: Value,
    /// The converter's view: `text_config` merged, defaults added.
    pub hparams: Map<String, Value>,
}

impl Config {
    /// Reads `dir/config.json`.
    pub fn read(dir: &Path) -> Result<Config> {
        let file = dir.join("config.json");
        let raw = read_json(&file)?;
        let Some(top) = raw.as_object() else {
            return Err(config_error(&file, "not a JSON object".into()));
        };
        let mut hparams = top.clone();
        if let Some(Value::Object(text)) = top.get("text_config") {
            for (k, v) in text {
                hparams.insert(k.clone(), v.clone());
            }
        }
        Ok(Config { file, raw, hparams })
    }

    /// `architectures[0]` (or `text_config.architectures[0]`), as the
    /// converter picks the model class.
    pub fn architecture(&self) -> Result<&str> {
        fn first(v: Option<&Value>) -> Option<&str> {
            v.and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str)
        }
        let text = self.raw.get("text_config");
        first(text.and_then(|t| t.get("architectures")))
            .or_else(|| first(self.raw.get("architectures")))
            .ok_or_else(|| config_error(&self.file, "no \"architectures\" list".into()))
    }

    /// Fills in the defaults `transformers` would give absent (or null)
    /// keys.
    pub fn apply_defaults(&mut self, defaults: &[(&str, Default)]) {
        for &(key, default) in defaults {
            if self.hparams.get(key).is_some_and(|v| !v.is_null()) {
                continue;
            }
            let value = match default {
                Default::Int(i) => Value::from(i),
                Default::Float(f) => Value::from(f),
                Default::Bool(b) => Value::from(b),
                Default::Ints(list) => Value::from(list.to_vec()),
                Default::HeadDim => {
                    let hidden = self.hparams.get("hidden_size").and_then(Value::as_u64);
                    let heads = self
                        .hparams
                        .get("num_attention_heads")
                        .and_then(Value::as_u64);
                    match (hidden, heads) {
                        (Some(h), Some(n)) if n > 0 => Value::from(h / n),
                        _ => continue,
                    }
                }
                Default::HeadCount => match self.hparams.get("num_attention_heads") {
                    Some(v) => v.clone(),
                    None => continue,
                },
            };
            self.hparams.insert(key.to_owned(), value);
        }
    }

    /// The converter's `find_hparam`: the value of the first of `keys`
    /// present (`None` when that value is null or none is present).
    pub fn find(&self, keys: &[&str]) -> Option<&Value> {
        keys.iter()
            .find_map(|k| self.hparams.get(*k))
            .filter(|v| !v.is_null())
    }

    /// [`find`](Self::find) for a count (a non-negative integer that fits
    /// in `u32`); another type is an error naming the key.
    pub fn find_u32(&self, keys: &[&str]) -> Result<Option<u32>> {
        let Some(v) = self.find(keys) else {
            return Ok(None);
        };
        v.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| self.bad(keys, v, "a count"))
    }

    /// [`find`](Self::find) for a number, written as `f32`.
    pub fn find_f32(&self, keys: &[&str]) -> Result<Option<f32>> {
        let Some(v) = self.find(keys) else {
            return Ok(None);
        };
        v.as_f64()
            .map(|f| Some(f as f32))
            .ok_or_else(|| self.bad(keys, v, "a number"))
    }

    /// [`find`](Self::find) for a boolean (another type is an error naming
    /// the key).
    pub fn find_bool(&self, key: &str) -> Result<Option<bool>> {
        let Some(v) = self.find(&[key]) else {
            return Ok(None);
        };
        v.as_bool()
            .map(Some)
            .ok_or_else(|| self.bad(&[key], v, "true or false"))
    }

    /// [`find_u32`](Self::find_u32) for a key that must be there.
    pub fn require_u32(&self, keys: &[&str]) -> Result<u32> {
        self.find_u32(keys)?.ok_or_else(|| {
            config_error(
                &self.file,
                format!("none of {keys:?} is set (the converter needs one)"),
            )
        })
    }

    /// The converter's `rope_parameters` (from `rope_parameters` or
    /// `rope_scaling`, with the global and sliding-window thetas mirrored in).
    pub fn rope_parameters(&self) -> Map<String, Value> {
        let config = self;
        let h = &config.hparams;
        let mut rp = match h.get("rope_parameters").or_else(|| h.get("rope_scaling")) {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let theta = config
            .find(&[
                "global_rope_theta",
                "rope_global_theta",
                "rope_theta_global",
                "rope_theta",
                "rotary_emb_base",
            ])
            .cloned();
        let local = config
            .find(&[
                "local_rope_theta",
                "rope_local_theta",
                "rope_theta_local",
                "swa_rope_theta",
                "rope_local_base_freq",
            ])
            .cloned();
        let partial = config
            .find(&["partial_rotary_factor", "rope_pct", "rope_percent"])
            .cloned();
        let orig = config.find(&["original_max_position_embeddings"]).cloned();
        if !rp.contains_key("full_attention") && !rp.contains_key("sliding_attention") {
            if let Some(local) = local {
                let mut m = Map::new();
                m.insert("rope_theta".into(), local);
                rp.insert("sliding_attention".into(), Value::Object(m));
            }
            if !rp.contains_key("rope_theta")
                && let Some(t) = theta
            {
                rp.insert("rope_theta".into(), t);
            }
            if !rp.contains_key("rope_type")
                && let Some(t) = rp.get("type").filter(|t| !t.is_null()).cloned()
            {
                rp.insert("rope_type".into(), t);
            }
            if !rp.contains_key("partial_rotary_factor")
                && let Some(p) = partial
            {
                rp.insert("partial_rotary_factor".into(), p);
            }
            if !rp.contains_key("original_max_position_embeddings")
                && let Some(o) = orig
            {
                rp.insert("original_max_position_embeddings".into(), o);
            }
        }
        rp
    }

    fn bad(&self, keys: &[&str], v: &Value, want: &str) -> Error {
        let key = keys
            .iter()
            .find(|k| self.hparams.contains_key(**k))
            .unwrap_or(&"?");
        config_error(&self.file, format!("{key:?} is {v}, not {want}"))
    }
}

/// Reads and parses a JSON file; errors name it.
pub(crate) fn read_json(file: &Path) -> Result<Value> {
    let text =
        gguf_core::read::read_capped(file, gguf_core::read::MAX_TEXT_INPUT).map_err(|e| match e
            .io_error()
            .map(std::io::Error::kind)
        {
            Some(std::io::ErrorKind::NotFound) => config_error(file, "missing".into()),
            _ => e.into(),
        })?;
    serde_json::from_slice(&text).map_err(|e| config_error(file, format!("malformed JSON: {e}")))
}

/// A [`ImportError::Config`] about `file`.
pub(crate) fn config_error(file: &Path, reason: String) -> Error {
    Error::Import(ImportError::Config {
        file: file.to_owned(),
        reason,
    })
}
