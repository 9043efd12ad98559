//! Writes the seeds of the `split` target: each GGUF file given is split
//! by `Builder::write_split` into 2, 3 and 4 shards (and with a first
//! shard holding only the metadata), and each shard set is saved as one
//! `split` input (`gguf_fuzz::shard_set`), opening a different shard each
//! time. Run by scripts/fuzz.sh after the build.
//!
//!     split_seeds OUT_DIR FILE...

use std::path::Path;

use gguf_core::write::{Builder, SplitOptions};
use gguf_core::GgufFile;
use gguf_fuzz::{join_shard_set, MAX_SHARDS};

/// Seeds larger than this are skipped (fuzz.sh's `-max_len`).
const MAX_SEED: usize = 65536;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, inputs)) = args.split_first() else {
        eprintln!("usage: split_seeds OUT_DIR FILE...");
        std::process::exit(2);
    };
    std::fs::create_dir_all(out).expect("create OUT_DIR");
    let mut written = 0;
    for input in inputs {
        let Ok(bytes) = std::fs::read(input) else {
            continue;
        };
        let stem = Path::new(input)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (i, (control, files)) in shard_sets(&bytes).into_iter().enumerate() {
            let seed = join_shard_set(control, &files);
            if seed.len() <= MAX_SEED {
                let path = Path::new(out).join(format!("{stem}-split{i}"));
                std::fs::write(path, seed).expect("write seed");
                written += 1;
            }
        }
        // The same file as a structured input (bit 4): re-split with
        // right split keys, in 2 and 4 shards.
        for control in [0x30u8, 0x71, 0xf2] {
            let seed = join_shard_set(control, &[bytes.clone(), vec![0; 3 * MAX_SHARDS]]);
            if seed.len() <= MAX_SEED {
                let path = Path::new(out).join(format!("{stem}-structured{control:02x}"));
                std::fs::write(path, seed).expect("write seed");
                written += 1;
            }
        }
    }
    println!("split_seeds: {written} seeds in {out}");
}

/// The shard sets `write_split` makes of `bytes` (none when it does not
/// parse or cannot be split), each with the control byte that opens one
/// of its shards.
fn shard_sets(bytes: &[u8]) -> Vec<(u8, Vec<Vec<u8>>)> {
    let Ok(file) = GgufFile::from_bytes(bytes) else {
        return Vec::new();
    };
    let total = file.tensor_count();
    let mut sets = Vec::new();
    let mut options = Vec::new();
    for n in 2..=MAX_SHARDS {
        if total >= n {
            options.push(SplitOptions::default().max_tensors(total.div_ceil(n)));
        }
    }
    if total > 0 {
        options.push(
            SplitOptions::default()
                .max_tensors(total.div_ceil(MAX_SHARDS - 1))
                .metadata_only_first(true),
        );
    }
    for (i, opts) in options.iter().enumerate() {
        let Ok(dir) = tempfile::tempdir() else {
            continue;
        };
        let Ok(mut b) = Builder::from_file(&file) else {
            return sets;
        };
        let Ok(plan) = b.write_split(dir.path().join("m.gguf"), opts) else {
            continue;
        };
        if plan.len() < 2 || plan.len() > MAX_SHARDS {
            continue;
        }
        let files: Option<Vec<Vec<u8>>> = plan.iter().map(|s| std::fs::read(&s.path).ok()).collect();
        if let Some(files) = files {
            sets.push(((i % plan.len()) as u8, files));
        }
    }
    sets
}
