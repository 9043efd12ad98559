//! Write benchmark: rewriting a ~1 GiB llama-shaped file in each write
//! mode, against `cp` of the same file and gguf-py's GGUFWriter.
//!
//! Run with `cargo bench --bench write` (add `-- --runs N` to change the
//! number of rounds; each round runs every case once, in turn, and the
//! minimum and median of each case are reported as ratios to `cp` and to
//! `cp` + `sync` of the same rounds). The input is generated once with our
//! Builder into `<target>/bench-write/` and reused.
//!
//! The library's `write_to_path*` and `gguf rewrite` write a complete,
//! fsynced file (atomic replacement), so `cp` is timed both alone (data
//! left dirty in the page cache) and followed by `sync` of the copy; the
//! library's plain `write` to a `File` is the no-fsync counterpart of `cp`.

mod common;

use common::{run, timed};

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use gguf::write::{Builder, WriteMode, WriteOptions};
use gguf::{GgmlType, Gguf, GgufFile};

const DIM: u64 = 2048;
const FFN: u64 = 5632;
const VOCAB: u64 = 32000;
const LAYERS: u64 = 8;

/// Fills a closure source with a cheap, non-constant pattern.
fn filler(seed: u64, nbytes: u64) -> impl FnMut(&mut dyn std::io::Write) -> std::io::Result<()> {
    move |w| {
        let mut piece = vec![0u8; 1 << 20];
        let mut left = nbytes;
        let mut i = seed;
        while left > 0 {
            for (j, b) in piece.iter_mut().enumerate() {
                *b = (i as usize + j * 7) as u8;
            }
            i += 1;
            let n = left.min(piece.len() as u64) as usize;
            w.write_all(&piece[..n])?;
            left -= n as u64;
        }
        Ok(())
    }
}

/// A llama-shaped file: hyper-parameters, a 32k vocabulary with scores and
/// token types, F16 matrices and F32 norms, about 1 GiB.
fn generate(path: &Path) {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.name", "bench-llama").unwrap();
    b.set("llama.context_length", 4096u32).unwrap();
    b.set("llama.embedding_length", DIM as u32).unwrap();
    b.set("llama.block_count", LAYERS as u32).unwrap();
    b.set("llama.feed_forward_length", FFN as u32).unwrap();
    b.set("llama.attention.head_count", 16u32).unwrap();
    b.set("llama.attention.layer_norm_rms_epsilon", 1e-5f32)
        .unwrap();
    b.set("tokenizer.ggml.model", "llama").unwrap();
    let tokens: Vec<String> = (0..VOCAB).map(|i| format!("▁tok{i}")).collect();
    b.set("tokenizer.ggml.tokens", tokens).unwrap();
    b.set(
        "tokenizer.ggml.scores",
        (0..VOCAB).map(|i| -(i as f32)).collect::<Vec<_>>(),
    )
    .unwrap();
    b.set("tokenizer.ggml.token_type", vec![1i32; VOCAB as usize])
        .unwrap();
    let mut seed = 0;
    let mut add = |b: &mut Builder<'_>, name: String, ty: GgmlType, shape: &[u64]| {
        let n = gguf::format::tensor_nbytes(ty, shape).unwrap();
        seed += 1;
        b.add_tensor_fn(name, ty, shape, filler(seed, n)).unwrap();
    };
    add(
        &mut b,
        "token_embd.weight".into(),
        GgmlType::F16,
        &[DIM, VOCAB],
    );
    for l in 0..LAYERS {
        add(
            &mut b,
            format!("blk.{l}.attn_norm.weight"),
            GgmlType::F32,
            &[DIM],
        );
        for m in ["q", "k", "v", "output"] {
            add(
                &mut b,
                format!("blk.{l}.attn_{m}.weight"),
                GgmlType::F16,
                &[DIM, DIM],
            );
        }
        add(
            &mut b,
            format!("blk.{l}.ffn_norm.weight"),
            GgmlType::F32,
            &[DIM],
        );
        add(
            &mut b,
            format!("blk.{l}.ffn_gate.weight"),
            GgmlType::F16,
            &[DIM, FFN],
        );
        add(
            &mut b,
            format!("blk.{l}.ffn_up.weight"),
            GgmlType::F16,
            &[DIM, FFN],
        );
        add(
            &mut b,
            format!("blk.{l}.ffn_down.weight"),
            GgmlType::F16,
            &[FFN, DIM],
        );
    }
    add(&mut b, "output_norm.weight".into(), GgmlType::F32, &[DIM]);
    add(
        &mut b,
        "output.weight".into(),
        GgmlType::F32,
        &[DIM, VOCAB / 4],
    );
    b.write_to_path(path).unwrap();
}

