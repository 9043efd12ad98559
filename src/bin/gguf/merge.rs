//! `gguf merge ANY_SHARD OUT`.

use std::path::PathBuf;

use gguf::write::Builder;
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
    let mut b = Builder::from_model(&model)?;
    let bar = crate::progress::Bar::new();
    let mut progress = |done: u64, total: u64| bar.update(done, total);
    let layout = b
        .write_to_path_with_progress(&args.output, &mut progress)
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    drop(bar);
    crate::print(&format!(
        "{}: {} bytes, {} tensors from {} shard(s)",
        args.output.display(),
        layout.file_len(),
        layout.tensors.len(),
        model.shard_count()
    ))
}
