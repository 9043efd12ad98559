//! The conversion while the file is written: a slab of rows decoded to
//! `f32` (F32, F16, BF16, FP8 times its block scale), transformed and
//! encoded on every core; MXFP4 blocks moved as bytes.

use std::io::Write;

use crate::error::Result;
use gguf_core::codec;
use gguf_core::GgmlType;

use crate::checkpoint::{BlockScale, SourceTensor, SourceType};

use super::piece::{tensor_error, Origin, Piece, Planned};

/// Elements per slab of rows converted at once.
const SLAB: usize = 1 << 20;

/// Bytes of the next tensor's source asked of the kernel when a tensor
/// starts (see [`read_ahead`]).
const NEXT_TENSOR_BYTES: usize = 64 << 20;

/// Starts the kernel reading the first [`NEXT_TENSOR_BYTES`] of `t`'s
/// checkpoint bytes, so that they arrive while the tensor before it is
/// converted.
pub(crate) fn read_ahead(t: &Planned<'_>) {
    let mut budget = NEXT_TENSOR_BYTES;
    let sources: Vec<&SourceTensor<'_>> = match &t.origin {
        Origin::Checkpoint(pieces) => pieces.iter().map(|p| &p.source).collect(),
        Origin::Generated(_) => Vec::new(),
        Origin::Mxfp4(m) => vec![&m.blocks, &m.scales],
    };
    for src in sources {
        if budget == 0 {
            break;
        }
        let n = src.data.len().min(budget);
        src.read_ahead(0..n);
        budget -= n;
    }
}

/// Writes `t`'s output bytes to `w`: each slab of rows decoded to `f32`,
/// transformed (permuted, shifted, cut) and encoded to the output type, as
/// the converter's numpy code computes it. A stacked tensor is written
/// piece by piece (expert by expert), each piece's pages released once
/// written, so memory stays at a slab and one expert's mapped pages.
pub(crate) fn write_tensor(t: &Planned<'_>, w: &mut dyn Write) -> Result<()> {
    let pieces = match &t.origin {
        Origin::Checkpoint(pieces) => pieces,
        Origin::Generated(values) => {
            for v in values {
                w.write_all(&v.to_le_bytes())?;
            }
            return Ok(());
        }
        Origin::Mxfp4(m) => return write_mxfp4(&m.blocks, &m.scales, (m.first, m.step, m.rows), w),
    };
    let (block, type_size) = codec::geometry(t.ty, "quantize")?;
    // Every piece checked, then cut in slabs: (piece, first row, end row).
    let mut slabs: Vec<(usize, u64, u64)> = Vec::new();
    for (p, piece) in pieces.iter().enumerate() {
        let src = &piece.source;
        let elements: u64 = src.shape.iter().product();
        let expected = elements as usize * src.dtype.size();
        if src.data.len() != expected {
            return Err(tensor_error(
                src,
                format!(
                    "{} bytes of data, its shape needs {expected}",
                    src.data.len()
                ),
            ));
        }
        if !piece.fits(elements) {
            return Err(tensor_error(
                src,
                format!(
                    "{} rows of {} values from element {} lie past its {elements} values",
                    piece.rows, piece.len, piece.start
                ),
            ));
        }
        let rows_per_slab = (SLAB / (piece.len as usize).max(1)).max(1) as u64;
        let mut start = 0u64;
        while start < piece.rows {
            let end = (start + rows_per_slab).min(piece.rows);
            slabs.push((p, start, end));
            start = end;
        }
        if piece.rows == 0 {
            src.release();
        }
    }
    let convert = |&(p, start, end): &(usize, u64, u64), buf: &mut Vec<f32>, out: &mut Vec<u8>| {
        let piece = &pieces[p];
        let src = &piece.source;
        let inner = piece.len as usize;
        let n = (end - start) as usize;
        // The slab after this one read by the kernel meanwhile (rows in
        // source order; a permuted slab's rows lie within the same heads).
        let size = src.dtype.size() as u64;
        let slab_bytes = (end - start) * piece.row_step.max(inner as u64) * size;
        let ahead = (piece.start + end * piece.row_step) * size;
        src.read_ahead(ahead as usize..(ahead + slab_bytes) as usize);
        buf.resize(n * inner, 0.0);
        decode_rows(t, piece, start, buf);
        out.resize(n * inner / block * type_size, 0);
        encode(t.ty, buf, out, block, type_size)?;
        if end == piece.rows {
            // Its bytes are all converted: its pages are not needed again.
            src.release();
        }
        Ok(())
    };
    pipelined(&slabs, &convert, w)
}

