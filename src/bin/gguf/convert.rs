//! `gguf convert IN OUT --type T`: re-encode the weight matrices to
//! one ggml type, as `llama-quantize --pure` selects them and falls back
//! per tensor, keeping the input's tensor order. Presets and
//! llama-quantize's exact output are `gguf quantize`'s (quantize.rs).

use std::collections::BTreeMap;
use std::path::PathBuf;

use gguf::quantize::{self, FileTypeLabel, Kept};
use gguf::write::{Builder, WriteMode};
use gguf::{codec, GgmlType, Gguf};

#[derive(clap::Args)]
#[command(after_help = targets_help())]
pub struct Args {
    /// The model to read: a path (any shard of a split model stands for
    /// the whole model), ollama:NAME[:TAG] or a URL (every tensor is
    /// fetched, one range request each).
    input: PathBuf,
    /// Where to write; may be the input itself when it is one file
    /// (replaced atomically, after the whole model is read), not one shard
    /// of a split model.
    output: PathBuf,
    /// Target type of the weight matrices: one ggml type, by name in any
    /// case (F16, Q8_0, Q4_K, ...; the list is below). llama-quantize's
    /// presets (Q4_K_M, Q3_K_S, ...) choose a type per tensor and are not
    /// made here.
    #[arg(long = "type", value_name = "T", value_parser = parse_type)]
    ty: GgmlType,
    /// Also re-encode weights that are already quantized (to a quantized
    /// target; float targets always convert them): they are decoded, then
    /// encoded again, compounding the error of both. Without it they are
    /// kept and a warning lists them.
    #[arg(long)]
    allow_requantize: bool,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// Why convert does not write `ty`, when it does not: no quantizer, an
/// importance matrix needed, or a type ggml uses only for activations.
fn refused(ty: GgmlType) -> Option<String> {
    if codec::is_activation_type(ty) {
        return Some(format!(
            "{ty} is not a weight type: ggml uses it only for activations (the quantized \
             input of a matrix multiplication), llama-quantize has no file type for it, and \
             llama.cpp loads a model with {ty} weights but cannot run it"
        ));
    }
    if quantize::type_requires_imatrix(ty) {
        return Some(format!(
            "{ty} needs an importance matrix: llama-quantize refuses it without one (at so \
             few bits per weight the result would be garbage), and convert takes none"
        ));
    }
    if !codec::can_quantize(ty) {
        return Some(format!("no quantizer for {ty}"));
    }
    None
}

/// The types convert writes, by name.
fn supported() -> String {
    GgmlType::ALL
        .iter()
        .filter(|&&t| refused(t).is_none())
        .filter_map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--help`'s list of target types, and of the types left out and why.
fn targets_help() -> String {
    let left_out = |pick: fn(GgmlType) -> bool| {
        GgmlType::ALL
            .iter()
            .filter(|&&t| refused(t).is_some() && pick(t))
            .filter_map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "Target types (--type): {}.\n\nNot targets: {} (types ggml uses only for \
         activations, the quantized input of a matrix multiplication: llama-quantize has no \
         file type for them, and llama.cpp loads a model with such weights but cannot run \
         it); {} (they need an importance matrix: use `gguf quantize --imatrix`).",
        supported(),
        left_out(codec::is_activation_type),
        left_out(quantize::type_requires_imatrix),
    )
}

fn parse_type(s: &str) -> Result<GgmlType, String> {
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
                 which `gguf quantize IN OUT {s}` makes; convert re-encodes the weight matrices \
                 to one ggml type"
            )
        } else {
            format!("unknown ggml type {s:?}")
        };
        return Err(format!("{why}; valid types: {}", supported()));
    };
    match refused(ty) {
        Some(why) => Err(format!("{why}; valid types: {}", supported())),
        None => Ok(ty),
    }
}

/// How the summary names a [`Kept`] reason, `target` the type asked for.
fn describe(why: Kept, target: GgmlType) -> String {
    match why {
        Kept::AlreadyTarget => format!("already {target}"),
        Kept::NotAMatrix => "not weight matrices (norms, biases, vectors)".into(),
        Kept::LeftByLlama => "matrices llama-quantize leaves as they are (routers, small mixers, \
                              position embeddings)"
            .into(),
        Kept::Quantized => "already quantized (pass --allow-requantize to re-encode them)".into(),
        Kept::PartialRow => format!(
            "rows not a whole number of {target} blocks of {}, and llama-quantize has no \
             fallback type for {target}",
            target.block_size().unwrap_or(0)
        ),
        Kept::NoDecoder => "of a type this tool cannot decode".into(),
        _ => format!("{why:?}"),
    }
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let input = crate::open::open_model(&args.input, &args.source)?;
    crate::open::guard_replacing(&[args.output.as_path()], &input, &[])?;
    let mut b = Builder::from_model(&input)
        .map_err(|e| format!("{}: {e}", crate::open::shown(&args.input)))?;
    let mut converted = 0usize;
    // Fallback type -> names of the tensors that got it.
    let mut fell_back: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Reason -> (source type -> count), and the first few names.
    let mut kept: BTreeMap<Kept, (BTreeMap<String, usize>, Vec<String>)> = BTreeMap::new();
    let arch = input.architecture().unwrap_or("").to_owned();
    for t in input.tensors() {
        let choice = quantize::choose_pure(
            t.name(),
            t.shape(),
            &arch,
            t.ggml_type(),
            args.ty,
            args.allow_requantize,
        );
        match choice {
            Ok(to) => {
                b.requantize_tensor(t.name(), to)
                    .map_err(|e| format!("{}: {e}", crate::open::shown(&args.input)))?;
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
    // One line per reason a tensor was kept.
    let kept_lines = || -> Vec<String> {
        kept.iter()
            .map(|(why, (types, names))| {
                let by_type: Vec<String> = types.iter().map(|(t, n)| format!("{n} {t}")).collect();
                format!(
                    "  kept {} ({}): {}",
                    names.len(),
                    by_type.join(", "),
                    describe(*why, args.ty)
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
        let mut lines = vec![format!(
            "{}: nothing to convert to {}: no tensor would change, so {} was not written \
             ({instead})",
            crate::open::shown(&args.input),
            args.ty,
            args.output.display(),
        )];
        lines.extend(kept_lines());
        return Err(crate::Lines(lines).into());
    }
    // Weight matrices still of other types than asked (and its fallbacks).
    let not_converted: usize = kept
        .iter()
        .filter(|(why, _)| why.is_weight_left_behind())
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
    for line in kept_lines() {
        report.push('\n');
        report.push_str(&line);
    }
    report.push_str(&format!("\n  {file_type_note}"));
    crate::print(&report)?;
    // Kept weights are what a user does not expect: say it where it cannot
    // be missed, even with stdout redirected.
    for (why, (_, names)) in &kept {
        if !why.is_weight_left_behind() {
            continue;
        }
        crate::message(&format!(
            "gguf: {}: warning: {} weight tensor{} NOT converted to {}, kept as they are, {}: {}",
            args.output.display(),
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            args.ty,
            describe(*why, args.ty),
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

/// Labels the output as llama-quantize does
/// ([`quantize::output_file_type`]) and returns the line that says how.
fn set_file_type(
    b: &mut Builder<'_>,
    ty: GgmlType,
    old: Option<String>,
    not_converted: usize,
) -> gguf::Result<String> {
    let old_text = old.clone().unwrap_or_else(|| "absent".to_owned());
    Ok(match quantize::output_file_type(ty, not_converted) {
        FileTypeLabel::KeepInput => {
            let s = if not_converted == 1 { "" } else { "s" };
            format!(
                "{FILE_TYPE} left as it was ({old_text}): {not_converted} weight matri{} kept \
                 {} type{s}",
                if not_converted == 1 { "x" } else { "ces" },
                if not_converted == 1 { "its" } else { "their" }
            )
        }
        FileTypeLabel::Set(ft) => {
            b.set(FILE_TYPE, ft)?;
            if old == Some(describe_file_type(ft)) {
                format!("{FILE_TYPE} unchanged ({old_text})")
            } else {
                format!("{FILE_TYPE} {old_text} -> {}", describe_file_type(ft))
            }
        }
        // Remove, and whatever labels a later llama-quantize adds.
        _ => {
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
