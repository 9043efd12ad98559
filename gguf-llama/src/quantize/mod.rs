//! llama-quantize's policies: which tensors it converts, to what type, and
//! how it labels the result.
//!
//! Data and small functions, so that every tool that converts weights
//! (the `gguf convert` command, bindings, importers) makes the same choices
//! as llama-quantize of [`LLAMA_CPP_VERSION`](crate::llama_load::LLAMA_CPP_VERSION)
//! (`src/llama-quant.cpp`, `tools/quantize/quantize.cpp`): its presets
//! ([`PRESETS`], [`Ftype`]), the type it gives each tensor ([`plan`], from
//! the rules of [`mixture_type`]), the metadata it writes ([`keys`]), its
//! `--pure` mode for `gguf convert` ([`choose_pure`]), and the run itself:
//! [`quantize_model`] writes what llama-quantize writes, [`dry_run`] says
//! what it would write.
//!
//! ```
//! use gguf_llama::quantize::{choose_pure, Kept};
//! use gguf_core::GgmlType;
//! // A weight matrix gets the target type...
//! let q = choose_pure("blk.0.attn_q.weight", &[4096, 4096], "llama", GgmlType::F16, GgmlType::Q4_K, false);
//! assert_eq!(q, Ok(GgmlType::Q4_K));
//! // ...a norm is left as it is.
//! let norm = choose_pure("blk.0.attn_norm.weight", &[4096], "llama", GgmlType::F32, GgmlType::Q4_K, false);
//! assert_eq!(norm, Err(Kept::NotAMatrix));
//! ```

mod file_type;
mod imatrix;
pub mod keys;
mod needs_imatrix;
mod plan;
mod preset;
mod pure;
mod report;
mod rows;
mod rules;
mod run;
#[cfg(test)]
mod tests;
mod work;

pub use file_type::{output_file_type, FileTypeLabel};
pub use imatrix::{Imatrix, ImatrixEntry, ImatrixFormat};
pub use needs_imatrix::type_requires_imatrix;
pub use plan::{
    model_facts, parse_ggml_type, plan, requires_imatrix, Plan, PlannedTensor, QuantizeOptions,
    TensorTypeOverride,
};
pub use preset::{parse_preset, Ftype, Preset, PRESETS};
pub use pure::{choose_pure, fallback, is_weight_matrix, Kept};
pub use report::{QuantizeReport, TensorReport};
pub use rules::{
    allows_quantization, mixture_type, use_more_bits, Category, Counters, MixtureOptions,
    ModelFacts,
};
pub use run::{
    dry_run, max_threads, output_files, quantize_model, quantize_model_streamed, QuantizeJob,
    TensorBytes,
};
