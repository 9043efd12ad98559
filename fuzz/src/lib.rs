//! Helpers shared by the fuzz targets: a canonical, bit-exact summary of a
//! parsed file (so that two readings, or a file and its rewrite, can be
//! compared, NaN payloads included), the write modes, a small reader of
//! fuzz bytes, and the `split` target's input format ([`shard_set`]) and
//! seeds ([`split_seeds`]).

pub mod split_seeds;

use gguf_core::format::{Ctx, Endian, Value};
use gguf_core::write::{Builder, WriteMode, WriteOptions};
use gguf_core::{Gguf, GgufFile, Result};

/// A value in canonical form: its type tag and every bit of its content,
/// arrays walked recursively (through `iter`, `strings` and `typed`).
pub fn canon_value(v: &Value<'_>, out: &mut Vec<u8>) {
    out.push(v.value_type() as u8);
    match *v {
        Value::U8(x) => out.push(x),
        Value::I8(x) => out.push(x as u8),
        Value::U16(x) => out.extend(x.to_le_bytes()),
        Value::I16(x) => out.extend(x.to_le_bytes()),
        Value::U32(x) => out.extend(x.to_le_bytes()),
        Value::I32(x) => out.extend(x.to_le_bytes()),
        Value::F32(x) => out.extend(x.to_bits().to_le_bytes()),
        Value::Bool(x) => out.push(x as u8),
        Value::String(s) => {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        }
        Value::U64(x) => out.extend(x.to_le_bytes()),
        Value::I64(x) => out.extend(x.to_le_bytes()),
        Value::F64(x) => out.extend(x.to_bits().to_le_bytes()),
        Value::Array(a) => {
            out.push(a.element_type() as u8);
            out.extend((a.len() as u64).to_le_bytes());
            let mut n = 0usize;
            for e in a.iter() {
                canon_value(&e, out);
                n += 1;
            }
            assert_eq!(n, a.len(), "array iterator ended early");
            // The typed views agree with the generic iterator.
            if let Some(s) = a.strings() {
                assert_eq!(s.len(), a.len());
                for (x, e) in s.zip(a.iter()) {
                    assert_eq!(Some(x), e.as_str());
                }
            }
            check_typed(&a);
        }
    }
}

fn check_typed(a: &gguf_core::ArrayView<'_>) {
    macro_rules! typed {
        ($($t:ty => $v:ident),*) => {$(
            if let Some(it) = a.typed::<$t>() {
                assert_eq!(it.len(), a.len());
                for (x, e) in it.zip(a.iter()) {
                    let (mut c, mut d) = (Vec::new(), Vec::new());
                    canon_value(&Value::$v(x), &mut c);
                    canon_value(&e, &mut d);
                    assert_eq!(c, d, "typed {} view disagrees", stringify!($t));
                }
            }
        )*};
    }
    typed!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32,
        u64 => U64, i64 => I64, f32 => F32, f64 => F64, bool => Bool);
}

/// One tensor info: name, type id, shape, and the offset when `offsets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoSummary {
    pub name: String,
    pub type_id: u32,
    pub shape: Vec<u64>,
    pub offset: Option<u64>,
}

/// What a parsed file says, bit for bit, apart from its tensor data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub ctx: Ctx,
    pub alignment: u64,
    pub kvs: Vec<(String, Vec<u8>)>,
    pub tensors: Vec<InfoSummary>,
}

/// Summarises `file`; with `offsets`, tensor offsets and the layout too.
pub fn summary(file: &GgufFile<'_>, offsets: bool) -> Summary {
    let kvs = file
        .metadata()
        .map(|(k, v)| {
            let mut c = Vec::new();
            canon_value(&v, &mut c);
            // Lookup by key gives the same value.
            let mut d = Vec::new();
            canon_value(&file.value(k).expect("listed key is present"), &mut d);
            assert_eq!(c, d, "metadata() and value() disagree on {k:?}");
            (k.to_owned(), c)
        })
        .collect::<Vec<_>>();
    assert_eq!(kvs.len(), file.kv_count());
    let tensors = file
        .tensors()
        .map(|t| InfoSummary {
            name: t.name().to_owned(),
            type_id: t.ggml_type().id(),
            shape: t.shape().to_vec(),
            offset: offsets.then(|| t.offset()),
        })
        .collect::<Vec<_>>();
    assert_eq!(tensors.len(), file.tensor_count());
    Summary {
        ctx: file.ctx(),
        alignment: file.alignment(),
        kvs,
        tensors,
    }
}

