//! The output tensors: which checkpoint tensors become which GGUF tensors,
//! with which type and shape (the converter's `prepare_tensors`), and
//! their conversion, a slab of rows at a time, while the file is written.
//!
//! The files are rooms, lowest first, each using only those before it
//! (`scripts/check_layers.py`): `piece` (what an output tensor is made of),
//! `names` (checkpoint names as the converter sees them), `check` (the
//! hyper-parameters and shapes checked first), `quantized` (FP8 scales,
//! MXFP4 blocks), `cut` (tensors cut into several), `plan` (the output
//! tensors in order), `write` (the conversion while written).

mod check;
mod cut;
mod names;
mod piece;
mod plan;
mod quantized;
mod write;

pub(crate) use check::check_hparams;
pub(crate) use names::{map_source, rename_mtp};
pub(crate) use piece::{generated, output_type, tensor_error, Origin, Piece, Planned};
pub(crate) use plan::plan;
pub(crate) use quantized::{mxfp4, pair_quantized};
pub(crate) use write::{read_ahead, write_tensor};
