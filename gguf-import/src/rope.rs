//! Tensors the converter generates rather than reads: Llama 3's RoPE
//! frequency factors (`rope_freqs.weight`, its `generate_extra_tensors`).

use serde_json::Value;

use crate::error::Result;

use super::config::{config_error, Config};

/// Llama 3's RoPE frequency factors when the config's RoPE type is
/// `llama3`, computed as the converter's torch code does: `float32`
/// throughout, a Python number meeting a tensor rounded to `float32`, and
/// `x / tensor` as `x * (1 / tensor)` (torch's reverse division).
pub(crate) fn llama3_rope_freqs(config: &Config) -> Result<Option<Vec<f32>>> {
    let h = &config.hparams;
    let rp = match h.get("rope_parameters").or_else(|| h.get("rope_scaling")) {
        Some(Value::Object(m)) => m,
        _ => return Ok(None),
    };
    let rp = match rp.get("full_attention") {
        Some(Value::Object(m)) => m,
        _ => rp,
    };
    let kind = rp
        .get("rope_type")
        .or_else(|| rp.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if !kind.eq_ignore_ascii_case("llama3") {
        return Ok(None);
    }
    let num = |key: &str, default: f64| -> Result<f64> {
        match rp.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| {
                config_error(
                    &config.file,
                    format!("rope_scaling {key:?} is {v}, not a number"),
                )
            }),
        }
    };
    // The converter's rope_parameters mirror the top-level rope_theta.
    let base = match rp.get("rope_theta") {
        Some(v) if !v.is_null() => num("rope_theta", 10000.0)?,
        _ => config
            .find(&[
                "global_rope_theta",
                "rope_global_theta",
                "rope_theta_global",
                "rope_theta",
                "rotary_emb_base",
            ])
            .and_then(Value::as_f64)
            .unwrap_or(10000.0),
    };
    let dim = match config.find_u32(&["head_dim"])? {
        Some(d) => d,
        None => {
            let hidden = config.require_u32(&["hidden_size"])?;
            let heads = config.require_u32(&["num_attention_heads"])?.max(1);
            hidden / heads
        }
    };
    let factor = num("factor", 8.0)?;
    let low = num("low_freq_factor", 1.0)?;
    let high = num("high_freq_factor", 4.0)?;
    let old = num("original_max_position_embeddings", 8192.0)?;
    let low_wavelen = (old / low) as f32;
    let high_wavelen = (old / high) as f32;
    let two_pi = std::f64::consts::TAU as f32;
    let mut out = Vec::with_capacity(dim as usize / 2);
    for i in (0..dim).step_by(2) {
        let exponent = i as f32 / dim as f32;
        let power = base.powf(f64::from(exponent)) as f32;
        let freq = 1.0 / power;
        let wavelen = (1.0 / freq) * two_pi;
        let f = if wavelen < high_wavelen {
            1.0
        } else if wavelen > low_wavelen {
            factor as f32
        } else {
            let smooth = ((1.0 / wavelen) * old as f32 - low as f32) / (high - low) as f32;
            1.0 / ((1.0 - smooth) / factor as f32 + smooth)
        };
        out.push(f);
    }
    Ok(Some(out))
}

/// Phi-3's long-context RoPE factors (the converter's
/// `Phi3MiniModel.generate_extra_tensors`): when the RoPE parameters have
/// a `long_factor`, the attention factor (`rope.scaling.attn_factor`) and
/// the `rope_factors_long` and `rope_factors_short` values.
pub(crate) struct LongRope {
    /// `rope.scaling.attn_factor`.
    pub attn_factor: f32,
    /// `rope_factors_long.weight`.
    pub long: Vec<f32>,
    /// `rope_factors_short.weight`.
    pub short: Vec<f32>,
}

/// See [`LongRope`]; `None` without a `long_factor`.
pub(crate) fn phi3_long_rope(config: &Config) -> Result<Option<LongRope>> {
    let rp = config.rope_parameters();
    let factors = |key: &str| -> Result<Option<Vec<f32>>> {
        match rp.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_f64().map(|f| f as f32).ok_or_else(|| {
                        config_error(
                            &config.file,
                            format!("rope_scaling {key:?} holds {v}, not a number"),
                        )
                    })
                })
                .collect::<Result<Vec<f32>>>()
                .map(Some),
            Some(v) => Err(config_error(
                &config.file,
                format!("rope_scaling {key:?} is {v}, not a list of numbers"),
            )),
        }
    };
    let Some(long) = factors("long_factor")?.filter(|l| !l.is_empty()) else {
        return Ok(None);
    };
    let n_embd = config.require_u32(&["hidden_size", "n_embd"])?;
    let heads = config
        .require_u32(&["num_attention_heads", "n_head"])?
        .max(1);
    let max_pos = config.require_u32(&["n_positions", "max_position_embeddings"])?;
    let orig = rp
        .get("original_max_position_embeddings")
        .and_then(Value::as_f64)
        .filter(|o| *o > 0.0)
        .ok_or_else(|| {
            config_error(
                &config.file,
                "phi3's long-context RoPE needs original_max_position_embeddings".into(),
            )
        })?;
    let rot = rp
        .get("partial_rotary_factor")
        .and_then(Value::as_f64)
        .unwrap_or(1.0);
    let rope_dims = (rot * f64::from(n_embd)).floor() as u64 / u64::from(heads);
    let scale = f64::from(max_pos) / orig;
    let kind = rp
        .get("rope_type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_lowercase();
    let attn_factor = match kind.as_str() {
        "su" | "longrope" if scale > 1.0 => (1.0 + scale.ln() / orig.ln()).sqrt(),
        "yarn" if scale > 1.0 => 0.1 * scale.ln() + 1.0,
        "su" | "longrope" | "yarn" => 1.0,
        "" => {
            return Err(config_error(
                &config.file,
                "rope_scaling has a long_factor but no rope_type".into(),
            ))
        }
        other => {
            return Err(config_error(
                &config.file,
                format!("phi3's RoPE scaling type {other:?} is not one the converter supports (longrope, su, yarn)"),
            ))
        }
    };
    let short = factors("short_factor")?.ok_or_else(|| {
        config_error(
            &config.file,
            "rope_scaling has a long_factor but no short_factor".into(),
        )
    })?;
    if long.len() != short.len() || long.len() as u64 * 2 != rope_dims {
        return Err(config_error(
            &config.file,
            format!(
                "the RoPE long and short factors must have {} values each (half of {rope_dims} rotary dimensions); they have {} and {}",
                rope_dims as f64 / 2.0,
                long.len(),
                short.len()
            ),
        ));
    }
    Ok(Some(LongRope {
        attn_factor: attn_factor as f32,
        long,
        short,
    }))
}
