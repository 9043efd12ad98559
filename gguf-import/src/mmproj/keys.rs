//! The projector's `clip.*` keys: `MmprojModel.set_gguf_parameters` (the
//! vision tower's shape, the preprocessor's normalisation), then the
//! class's own ([`ClipStep`]), in the converter's order and types.

use std::path::{Path, PathBuf};

use gguf_core::format::{OwnedArray, OwnedValue};
use serde_json::{Map, Value};

use crate::config::{config_error, read_json, Config};
use crate::error::Result;
use crate::hparams::Keys;

use super::tables::{ClipStep, Projector, Source, VisionEdit, BLOCK_KEYS};

/// The preprocessor's settings as the converter merges them:
/// `preprocessor_config.json` (its `media_proc_cfg` lifted to the top),
/// then `processor_config.json` (its `image_processor` lifted).
#[derive(Debug, Default)]
pub(super) struct Preprocessor {
    /// The files read, for errors (the first when there is one).
    pub file: PathBuf,
    pub values: Map<String, Value>,
}

impl Preprocessor {
    /// Reads the files of `dir` that exist.
    pub fn read(dir: &Path) -> Result<Preprocessor> {
        let mut out = Preprocessor {
            file: dir.join("preprocessor_config.json"),
            values: Map::new(),
        };
        for (name, inner) in [
            ("preprocessor_config.json", "media_proc_cfg"),
            ("processor_config.json", "image_processor"),
        ] {
            let file = dir.join(name);
            if !file.is_file() {
                continue;
            }
            let json = read_json(&file)?;
            let Value::Object(mut cfg) = json else {
                return Err(config_error(&file, "not a JSON object".into()));
            };
            if let Some(v) = cfg.get(inner).cloned() {
                let Value::Object(lifted) = v else {
                    return Err(config_error(
                        &file,
                        format!("{inner:?} is {v}, not an object"),
                    ));
                };
                cfg.extend(lifted);
            }
            if out.values.is_empty() {
                out.file = file;
            }
            out.values.extend(cfg);
        }
        Ok(out)
    }
}

/// The vision config as the converter reads it: `config.json`'s
/// `vision_config` with `transformers`' defaults and the class's edits.
pub(super) fn vision_config(p: &Projector, config: &Config) -> Result<Config> {
    let Some(Value::Object(vision)) = config.raw.get("vision_config") else {
        return Err(config_error(
            &config.file,
            "no \"vision_config\" object (the converter needs one for a vision projector)".into(),
        ));
    };
    let mut v = Config {
        file: config.file.clone(),
        raw: config.raw.clone(),
        hparams: vision.clone(),
    };
    v.apply_defaults(p.vision_defaults);
    for edit in p.vision_edits {
        match *edit {
            VisionEdit::Rename { to, from, when } => {
                if when.is_some_and(|w| !v.hparams.contains_key(w)) {
                    continue;
                }
                let value = v.hparams.get(from).cloned().unwrap_or(Value::Null);
                v.hparams.insert(to.to_owned(), value);
            }
            VisionEdit::ImageSizeFromPositions => {
                if v.hparams.contains_key("image_size") {
                    continue;
                }
                let positions = vision_num(&v, "num_position_embeddings")?.unwrap_or(2304.0);
                let patch = vision_num(&v, "patch_size")?.unwrap_or(16.0);
                let size = (positions.sqrt() * patch).floor();
                if !(0.0..=f64::from(u32::MAX)).contains(&size) {
                    return Err(config_error(
                        &v.file,
                        format!("vision_config: an image size of {size} from num_position_embeddings and patch_size"),
                    ));
                }
                v.hparams
                    .insert("image_size".into(), Value::from(size as u64));
            }
        }
    }
    Ok(v)
}

/// `vision_config.{key}` as a number, when set.
fn vision_num(v: &Config, key: &str) -> Result<Option<f64>> {
    match v.hparams.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x.as_f64().filter(|f| *f >= 0.0).map(Some).ok_or_else(|| {
            config_error(&v.file, format!("vision_config.{key} is {x}, not a number"))
        }),
    }
}

