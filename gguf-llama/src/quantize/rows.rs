//! One tensor converted as llama-quantize converts it: its rows decoded to
//! `f32` and encoded to the target type, each expert's rows with that
//! expert's row of the importance matrix, a slab of rows at a time, the
//! rows of a slab spread over the worker threads.

use std::io::Write;

use crate::error::Result;
use crate::error::{CodecError, Error, QuantizeError};
use gguf_core::codec;
use gguf_core::Tensor;
use gguf_core::{Endian, GgmlType};

/// Elements decoded and encoded per slab: bounds the output buffer (and,
/// for a memory-mapped input, the pages in use) whatever the tensor size.
const SLAB_ELEMS: usize = 4 << 20;

/// Elements per task of a worker thread (llama-quantize's minimum chunk
/// of `32 * 512`): at least one row.
const TASK_ELEMS: usize = 32 * 512;

/// The threads rows are spread over: rayon's global pool, or a pool of a
/// chosen size (`parallel` feature); the calling thread without it.
#[derive(Clone, Copy)]
pub(crate) struct Workers<'p> {
    #[cfg(feature = "parallel")]
    pub pool: Option<&'p rayon::ThreadPool>,
    #[cfg(not(feature = "parallel"))]
    pub pool: std::marker::PhantomData<&'p ()>,
}

/// Bytes of a row of `len` elements of `ty`.
fn row_bytes(name: &str, ty: GgmlType, len: usize) -> Result<usize> {
    match (ty.block_size(), ty.type_size()) {
        (Some(bs), Some(ts)) if len.is_multiple_of(bs as usize) => {
            Ok(len / bs as usize * ts as usize)
        }
        (Some(bs), Some(_)) => Err(codec_error(
            name,
            gguf_core::Error::Codec(CodecError::PartialBlock {
                ty,
                what: "row length",
                len: len as u64,
                unit: bs,
            }),
        )),
        _ => Err(Error::Gguf(gguf_core::Error::Codec(
            CodecError::UnknownTensorType {
                tensor: name.to_owned(),
                type_id: ty.id(),
            },
        ))),
    }
}

fn codec_error(name: &str, e: impl Into<gguf_core::Error>) -> Error {
    Error::Gguf(gguf_core::Error::Codec(CodecError::TensorCodec {
        tensor: name.to_owned(),
        source: Box::new(e.into()),
    }))
}

/// How tensor `t`'s rows are converted to `to`: its geometry, and the
/// slabs it is encoded in (a slab never crosses an expert, so its rows
/// share one row of importance weights).
struct Rows<'a> {
    name: &'a str,
    from: GgmlType,
    endian: Endian,
    to: GgmlType,
    row_len: usize,
    rows: usize,
    rows_per_expert: usize,
    rows_per_slab: usize,
    rows_per_task: usize,
    src_row: usize,
    dst_row: usize,
    weights: Option<&'a [f32]>,
}

impl<'a> Rows<'a> {
    /// `None` for a tensor without elements.
    fn new(t: &'a Tensor<'_>, to: GgmlType, weights: Option<&'a [f32]>) -> Result<Option<Self>> {
        let name = t.name();
        let shape = t.shape();
        let too_big = || {
            codec_error(
                name,
                gguf_core::Error::Codec(CodecError::LengthMismatch {
                    what: "elements addressable on this machine".into(),
                    expected: usize::MAX as u64,
                    actual: t.element_count(),
                }),
            )
        };
        let row_len =
            usize::try_from(shape.first().copied().unwrap_or(1)).map_err(|_| too_big())?;
        let n = usize::try_from(t.element_count()).map_err(|_| too_big())?;
        if row_len == 0 || n == 0 {
            return Ok(None);
        }
        let rows_per_expert =
            usize::try_from(shape.get(1).copied().unwrap_or(1).max(1)).map_err(|_| too_big())?;
        let from = t.ggml_type();
        Ok(Some(Rows {
            name,
            from,
            endian: t.file_endian(),
            to,
            row_len,
            rows: n / row_len,
            rows_per_expert,
            rows_per_slab: (SLAB_ELEMS / row_len).max(1),
            rows_per_task: (TASK_ELEMS / row_len).max(1),
            src_row: row_bytes(name, from, row_len)?,
            dst_row: row_bytes(name, to, row_len)?,
            weights: if to.is_plain() { None } else { weights },
        }))
    }

    /// The row after the slab that starts at `row`.
    fn slab_end(&self, row: usize) -> usize {
        let expert = row / self.rows_per_expert;
        self.rows
            .min(row + self.rows_per_slab)
            .min((expert + 1) * self.rows_per_expert)
    }

