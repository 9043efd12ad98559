//! The projector's tensors: which checkpoint tensors are the vision
//! tower's (the class's `filter_tensors`), their GGUF names (its
//! `modify_tensors` and gguf-py's tensor map), their types
//! (`tensor_force_quant` and `prepare_tensors`' rules) and where their
//! values come from, converted while written by the text import's
//! [`write_tensor`](crate::tensors::write_tensor).

use std::collections::HashSet;

use gguf_core::GgmlType;

use crate::checkpoint::SourceTensor;
use crate::config::{config_error, Config};
use crate::error::{Error, ImportError, Result};
use crate::options::OutType;
use crate::tensors::{Origin, Piece, Planned};

use super::tables::{Field, Force, Out, Projector, Rule, ALWAYS_F32, BASE_FORCED, BLOCK_KEYS};

fn tensor_error(t: &SourceTensor<'_>, reason: String) -> Error {
    Error::Import(ImportError::Tensor {
        file: t.file.to_owned(),
        tensor: t.name.clone(),
        reason,
    })
}

/// The name the converter gives a checkpoint tensor before mapping it
/// (the class's `filter_tensors`, then `MmprojModel`'s and `ModelBase`'s),
/// or `None` for a tensor the projector does not have (the text model's,
/// the buffers `prepare_tensors` skips).
pub(super) fn filtered_name(p: &Projector, name: &str) -> Option<String> {
    if p.drop_containing.iter().any(|d| name.contains(d)) {
        return None;
    }
    let mut name = name.to_owned();
    if let Some((from, to)) = p.prefix_renames.iter().find(|(f, _)| name.starts_with(f)) {
        name = format!("{to}{}", &name[from.len()..]);
    }
    if !p.keep_prefixes.iter().any(|k| name.starts_with(k)) {
        return None;
    }
    for (from, to) in p.replacements {
        name = name.replace(from, to);
    }
    // `MmprojModel.filter_tensors`: the language model's tensors.
    if name.contains("language_model.") {
        return None;
    }
    if name.ends_with("e_score_correction_bias") {
        name = name.replace("e_score_correction_bias", "e_score_correction.bias");
    }
    if name.ends_with(".attention.masked_bias")
        || name.ends_with(".attention.bias")
        || name.ends_with(".rotary_emb.inv_freq")
    {
        return None;
    }
    Some(name)
}

/// The block number `stem` has where `pattern` has `{bid}` (a canonical
/// decimal), or `Some(None)` when the pattern has none and equals it.
fn matches(pattern: &str, stem: &str) -> Option<Option<u64>> {
    let Some((pre, post)) = pattern.split_once("{bid}") else {
        return (pattern == stem).then_some(None);
    };
    let digits = stem.strip_prefix(pre)?.strip_suffix(post)?;
    let n: u64 = digits.parse().ok()?;
    (n.to_string() == digits).then_some(Some(n))
}

/// A GGUF name pattern with its `{bid}` filled in.
fn fill(pattern: &str, bid: Option<u64>) -> String {
    match bid {
        Some(b) => pattern.replace("{bid}", &b.to_string()),
        None => pattern.to_owned(),
    }
}

/// A name without `.weight`/`.bias`, and the suffix.
fn split_suffix(name: &str) -> (&str, &'static str) {
    if let Some(s) = name.strip_suffix(".weight") {
        (s, ".weight")
    } else if let Some(s) = name.strip_suffix(".bias") {
        (s, ".bias")
    } else {
        (name, "")
    }
}

/// The rule for a tensor and its block number: the whole name first,
/// then without its suffix (gguf-py's `get_name` with `try_suffixes`). A
/// block number must be below `blocks` (gguf-py's map holds those only),
/// except for an [`Out::Indexed`] rule's, which indexes a list.
fn find_rule<'p>(
    p: &'p Projector,
    name: &str,
    blocks: u32,
) -> Option<(&'p Rule, Option<u64>, &'static str)> {
    let (stem, suffix) = split_suffix(name);
    [(name, ""), (stem, suffix)]
        .into_iter()
        .find_map(|(stem, suffix)| {
            p.rules.iter().find_map(|r| {
                let bid = matches(r.hf, stem)?;
                let in_range = matches!(r.out, Out::Indexed { .. })
                    || bid.is_none_or(|b| b < u64::from(blocks));
                in_range.then_some((r, bid, suffix))
            })
        })
}

