//! Truncation and corruption sweeps over a realistic file: every cut must be
//! an error (never a panic), and no parse may allocate more than the input
//! justifies. A counting global allocator measures the largest single
//! allocation made by the current thread while a parse runs.

use gguf::error::FormatError;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use gguf::format::align_up;
use gguf::{Error, GgmlType, Gguf, GgufFile};

use super::util::{raw, Rng};

/// Counts allocations of the threads that asked to be tracked.
struct Counting;

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: never touch a thread-local that is being torn down.
    let _ = TRACKING.try_with(|t| {
        if t.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

// SAFETY: every call is forwarded unchanged to `System`; `note` only reads
// and writes const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the largest single allocation it
/// made on this thread.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|l| l.set(0));
    TRACKING.with(|t| t.set(true));
    let r = f();
    TRACKING.with(|t| t.set(false));
    (r, LARGEST.with(|l| l.get()))
}

/// Slack for the small allocations of an error path (messages, key names).
const SLACK: usize = 4096;

const TYPES: [GgmlType; 7] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q4_0,
    GgmlType::Q8_0,
    GgmlType::Q4_K,
    GgmlType::Q6_K,
];

/// A llama-shaped v3 file: hyper-parameters, a 3,000-token vocabulary
/// with scores, token types and merges, and 42 tensors of 7 types laid
/// out as llama.cpp does. The last tensor ends exactly at the end of the
/// file, so every cut inside the data is a missing byte.
fn realistic() -> Vec<u8> {
    const N: u64 = 3000;
    let mut r = raw();
    let n_tensors = 6 * TYPES.len() as u64;
    r.header(n_tensors, 12);
    r.str("general.architecture").u32(8).str("llama");
    r.str("general.name").u32(8).str("truncation sweep");
    r.str("llama.context_length").u32(4).u32(4096);
    r.str("llama.embedding_length").u32(4).u32(256);
    r.str("llama.block_count").u32(4).u32(6);
    r.str("llama.attention.layer_norm_rms_epsilon")
        .u32(6)
        .f32(1e-5);
    r.str("tokenizer.ggml.model").u32(8).str("gpt2");
    r.str("tokenizer.ggml.tokens").u32(9).u32(8).count(N);
    for i in 0..N {
        r.str(&format!("t{i}"));
    }
    r.str("tokenizer.ggml.scores").u32(9).u32(6).count(N);
    for i in 0..N {
        r.f32(-(i as f32));
    }
    r.str("tokenizer.ggml.token_type").u32(9).u32(5).count(N);
    for i in 0..N {
        r.u32(1 + (i % 6) as u32);
    }
    r.str("tokenizer.ggml.merges").u32(9).u32(8).count(N);
    for i in 0..N {
        r.str(&format!("t{} {}", i % 97, i));
    }
    r.str("tokenizer.ggml.add_bos_token").u32(7).u8(1);
    let mut offset = 0;
    let mut end = 0;
    for layer in 0..6 {
        for (k, ty) in TYPES.iter().enumerate() {
            let shape = [256, 2 + k as u64];
            r.tensor_info(&format!("blk.{layer}.{ty}.weight"), &shape, ty.id(), offset);
            end = offset + gguf::format::tensor_nbytes(*ty, &shape).unwrap();
            offset = align_up(end, 32).unwrap();
        }
    }
    r.pad(32);
    let mut rng = Rng(0x5EED);
    let data_start = r.buf.len();
    r.buf.extend((0..end).map(|_| rng.next_u64() as u8));
    assert_eq!(r.buf.len() as u64, data_start as u64 + end);
    r.buf
}

#[test]
fn every_cut_is_an_error() {
    let bytes = realistic();
    let file = GgufFile::open(&bytes).unwrap();
    assert_eq!(file.tensor_count(), 42);
    let header = file.data_offset() as usize;
    let mut cuts: Vec<usize> = (0..header).collect();
    let mut rng = Rng(42);
    cuts.extend((0..200).map(|_| header + rng.below((bytes.len() - header) as u64) as usize));
    cuts.push(bytes.len() - 1);

    let check = |cut: usize| {
        let input = &bytes[..cut];
        let (result, largest) = largest_allocation(|| GgufFile::open(input).map(|_| ()));
        let e = result.expect_err("a cut file was accepted");
        let expected = if cut < file.header_len() as usize {
            matches!(
                e,
                Error::Format(FormatError::Truncated { .. })
                    | Error::Format(FormatError::CountTooLarge { .. })
            )
        } else {
            // Infos complete, data short: the data checks catch it.
            matches!(e, Error::Format(FormatError::TensorOutOfBounds { .. }))
        };
        assert!(expected, "cut at {cut}: {e:?}");
        assert!(
            largest <= cut + SLACK,
            "cut at {cut}: allocated {largest} bytes at once"
        );
    };
    // Two threads, each with its own allocation tracking.
    let (a, b) = cuts.split_at(cuts.len() / 2);
    std::thread::scope(|s| {
        s.spawn(|| a.iter().for_each(|&c| check(c)));
        b.iter().for_each(|&c| check(c));
    });
    // from_reader sees the same errors on a sample of cuts.
    for &cut in cuts.iter().step_by(997) {
        let input = &bytes[..cut];
        let a = GgufFile::open(input).unwrap_err();
        let b =
            GgufFile::open(gguf::Source::reader(std::io::Cursor::new(input.to_vec()))).unwrap_err();
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "cut at {cut}");
    }
}

