//! `gguf convert IN OUT --type T`: re-encode the weight matrices to
//! another type, as `llama-quantize --pure` selects them and falls back
//! per tensor.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gguf::write::{Builder, WriteMode};
use gguf::{tensor, GgmlType, Gguf, Model, Tensor};

#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file to read.
    input: PathBuf,
    /// Where to write; may be the input itself (replaced atomically).
    output: PathBuf,
    /// Target type of the weight matrices: one ggml type, by name in any
    /// case (F16, Q8_0, Q4_K, ...). llama-quantize's presets (Q4_K_M,
    /// Q3_K_S, ...) choose a type per tensor and are not made here.
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
    let supported = || {
        GgmlType::ALL
            .iter()
            .filter(|&&t| tensor::can_quantize(t))
            .filter_map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(ty) = GgmlType::from_name(s) else {
        // A llama-quantize preset (Q4_K_M, Q3_K_S, ...) is a mixture of
        // types chosen per tensor, not one ggml type: say so rather than
        // only "unknown".
        let preset = (0..64u32)
            .filter_map(gguf::format::file_type_encoding)
            .any(|name| name.eq_ignore_ascii_case(s));
        let why = if preset {
            format!(
                "{s:?} is a llama-quantize preset (a mixture of types chosen per tensor), \
                 which convert does not make; convert re-encodes the weight matrices to one \
                 ggml type"
            )
        } else {
            format!("unknown ggml type {s:?}")
        };
        return Err(format!("{why}; valid types: {}", supported()));
    };
    if !tensor::can_quantize(ty) {
        return Err(format!(
            "no quantizer for {ty}; valid types: {}",
            supported()
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

/// Name fragments of weight matrices llama-quantize leaves as they are
/// (norms; MoE routers; small or position-like matrices of some
/// architectures: Mamba and RWKV mixers, Gemma 3n's altup and laurel, BERT
/// position and token-type embeddings, T5's relative bias, vision and audio
/// embeddings), as llama.cpp's `tensor_allows_quantization` lists them.
const NOT_QUANTIZED: &[&str] = &[
    "_norm.weight",
    "ffn_gate_inp.weight",
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "position_embd",
    "token_types.weight",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
    "sam.pos_embd",
    "sam.neck.",
    "sam.net_",
    ".rel_pos",
    ".patch_embd",
    ".patch_merger",
    "a.rvq.codebook",
    "mm.a.code_embd",
];

/// The type a tensor whose rows hold `row` elements gets when `ty` is
/// asked for: `ty` when a row is a whole number of its blocks, else the
/// type llama-quantize falls back to (a 32-element block type of about
/// the same size, or F16 when even that does not divide the row); `None`
/// where llama-quantize has no fallback and stops.
pub fn fallback(ty: GgmlType, row: u64) -> Option<GgmlType> {
    use GgmlType as T;
    let fits = |t: GgmlType| t.block_size().is_some_and(|b| row.is_multiple_of(b));
    if fits(ty) {
        return Some(ty);
    }
    let next = match ty {
        T::IQ1_S
        | T::IQ1_M
        | T::IQ2_XXS
        | T::IQ2_XS
        | T::IQ2_S
        | T::IQ3_XXS
        | T::IQ3_S
        | T::IQ4_XS => T::IQ4_NL,
        T::Q2_0 | T::Q2_K | T::Q3_K | T::TQ1_0 | T::TQ2_0 => T::Q4_0,
        T::Q4_K => T::Q5_0,
        T::Q5_K => T::Q5_1,
        T::Q6_K => T::Q8_0,
        // Already a block of 32 or fewer: nothing smaller to go to.
        _ if ty.block_size().is_some_and(|b| b <= 32) => ty,
        _ => return None,
    };
    Some(if fits(next) { next } else { T::F16 })
}

/// Why [`plan`] leaves a tensor as it is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Kept {
    /// Already of the target type.
    AlreadyTarget,
    /// Not a weight matrix: norms, biases, other vectors, integer tensors
    /// (llama-quantize leaves them too).
    NotAMatrix,
    /// A weight matrix llama-quantize leaves as it is ([`NOT_QUANTIZED`]).
    LeftByLlama,
    /// Quantized, and the target is quantized: re-quantizing compounds the
    /// error of both encodings, so it needs `--allow-requantize`.
    Quantized,
    /// A row is not a whole number of the target's blocks.
    PartialRow,
    /// No decoder for the source type.
    NoDecoder,
}

impl Kept {
    /// A weight matrix left at another type than asked for: what a user
    /// does not expect, and what keeps the file type as it was.
    fn is_a_weight_left_behind(self) -> bool {
        matches!(self, Kept::Quantized | Kept::PartialRow | Kept::NoDecoder)
    }

    fn describe(self, target: GgmlType) -> String {
        match self {
            Kept::AlreadyTarget => format!("already {target}"),
            Kept::NotAMatrix => "not weight matrices (norms, biases, vectors)".into(),
            Kept::LeftByLlama => {
                "matrices llama-quantize leaves as they are (routers, small mixers, \
                 position embeddings)"
                    .into()
            }
            Kept::Quantized => {
                "already quantized (pass --allow-requantize to re-encode them)".into()
            }
            Kept::PartialRow => format!(
                "rows not a whole number of {target} blocks of {}, and llama-quantize has no \
                 fallback type for {target}",
                target.block_size().unwrap_or(0)
            ),
            Kept::NoDecoder => "of a type this tool cannot decode".into(),
        }
    }
}

fn is_float(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16)
}

/// What `convert` does with `t` for target `ty`: `Ok(type)` to re-encode
/// it to `type`, or why it is kept. As `llama-quantize --pure`: a tensor
/// named `*weight` with at least 2 effective dimensions (norms, biases and
/// other vectors stay as they are) and not in [`NOT_QUANTIZED`] gets `ty`,
/// or its [`fallback`] when a row is not a whole number of `ty` blocks.
/// Quantized sources are re-encoded to a float target always, to a
/// quantized one only with `allow_requantize`.
pub fn plan(t: &Tensor<'_>, ty: GgmlType, allow_requantize: bool) -> Result<GgmlType, Kept> {
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
    if NOT_QUANTIZED.iter().any(|n| t.name().contains(n)) {
        return Err(Kept::LeftByLlama);
    }
    let row = t.shape().first().copied().unwrap_or(1);
    let to = fallback(ty, row).ok_or(Kept::PartialRow)?;
    if src == to {
        return Err(Kept::AlreadyTarget);
    }
    if !tensor::can_dequantize(src) {
        return Err(Kept::NoDecoder);
    }
    if quantized && !is_float(to) && !allow_requantize {
        return Err(Kept::Quantized);
    }
    Ok(to)
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let input = Model::open(&args.input)?;
    let mut b =
        Builder::from_model(&input).map_err(|e| format!("{}: {e}", args.input.display()))?;
    let mut converted = 0usize;
    // Fallback type -> names of the tensors that got it.
    let mut fell_back: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Reason -> (source type -> count), and the first few names.
    let mut kept: BTreeMap<Kept, (BTreeMap<String, usize>, Vec<String>)> = BTreeMap::new();
    for t in input.tensors() {
        match plan(&t, args.ty, args.allow_requantize) {
            Ok(to) => {
                b.requantize_tensor(t.name(), to)
                    .map_err(|e| format!("{}: {e}", args.input.display()))?;
                if to == args.ty {
                    converted += 1;
                } else {
                    fell_back
                        .entry(to.to_string())
                        .or_default()
                        .push(t.name().to_owned());
                }
            }
            Err(why) => {
                let (types, names) = kept.entry(why).or_default();
                *types.entry(t.ggml_type().to_string()).or_default() += 1;
                names.push(t.name().to_owned());
            }
        }
    }
    let kept_lines = || -> String {
        kept.iter()
            .map(|(why, (types, names))| {
                let by_type: Vec<String> = types.iter().map(|(t, n)| format!("{n} {t}")).collect();
                format!(
                    "\n  kept {} ({}): {}",
                    names.len(),
                    by_type.join(", "),
                    why.describe(args.ty)
                )
            })
            .collect()
    };
    if converted == 0 && fell_back.is_empty() {
        // Writing would copy the input (relabelled at most): refuse, so
        // that a script does not take the copy for a converted model.
        let instead = if input.shard_count() > 1 {
            "it would only merge the shards, which `gguf merge` does"
        } else {
            "it would equal the input"
        };
        return Err(format!(
            "{}: nothing to convert to {}: no tensor would change, so {} was not written \
             ({instead}){}",
            args.input.display(),
            args.ty,
            args.output.display(),
            kept_lines()
        )
        .into());
    }
    // Weight matrices still of other types than asked (and its fallbacks).
    let not_converted: usize = kept
        .iter()
        .filter(|(why, _)| why.is_a_weight_left_behind())
        .map(|(_, (_, names))| names.len())
        .sum();
    let old_file_type = input.value(FILE_TYPE).map(|v| match v.as_integer() {
        Some(n) => describe_file_type(n),
        None => format!("{} {v:?}", v.value_type()),
    });
    let file_type_note = set_file_type(&mut b, args.ty, old_file_type, not_converted)?;

    let layout = crate::progress::write_to_path(&mut b, &args.output, WriteMode::Single)?;
    let total = layout.tensors.len();
    let mut report = format!(
        "{}: {} bytes, {converted} of {total} tensors converted to {}",
        args.output.display(),
        layout.file_len(),
        args.ty
    );
    for (to, names) in &fell_back {
        report.push_str(&format!(
            "\n  {} converted to {to} instead: rows not a whole number of {} blocks of {} \
             (llama-quantize's fallback): {}",
            names.len(),
            args.ty,
            args.ty.block_size().unwrap_or(0),
            shown(names)
        ));
    }
    report.push_str(&kept_lines());
    report.push_str(&format!("\n  {file_type_note}"));
    crate::print(&report)?;
    // Kept weights are what a user does not expect: say it where it cannot
    // be missed, even with stdout redirected.
    for (why, (_, names)) in &kept {
        if !why.is_a_weight_left_behind() {
            continue;
        }
        crate::message(&format!(
            "gguf: {}: warning: {} weight tensor{} NOT converted to {}, kept as they are, {}: {}",
            args.output.display(),
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            args.ty,
            why.describe(args.ty),
            shown(names)
        ));
    }
    Ok(())
}

const FILE_TYPE: &str = "general.file_type";

/// `15 (Q4_K_M)`: a file type with the name converters give it.
fn describe_file_type(ft: impl Into<i128>) -> String {
    let ft = ft.into();
    match u32::try_from(ft)
        .ok()
        .and_then(gguf::format::file_type_encoding)
    {
        Some(name) => format!("{ft} ({name})"),
        None => ft.to_string(),
    }
}

/// Labels the output with `ty`'s file type when every weight matrix was
/// converted to it (or to llama-quantize's fallback for it), as
/// llama-quantize labels its output. When `not_converted` weight matrices
/// keep other types, the label describes the mixture no better than the
/// input's did, so the input's is kept. Returns the line that says which.
fn set_file_type(
    b: &mut Builder<'_>,
    ty: GgmlType,
    old: Option<String>,
    not_converted: usize,
) -> gguf::Result<String> {
    let old_text = old.clone().unwrap_or_else(|| "absent".to_owned());
    if not_converted > 0 {
        let s = if not_converted == 1 { "" } else { "s" };
        return Ok(format!(
            "{FILE_TYPE} left as it was ({old_text}): {not_converted} weight matri{} kept \
             {} type{s}",
            if not_converted == 1 { "x" } else { "ces" },
            if not_converted == 1 { "its" } else { "their" }
        ));
    }
    Ok(match file_type(ty) {
        Some(ft) => {
            b.set(FILE_TYPE, ft)?;
            if old == Some(describe_file_type(ft)) {
                format!("{FILE_TYPE} unchanged ({old_text})")
            } else {
                format!("{FILE_TYPE} {old_text} -> {}", describe_file_type(ft))
            }
        }
        None => {
            if b.remove(FILE_TYPE).is_ok() {
                format!("{FILE_TYPE} {old_text} removed: llama.cpp has no file type for {ty}")
            } else {
                format!("{FILE_TYPE} absent (llama.cpp has no file type for {ty})")
            }
        }
    })
}

/// The first few names (escaped), and how many more.
fn shown(names: &[String]) -> String {
    const SHOWN: usize = 3;
    let first: Vec<_> = names[..names.len().min(SHOWN)]
        .iter()
        .map(|n| crate::text::escape(n))
        .collect();
    let mut listed = first.join(", ");
    if names.len() > SHOWN {
        listed.push_str(&format!(", ... ({} more)", names.len() - SHOWN));
    }
    listed
}
