//! Byte-level helpers for this workspace's tests: build valid or
//! deliberately broken GGUF bytes field by field. Compiled only for unit
//! tests and with the non-default `testing` feature, which the root crate's
//! integration tests turn on; not part of the API.

use crate::format::{Endian, WireFormat};

/// Appends GGUF fields to a buffer in a given version and byte order.
#[derive(Debug, Clone, Default)]
pub struct Raw {
    /// The bytes so far.
    pub buf: Vec<u8>,
    /// Version and byte order used for numbers, lengths and counts.
    pub ctx: WireFormat,
}

impl Raw {
    /// Empty buffer with this context.
    pub fn new(ctx: WireFormat) -> Self {
        Raw {
            buf: Vec::new(),
            ctx,
        }
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }

    /// Appends a `u8`.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.bytes(&[v])
    }

    /// Appends a `u32` in the context's byte order.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        let b = match self.ctx.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        };
        self.bytes(&b)
    }

    /// Appends a `u64` in the context's byte order.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        let b = match self.ctx.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        };
        self.bytes(&b)
    }

    /// Appends an `f32` in the context's byte order.
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.u32(v.to_bits())
    }

    /// Appends a count or length (`u32` in v1, `u64` after).
    pub fn count(&mut self, v: u64) -> &mut Self {
        if self.ctx.version == 1 {
            self.u32(v as u32)
        } else {
            self.u64(v)
        }
    }

    /// Appends a length-prefixed string.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.count(s.len() as u64).bytes(s.as_bytes())
    }

    /// Appends magic, version, tensor count and KV count.
    pub fn header(&mut self, tensors: u64, kvs: u64) -> &mut Self {
        let version = self.ctx.version;
        self.bytes(b"GGUF").u32(version).count(tensors).count(kvs)
    }

    /// Appends a tensor info.
    pub fn tensor_info(&mut self, name: &str, dims: &[u64], ty: u32, offset: u64) -> &mut Self {
        self.str(name).u32(dims.len() as u32);
        for &d in dims {
            self.count(d);
        }
        self.u32(ty).u64(offset)
    }

    /// Pads with zeros to a multiple of `alignment`.
    pub fn pad(&mut self, alignment: usize) -> &mut Self {
        while !self.buf.len().is_multiple_of(alignment) {
            self.buf.push(0);
        }
        self
    }
}

/// A small valid v3 file: `general.architecture = "llama"`,
/// `llama.context_length: u32 = 4096`, a 4-token vocabulary with scores,
/// and two F32 tensors `token_embd.weight` `[8, 4]` (values 0..32) and
/// `output.weight` `[8, 2]`. Doc examples read the same bytes from
/// `tests/data/tiny.gguf`, so they do not need this module.
pub fn tiny_file() -> Vec<u8> {
    let mut r = Raw::new(WireFormat::default());
    r.header(2, 4);
    r.str("general.architecture").u32(8).str("llama");
    r.str("llama.context_length").u32(4).u32(4096);
    r.str("tokenizer.ggml.tokens").u32(9).u32(8).count(4);
    for t in ["<s>", "</s>", "a", "b"] {
        r.str(t);
    }
    r.str("tokenizer.ggml.scores").u32(9).u32(6).count(4);
    for s in [0.0f32, 0.0, -1.0, -2.0] {
        r.f32(s);
    }
    r.tensor_info("token_embd.weight", &[8, 4], 0, 0);
    r.tensor_info("output.weight", &[8, 2], 0, 128);
    r.pad(32);
    for i in 0..48 {
        r.f32(i as f32);
    }
    r.buf
}

pub use crate::write::temp::{PAUSE_AFTER_RENAME, PAUSE_BEFORE_RENAME};

/// Runs the codecs' AVX2 search kernels and the portable searches they
/// replace on inputs drawn from `bytes` (the `lane_searches` fuzz
/// target's oracle): `Err` describes the first result that differs. Does
/// nothing where the CPU lacks AVX2 or without the `simd` feature.
pub fn lane_searches_agree(bytes: &[u8]) -> std::result::Result<(), String> {
    crate::codec::agree::agree(bytes)
}

/// A deterministic xorshift64 generator from `seed` (non-zero): each call
/// gives a number below `n`. Random test inputs that repeat run to run,
/// without an RNG crate.
pub fn random_below(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}

/// Makes a FIFO at `path` (with the system's `mkfifo`), for tests of
/// inputs and outputs that are not regular files.
#[cfg(unix)]
pub fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status();
    assert!(
        status.is_ok_and(|s| s.success()),
        "mkfifo {}",
        path.display()
    );
}

/// The string array whose elements start at `body` in `bytes`, read with
/// the derived binrw codecs of the array header and of a string: the
/// reference the reader's hand-written hot path is compared with. The wire
/// codecs are private to the crate; this is their door for the
/// workspace's integration tests. `None` when the bytes there are not a
/// string array the codecs read.
pub fn wire_strings(bytes: &[u8], ctx: WireFormat, body: u64) -> Option<Vec<String>> {
    use crate::format::{ArrayHeaderWire, GgufString, ValueType};
    use binrw::BinRead;
    let mut cur = std::io::Cursor::new(bytes);
    cur.set_position(body.checked_sub(4 + ctx.count_width() as u64)?);
    let endian = ctx.endian.binrw();
    let header = ArrayHeaderWire::read_options(&mut cur, endian, ctx).ok()?;
    if header.element_type != ValueType::String.id() {
        return None;
    }
    (0..header.len.0)
        .map(|_| {
            GgufString::read_options(&mut cur, endian, ctx)
                .ok()
                .map(|s| s.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// The doc examples' copy of the tiny file is the same file.
    #[test]
    fn tiny_fixture_matches() {
        let fixture = include_bytes!("../tests/data/tiny.gguf");
        assert_eq!(&fixture[..], &super::tiny_file()[..]);
    }
}
