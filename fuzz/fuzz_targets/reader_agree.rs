//! `from_bytes` and `from_reader` (which reads the header region in
//! growing chunks) agree on arbitrary bytes: both fail with the same
//! error, or both succeed with equal metadata and tensor infos.
#![no_main]

use gguf_core::GgufFile;
use gguf_fuzz::summary;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let a = GgufFile::from_bytes(data);
    let b = GgufFile::from_reader(std::io::Cursor::new(data));
    match (a, b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(summary(&a, true), summary(&b, true));
            assert_eq!(a.header_len(), b.header_len());
            assert_eq!(a.data_offset(), b.data_offset());
            assert_eq!(a.file_len(), b.file_len());
            for t in b.tensors() {
                assert!(t.data().is_err(), "from_reader holds no data");
            }
        }
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
        (a, b) => panic!(
            "readers disagree: from_bytes {:?}, from_reader {:?}",
            a.map(|_| ()),
            b.map(|_| ())
        ),
    }
});
