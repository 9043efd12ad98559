//! `gguf split IN OUT_PREFIX [--max-size N[B|K|M|G]] [--max-tensors N]
//! [--no-tensor-first-split] [--dry-run]`.

use std::path::PathBuf;

use gguf::write::{Builder, SplitOptions, WriteOptions};

#[derive(clap::Args)]
#[command(group(
    clap::ArgGroup::new("limit")
        .args(["max_size", "max_tensors", "no_tensor_first_split"])
        .multiple(true)
        .required(true)
))]
pub struct Args {
    /// The model to read: a path (any shard of a split model stands for
    /// the whole model), ollama:NAME[:TAG] or a URL (every tensor is
    /// fetched, one range request each).
    input: PathBuf,
    /// Shards are written as OUT_PREFIX-00001-of-0000N.gguf, ...; a model
    /// that fits in one shard is written as OUT_PREFIX.gguf, unsplit.
    out_prefix: PathBuf,
    /// Most bytes of tensor data per shard, counted unpadded: a number
    /// with an optional unit, B (bytes, as without a unit), K, M or G,
    /// decimal as llama-gguf-split takes them (500M = 500,000,000 bytes,
    /// 2G = 2,000,000,000), in either case.
    #[arg(long, value_name = "N[B|K|M|G]", value_parser = parse_decimal_size)]
    max_size: Option<u64>,
    /// Most tensors per shard.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    max_tensors: Option<usize>,
    /// Put only the metadata in the first shard, no tensor.
    #[arg(long)]
    no_tensor_first_split: bool,
    /// Print the shards that would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// `123`, `500K`, `500M`, `2G`: bytes, with decimal (1000-based) suffixes.
/// Every unit accepted, as the help and the error list them.
pub const DECIMAL_UNITS: &str = "B (bytes, as without a unit), K, M or G (decimal: 1K = 1,000 \
                                 bytes, 1G = 1,000,000,000)";

pub fn parse_decimal_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits.parse().map_err(|_| format!("{s:?} is not a size"))?;
    let mul: u64 = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?}; the units are {DECIMAL_UNITS}"
            ))
        }
    };
    match n.checked_mul(mul) {
        Some(0) => Err("the size limit must be above 0".into()),
        Some(b) => Ok(b),
        None => Err(format!("{s:?} is too large")),
    }
}

/// A count above 0.
pub fn parse_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be above 0".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{s:?}: {e}")),
    }
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let model = crate::open::open_model(&args.input, &args.source)?;
    let mut b = Builder::from_model(&model)
        .map_err(|e| format!("{}: {e}", crate::open::shown(&args.input)))?;
    let opts = SplitOptions::default()
        .max_size(args.max_size.unwrap_or(0))
        .max_tensors(args.max_tensors.unwrap_or(0))
        .metadata_only_first(args.no_tensor_first_split);
    let mut out = args.out_prefix.into_os_string();
    out.push(".gguf");
    let out = PathBuf::from(out);
    let shards = if args.dry_run {
        b.plan_split(&out, &opts)?
    } else {
        let planned = b.plan_split(&out, &opts)?;
        let paths: Vec<&std::path::Path> = planned.iter().map(|s| s.path.as_path()).collect();
        crate::open::guard_replacing(&paths, &model, &[])?;
        let bar = crate::progress::Bar::new();
        let progress = WriteOptions::new().progress(|done, total| bar.update(done, total));
        b.write_split_with(&out, &opts, progress)?
    };
    let verb = if args.dry_run { "would write" } else { "wrote" };
    let mut text = format!("{verb} {} file(s):", shards.len());
    for s in &shards {
        text.push_str(&format!(
            "\n  {}  {} tensors, {} bytes",
            s.path.display(),
            s.tensors.len(),
            s.layout.file_len()
        ));
    }
    crate::print(&text)
}
