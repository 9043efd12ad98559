//! `gguf imatrix convert IN OUT`: an importance matrix from llama-imatrix's
//! GGUF format to its legacy `.dat` one, or back.

use std::path::{Path, PathBuf};

use gguf::quantize::{Imatrix, ImatrixFormat};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Convert between llama-imatrix's GGUF and legacy (.dat) formats, as
    /// `llama-imatrix --in-file IN -o OUT --output-format F` does, but
    /// exactly: converting back gives the same file whenever the format
    /// can hold it (a warning says when it cannot).
    Convert(ConvertArgs),
}

#[derive(clap::Args)]
struct ConvertArgs {
    /// The importance matrix to read (either format).
    input: PathBuf,
    /// The file to write (replaced atomically).
    output: PathBuf,
    /// The output format; by default from OUTPUT's extension (.gguf or
    /// .dat).
    #[arg(long, value_parser = ["gguf", "dat"])]
    to: Option<String>,
    /// For a legacy (.dat) input: the tokens per chunk it was computed
    /// with (llama-imatrix's context size divided by its parallel
    /// sequences), which the legacy format does not store; GGUF keeps it
    /// as `imatrix.chunk_size` and counts tokens with it. Converting a
    /// GGUF matrix to .dat prints its value, to give here on the way back.
    /// [default: 512, llama-imatrix's]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    chunk_size: Option<u32>,
}

/// llama-imatrix's chunk size by default (its context size, 512, over one
/// sequence): what it assumes converting a legacy file, as we do.
const DEFAULT_CHUNK_SIZE: u32 = 512;

fn format_name(f: ImatrixFormat) -> &'static str {
    match f {
        ImatrixFormat::Gguf => "GGUF",
        ImatrixFormat::Dat => "legacy .dat",
    }
}

fn target_format(args: &ConvertArgs) -> Result<ImatrixFormat, Box<dyn std::error::Error>> {
    let by_ext = |p: &Path| match p.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("gguf") => Some(ImatrixFormat::Gguf),
        Some(e) if e.eq_ignore_ascii_case("dat") => Some(ImatrixFormat::Dat),
        _ => None,
    };
    match args.to.as_deref() {
        Some("gguf") => Ok(ImatrixFormat::Gguf),
        Some(_) => Ok(ImatrixFormat::Dat),
        None => by_ext(&args.output).ok_or_else(|| {
            crate::usage_error(
                "imatrix",
                "cannot tell the output format from its name: use --to gguf or --to dat",
            )
        }),
    }
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let Sub::Convert(args) = args.command;
    let to = target_format(&args)?;
    crate::open::guard_outputs(&[args.output.as_path()], &[args.input.as_path()])?;
    let m = Imatrix::read(&args.input)?;
    let from = m.format;
    let (shown_in, shown_out) = (args.input.display(), args.output.display());
    let chunk_size = args.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
    if let (Some(n), ImatrixFormat::Gguf) = (args.chunk_size, from) {
        let own = m.chunk_size.map_or("none".to_owned(), |c| format!("{c}"));
        crate::message(&format!(
            "gguf: {shown_in}: warning: --chunk-size {n} ignored: it is for a legacy (.dat) \
             input, and this is a GGUF matrix, whose imatrix.chunk_size ({own}) is used"
        ));
    }
    let converted = match to {
        ImatrixFormat::Gguf => m.to_gguf(chunk_size),
        ImatrixFormat::Dat => m.to_dat(),
    };
    let lossless = m.converts_losslessly(to, chunk_size);
    converted.write(&args.output)?;
    if !lossless {
        crate::message(&format!(
            "gguf: {shown_out}: warning: {} cannot hold every count of {shown_in} exactly \
             (experts with different token counts, counts that are not whole chunks, or \
             several datasets): written as llama-imatrix writes it",
            format_name(to),
        ));
    }
    // The legacy format has no field for the chunk size: say what was
    // dropped, and how to get it back.
    if let Some(chunk_size) = dropped_chunk_size(&m, to) {
        let default = if chunk_size == DEFAULT_CHUNK_SIZE {
            ", the default"
        } else {
            ""
        };
        crate::message_lines(&[
            format!(
                "gguf: {shown_out}: warning: the legacy .dat format has no chunk size: \
                 {shown_in}'s imatrix.chunk_size {chunk_size} was dropped"
            ),
            format!(
                "  converting back restores it with --chunk-size {chunk_size}{default}: \
                 gguf imatrix convert {shown_out} OUT.gguf --chunk-size {chunk_size}"
            ),
        ]);
    }
    crate::print(&format!(
        "{} ({}, {} entries) -> {} ({})",
        args.input.display(),
        format_name(from),
        m.entries.len(),
        args.output.display(),
        format_name(to)
    ))
}

/// The chunk size a conversion of `m` to `to` leaves out: a GGUF matrix's
/// `imatrix.chunk_size`, which a legacy file cannot hold.
fn dropped_chunk_size(m: &Imatrix, to: ImatrixFormat) -> Option<u32> {
    match (m.format, to) {
        (ImatrixFormat::Gguf, ImatrixFormat::Dat) => m.chunk_size,
        _ => None,
    }
}
