//! Opens one file many times with `GgufFile::open` and prints the best and
//! the median time per open, as one JSON line. It is the Rust half of
//! `benches/open_vs_llama.py`, which times llama.cpp's own C reader
//! (`gguf_init_from_file`) on the same file in the same run; on its own:
//!
//! `cargo bench -p gguf-core --bench open_loop -- FILE [OPENS]`
//!
//! Without a file it prints this usage and does nothing, so that a plain
//! `cargo bench` passes over it.

use std::hint::black_box;
use std::time::Instant;

use gguf_core::GgufFile;

fn main() {
    // `cargo bench` adds `--bench`; everything else is ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(path) = args.first() else {
        eprintln!("open_loop: skipped (usage: cargo bench -p gguf-core --bench open_loop -- FILE [OPENS])");
        return;
    };
    let opens: usize = match args.get(1).map(|n| n.parse()) {
        None => 200,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("open_loop: OPENS must be a positive number");
            std::process::exit(2);
        }
    };
    let mut times = Vec::with_capacity(opens);
    for _ in 0..opens {
        let start = Instant::now();
        let file = match GgufFile::open(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("open_loop: {path}: {e}");
                std::process::exit(1);
            }
        };
        black_box(file.tensor_count());
        drop(black_box(file));
        times.push(start.elapsed().as_nanos() as u64);
    }
    times.sort_unstable();
    println!(
        "{{\"opens\": {opens}, \"best_ns\": {}, \"median_ns\": {}}}",
        times[0],
        times[opens / 2]
    );
}
