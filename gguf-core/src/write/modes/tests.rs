//! Kernel-side copies: how many runs each output takes, and that the bytes
//! are the same as a write through memory.

use std::cell::Cell;
use std::io::{Cursor, Seek, SeekFrom, Write};

use crate::read::Gguf;
use crate::write::builder::Builder;
use crate::write::source::TensorData;

use super::{WriteMode, WriteOptions};

thread_local! {
    /// Kernel-side copies (runs of tensors) started on this thread.
    pub(super) static KERNEL_COPIES: Cell<u64> = const { Cell::new(0) };
}

fn copies_while(f: impl FnOnce()) -> u64 {
    let before = KERNEL_COPIES.with(Cell::get);
    f();
    KERNEL_COPIES.with(Cell::get) - before
}

#[test]
fn files_take_one_kernel_copy_other_outputs_none() {
    let bytes = crate::testing::tiny_file();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.gguf");
    std::fs::write(&src, &bytes).unwrap();
    let file = crate::read::GgufFile::open(&src).unwrap();
    assert_eq!(file.tensor_count(), 2);
    for mode in [WriteMode::Single, WriteMode::Reserve] {
        let opts = || WriteOptions::new().mode(mode);
        let mut out = tempfile::tempfile().unwrap();
        let copies = copies_while(|| {
            Builder::from_file(&file)
                .unwrap()
                .write_with(&mut out, opts())
                .unwrap();
        });
        // The data section is contiguous in both files: one copy.
        assert_eq!(copies, 1, "{mode:?}: &mut File");
        let copies = copies_while(|| {
            let path = dir.path().join("out.gguf");
            let mut b = Builder::from_file(&file).unwrap();
            b.write_to_path_with(&path, opts()).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), bytes);
        });
        assert_eq!(copies, 1, "{mode:?}: path");
        let copies = copies_while(|| {
            let mut cur = Cursor::new(Vec::new());
            let mut b = Builder::from_file(&file).unwrap();
            b.write_with(&mut cur, opts()).unwrap();
            assert_eq!(cur.into_inner(), bytes);
        });
        assert_eq!(copies, 0, "{mode:?}: cursor");
    }
}

/// Five I8 tensors of 3, 40, 0, 7 and 64 bytes (padding 29, 24, 0,
/// 25, 0 at alignment 32), written canonically.
fn padded_file() -> Vec<u8> {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    for (i, n) in [3u8, 40, 0, 7, 64].into_iter().enumerate() {
        let data: Vec<u8> = (0..n)
            .map(|k| k.wrapping_mul(7).wrapping_add(i as u8 + 1))
            .collect();
        b.add_tensor(
            format!("t{i}"),
            crate::format::GgmlType::I8,
            &[u64::from(n)],
            data,
        )
        .unwrap();
    }
    b.to_vec().unwrap()
}

/// Writes `b` to a file with kernel copies and to memory without;
/// returns the file's bytes, the memory's and the copies made.
fn both_ways(mut b: Builder<'_>, mode: WriteMode) -> (Vec<u8>, Vec<u8>, u64) {
    let mut cur = Cursor::new(Vec::new());
    b.write_with(&mut cur, WriteOptions::new().mode(mode))
        .unwrap();
    let mut out = tempfile::tempfile().unwrap();
    let copies = copies_while(|| {
        b.write_with(&mut out, WriteOptions::new().mode(mode))
            .unwrap();
    });
    out.seek(SeekFrom::Start(0)).unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut out, &mut bytes).unwrap();
    (bytes, cur.into_inner(), copies)
}

