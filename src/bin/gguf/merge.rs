//! `gguf merge ANY_SHARD OUT`.

use std::path::PathBuf;

use gguf::write::{Builder, WriteMode};

#[derive(clap::Args)]
pub struct Args {
    /// The model to read: a path (any shard of a split model stands for
    /// the whole model), ollama:NAME[:TAG] or a URL (every tensor is
    /// fetched, one range request each).
    input: PathBuf,
    /// The single file to write (atomically).
    output: PathBuf,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// Writes the whole model as one file: the first shard's metadata without
/// the split keys and every tensor in order, the same bytes as the model
/// written unsplit.
pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let model = crate::open::open_model(&args.input, &args.source)?;
    // A merged file over one shard would leave the others beside it.
    let shards = crate::open::local_files(&model);
    let shards: Vec<&std::path::Path> = shards.iter().map(PathBuf::as_path).collect();
    crate::open::guard_outputs(&[args.output.as_path()], &shards)?;
    let mut b = Builder::from_model(&model)
        .map_err(|e| format!("{}: {e}", crate::open::shown(&args.input)))?;
    let layout = crate::progress::write_to_path(&mut b, &args.output, WriteMode::Single)?;
    crate::print(&format!(
        "{}: {} bytes, {} tensors from {} shard(s)",
        args.output.display(),
        layout.file_len(),
        layout.tensors.len(),
        model.shard_count()
    ))
}
