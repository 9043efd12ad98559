//! The output tensors: which checkpoint tensors become which GGUF tensors,
//! with which type and shape (the converter's `prepare_tensors`), and
//! their conversion, a slab of rows at a time, while the file is written.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Write;

use crate::error::{Error, ImportError, Result};
use gguf_core::codec;
use gguf_core::GgmlType;

use super::arch::{Architecture, Cut, Mapped, Mtp, SplitRule, Transform};
use super::checkpoint::{BlockScale, SourceTensor, SourceType};
use super::config::{config_error, Config};
use super::OutType;

/// A tensor of the output and where it comes from.
#[derive(Clone, Debug)]
pub(crate) struct Planned<'a> {
    /// Where its values come from.
    pub origin: Origin<'a>,
    /// The GGUF name.
    pub name: String,
    /// The output shape in ggml order (innermost first).
    pub shape: Vec<u64>,
    /// The output type.
    pub ty: GgmlType,
    /// llama's Q/K permutation: the head count to permute by.
    pub permute_heads: Option<u64>,
    /// Gemma's norm shift.
    pub add_one: bool,
    /// Qwen3-Next's `-exp(x)`.
    pub neg_exp: bool,
}

/// Where an output tensor's values come from.
#[derive(Clone, Debug)]
pub(crate) enum Origin<'a> {
    /// Rows of checkpoint tensors, one after the other: one piece for a
    /// tensor converted alone, one per expert for a stacked tensor, a
    /// range of rows per expert for a part of a cut one.
    Checkpoint(Vec<Piece<'a>>),
    /// Values the converter computes (Llama 3's RoPE factors), F32.
    Generated(Vec<f32>),
    /// gpt-oss's MXFP4 experts, repacked into ggml's blocks.
    Mxfp4(Box<Mxfp4Rows<'a>>),
}

/// Rows `first, first + step, ...` (`rows` of them) of every expert of
/// gpt-oss's MXFP4 blocks and scales.
#[derive(Clone, Debug)]
pub(crate) struct Mxfp4Rows<'a> {
    /// `[experts, rows, blocks, 16]` bytes of packed values.
    blocks: SourceTensor<'a>,
    /// `[experts, rows, blocks]` shared exponents.
    scales: SourceTensor<'a>,
    first: u64,
    step: u64,
    rows: u64,
}

/// Rows of values taken from a checkpoint tensor, seen as a flat run of
/// elements: row `i`, value `k` is element `start + i * row_step + k *
/// col_step`. A contiguous piece (`col_step` 1, `row_step` = `len`) is a
/// range of the tensor's rows, where a row is its last dimension (one
/// value of a 1-D tensor); other steps take every other row or transpose.
#[derive(Clone, Debug)]
pub(crate) struct Piece<'a> {
    /// The checkpoint tensor.
    pub source: SourceTensor<'a>,
    /// The element of row 0, value 0.
    pub start: u64,
    /// How many rows.
    pub rows: u64,
    /// Elements from one row to the next.
    pub row_step: u64,
    /// Values per row.
    pub len: u64,
    /// Elements from one value of a row to the next.
    pub col_step: u64,
}

/// Values per row of `shape` (see [`Piece`]).
fn row_len(shape: &[u64]) -> u64 {
    if shape.len() >= 2 {
        shape.last().copied().unwrap_or(1)
    } else {
        1
    }
}

/// Rows of `shape` (see [`Piece`]).
fn row_count(shape: &[u64]) -> u64 {
    shape
        .iter()
        .product::<u64>()
        .checked_div(row_len(shape))
        .unwrap_or(0)
}

impl<'a> Piece<'a> {
    /// Rows `first..first + rows` of `source`.
    pub(crate) fn rows(source: SourceTensor<'a>, first: u64, rows: u64) -> Piece<'a> {
        let len = row_len(&source.shape);
        Piece {
            source,
            start: first * len,
            rows,
            row_step: len,
            len,
            col_step: 1,
        }
    }

    /// The whole of `source`.
    pub(crate) fn whole(source: SourceTensor<'a>) -> Piece<'a> {
        let rows = row_count(&source.shape);
        Piece::rows(source, 0, rows)
    }

    /// Whether the piece's last element lies inside its tensor of
    /// `elements` values.
    fn fits(&self, elements: u64) -> bool {
        if self.rows == 0 || self.len == 0 {
            return true;
        }
        let last = (self.rows - 1)
            .checked_mul(self.row_step)
            .zip((self.len - 1).checked_mul(self.col_step))
            .and_then(|(r, c)| r.checked_add(c))
            .and_then(|rc| rc.checked_add(self.start));
        last.is_some_and(|l| l < elements)
    }
}

/// A generated 1-D F32 tensor, placed before the checkpoint's tensors as
/// the converter's `generate_extra_tensors` places it.
pub(crate) fn generated(name: &str, values: Vec<f32>) -> Planned<'static> {
    Planned {
        name: name.to_owned(),
        shape: vec![values.len() as u64],
        ty: GgmlType::F32,
        permute_heads: None,
        add_one: false,
        neg_exp: false,
        origin: Origin::Generated(values),
    }
}

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

pub(crate) fn tensor_error(t: &SourceTensor<'_>, reason: String) -> Error {
    Error::Import(ImportError::Tensor {
        file: t.file.to_owned(),
        tensor: t.name.clone(),
        reason,
    })
}

/// The config keys of the block count, in the converter's order.
const BLOCK_COUNT: &[&str] = &["n_layers", "num_hidden_layers", "n_layer", "num_layers"];

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
fn plain_name(
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

/// The first of `keys` that `config` sets, to name in an error.
fn key_of<'k>(config: &Config, keys: &[&'k str]) -> &'k str {
    keys.iter()
        .copied()
        .find(|k| config.hparams.get(*k).is_some_and(|v| !v.is_null()))
        .unwrap_or(keys[0])
}

