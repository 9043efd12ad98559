//! The architecture's hyper-parameter keys, as the converter's
//! `set_gguf_parameters` writes them: in its order, with its types.

use serde_json::{Map, Value};

use crate::error::Result;
use gguf_core::write::MetaValue;

use super::arch::MROPE_ARCHITECTURES;
use super::arch::{Architecture, Step};
use super::config::{config_error, Config};

/// Keys in write order; setting a key again keeps its place and takes the
/// new value, as gguf-py's writer does.
#[derive(Debug, Default)]
pub(crate) struct Keys(pub indexmap::IndexMap<String, MetaValue<'static>>);

impl Keys {
    /// Sets `key` (a new key goes last).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<MetaValue<'static>>) {
        self.0.insert(key.into(), value.into());
    }
}

/// `num_attention_heads`, which must not be 0.
fn nonzero_heads(config: &Config) -> Result<u32> {
    match config.require_u32(&["num_attention_heads", "n_head"])? {
        0 => Err(config_error(
            &config.file,
            "num_attention_heads is 0".into(),
        )),
        n => Ok(n),
    }
}

/// The full-attention part of the RoPE parameters.
fn full_attention(rp: &Map<String, Value>) -> &Map<String, Value> {
    match rp.get("full_attention") {
        Some(Value::Object(m)) => m,
        _ => rp,
    }
}

/// `rope.dimension_sections` from the RoPE parameters' `mrope_section`,
/// padded with zeros to four sections (time, height, width, extra) and cut
/// to four, as the converter writes them (an `i32` array); refused for an
/// architecture llama.cpp reads no sections for.
fn mrope_sections(arch: &Architecture, config: &Config, sections: &Value) -> Result<Vec<i32>> {
    if !MROPE_ARCHITECTURES.contains(&arch.gguf) {
        return Err(config_error(
            &config.file,
            format!(
                "multimodal RoPE sections (mrope_section) are not supported for {} (only for {})",
                arch.gguf,
                MROPE_ARCHITECTURES.join(", ")
            ),
        ));
    }
    let bad = || {
        config_error(
            &config.file,
            format!("rope_scaling.mrope_section is {sections}, not a list of section sizes"),
        )
    };
    let mut out = sections
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|v| {
            v.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(bad)
        })
        .collect::<Result<Vec<i32>>>()?;
    out.resize(out.len().max(4), 0);
    out.truncate(4);
    Ok(out)
}

/// The length of the list `vision_config.{list}`, `default` when the config
/// has none.
fn vision_list_length(config: &Config, list: &str, default: u32) -> Result<u32> {
    let value = config
        .raw
        .get("vision_config")
        .and_then(|v| v.get(list))
        .filter(|v| !v.is_null());
    let Some(value) = value else {
        return Ok(default);
    };
    value
        .as_array()
        .and_then(|a| u32::try_from(a.len()).ok())
        .ok_or_else(|| {
            config_error(
                &config.file,
                format!("vision_config.{list} is {value}, not a list"),
            )
        })
}

