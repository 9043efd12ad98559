//! The output tensors in the converter's order: plain tensors with their
//! transforms, experts stacked where the converter stacks them, cut tensors.

use std::collections::{BTreeMap, HashSet};

use crate::error::Result;

use crate::arch::{Architecture, Mapped, Transform};
use crate::checkpoint::{SourceTensor, SourceType};
use crate::config::{config_error, Config};
use crate::options::OutType;

use super::check::check_shape;
use super::cut::split;
use super::names::map_source;
use super::piece::{output_type, row_count, tensor_error, Origin, Piece, Planned};

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
