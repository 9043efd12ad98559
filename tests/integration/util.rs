//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::io::{Cursor, Read, Seek, SeekFrom};

pub use gguf::testing::{tiny_file, Raw};
use gguf::{format::WireFormat, Endian, Error, GgmlType, Gguf, GgufFile};
use gguf::{
    format::{OwnedArray, OwnedValue},
    write::{Builder, TensorData, WriteMode, WriteOptions},
};

/// Runs the `gguf` binary built for these tests with `args`.
pub fn gguf<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
        .args(args)
        .output()
        .expect("run gguf")
}

/// The standard output of a `gguf` run that must have succeeded (its
/// standard error is the failure message otherwise).
#[track_caller]
pub fn stdout(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "gguf failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("gguf printed UTF-8")
}

/// Context for a version and byte order.
pub fn ctx(version: u32, endian: Endian) -> WireFormat {
    WireFormat { version, endian }
}

/// A `Raw` for a little-endian v3 file.
pub fn raw() -> Raw {
    Raw::new(WireFormat::default())
}

/// Writes `bytes` to a fresh temporary file and opens it with `GgufFile::open`.
pub fn open_via_file(bytes: &[u8]) -> gguf::Result<GgufFile<'static>> {
    let mut tmp = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut tmp, bytes).expect("write temp file");
    // The map outlives the path: it keeps the (unlinked) file alive.
    GgufFile::open(tmp.path())
}

/// The error of opening `bytes` written to a temporary file, and its path.
fn open_via_file_err(bytes: &[u8]) -> (Error, std::path::PathBuf) {
    let mut tmp = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut tmp, bytes).expect("write temp file");
    let e = GgufFile::open(tmp.path()).expect_err("open accepted a hostile file");
    (e, tmp.path().to_owned())
}

/// Parses a rejected file with `from_bytes`, `from_reader` and `open`,
/// asserts that all three give the same error, and returns it.
#[track_caller]
pub fn reject(bytes: &[u8]) -> Error {
    let a = GgufFile::open(bytes).expect_err("from_bytes accepted a hostile file");
    let b = GgufFile::open(gguf::Source::reader(std::io::Cursor::new(bytes.to_vec())))
        .expect_err("from_reader accepted a hostile file");
    let (c, path) = open_via_file_err(bytes);
    // Opened by path, the error names the file, once; inside it is the
    // same error.
    assert_eq!(c.path(), Some(path.as_path()), "{c}");
    assert_eq!(c.offset(), a.offset(), "{c}");
    assert_eq!(
        c.to_string().matches(&*path.to_string_lossy()).count(),
        1,
        "{c}"
    );
    let (da, db, dc) = (
        format!("{a:?}"),
        format!("{b:?}"),
        format!("{:?}", c.detail()),
    );
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
    let file =
        GgufFile::open(bytes).unwrap_or_else(|e| panic!("from_bytes rejected a valid file: {e}"));
    let streamed = GgufFile::open(gguf::Source::reader(std::io::Cursor::new(bytes.to_vec())))
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
    assert_eq!(a.wire_format(), b.wire_format());
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
    /// Shared, so that it can be read while the stream is opened.
    pub max_pos: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read + Seek> Read for Recording<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let pos = self.inner.stream_position()?;
        self.max_pos
            .fetch_max(pos, std::sync::atomic::Ordering::Relaxed);
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

/// Deterministic pseudo-random bytes (xorshift), so tests need no RNG crate.
pub fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// One tensor of a test file: its data as little-endian numbers (or raw
/// blocks for quantized types).
#[derive(Debug, Clone)]
pub struct TensorSpec {
    pub name: String,
    pub ty: GgmlType,
    /// ggml order, innermost first.
    pub shape: Vec<u64>,
    /// Little-endian element bytes (plain types) or raw blocks.
    pub le: Vec<u8>,
}

impl TensorSpec {
    /// A tensor filled with noise of exactly the size its type and shape need.
    pub fn new(name: &str, ty: GgmlType, shape: &[u64], seed: u64) -> Self {
        let n = gguf::format::tensor_nbytes(ty, shape).expect("valid test shape") as usize;
        TensorSpec {
            name: name.into(),
            ty,
            shape: shape.to_vec(),
            le: noise(seed, n),
        }
    }

    /// Size of one number for plain types, 1 (no swapping) otherwise.
    pub fn elem_size(&self) -> usize {
        if self.ty.is_plain() {
            self.ty.type_size().unwrap() as usize
        } else {
            1
        }
    }

    /// The bytes as they must appear in a file of byte order `endian`
    /// (computed here, independently of the writer).
    pub fn file_bytes(&self, endian: Endian) -> Vec<u8> {
        let mut b = self.le.clone();
        if endian == Endian::Big {
            for e in b.chunks_exact_mut(self.elem_size()) {
                e.reverse();
            }
        }
        b
    }

    /// The numbers in this machine's byte order.
    fn native(&self) -> Vec<u8> {
        self.file_bytes(Endian::NATIVE)
    }
}

/// How tensor data is handed to the builder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// Bytes already in the file's byte order.
    Bytes,
    /// Native numbers (plain types; raw bytes for quantized ones).
    Native,
    /// A closure writing the bytes in small pieces.
    Fn,
    /// Declared without data, supplied through metadata-first writing.
    Deferred,
}