/// The first of `keys` the vision config has, as a count (the converter's
/// `find_vparam`, which needs one).
pub(super) fn vision_count(v: &Config, keys: &[&str]) -> Result<u32> {
    let key = keys.iter().find(|k| v.hparams.contains_key(**k));
    let Some(key) = key else {
        return Err(config_error(
            &v.file,
            format!("vision_config has none of {keys:?} (the converter needs one)"),
        ));
    };
    let value = &v.hparams[*key];
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            config_error(
                &v.file,
                format!("vision_config.{key} is {value}, not a count"),
            )
        })
}

/// A list of numbers as gguf-py writes a Python list: `i32` when its first
/// value is an integer, `f32` otherwise; `None` for an empty list (gguf-py
/// writes no key for it).
fn number_list(file: &Path, what: &str, value: &Value) -> Result<Option<OwnedValue>> {
    let bad = || config_error(file, format!("{what} is {value}, not a list of numbers"));
    let list = value.as_array().ok_or_else(bad)?;
    let Some(first) = list.first() else {
        return Ok(None);
    };
    let array = if first.is_i64() || first.is_u64() {
        let ints = list
            .iter()
            .map(|x| {
                x.as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(bad)
            })
            .collect::<Result<Vec<i32>>>()?;
        OwnedArray::I32(ints)
    } else {
        let floats = list
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32).ok_or_else(bad))
            .collect::<Result<Vec<f32>>>()?;
        OwnedArray::F32(floats)
    };
    Ok(Some(OwnedValue::Array(array)))
}

/// `MmprojModel.set_gguf_parameters` and the class's steps. `text` is
/// the merged config (for the text model's width), `vision` the vision
/// config.
pub(super) fn write(
    p: &Projector,
    text: &Config,
    vision: &Config,
    pre: &Preprocessor,
    file_type: u32,
    keys: &mut Keys,
) -> Result<()> {
    keys.set("general.file_type", file_type);
    keys.set("clip.has_vision_encoder", true);
    let n_embd_text = text.find_u32(&["hidden_size", "n_embd"])?.unwrap_or(0);
    if n_embd_text == 0 {
        return Err(config_error(
            &text.file,
            "the text model's hidden_size is not set (the projection's width)".into(),
        ));
    }
    keys.set("clip.vision.projection_dim", n_embd_text);
    let count = |keys: &[&str]| vision_count(vision, keys);
    keys.set("clip.vision.image_size", count(&["image_size"])?);
    keys.set("clip.vision.patch_size", count(&["patch_size"])?);
    keys.set(
        "clip.vision.embedding_length",
        count(&["hidden_size", "width", "vt_hidden_size"])?,
    );
    keys.set(
        "clip.vision.feed_forward_length",
        count(&["intermediate_size", "vt_intermediate_size"])?,
    );
    keys.set("clip.vision.block_count", count(BLOCK_KEYS)?);
    keys.set(
        "clip.vision.attention.head_count",
        count(&[
            "num_attention_heads",
            "num_heads",
            "heads",
            "vt_num_attention_heads",
        ])?,
    );
    for (key, name) in [
        ("clip.vision.image_mean", "image_mean"),
        ("clip.vision.image_std", "image_std"),
    ] {
        let Some(value) = pre.values.get(name) else {
            return Err(config_error(
                &pre.file,
                format!("no {name:?} (the converter needs the preprocessor's {name} for a vision projector)"),
            ));
        };
        if let Some(v) = number_list(&pre.file, name, value)? {
            keys.set(key, v);
        }
    }
    for step in p.steps {
        match *step {
            ClipStep::ProjectorType => keys.set("clip.projector_type", p.projector_type),
            ClipStep::Flag(key) => keys.set(key, true),
            ClipStep::LayerNormEps {
                source,
                key,
                default,
            } => {
                let (map, place) = match source {
                    Source::Vision => (Some(&vision.hparams), "vision_config."),
                    Source::Top => (text.raw.as_object(), ""),
                    Source::Text => (
                        text.raw.get("text_config").and_then(Value::as_object),
                        "text_config.",
                    ),
                };
                let eps = match map.and_then(|m| m.get(key)).filter(|v| !v.is_null()) {
                    None => default,
                    Some(v) => v.as_f64().map(|f| f as f32).ok_or_else(|| {
                        config_error(&text.file, format!("{place}{key} is {v}, not a number"))
                    })?,
                };
                keys.set("clip.vision.attention.layer_norm_epsilon", eps);
            }
            ClipStep::U32IfSet { key, config } => {
                if vision.hparams.get(config).is_some_and(|v| !v.is_null()) {
                    keys.set(key, count(&[config])?);
                }
            }
            ClipStep::WindowPattern => {
                keys.set("clip.vision.n_wa_pattern", window_pattern(vision)?);
            }
            ClipStep::DeepstackLayers => {
                let layers = deepstack_layers(vision)?;
                if !layers.is_empty() {
                    keys.set("clip.vision.is_deepstack_layers", layers);
                }
            }
            ClipStep::ScaleFactor => {
                if let Some(f) = scale_factor(vision, pre)? {
                    keys.set("clip.vision.projector.scale_factor", f);
                }
            }
        }
    }
    Ok(())
}

