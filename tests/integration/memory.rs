//! Bounded memory: writing a 2 GiB file from closure sources, and copying
//! it through `Builder::from_file` of its memory map, each in a child
//! process that reports its own peak RSS (VmHWM).
//!
//! The child is this test binary, re-run on the ignored `memory_child`
//! test with `GGUF_MEMORY_CHILD` set.

use std::path::{Path, PathBuf};
use std::process::Command;

use gguf::write::Builder;
use gguf::{GgmlType, GgufFile};

const MIB: u64 = 1 << 20;
const TENSORS: u64 = 16;
const TENSOR_BYTES: u64 = 128 * MIB;
const PIECE: usize = MIB as usize;

/// The byte at `offset` of tensor `t`: each 1 MiB piece is filled with a
/// value derived from its tensor and piece index.
fn pattern(t: u64, offset: u64) -> u8 {
    (t * 31 + offset / MIB * 7 + 1) as u8
}

fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/self/status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmHWM value");
    kib * 1024
}

fn write_from_closures(out: &Path) {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    for t in 0..TENSORS {
        b.add_tensor_fn(
            format!("blk.{t}.weight"),
            GgmlType::F32,
            &[TENSOR_BYTES / 4],
            move |w| {
                let mut piece = vec![0u8; PIECE];
                for p in 0..TENSOR_BYTES / MIB {
                    piece.fill(pattern(t, p * MIB));
                    w.write_all(&piece)?;
                }
                Ok(())
            },
        )
        .unwrap();
    }
    b.write_to_path(out).unwrap();
}

fn copy_through_map(input: &Path, out: &Path) {
    let file = GgufFile::open(input).unwrap();
    Builder::from_file(&file)
        .unwrap()
        .write_to_path(out)
        .unwrap();
}

/// The child side: does one job, then prints its peak RSS.
#[test]
#[ignore = "run in a child process by bounded_memory_*"]
fn memory_child() {
    let job = std::env::var("GGUF_MEMORY_CHILD").expect("GGUF_MEMORY_CHILD");
    let a = PathBuf::from(std::env::var("GGUF_MEMORY_A").unwrap());
    let b = PathBuf::from(std::env::var("GGUF_MEMORY_B").unwrap_or_default());
    match job.as_str() {
        "closure" => write_from_closures(&a),
        "file" => copy_through_map(&a, &b),
        other => panic!("unknown job {other}"),
    }
    println!("PEAK_RSS={}", peak_rss());
}

fn run_child(job: &str, a: &Path, b: &Path) -> u64 {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "integration::memory::memory_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("GGUF_MEMORY_CHILD", job)
        .env("GGUF_MEMORY_A", a)
        .env("GGUF_MEMORY_B", b)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child {job} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split_once("PEAK_RSS=").map(|(_, n)| n))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("child {job} printed no PEAK_RSS:\n{stdout}"))
}

fn free_bytes(dir: &Path) -> Option<u64> {
    let out = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(dir)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)?
        .trim()
        .parse()
        .ok()
}

#[test]
#[cfg(target_os = "linux")]
fn bounded_memory_writing_2_gib_from_closures_and_from_a_mapped_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let need = 2 * TENSORS * TENSOR_BYTES + 64 * MIB;
    if let Some(free) = free_bytes(dir.path()) {
        assert!(
            free > need,
            "the memory test needs {} MiB free in {}, only {} MiB are",
            need / MIB,
            dir.path().display(),
            free / MIB
        );
    }
    let big = dir.path().join("big.gguf");
    let copy = dir.path().join("copy.gguf");
    let limit = 64 * MIB + TENSOR_BYTES;

    let closure_peak = run_child("closure", &big, Path::new(""));
    let file_peak = run_child("file", &big, &copy);
    eprintln!(
        "peak RSS: closures {} MiB, file-backed {} MiB (limit {} MiB)",
        closure_peak / MIB,
        file_peak / MIB,
        limit / MIB
    );
    assert!(
        closure_peak < limit,
        "closure sources: peak RSS {closure_peak}"
    );
    assert!(file_peak < limit, "file sources: peak RSS {file_peak}");
    // Tighter than the bound above: closures write 1 MiB pieces and file
    // sources are copied in 4 MiB chunks, so no whole tensor is ever held.
    assert!(
        closure_peak < 64 * MIB && file_peak < 64 * MIB,
        "a whole tensor seems to be held in memory: {closure_peak} / {file_peak} bytes"
    );

    // The files hold what was written: same size, same layout, and sampled
    // pieces of every tensor carry their pattern in both.
    let a = GgufFile::open(&big).unwrap();
    let b = GgufFile::open(&copy).unwrap();
    assert!(a.file_len() > TENSORS * TENSOR_BYTES);
    assert_eq!(a.file_len(), b.file_len());
    assert_eq!(
        a.bytes()[..a.data_offset() as usize],
        b.bytes()[..b.data_offset() as usize]
    );
    assert_eq!(a.tensor_count() as u64, TENSORS);
    for (t, (ta, tb)) in a.tensors().zip(b.tensors()).enumerate() {
        let (da, db) = (ta.data().unwrap(), tb.data().unwrap());
        assert_eq!(da.len() as u64, TENSOR_BYTES);
        for off in [0, 5 * MIB + 17, TENSOR_BYTES - 1] {
            let want = pattern(t as u64, off);
            assert_eq!(da[off as usize], want, "tensor {t} at {off}");
            assert_eq!(db[off as usize], want, "copy: tensor {t} at {off}");
        }
    }
    drop((a, b));
    std::fs::remove_file(&big).unwrap();
    std::fs::remove_file(&copy).unwrap();
}