/// Writes the architecture's hyper-parameter keys into `keys`, and
/// `general.file_type` where the converter writes it.
pub(crate) fn write(
    arch: &Architecture,
    config: &Config,
    dir: &std::path::Path,
    file_type: u32,
    keys: &mut Keys,
) -> Result<()> {
    // The values the converter sets on its hparams before writing them.
    let overridden;
    let config = if arch.hparam_overrides.is_empty() {
        config
    } else {
        let mut c = Config {
            file: config.file.clone(),
            raw: config.raw.clone(),
            hparams: config.hparams.clone(),
        };
        for (key, _) in arch.hparam_overrides {
            c.hparams.remove(*key);
        }
        c.apply_defaults(arch.hparam_overrides);
        overridden = c;
        &overridden
    };
    let a = arch.gguf;
    let k = |suffix: &str| format!("{a}.{suffix}");
    let rp = config.rope_parameters();
    let num64 = |m: &Map<String, Value>, key: &str| -> Result<Option<f64>> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                config_error(
                    &config.file,
                    format!("RoPE parameter {key:?} is {v}, not a number"),
                )
            }),
        }
    };
    let num = |m: &Map<String, Value>, key: &str| -> Result<Option<f32>> {
        Ok(num64(m, key)?.map(|f| f as f32))
    };
    for step in arch.steps {
        match *step {
            Step::Common => {
                keys.set(k("block_count"), arch.block_count(config)?);
                let n_ctx = config.find_u32(&[
                    "max_position_embeddings",
                    "n_ctx",
                    "n_positions",
                    "max_length",
                    "max_sequence_length",
                    "model_max_length",
                ])?;
                if let Some(n) = n_ctx {
                    keys.set(k("context_length"), n);
                }
                if let Some(n) = config.find_u32(&["hidden_size", "n_embd", "dim"])? {
                    keys.set(k("embedding_length"), n);
                }
                let n_ff = config.find_u32(&[
                    "prefix_dense_intermediate_size",
                    "dense_intermediate_size",
                    "intermediate_size",
                    "n_inner",
                    "hidden_dim",
                ])?;
                if let Some(n) = n_ff {
                    keys.set(k("feed_forward_length"), n);
                }
                if let Some(n) = config.find_u32(&["num_attention_heads", "n_head", "n_heads"])? {
                    keys.set(k("attention.head_count"), n);
                }
                if let Some(n) = config.find_u32(&["num_key_value_heads", "n_kv_heads"])? {
                    keys.set(k("attention.head_count_kv"), n);
                }
                if config.hparams.get("is_causal") == Some(&Value::Bool(false)) {
                    keys.set(k("attention.causal"), false);
                }
                let full = full_attention(&rp);
                if let Some(rope_type) = full.get("rope_type").and_then(Value::as_str) {
                    let factor = num(full, "factor")?;
                    match (rope_type, factor) {
                        ("linear", Some(f)) => {
                            keys.set(k("rope.scaling.type"), "linear");
                            keys.set(k("rope.scaling.factor"), f);
                        }
                        ("yarn", Some(f)) => {
                            keys.set(k("rope.scaling.type"), "yarn");
                            keys.set(k("rope.scaling.factor"), f);
                            let orig = full
                                .get("original_max_position_embeddings")
                                .and_then(Value::as_u64)
                                .and_then(|n| u32::try_from(n).ok())
                                .ok_or_else(|| {
                                    config_error(
                                        &config.file,
                                        "yarn RoPE scaling without original_max_position_embeddings".into(),
                                    )
                                })?;
                            keys.set(k("rope.scaling.original_context_length"), orig);
                            if let Some(v) = num(full, "extrapolation_factor")? {
                                keys.set(k("rope.scaling.yarn_ext_factor"), v);
                            }
                            let attn = match num(full, "attention_factor")? {
                                Some(v) => Some(v),
                                None => num(full, "attn_factor")?,
                            };
                            if let Some(v) = attn {
                                keys.set(k("rope.scaling.yarn_attn_factor"), v);
                            }
                            if let Some(v) = num(full, "beta_fast")? {
                                keys.set(k("rope.scaling.yarn_beta_fast"), v);
                            }
                            if let Some(v) = num(full, "beta_slow")? {
                                keys.set(k("rope.scaling.yarn_beta_slow"), v);
                            }
                        }
                        ("su" | "longrope", _) => {
                            keys.set(k("rope.scaling.type"), "longrope");
                        }
                        _ => {}
                    }
                }
                if let Some(sections) = rp.get("mrope_section") {
                    keys.set(
                        k("rope.dimension_sections"),
                        mrope_sections(arch, config, sections)?,
                    );
                }
                if let Some(theta) = num(full, "rope_theta")? {
                    keys.set(k("rope.freq_base"), theta);
                }
                if let Some(Value::Object(swa)) = rp.get("sliding_attention")
                    && let Some(theta) = num(swa, "rope_theta")?
                {
                    keys.set(k("rope.freq_base_swa"), theta);
                }
                if let Some(eps) = config.find_f32(&["rms_norm_eps", "norm_eps"])? {
                    keys.set(k("attention.layer_norm_rms_epsilon"), eps);
                }
                let eps =
                    config.find_f32(&["layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"])?;
                if let Some(eps) = eps {
                    keys.set(k("attention.layer_norm_epsilon"), eps);
                }
                let experts =
                    config.find_u32(&["num_local_experts", "num_experts", "n_routed_experts"])?;
                if let Some(n) = experts {
                    keys.set(k("expert_count"), n);
                }
                let used = config.find_u32(&[
                    "num_experts_per_tok",
                    "num_experts_per_token",
                    "top_k_experts",
                ])?;
                if let Some(n) = used {
                    keys.set(k("expert_used_count"), n);
                }
                if let Some(n) = config.find_u32(&["n_group"])? {
                    keys.set(k("expert_group_count"), n);
                }
                if let Some(n) = config.find_u32(&["topk_group"])? {
                    keys.set(k("expert_group_used_count"), n);
                }
                let score = config.find(&[
                    "score_function",
                    "scoring_func",
                    "score_func",
                    "moe_router_activation",
                    "moe_router_activation_func",
                    "expert_selection_fn",
                ]);
                if let Some(score) = score {
                    // gguf-py's ExpertGatingFuncType.
                    let func: u32 = match score.as_str() {
                        Some("softmax") => 1,
                        Some("sigmoid") => 2,
                        Some("sqrtsoftplus") => 4,
                        _ => {
                            return Err(config_error(
                                &config.file,
                                format!("expert scoring function {score} is not one the converter knows (softmax, sigmoid, sqrtsoftplus)"),
                            ))
                        }
                    };
                    keys.set(k("expert_gating_func"), func);
                }
                if let Some(n) = config.find_u32(&["head_dim"])? {
                    keys.set(k("attention.key_length"), n);
                    keys.set(k("attention.value_length"), n);
                }
            }
            Step::FileType => keys.set("general.file_type", file_type),
            Step::VisionListLength { key, list, default } => {
                keys.set(k(key), vision_list_length(config, list, default)?);
            }
            Step::U32IfPresent { key, config: name } => {
                if let Some(n) = config.find_u32(&[name])? {
                    keys.set(k(key), n);
                }
            }
            Step::F32IfPresent { key, config: name } => {
                if let Some(x) = config.find_f32(&[name])? {
                    keys.set(k(key), x);
                }
            }
            Step::BoolIfTrue { key, config: name } => {
                if config.find_bool(name)? == Some(true) {
                    keys.set(k(key), true);
                }
            }
            Step::BoolIfPresent { key, config: name } => {
                if let Some(b) = config.find_bool(name)? {
                    keys.set(k(key), b);
                }
            }
            Step::ConstU32 { key, value } => keys.set(k(key), value),
            Step::NextnLayers => {
                let layers = config.require_u32(&["num_hidden_layers"])?;
                let extra = arch.block_count(config)?.saturating_sub(layers);
                if extra > 0 {
                    keys.set(k("nextn_predict_layers"), extra);
                }
            }
            Step::SsmInnerSize => {
                let dim = config.require_u32(&["linear_value_head_dim"])?;
                let heads = config.require_u32(&["linear_num_value_heads"])?;
                let inner = dim.checked_mul(heads).ok_or_else(|| {
                    config_error(
                        &config.file,
                        "the linear attention's value size overflows".into(),
                    )
                })?;
                keys.set(k("ssm.inner_size"), inner);
            }
            Step::RecurrentLayers => {
                if let Some(types) = config.hparams.get("layer_types").filter(|t| !t.is_null()) {
                    let layers = config.require_u32(&["num_hidden_layers"])?;
                    let Some(types) = types.as_array().filter(|t| t.len() == layers as usize)
                    else {
                        return Err(config_error(
                            &config.file,
                            format!(
                                "layer_types must list num_hidden_layers ({layers}) layer types"
                            ),
                        ));
                    };
                    let mut recurrent: Vec<bool> = types
                        .iter()
                        .map(|t| t.as_str() == Some("linear_attention"))
                        .collect();
                    recurrent.resize(arch.block_count(config)? as usize, false);
                    keys.set(k("attention.recurrent_layers"), recurrent);
                }
            }
            Step::RopeDimensionTimesFactor { default } => {
                let dim = match config.find_u32(&["head_dim"])? {
                    Some(d) => d,
                    None => config.require_u32(&["hidden_size"])? / nonzero_heads(config)?,
                };
                let factor = num64(&rp, "partial_rotary_factor")?.unwrap_or(default);
                keys.set(k("rope.dimension_count"), (f64::from(dim) * factor) as u32);
            }
            Step::LeadingDenseBlocks => {
                let n = match config.find_u32(&["first_k_dense_replace"])? {
                    Some(n) => n,
                    None if config.find(&["n_routed_experts"]).is_some() => 0,
                    None => config.require_u32(&["num_hidden_layers"])?,
                };
                keys.set(k("leading_dense_block_count"), n);
            }
            Step::Mla => {
                let kv_lora = config.find_u32(&["kv_lora_rank"])?.unwrap_or(512);
                let rope = config.require_u32(&["qk_rope_head_dim"])?;
                let nope = config.require_u32(&["qk_nope_head_dim"])?;
                let v = config.require_u32(&["v_head_dim"])?;
                let sum = |a: u32, b: u32| {
                    a.checked_add(b).ok_or_else(|| {
                        config_error(&config.file, "the attention head sizes overflow".into())
                    })
                };
                keys.set(k("attention.kv_lora_rank"), kv_lora);
                keys.set(k("attention.key_length"), sum(kv_lora, rope)?);
                keys.set(k("attention.value_length"), kv_lora);
                keys.set(k("attention.key_length_mla"), sum(nope, rope)?);
                keys.set(k("attention.value_length_mla"), v);
            }
            Step::YarnLogMultiplier => {
                if let Some(m) = num64(&rp, "mscale_all_dim")? {
                    keys.set(k("rope.scaling.yarn_log_multiplier"), (0.1 * m) as f32);
                }
            }
            Step::U32IfSet { key, config: name } => {
                if let Some(n) = config.find_u32(&[name])?.filter(|n| *n != 0) {
                    keys.set(k(key), n);
                }
            }
            Step::RopeDimensionPartial => {
                let n_embd = config.require_u32(&["hidden_size", "n_embd"])?;
                let heads = nonzero_heads(config)?;
                let factor = num64(&rp, "partial_rotary_factor")?.unwrap_or(1.0);
                let dims = (factor * f64::from(n_embd)).floor() as u64 / u64::from(heads);
                keys.set(k("rope.dimension_count"), dims as u32);
            }
            Step::RopeOriginalContext => {
                let orig = rp
                    .get("original_max_position_embeddings")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        config_error(
                            &config.file,
                            format!("{a} needs original_max_position_embeddings (a count)"),
                        )
                    })?;
                keys.set(k("rope.scaling.original_context_length"), orig);
            }
            Step::SlidingWindowOrZero => {
                let window = config.find_u32(&["sliding_window"])?.unwrap_or(0);
                keys.set(k("attention.sliding_window"), window);
            }
            Step::SlidingWindowPattern => {
                if config.hparams.contains_key("sliding_window") {
                    let window = config.require_u32(&["sliding_window"])?;
                    keys.set(k("attention.sliding_window"), window);
                    let pattern: Vec<bool> = match config.hparams.get("layer_types") {
                        Some(Value::Array(types)) => types
                            .iter()
                            .map(|t| t.as_str() == Some("sliding_attention"))
                            .collect(),
                        _ => {
                            let n = config.require_u32(&["num_hidden_layers"])?;
                            (0..n).map(|i| (i + 1) % 4 != 0).collect()
                        }
                    };
                    keys.set(k("attention.sliding_window_pattern"), pattern);
                }
            }
            Step::U32 {
                key,
                config: names,
                default,
            } => {
                if let Some(n) = config.find_u32(names)?.or(default) {
                    keys.set(k(key), n);
                } else {
                    return Err(config_error(
                        &config.file,
                        format!("none of {names:?} is set (the converter needs one for {a}.{key})"),
                    ));
                }
            }
            Step::F32 {
                key,
                config: names,
                default,
            } => {
                if let Some(x) = config.find_f32(names)?.or(default) {
                    keys.set(k(key), x);
                }
            }
            Step::F32IfSet { key, config: name } => {
                if let Some(x) = config.find_f32(&[name])?.filter(|x| *x != 0.0) {
                    keys.set(k(key), x);
                }
            }
            Step::RopeDimensionCount => {
                let dim = match config.find_u32(&["head_dim"])? {
                    Some(d) => d,
                    None => {
                        let hidden = config.require_u32(&["hidden_size"])?;
                        let heads = config.require_u32(&["num_attention_heads"])?;
                        if heads == 0 {
                            return Err(config_error(
                                &config.file,
                                "num_attention_heads is 0".into(),
                            ));
                        }
                        hidden / heads
                    }
                };
                keys.set(k("rope.dimension_count"), dim);
            }
            Step::RopeFreqBase { default } => {
                let theta = num(full_attention(&rp), "rope_theta")?.unwrap_or(default);
                keys.set(k("rope.freq_base"), theta);
            }
            Step::SlidingWindow => {
                let pattern = config.hparams.get("sliding_window_pattern");
                if pattern.and_then(Value::as_i64) != Some(1) {
                    let window = config.require_u32(&["sliding_window"])?;
                    keys.set(k("attention.sliding_window"), window);
                }
            }
            Step::Pooling => {
                if dir.join("modules.json").is_file() {
                    return Err(config_error(
                        &dir.join("modules.json"),
                        "a sentence-transformers model (pooling layers): only causal language models are imported".into(),
                    ));
                }
                if config.hparams.contains_key("classifier_pooling") {
                    return Err(config_error(
                        &config.file,
                        "a classification model (classifier_pooling): only causal language models are imported".into(),
                    ));
                }
            }
        }
    }
    Ok(())
}