/// `config.json`'s value for `key` as the tokenizer part reads it
/// (`text_config`'s over the top level's, without `transformers`'
/// defaults).
fn raw_u64(config: &Config, key: &str) -> Option<u64> {
    let text = config.raw.get("text_config").and_then(|t| t.get(key));
    text.filter(|v| !v.is_null())
        .or_else(|| config.raw.get(key).filter(|v| !v.is_null()))
        .and_then(serde_json::Value::as_u64)
}

/// Layer numbers as ranges (`0-3, 5`), at most a few of them.
fn ranges(layers: &BTreeSet<u32>) -> String {
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for &n in layers {
        match spans.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(n) => *end = n,
            _ => spans.push((n, n)),
        }
    }
    const SHOWN: usize = 8;
    let mut parts: Vec<String> = spans
        .iter()
        .take(SHOWN)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if spans.len() > SHOWN {
        parts.push("...".into());
    }
    parts.join(", ")
}

/// Checks the hyper-parameters that size what the import computes or
/// builds before it reaches the tensors (the block count, Llama 3's RoPE
/// factors from the head dimension, the tokenizer's padding to
/// `vocab_size`) against the checkpoint's tensors, so that a value far
/// beyond them is refused by name instead of being computed with: every
/// block below the block count has tensors (llama.cpp's loader would stop
/// at the first missing one; the converter writes the count it is given),
/// the token embedding is there and not empty, `hidden_size` is its width,
/// `vocab_size` is not above its rows, and the heads times the head
/// dimension are the rows of every attention query weight. The shapes are
/// checked whole later ([`plan`]).
pub(crate) fn check_hparams(
    arch: &Architecture,
    config: &Config,
    sources: &[SourceTensor<'_>],
) -> Result<()> {
    let file = &config.file;
    let blocks = config.require_u32(BLOCK_COUNT)?;
    let gguf_blocks = arch.block_count(config)?;
    let mut layers = BTreeSet::new();
    let mut embedding = None;
    let mut queries = Vec::new();
    for source in sources {
        let Some(name) = plain_name(arch, source, gguf_blocks)? else {
            if let Some((Mapped::Expert { block, .. } | Mapped::Split { block, .. }, _)) =
                map_source(arch, source, gguf_blocks)?
            {
                layers.insert(block);
            }
            continue;
        };
        if name == "token_embd.weight" {
            embedding = Some(source);
        }
        let block = name
            .strip_prefix("blk.")
            .and_then(|rest| rest.split_once('.'))
            .and_then(|(n, local)| Some((n.parse::<u32>().ok()?, local)));
        if let Some((n, local)) = block {
            layers.insert(n);
            if local == "attn_q.weight" {
                queries.push(source);
            }
        }
    }
    if (layers.range(..blocks).count() as u64) < u64::from(blocks) {
        let found = if layers.is_empty() {
            "no block tensors".to_owned()
        } else {
            format!("tensors of {} block(s): {}", layers.len(), ranges(&layers))
        };
        return Err(config_error(
            file,
            format!(
                "{:?} is {blocks}, but the checkpoint has {found} (llama.cpp cannot load a \
                 model with a block missing)",
                key_of(config, BLOCK_COUNT)
            ),
        ));
    }

    let embd_name = arch
        .globals
        .iter()
        .find(|r| r.gguf == "token_embd")
        .map_or("the token embedding", |r| r.hf);
    let Some(embd) = embedding else {
        return Err(config_error(
            file,
            format!(
                "the checkpoint has no token embedding ({embd_name}.weight), which llama.cpp \
                 needs and vocab_size and hidden_size are checked against"
            ),
        ));
    };
    let (rows, width) = match embd.shape[..] {
        [rows, width] if rows > 0 && width > 0 => (rows, width),
        _ => {
            return Err(tensor_error(
                embd,
                format!(
                    "shape {:?}: a token embedding is a matrix of one row per token",
                    embd.shape
                ),
            ))
        }
    };
    let embd_desc = format!(
        "the token embedding {:?} ({}) of shape {:?}",
        embd.name,
        embd.file.display(),
        embd.shape
    );
    let hidden_keys = ["hidden_size", "n_embd", "dim"];
    if let Some(hidden) = config.find_u32(&hidden_keys)?
        && u64::from(hidden) != width
    {
        return Err(config_error(
            file,
            format!(
                "{:?} is {hidden}, but {embd_desc} is {width} wide",
                key_of(config, &hidden_keys)
            ),
        ));
    }
    // The tokenizer part pads the vocabulary to these counts.
    for key in ["vocab_size", "vocab_size_per_layer_input"] {
        if let Some(n) = raw_u64(config, key).filter(|&n| n > rows) {
            return Err(config_error(
                file,
                format!(
                    "{key:?} is {n}, but {embd_desc} has {rows} rows (one per token): tokens \
                     past them would have no embedding"
                ),
            ));
        }
    }

    let heads = config.find_u32(&["num_attention_heads"])?;
    let (head_dim, how) = match config.find_u32(&["head_dim"])? {
        Some(d) => (Some(u64::from(d)), format!("\"head_dim\" is {d}")),
        None => match (config.find_u32(&hidden_keys)?, heads) {
            (Some(h), Some(n)) if n > 0 => (
                Some(u64::from(h / n)),
                format!(
                    "the head dimension is {} (hidden_size {h} / num_attention_heads {n})",
                    h / n
                ),
            ),
            _ => (None, String::new()),
        },
    };
    let (Some(heads), Some(head_dim)) = (heads, head_dim) else {
        return Ok(());
    };
    if arch.splits.iter().any(|s| s.cut == Cut::MlaKvB) {
        // Latent attention: the queries are not heads x head_dim rows.
        return Ok(());
    }
    // A gated query (Qwen3-Next) holds a gate row for every query row.
    let gate = if arch.gated_query { 2 } else { 1 };
    let want = u64::from(heads) * head_dim * gate;
    // The width too: a query of no columns could claim any row count.
    if let Some(q) = queries.iter().find(|q| q.shape[..] != [want, width]) {
        return Err(config_error(
            file,
            format!(
                "{how} and \"num_attention_heads\" {heads}: a query weight of shape \
                 [{want}, {width}], but {:?} ({}) has shape {:?}",
                q.name,
                q.file.display(),
                q.shape
            ),
        ));
    }
    if queries.is_empty() && arch.blocks.iter().any(|r| r.gguf == "attn_q") {
        return Err(config_error(
            file,
            format!(
                "{how}, but the checkpoint has no attention query weight to check it against \
                 (llama.cpp needs one in every block)"
            ),
        ));
    }
    Ok(())
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

/// The output tensors, in the converter's order. `vocab_rows` is the
/// token count the embedding rows are cut to (gemma3), when known.
///
/// The experts of a block are stacked as the converter stacks them: it
/// keeps each until it has read every expert tensor of the block, then
/// writes the stacked tensors, one per rule in the table's order, where
/// the last of them was read.
pub(crate) fn plan<'a>(
    arch: &Architecture,
    config: &Config,
    sources: Vec<SourceTensor<'a>>,
    out: OutType,
    vocab_rows: Option<u64>,
    taken: &[&str],
) -> Result<Vec<Planned<'a>>> {
    let blocks = arch.block_count(config)?;
    let mut planned: Vec<Planned<'a>> = Vec::with_capacity(sources.len());
    let mut names: HashSet<String> = taken.iter().map(|&t| t.to_owned()).collect();
    let n_experts = if arch.experts.is_empty() {
        0
    } else {
        config
            .require_u32(&["num_local_experts", "num_experts", "n_routed_experts"])
            .map(u64::from)?
    };
    // Per block: (rule, expert) -> the expert's tensor and its suffix.
    let mut pending: BTreeMap<u32, BTreeMap<(usize, u64), SourceTensor<'a>>> = BTreeMap::new();
    let mut push = |p: Planned<'a>, source: &SourceTensor<'_>, planned: &mut Vec<Planned<'a>>| {
        if !names.insert(p.name.clone()) {
            return Err(tensor_error(
                source,
                format!("maps to {:?}, which another tensor already became", p.name),
            ));
        }
        planned.push(p);
        Ok(())
    };
    for source in sources {
        let Some((mapped, suffix)) = map_source(arch, &source, blocks)? else {
            continue;
        };
        if source.dtype == SourceType::U8 {
            return Err(tensor_error(
                &source,
                "raw bytes (U8): only the MXFP4 blocks and scales of a checkpoint whose config says quant_method mxfp4 are read as such".into(),
            ));
        }
        match mapped {
            Mapped::Skipped => {}
            Mapped::Plain(gguf, block, transforms) => {
                let name = format!("{}{suffix}", Mapped::plain_name(gguf, block));
                let p = plain(
                    arch,
                    config,
                    source.clone(),
                    name,
                    transforms,
                    out,
                    vocab_rows,
                )?;
                push(p, &source, &mut planned)?;
            }
            Mapped::Split { block, rule } => {
                for p in split(config, &source, block, rule, suffix, out)? {
                    push(p, &source, &mut planned)?;
                }
            }
            Mapped::Expert {
                block,
                expert,
                rule,
            } => {
                if expert >= n_experts || suffix != ".weight" {
                    return Err(tensor_error(
                        &source,
                        format!(
                            "an expert tensor the converter cannot stack (config.json has {n_experts} experts, numbered from 0, each a .weight)"
                        ),
                    ));
                }
                let group = pending.entry(block).or_default();
                if group.insert((rule, expert), source.clone()).is_some() {
                    return Err(tensor_error(
                        &source,
                        "this expert's tensor appears twice".into(),
                    ));
                }
                if group.len() as u64 == n_experts * arch.experts.len() as u64 {
                    let group = pending.remove(&block).unwrap_or_default();
                    for p in stack(arch, block, group, out)? {
                        push(p, &source, &mut planned)?;
                    }
                }
            }
        }
    }
    if let Some((block, group)) = pending.into_iter().next() {
        let missing: Vec<String> = arch
            .experts
            .iter()
            .enumerate()
            .flat_map(|(i, r)| (0..n_experts).map(move |x| (i, x, r)))
            .filter(|(i, x, _)| !group.contains_key(&(*i, *x)))
            .take(4)
            .map(|(_, x, r)| format!("model.layers.{block}.{}{x}{}.weight", r.prefix, r.suffix))
            .collect();
        return Err(config_error(
            &config.file,
            format!(
                "block {block} lacks expert tensors the converter stacks (config.json has {n_experts} experts): {}",
                missing.join(", ")
            ),
        ));
    }
    Ok(planned)
}

