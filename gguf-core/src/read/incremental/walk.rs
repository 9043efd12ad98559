//! The lower bound of where the header region ends, from a prefix of the
//! file: how far the next read must reach at least.

use crate::format::ValueType;

/// Why the walk stopped.
enum Stop {
    /// The prefix ended; the header region ends at this offset or later.
    Short(u64),
    /// Something the parser would reject or that the walk does not follow.
    Unknown,
}

/// A lower bound of where the header region (end of the tensor infos) of a
/// file starting with `prefix` ends, or 0 when the prefix does not tell.
///
/// It walks the same structure as the parser, without validating (the
/// parser has already validated everything up to where the prefix ends),
/// and where the prefix runs out it adds the least the rest can take.
pub(super) fn min_header_end(prefix: &[u8], file_len: u64) -> u64 {
    let mut w = Walker {
        buf: prefix,
        pos: 0,
        big: false,
        width: 8,
    };
    match w.header() {
        Ok(()) => w.pos,
        Err(Stop::Short(end)) => end.min(file_len),
        Err(Stop::Unknown) => 0,
    }
}

/// Deepest array nesting the walk follows (the parser's limit applies to
/// files; this one only bounds the recursion).
const WALK_DEPTH: u32 = 64;

struct Walker<'a> {
    buf: &'a [u8],
    pos: u64,
    big: bool,
    /// Width of counts and lengths: 4 in version 1, else 8.
    width: u64,
}

impl Walker<'_> {
    /// Moves past `n` bytes; `tail` is the least the header needs after them.
    fn skip(&mut self, n: u64, tail: u64) -> Result<(), Stop> {
        let end = self.pos.saturating_add(n);
        if end > self.buf.len() as u64 {
            return Err(Stop::Short(end.saturating_add(tail)));
        }
        self.pos = end;
        Ok(())
    }

    fn uint(&mut self, width: u64, tail: u64) -> Result<u64, Stop> {
        let at = self.pos as usize;
        self.skip(width, tail)?;
        let mut b = [0u8; 8];
        let field = &self.buf[at..at + width as usize];
        Ok(if self.big {
            b[8 - width as usize..].copy_from_slice(field);
            u64::from_be_bytes(b)
        } else {
            b[..width as usize].copy_from_slice(field);
            u64::from_le_bytes(b)
        })
    }

    fn string(&mut self, tail: u64) -> Result<(), Stop> {
        let len = self.uint(self.width, tail)?;
        self.skip(len, tail)
    }

    /// Least size of one value of `ty` (an element of an array of it).
    fn min_size(&self, ty: ValueType) -> u64 {
        match ty.fixed_size() {
            Some(n) => n as u64,
            None if ty == ValueType::String => self.width,
            None => 4 + self.width,
        }
    }

    fn header(&mut self) -> Result<(), Stop> {
        self.skip(4, 0)?;
        let version = self.uint(4, 0)?;
        // Same rule as the parser: a version with zero low bits was
        // written big-endian.
        if version & 0xFFFF == 0 && version != 0 {
            self.big = true;
        }
        let version = if self.big {
            (version as u32).swap_bytes()
        } else {
            version as u32
        };
        if version == 1 {
            self.width = 4;
        }
        let tensor_count = self.uint(self.width, self.width)?;
        let kv_count = self.uint(self.width, 0)?;
        // Name length, n_dims, type, offset.
        let min_info = self.width + 4 + 4 + 8;
        let infos = tensor_count.saturating_mul(min_info);
        // Key length, a one-byte key, type tag, a one-byte value.
        let min_entry = self.width + 1 + 4 + 1;
        for i in 0..kv_count {
            let tail = (kv_count - i - 1)
                .saturating_mul(min_entry)
                .saturating_add(infos);
            self.string(tail.saturating_add(4 + 1))?;
            let ty = self.uint(4, tail.saturating_add(1))?;
            self.value(ty, tail, 0)?;
        }
        let dim_width = if self.width == 4 { 4 } else { 8 };
        for i in 0..tensor_count {
            let tail = (tensor_count - i - 1).saturating_mul(min_info);
            self.string(tail.saturating_add(16))?;
            let n_dims = self.uint(4, tail.saturating_add(12))?;
            if n_dims > 4 {
                return Err(Stop::Unknown);
            }
            self.skip(n_dims * dim_width, tail.saturating_add(12))?;
            self.skip(12, tail)?;
        }
        Ok(())
    }

    fn value(&mut self, type_id: u64, tail: u64, depth: u32) -> Result<(), Stop> {
        let ty = u32::try_from(type_id)
            .ok()
            .and_then(ValueType::from_id)
            .ok_or(Stop::Unknown)?;
        if let Some(n) = ty.fixed_size() {
            return self.skip(n as u64, tail);
        }
        if ty == ValueType::String {
            return self.string(tail);
        }
        if depth >= WALK_DEPTH {
            return Err(Stop::Unknown);
        }
        let elem_id = self.uint(4, tail.saturating_add(self.width))?;
        let elem = u32::try_from(elem_id)
            .ok()
            .and_then(ValueType::from_id)
            .ok_or(Stop::Unknown)?;
        let count = self.uint(self.width, tail)?;
        if let Some(n) = elem.fixed_size() {
            return self.skip(count.saturating_mul(n as u64), tail);
        }
        let min = self.min_size(elem);
        if elem == ValueType::String {
            // A vocabulary: hop from length to length, without the
            // per-element dispatch of the general loop below.
            for j in 0..count {
                let rest = (count - j - 1).saturating_mul(min).saturating_add(tail);
                self.string(rest)?;
            }
            return Ok(());
        }
        // Each element takes at least `min` bytes, so the loop ends when
        // the prefix does, whatever the count says.
        for j in 0..count {
            let rest = (count - j - 1).saturating_mul(min).saturating_add(tail);
            self.value(elem_id, rest, depth + 1)?;
        }
        Ok(())
    }
}
