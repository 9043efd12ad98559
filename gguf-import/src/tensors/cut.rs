//! Tensors the converter cuts into several (see [`Cut`]): each part's
//! shape and pieces.

use crate::error::Result;

use crate::arch::{Cut, SplitRule};
use crate::checkpoint::SourceTensor;
use crate::config::{config_error, Config};
use crate::options::OutType;

use super::piece::{output_type, tensor_error, Origin, Piece, Planned};

/// The parts of a tensor cut by `rule` (see [`Cut`]).
pub(super) fn split<'a>(
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
