//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::io::{Read, Seek, SeekFrom};

pub use gguf::testing::{tiny_file, Raw};
use gguf::{Ctx, Endian, Error, GgufFile};

/// Context for a version and byte order.
pub fn ctx(version: u32, endian: Endian) -> Ctx {
    Ctx { version, endian }
}

/// A `Raw` for a little-endian v3 file.
pub fn raw() -> Raw {
    Raw::new(Ctx::default())
}

/// Writes `bytes` to a fresh temporary file and opens it with `GgufFile::open`.
pub fn open_via_file(bytes: &[u8]) -> gguf::Result<GgufFile<'static>> {
    let mut tmp = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut tmp, bytes).expect("write temp file");
    // The map outlives the path: it keeps the (unlinked) file alive.
    GgufFile::open(tmp.path())
}

/// Parses a rejected file with `from_bytes`, `from_reader` and `open`,
/// asserts that all three give the same error, and returns it.
#[track_caller]
pub fn reject(bytes: &[u8]) -> Error {
    let a = GgufFile::from_bytes(bytes).expect_err("from_bytes accepted a hostile file");
    let b = GgufFile::from_reader(std::io::Cursor::new(bytes))
        .expect_err("from_reader accepted a hostile file");
    let c = open_via_file(bytes).expect_err("open accepted a hostile file");
    let (da, db, dc) = (format!("{a:?}"), format!("{b:?}"), format!("{c:?}"));
    assert_eq!(da, db, "from_bytes and from_reader disagree");
    assert_eq!(da, dc, "from_bytes and open disagree");
    // Every message is one sentence that says what and where.
    assert!(!a.to_string().is_empty());
    a
}

/// Parses an accepted file with `from_bytes`, checks that `from_reader` and
/// `open` see the same metadata and tensor infos, and returns the first.
#[track_caller]
pub fn accept(bytes: &[u8]) -> GgufFile<'_> {
    let file = GgufFile::from_bytes(bytes)
        .unwrap_or_else(|e| panic!("from_bytes rejected a valid file: {e}"));
    let streamed = GgufFile::from_reader(std::io::Cursor::new(bytes))
        .unwrap_or_else(|e| panic!("from_reader rejected a valid file: {e}"));
    assert_same_index(&file, &streamed);
    assert!(!streamed.has_data());
    let mapped = open_via_file(bytes).unwrap_or_else(|e| panic!("open rejected a valid file: {e}"));
    assert_same_index(&file, &mapped);
    assert!(mapped.has_data());
    for (a, b) in file.tensors().zip(mapped.tensors()) {
        match a.data() {
            Ok(d) => assert_eq!(d, b.data().unwrap(), "tensor {}", a.name()),
            Err(e) => assert_eq!(format!("{e:?}"), format!("{:?}", b.data().unwrap_err())),
        }
    }
    file
}

/// Asserts two views of the same file agree on everything but the data.
#[track_caller]
pub fn assert_same_index(a: &GgufFile<'_>, b: &GgufFile<'_>) {
    assert_eq!(a.ctx(), b.ctx());
    assert_eq!(a.alignment(), b.alignment());
    assert_eq!(a.header_len(), b.header_len());
    assert_eq!(a.data_offset(), b.data_offset());
    assert_eq!(a.file_len(), b.file_len());
    assert_eq!(a.kv_count(), b.kv_count());
    for ((ka, va), (kb, vb)) in a.metadata().zip(b.metadata()) {
        assert_eq!(ka, kb);
        assert_eq!(a.entry_range(ka), b.entry_range(kb), "key {ka}");
        // Compare by bytes so that NaN values compare equal to themselves.
        assert_eq!(format!("{va:?}"), format!("{vb:?}"), "key {ka}");
        if let (Some(xa), Some(xb)) = (va.as_array(), vb.as_array()) {
            assert_eq!(xa.raw_bytes(), xb.raw_bytes(), "key {ka}");
        }
    }
    assert_eq!(a.tensor_count(), b.tensor_count());
    for (ta, tb) in a.tensors().zip(b.tensors()) {
        assert_eq!(ta.name(), tb.name());
        assert_eq!(ta.ggml_type(), tb.ggml_type(), "tensor {}", ta.name());
        assert_eq!(ta.shape(), tb.shape(), "tensor {}", ta.name());
        assert_eq!(ta.n_dims(), tb.n_dims(), "tensor {}", ta.name());
        assert_eq!(ta.offset(), tb.offset(), "tensor {}", ta.name());
        assert_eq!(ta.info_offset(), tb.info_offset(), "tensor {}", ta.name());
        assert_eq!(
            ta.byte_size().ok(),
            tb.byte_size().ok(),
            "tensor {}",
            ta.name()
        );
    }
}

/// A reader that records the furthest byte position it was asked to read.
pub struct Recording<R> {
    pub inner: R,
    pub max_pos: u64,
}

impl<R: Read + Seek> Read for Recording<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let pos = self.inner.stream_position()?;
        self.max_pos = self.max_pos.max(pos);
        Ok(n)
    }
}

impl<R: Seek> Seek for Recording<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// Deterministic xorshift64* generator, so that sweeps need no extra crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
