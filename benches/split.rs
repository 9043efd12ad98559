//! Split benchmark: splitting a ~1 GiB file into 5 shards and merging them
//! back, against `cp` of the same bytes in the same run; opening the
//! 5-shard model against opening the unsplit file.
//!
//! Run with `cargo bench --bench split` (`-- --runs N` for the number of
//! runs per case; the best is reported). The input is generated once into
//! `<target>/bench-split/` and reused.
//!
//! Split and merge write complete, fsynced files (atomic replacement), so
//! `cp` is timed alone and followed by `sync` of the copy.

mod common;

use common::{best_of, run, timed};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gguf::write::{Builder, SplitOptions};
use gguf::{GgmlType, GgufFile, Model};

const TENSORS: u64 = 40;
const ROWS: u64 = 6553;
const COLS: u64 = 2048;

/// 40 F16 matrices of 2048 x 6553 with a cheap non-constant pattern and a
/// 32k-token vocabulary: about 1.07 GB.
fn generate(path: &Path) {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    let tokens: Vec<String> = (0..32000).map(|i| format!("▁tok{i}")).collect();
    b.set("tokenizer.ggml.tokens", tokens).unwrap();
    for t in 0..TENSORS {
        let n = COLS * ROWS * 2;
        b.add_tensor_fn(
            format!("blk.{t}.w"),
            GgmlType::F16,
            &[COLS, ROWS],
            move |w| {
                let mut piece = vec![0u8; 1 << 20];
                let mut left = n;
                let mut i = t;
                while left > 0 {
                    for (j, x) in piece.iter_mut().enumerate() {
                        *x = (i as usize + j * 7) as u8;
                    }
                    i += 1;
                    let k = left.min(piece.len() as u64) as usize;
                    w.write_all(&piece[..k])?;
                    left -= k as u64;
                }
                Ok(())
            },
        )
        .unwrap();
    }
    b.write_to_path(path).unwrap();
}

/// Mean time of `f` over `n` calls.
fn mean(n: u32, mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed() / n
}

fn main() {
    let Some(runs) = common::runs("split", 3) else {
        return;
    };
    let dir = common::target_dir("split");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("model-1g.gguf");
    if GgufFile::open(&input).is_err() {
        eprintln!("generating {} ...", input.display());
        generate(&input);
    }
    let size = std::fs::metadata(&input).unwrap().len();
    let _ = std::fs::read(&input).unwrap(); // warm the page cache
    println!(
        "input: {} ({:.1} MB), best of {runs} runs",
        input.display(),
        size as f64 / 1e6
    );

    let copy = dir.join("copy.gguf");
    let split_out = dir.join("split.gguf");
    let merged = dir.join("merged.gguf");
    let opts = SplitOptions::default().max_size(size / 5 + 1);
    let shard_paths = || -> Vec<PathBuf> {
        Builder::from_model(&Model::open(&input).unwrap())
            .unwrap()
            .plan_split(&split_out, &opts)
            .unwrap()
            .into_iter()
            .map(|s| s.path)
            .collect()
    };
    let shards = shard_paths();
    println!("split into {} shards", shards.len());

    let cp = best_of(runs, || {
        let _ = std::fs::remove_file(&copy);
        timed(|| run(Command::new("cp").arg(&input).arg(&copy)))
    });
    let cp_sync = best_of(runs, || {
        let _ = std::fs::remove_file(&copy);
        timed(|| {
            run(Command::new("cp").arg(&input).arg(&copy));
            run(Command::new("sync").arg(&copy));
        })
    });
    let split = best_of(runs, || {
        for s in &shards {
            let _ = std::fs::remove_file(s);
        }
        timed(|| {
            let model = Model::open(&input).unwrap();
            Builder::from_model(&model)
                .unwrap()
                .write_split(&split_out, &opts)
                .unwrap();
        })
    });
    let merge = best_of(runs, || {
        let _ = std::fs::remove_file(&merged);
        timed(|| {
            let model = Model::open(&shards[0]).unwrap();
            Builder::from_model(&model)
                .unwrap()
                .write_to_path(&merged)
                .unwrap();
        })
    });
    assert!(
        std::fs::read(&merged).unwrap() == std::fs::read(&input).unwrap(),
        "merge differs"
    );

    let secs = |d: Duration| d.as_secs_f64();
    let mbps = |d: Duration| size as f64 / 1e6 / secs(d);
    println!(
        "{:28} {:>9} {:>10} {:>9} {:>11}",
        "case", "seconds", "MB/s", "vs cp", "vs cp+sync"
    );
    for (name, d) in [
        ("cp", cp),
        ("cp + sync", cp_sync),
        ("split (5 shards, fsynced)", split),
        ("merge (fsynced)", merge),
    ] {
        println!(
            "{name:28} {:>9.3} {:>10.0} {:>8.2}x {:>10.2}x",
            secs(d),
            mbps(d),
            secs(d) / secs(cp),
            secs(d) / secs(cp_sync)
        );
    }

    let n = 200;
    let open_single = (0..runs)
        .map(|_| mean(n, || drop(Model::open(&input).unwrap())))
        .min()
        .unwrap();
    let open_file = (0..runs)
        .map(|_| mean(n, || drop(GgufFile::open(&input).unwrap())))
        .min()
        .unwrap();
    let open_split = (0..runs)
        .map(|_| mean(n, || drop(Model::open(&shards[2]).unwrap())))
        .min()
        .unwrap();
    println!("\nopen (mean of {n}, best of {runs}):");
    println!(
        "  GgufFile::open unsplit   {:>9.1} us",
        open_file.as_secs_f64() * 1e6
    );
    println!(
        "  Model::open unsplit      {:>9.1} us",
        open_single.as_secs_f64() * 1e6
    );
    println!(
        "  Model::open 5 shards     {:>9.1} us  ({:.2}x the unsplit model)",
        open_split.as_secs_f64() * 1e6,
        secs(open_split) / secs(open_single)
    );
    for s in &shards {
        let _ = std::fs::remove_file(s);
    }
    let _ = std::fs::remove_file(&merged);
    let _ = std::fs::remove_file(&copy);
}