/// The converter's choice of output type for a tensor of `np_shape` named
/// `name`: F32 for 1-D tensors, norms, biases and the routers
/// (`prepare_tensors`' list of tensors always kept F32), else `out`'s
/// type, F16 for Q8_0 when a row is not whole blocks.
pub(crate) fn output_type(name: &str, np_shape: &[u64], out: OutType) -> GgmlType {
    const ALWAYS_F32: &[&str] = &[
        ".ffn_gate_inp.weight",
        ".ffn_gate_inp_shexp.weight",
        ".ssm_conv1d.weight",
    ];
    let weight = [".weight", ".lora_a", ".lora_b"]
        .iter()
        .any(|s| name.ends_with(s));
    if np_shape.len() <= 1
        || name.ends_with("_norm.weight")
        || !weight
        || ALWAYS_F32.iter().any(|s| name.ends_with(s))
    {
        return GgmlType::F32;
    }
    let ty = out.ggml_type();
    if ty == GgmlType::Q8_0 && np_shape.last().copied().unwrap_or(1) % 32 != 0 {
        // The converter's fallback when a row is not whole blocks.
        return GgmlType::F16;
    }
    ty
}

/// A tensor converted alone, with its transforms.
fn plain<'a>(
    arch: &Architecture,
    config: &Config,
    source: SourceTensor<'a>,
    name: String,
    transforms: &[Transform],
    out: OutType,
    vocab_rows: Option<u64>,
) -> Result<Planned<'a>> {
    let mut np_shape = source.shape.clone();
    let mut permute_heads = None;
    let mut add_one = false;
    let mut neg_exp = false;
    let mut transpose = false;
    for t in transforms {
        match t {
            Transform::Permute { heads } => {
                let n = config.find_u32(heads)?.ok_or_else(|| {
                    tensor_error(
                        &source,
                        format!("needs {heads:?} in config.json to permute"),
                    )
                })? as u64;
                let outer = np_shape.first().copied().unwrap_or(0);
                if n == 0 || np_shape.is_empty() || np_shape.len() > 2 || outer % (2 * n) != 0 {
                    return Err(tensor_error(
                        &source,
                        format!(
                            "shape {:?}: {outer} rows do not split into {n} heads of row pairs",
                            source.shape
                        ),
                    ));
                }
                permute_heads = Some(n);
            }
            Transform::AddOne => add_one = true,
            Transform::NegExp => neg_exp = true,
            Transform::Squeeze => np_shape.retain(|&d| d != 1),
            Transform::Transpose3d => {
                if let [_, a, b] = np_shape[..] {
                    np_shape[1] = b;
                    np_shape[2] = a;
                    transpose = true;
                }
            }
            Transform::TrimToVocab => {
                if let (Some(v), Some(first)) = (vocab_rows, np_shape.first_mut())
                    && v < *first
                {
                    *first = v;
                }
            }
        }
    }
    check_shape(arch, config, &source, &name, &np_shape, vocab_rows)?;
    let ty = output_type(&name, &np_shape, out);
    let pieces = if let (true, [experts, b, a]) = (transpose, &np_shape[..]) {
        // Per expert, the [a, b] matrix read column by column.
        let (experts, b, a) = (*experts, *b, *a);
        (0..experts)
            .map(|e| Piece {
                source: source.clone(),
                start: e * a * b,
                rows: b,
                row_step: 1,
                len: a,
                col_step: b,
            })
            .collect()
    } else {
        let rows = row_count(&np_shape);
        vec![Piece::rows(source, 0, rows)]
    };
    Ok(Planned {
        shape: np_shape.iter().rev().copied().collect(),
        origin: Origin::Checkpoint(pieces),
        name,
        ty,
        permute_heads,
        add_one,
        neg_exp,
    })
}

