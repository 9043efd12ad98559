//! The Rust half of `benches/open_vs_llama.py`, which times llama.cpp's own
//! C reader (`gguf_init_from_file`) on the same files in the same run. Three
//! modes:
//!
//! - `open_loop FILE [OPENS]`: in one process, `OPENS` rounds of
//!   `GgufFile::open(FILE)` and `GgufFile::open(&bytes)` (from memory) on the same bytes
//!   (read into memory once), taken in turn so both see the same load;
//!   prints the best and the median time of each, as one JSON line;
//! - `open_loop once FILE`: opens `FILE` once and exits, the unit that the
//!   script times as a whole process (start, open, exit);
//! - `open_loop write-qwen2 PATH`: writes the Qwen2-shaped header of
//!   `benches/open.rs` (151,936 tokens, 151,387 merges) to `PATH`;
//! - `open_loop incremental FILE [OPENS] [CHUNK]`: in one process, `OPENS`
//!   rounds of `read_header` (the incremental reader that remote files and
//!   streams use) over FILE's bytes held in memory, with reads of `CHUNK`
//!   bytes (default 256 KiB, so that a big header takes several reads), and
//!   of `GgufFile::open(&bytes)` (from memory) on the same bytes, taken in turn; prints the
//!   best and the median time of each and the number of reads, as one JSON
//!   line.
//!
//! `cargo bench -p gguf-core --bench open_loop -- FILE [OPENS]`
//!
//! Without arguments it prints this usage and does nothing, so that a plain
//! `cargo bench` passes over it.

use std::hint::black_box;
use std::time::Instant;

use gguf_core::Gguf;
use gguf_core::GgufFile;

#[path = "common/qwen2.rs"]
mod qwen2;

const USAGE: &str = "usage: open_loop FILE [OPENS] | open_loop once FILE | \
                     open_loop write-qwen2 PATH | open_loop incremental FILE [OPENS] [CHUNK]";

fn main() {
    // `cargo bench` adds `--bench`; everything else is ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args[..] {
        [] => eprintln!("open_loop: skipped ({USAGE})"),
        ["once", path] => {
            let file = GgufFile::open(path).unwrap_or_else(|e| fail(path, e));
            black_box(file.tensor_count());
        }
        ["write-qwen2", path] => {
            if let Err(e) = std::fs::write(path, qwen2::qwen2_header()) {
                fail(path, e);
            }
        }
        ["incremental", path] => incremental(path, 200, 256 << 10),
        ["incremental", path, opens] => incremental(path, number(opens), 256 << 10),
        ["incremental", path, opens, chunk] => {
            incremental(path, number(opens), number(chunk) as u64)
        }
        [path] => rounds(path, 200),
        [path, opens] => match opens.parse() {
            Ok(n) if n > 0 => rounds(path, n),
            _ => {
                eprintln!("open_loop: OPENS must be a positive number ({USAGE})");
                std::process::exit(2);
            }
        },
        _ => {
            eprintln!("open_loop: {USAGE}");
            std::process::exit(2);
        }
    }
}

fn fail(path: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("open_loop: {path}: {e}");
    std::process::exit(1);
}

fn rounds(path: &str, opens: usize) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| fail(path, e));
    let mut open = Vec::with_capacity(opens);
    let mut from_bytes = Vec::with_capacity(opens);
    for _ in 0..opens {
        let start = Instant::now();
        let file = GgufFile::open(path).unwrap_or_else(|e| fail(path, e));
        black_box(file.tensor_count());
        drop(black_box(file));
        open.push(start.elapsed().as_nanos() as u64);

        let start = Instant::now();
        let file = GgufFile::open(black_box(&bytes)).unwrap_or_else(|e| fail(path, e));
        black_box(file.tensor_count());
        drop(black_box(file));
        from_bytes.push(start.elapsed().as_nanos() as u64);
    }
    open.sort_unstable();
    from_bytes.sort_unstable();
    println!(
        "{{\"opens\": {opens}, \"open_best_ns\": {}, \"open_median_ns\": {}, \
         \"from_bytes_best_ns\": {}, \"from_bytes_median_ns\": {}}}",
        open[0],
        open[opens / 2],
        from_bytes[0],
        from_bytes[opens / 2]
    );
}

fn number(arg: &str) -> usize {
    match arg.parse() {
        Ok(n) if n > 0 => n,
        _ => {
            eprintln!("open_loop: {arg:?} is not a positive number ({USAGE})");
            std::process::exit(2);
        }
    }
}

fn incremental(path: &str, opens: usize, chunk: u64) {
    use gguf_core::read::{HeaderParser, ParseStep, ReadAt, ReadOptions};
    let bytes = std::fs::read(path).unwrap_or_else(|e| fail(path, e));
    let source: &[u8] = &bytes;
    let options = ReadOptions::default().chunk(chunk);
    let mut read = Vec::with_capacity(opens);
    let mut from_bytes = Vec::with_capacity(opens);
    let mut reads = 0;
    for _ in 0..opens {
        let start = Instant::now();
        let mut parser = HeaderParser::new(&options);
        let file = loop {
            match parser.step().unwrap_or_else(|e| fail(path, e)) {
                ParseStep::Read { offset, len } => {
                    let got = source
                        .read_at(offset, len)
                        .unwrap_or_else(|e| fail(path, e));
                    parser
                        .push(got, bytes.len() as u64)
                        .unwrap_or_else(|e| fail(path, e));
                }
                ParseStep::Done(file) => break file,
            }
        };
        black_box(file.tensor_count());
        drop(black_box(file));
        read.push(start.elapsed().as_nanos() as u64);
        reads = parser.reads();

        let start = Instant::now();
        let file = GgufFile::open(black_box(&bytes)).unwrap_or_else(|e| fail(path, e));
        black_box(file.tensor_count());
        drop(black_box(file));
        from_bytes.push(start.elapsed().as_nanos() as u64);
    }
    read.sort_unstable();
    from_bytes.sort_unstable();
    println!(
        "{{\"opens\": {opens}, \"chunk\": {chunk}, \"reads\": {reads}, \
         \"read_header_best_ns\": {}, \"read_header_median_ns\": {}, \
         \"from_bytes_best_ns\": {}, \"from_bytes_median_ns\": {}}}",
        read[0],
        read[opens / 2],
        from_bytes[0],
        from_bytes[opens / 2]
    );
}