    fn length_error(&self, actual: usize) -> Error {
        codec_error(
            self.name,
            gguf_core::Error::Codec(CodecError::LengthMismatch {
                what: format!("data bytes of {} rows of {}", self.rows, self.from),
                expected: (self.rows * self.src_row) as u64,
                actual: actual as u64,
            }),
        )
    }

    /// Encodes the slab of rows starting at `row` (`src`, its source
    /// bytes) into `out` and writes it to `w`.
    fn encode(
        &self,
        row: usize,
        src: &[u8],
        out: &mut Vec<u8>,
        workers: Workers<'_>,
        w: &mut dyn Write,
    ) -> Result<()> {
        let (name, row_len, to) = (self.name, self.row_len, self.to);
        let expert = row / self.rows_per_expert;
        let end = self.slab_end(row);
        let expert_weights = match self.weights {
            Some(all) => Some(
                all.get(expert * row_len..(expert + 1) * row_len)
                    .ok_or_else(|| {
                        codec_error(
                            name,
                            gguf_core::Error::Codec(CodecError::LengthMismatch {
                                what: format!("importance weights for expert {expert}"),
                                expected: ((expert + 1) * row_len) as u64,
                                actual: all.len() as u64,
                            }),
                        )
                    })?,
            ),
            None => None,
        };
        out.resize((end - row) * self.dst_row, 0);
        let slab = Slab {
            from: self.from,
            endian: self.endian,
            to,
            row_len,
            src_row: self.src_row,
            dst_row: self.dst_row,
            rows_per_task: self.rows_per_task,
            weights: expert_weights,
        };
        slab.encode(src, out, workers)
            .map_err(|e| codec_error(name, e))?;
        if expert_weights.is_some() && !codec::ignores_weights(to) {
            let first_block =
                (row * self.dst_row / to.type_size().unwrap_or(1).max(1) as usize) as u64;
            finite_scales(name, self.from, to, out, first_block)?;
        }
        w.write_all(out)?;
        Ok(())
    }
}

/// Writes tensor `t` converted to `to` into `w`. `weights` holds the
/// importance of each column, one row of `shape[0]` values per expert
/// (`shape[2]` of them), or is `None`; float targets ignore it, as ggml
/// does. The bytes do not depend on the number of threads: every row is
/// encoded on its own.
pub(crate) fn convert_tensor(
    t: &Tensor<'_>,
    to: GgmlType,
    weights: Option<&[f32]>,
    workers: Workers<'_>,
    w: &mut dyn Write,
) -> Result<()> {
    let Some(rows) = Rows::new(t, to, weights)? else {
        return Ok(());
    };
    let data = t.read()?;
    let src_row = rows.src_row;
    let mut out = Vec::new();
    let mut row = 0;
    while row < rows.rows {
        let end = rows.slab_end(row);
        let src = data
            .get(row * src_row..end * src_row)
            .ok_or_else(|| rows.length_error(data.len()))?;
        rows.encode(row, src, &mut out, workers, w)?;
        t.release_pages((row * src_row) as u64..(end * src_row) as u64);
        row = end;
    }
    Ok(())
}

/// [`convert_tensor`] of a tensor whose bytes are not in its file (a
/// header-only `t`, as a builder's preview): `fill` writes them, in order,
/// into a sink that encodes each slab as soon as it is complete, so memory
/// stays at a slab whatever the tensor's size. The same bytes as
/// [`convert_tensor`] of a file holding them.
pub(crate) fn convert_stream(
    t: &Tensor<'_>,
    to: GgmlType,
    weights: Option<&[f32]>,
    workers: Workers<'_>,
    w: &mut dyn Write,
    fill: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let Some(rows) = Rows::new(t, to, weights)? else {
        return fill(&mut std::io::sink()).map_err(Error::from);
    };
    let mut feed = Feed {
        rows: &rows,
        row: 0,
        received: 0,
        pending: Vec::new(),
        out: Vec::new(),
        workers,
        w,
        failure: None,
    };
    let filled = fill(&mut feed);
    if let Some(e) = feed.failure.take() {
        return Err(e);
    }
    filled?;
    if feed.row < rows.rows {
        return Err(rows.length_error(feed.received));
    }
    Ok(())
}

/// The sink of [`convert_stream`]: source bytes gathered into a slab,
/// each full slab encoded and written.
struct Feed<'r, 'w> {
    rows: &'r Rows<'r>,
    /// The first row of the slab being gathered.
    row: usize,
    /// Source bytes received so far.
    received: usize,
    pending: Vec<u8>,
    out: Vec<u8>,
    workers: Workers<'w>,
    w: &'w mut dyn Write,
    /// The error an encoding gave, kept whole (the filler sees an io::Error).
    failure: Option<Error>,
}

