//! A Hugging Face tokenizer that cannot become llama.cpp's `tokenizer.*`
//! metadata (feature `import`).

use std::path::PathBuf;

/// Why the tokenizer files of a Hugging Face checkpoint cannot be turned
/// into the `tokenizer.*` keys llama.cpp's converter writes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VocabError {
    /// A tokenizer file is missing something, or holds a value of the wrong
    /// type or out of range (the key or token index is in `reason`).
    #[error("{}: {reason}", file.display())]
    BadFile {
        /// The file (`tokenizer.json`, `tokenizer.model`, `config.json`, ...).
        file: PathBuf,
        /// What is wrong, and where in the file.
        reason: String,
    },
    /// The BPE pre-tokenizer's hash is not in the converter's list of known
    /// tokenizers, and no name was given for it.
    #[error(
        "{}: the BPE pre-tokenizer is not one llama.cpp's converter knows (check-text hash {hash}); \
         if it splits text like a known one, pass --pre-tokenizer NAME (e.g. llama-bpe, qwen2, gpt-2)",
        file.display()
    )]
    UnknownPreTokenizer {
        /// The `tokenizer.json` hashed.
        file: PathBuf,
        /// The converter's `chkhsh`: sha256 of the ids' Python list text.
        hash: String,
    },
    /// A pre-tokenizer name given by the user that llama.cpp does not know.
    #[error("pre-tokenizer {name:?} is not a name llama.cpp knows (e.g. llama-bpe, qwen2, gpt-2, default)")]
    UnknownPreTokenizerName {
        /// The name given.
        name: String,
    },
    /// The architecture has no tokenizer rules here.
    #[error("no tokenizer conversion for architecture {arch:?} (supported: llama, qwen2, gemma3)")]
    UnsupportedArch {
        /// The GGUF architecture name.
        arch: String,
    },
    /// No tokenizer file the converter would read for this architecture.
    #[error("{}: no tokenizer found ({expected})", dir.display())]
    NoTokenizer {
        /// The checkpoint directory.
        dir: PathBuf,
        /// The files looked for.
        expected: String,
    },
}