/// How the builder is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Single,
    /// `write_metadata_first` + `finish()` (data from the sources).
    MetaFirst,
    /// `write_metadata_first` + `write_tensor` for each tensor.
    MetaFirstManual,
    Reserved,
}

/// Everything a test file holds, described independently of the writer.
#[derive(Debug, Clone)]
pub struct Content {
    pub ctx: WireFormat,
    pub alignment: u32,
    pub kvs: Vec<(String, OwnedValue)>,
    pub tensors: Vec<TensorSpec>,
}

impl Content {
    /// A builder holding this content, tensor data given as `src`.
    pub fn builder(&self, src: Src) -> Builder<'_> {
        let mut b = Builder::new();
        b.version(self.ctx.version).unwrap();
        b.endian(self.ctx.endian);
        for (k, v) in &self.kvs {
            b.set(k.as_str(), v.clone()).unwrap();
        }
        b.alignment(self.alignment).unwrap();
        for t in &self.tensors {
            let bytes = t.file_bytes(self.ctx.endian);
            match src {
                Src::Bytes => b.add_tensor(t.name.as_str(), t.ty, &t.shape, bytes),
                Src::Native if t.ty.is_plain() => b.add_tensor(
                    t.name.as_str(),
                    t.ty,
                    &t.shape,
                    TensorData::Native {
                        bytes: t.native().into(),
                        elem_size: t.elem_size(),
                    },
                ),
                Src::Native => b.add_tensor(t.name.as_str(), t.ty, &t.shape, &t.le[..]),
                Src::Fn => b.add_tensor_fn(t.name.as_str(), t.ty, &t.shape, move |w| {
                    for piece in bytes.chunks(7) {
                        w.write_all(piece)?;
                    }
                    Ok(())
                }),
                Src::Deferred => b.add_tensor_info(t.name.as_str(), t.ty, &t.shape),
            }
            .unwrap();
        }
        b
    }

    /// Writes the content in `mode` (sources `src`), returning the bytes.
    pub fn write(&self, mode: Mode, src: Src) -> Vec<u8> {
        let mut b = self.builder(src);
        match mode {
            Mode::Single => {
                let mut out = Vec::new();
                b.write(&mut out).unwrap();
                out
            }
            Mode::MetaFirst => {
                let mut out = Vec::new();
                b.write_metadata_first(&mut out).unwrap().finish().unwrap();
                out
            }
            Mode::MetaFirstManual => {
                let mut out = Vec::new();
                let mut w = b.write_metadata_first(&mut out).unwrap();
                for t in &self.tensors {
                    w.write_tensor(&t.name, &t.file_bytes(self.ctx.endian))
                        .unwrap();
                }
                w.finish().unwrap();
                out
            }
            Mode::Reserved => {
                let mut out = Cursor::new(Vec::new());
                b.write_with(&mut out, WriteOptions::new().mode(WriteMode::Reserve))
                    .unwrap();
                out.into_inner()
            }
        }
    }

    /// Every key written, in order, with `general.alignment` where the
    /// builder puts it (last of the metadata, unless it is the default).
    pub fn expected_kvs(&self) -> Vec<(String, OwnedValue)> {
        let mut kvs = self.kvs.clone();
        if self.alignment != 32 {
            kvs.push(("general.alignment".into(), OwnedValue::U32(self.alignment)));
        }
        kvs
    }

    /// Opens `bytes` with our reader and checks it holds exactly this content.
    pub fn check_read_back(&self, bytes: &[u8]) {
        let file = GgufFile::open(bytes).expect("written file reads back");
        assert_eq!(file.version(), self.ctx.version);
        assert_eq!(file.endian(), self.ctx.endian);
        assert_eq!(file.alignment(), u64::from(self.alignment));
        let got: Vec<(String, OwnedValue)> = file
            .metadata()
            .map(|(k, v)| (k.to_owned(), OwnedValue::from_value(&v)))
            .collect();
        assert_eq!(got, self.expected_kvs());
        assert_eq!(file.tensor_count(), self.tensors.len());
        for (t, spec) in file.tensors().zip(&self.tensors) {
            assert_eq!(t.name(), spec.name);
            assert_eq!(t.ggml_type(), spec.ty);
            assert_eq!(t.shape(), &spec.shape[..]);
            assert_eq!(t.offset() % u64::from(self.alignment), 0);
            assert!(
                t.data().unwrap() == spec.file_bytes(self.ctx.endian),
                "data of {}",
                spec.name
            );
        }
        // Every tensor, the last one included, is padded to the alignment.
        assert_eq!(bytes.len() as u64 % u64::from(self.alignment), 0);
    }
}

