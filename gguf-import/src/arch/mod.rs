//! The architectures, as data: one table each, with what llama.cpp's
//! converter does for it (its model class in `conversion/`): the
//! `transformers` defaults of its config, its hyper-parameter steps, its
//! tensor names and the transforms applied to its tensors.
//!
//! Adding an architecture is adding a table here (and, when its tokenizer
//! differs, a case in the tokenizer part).
//!
//! The files are rooms, lowest first: `table` (what a table says, and the
//! rules tables share), one file per family (`llama`, `qwen`, `gemma`,
//! `phi`, `olmo`, `glm`, `deepseek`, `gpt_oss`), `qwen_vl` (the
//! vision-language text models, over the Qwen tables), and this file: the
//! list of every table.

mod deepseek;
mod gemma;
mod glm;
mod gpt_oss;
mod llama;
mod olmo;
mod phi;
mod qwen;
mod qwen_vl;
mod table;

pub(crate) use deepseek::*;
pub(crate) use gemma::*;
pub(crate) use glm::*;
pub(crate) use gpt_oss::*;
pub(crate) use llama::*;
pub(crate) use olmo::*;
pub(crate) use phi::*;
pub(crate) use qwen::*;
pub(crate) use qwen_vl::*;
pub(crate) use table::*;

/// Every architecture the importer knows.
pub(crate) const ARCHITECTURES: &[&Architecture] = &[
    &LLAMA,
    &MISTRAL,
    &MIXTRAL,
    &SMOLLM3,
    &GRANITE,
    &GRANITEMOE,
    &QWEN2,
    &QWEN3,
    &QWEN3MOE,
    &GEMMA2,
    &GEMMA3,
    &PHI3,
    &OLMO2,
    &GLM4,
    &GLM4MOE,
    &DEEPSEEK2,
    &GPT_OSS,
    &QWEN3NEXT,
    &QWEN2VL,
    &QWEN3VL,
];

/// The table for a `config.json` architecture name.
pub(crate) fn find(hf_name: &str) -> Option<&'static Architecture> {
    ARCHITECTURES
        .iter()
        .copied()
        .find(|a| a.hf_names.contains(&hf_name))
}

/// The supported `config.json` architecture names, for errors.
pub(crate) fn supported() -> String {
    ARCHITECTURES
        .iter()
        .flat_map(|a| a.hf_names.iter().copied())
        .collect::<Vec<_>>()
        .join(", ")
}
