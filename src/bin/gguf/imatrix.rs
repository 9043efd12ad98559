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
    /// Tokens per chunk the legacy file was computed with (llama-imatrix's
    /// context size divided by its parallel sequences), to turn its call
    /// counts into token counts.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    chunk_size: u32,
}

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
    let converted = match to {
        ImatrixFormat::Gguf => m.to_gguf(args.chunk_size),
        ImatrixFormat::Dat => m.to_dat(),
    };
    let lossless = m.converts_losslessly(to, args.chunk_size);
    converted.write(&args.output)?;
    if !lossless {
        crate::message(&format!(
            "gguf: warning: {} cannot hold every count of {} exactly (experts with different \
             token counts, counts that are not whole chunks, or several datasets): written as \
             llama-imatrix writes it",
            format_name(to),
            args.input.display()
        ));
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
