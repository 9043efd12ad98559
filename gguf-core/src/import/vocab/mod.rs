//! The tokenizer part of the import: a stub until the tokenizer module
//! lands (it returns no `tokenizer.*` key).

use std::path::Path;

use crate::error::Result;
use crate::write::MetaValue;

/// The `tokenizer.*` keys llama.cpp's converter writes for the checkpoint
/// in `dir` (GGUF architecture `arch`), in its order and with its types.
pub(crate) fn vocab_metadata(
    dir: &Path,
    arch: &str,
    config: &serde_json::Value,
    pre_tokenizer: Option<&str>,
) -> Result<Vec<(String, MetaValue<'static>)>> {
    let _ = (dir, arch, config, pre_tokenizer);
    Ok(Vec::new())
}
