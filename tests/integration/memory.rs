//! Bounded memory: writing a 2 GiB file from closure sources, and copying
//! it through `Builder::from_file` of its memory map, each in a child
//! process that reports its own peak RSS (VmHWM).
//!
//! The child is this test binary, re-run on the ignored `memory_child`
//! test with `GGUF_MEMORY_CHILD` set.

use std::path::{Path, PathBuf};
use std::process::Command;

use gguf::write::Builder;
use gguf::{GgmlType, Gguf, GgufFile};

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

/// Spacing of the bytes the streaming child reports back.
const SAMPLE_STEP: u64 = MIB + 7;

/// Keeps every `SAMPLE_STEP`-th byte written and counts them all.
struct Sampler {
    pos: u64,
    samples: Vec<u8>,
}

impl std::io::Write for Sampler {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let end = self.pos + buf.len() as u64;
        let mut next = self.pos.div_ceil(SAMPLE_STEP) * SAMPLE_STEP;
        while next < end {
            self.samples.push(buf[(next - self.pos) as usize]);
            next += SAMPLE_STEP;
        }
        self.pos = end;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Through `write` to a plain writer: no kernel copy, so the data is read
/// from the map in chunks whose pages are released after use. The output
/// is sampled rather than stored, to keep the test fast.
fn stream_through_map(input: &Path) {
    let file = GgufFile::open(input).unwrap();
    let mut sampler = Sampler {
        pos: 0,
        samples: Vec::new(),
    };
    Builder::from_file(&file)
        .unwrap()
        .write(&mut sampler)
        .unwrap();
    let hex: String = sampler.samples.iter().map(|b| format!("{b:02x}")).collect();
    println!("LEN={} SAMPLES={hex}", sampler.pos);
}

/// Through `write_to_path`: file to file, copied by the kernel on Linux.
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
        "file-stream" => stream_through_map(&a),
        other => panic!("unknown job {other}"),
    }
    println!("PEAK_RSS={}", peak_rss());
}

/// Runs one job in a child process; returns its peak RSS and its output.
fn run_child(job: &str, a: &Path, b: &Path) -> (u64, String) {
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
    let peak = stdout
        .lines()
        .find_map(|l| l.split_once("PEAK_RSS=").map(|(_, n)| n))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("child {job} printed no PEAK_RSS:\n{stdout}"));
    (peak, stdout.into_owned())
}

/// The streaming child wrote the whole file: its length, and the sampled
/// bytes equal those of the input (a canonical file rewrites to itself).
fn check_samples(big: &Path, stdout: &str) {
    let line = stdout
        .lines()
        .find(|l| l.contains("LEN="))
        .expect("child printed LEN=");
    let (len, hex) = line
        .split_once("LEN=")
        .unwrap()
        .1
        .split_once(" SAMPLES=")
        .unwrap();
    let input = std::fs::File::open(big).unwrap();
    let input_len = input.metadata().unwrap().len();
    assert_eq!(len.parse::<u64>().unwrap(), input_len);
    let expected: String = (0..input_len)
        .step_by(SAMPLE_STEP as usize)
        .map(|at| {
            use std::os::unix::fs::FileExt;
            let mut b = [0u8];
            input.read_exact_at(&mut b, at).unwrap();
            format!("{:02x}", b[0])
        })
        .collect();
    assert!(expected.len() > 2 * 1000);
    assert!(
        hex.trim() == expected,
        "streamed bytes differ from the input"
    );
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

    let (closure_peak, _) = run_child("closure", &big, Path::new(""));
    let (stream_peak, stdout) = run_child("file-stream", &big, Path::new(""));
    check_samples(&big, &stdout);
    let (file_peak, _) = run_child("file", &big, &copy);
    check_copy(&big, &copy);
    eprintln!(
        "peak RSS: closures {} MiB, mapped file streamed {} MiB, mapped file to path {} MiB (limit {} MiB)",
        closure_peak / MIB,
        stream_peak / MIB,
        file_peak / MIB,
        limit / MIB
    );
    for (what, peak) in [
        ("closure sources", closure_peak),
        ("mapped file, streamed", stream_peak),
        ("mapped file, to path", file_peak),
    ] {
        assert!(peak < limit, "{what}: peak RSS {peak}");
        // Tighter than the bound above: closures write 1 MiB pieces and
        // file sources are copied in 4 MiB chunks (or by the kernel), so
        // no whole tensor is ever held.
        assert!(
            peak < 64 * MIB,
            "{what}: a whole tensor seems held, peak RSS {peak}"
        );
    }
    std::fs::remove_file(&big).unwrap();
    std::fs::remove_file(&copy).unwrap();
}