/// The stacked tensors of one block's experts, one per rule, each of
/// shape `[experts, rows, columns]` (numpy order).
fn stack<'a>(
    arch: &Architecture,
    block: u32,
    group: BTreeMap<(usize, u64), SourceTensor<'a>>,
    out: OutType,
) -> Result<Vec<Planned<'a>>> {
    let mut by_rule: Vec<Vec<SourceTensor<'a>>> = vec![Vec::new(); arch.experts.len()];
    // BTreeMap order: by rule, then by expert number.
    for ((rule, _), source) in group {
        by_rule[rule].push(source);
    }
    let mut planned = Vec::with_capacity(by_rule.len());
    for (rule, experts) in arch.experts.iter().zip(by_rule) {
        let Some(first) = experts.first() else {
            continue;
        };
        let shape = first.shape.clone();
        if shape.len() != 2 {
            return Err(tensor_error(
                first,
                format!("shape {shape:?}: an expert's weight is a matrix"),
            ));
        }
        if let Some(other) = experts.iter().find(|e| e.shape != shape) {
            return Err(tensor_error(
                other,
                format!(
                    "shape {:?}, but {:?} has {shape:?}: the experts of a block stack only when their shapes are equal",
                    other.shape, first.name
                ),
            ));
        }
        let mut np_shape = vec![experts.len() as u64];
        np_shape.extend(&shape);
        let name = format!("blk.{block}.{}.weight", rule.gguf);
        planned.push(Planned {
            ty: output_type(&name, &np_shape, out),
            shape: np_shape.iter().rev().copied().collect(),
            name,
            origin: Origin::Checkpoint(experts.into_iter().map(Piece::whole).collect()),
            permute_heads: None,
            add_one: false,
            neg_exp: false,
        });
    }
    Ok(planned)
}

/// The parts of a tensor cut by `rule` (see [`Cut`]).
fn split<'a>(
    config: &Config,
    source: &SourceTensor<'a>,
    block: u32,
    rule: &SplitRule,
    suffix: &str,
    out: OutType,
) -> Result<Vec<Planned<'a>>> {
    let parts: Vec<(Vec<u64>, Vec<Piece<'a>>)> = match rule.cut {
        Cut::Rows => cut_rows(source, rule)?,
        Cut::MlaKvB => cut_kv_b(config, source)?,
        Cut::Interleaved => cut_interleaved(source)?,
        Cut::Qkvz => cut_qkvz(config, source)?,
    };
    Ok(parts
        .into_iter()
        .zip(rule.parts)
        .map(|((np_shape, pieces), part)| {
            let name = format!("blk.{block}.{part}{suffix}");
            Planned {
                ty: output_type(&name, &np_shape, out),
                shape: np_shape.iter().rev().copied().collect(),
                name,
                origin: Origin::Checkpoint(pieces),
                permute_heads: None,
                add_one: false,
                neg_exp: false,
            }
        })
        .collect())
}