#[test]
fn accepted_file_allocates_less_than_its_size() {
    let bytes = realistic();
    let (file, largest) = largest_allocation(|| GgufFile::open(&bytes).map(|f| f.tensor_count()));
    assert_eq!(file.unwrap(), 42);
    // The index holds offsets, not copies: far below the header region.
    let header_len = GgufFile::open(&bytes).unwrap().header_len() as usize;
    assert!(
        largest < header_len / 4,
        "largest allocation {largest} for a {header_len}-byte header"
    );
}

#[test]
fn flipped_header_bytes_never_panic() {
    let bytes = realistic();
    let header = GgufFile::open(&bytes).unwrap().data_offset();
    let mut rng = Rng(0xF11B);
    let (mut ok, mut err) = (0, 0);
    let mut worst = 0.0f64;
    for _ in 0..1500 {
        let mut input = bytes.clone();
        for _ in 0..1 + rng.below(4) {
            // Bias towards the first 4 KiB, where the counts and infos of
            // most entries are, and the tensor infos at the end.
            let at = match rng.below(3) {
                0 => rng.below(4096),
                1 => header - 1 - rng.below(2048),
                _ => rng.below(header),
            } as usize;
            input[at] ^= 1 + rng.below(255) as u8;
        }
        let (result, largest) = largest_allocation(|| {
            GgufFile::open(&input)
                .map(|f| f.tensors().map(|t| t.byte_size().unwrap_or(0)).sum::<u64>())
        });
        match result {
            Ok(_) => ok += 1,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                err += 1
            }
        }
        worst = worst.max(largest as f64 / input.len() as f64);
        assert!(
            largest <= input.len() + SLACK,
            "allocated {largest} bytes at once for a {}-byte input",
            input.len()
        );
    }
    assert!(err > 0 && ok + err == 1500);
    eprintln!("flips: {ok} accepted, {err} rejected, largest allocation {worst:.3} x input");
}

#[test]
fn allocation_tracking_sees_this_thread_only() {
    let (v, largest) = largest_allocation(|| vec![1u8; 100_000]);
    assert_eq!(v.len(), 100_000);
    assert!(largest >= 100_000);
    let ((), largest) = largest_allocation(|| {
        std::thread::spawn(|| drop(std::hint::black_box(vec![0u8; 1 << 20])))
            .join()
            .unwrap();
    });
    assert!(largest < 1 << 20, "another thread's allocation was counted");
}

/// Counts that fit in the file (each entry at its smallest) but are lies:
/// the reader may reserve index space for them, never more than the file.
#[test]
fn count_claims_cannot_reserve_more_than_the_file() {
    for len in [1024usize, 16 << 10, 64 << 10, 1 << 20] {
        // KVs: smallest entry is 14 bytes (8 length, 1 key byte, 4 type, 1 value).
        let mut r = raw();
        r.header(0, (len as u64 - 24) / 14);
        r.buf.resize(len, 0);
        let (result, largest) = largest_allocation(|| GgufFile::open(&r.buf).map(|_| ()));
        assert!(
            matches!(
                result,
                Err(Error::Format(FormatError::EmptyKey { offset: 24 }))
            ),
            "{result:?}"
        );
        assert!(
            largest <= len + SLACK,
            "{len}-byte file claiming many KVs: allocated {largest} at once"
        );
        // Tensors: smallest info is 25 bytes.
        let mut r = raw();
        r.header((len as u64 - 24) / 25, 0);
        r.buf.resize(len, 0);
        let (result, largest) = largest_allocation(|| GgufFile::open(&r.buf).map(|_| ()));
        assert!(result.is_err());
        assert!(
            largest <= len + SLACK,
            "{len}-byte file claiming many tensors: allocated {largest} at once"
        );
    }
}
