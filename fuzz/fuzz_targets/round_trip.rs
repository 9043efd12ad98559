//! Whatever parses is rebuilt with `Builder::from_file` and written in
//! every write mode: the modes give the same bytes, the output parses with
//! equal metadata, tensor infos and tensor data, and writing the output
//! again gives it back byte for byte (our layout is canonical). When the
//! input already has that layout, the output equals it except in padding.
#![no_main]

use gguf_core::write::Builder;
use gguf_core::Gguf;
use gguf_core::GgufFile;
use gguf_fuzz::{summary, write_in, written_len, MODES};
use libfuzzer_sys::fuzz_target;

/// Outputs above this size are measured, not kept.
const LARGE: u64 = 16 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = GgufFile::open(data) else {
        return;
    };
    // Padding can make the output far larger than the input: a 57-byte
    // header with a 1 GiB alignment is written as 1 GiB. Such files are
    // written without being kept; every mode must give the length the
    // layout promised.
    if let Ok(layout) = Builder::from_file(&file).and_then(|b| b.layout()) {
        if layout.file_len() > LARGE {
            let lens: Vec<Option<u64>> = MODES
                .iter()
                .map(|&mode| {
                    let mut b = Builder::from_file(&file).expect("rebuilt once already");
                    written_len(&mut b, mode).ok()
                })
                .collect();
            // Every mode refuses alike, or writes exactly the layout.
            assert!(
                lens.iter().all(|l| l.is_none())
                    || lens.iter().all(|&l| l == Some(layout.file_len())),
                "written lengths {lens:?}, layout {}",
                layout.file_len()
            );
            return;
        }
    }
    let mut written: Option<Vec<u8>> = None;
    for mode in MODES {
        let out = Builder::from_file(&file).and_then(|mut b| write_in(&mut b, mode));
        let out = match out {
            Ok(out) => out,
            // The builder refuses what it cannot write (unknown tensor
            // types, for one); every mode must refuse alike.
            Err(e) => {
                assert!(
                    written.is_none(),
                    "{mode:?} failed after another mode wrote: {e}"
                );
                continue;
            }
        };
        match &written {
            Some(w) => assert!(w == &out, "{mode:?} wrote other bytes"),
            None => written = Some(out),
        }
    }
    let Some(out) = written else {
        return;
    };
    let again =
        GgufFile::open(&out).unwrap_or_else(|e| panic!("our output does not parse: {e}"));
    assert_eq!(summary(&file, false), summary(&again, false));
    for (a, b) in file.tensors().zip(again.tensors()) {
        assert_eq!(a.data().ok(), b.data().ok(), "data of {}", a.name());
    }
    // Canonical: rewriting our own output changes nothing.
    let mut b = Builder::from_file(&again).expect("our output rebuilds");
    let twice = write_in(&mut b, MODES[0]).expect("our output rewrites");
    assert!(twice == out, "rewriting our own output changed it");
    // An input with our layout differs from the output only in padding.
    let same_layout = data.len() == out.len()
        && file.header_len() == again.header_len()
        && file.data_offset() == again.data_offset()
        && file
            .tensors()
            .zip(again.tensors())
            .all(|(a, b)| a.offset() == b.offset());
    if same_layout {
        let mut input = data.to_vec();
        let header_len = file.header_len() as usize;
        let data_offset = file.data_offset() as usize;
        input[header_len..data_offset].fill(0);
        let mut ends: Vec<(u64, u64)> = file
            .tensors()
            .map(|t| {
                (
                    t.file_offset(),
                    t.file_offset() + t.byte_size().unwrap_or(0),
                )
            })
            .collect();
        ends.sort_unstable();
        // Zero every byte of the data section outside tensor data.
        let mut pos = data_offset as u64;
        for (start, end) in ends
            .into_iter()
            .chain([(input.len() as u64, input.len() as u64)])
        {
            if start > pos {
                input[pos as usize..start as usize].fill(0);
            }
            pos = pos.max(end);
        }
        assert!(
            input == out,
            "a canonically laid-out input was not reproduced"
        );
    }
});
