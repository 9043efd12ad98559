//! `gguf convert IN OUT --type T`: re-encode the floating-point weight
//! matrices to another type, as llama-quantize selects them.

use std::path::PathBuf;

use gguf::write::{Builder, WriteMode};
use gguf::{tensor, GgmlType, Model, Tensor};

#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file to read.
    input: PathBuf,
    /// Where to write; may be the input itself (replaced atomically).
    output: PathBuf,
    /// Target type of the weight matrices, by ggml name (F16, Q8_0, Q4_K, ...).
    #[arg(long = "type", value_name = "T", value_parser = parse_type)]
    ty: GgmlType,
}

fn parse_type(s: &str) -> Result<GgmlType, String> {
    let ty = GgmlType::from_name(s).ok_or_else(|| format!("unknown ggml type {s:?}"))?;
    if !tensor::can_quantize(ty) {
        let names: Vec<_> = GgmlType::ALL
            .iter()
            .filter(|&&t| tensor::can_quantize(t))
            .filter_map(|t| t.name())
            .collect();
        return Err(format!(
            "no quantizer for {ty}; supported: {}",
            names.join(", ")
        ));
    }
    Ok(ty)
}

/// llama.cpp's `general.file_type` (`enum llama_ftype` in llama.h, gguf-py's
/// `LlamaFileType`) for a file whose weights are `ty`. K-quants map to the
/// `_M` variants, as llama.cpp's own tools map a uniform K type; types
/// with no file type in llama.h give `None`.
pub fn file_type(ty: GgmlType) -> Option<u32> {
    use GgmlType as T;
    Some(match ty {
        T::F32 => 0,
        T::F16 => 1,
        T::Q4_0 => 2,
        T::Q4_1 => 3,
        T::Q8_0 => 7,
        T::Q5_0 => 8,
        T::Q5_1 => 9,
        T::Q2_K => 10,
        T::Q3_K => 12,
        T::Q4_K => 15,
        T::Q5_K => 17,
        T::Q6_K => 18,
        T::IQ4_NL => 25,
        T::BF16 => 32,
        T::TQ1_0 => 36,
        T::TQ2_0 => 37,
        T::MXFP4 => 38,
        T::NVFP4 => 39,
        T::Q1_0 => 40,
        _ => return None,
    })
}

/// ggml's `ggml_n_dims`: dimensions up to the last one above 1.
fn effective_dims(shape: &[u64]) -> usize {
    shape.iter().rposition(|&d| d > 1).map_or(1, |i| i + 1)
}

/// Whether llama-quantize would re-encode `t` to `ty`: a floating-point
/// (F32/F16/BF16) tensor named `*weight` with at least 2 effective
/// dimensions (norms, biases and other vectors stay as they are) and a
/// row length that is a whole number of `ty` blocks.
pub fn converts(t: &Tensor<'_>, ty: GgmlType) -> bool {
    let float = matches!(
        t.ggml_type(),
        GgmlType::F32 | GgmlType::F16 | GgmlType::BF16
    );
    let row = t.shape().first().copied().unwrap_or(1);
    let block = ty.block_size().unwrap_or(u64::MAX);
    float
        && t.name().ends_with("weight")
        && effective_dims(t.shape()) >= 2
        && row % block == 0
        && t.ggml_type() != ty
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let input = Model::open(&args.input).map_err(|e| format!("{}: {e}", args.input.display()))?;
    let mut b = Builder::from_model(&input)?;
    let mut converted = 0usize;
    for t in input.tensors() {
        if converts(&t, args.ty) {
            b.requantize_tensor(t.name(), args.ty)?;
            converted += 1;
        }
    }
    const FILE_TYPE: &str = "general.file_type";
    match file_type(args.ty) {
        Some(ft) => {
            b.set(FILE_TYPE, ft)?;
        }
        None => {
            if b.remove(FILE_TYPE).is_ok() {
                eprintln!(
                    "gguf: note: llama.cpp has no file type for {}, removed {FILE_TYPE}",
                    args.ty
                );
            }
        }
    }

    let layout = crate::progress::write_to_path(&mut b, &args.output, WriteMode::Single)?;
    crate::print(&format!(
        "{}: {} bytes, {converted} of {} tensors converted to {}",
        args.output.display(),
        layout.file_len(),
        layout.tensors.len(),
        args.ty
    ))
}