/// Converts one slab into bytes of the output type: its values decoded
/// into the first buffer, encoded into the second.
type Convert<'c, S> = dyn Fn(&S, &mut Vec<f32>, &mut Vec<u8>) -> Result<()> + Sync + 'c;

/// Converts each of `slabs` and writes the results in order: on another
/// thread, the conversion of the next slab while this one writes the
/// last (copying into the page cache is a core's work too), through two
/// buffers handed back and forth.
#[cfg(feature = "parallel")]
fn pipelined<S: Sync>(slabs: &[S], convert: &Convert<'_, S>, w: &mut dyn Write) -> Result<()> {
    use std::sync::mpsc::sync_channel;
    if slabs.len() < 2 {
        return in_turn(slabs, convert, w);
    }
    std::thread::scope(|scope| {
        let (done, converted) = sync_channel::<Result<Vec<u8>>>(1);
        let (give_back, free) = sync_channel::<Vec<u8>>(2);
        for _ in 0..2 {
            let _ = give_back.send(Vec::new());
        }
        scope.spawn(move || {
            let mut buf = Vec::new();
            for slab in slabs {
                // Hung up: the writer failed and returned.
                let Ok(mut out) = free.recv() else { return };
                let result = convert(slab, &mut buf, &mut out).map(|()| out);
                let failed = result.is_err();
                if done.send(result).is_err() || failed {
                    return;
                }
            }
        });
        for _ in slabs {
            // A closed channel means the thread panicked; the scope
            // carries its panic on.
            let Ok(out) = converted.recv() else { break };
            let out = out?;
            w.write_all(&out)?;
            let _ = give_back.send(out);
        }
        Ok(())
    })
}

#[cfg(not(feature = "parallel"))]
fn pipelined<S>(slabs: &[S], convert: &Convert<'_, S>, w: &mut dyn Write) -> Result<()> {
    in_turn(slabs, convert, w)
}

/// Converts and writes each of `slabs` in turn, on this thread.
fn in_turn<S>(slabs: &[S], convert: &Convert<'_, S>, w: &mut dyn Write) -> Result<()> {
    let (mut buf, mut out) = (Vec::new(), Vec::new());
    for slab in slabs {
        convert(slab, &mut buf, &mut out)?;
        w.write_all(&out)?;
    }
    Ok(())
}

/// Writes MXFP4 blocks of ggml's layout (the shared exponent, then 16
/// bytes of values) from a checkpoint's blocks and scales, the rows
/// `first, first + step, ...` of each expert, as the converter's
/// `repack_mxfp4` does (a lossless move of bits).
fn write_mxfp4(
    blocks: &SourceTensor<'_>,
    scales: &SourceTensor<'_>,
    (first, step, rows): (u64, u64, u64),
    w: &mut dyn Write,
) -> Result<()> {
    let [experts, all_rows, nb, 16] = blocks.shape[..] else {
        return Err(tensor_error(
            blocks,
            format!(
                "shape {:?}: MXFP4 blocks are [experts, rows, blocks, 16] bytes",
                blocks.shape
            ),
        ));
    };
    let whole = |t: &SourceTensor<'_>| t.data.len() as u64 == t.shape.iter().product::<u64>();
    if scales.shape[..] != [experts, all_rows, nb] || !whole(blocks) || !whole(scales) {
        return Err(tensor_error(
            scales,
            format!("shape {:?}: the scales of MXFP4 blocks of shape {:?} are [experts, rows, blocks] bytes", scales.shape, blocks.shape),
        ));
    }
    let (nb, all_rows) = (nb as usize, all_rows as usize);
    let mut row = vec![0u8; nb * 17];
    for e in 0..experts as usize {
        for r in 0..rows as usize {
            let r = first as usize + r * step as usize;
            let at = e * all_rows + r;
            if r >= all_rows {
                return Err(tensor_error(blocks, format!("row {r} asked of {all_rows}")));
            }
            for b in 0..nb {
                let src = &blocks.data[(at * nb + b) * 16..][..16];
                let out = &mut row[b * 17..(b + 1) * 17];
                out[0] = scales.data[at * nb + b];
                repack_mxfp4_block(src, &mut out[1..]);
            }
            w.write_all(&row)?;
        }
    }
    blocks.release();
    scales.release();
    Ok(())
}