/// [`Cut::Rows`]: each part's numpy shape and pieces.
#[allow(clippy::type_complexity)]
fn cut_rows<'a>(
    source: &SourceTensor<'a>,
    rule: &SplitRule,
) -> Result<Vec<(Vec<u64>, Vec<Piece<'a>>)>> {
    let shape = &source.shape;
    let n = rule.parts.len() as u64;
    let cut = match shape.len() {
        2 | 3 => shape[shape.len() - 2],
        _ => 0,
    };
    if cut == 0 || cut % n != 0 {
        return Err(tensor_error(
            source,
            format!(
                "shape {shape:?}: its rows do not cut into {n} equal parts ({})",
                rule.parts.join(", ")
            ),
        ));
    }
    let part_rows = cut / n;
    let outer = if shape.len() == 3 { shape[0] } else { 1 };
    Ok((0..n)
        .map(|i| {
            let mut np_shape = shape.clone();
            let at = np_shape.len() - 2;
            np_shape[at] = part_rows;
            let pieces = (0..outer)
                .map(|e| Piece::rows(source.clone(), e * cut + i * part_rows, part_rows))
                .collect();
            (np_shape, pieces)
        })
        .collect())
}

/// [`Cut::Interleaved`]: the even then the odd rows of a transposed
/// `[experts, in, 2 * out]` weight, or values of an `[experts, 2 * out]`
/// bias.
#[allow(clippy::type_complexity)]
fn cut_interleaved<'a>(source: &SourceTensor<'a>) -> Result<Vec<(Vec<u64>, Vec<Piece<'a>>)>> {
    let bad = || {
        tensor_error(
            source,
            format!(
                "shape {:?}: an [experts, in, 2 x out] weight or [experts, 2 x out] bias expected",
                source.shape
            ),
        )
    };
    match source.shape[..] {
        [experts, inner, outer2] if outer2 % 2 == 0 && outer2 > 0 && inner > 0 => {
            let out = outer2 / 2;
            Ok((0..2)
                .map(|i| {
                    let pieces = (0..experts)
                        .map(|e| Piece {
                            source: source.clone(),
                            start: e * inner * outer2 + i,
                            rows: out,
                            row_step: 2,
                            len: inner,
                            col_step: outer2,
                        })
                        .collect();
                    (vec![experts, out, inner], pieces)
                })
                .collect())
        }
        [experts, outer2] if outer2 % 2 == 0 && outer2 > 0 => {
            let out = outer2 / 2;
            Ok((0..2)
                .map(|i| {
                    let piece = Piece {
                        source: source.clone(),
                        start: i,
                        rows: experts,
                        row_step: outer2,
                        len: out,
                        col_step: 2,
                    };
                    (vec![experts, out], vec![piece])
                })
                .collect())
        }
        _ => Err(bad()),
    }
}

/// [`Cut::Qkvz`]: `attn_qkv` and `attn_gate` from Qwen3-Next's
/// `in_proj_qkvz`, whose rows hold, per key head, its q, k, v and z.
#[allow(clippy::type_complexity)]
fn cut_qkvz<'a>(
    config: &Config,
    source: &SourceTensor<'a>,
) -> Result<Vec<(Vec<u64>, Vec<Piece<'a>>)>> {
    let get = |k: &str| -> Result<u64> { Ok(u64::from(config.require_u32(&[k])?)) };
    let dk = get("linear_key_head_dim")?;
    let dv = get("linear_value_head_dim")?;
    let k_heads = get("linear_num_key_heads")?;
    let v_heads = get("linear_num_value_heads")?;
    let [rows, hidden] = source.shape[..] else {
        return Err(tensor_error(
            source,
            format!("shape {:?}: in_proj_qkvz is a matrix", source.shape),
        ));
    };
    if k_heads == 0 || v_heads % k_heads != 0 {
        return Err(config_error(
            &config.file,
            format!("linear_num_value_heads {v_heads} is not a multiple of linear_num_key_heads {k_heads}"),
        ));
    }
    let v = v_heads / k_heads * dv;
    let per_head = 2 * dk + 2 * v;
    if rows != k_heads * per_head {
        return Err(tensor_error(
            source,
            format!(
                "shape {:?}: {k_heads} key heads of q, k ({dk} rows each), v and z ({v} rows each) expected",
                source.shape
            ),
        ));
    }
    // (offset in a head's rows, rows) of q, k, v, z.
    let part = |offset: u64, n: u64| -> Vec<Piece<'a>> {
        (0..k_heads)
            .map(|h| Piece::rows(source.clone(), h * per_head + offset, n))
            .collect()
    };
    let mut qkv = part(0, dk);
    qkv.extend(part(dk, dk));
    qkv.extend(part(2 * dk, v));
    let z = part(2 * dk + v, v);
    Ok(vec![
        (vec![k_heads * (2 * dk + v), hidden], qkv),
        (vec![k_heads * v, hidden], z),
    ])
}

/// [`Cut::MlaKvB`]: `attn_k_b` (per head, the `qk_nope_head_dim` rows
/// transposed) and `attn_v_b` (the `v_head_dim` rows after them), with the
/// checkpoint's own `num_key_value_heads`.
#[allow(clippy::type_complexity)]
fn cut_kv_b<'a>(
    config: &Config,
    source: &SourceTensor<'a>,
) -> Result<Vec<(Vec<u64>, Vec<Piece<'a>>)>> {
    let get = |k: &str| -> Result<u64> { Ok(u64::from(config.require_u32(&[k])?)) };
    let heads = get("num_key_value_heads")?;
    let nope = get("qk_nope_head_dim")?;
    let v = get("v_head_dim")?;
    let per_head = nope + v;
    let [rows, lora] = source.shape[..] else {
        return Err(tensor_error(
            source,
            format!("shape {:?}: kv_b_proj is a matrix", source.shape),
        ));
    };
    if rows != heads * per_head || lora == 0 {
        return Err(tensor_error(
            source,
            format!(
                "shape {:?}: num_key_value_heads {heads} x (qk_nope_head_dim {nope} + v_head_dim {v}) rows expected",
                source.shape
            ),
        ));
    }
    let k_b = (0..heads)
        .map(|h| Piece {
            source: source.clone(),
            start: h * per_head * lora,
            rows: lora,
            row_step: 1,
            len: nope,
            col_step: lora,
        })
        .collect();
    let v_b = (0..heads)
        .map(|h| Piece::rows(source.clone(), h * per_head + nope, v))
        .collect();
    Ok(vec![
        (vec![heads, lora, nope], k_b),
        (vec![heads, v, lora], v_b),
    ])
}

