//! How far a quantization run has come, in work rather than bytes.
//!
//! A run's time goes into encoding the tensors that change type; the ones
//! copied as they are cost next to nothing per byte. A progress measure in
//! bytes (input or output) races through the copies and then stalls on a
//! quantized tensor, and an ETA from its rate says "1s" for most of the
//! run. Here each tensor weighs what encoding it costs: its elements times
//! a relative cost per element of the target type (decoding a quantized
//! source adds to it, an importance matrix doubles the search of the types
//! that use one), divided among the threads that encode rows; copied
//! tensors and the header weigh their bytes at the smallest cost. The
//! costs are coarse classes, in the order of magnitude of ggml's encoders
//! on one core (float conversion, then the one-pass legacy and MX types,
//! then the K-quants' scale searches, then the IQ types' grid searches):
//! enough for the bar's rate to stay roughly steady across a run.

use gguf_core::GgmlType;

/// The work of one byte copied as it is (the unit).
const COPY_BYTE: u64 = 1;

/// The work of encoding one element to `ty`, in [`COPY_BYTE`]s.
fn encode_cost(ty: GgmlType, weighted: bool) -> u64 {
    use GgmlType as T;
    let (cost, searches) = match ty {
        T::F32 | T::F16 | T::BF16 => (8, false),
        T::Q4_0 | T::Q4_1 | T::Q5_0 | T::Q5_1 | T::Q8_0 | T::MXFP4 | T::NVFP4 => (32, true),
        T::IQ2_XXS | T::IQ2_XS | T::IQ2_S | T::IQ3_XXS | T::IQ3_S | T::IQ1_S | T::IQ1_M => {
            (1024, false)
        }
        // K-quants, ternary, IQ4 and whatever else: a search per block.
        _ => (128, true),
    };
    if weighted && searches {
        cost * 2
    } else {
        cost
    }
}

/// The work of decoding one element of `ty` before encoding it again.
fn decode_cost(ty: GgmlType) -> u64 {
    if ty == GgmlType::F32 {
        0
    } else {
        8
    }
}

/// One tensor of a run as the meter weighs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TensorWork {
    /// Its elements.
    pub elements: u64,
    /// Its type in the input.
    pub source: GgmlType,
    /// Its type in the output (the same when it is copied).
    pub target: GgmlType,
    /// Whether an importance matrix weights its encoding.
    pub weighted: bool,
    /// Its bytes in the output, padding included.
    pub bytes: u64,
}

impl TensorWork {
    /// Its work, with `threads` encoding rows at once.
    fn work(&self, threads: u64) -> u64 {
        let copy = self.bytes.saturating_mul(COPY_BYTE);
        if self.source == self.target {
            return copy;
        }
        let per_element = encode_cost(self.target, self.weighted) + decode_cost(self.source);
        let encode = self.elements.saturating_mul(per_element) / threads.max(1);
        copy.saturating_add(encode)
    }
}

/// Maps the bytes written of each output file to the work done, for the
/// progress of a run: the writer reports bytes, the caller is told work.
#[derive(Debug)]
pub(crate) struct WorkMeter {
    /// Per file: where each piece ends, in bytes of that file and in work
    /// done since the run began (the header is the first piece).
    files: Vec<Vec<(u64, u64)>>,
    total: u64,
}

impl WorkMeter {
    /// The meter of files that each hold a header of `header` bytes and
    /// then `tensors`, in order.
    pub(crate) fn new(files: &[(u64, Vec<TensorWork>)], threads: usize) -> Self {
        let threads = threads as u64;
        let mut done = 0u64;
        let files = files
            .iter()
            .map(|(header, tensors)| {
                let mut pieces = Vec::with_capacity(tensors.len() + 1);
                done = done.saturating_add(header.saturating_mul(COPY_BYTE));
                let mut at = *header;
                pieces.push((at, done));
                for t in tensors {
                    at = at.saturating_add(t.bytes);
                    done = done.saturating_add(t.work(threads));
                    pieces.push((at, done));
                }
                pieces
            })
            .collect();
        WorkMeter { files, total: done }
    }

    /// The work of the whole run.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The work done once `bytes` of file `file` are written (every file
    /// before it complete): the pieces that end by then, and the share of
    /// the piece under way that its bytes make.
    pub(crate) fn done(&self, file: usize, bytes: u64) -> u64 {
        let Some(pieces) = self.files.get(file) else {
            return self.total;
        };
        // Work and end of the piece before `file`'s first.
        let before = self.files[..file]
            .iter()
            .rev()
            .find_map(|f| f.last())
            .map_or(0, |&(_, w)| w);
        let mut start = (0u64, before);
        for &(end, work) in pieces {
            if bytes >= end {
                start = (end, work);
                continue;
            }
            let (from, done) = start;
            let share = (bytes - from) as u128 * u128::from(work - done) / u128::from(end - from);
            return done + share as u64;
        }
        start.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use GgmlType as T;

    fn tensor(source: T, target: T, elements: u64, bytes: u64) -> TensorWork {
        TensorWork {
            elements,
            source,
            target,
            weighted: false,
            bytes,
        }
    }

    /// A run of one large tensor copied and one quantized: by bytes the
    /// copy is nearly all of it, by work the quantized tensor is.
    #[test]
    fn copies_weigh_little_and_encoding_much() {
        let copied = tensor(T::Q8_0, T::Q8_0, 1 << 20, 1_114_112);
        let quantized = tensor(T::F16, T::Q4_K, 1 << 18, 147_456);
        let meter = WorkMeter::new(&[(1000, vec![copied, quantized])], 1);
        let after_copy = meter.done(0, 1000 + 1_114_112);
        // Bytes say 88% done after the copy; work says under 5%.
        assert!(
            after_copy * 20 < meter.total(),
            "{after_copy} of {}",
            meter.total()
        );
        assert_eq!(meter.done(0, 1000 + 1_114_112 + 147_456), meter.total());
        // Halfway through the quantized tensor's bytes, about half the run.
        let half = meter.done(0, 1000 + 1_114_112 + 147_456 / 2);
        let share = half as f64 / meter.total() as f64;
        assert!((0.45..0.55).contains(&share), "{share}");
    }

    /// Work only grows with the bytes written, across files, and ends at
    /// the total; more threads make encoding weigh less.
    #[test]
    fn progress_is_monotonic_across_files() {
        let a = vec![
            tensor(T::F32, T::Q4_0, 4096, 2304),
            tensor(T::F32, T::F32, 64, 256),
        ];
        let b = vec![tensor(T::BF16, T::IQ2_XXS, 4096, 1056)];
        let files = [(512, a), (256, b)];
        let meter = WorkMeter::new(&files, 2);
        let mut last = 0;
        for (file, len) in [(0usize, 512 + 2304 + 256), (1, 256 + 1056)] {
            for bytes in (0..=len).step_by(7).chain([len]) {
                let done = meter.done(file, bytes);
                assert!(done >= last, "file {file} at {bytes}: {done} < {last}");
                last = done;
            }
        }
        assert_eq!(last, meter.total());
        assert_eq!(meter.done(2, 0), meter.total());
        let one = WorkMeter::new(&files, 1).total();
        assert!(one > meter.total());
        // An IQ2 element costs more than a Q4_0 one, weighted more still.
        assert!(encode_cost(T::IQ2_XXS, false) > encode_cost(T::Q4_0, true));
        assert!(encode_cost(T::Q4_K, true) > encode_cost(T::Q4_K, false));
    }
}
