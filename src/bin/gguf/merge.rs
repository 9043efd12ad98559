//! `gguf merge ANY_SHARD OUT`.

use std::path::PathBuf;

use gguf::write::{Builder, WriteMode};
use gguf::Model;

#[derive(clap::Args)]
pub struct Args {
    /// Any shard of the split model (its siblings are found by name).
    input: PathBuf,
    /// The single file to write (atomically).
    output: PathBuf,
}

/// Writes the whole model as one file: the first shard's metadata without
/// the split keys and every tensor in order, the same bytes as the model
/// written unsplit.
pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let model = Model::open(&args.input)?;
    let mut b =
        Builder::from_model(&model).map_err(|e| format!("{}: {e}", args.input.display()))?;
    let layout = crate::progress::write_to_path(&mut b, &args.output, WriteMode::Single)?;
    crate::print(&format!(
        "{}: {} bytes, {} tensors from {} shard(s)",
        args.output.display(),
        layout.file_len(),
        layout.tensors.len(),
        model.shard_count()
    ))
}
