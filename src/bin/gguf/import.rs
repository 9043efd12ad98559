//! `gguf import HF_DIR OUTPUT --type T`: a Hugging Face checkpoint to the
//! GGUF llama.cpp's converter writes (`gguf::import::import_model`).

use std::path::PathBuf;

use gguf::import::{self, ImportOptions, Stage, Target};
use gguf::quantize::{self, Imatrix};
use gguf::write::SplitOptions;

#[derive(clap::Args)]
pub struct Args {
    /// The checkpoint directory: config.json, model*.safetensors (or
    /// shards with model.safetensors.index.json) and the tokenizer files.
    #[arg(required_unless_present = "list")]
    hf_dir: Option<PathBuf>,
    /// The GGUF file to write (replaced atomically; with a split option,
    /// the shards OUTPUT-00001-of-0000N.gguf, ...).
    #[arg(required_unless_present = "list")]
    output: Option<PathBuf>,
    /// Prints the architectures the import knows (config.json's
    /// "architectures" names, and the GGUF architecture each becomes),
    /// then exits.
    #[arg(long, conflicts_with_all = ["hf_dir", "output"])]
    list: bool,
    /// HF_DIR is a PEFT LoRA adapter (adapter_config.json and
    /// adapter_model.safetensors) trained on the checkpoint BASE_DIR: writes
    /// the GGUF adapter convert_lora_to_gguf.py writes (--type f32, f16,
    /// bf16 or q8_0).
    #[arg(long, value_name = "BASE_DIR", conflicts_with = "imatrix")]
    lora_base: Option<PathBuf>,
    /// The output type: f32, f16, bf16 or q8_0 as the converter's
    /// --outtype writes them, or any `gguf quantize` preset (q4_k_m,
    /// iq4_xs, ...), which gives the converter's f16 output quantized by
    /// llama-quantize. Any case.
    #[arg(long = "type", short = 't', value_name = "T", default_value = "f16")]
    ty: String,
    /// Names the BPE pre-tokenizer of a tokenizer.json whose hash is not in
    /// the converter's list (e.g. llama-bpe, qwen2, gpt-2).
    #[arg(long, value_name = "NAME")]
    pre_tokenizer: Option<String>,
    /// An importance matrix for a preset (llama-imatrix's file).
    #[arg(long, value_name = "FILE")]
    imatrix: Option<PathBuf>,
    /// Most bytes of tensor data per shard, as the converter's
    /// --split-max-size: a number with an optional unit, B (bytes, as
    /// without a unit), K, M or G, decimal (500M = 500,000,000 bytes).
    #[arg(long, value_name = "N[B|K|M|G]", value_parser = crate::split::parse_decimal_size)]
    split_max_size: Option<u64>,
    /// Most tensors per shard, as the converter's --split-max-tensors.
    #[arg(long, value_name = "N", value_parser = crate::split::parse_count)]
    split_max_tensors: Option<usize>,
    /// Threads for a preset's quantization (0: every core; at most 4 per
    /// core, a larger count is lowered with a warning).
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: usize,
    /// Write the checkpoint's vision projector instead of its text model,
    /// as the converter's --mmproj: the mmproj file (general.architecture
    /// clip) that llama.cpp's libmtmd loads beside the text model
    /// (llama-mtmd-cli, llama-server --mmproj). Gemma 3, Qwen2-VL,
    /// Qwen2.5-VL and Qwen3-VL checkpoints; --type f32, f16, bf16 or q8_0.
    #[arg(long, conflicts_with_all = ["lora_base", "imatrix"])]
    mmproj: bool,
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let (Some(hf_dir), Some(output)) = (args.hf_dir.clone(), args.output.clone()) else {
        list();
        return Ok(());
    };
    let target = Target::parse(&args.ty).map_err(|e| crate::usage_error("import", e))?;
    if args.imatrix.is_some() && !matches!(target, Target::Preset(_)) {
        return Err(crate::usage_error(
            "import",
            "--imatrix needs a quantization preset (--type q4_k_m, ...)",
        ));
    }
    if args.mmproj && matches!(target, Target::Preset(_)) {
        return Err(crate::usage_error(
            "import",
            "--mmproj writes f32, f16, bf16 or q8_0 (--type), as the converter writes a vision projector",
        ));
    }
    // Before the importance matrix is read; `import_model` checks the
    // checkpoint's files.
    let imatrix_path: Vec<&std::path::Path> = args.imatrix.iter().map(PathBuf::as_path).collect();
    crate::open::guard_outputs(&[output.as_path()], &imatrix_path)?;
    let imatrix: Option<Imatrix> = match &args.imatrix {
        Some(path) => {
            // The library's errors name the file.
            Some(quantize::Imatrix::read(path)?)
        }
        None => None,
    };
    let mut options = ImportOptions::new(target);
    options.pre_tokenizer = args.pre_tokenizer.clone();
    options.lora_base = args.lora_base.clone();
    options.mmproj = args.mmproj;
    options.imatrix = imatrix.as_ref();
    options.imatrix_file = args
        .imatrix
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    options.threads = match target {
        Target::Preset(_) => crate::quantize::threads_clamped(
            args.threads,
            "--threads",
            &hf_dir.display().to_string(),
        ),
        Target::Float(_) => args.threads,
    };
    if args.split_max_size.is_some() || args.split_max_tensors.is_some() {
        options.split = Some(
            SplitOptions::default()
                .max_size(args.split_max_size.unwrap_or(0))
                .max_tensors(args.split_max_tensors.unwrap_or(0)),
        );
    }
    let bar = crate::progress::Bar::new();
    let mut stage = Stage::Convert;
    let report = import::import_model(&hf_dir, &output, &options, |s, done, total| {
        if s != stage {
            // A new bar for the quantizing pass, which counts work.
            bar.show_work();
            bar.update(0, total);
            stage = s;
        }
        bar.update(done, total)
    });
    drop(bar);
    let report = match report {
        // An architecture without a projector: the flag does not fit it.
        Err(e @ import::Error::Import(import::ImportError::NoProjector { .. })) => {
            return Err(crate::usage_error("import", e))
        }
        r => r?,
    };
    let files = report
        .files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let ty = match target {
        Target::Float(t) => format!("{t:?}").to_uppercase(),
        Target::Preset(p) => p.name.to_owned(),
    };
    crate::print(&format!(
        "imported {}{} ({}) as {}: {} tensors, {} parameters, {} metadata keys, {:.2} MiB in {:.2} s\nwrote {}",
        hf_dir.display(),
        if args.mmproj { "'s vision projector" } else { "" },
        report.hf_architecture,
        ty,
        report.tensors,
        report.parameters,
        report.metadata,
        report.bytes as f64 / 1024.0 / 1024.0,
        report.elapsed.as_secs_f64(),
        files
    ))?;
    for note in &report.notes {
        crate::message(&format!("gguf: note: {note}"));
    }
    Ok(())
}

/// `--list`: one line per architecture.
fn list() {
    let mut text = String::from("config.json architectures            GGUF architecture\n");
    for a in import::architectures() {
        for name in a.hf_names {
            let moe = if a.experts {
                " (mixture of experts)"
            } else {
                ""
            };
            let mmproj = if import::has_projector(name) {
                ", --mmproj: clip (vision projector)"
            } else {
                ""
            };
            text.push_str(&format!("{name:<37} {}{moe}{mmproj}\n", a.gguf));
        }
    }
    text.pop();
    let _ = crate::print(&text);
}