/// The vision config's `key` as a list of block numbers.
fn block_list(v: &Config, key: &str) -> Result<Vec<u64>> {
    let bad = |x: &Value| {
        config_error(
            &v.file,
            format!("vision_config.{key} is {x}, not a list of block numbers"),
        )
    };
    match v.hparams.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(x) => x
            .as_array()
            .ok_or_else(|| bad(x))?
            .iter()
            .map(|n| n.as_u64().ok_or_else(|| bad(x)))
            .collect(),
    }
}

/// Qwen2.5-VL's window attention pattern: one more than the first
/// full-attention block, which must repeat at that spacing.
fn window_pattern(v: &Config) -> Result<u32> {
    let key = "fullatt_block_indexes";
    let full = block_list(v, key)?;
    let Some(&first) = full.first() else {
        return Err(config_error(
            &v.file,
            format!("vision_config.{key} is not set (the converter needs it for Qwen2.5-VL)"),
        ));
    };
    let n = first + 1;
    if full.windows(2).any(|w| w[1].checked_sub(w[0]) != Some(n)) {
        return Err(config_error(
            &v.file,
            format!(
                "vision_config.{key} {full:?} is not every {n}th block (the converter refuses it)"
            ),
        ));
    }
    u32::try_from(n)
        .map_err(|_| config_error(&v.file, format!("vision_config.{key}: {n} is too large")))
}

/// Qwen3-VL's DeepStack blocks: per block, whether
/// `deepstack_visual_indexes` names it.
fn deepstack_layers(v: &Config) -> Result<Vec<bool>> {
    let blocks = vision_count(v, &["num_hidden_layers"])?;
    let mut layers = vec![false; blocks as usize];
    let key = "deepstack_visual_indexes";
    for idx in block_list(v, key)? {
        let Some(slot) = usize::try_from(idx).ok().and_then(|i| layers.get_mut(i)) else {
            return Err(config_error(
                &v.file,
                format!("vision_config.{key} names block {idx}, but the tower has {blocks}"),
            ));
        };
        *slot = true;
    }
    Ok(layers)
}

/// Gemma 3's projector scale factor, when not the default 4.
fn scale_factor(v: &Config, pre: &Preprocessor) -> Result<Option<u32>> {
    let seq = match pre.values.get("image_seq_length") {
        None | Some(Value::Null) => 256.0,
        Some(x) => x.as_f64().filter(|f| *f >= 0.0).ok_or_else(|| {
            config_error(&pre.file, format!("image_seq_length is {x}, not a number"))
        })?,
    };
    let per_side = seq.sqrt().floor() as u64;
    let image = u64::from(vision_count(v, &["image_size"])?);
    let patch = u64::from(vision_count(v, &["patch_size"])?);
    let (Some(side), true) = (image.checked_div(patch), per_side > 0) else {
        return Err(config_error(
            &v.file,
            format!("image_size {image}, patch_size {patch} and image_seq_length {seq} give no projector scale factor"),
        ));
    };
    let factor = side / per_side;
    Ok((factor > 0 && factor != 4).then(|| u32::try_from(factor).unwrap_or(u32::MAX)))
}
