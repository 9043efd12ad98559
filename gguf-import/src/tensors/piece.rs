//! What an output tensor is made of: [`Planned`] (its name, shape, type
//! and transforms) and its [`Origin`], the [`Piece`]s of checkpoint tensors
//! it is read from; the converter's choice of output type.

use crate::error::{Error, ImportError};
use gguf_core::GgmlType;

use crate::checkpoint::SourceTensor;
use crate::options::OutType;

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
    pub(super) blocks: SourceTensor<'a>,
    /// `[experts, rows, blocks]` shared exponents.
    pub(super) scales: SourceTensor<'a>,
    pub(super) first: u64,
    pub(super) step: u64,
    pub(super) rows: u64,
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
pub(super) fn row_count(shape: &[u64]) -> u64 {
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
    pub(super) fn fits(&self, elements: u64) -> bool {
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

pub(crate) fn tensor_error(t: &SourceTensor<'_>, reason: String) -> Error {
    Error::Import(ImportError::Tensor {
        file: t.file.to_owned(),
        tensor: t.name.clone(),
        reason,
    })
}
