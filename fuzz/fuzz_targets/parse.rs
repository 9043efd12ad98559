//! `GgufFile::open(&[u8])` on arbitrary bytes; on success, everything the
//! file offers is read: every value (nested arrays, string arrays, typed
//! iterators), every tensor info, the llama.cpp lint, and the decoded
//! values and rows of small tensors. Bad input must give an error, never a
//! panic, a hang or a huge allocation.
#![no_main]

use gguf_core::Gguf;
use gguf_core::GgufFile;
use gguf_fuzz::summary;
use libfuzzer_sys::fuzz_target;

/// Tensors up to this many elements are decoded (whole and by rows): four
/// 256-element super-blocks, several rows; larger tensors only repeat the
/// same code at a cost that slowed the target tenfold.
const DECODE_LIMIT: u64 = 1 << 10;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = GgufFile::open(data) else {
        return;
    };
    let s = summary(&file, true);
    for (key, _) in &s.kvs {
        let _ = file.get_str(key);
        let _ = file.get::<u32>(key);
        let _ = file.get::<f32>(key);
        let _ = file.get_strings(key).map(|it| it.count());
        let _ = file.get_array_of::<i32>(key).map(|it| it.count());
        let _ = file.entry_range(key).expect("listed key has a range");
    }
    let _ = file.lint_llama_cpp();
    for t in file.tensors() {
        let _ = format!("{t:?}");
        assert!(t.file_offset() <= file.file_len().max(file.data_offset()));
        let data = t.data();
        if let (Ok(d), Ok(n)) = (&data, t.byte_size()) {
            assert_eq!(d.len() as u64, n);
        }
        let _ = t.as_slice::<f32>();
        if t.element_count() > DECODE_LIMIT {
            continue;
        }
        if let Ok(v) = t.to_f32() {
            assert_eq!(v.len() as u64, t.element_count());
            let mut rows = t.rows().expect("decodable tensor has rows");
            let row_len = rows.row_len();
            let mut flat = Vec::with_capacity(v.len());
            while let Some(r) = rows.next_row() {
                let r = r.expect("row decodes");
                assert_eq!(r.len(), row_len);
                flat.extend_from_slice(r);
            }
            // Bits, NaNs aside: the sign and payload of a NaN output may
            // differ between the row and whole-tensor paths (SIMD or not),
            // a latitude the tensor module documents.
            let bits = |x: &[f32]| {
                x.iter()
                    .map(|f| if f.is_nan() { u32::MAX } else { f.to_bits() })
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&flat), bits(&v), "rows differ from to_f32");
            let _ = t.to_f16();
            let _ = t.to_bf16();
        }
    }
});
