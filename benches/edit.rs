//! Editor benchmark: in-place edits against a full rewrite and `cp`, on
//! files of several sizes, to show that an in-place edit costs the same
//! whatever the size of the file.
//!
//! ```text
//! cargo bench --bench edit                # 256 MiB and 1 GiB files
//! cargo bench --bench edit -- 64 256      # other sizes, in MiB
//! GGUF_BENCH_DIR=/path cargo bench --bench edit   # where the files go
//! ```
//!
//! Run by `cargo test --all-targets` (no `--bench` argument), it only
//! makes a quick smoke run on a 16 MiB file.
//!
//! For each size it writes a model-like file (a 32k-token vocabulary, a
//! chat template, 16 MiB tensors) with 64 KiB of metadata slack, and a
//! copy without slack, then times (median of several runs):
//! - open + set + plan, the CPU part of an edit (no write, no fsync);
//! - `general.name` edited in place (Editor::open + set + commit);
//! - `tokenizer.chat_template` set to a 4 KiB string in place;
//! - a full rewrite: the file without slack, `general.name` set to a
//!   string that does not fit in the padding (temp file, data copied,
//!   fsync, rename);
//! - `cp` of the file, and `cp` followed by an fsync of the copy.
//!
//! The files are deleted afterwards. Page cache is warm (the files were
//! just written); every editor commit fsyncs (journal, directory, file,
//! directory again), `cp` alone does not. Each group starts after
//! sync(2) and a short pause, so it does not pay for earlier writeback;
//! in-place figures are dominated by fsync latency, which on a shared
//! disk varies from run to run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gguf::edit::{Commit, Editor};
use gguf::write::Builder;
use gguf::GgmlType;

const MIB: u64 = 1 << 20;
const TENSOR_BYTES: u64 = 16 * MIB;

