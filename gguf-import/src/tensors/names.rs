//! Checkpoint names as the converter sees them: its `filter_tensors`
//! renames and drops, the architecture's table, and Qwen3-Next's
//! multi-token-prediction names.

use crate::error::Result;

use crate::arch::{Architecture, Mapped, Mtp};
use crate::checkpoint::SourceTensor;
use crate::config::Config;

use super::piece::tensor_error;

/// The names the converter's `filter_tensors` drops: the multimodal parts
/// of a checkpoint (a text model is converted alone).
fn multimodal(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "mlp",
        "vit.",
        "vpm.",
        "siglip2.",
        "conformer.",
        "merger.",
        "resampler.",
        "sound_encoder.",
        "sound_projection.",
        "speech_embeddings.",
    ];
    const PARTS: &[&str] = &[
        "visual.",
        "vision.",
        "audio.",
        "talker.",
        "vision_",
        "audio_",
        "token2wav.",
        "code2wav.",
        "projector.",
        "pre_mm_projector_norm",
        "image_newline",
        "view_seperator",
        "patch_embed",
        "patch_embedding",
        "patch_merger.",
        "patch_merge_mlp.",
        "model.connector.",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || PARTS.iter().any(|p| name.contains(p))
}

/// The name the converter maps: multimodal tensors dropped,
/// `language_model.` and (llama) `text_model.` removed, the tensors it
/// never writes skipped.
pub(crate) fn converter_name(arch: &Architecture, name: &str) -> Option<String> {
    let mut name = name.to_owned();
    if let Some((from, to)) = arch.renames.iter().find(|(from, _)| name.ends_with(from)) {
        name.truncate(name.len() - from.len());
        name.push_str(to);
    }
    if arch.gguf == "llama" && name.contains("text_model.") {
        name = name.replace("text_model.", "");
    }
    if multimodal(&name) {
        return None;
    }
    if name.ends_with("e_score_correction_bias") {
        name = name.replace("e_score_correction_bias", "e_score_correction.bias");
    }
    if name.contains("language_model.") {
        name = name.replace("language_model.", "");
    }
    if name.ends_with(".attention.masked_bias")
        || name.ends_with(".attention.bias")
        || name.ends_with(".rotary_emb.inv_freq")
    {
        return None;
    }
    Some(name)
}

/// The config keys of the block count, in the converter's order.
pub(super) const BLOCK_COUNT: &[&str] = &["n_layers", "num_hidden_layers", "n_layer", "num_layers"];

/// What the converter makes of `source` (see [`Mapped`]) and the suffix
/// of its name (`.weight`, `.bias` or none), `None` for a tensor it drops;
/// an error for one it cannot map (a block at or past `blocks` included).
pub(crate) fn map_source(
    arch: &Architecture,
    source: &SourceTensor<'_>,
    blocks: u32,
) -> Result<Option<(Mapped, &'static str)>> {
    let Some(name) = converter_name(arch, &source.name) else {
        return Ok(None);
    };
    let (stem, suffix) = if let Some(s) = name.strip_suffix(".weight") {
        (s, ".weight")
    } else if let Some(s) = name.strip_suffix(".bias") {
        (s, ".bias")
    } else {
        (name.as_str(), "")
    };
    match arch.map(stem, blocks) {
        Some(Mapped::Skipped) => Ok(None),
        Some(m) => Ok(Some((m, suffix))),
        None => Err(tensor_error(
            source,
            format!(
                "no GGUF name for it in the {} table (the converter cannot map it either)",
                arch.gguf
            ),
        )),
    }
}

/// The GGUF name of a tensor converted alone, `None` for an expert's or
/// a cut one.
pub(super) fn plain_name(
    arch: &Architecture,
    source: &SourceTensor<'_>,
    blocks: u32,
) -> Result<Option<String>> {
    Ok(match map_source(arch, source, blocks)? {
        Some((Mapped::Plain(gguf, block, _), suffix)) => {
            Some(format!("{}{suffix}", Mapped::plain_name(gguf, block)))
        }
        _ => None,
    })
}

/// Qwen3-Next's multi-token-prediction tensors renamed as the converter's
/// `filter_tensors` renames them ([`Mtp::Renamed`]): `mtp.layers.{i}.*`
/// becomes `model.layers.{n + i}.*` for `n` = `num_hidden_layers`, and
/// `mtp.fc`, `mtp.pre_fc_norm_embedding`, `mtp.pre_fc_norm_hidden`,
/// `mtp.norm` become block `n`'s `eh_proj`, `enorm`, `hnorm`,
/// `shared_head.norm`. Returns the number of MTP layers found.
pub(crate) fn rename_mtp(
    arch: &Architecture,
    config: &Config,
    sources: &mut [SourceTensor<'_>],
) -> Result<u32> {
    if !matches!(arch.mtp, Mtp::Renamed { .. }) {
        return Ok(0);
    }
    let layers = config.require_u32(BLOCK_COUNT)?;
    let mut found = 0u32;
    for source in sources.iter_mut() {
        let name = source.name.strip_prefix("model.").unwrap_or(&source.name);
        let Some(rest) = name.strip_prefix("mtp.") else {
            continue;
        };
        let renamed = if let Some(layer) = rest.strip_prefix("layers.") {
            let (digits, tail) = layer.split_once('.').unwrap_or((layer, ""));
            match digits.parse::<u32>() {
                Ok(i) if i.to_string() == digits => {
                    found = found.max(i.saturating_add(1));
                    format!("model.layers.{}.{tail}", u64::from(layers) + u64::from(i))
                }
                _ => continue,
            }
        } else {
            let (part, tail) = rest.split_once('.').unwrap_or((rest, ""));
            let to = match part {
                "fc" => "eh_proj",
                "pre_fc_norm_embedding" => "enorm",
                "pre_fc_norm_hidden" => "hnorm",
                "norm" => "shared_head.norm",
                _ => continue,
            };
            format!("model.layers.{layers}.{to}.{tail}")
        };
        source.name = renamed;
    }
    Ok(found)
}