/// The converter's type for a projector tensor of `np_shape` (numpy
/// order): the class's forced type, F32 for 1-D tensors and norms, F32
/// for the position embeddings and anything not a weight, else the
/// output type, F16 for Q8_0 when a row is not whole blocks.
fn output_type(p: &Projector, hf: &str, gguf: &str, np_shape: &[u64], out: OutType) -> GgmlType {
    let forced = p
        .forced
        .iter()
        .chain(BASE_FORCED)
        .find(|f| match f.field {
            Field::Hf => hf.contains(f.contains),
            Field::Gguf => gguf.contains(f.contains),
        })
        .map(|f| match f.ty {
            Force::F16 => GgmlType::F16,
            Force::F32 => GgmlType::F32,
            Force::F16InF16 if out == OutType::F16 => GgmlType::F16,
            Force::F16InF16 => GgmlType::F32,
        });
    if np_shape.len() <= 1 || gguf.ends_with("_norm.weight") {
        return GgmlType::F32;
    }
    let ty = match forced {
        Some(t) => t,
        None if ALWAYS_F32.contains(&gguf)
            || ![".weight", ".lora_a", ".lora_b"]
                .iter()
                .any(|s| gguf.ends_with(s)) =>
        {
            return GgmlType::F32
        }
        None => out.ggml_type(),
    };
    if ty == GgmlType::Q8_0 && np_shape.last().copied().unwrap_or(1) % 32 != 0 {
        // The converter's fallback when a row is not whole blocks.
        return GgmlType::F16;
    }
    ty
}

/// Elements of `shape`, and of its last dimension (one for a 1-D tensor),
/// the converter's rows.
fn rows_of(shape: &[u64]) -> (u64, u64) {
    let elements: u64 = shape.iter().product();
    let len = if shape.len() >= 2 {
        shape.last().copied().unwrap_or(1)
    } else {
        1
    };
    (elements.checked_div(len).unwrap_or(0), len)
}

/// Rows `first..first + rows` of `source` (rows of `len` values).
fn rows<'a>(source: &SourceTensor<'a>, first: u64, rows: u64, len: u64) -> Piece<'a> {
    Piece {
        source: source.clone(),
        start: first * len,
        rows,
        row_step: len,
        len,
        col_step: 1,
    }
}

/// The projector's output tensors, in the converter's order.
pub(super) fn plan<'a>(
    p: &Projector,
    vision: &Config,
    sources: Vec<SourceTensor<'a>>,
    out: OutType,
    blocks: u32,
) -> Result<Vec<Planned<'a>>> {
    let mut planned: Vec<Planned<'a>> = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    for source in &sources {
        let Some(name) = filtered_name(p, &source.name) else {
            continue;
        };
        let Some((rule, bid, suffix)) = find_rule(p, &name, blocks) else {
            return Err(tensor_error(
                source,
                format!(
                    "no GGUF name for it in the {} projector's table (the converter cannot map {name:?} either)",
                    p.family
                ),
            ));
        };
        let made = tensors_of(p, vision, source, &name, rule, bid, suffix, out, blocks)?;
        for t in made {
            if !names.insert(t.name.clone()) {
                return Err(tensor_error(
                    source,
                    format!("maps to {:?}, which another tensor already became", t.name),
                ));
            }
            planned.push(t);
        }
    }
    // Every block below the count has tensors (libmtmd cannot load a tower
    // with one missing; the converter writes the count it is given). This
    // also bounds what is built from the count (a per-block list).
    let mut found: HashSet<u64> = HashSet::new();
    for t in &planned {
        let n = t
            .name
            .strip_prefix("v.blk.")
            .and_then(|r| r.split_once('.'))
            .and_then(|(n, _)| n.parse::<u64>().ok());
        found.extend(n.filter(|&n| n < u64::from(blocks)));
    }
    if (found.len() as u64) < u64::from(blocks) && !planned.is_empty() {
        // The key as config.json names it (the converter's edits add
        // `num_hidden_layers` for `depth`).
        let raw = vision.raw.get("vision_config");
        let key = BLOCK_KEYS
            .iter()
            .find(|k| raw.and_then(|v| v.get(**k)).is_some())
            .or_else(|| BLOCK_KEYS.iter().find(|k| vision.hparams.contains_key(**k)))
            .unwrap_or(&"depth");
        return Err(config_error(
            &vision.file,
            format!(
                "vision_config.{key} is {blocks}, but the checkpoint has tensors of {} vision block(s) (libmtmd cannot load a tower with a block missing)",
                found.len()
            ),
        ));
    }
    if planned.is_empty() {
        return Err(config_error(
            &vision.file,
            format!(
                "the checkpoint has no tensor of a {} vision tower (names starting with {})",
                p.family,
                p.keep_prefixes.join(", ")
            ),
        ));
    }
    Ok(planned)
}