/// The three write modes: single pass, the metadata-first handle, and
/// reserve then fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Single,
    MetadataFirst,
    Reserve,
}

/// The write modes every file is written in.
pub const MODES: [Mode; 3] = [Mode::Single, Mode::MetadataFirst, Mode::Reserve];

/// Writes `b` in `mode` to memory: the one place the targets call the
/// builder's write entry points.
pub fn write_in(b: &mut Builder<'_>, mode: Mode) -> Result<Vec<u8>> {
    match mode {
        Mode::Single => b.to_vec(),
        Mode::MetadataFirst => b.write_metadata_first(Vec::new())?.finish(),
        Mode::Reserve => {
            let mut out = std::io::Cursor::new(Vec::new());
            b.write_with(&mut out, WriteOptions::new().mode(WriteMode::Reserve))?;
            Ok(out.into_inner())
        }
    }
}

/// A `Write + Seek` that keeps nothing: how far the writer got.
#[derive(Default)]
struct Measure {
    pos: u64,
    end: u64,
}

impl std::io::Write for Measure {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pos += buf.len() as u64;
        self.end = self.end.max(self.pos);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for Measure {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.pos = match to {
            std::io::SeekFrom::Start(p) => p,
            std::io::SeekFrom::End(d) => self.end.checked_add_signed(d).unwrap(),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d).unwrap(),
        };
        Ok(self.pos)
    }
}

impl gguf_core::write::Output for Measure {}

/// Writes `b` in `mode` and keeps only the length: for files too large to
/// hold (a tiny header with a 1 GiB alignment is padded to 1 GiB).
pub fn written_len(b: &mut Builder<'_>, mode: Mode) -> Result<u64> {
    let mut out = Measure::default();
    match mode {
        Mode::Single => {
            b.write(&mut out)?;
        }
        Mode::MetadataFirst => {
            b.write_metadata_first(&mut out)?.finish()?;
        }
        Mode::Reserve => {
            b.write_with(&mut out, WriteOptions::new().mode(WriteMode::Reserve))?;
        }
    }
    Ok(out.end)
}

/// Reads fuzz bytes as a stream of small decisions; runs dry as zeros.
pub struct Bytes<'a>(pub &'a [u8]);

impl<'a> Bytes<'a> {
    /// The next byte, or 0.
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    /// The next `n` bytes (fewer when the input runs out).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }

    /// A little-endian integer of `N` bytes.
    pub fn u64_of(&mut self, n: usize) -> u64 {
        self.take(n)
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
    }

    /// A byte order.
    pub fn endian(&mut self) -> Endian {
        if self.u8() & 1 == 0 {
            Endian::Little
        } else {
            Endian::Big
        }
    }
}

/// Separates the files of a shard set in the `split` target's input (see
/// [`shard_set`]); also in the dictionary.
pub const SHARD_SEP: &[u8] = b"#gguf-shard#";

/// Most files of one shard set.
pub const MAX_SHARDS: usize = 4;

/// The `split` target's input: one control byte, then up to
/// [`MAX_SHARDS`] files separated by [`SHARD_SEP`] (the last takes the
/// rest, separators included). Always at least one file.
pub fn shard_set(data: &[u8]) -> (u8, Vec<&[u8]>) {
    let (control, mut rest) = match data.split_first() {
        Some((&c, rest)) => (c, rest),
        None => (0, data),
    };
    let mut files = Vec::new();
    while files.len() + 1 < MAX_SHARDS {
        match rest.windows(SHARD_SEP.len()).position(|w| w == SHARD_SEP) {
            Some(i) => {
                files.push(&rest[..i]);
                rest = &rest[i + SHARD_SEP.len()..];
            }
            None => break,
        }
    }
    files.push(rest);
    (control, files)
}

/// The inverse of [`shard_set`].
pub fn join_shard_set(control: u8, files: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![control];
    for (i, f) in files.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(SHARD_SEP);
        }
        out.extend_from_slice(f);
    }
    out
}