/// The files hold what was written: same size, same header, and sampled
/// pieces of every tensor carry their pattern in both.
fn check_copy(big: &Path, copy: &Path) {
    let a = GgufFile::open(big).unwrap();
    let b = GgufFile::open(copy).unwrap();
    assert!(a.file_len() > TENSORS * TENSOR_BYTES);
    assert_eq!(a.file_len(), b.file_len());
    assert_eq!(a.data_offset(), b.data_offset());
    assert_eq!(a.header_bytes(), b.header_bytes());
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
}

/// Runs `cmd` (stdout read here, stderr inherited) and returns its
/// stdout, whether it succeeded, and its peak RSS in bytes: the last
/// `VmHWM` read from its `/proc` status while it runs (polled every
/// millisecond; a high-water mark, so a late reading holds the peak).
/// Not `wait4`'s `ru_maxrss`: a child spawned by `vfork` (as std spawns)
/// inherits this test process's own peak at `exec`.
#[cfg(target_os = "linux")]
fn run_measured(cmd: &mut Command) -> (Vec<u8>, bool, u64) {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the gguf binary");
    let mut pipe = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        pipe.read_to_end(&mut out).map(|_| out)
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let status = loop {
        // Absent once the child has exited (a zombie has no memory).
        let hwm = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        });
        peak_kib = peak_kib.max(hwm.unwrap_or(0));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    let stdout = reader.join().unwrap().unwrap();
    assert!(peak_kib > 0, "no VmHWM read from {status_file}");
    (stdout, status.success(), peak_kib * 1024)
}

/// `gguf hash` reads the data front to back and lets each mapped piece
/// go once every digest has read it: a 192 MiB model hashes in a few MiB
/// (it used to show the whole file, mapped and read, as its memory).
#[test]
#[cfg(target_os = "linux")]
fn bounded_memory_hashing_a_model() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("m.gguf");
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    for t in 0..3u64 {
        b.add_tensor_fn(
            format!("blk.{t}.weight"),
            GgmlType::I8,
            &[64 * MIB + t],
            move |w| {
                let mut piece = vec![0u8; PIECE];
                for p in 0..64 {
                    piece.fill(pattern(t, p * MIB));
                    w.write_all(&piece)?;
                }
                w.write_all(&vec![7u8; t as usize])
            },
        )
        .unwrap();
    }
    b.write_to_path(&path).unwrap();
    // xxh64 is fast even unoptimised; the reading is the same for every
    // algorithm.
    let (out, ok, peak) = run_measured(
        Command::new(env!("CARGO_BIN_EXE_gguf"))
            .arg("hash")
            .arg(&path)
            .args(["--algo", "xxh64"]),
    );
    assert!(ok, "gguf hash failed");
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 4);
    eprintln!("gguf hash of a 192 MiB model: peak RSS {} MiB", peak / MIB);
    assert!(
        peak < 64 * MIB,
        "the data seems held in memory: peak RSS {peak}"
    );
}

/// A model with a 262,144-token vocabulary (as Gemma 3's), its tokens,
/// scores and token types.
fn big_vocab(path: &Path) {
    const VOCAB: usize = 262_144;
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("tokenizer.ggml.model", "llama").unwrap();
    let tokens: Vec<String> = (0..VOCAB).map(|i| format!("▁tok\"{i}\\")).collect();
    b.set("tokenizer.ggml.tokens", tokens).unwrap();
    let scores: Vec<f32> = (0..VOCAB).map(|i| -(i as f32) / 7.0).collect();
    b.set("tokenizer.ggml.scores", scores).unwrap();
    b.set("tokenizer.ggml.token_type", vec![1i32; VOCAB])
        .unwrap();
    b.add_tensor("token_embd.weight", GgmlType::I8, &[64], vec![1u8; 64])
        .unwrap();
    b.write_to_path(path).unwrap();
}

/// `inspect --json` writes its document as it goes: its peak memory stays
/// within twice that of the text `inspect` of the same model (it used to
/// build the whole document first, several times the output's size).
#[test]
#[cfg(target_os = "linux")]
fn bounded_memory_inspect_json_of_a_big_vocabulary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vocab.gguf");
    big_vocab(&path);
    let inspect = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gguf"));
        cmd.arg("inspect").arg(&path);
        if json {
            cmd.arg("--json");
        }
        let (out, ok, peak) = run_measured(&mut cmd);
        assert!(ok, "gguf inspect failed (json: {json})");
        (out.len() as u64, peak)
    };
    let (text_len, text_peak) = inspect(false);
    let (json_len, json_peak) = inspect(true);
    eprintln!(
        "inspect: text {} KiB out, peak {} MiB; --json {} MiB out, peak {} MiB",
        text_len / 1024,
        text_peak / MIB,
        json_len / MIB,
        json_peak / MIB
    );
    assert!(json_len > 12 * MIB, "{json_len}");
    assert!(
        json_peak < 2 * text_peak,
        "--json peak RSS {json_peak} against text {text_peak}"
    );
}