#[test]
fn a_large_run_lands_at_the_file_position_whatever_its_alignment() {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    for (i, n) in [100_003u64, 70_000, 5, 1 << 17].into_iter().enumerate() {
        let data: Vec<u8> = (0..n).map(|k| (k * 31 + i as u64) as u8).collect();
        b.add_tensor(format!("t{i}"), crate::format::GgmlType::I8, &[n], data)
            .unwrap();
    }
    let bytes = b.to_vec().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.gguf");
    std::fs::write(&src, &bytes).unwrap();
    let file = crate::read::GgufFile::open(&src).unwrap();
    // The data section starts before, on and after a 64 KiB boundary.
    for prefix in [0usize, 6, 65_536 - 40, 65_536, 200_000] {
        for mode in [WriteMode::Single, WriteMode::Reserve] {
            let mut out = tempfile::tempfile().unwrap();
            out.write_all(&vec![0xEE; prefix]).unwrap();
            let copies = copies_while(|| {
                Builder::from_file(&file)
                    .unwrap()
                    .write_with(&mut out, WriteOptions::new().mode(mode))
                    .unwrap();
            });
            assert_eq!(copies, 1, "{mode:?} after {prefix}");
            assert_eq!(
                out.stream_position().unwrap(),
                (prefix + bytes.len()) as u64
            );
            out.seek(SeekFrom::Start(0)).unwrap();
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut out, &mut got).unwrap();
            assert!(got[..prefix].iter().all(|&b| b == 0xEE));
            assert!(got[prefix..] == bytes[..], "{mode:?} after {prefix}");
        }
    }
    // Through a path: durable, so the copy also starts its writeback.
    for mode in [WriteMode::Single, WriteMode::Reserve] {
        let path = dir.path().join("out.gguf");
        let copies = copies_while(|| {
            Builder::from_file(&file)
                .unwrap()
                .write_to_path_with(&path, WriteOptions::new().mode(mode))
                .unwrap();
        });
        assert_eq!(copies, 1, "{mode:?}: path");
        assert!(std::fs::read(&path).unwrap() == bytes, "{mode:?}: path");
    }
}

#[test]
fn padded_tensors_go_in_one_copy_when_the_layout_is_unchanged() {
    let bytes = padded_file();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.gguf");
    std::fs::write(&src, &bytes).unwrap();
    let file = crate::read::GgufFile::open(&src).unwrap();
    for mode in [WriteMode::Single, WriteMode::Reserve] {
        let (out, mem, copies) = both_ways(Builder::from_file(&file).unwrap(), mode);
        assert_eq!(out, bytes, "{mode:?}");
        assert_eq!(mem, bytes, "{mode:?}");
        assert_eq!(copies, 1, "{mode:?}");
    }
}

#[test]
fn a_new_alignment_copies_the_tensors_that_stay_together() {
    let bytes = padded_file();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.gguf");
    std::fs::write(&src, &bytes).unwrap();
    let file = crate::read::GgufFile::open(&src).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    b.alignment(64).unwrap();
    let (out, mem, copies) = both_ways(b, WriteMode::Single);
    assert_eq!(out, mem);
    assert_ne!(out, bytes);
    // t1 moves away from t0 and t4 from t3 (padding 61 and 57 where
    // the source has 29 and 25); t1's padding is still 24 and t2 is
    // empty, so t1..t3 stay together: [t0], [t1, t2, t3], [t4].
    assert_eq!(copies, 3);
}

#[test]
fn nonzero_source_padding_splits_the_copy_and_is_written_as_zeros() {
    let mut bytes = padded_file();
    let file = crate::read::GgufFile::open(&bytes).unwrap();
    // The padding after t1 (24 bytes) holds garbage in the source.
    let t1 = file.tensor("t1").unwrap();
    let gap = (t1.file_offset() + 40) as usize;
    drop(file);
    let canonical = bytes.clone();
    bytes[gap..gap + 24].fill(0xAB);
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.gguf");
    std::fs::write(&src, &bytes).unwrap();
    let file = crate::read::GgufFile::open(&src).unwrap();
    let (out, mem, copies) = both_ways(Builder::from_file(&file).unwrap(), WriteMode::Single);
    assert_eq!(out, canonical);
    assert_eq!(mem, canonical);
    // t0..t1, then t2..t4.
    assert_eq!(copies, 2);
}

#[test]
fn a_tensor_from_memory_splits_the_copy() {
    let bytes = padded_file();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.gguf");
    std::fs::write(&src, &bytes).unwrap();
    let file = crate::read::GgufFile::open(&src).unwrap();
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    for t in file.tensors() {
        let data = if t.name() == "t1" {
            TensorData::from(t.data().unwrap().to_vec())
        } else {
            TensorData::from(t)
        };
        b.add_tensor(t.name(), t.ggml_type(), t.shape(), data)
            .unwrap();
    }
    let (out, mem, copies) = both_ways(b, WriteMode::Single);
    assert_eq!(out, bytes);
    assert_eq!(mem, bytes);
    // t0, then t3..t4 (t2 is empty; t1 is written from memory).
    assert_eq!(copies, 2);
}
