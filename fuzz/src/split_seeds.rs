//! The `split` target's seeds, made by the library's own split writer:
//! each plain seed file is split by `Builder::write_split` into 2, 3 and 4
//! shards (and with a first shard holding only the metadata), each shard
//! set saved as one `split` input ([`shard_set`](crate::shard_set)),
//! opening a different shard each time; each file is also saved as a
//! structured input (re-split in-process with right split keys).
//!
//! The split target runs [`write_if_asked`] before fuzzing: with
//! `GGUF_FUZZ_SPLIT_SEEDS=BASE_DIR:OUT_DIR` in the environment it writes
//! the seeds of the files in BASE_DIR to OUT_DIR and exits (scripts/fuzz.sh
//! does this after the build). A separate program would need libFuzzer's
//! coverage hooks linked in, which only a fuzz target has.

use std::path::Path;

use gguf_core::write::{Builder, SplitOptions};
use gguf_core::Gguf;
use gguf_core::GgufFile;

use crate::{join_shard_set, MAX_SHARDS};

/// The environment variable that asks for the seeds.
pub const ENV: &str = "GGUF_FUZZ_SPLIT_SEEDS";

/// Seeds larger than this are skipped (fuzz.sh's `-max_len`).
const MAX_SEED: usize = 65536;

/// With [`ENV`] set, writes the seeds and exits the process.
pub fn write_if_asked() {
    let Some(dirs) = std::env::var_os(ENV) else {
        return;
    };
    let dirs: Vec<_> = std::env::split_paths(&dirs).collect();
    let [base, out] = dirs.as_slice() else {
        eprintln!("{ENV} must be BASE_DIR:OUT_DIR");
        std::process::exit(2);
    };
    match write_seeds(base, out) {
        Ok(n) => {
            println!("split seeds: {n} in {}", out.display());
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("split seeds: {e}");
            std::process::exit(1);
        }
    }
}

/// Writes the seeds of every file in `base` to `out`; returns how many.
pub fn write_seeds(base: &Path, out: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(out)?;
    let mut inputs: Vec<_> = std::fs::read_dir(base)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    inputs.sort();
    let mut written = 0;
    for input in inputs {
        let bytes = std::fs::read(&input)?;
        let stem = input
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut seeds: Vec<(String, Vec<u8>)> = shard_sets(&bytes)?
            .into_iter()
            .enumerate()
            .map(|(i, (control, files))| {
                (format!("{stem}-split{i}"), join_shard_set(control, &files))
            })
            .collect();
        // Structured inputs (bit 4): re-split with right split keys (the
        // key choices are zeros) into 2 and 4 shards.
        for control in [0x30u8, 0x71, 0xf2] {
            let keys = vec![0; 3 * MAX_SHARDS];
            seeds.push((
                format!("{stem}-structured{control:02x}"),
                join_shard_set(control, &[bytes.clone(), keys]),
            ));
        }
        for (name, seed) in seeds {
            if seed.len() <= MAX_SEED {
                std::fs::write(out.join(name), seed)?;
                written += 1;
            }
        }
    }
    Ok(written)
}

/// The shard sets `write_split` makes of `bytes` (none when it does not
/// parse or cannot be split), each with the control byte that opens one
/// of its shards.
fn shard_sets(bytes: &[u8]) -> std::io::Result<Vec<(u8, Vec<Vec<u8>>)>> {
    let Ok(file) = GgufFile::open(bytes) else {
        return Ok(Vec::new());
    };
    let total = file.tensor_count();
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
    let mut sets = Vec::new();
    for (i, opts) in options.iter().enumerate() {
        let dir = tempfile::tempdir()?;
        let Ok(mut b) = Builder::from_file(&file) else {
            break;
        };
        // Files the writer refuses (bad tensor data, say) give no seed.
        let Ok(plan) = b.write_split(dir.path().join("m.gguf"), opts) else {
            continue;
        };
        if (2..=MAX_SHARDS).contains(&plan.len()) {
            let files = plan
                .iter()
                .map(|s| std::fs::read(&s.path))
                .collect::<std::io::Result<Vec<_>>>()?;
            sets.push(((i % plan.len()) as u8, files));
        }
    }
    Ok(sets)
}
