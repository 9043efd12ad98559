//! What a quantizing run did (or, dry, would do): every tensor's type and
//! size, totals, bits per weight, time.

use std::path::PathBuf;
use std::time::Duration;

use gguf_core::GgmlType;

/// One tensor of a run, in output order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorReport {
    /// Its name in the output.
    pub name: String,
    /// Its shape, innermost first.
    pub shape: Vec<u64>,
    /// Its type in the input.
    pub source: GgmlType,
    /// Its type in the output.
    pub target: GgmlType,
    /// Its data bytes in the input.
    pub input_bytes: u64,
    /// Its data bytes in the output.
    pub output_bytes: u64,
    /// Its target is llama-quantize's fallback (rows not whole blocks).
    pub fell_back: bool,
    /// Quantized with a row of the importance matrix.
    pub imatrix: bool,
    /// The output file (index in [`QuantizeReport::files`]; 0 unless
    /// `--keep-split` wrote several).
    pub file: usize,
}

/// The outcome of [`quantize_model`](super::quantize_model) or
/// [`dry_run`](super::dry_run).
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizeReport {
    /// Every tensor written, in output order.
    pub tensors: Vec<TensorReport>,
    /// `general.file_type` of the output.
    pub file_type: u32,
    /// Elements of every input tensor (pruned ones included), what
    /// llama-quantize divides by for bits per weight.
    pub input_elements: u64,
    /// The files written, in shard order (none for a dry run).
    pub files: Vec<PathBuf>,
    /// Bytes of the files written (0 for a dry run).
    pub file_bytes: u64,
    /// A tensor's target needs an importance matrix and none was given:
    /// what a dry run warns about (a real run refuses).
    pub needs_imatrix: bool,
    /// Quantized tensors that would be quantized again: what a dry run
    /// warns about without `allow_requantize` (a real run refuses).
    pub requantized: usize,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl QuantizeReport {
    /// Tensor data bytes of the input tensors written (llama-quantize's
    /// "model size").
    pub fn input_bytes(&self) -> u64 {
        self.tensors.iter().map(|t| t.input_bytes).sum()
    }

    /// Tensor data bytes of the output (llama-quantize's "quant size").
    pub fn output_bytes(&self) -> u64 {
        self.tensors.iter().map(|t| t.output_bytes).sum()
    }

    /// Bits per weight of the input, as llama-quantize prints it.
    pub fn input_bpw(&self) -> f64 {
        bpw(self.input_bytes(), self.input_elements)
    }

    /// Bits per weight of the output, as llama-quantize prints it.
    pub fn output_bpw(&self) -> f64 {
        bpw(self.output_bytes(), self.input_elements)
    }

    /// How many tensors got a fallback type.
    pub fn fallbacks(&self) -> usize {
        self.tensors.iter().filter(|t| t.fell_back).count()
    }

    /// Output tensors per type, most first (then by type id).
    ///
    /// ```
    /// use gguf_llama::quantize::{QuantizeReport, TensorReport};
    /// use gguf_core::GgmlType as T;
    /// let t = |target| TensorReport { name: "w".into(), shape: vec![256], source: T::F16, target,
    ///     input_bytes: 512, output_bytes: 144, fell_back: false, imatrix: false, file: 0 };
    /// let r = QuantizeReport { tensors: vec![t(T::Q4_K), t(T::Q6_K), t(T::Q4_K)], file_type: 15,
    ///     input_elements: 768, files: vec![], file_bytes: 0, needs_imatrix: false, requantized: 0,
    ///     elapsed: Default::default() };
    /// assert_eq!(r.tensors_per_type(), [(T::Q4_K, 2), (T::Q6_K, 1)]);
    /// assert_eq!(r.input_bpw(), 16.0);
    /// ```
    pub fn tensors_per_type(&self) -> Vec<(GgmlType, usize)> {
        let mut counts: Vec<(GgmlType, usize)> = Vec::new();
        for t in &self.tensors {
            match counts.iter_mut().find(|(ty, _)| *ty == t.target) {
                Some((_, n)) => *n += 1,
                None => counts.push((t.target, 1)),
            }
        }
        counts.sort_by_key(|&(ty, n)| (std::cmp::Reverse(n), ty.id()));
        counts
    }
}

fn bpw(bytes: u64, elements: u64) -> f64 {
    if elements == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / elements as f64
    }
}