impl Write for Feed<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let rows = self.rows;
        if buf.is_empty() {
            return Ok(0);
        }
        if self.row >= rows.rows {
            let e = rows.length_error(self.received + buf.len());
            let io = std::io::Error::other(e.to_string());
            self.failure = Some(e);
            return Err(io);
        }
        let want = (rows.slab_end(self.row) - self.row) * rows.src_row;
        let take = buf.len().min(want - self.pending.len());
        self.pending.extend_from_slice(&buf[..take]);
        self.received += take;
        if self.pending.len() == want {
            let encoded = rows.encode(
                self.row,
                &self.pending,
                &mut self.out,
                self.workers,
                &mut *self.w,
            );
            if let Err(e) = encoded {
                let io = std::io::Error::other(e.to_string());
                self.failure = Some(e);
                return Err(io);
            }
            self.pending.clear();
            self.row = rows.slab_end(self.row);
        }
        Ok(take)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Refuses encoded blocks with a non-finite scale. Importance weights
/// that pass [`Imatrix::validate`](super::Imatrix::validate) keep ggml's
/// weighted quantizers finite for weights of ordinary size, but not for
/// every input (huge values in the tensor itself): what overflowed shows
/// in the scales, and a file whose blocks decode to NaN is refused rather
/// than written. `first_block` is the index of `out`'s first block in the
/// tensor.
fn finite_scales(
    name: &str,
    from: GgmlType,
    to: GgmlType,
    out: &[u8],
    first_block: u64,
) -> Result<()> {
    let found = match gguf_core::read::non_finite_scales(to, Endian::Little, out) {
        Some(found) => found,
        None => {
            // Scales packed otherwise (IQ1_M): the decoded values tell.
            let bs = to.block_size().unwrap_or(1).max(1) as usize;
            let ts = to.type_size().unwrap_or(1).max(1) as usize;
            let mut values = vec![0f32; out.len() / ts * bs];
            codec::dequantize(to, Endian::Little, out, &mut values)
                .map_err(|e| codec_error(name, e))?;
            let mut blocks = values
                .chunks_exact(bs)
                .enumerate()
                .filter(|(_, b)| b.iter().any(|v| !v.is_finite()))
                .map(|(i, _)| i as u64);
            match blocks.next() {
                Some(first) => (1 + blocks.count() as u64, first),
                None => (0, 0),
            }
        }
    };
    match found {
        (0, _) => Ok(()),
        (count, first) => Err(Error::Quantize(QuantizeError::Unconvertible {
            tensor: name.to_owned(),
            from,
            to,
            reason: format!(
                "with its importance weights the quantizer gave {count} block(s) a non-finite \
                 scale (the first: block {}): the importance matrix entry's weights are too \
                 large for these values",
                first_block + first
            ),
        })),
    }
}

/// Rows of one expert, to encode.
struct Slab<'w> {
    from: GgmlType,
    endian: Endian,
    to: GgmlType,
    row_len: usize,
    src_row: usize,
    dst_row: usize,
    rows_per_task: usize,
    weights: Option<&'w [f32]>,
}

impl Slab<'_> {
    /// Rows of `src` (whole rows of `from`) decoded and encoded into `out`.
    fn task(&self, src: &[u8], out: &mut [u8], buf: &mut Vec<f32>) -> gguf_core::Result<()> {
        buf.resize(src.len() / self.src_row * self.row_len, 0.0);
        codec::dequantize(self.from, self.endian, src, buf)?;
        codec::quantize_rows_into(self.to, buf, self.row_len, self.weights, out)
    }

    fn encode(&self, src: &[u8], out: &mut [u8], workers: Workers<'_>) -> gguf_core::Result<()> {
        let (src_task, dst_task) = (
            self.rows_per_task * self.src_row,
            self.rows_per_task * self.dst_row,
        );
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            let mut all = || {
                src.par_chunks(src_task)
                    .zip(out.par_chunks_mut(dst_task))
                    .try_for_each_init(Vec::new, |buf, (s, o)| self.task(s, o, buf))
            };
            match workers.pool {
                Some(pool) => pool.install(all),
                None => all(),
            }
        }
        #[cfg(not(feature = "parallel"))]
        {
            let _ = workers;
            let mut buf = Vec::new();
            src.chunks(src_task)
                .zip(out.chunks_mut(dst_task))
                .try_for_each(|(s, o)| self.task(s, o, &mut buf))
        }
    }
}
