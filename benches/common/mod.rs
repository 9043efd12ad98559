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
#[allow(dead_code)]
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

/// A named benchmark case: one timed run per call.
#[allow(dead_code)]
pub type Case<'a> = (String, Box<dyn FnMut() -> Duration + 'a>);

/// Runs every case once per round, in turn, for `runs` rounds, so that
/// the page cache and the machine's load are alike for all; returns each
/// case's timings. As in [`best_of`], dirty pages of earlier runs are
/// written back (untimed) before each run. `check` runs after each case's
/// first run (untimed), to verify what it wrote.
#[allow(dead_code)] // each bench binary compiles this module; not all use it
pub fn interleaved(
    runs: usize,
    cases: &mut [Case<'_>],
    mut check: impl FnMut(&str),
) -> Vec<Vec<Duration>> {
    let mut times = vec![Vec::new(); cases.len()];
    for round in 0..runs {
        for ((name, f), t) in cases.iter_mut().zip(&mut times) {
            run(&mut Command::new("sync"));
            t.push(f());
            if round == 0 {
                check(name);
            }
        }
    }
    times
}

/// The minimum and median of some timings.
#[allow(dead_code)]
pub fn min_median(times: &[Duration]) -> (Duration, Duration) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    };
    (sorted[0], median)
}
