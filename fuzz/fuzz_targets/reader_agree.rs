//! a byte slice, a `Read + Seek` stream (which reads the header region in growing
//! chunks) and the incremental parser in small steps (as remote reading
//! drives it) agree on arbitrary bytes: all fail with the same error, or
//! all succeed with equal metadata and tensor infos. A file
//! that parses is also a one-file `Model` with the same content (its split
//! keys aside), unless its `split.count` says otherwise.
#![no_main]

use gguf_core::model::{is_split_key, Model, SPLIT_COUNT};
use gguf_core::read::{read_header, ReadOptions};
use gguf_core::Gguf;
use gguf_core::GgufFile;
use gguf_fuzz::summary;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let a = GgufFile::open(data);
    // The incremental parser that remote reading uses, fed in small steps
    // (16 to 63 bytes, varied with the input): every resumption point is
    // exercised, and the outcome must not depend on the step.
    let step = 16 + data.len() as u64 % 48;
    let c = read_header(data, &ReadOptions::default().chunk(step));
    match (&a, c) {
        (Ok(a), Ok(c)) => {
            assert_eq!(summary(a, true), summary(&c, true), "step {step}");
            assert_eq!(a.header_len(), c.header_len());
            assert_eq!(a.data_offset(), c.data_offset());
        }
        (Err(a), Err(c)) => assert_eq!(format!("{a:?}"), format!("{c:?}"), "step {step}"),
        (a, c) => panic!(
            "step {step}: slice {:?}, incremental {:?}",
            a.as_ref().map(|_| ()),
            c.map(|_| ())
        ),
    }
    let b = GgufFile::open(gguf_core::read::Source::reader(std::io::Cursor::new(data.to_vec())));
    match (a, b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(summary(&a, true), summary(&b, true));
            assert_eq!(a.header_len(), b.header_len());
            assert_eq!(a.data_offset(), b.data_offset());
            assert_eq!(a.file_len(), b.file_len());
            for t in b.tensors() {
                assert!(t.data().is_err(), "a stream's data is not held");
                // Read on request, the same bytes as the slice's.
                let held = a.tensor(t.name()).ok().and_then(|h| h.data().ok());
                assert_eq!(t.read().ok().as_deref(), held);
            }
            as_model(a, data);
        }
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
        (a, b) => panic!(
            "readers disagree: slice {:?}, stream {:?}",
            a.map(|_| ()),
            b.map(|_| ())
        ),
    }
});

/// `file` as a one-file model: the same metadata without the split keys,
/// the same tensors in the same order; refused only for its split keys.
fn as_model(file: GgufFile<'_>, data: &[u8]) {
    let s = summary(&file, true);
    let has_split_count = file.contains_key(SPLIT_COUNT);
    let model = match Model::open(data) {
        Ok(m) => m,
        Err(e) => {
            assert!(has_split_count, "one file without split keys refused: {e}");
            return;
        }
    };
    let kvs: Vec<&str> = s
        .kvs
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !is_split_key(k))
        .collect();
    assert_eq!(model.keys().collect::<Vec<_>>(), kvs);
    assert_eq!(model.kv_count(), kvs.len());
    assert_eq!(model.tensor_count(), s.tensors.len());
    for (i, (t, info)) in model.tensors().zip(&s.tensors).enumerate() {
        assert_eq!(t.name(), info.name);
        assert_eq!(model.tensor_at(i).map(|t| t.offset()), info.offset);
        assert_eq!(
            model.tensor(&info.name).map(|t| t.offset()).ok(),
            info.offset
        );
    }
}
