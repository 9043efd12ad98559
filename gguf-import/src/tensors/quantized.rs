//! Checkpoints published quantized: FP8 weights paired with their block
//! scales, gpt-oss's MXFP4 experts planned as repacked blocks; any other
//! quantization method refused.

use crate::error::Result;
use gguf_core::GgmlType;

use crate::arch::{Architecture, Mapped};
use crate::checkpoint::{BlockScale, SourceTensor, SourceType};
use crate::config::{config_error, Config};

use super::names::map_source;
use super::piece::{tensor_error, Mxfp4Rows, Origin, Planned};

/// The `quantization_config.quant_method` of the checkpoint, if any.
pub(crate) fn quant_method(config: &Config) -> Option<&str> {
    config
        .hparams
        .get("quantization_config")
        .and_then(|q| q.get("quant_method"))
        .and_then(serde_json::Value::as_str)
}

/// Pairs the weights of an FP8 checkpoint (`quant_method` `fp8`) with
/// their block scales (`<weight>_scale_inv`, or Mistral's
/// `qscale_weight`), which leave the list, as do the activation scales
/// the converter drops; refuses a quantization method the import does not
/// read (as the converter refuses it). gpt-oss's `mxfp4` is read by
/// [`mxfp4`].
pub(crate) fn pair_quantized<'a>(
    arch: &Architecture,
    config: &Config,
    sources: Vec<SourceTensor<'a>>,
) -> Result<Vec<SourceTensor<'a>>> {
    match quant_method(config) {
        None => return Ok(sources),
        Some("fp8") => {}
        Some("mxfp4") if arch.mxfp4 => return Ok(sources),
        Some(other) => {
            return Err(config_error(
                &config.file,
                format!(
                    "quantization_config.quant_method {other:?}: checkpoints quantized this way are not imported (fp8 is{})",
                    if arch.mxfp4 { ", and mxfp4" } else { "" }
                ),
            ))
        }
    }
    let block = match config
        .hparams
        .get("quantization_config")
        .and_then(|q| q.get("weight_block_size"))
    {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => match v
            .as_array()
            .map(|a| a.iter().map(serde_json::Value::as_u64).collect::<Vec<_>>())
            .as_deref()
        {
            Some([Some(r), Some(c)]) if *r > 0 && *c > 0 => Some((*r, *c)),
            _ => {
                return Err(config_error(
                    &config.file,
                    format!("quantization_config.weight_block_size is {v}, not two block sizes"),
                ))
            }
        },
    };
    let weight_of = |name: &str| -> Option<String> {
        if let Some(w) = name.strip_suffix("_scale_inv") {
            Some(w.to_owned())
        } else {
            name.strip_suffix("qscale_weight")
                .map(|w| format!("{w}weight"))
        }
    };
    let mut scales: std::collections::HashMap<String, SourceTensor<'a>> = Default::default();
    let mut kept = Vec::with_capacity(sources.len());
    for source in sources {
        if let Some(weight) = weight_of(&source.name) {
            scales.insert(weight, source);
        } else if !(source.name.ends_with(".activation_scale")
            || source.name.ends_with("_activation_scale")
            || source.name.ends_with(".qscale_act"))
        {
            kept.push(source);
        }
    }
    for source in &mut kept {
        let Some(scale) = scales.remove(&source.name) else {
            continue;
        };
        if !matches!(
            scale.dtype,
            SourceType::F32 | SourceType::BF16 | SourceType::F16
        ) {
            return Err(tensor_error(
                &scale,
                "a block scale must be F32, BF16 or F16".into(),
            ));
        }
        let [rows, cols] = source.shape[..] else {
            return Err(tensor_error(
                source,
                format!(
                    "shape {:?}: only matrices are read with block scales",
                    source.shape
                ),
            ));
        };
        let n: u64 = scale.shape.iter().product();
        let block = match block {
            Some((br, bc)) => {
                let want = [rows.div_ceil(br), cols.div_ceil(bc)];
                if scale.shape[..] != want {
                    return Err(tensor_error(
                        &scale,
                        format!(
                            "shape {:?}: blocks of {br} x {cols} need [{}, {}] scales for a weight of shape {:?}",
                            scale.shape, want[0], want[1], source.shape
                        ),
                    ));
                }
                (br, bc)
            }
            None if n == 1 => (rows, cols),
            None if n == rows && scale.shape.iter().filter(|&&d| d != 1).count() <= 1 => (1, cols),
            None => {
                return Err(tensor_error(
                    &scale,
                    format!(
                        "shape {:?}: without weight_block_size, one scale per tensor or per row",
                        scale.shape
                    ),
                ))
            }
        };
        source.scale = Some(Box::new(BlockScale {
            scales: scale,
            block,
        }));
    }
    if let Some((weight, scale)) = scales.into_iter().next() {
        return Err(tensor_error(
            &scale,
            format!("a block scale of {weight:?}, which the checkpoint does not have"),
        ));
    }
    Ok(kept)
}

