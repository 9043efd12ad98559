//! Import of Hugging Face checkpoints (placeholder until the import
//! module lands: only the tokenizer part is here).

// Nothing calls the tokenizer part until the import command does.
#[allow(dead_code)]
mod vocab;