/// One planned tensor of `source` taken whole or by `pieces`.
#[allow(clippy::too_many_arguments)]
fn planned<'a>(
    p: &Projector,
    hf: &str,
    name: String,
    np_shape: Vec<u64>,
    pieces: Vec<Piece<'a>>,
    add_one: bool,
    out: OutType,
) -> Planned<'a> {
    Planned {
        ty: output_type(p, hf, &name, &np_shape, out),
        shape: np_shape.iter().rev().copied().collect(),
        name,
        origin: Origin::Checkpoint(pieces),
        permute_heads: None,
        add_one,
        neg_exp: false,
    }
}

/// What `rule` makes of `source` (named `hf` after the filter).
#[allow(clippy::too_many_arguments)]
fn tensors_of<'a>(
    p: &Projector,
    vision: &Config,
    source: &SourceTensor<'a>,
    hf: &str,
    rule: &Rule,
    bid: Option<u64>,
    suffix: &str,
    out: OutType,
    blocks: u32,
) -> Result<Vec<Planned<'a>>> {
    let shape = source.shape.clone();
    let whole = || {
        let (n, len) = rows_of(&shape);
        vec![rows(source, 0, n, len)]
    };
    Ok(match rule.out {
        Out::Plain(gguf) => {
            let name = format!("{}{suffix}", fill(gguf, bid));
            vec![planned(p, hf, name, shape.clone(), whole(), false, out)]
        }
        Out::PlusOne(gguf) => {
            let name = format!("{}{suffix}", fill(gguf, bid));
            let add_one = suffix == ".weight";
            vec![planned(p, hf, name, shape.clone(), whole(), add_one, out)]
        }
        Out::Indexed { list, gguf } => {
            let i = bid.unwrap_or(0);
            let indexes = vision.hparams.get(list).and_then(|v| v.as_array());
            let idx = indexes
                .and_then(|l| l.get(usize::try_from(i).ok()?))
                .and_then(serde_json::Value::as_u64);
            let Some(idx) = idx.filter(|&b| b < u64::from(blocks)) else {
                return Err(tensor_error(
                    source,
                    format!(
                        "merger {i} has no block in vision_config.{list} (a block number below {blocks})"
                    ),
                ));
            };
            let name = format!("{}{suffix}", fill(gguf, Some(idx)));
            vec![planned(p, hf, name, shape.clone(), whole(), false, out)]
        }
        Out::Rows(parts) => {
            let n = parts.len() as u64;
            let first = shape.first().copied().unwrap_or(0);
            if first == 0 || first % n != 0 {
                return Err(tensor_error(
                    source,
                    format!(
                        "shape {shape:?}: its first dimension does not cut into {n} equal parts"
                    ),
                ));
            }
            let mut part_shape = shape.clone();
            part_shape[0] = first / n;
            let (part_rows, len) = rows_of(&part_shape);
            parts
                .iter()
                .enumerate()
                .map(|(j, gguf)| {
                    let name = format!("{}{suffix}", fill(gguf, bid));
                    let piece = rows(source, j as u64 * part_rows, part_rows, len);
                    planned(p, hf, name, part_shape.clone(), vec![piece], false, out)
                })
                .collect()
        }
        Out::TemporalPair(gguf) if suffix == ".weight" => {
            let [c_out, c_in, 2, h, w] = shape[..] else {
                return Err(tensor_error(
                    source,
                    format!(
                        "shape {shape:?}: a 3-D patch embedding [out, in, 2, height, width] expected (the converter splits only a temporal patch size of 2)"
                    ),
                ));
            };
            let np_shape = vec![c_out, c_in, h, w];
            ["", ".1"]
                .iter()
                .enumerate()
                .map(|(t, tail)| {
                    let name = format!("{}.weight{tail}", fill(gguf, bid));
                    let ty = output_type(p, hf, &name, &np_shape, out);
                    let t = t as u64;
                    // Each (out, in) pair's `h x w` values of slice t, one
                    // row of `w` values at a time where the type has
                    // blocks, in one run where it has not.
                    let pieces = if ty.block_size() == Some(1) {
                        vec![Piece {
                            source: source.clone(),
                            start: t * h * w,
                            rows: c_out * c_in,
                            row_step: 2 * h * w,
                            len: h * w,
                            col_step: 1,
                        }]
                    } else {
                        (0..c_out * c_in)
                            .map(|i| rows(source, (i * 2 + t) * h, h, w))
                            .collect()
                    };
                    planned(p, hf, name, np_shape.clone(), pieces, false, out)
                })
                .collect()
        }
        Out::TemporalPair(gguf) => {
            let name = format!("{}{suffix}", fill(gguf, bid));
            vec![planned(p, hf, name, shape.clone(), whole(), false, out)]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::tables::{GEMMA3, QWEN2VL, QWEN3VL};
    use super::*;

    #[test]
    fn names_are_filtered_as_the_converter_filters_them() {
        assert_eq!(
            filtered_name(&GEMMA3, "multi_modal_projector.mm_input_projection_weight").as_deref(),
            Some("multi_modal_projector.mm_input_projection.weight")
        );
        assert_eq!(
            filtered_name(&GEMMA3, "language_model.model.layers.0.mlp.up_proj.weight"),
            None
        );
        assert_eq!(
            filtered_name(&GEMMA3, "vision_tower.vision_model.head.mlp.fc1.weight"),
            None
        );
        assert_eq!(
            filtered_name(&QWEN3VL, "model.visual.pos_embed.weight").as_deref(),
            Some("visual.pos_embed.weight")
        );
        assert_eq!(filtered_name(&QWEN3VL, "lm_head.weight"), None);
        assert_eq!(
            filtered_name(&QWEN2VL, "model.layers.0.mlp.up_proj.weight"),
            None
        );
    }

    #[test]
    fn block_numbers_map_below_the_block_count_only() {
        let name = |p: &Projector, n: &str, blocks| {
            find_rule(p, n, blocks).map(|(r, b, s)| match r.out {
                Out::Plain(g) => format!("{}{s}", fill(g, b)),
                _ => String::new(),
            })
        };
        assert_eq!(
            name(&QWEN2VL, "visual.merger.mlp.2.bias", 3).as_deref(),
            Some("mm.2.bias")
        );
        // gguf-py's map holds `mlp.{bid}` for the tower's block numbers.
        assert_eq!(name(&QWEN2VL, "visual.merger.mlp.2.bias", 2), None);
        assert_eq!(name(&QWEN2VL, "visual.blocks.01.norm1.weight", 4), None);
        assert_eq!(
            name(&QWEN3VL, "visual.merger.linear_fc2.weight", 1).as_deref(),
            Some("mm.2.weight")
        );
    }

    #[test]
    fn types_follow_the_converters_forced_types() {
        let t = |p: &Projector, hf: &str, g: &str, s: &[u64], o| output_type(p, hf, g, s, o);
        let hf = "multi_modal_projector.mm_input_projection.weight";
        assert_eq!(
            t(
                &GEMMA3,
                hf,
                "mm.input_projection.weight",
                &[32, 64],
                OutType::Q8_0
            ),
            GgmlType::F16
        );
        let hf = "vision_tower.vision_model.embeddings.patch_embedding.weight";
        assert_eq!(
            t(
                &GEMMA3,
                hf,
                "v.patch_embd.weight",
                &[32, 3, 14, 14],
                OutType::F16
            ),
            GgmlType::F32
        );
        let hf = "visual.patch_embed.proj.weight";
        assert_eq!(
            t(
                &QWEN3VL,
                hf,
                "v.patch_embd.weight.1",
                &[32, 3, 16, 16],
                OutType::F16
            ),
            GgmlType::F16
        );
        assert_eq!(
            t(
                &QWEN3VL,
                hf,
                "v.patch_embd.weight.1",
                &[32, 3, 16, 16],
                OutType::BF16
            ),
            GgmlType::F32
        );
        assert_eq!(
            t(
                &QWEN3VL,
                "visual.pos_embed.weight",
                "v.position_embd.weight",
                &[16, 32],
                OutType::BF16
            ),
            GgmlType::F32
        );
        assert_eq!(
            t(
                &QWEN3VL,
                "x",
                "v.blk.0.ffn_up.weight",
                &[64, 48],
                OutType::Q8_0
            ),
            GgmlType::F16
        );
        assert_eq!(
            t(
                &QWEN3VL,
                "x",
                "v.blk.0.ffn_up.weight",
                &[64, 32],
                OutType::Q8_0
            ),
            GgmlType::Q8_0
        );
        assert_eq!(
            t(&QWEN3VL, "x", "v.blk.0.ffn_up.bias", &[64], OutType::Q8_0),
            GgmlType::F32
        );
    }
}
