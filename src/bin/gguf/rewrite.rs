//! `gguf rewrite IN OUT [--mode M] [--alignment N] [--endian E] [--version N]`.

use std::path::PathBuf;

use gguf::write::{Builder, WriteMode};
use gguf::Endian;

#[derive(Clone, Copy, clap::ValueEnum)]
enum Mode {
    /// Header, metadata, tensor infos, then data, in one pass.
    Single,
    /// Data first after a hole for the header, then the header.
    Reserve,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum EndianArg {
    Little,
    Big,
}

#[derive(clap::Args)]
pub struct Args {
    /// The model to read: a path (any shard of a split model stands for
    /// the whole model), ollama:NAME[:TAG] or a URL (every tensor is
    /// fetched, one range request each).
    input: PathBuf,
    /// Where to write; may be the input itself when it is one file
    /// (replaced atomically, after the whole model is read), not one shard
    /// of a split model.
    output: PathBuf,
    /// How to write (all modes give the same bytes).
    #[arg(long, value_enum, default_value = "single")]
    mode: Mode,
    /// Data alignment of the output, a power of two.
    #[arg(long, value_name = "N", value_parser = parse_alignment)]
    alignment: Option<u32>,
    /// Byte order of the output. Tensor data of every sized type is
    /// converted: plain numbers swapped, and inside quantized blocks every
    /// field wider than a byte (f16 scales, 16-bit arrays), as gguf-py's
    /// gguf_convert_endian.py does for the types it handles.
    #[arg(long, value_enum)]
    endian: Option<EndianArg>,
    /// GGUF version of the output: 1, 2 or 3.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=3))]
    version: Option<u32>,
    /// Reserve room in the header so that later `gguf set` edits land in
    /// place: stored as the metadata entry `gguf_rs.metadata_slack`, which
    /// other readers ignore. A number with an optional unit: B (bytes, as
    /// without a unit), K (KB, KiB) or M (MB, MiB), binary (1K = 1,024
    /// bytes), in either case; at most 1 GiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    reserve: Option<u64>,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// A power of two that fits GGUF's u32 `general.alignment`.
fn parse_alignment(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if n.is_power_of_two() => Ok(n),
        _ => Err(format!(
            "{s:?} is not a power of two (1, 2, 4, ..., 2147483648)"
        )),
    }
}

/// `4096`, `64K`, `1M` (binary multiples).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits.parse().map_err(|_| format!("{s:?} is not a size"))?;
    let mul = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?}; the units are B (bytes, as without a unit), \
                 K (KB, KiB) or M (MB, MiB), binary (1K = 1,024 bytes)"
            ))
        }
    };
    n.checked_mul(mul)
        .filter(|&b| b <= 1 << 30)
        .ok_or_else(|| format!("{s:?} is too large (at most 1 GiB)"))
}

/// Rewrites IN to OUT through `Builder::from_file`: byte-identical unless
/// an option changes the layout. The output is written to a temporary file
/// next to OUT and renamed over it, so OUT is never left half-written and
/// OUT may be IN (whose map stays valid until the rename).
pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let input = crate::open::open_model(&args.input, &args.source)?;
    crate::open::guard_replacing(&[args.output.as_path()], &input, &[])?;
    let mut b = Builder::from_model(&input)
        .map_err(|e| format!("{}: {e}", crate::open::shown(&args.input)))?;
    if let Some(alignment) = args.alignment {
        b.alignment(alignment)?;
    }
    if let Some(endian) = args.endian {
        b.endian(match endian {
            EndianArg::Little => Endian::Little,
            EndianArg::Big => Endian::Big,
        });
    }
    if let Some(version) = args.version {
        b.version(version)?;
    }
    if let Some(bytes) = args.reserve {
        b.reserve_metadata(bytes)?;
    }
    let mode = match args.mode {
        Mode::Single => WriteMode::Single,
        Mode::Reserve => WriteMode::Reserve,
    };

    let layout = crate::progress::write_to_path(&mut b, &args.output, mode)?;
    crate::print(&format!(
        "{}: {} bytes, {} tensors, v{}, {}-endian, alignment {}",
        args.output.display(),
        layout.file_len(),
        layout.tensors.len(),
        layout.ctx.version,
        layout.ctx.endian,
        layout.alignment
    ))
}
