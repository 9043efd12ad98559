//! `gguf convert IN OUT --type T`: re-encode the floating-point weight
//! matrices to another type, as llama-quantize selects them.

use std::collections::BTreeMap;
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
    /// Also re-encode weights that are already quantized (to a quantized
    /// target; float targets always convert them): they are decoded, then
    /// encoded again, compounding the error of both. Without it they are
    /// kept and a warning lists them.
    #[arg(long)]
    allow_requantize: bool,
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
        T::Q2_0 => 41,
        _ => return None,
    })
}

/// ggml's `ggml_n_dims`: dimensions up to the last one above 1.
fn effective_dims(shape: &[u64]) -> usize {
    shape.iter().rposition(|&d| d > 1).map_or(1, |i| i + 1)
}

/// Why [`plan`] leaves a tensor as it is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Kept {
    /// Already of the target type.
    AlreadyTarget,
    /// Not a weight matrix: norms, biases, other vectors, integer tensors
    /// (llama-quantize leaves them too).
    NotAMatrix,
    /// Quantized, and the target is quantized: re-quantizing compounds the
    /// error of both encodings, so it needs `--allow-requantize`.
    Quantized,
    /// A row is not a whole number of the target's blocks.
    PartialRow,
    /// No decoder for the source type.
    NoDecoder,
}

impl Kept {
    fn describe(self, target: GgmlType) -> String {
        match self {
            Kept::AlreadyTarget => format!("already {target}"),
            Kept::NotAMatrix => "not weight matrices (norms, biases, vectors)".into(),
            Kept::Quantized => {
                "already quantized (pass --allow-requantize to re-encode them)".into()
            }
            Kept::PartialRow => format!(
                "rows not a whole number of {target} blocks of {}",
                target.block_size().unwrap_or(0)
            ),
            Kept::NoDecoder => "of a type this tool cannot decode".into(),
        }
    }
}

fn is_float(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16)
}

/// What `convert` does with `t` for target `ty`: `Ok(())` to re-encode
/// it, or why it is kept. As llama-quantize: a tensor named `*weight`
/// with at least 2 effective dimensions (norms, biases and other vectors
/// stay as they are) and a row length that is a whole number of `ty`
/// blocks. Quantized sources are re-encoded to a float target always, to
/// a quantized one only with `allow_requantize`.
pub fn plan(t: &Tensor<'_>, ty: GgmlType, allow_requantize: bool) -> Result<(), Kept> {
    let src = t.ggml_type();
    if src == ty {
        return Err(Kept::AlreadyTarget);
    }
    let quantized = !src.is_plain();
    if !(is_float(src) || quantized)
        || !t.name().ends_with("weight")
        || effective_dims(t.shape()) < 2
    {
        return Err(Kept::NotAMatrix);
    }
    let row = t.shape().first().copied().unwrap_or(1);
    if row % ty.block_size().unwrap_or(u64::MAX) != 0 {
        return Err(Kept::PartialRow);
    }
    if !tensor::can_dequantize(src) {
        return Err(Kept::NoDecoder);
    }
    if quantized && !is_float(ty) && !allow_requantize {
        return Err(Kept::Quantized);
    }
    Ok(())
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let input = Model::open(&args.input)?;
    let mut b = Builder::from_model(&input)?;
    let mut converted = 0usize;
    // Reason -> (source type -> count), and the first few names.
    let mut kept: BTreeMap<Kept, (BTreeMap<String, usize>, Vec<String>)> = BTreeMap::new();
    for t in input.tensors() {
        match plan(&t, args.ty, args.allow_requantize) {
            Ok(()) => {
                b.requantize_tensor(t.name(), args.ty)
                    .map_err(|e| format!("{}: {e}", args.input.display()))?;
                converted += 1;
            }
            Err(why) => {
                let (types, names) = kept.entry(why).or_default();
                *types.entry(t.ggml_type().to_string()).or_default() += 1;
                names.push(t.name().to_owned());
            }
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
    let total = layout.tensors.len();
    let mut report = format!(
        "{}: {} bytes, {converted} of {total} tensors converted to {}",
        args.output.display(),
        layout.file_len(),
        args.ty
    );
    for (why, (types, names)) in &kept {
        let by_type: Vec<String> = types.iter().map(|(t, n)| format!("{n} {t}")).collect();
        report.push_str(&format!(
            "\n  kept {} ({}): {}",
            names.len(),
            by_type.join(", "),
            why.describe(args.ty)
        ));
    }
    crate::print(&report)?;
    // Kept weights are what a user does not expect: say it where it cannot
    // be missed, even with stdout redirected.
    for (why, (_, names)) in &kept {
        if matches!(why, Kept::AlreadyTarget | Kept::NotAMatrix) {
            continue;
        }
        const SHOWN: usize = 3;
        let mut listed = names[..names.len().min(SHOWN)].join(", ");
        if names.len() > SHOWN {
            listed.push_str(&format!(", ... ({} more)", names.len() - SHOWN));
        }
        eprintln!(
            "gguf: warning: {} weight tensor{} NOT converted to {}, kept as they are, {}: {listed}",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            args.ty,
            why.describe(args.ty)
        );
    }
    Ok(())
}