/// The shape the architecture's config implies for a tensor, checked when
/// there is one (numpy order: outermost first). The converter checks none
/// and writes a file llama.cpp then refuses; an error naming the tensor is
/// more use.
fn check_shape(
    arch: &Architecture,
    config: &Config,
    source: &SourceTensor<'_>,
    name: &str,
    np_shape: &[u64],
    vocab_rows: Option<u64>,
) -> Result<()> {
    let get = |k: &[&str]| -> Result<Option<u64>> { Ok(config.find_u32(k)?.map(u64::from)) };
    let hidden = get(&["hidden_size", "n_embd", "dim"])?;
    let ff = get(&["intermediate_size"])?;
    let heads = get(&["num_attention_heads"])?;
    let kv_heads = get(&["num_key_value_heads"])?.or(heads);
    let head_dim = match get(&["head_dim"])? {
        Some(d) => Some(d),
        None => match (hidden, heads) {
            (Some(h), Some(n)) if n > 0 => Some(h / n),
            _ => None,
        },
    };
    let vocab = get(&["vocab_size"])?;
    let mul = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a * b);
    let mla = arch.splits.iter().any(|s| s.cut == Cut::MlaKvB);
    let local = name.split_once('.').map_or(name, |(first, rest)| {
        if first == "blk" {
            rest.split_once('.').map_or(rest, |(_, r)| r)
        } else {
            name
        }
    });
    let embd_rows = if arch.gguf == "gemma3" {
        vocab_rows.map_or(vocab, |v| vocab.map(|n| n.min(v)))
    } else {
        vocab
    };
    let expected: Option<Vec<Option<u64>>> = match local {
        "token_embd.weight" => Some(vec![embd_rows, hidden]),
        "output.weight" => Some(vec![vocab, hidden]),
        "output_norm.weight"
        | "attn_norm.weight"
        | "ffn_norm.weight"
        | "post_attention_norm.weight"
        | "post_ffw_norm.weight" => Some(vec![hidden]),
        // Per head (Qwen3, Gemma 3) or over all heads (OLMo 2).
        "attn_q_norm.weight" if np_shape != [mul(heads, head_dim).unwrap_or(0)] => {
            Some(vec![head_dim])
        }
        "attn_k_norm.weight" if np_shape != [mul(kv_heads, head_dim).unwrap_or(0)] => {
            Some(vec![head_dim])
        }
        "attn_q.weight" if mla => None,
        "attn_q.weight" if arch.gated_query => {
            Some(vec![mul(heads, head_dim).map(|n| 2 * n), hidden])
        }
        "attn_q.weight" => Some(vec![mul(heads, head_dim), hidden]),
        "attn_k.weight" | "attn_v.weight" => Some(vec![mul(kv_heads, head_dim), hidden]),
        // Latent attention's output reads heads x v_head_dim values.
        "attn_output.weight" if mla => Some(vec![hidden, mul(heads, get(&["v_head_dim"])?)]),
        "attn_output.weight" => Some(vec![hidden, mul(heads, head_dim)]),
        "attn_q.bias" => Some(vec![mul(heads, head_dim)]),
        "attn_k.bias" | "attn_v.bias" => Some(vec![mul(kv_heads, head_dim)]),
        // phi3 keeps the gate and up projections fused in ffn_up.
        "ffn_up.weight" if arch.blocks.iter().any(|r| r.hf == "mlp.gate_up_proj") => {
            Some(vec![ff.map(|f| 2 * f), hidden])
        }
        "ffn_gate.weight" | "ffn_up.weight" => Some(vec![ff, hidden]),
        "ffn_down.weight" => Some(vec![hidden, ff]),
        _ => None,
    };
    let Some(expected) = expected else {
        return Ok(());
    };
    let fits = expected.len() == np_shape.len()
        && expected
            .iter()
            .zip(np_shape)
            .all(|(e, &d)| e.is_none_or(|e| e == d));
    if fits {
        return Ok(());
    }
    let want: Vec<String> = expected
        .iter()
        .map(|e| e.map_or("?".into(), |e| e.to_string()))
        .collect();
    Err(tensor_error(
        source,
        format!(
            "shape {:?} does not fit config.json (expected [{}] for {name})",
            source.shape,
            want.join(", ")
        ),
    ))
}

/// Elements per slab of rows converted at once.
const SLAB: usize = 1 << 20;