/// One block's 16 bytes of 4-bit values, from the checkpoint's nibble
/// order to ggml's: `out[2i]` and `out[2i + 1]` are made of the nibbles of
/// `src[i]` and `src[i + 8]` (the converter's `transform_nibble_layout`).
fn repack_mxfp4_block(src: &[u8], out: &mut [u8]) {
    let swap = |x: u8| x.rotate_left(4);
    for i in 0..8 {
        let (a, b) = (swap(src[i]), swap(src[i + 8]));
        out[2 * i] = swap((a & 0xF0) | (b >> 4));
        out[2 * i + 1] = swap(((a << 4) & 0xF0) | (b & 0x0F));
    }
}

/// The source row that output row `o` comes from: llama's permutation
/// reads row `h*2*half + j*half + i` for output row `h*2*half + 2*i + j`.
fn source_row(o: u64, permute: Option<u64>, outer: u64) -> u64 {
    match permute {
        Some(heads) => {
            let per_head = outer / heads;
            let half = per_head / 2;
            let (h, rem) = (o / per_head, o % per_head);
            h * per_head + (rem % 2) * half + rem / 2
        }
        None => o,
    }
}

/// Decodes rows `start..` of `piece` into `buf` (`piece.len` values each).
fn decode_rows(t: &Planned<'_>, piece: &Piece<'_>, start: u64, buf: &mut [f32]) {
    let src = &piece.source;
    let dtype = src.dtype;
    let size = dtype.size();
    let data = src.data;
    let inner = piece.len as usize;
    let cols = src.shape.last().copied().unwrap_or(1).max(1);
    let one_row = |(k, dst): (usize, &mut [f32])| {
        let local = source_row(start + k as u64, t.permute_heads, piece.rows);
        let first = (piece.start + local * piece.row_step) as usize;
        // A scaled FP8 weight gets its transforms after the scales.
        let add_one = t.add_one && src.scale.is_none();
        if piece.col_step == 1 {
            let bytes = &data[first * size..(first + inner) * size];
            decode(dtype, bytes, dst, add_one);
        } else {
            let step = piece.col_step as usize;
            for (j, d) in dst.iter_mut().enumerate() {
                let e = first + j * step;
                decode(
                    dtype,
                    &data[e * size..(e + 1) * size],
                    std::slice::from_mut(d),
                    add_one,
                );
            }
        }
        if let Some(scale) = &src.scale {
            apply_scale(scale, cols, first as u64, piece.col_step, dst);
            if t.add_one {
                dst.iter_mut().for_each(|d| *d += 1.0);
            }
        }
        if t.neg_exp {
            dst.iter_mut().for_each(|d| *d = -d.exp());
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        buf.par_chunks_mut(inner.max(1))
            .enumerate()
            .for_each(one_row);
    }
    #[cfg(not(feature = "parallel"))]
    buf.chunks_mut(inner.max(1)).enumerate().for_each(one_row);
}

/// One row of source values as `f32`, plus one when `add_one`: in the
/// source's own precision for F16 (the converter adds in torch's float16),
/// in `f32` otherwise (BF16 is widened first).
fn decode(dtype: SourceType, bytes: &[u8], dst: &mut [f32], add_one: bool) {
    // The codec's vectorized decoders where they give these values: the
    // same bits, but NaNs keep their payload as torch's widening does.
    let plain = match dtype {
        SourceType::F32 => Some(GgmlType::F32),
        SourceType::F16 if !add_one => Some(GgmlType::F16),
        SourceType::BF16 => Some(GgmlType::BF16),
        _ => None,
    };
    if plain.is_some_and(|ty| codec::dequantize(ty, gguf_core::Endian::Little, bytes, dst).is_ok())
    {
        if add_one {
            dst.iter_mut().for_each(|d| *d += 1.0);
        }
        return;
    }
    match dtype {
        SourceType::F32 => {
            for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(4)) {
                *d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            if add_one {
                dst.iter_mut().for_each(|d| *d += 1.0);
            }
        }
        SourceType::F16 => {
            for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(2)) {
                let x = half::f16::from_le_bytes([b[0], b[1]]).to_f32();
                *d = if add_one {
                    half::f16::from_f32(x + 1.0).to_f32()
                } else {
                    x
                };
            }
        }
        SourceType::BF16 => {
            for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(2)) {
                *d = half::bf16::from_le_bytes([b[0], b[1]]).to_f32();
            }
            if add_one {
                dst.iter_mut().for_each(|d| *d += 1.0);
            }
        }
        SourceType::F8E4M3 | SourceType::F8E5M2 | SourceType::U8 => {
            for (d, &b) in dst.iter_mut().zip(bytes) {
                *d = match dtype {
                    SourceType::F8E4M3 => f8_e4m3(b),
                    SourceType::F8E5M2 => half::f16::from_bits(u16::from(b) << 8).to_f32(),
                    // Refused before planning (`plan`): raw bytes are no values.
                    _ => f32::NAN,
                };
            }
            if add_one {
                dst.iter_mut().for_each(|d| *d += 1.0);
            }
        }
    }
}

