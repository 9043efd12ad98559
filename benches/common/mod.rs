//! What the whole-file benchmarks (`write`, `split`) share: where their
//! inputs live, how a run is started and timed.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// `<target>/bench-NAME`, where a benchmark keeps its generated input.
/// Benches run with the package root as working directory.
pub fn target_dir(name: &str) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"))
        .join(format!("bench-{name}"))
}

/// The number of runs per case (`-- --runs N`, else `default`), or `None`
/// after saying so when not run by `cargo bench`: `cargo test
/// --all-targets` runs bench binaries without `--bench`, where building
/// them is the check and the 1 GiB runs would only cost time.
pub fn runs(name: &str, default: usize) -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("skipped: the {name} benchmark runs with `cargo bench --bench {name}`");
        return None;
    }
    Some(
        args.iter()
            .position(|a| a == "--runs")
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(default),
    )
}

/// Runs `cmd`, which must succeed.
pub fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The best of `runs` timings of `f`. Dirty pages of earlier runs are
/// written back (untimed) first, so one case's writeback does not slow
/// the next.
pub fn best_of(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs)
        .map(|_| {
            run(&mut Command::new("sync"));
            f()
        })
        .min()
        .unwrap()
}

/// How long `f` takes.
pub fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}