/// Writes `t`'s output bytes to `w`: each slab of rows decoded to `f32`,
/// transformed (permuted, shifted, cut) and encoded to the output type, as
/// the converter's numpy code computes it. A stacked tensor is written
/// piece by piece (expert by expert), each piece's pages released once
/// written, so memory stays at a slab and one expert's mapped pages.
pub(crate) fn write_tensor(t: &Planned<'_>, w: &mut dyn Write) -> Result<()> {
    let pieces = match &t.origin {
        Origin::Checkpoint(pieces) => pieces,
        Origin::Generated(values) => {
            for v in values {
                w.write_all(&v.to_le_bytes())?;
            }
            return Ok(());
        }
        Origin::Mxfp4(m) => return write_mxfp4(&m.blocks, &m.scales, (m.first, m.step, m.rows), w),
    };
    let (block, type_size) = codec::geometry(t.ty, "quantize")?;
    let mut buf: Vec<f32> = Vec::new();
    let mut out: Vec<u8> = Vec::new();
    for piece in pieces {
        let src = &piece.source;
        let elements: u64 = src.shape.iter().product();
        let expected = elements as usize * src.dtype.size();
        if src.data.len() != expected {
            return Err(tensor_error(
                src,
                format!(
                    "{} bytes of data, its shape needs {expected}",
                    src.data.len()
                ),
            ));
        }
        if !piece.fits(elements) {
            return Err(tensor_error(
                src,
                format!(
                    "{} rows of {} values from element {} lie past its {elements} values",
                    piece.rows, piece.len, piece.start
                ),
            ));
        }
        let inner = piece.len as usize;
        let rows_per_slab = (SLAB / inner.max(1)).max(1) as u64;
        let mut start = 0u64;
        while start < piece.rows {
            let end = (start + rows_per_slab).min(piece.rows);
            let n = (end - start) as usize;
            buf.resize(n * inner, 0.0);
            decode_rows(t, piece, start, &mut buf);
            out.resize(n * inner / block * type_size, 0);
            encode(t.ty, &buf, &mut out, block, type_size)?;
            w.write_all(&out)?;
            start = end;
        }
        src.release();
    }
    Ok(())
}

/// Writes MXFP4 blocks of ggml's layout (the shared exponent, then 16
/// bytes of values) from a checkpoint's blocks and scales, the rows
/// `first, first + step, ...` of each expert, as the converter's
/// `repack_mxfp4` does (a lossless move of bits).
fn write_mxfp4(
    blocks: &SourceTensor<'_>,
    scales: &SourceTensor<'_>,
    (first, step, rows): (u64, u64, u64),
    w: &mut dyn Write,
) -> Result<()> {
    let [experts, all_rows, nb, 16] = blocks.shape[..] else {
        return Err(tensor_error(
            blocks,
            format!(
                "shape {:?}: MXFP4 blocks are [experts, rows, blocks, 16] bytes",
                blocks.shape
            ),
        ));
    };
    let whole = |t: &SourceTensor<'_>| t.data.len() as u64 == t.shape.iter().product::<u64>();
    if scales.shape[..] != [experts, all_rows, nb] || !whole(blocks) || !whole(scales) {
        return Err(tensor_error(
            scales,
            format!("shape {:?}: the scales of MXFP4 blocks of shape {:?} are [experts, rows, blocks] bytes", scales.shape, blocks.shape),
        ));
    }
    let (nb, all_rows) = (nb as usize, all_rows as usize);
    let mut row = vec![0u8; nb * 17];
    for e in 0..experts as usize {
        for r in 0..rows as usize {
            let r = first as usize + r * step as usize;
            let at = e * all_rows + r;
            if r >= all_rows {
                return Err(tensor_error(blocks, format!("row {r} asked of {all_rows}")));
            }
            for b in 0..nb {
                let src = &blocks.data[(at * nb + b) * 16..][..16];
                let out = &mut row[b * 17..(b + 1) * 17];
                out[0] = scales.data[at * nb + b];
                repack_mxfp4_block(src, &mut out[1..]);
            }
            w.write_all(&row)?;
        }
    }
    blocks.release();
    scales.release();
    Ok(())
}

/// One block's 16 bytes of 4-bit values, from the checkpoint's nibble
/// order to ggml's: `out[2i]` and `out[2i + 1]` are made of the nibbles of
/// `src[i]` and `src[i + 8]` (the converter's `transform_nibble_layout`).
fn repack_mxfp4_block(src: &[u8], out: &mut [u8]) {
    let swap = |x: u8| x.rotate_left(4);
    for i in 0..8 {
        let (a, b) = (swap(src[i]), swap(src[i + 8]));
        out[2 * i] = swap((a & 0xF0) | (b >> 4));
        out[2 * i + 1] = swap(((a << 4) & 0xF0) | (b & 0x0F));
    }
}

/// The source row that output row `o` comes from: llama's permutation
/// reads row `h*2*half + j*half + i` for output row `h*2*half + 2*i + j`.
fn source_row(o: u64, permute: Option<u64>, outer: u64) -> u64 {
    match permute {
        Some(heads) => {
            let per_head = outer / heads;
            let half = per_head / 2;
            let (h, rem) = (o / per_head, o % per_head);
            h * per_head + (rem % 2) * half + rem / 2
        }
        None => o,
    }
}