/// `float8_e4m3fn` to `f32`, exactly: 4 exponent bits (bias 7), 3
/// mantissa bits, subnormals, no infinities, `S.1111.111` NaN.
fn f8_e4m3(b: u8) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = (b >> 3) & 0x0F;
    let man = f32::from(b & 0x07);
    if exp == 0x0F && b & 0x07 == 0x07 {
        return f32::NAN;
    }
    let magnitude = if exp == 0 {
        man / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + man / 8.0) * 2f32.powi(i32::from(exp) - 7)
    };
    sign * magnitude
}

/// Multiplies the values just decoded into `dst` (elements `first`,
/// `first + step`, ... of a 2-D FP8 weight of `cols` columns) by their
/// blocks' scales.
fn apply_scale(scale: &BlockScale<'_>, cols: u64, first: u64, step: u64, dst: &mut [f32]) {
    let (br, bc) = scale.block;
    let scale_cols = cols.div_ceil(bc.max(1));
    let s = &scale.scales;
    let size = s.dtype.size();
    let mut one = [0f32];
    for (j, d) in dst.iter_mut().enumerate() {
        let e = first + j as u64 * step;
        let (r, c) = (e / cols, e % cols);
        let i = ((r / br.max(1)) * scale_cols + c / bc.max(1)) as usize;
        decode(s.dtype, &s.data[i * size..(i + 1) * size], &mut one, false);
        *d *= one[0];
    }
}

/// Encodes `buf` to `ty` into `out`, on every core.
fn encode(ty: GgmlType, buf: &[f32], out: &mut [u8], block: usize, type_size: usize) -> Result<()> {
    // Pieces of whole blocks, large enough to amortise the scheduling.
    let piece_blocks = (65536 / block).max(1);
    let piece = piece_blocks * block;
    let piece_out = piece_blocks * type_size;
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        buf.par_chunks(piece)
            .zip(out.par_chunks_mut(piece_out))
            .try_for_each(|(s, o)| codec::quantize_into(ty, s, o))?;
        Ok(())
    }
    #[cfg(not(feature = "parallel"))]
    {
        buf.chunks(piece)
            .zip(out.chunks_mut(piece_out))
            .try_for_each(|(s, o)| codec::quantize_into(ty, s, o))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{f8_e4m3, repack_mxfp4_block};

    #[test]
    fn fp8_e4m3_values_are_exact() {
        assert_eq!(f8_e4m3(0x38), 1.0);
        assert_eq!(f8_e4m3(0xB8), -1.0);
        assert_eq!(f8_e4m3(0x7E), 448.0);
        assert_eq!(f8_e4m3(0x01), 2f32.powi(-9));
        assert_eq!(f8_e4m3(0x00), 0.0);
        assert!(f8_e4m3(0x7F).is_nan() && f8_e4m3(0xFF).is_nan());
        // Every other pattern is a finite value that round-trips through
        // its neighbours' order.
        let positives: Vec<f32> = (0u8..0x7F).map(f8_e4m3).collect();
        assert!(positives.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn mxfp4_nibbles_move_to_ggml_order() {
        // Value k of the block in the checkpoint: nibble k % 2 (low first)
        // of byte k / 2. In ggml's block, byte j holds value j (low) and
        // value j + 16 (high).
        let values: Vec<u8> = (0..32).map(|k| (k * 7 + 3) as u8 & 0x0F).collect();
        let src: Vec<u8> = (0..16)
            .map(|i| values[2 * i] | (values[2 * i + 1] << 4))
            .collect();
        let mut out = [0u8; 16];
        repack_mxfp4_block(&src, &mut out);
        let got: Vec<u8> = (0..32)
            .map(|k| {
                if k < 16 {
                    out[k] & 0x0F
                } else {
                    out[k - 16] >> 4
                }
            })
            .collect();
        assert_eq!(got, values);
    }
}
