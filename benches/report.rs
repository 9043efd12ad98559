//! `gguf report`'s cost: the page's size, the time the whole process takes
//! to write it, against `gguf inspect` of the same model in the same run
//! (the baseline: it opens the same header and prints a summary), and,
//! with headless Chromium installed, the time from navigation to the load
//! event (tests/browser/report_page.py).
//!
//! Run with `cargo bench --bench report` (`-- --runs N`, default 10; the
//! best run is reported). Models: the Qwen2-shaped header the open
//! benchmarks read (151,936 tokens, 151,387 merges, 290 tensor infos;
//! generated into `<target>/bench-report/`) and, when `GGUF_GEMMA_MODEL`
//! names it, Gemma 3 270M.

mod common;

#[path = "../gguf-core/benches/common/qwen2.rs"]
mod qwen2;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{run, timed};

const GGUF: &str = env!("CARGO_BIN_EXE_gguf");

fn best(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().unwrap()
}

/// The best load time Chromium reports over `runs` loads, if it is
/// installed.
fn browser_ms(page: &Path, runs: usize) -> Option<f64> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/report_page.py");
    (0..runs)
        .map(|_| {
            let out = Command::new("python3")
                .arg(script)
                .arg(page)
                .output()
                .ok()?;
            let seen: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
            seen["load_ms"].as_f64()
        })
        .collect::<Option<Vec<f64>>>()
        .and_then(|v| v.into_iter().reduce(f64::min))
}

fn main() {
    let Some(runs) = common::runs("report", 10) else {
        return;
    };
    let dir = common::target_dir("report");
    std::fs::create_dir_all(&dir).unwrap();
    let qwen = dir.join("qwen2_header.gguf");
    std::fs::write(&qwen, qwen2::qwen2_header()).unwrap();
    let mut models: Vec<(&str, PathBuf)> = vec![("Qwen2-shaped header", qwen)];
    match std::env::var_os("GGUF_GEMMA_MODEL") {
        Some(g) => models.push(("Gemma 3 270M", g.into())),
        None => println!("skipped: Gemma 3 270M: set GGUF_GEMMA_MODEL to include it"),
    }
    for (name, model) in models {
        let page = dir.join("page.html");
        let report = best(runs, || {
            timed(|| {
                run(Command::new(GGUF)
                    .arg("report")
                    .arg(&model)
                    .arg("-o")
                    .arg(&page)
                    .stdout(Stdio::null()))
            })
        });
        let inspect = best(runs, || {
            timed(|| {
                run(Command::new(GGUF)
                    .arg("inspect")
                    .arg(&model)
                    .stdout(Stdio::null()))
            })
        });
        let size = std::fs::metadata(&page).unwrap().len();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{name}: page {size} bytes ({:.1} KiB); gguf report {:.1} ms, gguf inspect {:.1} ms \
             (report/inspect x{:.2}, best of {runs})",
            size as f64 / 1024.0,
            ms(report),
            ms(inspect),
            report.as_secs_f64() / inspect.as_secs_f64()
        );
        match browser_ms(&page, runs.min(5)) {
            Some(load) => println!(
                "{name}: Chromium load event after {load:.1} ms (best of {})",
                runs.min(5)
            ),
            None => println!(
                "skipped: {name}: the browser's load time (chromium-headless-shell not found)"
            ),
        }
    }
}