/// Decodes rows `start..` of `piece` into `buf` (`piece.len` values each).
fn decode_rows(t: &Planned<'_>, piece: &Piece<'_>, start: u64, buf: &mut [f32]) {
    let src = &piece.source;
    let dtype = src.dtype;
    let size = dtype.size();
    let data = src.data;
    let inner = piece.len as usize;
    let cols = src.shape.last().copied().unwrap_or(1).max(1);
    let one_row = |(k, dst): (usize, &mut [f32])| {
        let local = source_row(start + k as u64, t.permute_heads, piece.rows);
        let first = (piece.start + local * piece.row_step) as usize;
        // A scaled FP8 weight gets its transforms after the scales.
        let add_one = t.add_one && src.scale.is_none();
        if piece.col_step == 1 {
            let bytes = &data[first * size..(first + inner) * size];
            decode(dtype, bytes, dst, add_one);
        } else {
            let step = piece.col_step as usize;
            for (j, d) in dst.iter_mut().enumerate() {
                let e = first + j * step;
                decode(
                    dtype,
                    &data[e * size..(e + 1) * size],
                    std::slice::from_mut(d),
                    add_one,
                );
            }
        }
        if let Some(scale) = &src.scale {
            apply_scale(scale, cols, first as u64, piece.col_step, dst);
            if t.add_one {
                dst.iter_mut().for_each(|d| *d += 1.0);
            }
        }
        if t.neg_exp {
            dst.iter_mut().for_each(|d| *d = -d.exp());
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        buf.par_chunks_mut(inner.max(1))
            .enumerate()
            .for_each(one_row);
    }
    #[cfg(not(feature = "parallel"))]
    buf.chunks_mut(inner.max(1)).enumerate().for_each(one_row);
}

/// One row of source values as `f32`, plus one when `add_one`: in the
/// source's own precision for F16 (the converter adds in torch's float16),
/// in `f32` otherwise (BF16 is widened first).
fn decode(dtype: SourceType, bytes: &[u8], dst: &mut [f32], add_one: bool) {
    match dtype {
        SourceType::F32 => {
            for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(4)) {
                *d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            if add_one {
                dst.iter_mut().for_each(|d| *d += 1.0);
            }
        }
        SourceType::F16 => {
            for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(2)) {
                let x = half::f16::from_le_bytes([b[0], b[1]]).to_f32();
                *d = if add_one {
                    half::f16::from_f32(x + 1.0).to_f32()
                } else {
                    x
                };
            }
        }
        SourceType::BF16 => {
            for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(2)) {
                *d = half::bf16::from_le_bytes([b[0], b[1]]).to_f32();
            }
            if add_one {
                dst.iter_mut().for_each(|d| *d += 1.0);
            }
        }
        SourceType::F8E4M3 | SourceType::F8E5M2 | SourceType::U8 => {
            for (d, &b) in dst.iter_mut().zip(bytes) {
                *d = match dtype {
                    SourceType::F8E4M3 => f8_e4m3(b),
                    SourceType::F8E5M2 => half::f16::from_bits(u16::from(b) << 8).to_f32(),
                    // Refused before planning (`plan`): raw bytes are no values.
                    _ => f32::NAN,
                };
            }
            if add_one {
                dst.iter_mut().for_each(|d| *d += 1.0);
            }
        }
    }
}

/// `float8_e4m3fn` to `f32`, exactly: 4 exponent bits (bias 7), 3
/// mantissa bits, subnormals, no infinities, `S.1111.111` NaN.
fn f8_e4m3(b: u8) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = (b >> 3) & 0x0F;
    let man = f32::from(b & 0x07);
    if exp == 0x0F && b & 0x07 == 0x07 {
        return f32::NAN;
    }
    let magnitude = if exp == 0 {
        man / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + man / 8.0) * 2f32.powi(i32::from(exp) - 7)
    };
    sign * magnitude
}

/// Multiplies the values just decoded into `dst` (elements `first`,
/// `first + step`, ... of a 2-D FP8 weight of `cols` columns) by their
/// blocks' scales.
fn apply_scale(scale: &BlockScale<'_>, cols: u64, first: u64, step: u64, dst: &mut [f32]) {
    let (br, bc) = scale.block;
    let scale_cols = cols.div_ceil(bc.max(1));
    let s = &scale.scales;
    let size = s.dtype.size();
    let mut one = [0f32];
    for (j, d) in dst.iter_mut().enumerate() {
        let e = first + j as u64 * step;
        let (r, c) = (e / cols, e % cols);
        let i = ((r / br.max(1)) * scale_cols + c / bc.max(1)) as usize;
        decode(s.dtype, &s.data[i * size..(i + 1) * size], &mut one, false);
        *d *= one[0];
    }
}

/// Encodes `buf` to `ty` into `out`, on every core.
fn encode(ty: GgmlType, buf: &[f32], out: &mut [u8], block: usize, type_size: usize) -> Result<()> {
    // Pieces of whole blocks, large enough to amortise the scheduling.
    let piece_blocks = (65536 / block).max(1);
    let piece = piece_blocks * block;
    let piece_out = piece_blocks * type_size;
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        buf.par_chunks(piece)
            .zip(out.par_chunks_mut(piece_out))
            .try_for_each(|(s, o)| codec::quantize_into(ty, s, o))?;
        Ok(())
    }
    #[cfg(not(feature = "parallel"))]
    {
        buf.chunks(piece)
            .zip(out.chunks_mut(piece_out))
            .try_for_each(|(s, o)| codec::quantize_into(ty, s, o))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{f8_e4m3, repack_mxfp4_block};

    #[test]
    fn fp8_e4m3_values_are_exact() {
        assert_eq!(f8_e4m3(0x38), 1.0);
        assert_eq!(f8_e4m3(0xB8), -1.0);
        assert_eq!(f8_e4m3(0x7E), 448.0);
        assert_eq!(f8_e4m3(0x01), 2f32.powi(-9));
        assert_eq!(f8_e4m3(0x00), 0.0);
        assert!(f8_e4m3(0x7F).is_nan() && f8_e4m3(0xFF).is_nan());
        // Every other pattern is a finite value that round-trips through
        // its neighbours' order.
        let positives: Vec<f32> = (0u8..0x7F).map(f8_e4m3).collect();
        assert!(positives.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn mxfp4_nibbles_move_to_ggml_order() {
        // Value k of the block in the checkpoint: nibble k % 2 (low first)
        // of byte k / 2. In ggml's block, byte j holds value j (low) and
        // value j + 16 (high).
        let values: Vec<u8> = (0..32).map(|k| (k * 7 + 3) as u8 & 0x0F).collect();
        let src: Vec<u8> = (0..16)
            .map(|i| values[2 * i] | (values[2 * i + 1] << 4))
            .collect();
        let mut out = [0u8; 16];
        repack_mxfp4_block(&src, &mut out);
        let got: Vec<u8> = (0..32)
            .map(|k| {
                if k < 16 {
                    out[k] & 0x0F
                } else {
                    out[k - 16] >> 4
                }
            })
            .collect();
        assert_eq!(got, values);
    }
}
