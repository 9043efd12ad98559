//! Splits a model into shards, reads the shards as one model, and merges
//! them back into a file byte-identical to the original.
//!
//! ```sh
//! cargo run --example split_merge                 # the bundled sample
//! cargo run --example split_merge -- model.gguf   # any model (shards go to a temp dir)
//! ```
//!
//! The shards have the same bytes as gguf-py's `GGUFWriter` with
//! `split_max_tensors`; `gguf split` / `gguf merge` do the same from the shell.

use gguf::write::{Builder, SplitOptions};
use gguf::{Gguf, GgufFile, Model};

fn main() -> gguf::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf").into());
    let dir = tempfile::tempdir()?;
    let file = GgufFile::open(&path)?;

    // At most 8 tensors per shard, the metadata alone in the first.
    let opts = SplitOptions::default()
        .max_tensors(8)
        .metadata_only_first(true);
    let shards = Builder::from_file(&file)?.write_split(dir.path().join("tiny.gguf"), &opts)?;
    for shard in &shards {
        let name = shard.path.file_name().unwrap_or_default().to_string_lossy();
        let len = std::fs::metadata(&shard.path)?.len();
        println!("{name}: {len} bytes");
    }

    // Any shard opens the whole model; each tensor borrows from its shard.
    let model = Model::open(&shards[shards.len() - 1].path)?;
    assert_eq!(model.tensor_count(), file.tensor_count());
    for (shard, t) in model.tensors_with_shard().take(3) {
        println!("{} is in shard {}", t.name(), shard + 1);
    }

    let merged = dir.path().join("merged.gguf");
    Builder::from_model(&model)?.write_to_path(&merged)?;
    let same = std::fs::read(&merged)? == std::fs::read(&path)?;
    println!(
        "merged {} shards: {}",
        shards.len(),
        if same {
            "byte-identical to the original"
        } else {
            "differs from the original (its layout was not canonical)"
        }
    );
    Ok(())
}