fn build(path: &Path, size_mib: u64, slack: Option<u64>) {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.name", "bench model").unwrap();
    b.set("llama.context_length", 4096u32).unwrap();
    let tokens: Vec<String> = (0..32_000).map(|i| format!("<tok_{i}>")).collect();
    b.set(
        "tokenizer.ggml.tokens",
        tokens.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .unwrap();
    b.set("tokenizer.chat_template", "{{ messages }}".repeat(20))
        .unwrap();
    if let Some(n) = slack {
        b.reserve_metadata(n).unwrap();
    }
    let n = (size_mib * MIB).div_ceil(TENSOR_BYTES);
    for i in 0..n {
        let seed = i as u8;
        b.add_tensor_fn(
            format!("blk.{i}.weight"),
            GgmlType::F32,
            &[TENSOR_BYTES / 4],
            move |w| {
                let chunk: Vec<u8> = (0..MIB).map(|j| (j as u8) ^ seed).collect();
                for _ in 0..TENSOR_BYTES / MIB {
                    w.write_all(&chunk)?;
                }
                Ok(())
            },
        )
        .unwrap();
    }
    b.write_to_path(path).unwrap();
}

struct Stats {
    runs: Vec<Duration>,
}

impl Stats {
    fn median_ms(&self) -> f64 {
        let mut r = self.runs.clone();
        r.sort();
        r[r.len() / 2].as_secs_f64() * 1e3
    }
    fn min_ms(&self) -> f64 {
        self.runs.iter().min().unwrap().as_secs_f64() * 1e3
    }
    fn max_ms(&self) -> f64 {
        self.runs.iter().max().unwrap().as_secs_f64() * 1e3
    }
}

/// Flushes everything to disk and lets it settle, so that one
/// measurement does not pay for the writeback of the previous one.
fn settle() {
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    std::thread::sleep(Duration::from_millis(500));
}

fn time(runs: usize, mut f: impl FnMut(usize)) -> Stats {
    settle();
    f(usize::MAX); // warm-up
    Stats {
        runs: (0..runs)
            .map(|i| {
                let t = Instant::now();
                f(i);
                t.elapsed()
            })
            .collect(),
    }
}

fn edit(path: &Path, key: &str, value: String) -> Commit {
    let mut ed = Editor::open(path).unwrap();
    ed.set(key, value).unwrap();
    ed.commit().unwrap()
}

fn free_bytes(dir: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: statvfs writes into the zeroed struct we own.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) != 0 {
            return u64::MAX;
        }
        s.f_bavail as u64 * s.f_frsize as u64
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this
    // binary without it: then only a quick smoke run on a small file.
    let bench = args.iter().any(|a| a == "--bench");
    let sizes: Vec<u64> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse().expect("sizes are in MiB"))
        .collect();
    let sizes = match (sizes.is_empty(), bench) {
        (false, _) => sizes,
        (true, true) => vec![256, 1024],
        (true, false) => vec![8],
    };
    let (in_place_runs, heavy_runs) = if bench { (15, 5) } else { (3, 1) };
    if !bench {
        println!("smoke run (for the figures: cargo bench --bench edit)");
    }
    let root = std::env::var_os("GGUF_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::Builder::new()
        .prefix("gguf-edit-bench-")
        .tempdir_in(&root)
        .unwrap();

    println!(
        "{:>9} | {:>22} | {:>22} | {:>22} | {:>22} | {:>22} | {:>22}",
        "file",
        "open+plan (no write)",
        "in place general.name",
        "in place 4 KiB templ.",
        "rewrite (no slack)",
        "cp",
        "cp + fsync"
    );
    let mut in_place_medians = Vec::new();
    for &mib in &sizes {
        // The slack file, a copy without slack, a cp target, a temp file.
        let need = 4 * mib * MIB + 256 * MIB;
        let free = free_bytes(dir.path());
        assert!(
            free > need,
            "{} has {} MiB free, {} MiB needed",
            dir.path().display(),
            free / MIB,
            need / MIB
        );
        let slack = dir.path().join(format!("slack-{mib}.gguf"));
        let plain = dir.path().join(format!("plain-{mib}.gguf"));
        let copy = dir.path().join(format!("copy-{mib}.gguf"));
        build(&slack, mib, Some(64 << 10));
        build(&plain, mib, None);
        let len = std::fs::metadata(&slack).unwrap().len();

        // The CPU part of an edit: open, queue, decide (no write, no fsync).
        let plan = time(in_place_runs, |i| {
            let mut ed = Editor::open(&slack).unwrap();
            ed.set("general.name", format!("bench model {i}")).unwrap();
            let c = ed.plan().unwrap();
            assert!(matches!(c, Commit::InPlace { .. }), "{c:?}");
        });
        let name = time(in_place_runs, |i| {
            let c = edit(&slack, "general.name", format!("bench model {i}"));
            assert!(matches!(c, Commit::InPlace { .. }), "{c:?}");
        });
        let template = time(in_place_runs, |i| {
            let v = format!("{:<4096}", format!("template {i}"));
            let c = edit(&slack, "tokenizer.chat_template", v);
            assert!(matches!(c, Commit::InPlace { .. }), "{c:?}");
        });
        // Alternate between two lengths that both leave the aligned block.
        // No slack reserved: each run is a rewrite (with the default
        // reservation the second would be in place).
        let rewrite = time(heavy_runs, |i| {
            let n = if i % 2 == 0 { 4000 } else { 8000 };
            let mut ed = Editor::open(&plain).unwrap();
            ed.reserve_on_rewrite(0).unwrap();
            ed.set("general.name", "r".repeat(n)).unwrap();
            let c = ed.commit().unwrap();
            assert!(matches!(c, Commit::Rewritten { .. }), "{c:?}");
        });
        let cp = time(heavy_runs, |_| {
            let st = Command::new("cp").arg(&slack).arg(&copy).status().unwrap();
            assert!(st.success());
            std::fs::remove_file(&copy).unwrap();
        });
        let cp_sync = time(heavy_runs, |_| {
            let st = Command::new("cp").arg(&slack).arg(&copy).status().unwrap();
            assert!(st.success());
            std::fs::File::open(&copy).unwrap().sync_all().unwrap();
            std::fs::remove_file(&copy).unwrap();
        });
        let cell = |s: &Stats| {
            format!(
                "{:>8.2} ({:.1}-{:.1})",
                s.median_ms(),
                s.min_ms(),
                s.max_ms()
            )
        };
        println!(
            "{:>5} MiB | {:>22} | {:>22} | {:>22} | {:>22} | {:>22} | {:>22}",
            len / MIB,
            cell(&plan),
            cell(&name),
            cell(&template),
            cell(&rewrite),
            cell(&cp),
            cell(&cp_sync)
        );
        in_place_medians.push((
            mib,
            name.median_ms(),
            template.median_ms(),
            plan.median_ms(),
        ));
        for p in [&slack, &plain] {
            std::fs::remove_file(p).unwrap();
        }
    }
    println!("(median ms over {in_place_runs} in-place / {heavy_runs} other runs; min-max in parentheses)");
    if let [(a, na, ta, pa), .., (b, nb, tb, pb)] = in_place_medians[..] {
        println!(
            "in-place time {b} MiB vs {a} MiB: open+plan x{:.2}, general.name x{:.2}, \
             chat template x{:.2} (file x{:.1})",
            pb / pa,
            nb / na,
            tb / ta,
            b as f64 / a as f64
        );
    }
}
