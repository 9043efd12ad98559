//! Whether llama.cpp's model loader would load a model: [`LoadReport`].
//!
//! A file that reads as valid GGUF (and passes
//! [`GgufFile::lint_llama_cpp`](gguf_core::GgufFile::lint_llama_cpp), the rules
//! of llama.cpp's GGUF reader) can still be refused when llama.cpp builds
//! the model from it. These rules follow its model loader
//! ([`LLAMA_CPP_VERSION`]):
//!
//! - the architecture (`general.architecture`) must be one llama.cpp builds
//!   a model for ([`MODEL_ARCHITECTURES`]);
//! - every key it reads must have exactly the type it reads it as (a key
//!   read as `u32` accepts a GGUF `u32` only), and the keys it requires
//!   must be there; so must the tokenizer it reads (`tokenizer.ggml.*`);
//! - every tensor the architecture requires must be there with the shape
//!   its hyper-parameters give, optional ones too when present, and no
//!   other tensor may be in the file;
//! - and, found only when the model runs: no tensor may be of a type ggml
//!   uses only for activations
//!   ([`codec::is_activation_type`](gguf_core::codec::is_activation_type)), which llama.cpp
//!   loads but cannot multiply with.
//!
//! Tensor rules exist for the common architectures (llama and the
//! Mistral models that use it, Gemma 1 to 3, Qwen 2 and 3 with their MoE
//! variants, Phi 3, Falcon, StarCoder 1 and 2, GPT-2, BLOOM, StableLM,
//! Baichuan, InternLM 2, Orion, Refact, Mistral 3). For another
//! architecture llama.cpp knows, the keys every architecture reads and the
//! tokenizer are checked, and the report says that the rest was not
//! ([`Coverage::CommonKeysOnly`]): such a file is never called loadable.
//!
//! ```
//! # fn main() -> gguf_llama::Result<()> {
//! use gguf_llama::llama_load::{LoadProblem, LoadReport};
//! use gguf_core::{write::Builder, GgufFile};
//! let mut b = Builder::new();
//! b.set("general.architecture", "llama")?;
//! b.set("llama.context_length", "8192")?; // a string: llama.cpp reads a u32
//! let bytes = b.to_vec()?;
//! let report = LoadReport::of(&GgufFile::open(&bytes)?);
//! assert!(!report.loadable());
//! assert!(report.problems.contains(&LoadProblem::WrongType {
//!     key: "llama.context_length".into(),
//!     expected: "u32",
//!     found: "string".into(),
//! }));
//! # Ok(()) }
//! ```

mod arch;
mod consistency;
mod hparams;
mod keys;
mod layouts;
mod problem;
mod rules;
mod tensors;
mod vocab;

pub use arch::{is_model_architecture, LLAMA_CPP_VERSION, MODEL_ARCHITECTURES};

/// The architectures whose own keys and tensors these rules check
/// ([`Coverage::Full`]); the others get [`Coverage::CommonKeysOnly`].
///
/// ```
/// use gguf_llama::llama_load::fully_checked_architectures;
/// assert!(fully_checked_architectures().any(|a| a == "gemma3"));
/// ```
pub fn fully_checked_architectures() -> impl Iterator<Item = &'static str> {
    layouts::modelled()
}
pub use consistency::{metadata_problems, MetadataProblem};
pub use problem::LoadProblem;

use gguf_core::Gguf;

/// How much of llama.cpp's loading the rules cover for a model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Coverage {
    /// The architecture's keys, hyper-parameters and every tensor were
    /// checked.
    Full,
    /// The architecture is one llama.cpp knows, or none is named: only the
    /// keys every architecture reads and the tokenizer were checked.
    CommonKeysOnly,
    /// Not a model llama.cpp's model loader reads (`kind`: an adapter, an
    /// importance matrix, ...): no rule applies.
    NotAModel {
        /// What the file is, as a phrase (`general.type "adapter"`).
        kind: String,
    },
    /// A multimodal projector (`general.architecture` `clip`, an `mmproj`
    /// file), which llama.cpp loads with libmtmd beside a text model, not
    /// with its model loader: none of the loader's rules apply. The only
    /// problems reported are libmtmd's refusals of its projector type
    /// (missing, or not one it knows).
    Projector {
        /// What its `clip.*` keys say it is.
        projector: crate::summary::ProjectorSummary,
    },
}

/// What llama.cpp's model loader would make of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadReport {
    /// `general.architecture`, when it is a string.
    pub architecture: Option<String>,
    /// Everything llama.cpp would refuse, in the order it reads things.
    pub problems: Vec<LoadProblem>,
    /// What was checked.
    pub coverage: Coverage,
}

impl LoadReport {
    /// Checks a model (a file, a split model or a remote header) against
    /// llama.cpp's loading rules, from its header alone.
    pub fn of(model: &(impl Gguf + ?Sized)) -> Self {
        rules::check(model)
    }

    /// True when llama.cpp would load the model and could run it: nothing
    /// wrong, and everything checked ([`Coverage::Full`]).
    pub fn loadable(&self) -> bool {
        self.problems.is_empty() && self.coverage == Coverage::Full
    }

    /// Why the model is not called loadable although nothing is wrong
    /// with it; `None` when it is loadable or something is wrong.
    ///
    /// ```
    /// # fn main() -> gguf_llama::Result<()> {
    /// use gguf_core::{write::Builder, GgufFile};
    /// use gguf_llama::llama_load::LoadReport;
    /// let mut b = Builder::new();
    /// b.set("general.type", "adapter")?;
    /// let bytes = b.to_vec()?;
    /// let report = LoadReport::of(&GgufFile::open(&bytes)?);
    /// assert!(!report.loadable());
    /// assert!(report.note().unwrap().contains("adapter"));
    /// # Ok(()) }
    /// ```
    pub fn note(&self) -> Option<String> {
        if !self.problems.is_empty() {
            return None;
        }
        match &self.coverage {
            Coverage::Full => None,
            Coverage::CommonKeysOnly => Some(format!(
                "architecture {:?} is one llama.cpp knows, but its own keys and its tensor \
                 layout were not checked",
                self.architecture.as_deref().unwrap_or("")
            )),
            Coverage::NotAModel { kind } => Some(format!(
                "{kind}: not a model llama.cpp's model loader reads, not checked"
            )),
            Coverage::Projector { projector } => Some(format!(
                "{}: llama.cpp loads it with libmtmd (llama-mtmd-cli, llama-server --mmproj) \
                 beside its text model, not with its model loader, whose rules do not apply",
                projector.describe()
            )),
        }
    }
}