/// One metadata entry of every value type, arrays of every element type,
/// nested arrays (with inner arrays of different types and an empty one),
/// empty strings and arrays, and non-ASCII text.
pub fn every_value() -> Vec<(String, OwnedValue)> {
    use OwnedValue as V;
    let kvs = vec![
        ("general.architecture", V::String("llama".into())),
        ("t.u8", V::U8(200)),
        ("t.i8", V::I8(-100)),
        ("t.u16", V::U16(60000)),
        ("t.i16", V::I16(-30000)),
        ("t.u32", V::U32(4_000_000_000)),
        ("t.i32", V::I32(-2_000_000_000)),
        ("t.f32", V::F32(-1.25)),
        ("t.bool_true", V::Bool(true)),
        ("t.bool_false", V::Bool(false)),
        ("t.string", V::String("héllo wörld ✓".into())),
        ("t.empty_string", V::String(String::new())),
        ("t.u64", V::U64(u64::MAX - 1)),
        ("t.i64", V::I64(i64::MIN + 1)),
        ("t.f64", V::F64(std::f64::consts::PI)),
        ("a.u8", V::Array(OwnedArray::U8(vec![0, 1, 255]))),
        ("a.i8", V::Array(OwnedArray::I8(vec![-128, 0, 127]))),
        ("a.u16", V::Array(OwnedArray::U16(vec![1, 65535]))),
        ("a.i16", V::Array(OwnedArray::I16(vec![-32768, 5]))),
        ("a.u32", V::Array(OwnedArray::U32(vec![7, 4_000_000_000]))),
        ("a.i32", V::Array(OwnedArray::I32(vec![-1, 2, -3]))),
        ("a.f32", V::Array(OwnedArray::F32(vec![0.5, -2.0, 1e-3]))),
        (
            "a.bool",
            V::Array(OwnedArray::Bool(vec![true, false, true])),
        ),
        (
            "a.string",
            V::Array(OwnedArray::String(vec![
                "<s>".into(),
                "".into(),
                "▁the".into(),
            ])),
        ),
        ("a.u64", V::Array(OwnedArray::U64(vec![u64::MAX, 0]))),
        ("a.i64", V::Array(OwnedArray::I64(vec![i64::MIN, 1]))),
        ("a.f64", V::Array(OwnedArray::F64(vec![1.5, -1e300]))),
        ("a.empty", V::Array(OwnedArray::U32(vec![]))),
        (
            "a.nested",
            V::Array(OwnedArray::Array(vec![
                OwnedArray::I32(vec![1, 2]),
                OwnedArray::String(vec!["x".into(), "yz".into()]),
                OwnedArray::F32(vec![]),
                OwnedArray::Array(vec![OwnedArray::U8(vec![9])]),
            ])),
        ),
    ];
    kvs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Tensors of every plain type, plus quantized ones when `quantized`, of
/// 1 to 4 dimensions, with sizes that need padding.
pub fn tensor_set(quantized: bool) -> Vec<TensorSpec> {
    let mut v = vec![
        TensorSpec::new("f32.2d", GgmlType::F32, &[5, 3], 1),
        TensorSpec::new("f16.1d", GgmlType::F16, &[7], 2),
        TensorSpec::new("bf16.3d", GgmlType::BF16, &[3, 2, 2], 3),
        TensorSpec::new("f64.1d", GgmlType::F64, &[3], 4),
        TensorSpec::new("i8.1d", GgmlType::I8, &[5], 5),
        TensorSpec::new("i16.2d", GgmlType::I16, &[3, 3], 6),
        TensorSpec::new("i32.4d", GgmlType::I32, &[2, 1, 3, 2], 7),
        TensorSpec::new("i64.1d", GgmlType::I64, &[3], 8),
    ];
    if quantized {
        v.push(TensorSpec::new("q4_0", GgmlType::Q4_0, &[64, 2], 9));
        v.push(TensorSpec::new("q8_0", GgmlType::Q8_0, &[32, 3], 10));
        v.push(TensorSpec::new("q4_k", GgmlType::Q4_K, &[256], 11));
    }
    v.push(TensorSpec::new("empty", GgmlType::F32, &[0, 4], 12));
    v
}

/// Content of every value type and the tensor set for `ctx` and `alignment`
/// (quantized tensors only in little-endian files).
pub fn rich(ctx: WireFormat, alignment: u32) -> Content {
    Content {
        ctx,
        alignment,
        kvs: every_value(),
        tensors: tensor_set(ctx.endian == Endian::Little),
    }
}

/// Runs `python3` with a script from `tests/oracles`, failing the test with
/// a clear message when Python or gguf-py is missing.
pub fn python(script: &str, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oracles")
        .join(script);
    let out = std::process::Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run python3 ({e}): the interop tests need Python 3 with gguf-py; \
                 install it with `python3 -m pip install -r tests/oracles/requirements.txt`"
            )
        });
    assert!(
        out.status.success(),
        "{script} failed (gguf-py missing? run `python3 -m pip install -r tests/oracles/requirements.txt`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