/// gpt-oss's MXFP4 experts (`quant_method` `mxfp4`): the stacked
/// `*_blocks` and `*_scales` byte tensors leave the list and become the
/// MXFP4 tensors the converter writes first (its
/// `generate_extra_tensors`), in the order of their scales, the fused
/// gate-up projection's even rows as the gate and odd rows as the up.
pub(crate) fn mxfp4<'a>(
    arch: &Architecture,
    config: &Config,
    sources: Vec<SourceTensor<'a>>,
) -> Result<(Vec<Planned<'a>>, Vec<SourceTensor<'a>>)> {
    if !arch.mxfp4 || quant_method(config) != Some("mxfp4") {
        return Ok((Vec::new(), sources));
    }
    let blocks_count = arch.block_count(config)?;
    let mut blocks: std::collections::HashMap<String, SourceTensor<'a>> = Default::default();
    let mut scales = Vec::new();
    let mut kept = Vec::with_capacity(sources.len());
    for source in sources {
        if let Some(stem) = source.name.strip_suffix("_blocks") {
            blocks.insert(stem.to_owned(), source);
        } else if source.name.ends_with("_scales") {
            scales.push(source);
        } else {
            kept.push(source);
        }
    }
    let mut planned = Vec::new();
    for scale in scales {
        let stem = scale
            .name
            .strip_suffix("_scales")
            .unwrap_or(&scale.name)
            .to_owned();
        let Some(block) = blocks.remove(&stem) else {
            return Err(tensor_error(
                &scale,
                format!("MXFP4 scales without their blocks {stem}_blocks"),
            ));
        };
        let [experts, rows, nb, 16] = block.shape[..] else {
            return Err(tensor_error(
                &block,
                format!(
                    "shape {:?}: MXFP4 blocks are [experts, rows, blocks, 16] bytes",
                    block.shape
                ),
            ));
        };
        let mut probe = scale.clone();
        probe.name = format!("{stem}.weight");
        let parts: Vec<(String, u64, u64, u64)> = match map_source(arch, &probe, blocks_count)? {
            Some((Mapped::Plain(gguf, b, _), _)) => vec![(
                format!("{}.weight", Mapped::plain_name(gguf, b)),
                0,
                1,
                rows,
            )],
            Some((Mapped::Split { block: b, rule }, _))
                if rule.parts.len() == 2 && rows % 2 == 0 =>
            {
                rule.parts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (format!("blk.{b}.{p}.weight"), i as u64, 2, rows / 2))
                    .collect()
            }
            _ => {
                return Err(tensor_error(
                    &scale,
                    "MXFP4 tensors of a name the converter does not repack".into(),
                ))
            }
        };
        for (name, first, step, n) in parts {
            planned.push(Planned {
                name,
                shape: vec![nb * 32, n, experts],
                ty: GgmlType::MXFP4,
                permute_heads: None,
                add_one: false,
                neg_exp: false,
                origin: Origin::Mxfp4(Box::new(Mxfp4Rows {
                    blocks: block.clone(),
                    scales: scale.clone(),
                    first,
                    step,
                    rows: n,
                })),
            });
        }
    }
    if let Some((stem, block)) = blocks.into_iter().next() {
        return Err(tensor_error(
            &block,
            format!("MXFP4 blocks without their scales {stem}_scales"),
        ));
    }
    Ok((planned, kept))
}
