//! One error for the crate: what went wrong and where.

/// The crate's `Result`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A limit a render stopped at (see [`Limits`](crate::options::Limits)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// [`Limits::fuel`](crate::options::Limits::fuel): the instructions a render may run.
    Fuel,
    /// [`Limits::output_bytes`](crate::options::Limits::output_bytes): the prompt's size.
    OutputBytes,
    /// [`Limits::recursion`](crate::options::Limits::recursion): nested macro calls,
    /// includes and expressions.
    Recursion,
    /// [`Limits::template_bytes`](crate::options::Limits::template_bytes): the template's size.
    TemplateBytes,
    /// [`Limits::format_bytes`](crate::options::Limits::format_bytes): the text made by
    /// formatting values.
    FormatBytes,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Limit::Fuel => "fuel (instructions)",
            Limit::OutputBytes => "output size",
            Limit::Recursion => "recursion depth",
            Limit::TemplateBytes => "template size",
            Limit::FormatBytes => "formatting (bytes of text made from values)",
        })
    }
}

/// Everything that can go wrong reading, rendering or tokenizing a chat template.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The template does not parse, or failed while rendering (an unknown filter, a bad
    /// operation, an attribute outside the documented data): at `line` and `column` (1-based)
    /// of the template, when the engine knows them.
    #[error("chat template{}: {message}", where_(*.line, *.column))]
    Template {
        /// 1-based line in the template source.
        line: Option<usize>,
        /// 1-based column (in characters) in the template source.
        column: Option<usize>,
        /// What went wrong.
        message: String,
    },
    /// The template called `raise_exception(message)`: it refuses the conversation.
    #[error("chat template{} raised: {message}", where_(*.line, None))]
    Raised {
        /// 1-based line of the call, when known.
        line: Option<usize>,
        /// The template's message.
        message: String,
    },
    /// A render stopped at a limit.
    #[error("chat template: the {limit} limit ({max}) was reached")]
    Limit {
        /// Which limit.
        limit: Limit,
        /// Its value.
        max: u64,
    },
    /// The conversation (request JSON) is not what a chat request holds.
    #[error("conversation: {0}")]
    Conversation(String),
    /// The model has no such template, or its metadata is not what llama.cpp reads.
    #[error("model: {0}")]
    Model(String),
    /// Reading the model failed: gguf-core's error, unchanged.
    #[error(transparent)]
    Gguf(#[from] gguf_core::Error),
    /// Building the tokenizer or tokenizing the prompt failed.
    #[error(transparent)]
    Tokenizer(#[from] gguf_tokenizer::Error),
}

fn where_(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" at line {l}, column {c}"),
        (Some(l), None) => format!(" at line {l}"),
        _ => String::new(),
    }
}
