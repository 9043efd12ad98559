//! `gguf quantize [OPTIONS] INPUT OUTPUT TYPE [THREADS]`: llama-quantize's
//! command line over the library's run (`gguf::quantize::quantize_model`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use gguf::quantize::{
    self, keys::KvOverride, parse_ggml_type, parse_preset, Preset, QuantizeJob, QuantizeOptions,
    QuantizeReport, TensorTypeOverride,
};
use gguf::GgmlType;

#[derive(clap::Args)]
#[command(after_help = quantize_after_help())]
pub struct Args {
    /// The model to quantize: a path (any shard of a split model stands for
    /// the whole model), ollama:NAME[:TAG] or a URL.
    input: PathBuf,
    /// Where to write (replaced atomically); or, as llama-quantize allows,
    /// the TYPE itself, the output then being ggml-model-TYPE.gguf beside
    /// INPUT. Unlike llama-quantize, OUTPUT may be INPUT (every file of a
    /// split input, with --keep-split): the model is read whole into
    /// temporary files before they replace it. It may not be the
    /// importance matrix, a --tensor-type-file or only some of the shards.
    #[arg(value_name = "OUTPUT")]
    output: OsString,
    /// The preset, by name (any case) or number: see the list below.
    #[arg(value_name = "TYPE")]
    ty: Option<String>,
    /// Threads to quantize on (0 or less: every core; at most 4 per core,
    /// a larger count is lowered with a warning). The output is the same
    /// whatever the count.
    #[arg(value_name = "THREADS", allow_negative_numbers = true)]
    threads: Option<String>,
    /// Any further argument is an error (clap shows it as one).
    #[arg(hide = true, allow_negative_numbers = true)]
    extra: Option<String>,
    /// Use the importance matrix in FILE (llama-imatrix's GGUF or legacy
    /// .dat) for the quantizers that take one; required for IQ1_*, IQ2_*
    /// (but IQ2_M's non-weight tensors), IQ3_XXS and Q2_K_S.
    #[arg(long, value_name = "FILE")]
    imatrix: Option<PathBuf>,
    /// Use the importance matrix only for tensors whose name contains NAME
    /// (repeatable).
    #[arg(long, value_name = "NAME", conflicts_with = "exclude_weights")]
    include_weights: Vec<String>,
    /// Do not use the importance matrix for tensors whose name contains
    /// NAME (repeatable).
    #[arg(long, value_name = "NAME")]
    exclude_weights: Vec<String>,
    /// The ggml type of output.weight.
    #[arg(long, value_name = "GGML_TYPE", value_parser = ggml_type)]
    output_tensor_type: Option<GgmlType>,
    /// The ggml type of the token embeddings.
    #[arg(long, value_name = "GGML_TYPE", value_parser = ggml_type)]
    token_embedding_type: Option<GgmlType>,
    /// Quantize tensors whose name matches the regular expression NAME
    /// (lower-cased, searched) to GGML_TYPE (repeatable; the first match
    /// wins). Example: --tensor-type attn_q=q8_0.
    #[arg(long, value_name = "NAME=GGML_TYPE")]
    tensor_type: Vec<String>,
    /// A file of NAME=GGML_TYPE entries separated by spaces or newlines, as
    /// --tensor-type (repeatable; taken in command-line order with it).
    #[arg(long, value_name = "FILE")]
    tensor_type_file: Vec<PathBuf>,
    /// Leave output.weight as it is.
    #[arg(long)]
    leave_output_tensor: bool,
    /// No k-quant mixture: every weight matrix to the preset's type.
    #[arg(long)]
    pure: bool,
    /// Allow requantizing tensors that are already quantized (the error of
    /// both encodings compounds: quantize from 16 or 32 bits when you can).
    #[arg(long)]
    allow_requantize: bool,
    /// Write the same shards as the input: OUTPUT (without .gguf) then
    /// -00001-of-0000N.gguf, ... (as llama-quantize names them, even for
    /// one shard).
    #[arg(long)]
    keep_split: bool,
    /// Set KEY in the output: KEY=int:N, KEY=float:X, KEY=bool:true|false
    /// or KEY=str:TEXT (repeatable; int is written as u32).
    #[arg(long, value_name = "KEY=TYPE:VALUE")]
    override_kv: Vec<String>,
    /// Leave out these blocks (comma-separated numbers); later blocks are
    /// renumbered and {arch}.block_count is set.
    #[arg(long, value_name = "L0,L1,...")]
    prune_layers: Option<String>,
    /// Print every tensor's type and size and the final size; write
    /// nothing.
    #[arg(long)]
    dry_run: bool,
    /// Accepted as llama-quantize takes it (MiB of rows in memory per
    /// tensor); memory here is bounded by a slab of 4 Mi values anyway.
    #[arg(long, value_name = "MiB", value_parser = clap::value_parser!(u32).range(1..))]
    max_buffer_size: Option<u32>,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

fn quantize_after_help() -> String {
    format!("Allowed quantization types (TYPE):\n{}", presets_help())
}

/// What llama-quantize's `--help` says of each preset (the `desc` of its
/// `QUANT_OPTIONS`), by name: wording for the list, kept beside the
/// command that prints it; the library has the presets' facts.
const PRESET_DESCRIPTIONS: &[(&str, &str)] = &[
    ("Q1_0", " 1.125 bpw quantization"),
    ("Q2_0", " 2.25 bpw quantization (group 64)"),
    ("Q4_0", " 4.34G, +0.4685 ppl @ Llama-3-8B"),
    ("Q4_1", " 4.78G, +0.4511 ppl @ Llama-3-8B"),
    ("MXFP4_MOE", " MXFP4 MoE"),
    ("Q5_0", " 5.21G, +0.1316 ppl @ Llama-3-8B"),
    ("Q5_1", " 5.65G, +0.1062 ppl @ Llama-3-8B"),
    ("IQ2_XXS", " 2.06 bpw quantization"),
    ("IQ2_XS", " 2.31 bpw quantization"),
    ("IQ2_S", " 2.5  bpw quantization"),
    ("IQ2_M", " 2.7  bpw quantization"),
    ("IQ1_S", " 1.56 bpw quantization"),
    ("IQ1_M", " 1.75 bpw quantization"),
    ("TQ1_0", " 1.69 bpw ternarization"),
    ("TQ2_0", " 2.06 bpw ternarization"),
    ("Q2_K", " 2.96G, +3.5199 ppl @ Llama-3-8B"),
    ("Q2_K_S", " 2.96G, +3.1836 ppl @ Llama-3-8B"),
    ("IQ3_XXS", " 3.06 bpw quantization"),
    ("IQ3_S", " 3.44 bpw quantization"),
    ("IQ3_M", " 3.66 bpw quantization mix"),
    ("Q3_K", "alias for Q3_K_M"),
    ("IQ3_XS", " 3.3 bpw quantization"),
    ("Q3_K_S", " 3.41G, +1.6321 ppl @ Llama-3-8B"),
    ("Q3_K_M", " 3.74G, +0.6569 ppl @ Llama-3-8B"),
    ("Q3_K_L", " 4.03G, +0.5562 ppl @ Llama-3-8B"),
    ("IQ4_NL", " 4.50 bpw non-linear quantization"),
    ("IQ4_XS", " 4.25 bpw non-linear quantization"),
    ("Q4_K", "alias for Q4_K_M"),
    ("Q4_K_S", " 4.37G, +0.2689 ppl @ Llama-3-8B"),
    ("Q4_K_M", " 4.58G, +0.1754 ppl @ Llama-3-8B"),
    ("Q5_K", "alias for Q5_K_M"),
    ("Q5_K_S", " 5.21G, +0.1049 ppl @ Llama-3-8B"),
    ("Q5_K_M", " 5.33G, +0.0569 ppl @ Llama-3-8B"),
    ("Q6_K", " 6.14G, +0.0217 ppl @ Llama-3-8B"),
    ("Q8_0", " 7.96G, +0.0026 ppl @ Llama-3-8B"),
    ("F16", "14.00G, +0.0020 ppl @ Mistral-7B"),
    ("BF16", "14.00G, -0.0050 ppl @ Mistral-7B"),
    ("F32", "26.00G              @ 7B"),
    ("COPY", "only copy tensors, no quantizing"),
];

/// The `--help` list of allowed types, one line per preset in the
/// library's order, as llama-quantize prints it.
fn presets_help() -> String {
    let mut out = String::new();
    for p in quantize::PRESETS {
        if p.is_copy() {
            out.push_str("          ");
        } else {
            out.push_str(&format!("  {:2}  or  ", p.ftype.id()));
        }
        let description = PRESET_DESCRIPTIONS
            .iter()
            .find(|(name, _)| *name == p.name)
            .map_or("", |(_, d)| d);
        out.push_str(&format!("{:<7} : {description}\n", p.name));
    }
    out
}

fn ggml_type(s: &str) -> Result<GgmlType, String> {
    parse_ggml_type(s).map_err(|e| e.to_string())
}

/// llama-quantize's `--prune-layers`: comma-separated non-negative
/// numbers.
fn layers(s: &str) -> Result<Vec<u32>, String> {
    s.split(',')
        .map(|id| {
            id.trim()
                .parse::<u32>()
                .map_err(|_| format!("invalid layer id {id:?}"))
        })
        .collect()
}

/// INPUT OUTPUT TYPE [THREADS], or INPUT TYPE [THREADS], as llama-quantize
/// tells them apart: the second argument is the TYPE when it names a preset.
struct Positionals {
    output: PathBuf,
    preset: &'static Preset,
    threads: usize,
}

fn positionals(args: &Args) -> Result<Positionals, Box<dyn std::error::Error>> {
    let usage = |m: String| crate::usage_error("quantize", m);
    let second = args.output.to_str().and_then(parse_preset);
    let (output, ty, threads) = match second {
        Some(preset) => {
            if args.extra.is_some() || args.threads.is_some() {
                return Err(usage(format!(
                    "{:?} is a quantization type, so it takes at most one more argument \
                     (THREADS)",
                    args.output
                )));
            }
            let dir = args.input.parent().unwrap_or(Path::new(""));
            let name = format!("ggml-model-{}.gguf", preset.name);
            (dir.join(name), preset.name.to_owned(), args.ty.clone())
        }
        None => {
            if args.extra.is_some() {
                return Err(usage("too many arguments".into()));
            }
            let Some(ty) = args.ty.clone() else {
                return Err(usage("missing TYPE (see the list in --help)".into()));
            };
            (PathBuf::from(&args.output), ty, args.threads.clone())
        }
    };
    let preset = parse_preset(&ty).ok_or_else(|| {
        usage(format!(
            "invalid quantization type {ty:?}; allowed types:\n{}",
            presets_help()
        ))
    })?;
    let threads = match threads {
        None => 0,
        Some(t) => match leading_int(&t) {
            Some(n) => usize::try_from(n).unwrap_or(0),
            None => return Err(usage(format!("invalid THREADS {t:?}"))),
        },
    };
    Ok(Positionals {
        output,
        preset,
        threads,
    })
}

/// The leading integer of `s`, as C++'s `stoi` reads it.
fn leading_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let digits_from = usize::from(t.starts_with(['-', '+']));
    let end = t[digits_from..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(t.len(), |i| i + digits_from);
    t[..end].parse().ok()
}

/// `--tensor-type` and `--tensor-type-file` in command-line order (the
/// first matching pattern wins, so the order matters).
fn tensor_types(args: &Args) -> Result<Vec<TensorTypeOverride>, Box<dyn std::error::Error>> {
    // Which of the two each occurrence was, in the order given.
    let is = |a: &OsStr, flag: &str| {
        a.to_str()
            .is_some_and(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    let order: Vec<bool> = std::env::args_os()
        .filter_map(|a| {
            if is(&a, "--tensor-type-file") {
                Some(true)
            } else if is(&a, "--tensor-type") {
                Some(false)
            } else {
                None
            }
        })
        .collect();
    let files = order.iter().filter(|&&f| f).count();
    let order =
        if files == args.tensor_type_file.len() && order.len() - files == args.tensor_type.len() {
            order
        } else {
            // Not from this process's command line (a test harness): inline first.
            let mut o = vec![false; args.tensor_type.len()];
            o.extend(vec![true; args.tensor_type_file.len()]);
            o
        };
    let (mut inline, mut file) = (args.tensor_type.iter(), args.tensor_type_file.iter());
    let mut out = Vec::new();
    for from_file in order {
        if from_file {
            let Some(path) = file.next() else { continue };
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            for entry in text.split_whitespace() {
                out.push(
                    TensorTypeOverride::parse(entry)
                        .map_err(|e| format!("{}: {e}", path.display()))?,
                );
            }
        } else if let Some(arg) = inline.next() {
            out.push(TensorTypeOverride::parse(arg)?);
        }
    }
    Ok(out)
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let pos = positionals(&args)?;
    // Neither the importance matrix nor a --tensor-type-file may be the
    // output; checked before either is read (the model's files below).
    let others: Vec<&Path> = args
        .imatrix
        .iter()
        .chain(&args.tensor_type_file)
        .map(PathBuf::as_path)
        .collect();
    if !args.dry_run {
        gguf::write::check_not_inputs(&[pos.output.as_path()], &others)?;
    }
    let mut options = QuantizeOptions::new(pos.preset.name)?;
    options.preset = pos.preset;
    options.pure = args.pure;
    options.leave_output_tensor = args.leave_output_tensor;
    options.output_tensor_type = args.output_tensor_type;
    options.token_embedding_type = args.token_embedding_type;
    options.tensor_types = tensor_types(&args)?;
    options.keep_split = args.keep_split;
    options.prune_layers = match &args.prune_layers {
        Some(list) => layers(list).map_err(|e| crate::usage_error("quantize", e))?,
        None => Vec::new(),
    };
    let kv_overrides = args
        .override_kv
        .iter()
        .map(|a| KvOverride::parse(a))
        .collect::<Result<Vec<_>, _>>()?;
    let imatrix = match &args.imatrix {
        Some(path) => {
            // The library's errors name the file.
            let m = quantize::Imatrix::read(path)?;
            Some(m.select(&args.include_weights, &args.exclude_weights)?)
        }
        None => None,
    };
    let input = crate::open::open_model(&args.input, &args.source)?;
    if !args.dry_run {
        // The output may be the input model itself (every file of it): it
        // is read whole into temporary files before they are renamed.
        let count = if args.keep_split {
            input.shard_count()
        } else {
            1
        };
        let outputs = quantize::output_files(&pos.output, count, args.keep_split);
        let outputs: Vec<&Path> = outputs.iter().map(PathBuf::as_path).collect();
        crate::open::guard_replacing(&outputs, &input, &others)?;
    }
    let mut job = QuantizeJob::new(options);
    job.imatrix = imatrix.as_ref();
    job.imatrix_file = args
        .imatrix
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    job.allow_requantize = args.allow_requantize;
    job.kv_overrides = kv_overrides;
    let shown_input = crate::open::shown(&args.input);
    job.threads = crate::quantize::threads_clamped(pos.threads, "THREADS", &shown_input);

    if args.dry_run {
        let report = quantize::dry_run(&input, &job).map_err(|e| crate::about(&shown_input, e))?;
        crate::print(&table(&report))?;
        crate::print(&summary(&report, pos.preset, &shown_input, None))?;
        warnings(&report, &job);
        return Ok(());
    }
    if let Some(m) = &imatrix
        && m.entries.is_empty()
    {
        crate::message("gguf: warning: no importance matrix entry left after --include-weights/--exclude-weights: quantizing without one");
    }
    // The library counts work, not bytes: copies are quick, encoding slow.
    let bar = crate::progress::Bar::work();
    let report = quantize::quantize_model(&input, &pos.output, &job, |done, total| {
        bar.update(done, total)
    })
    .map_err(|e| crate::about(&shown_input, e))?;
    drop(bar);
    let written = report
        .files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    crate::print(&summary(&report, pos.preset, &shown_input, Some(&written)))?;
    warnings(&report, &job);
    Ok(())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0 / 1024.0
}

/// Every tensor: what `--dry-run` shows (llama-quantize's lines, as a table).
fn table(r: &QuantizeReport) -> String {
    let width = r
        .tensors
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let n = r.tensors.len();
    let mut out = format!(
        "{:>w$}  {:<width$}  {:<22}  {:>7}    {:>7}  {:>10}    {:>10}\n",
        "#",
        "name",
        "shape",
        "from",
        "to",
        "MiB",
        "MiB",
        w = 2 * digits(n) + 1
    );
    for (i, t) in r.tensors.iter().enumerate() {
        let shape: Vec<String> = t.shape.iter().map(u64::to_string).collect();
        let mut line = format!(
            "{:>w$}/{n}  {:<width$}  {:<22}  {:>7} -> {:>7}  {:>10.3} -> {:>10.3}",
            i + 1,
            t.name,
            shape.join(" x "),
            t.source.to_string(),
            t.target.to_string(),
            mib(t.input_bytes),
            mib(t.output_bytes),
            w = digits(n)
        );
        if t.fell_back {
            line.push_str("  (fallback)");
        }
        if t.imatrix {
            line.push_str("  (imatrix)");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.pop();
    out
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}

/// The end summary: sizes before and after, bits per weight, tensors per
/// type, time (llama-quantize's closing lines).
fn summary(r: &QuantizeReport, preset: &Preset, input: &str, written: Option<&str>) -> String {
    let per_type: Vec<String> = r
        .tensors_per_type()
        .iter()
        .map(|(ty, n)| format!("{n} {ty}"))
        .collect();
    let head = match written {
        Some(files) => format!(
            "{input} -> {files}: {} (file type {}) in {:.2} s, {} bytes written",
            preset.name,
            r.file_type,
            r.elapsed.as_secs_f64(),
            r.file_bytes
        ),
        None => format!(
            "{input}: dry run as {} (file type {}), nothing written",
            preset.name, r.file_type
        ),
    };
    format!(
        "{head}\n  model size: {:10.2} MiB ({:.2} BPW)\n  quant size: {:10.2} MiB ({:.2} BPW)\n  \
         tensors: {} ({})",
        mib(r.input_bytes()),
        r.input_bpw(),
        mib(r.output_bytes()),
        r.output_bpw(),
        r.tensors.len(),
        per_type.join(", ")
    )
}

/// What llama-quantize warns about, on stderr.
fn warnings(r: &QuantizeReport, job: &QuantizeJob<'_>) {
    let fell_back: Vec<&str> = r
        .tensors
        .iter()
        .filter(|t| t.fell_back)
        .map(|t| t.name.as_str())
        .collect();
    if !fell_back.is_empty() {
        const SHOWN: usize = 3;
        let mut names = fell_back[..fell_back.len().min(SHOWN)].join(", ");
        if fell_back.len() > SHOWN {
            names.push_str(&format!(", ... ({} more)", fell_back.len() - SHOWN));
        }
        crate::message(&format!(
            "gguf: warning: {} of {} tensor(s) required fallback quantization (rows not a whole \
             number of blocks): {names}",
            fell_back.len(),
            r.tensors.len(),
        ));
    }
    if r.needs_imatrix && job.imatrix.is_none_or(|m| m.entries.is_empty()) {
        crate::message(
            "gguf: warning: dry run completed, but actually completing this quantization will \
             require an importance matrix (--imatrix)",
        );
    }
    if r.requantized > 0 {
        crate::message(&format!(
            "gguf: warning: {} tensor(s) are already quantized: the real run needs \
             --allow-requantize",
            r.requantized
        ));
    }
}

/// `threads` as the library will use it ([`quantize::max_threads`] at
/// most), with a warning on stderr naming `file` when it is lowered.
/// `flag` is how the count was given (`THREADS`, `--threads`).
pub(crate) fn threads_clamped(threads: usize, flag: &str, file: &str) -> usize {
    let max = quantize::max_threads();
    if threads <= max {
        return threads;
    }
    crate::message(&format!(
        "gguf: {file}: warning: {flag} {threads} is more than 4 threads per core ({} core(s) \
         available): quantizing on {max} threads",
        max / 4
    ));
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_one_description_and_no_other_is_listed() {
        for p in quantize::PRESETS {
            let n = PRESET_DESCRIPTIONS
                .iter()
                .filter(|(name, _)| *name == p.name)
                .count();
            assert_eq!(n, 1, "{}", p.name);
        }
        assert_eq!(PRESET_DESCRIPTIONS.len(), quantize::PRESETS.len());
    }

    #[test]
    fn the_list_reads_as_llama_quantize_prints_it() {
        let help = presets_help();
        assert!(help.contains("  15  or  Q4_K_M  :  4.58G, +0.1754 ppl @ Llama-3-8B\n"));
        assert!(help.ends_with("          COPY    : only copy tensors, no quantizing\n"));
    }
}