fn main() {
    let Some(runs) = common::runs("write", 5) else {
        return;
    };
    let dir = common::target_dir("write");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("llama-1g.gguf");
    if GgufFile::open(&input).is_err() {
        eprintln!("generating {} ...", input.display());
        generate(&input);
    }
    let out = dir.join("out.gguf");
    let size = std::fs::metadata(&input).unwrap().len();
    let mb = size as f64 / 1e6;
    println!(
        "input: {} ({:.1} MB, {} tensors), {runs} interleaved rounds",
        input.display(),
        mb,
        GgufFile::open(&input).unwrap().tensor_count()
    );
    // Warm the page cache for the input, as every case reads it.
    let _ = std::fs::read(&input).unwrap();

    let (input, out) = (input.as_path(), out.as_path());
    let clean = || {
        let _ = std::fs::remove_file(out);
    };
    let exe = Path::new(env!("CARGO_BIN_EXE_gguf"));
    let mut cases: Vec<common::Case<'_>> = Vec::new();
    cases.push((
        "cp".into(),
        Box::new(|| {
            clean();
            timed(|| run(Command::new("cp").arg(input).arg(out)))
        }),
    ));
    cases.push((
        "cp + sync".into(),
        Box::new(|| {
            clean();
            timed(|| {
                run(Command::new("cp").arg(input).arg(out));
                run(Command::new("sync").arg(out));
            })
        }),
    ));
    for (name, mode) in [
        ("single", WriteMode::Single),
        ("reserve", WriteMode::Reserve),
    ] {
        cases.push((
            format!("gguf rewrite --mode {name}"),
            Box::new(move || {
                clean();
                timed(|| {
                    run(Command::new(exe)
                        .arg("rewrite")
                        .arg(input)
                        .arg(out)
                        .args(["--mode", name]))
                })
            }),
        ));
        cases.push((
            format!("library write_to_path_with({name})"),
            Box::new(move || {
                clean();
                timed(|| {
                    let file = GgufFile::open(input).unwrap();
                    Builder::from_file(&file)
                        .unwrap()
                        .write_to_path_with(out, WriteOptions::new().mode(mode))
                        .unwrap();
                })
            }),
        ));
        // Without the atomic temp file and fsync: the same work as plain cp.
        cases.push((
            format!("library write_with(&mut File, {name}), no fsync"),
            Box::new(move || {
                clean();
                timed(|| {
                    let file = GgufFile::open(input).unwrap();
                    let mut f = std::fs::File::create(out).unwrap();
                    Builder::from_file(&file)
                        .unwrap()
                        .write_with(&mut f, WriteOptions::new().mode(mode))
                        .unwrap();
                })
            }),
        ));
    }
    // Metadata first: the header, then each tensor from its source, through
    // a buffered writer (the handle takes any `Write`).
    cases.push((
        "library write_metadata_first(BufWriter<File>), no fsync".into(),
        Box::new(|| {
            clean();
            timed(|| {
                let file = GgufFile::open(input).unwrap();
                let f = std::fs::File::create(out).unwrap();
                let mut b = Builder::from_file(&file).unwrap();
                b.write_metadata_first(std::io::BufWriter::with_capacity(1 << 20, f))
                    .unwrap()
                    .finish()
                    .unwrap();
            })
        }),
    ));
    // Through memory: the map read in 4 MiB chunks into any `Write`.
    cases.push((
        "library write(BufWriter<File>), no fsync".into(),
        Box::new(|| {
            clean();
            timed(|| {
                let file = GgufFile::open(input).unwrap();
                let f = std::fs::File::create(out).unwrap();
                Builder::from_file(&file)
                    .unwrap()
                    .write(std::io::BufWriter::with_capacity(1 << 20, f))
                    .unwrap();
            })
        }),
    ));
    let times = common::interleaved(runs, &mut cases, |name| {
        assert!(files_equal(input, out), "{name}: output differs");
    });
    let names: Vec<String> = cases.into_iter().map(|(name, _)| name).collect();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/gguf_py_rewrite.py");
    clean();
    run(&mut Command::new("sync"));
    let py = timed(|| run(Command::new("python3").arg(&script).arg(input).arg(out)));
    assert!(files_equal(input, out), "gguf-py: output differs");
    clean();

    let (cp, cp_median) = common::min_median(&times[0]);
    let (cp_sync, cp_sync_median) = common::min_median(&times[1]);
    println!(
        "{:<56} {:>7} {:>8} {:>7} {:>16} {:>16}",
        "case (time / baseline: lower is faster)",
        "min s",
        "median s",
        "MB/s",
        "min vs cp/+sync",
        "median vs cp/+sync"
    );
    let row = |name: &str, min: Duration, median: Duration| {
        let (lo, mid) = (min.as_secs_f64(), median.as_secs_f64());
        println!(
            "{name:<56} {lo:>7.3} {mid:>8.3} {:>7.0} {:>7.2}x {:>6.2}x {:>8.2}x {:>7.2}x",
            mb / lo,
            lo / cp.as_secs_f64(),
            lo / cp_sync.as_secs_f64(),
            mid / cp_median.as_secs_f64(),
            mid / cp_sync_median.as_secs_f64(),
        );
    };
    for (name, t) in names.iter().zip(&times) {
        let (min, median) = common::min_median(t);
        row(name, min, median);
    }
    row("gguf-py GGUFReader -> GGUFWriter (one run)", py, py);
}

fn files_equal(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(fa), Ok(fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    if fa.metadata().unwrap().len() != fb.metadata().unwrap().len() {
        return false;
    }
    let (mut ra, mut rb) = (
        std::io::BufReader::with_capacity(1 << 22, fa),
        std::io::BufReader::with_capacity(1 << 22, fb),
    );
    let (mut ba, mut bb) = (vec![0u8; 1 << 22], vec![0u8; 1 << 22]);
    loop {
        let n = ra.read(&mut ba).unwrap();
        if n == 0 {
            return true;
        }
        rb.read_exact(&mut bb[..n]).unwrap();
        if ba[..n] != bb[..n] {
            return false;
        }
    }
}
