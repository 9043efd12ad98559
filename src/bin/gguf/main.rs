//! `gguf`: inspect, build and edit GGUF files from the command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod convert;
mod edit;
mod inspect;
mod json;
mod open;
mod progress;
mod rewrite;
mod tensor;

/// Inspect, rewrite and edit GGUF model files.
#[derive(Parser)]
#[command(name = "gguf", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a summary of a file: header, metadata and tensors.
    Inspect(inspect::Args),
    /// Set a metadata value (in place when it fits).
    Set(edit::SetArgs),
    /// Remove a metadata key.
    Rm(edit::RmArgs),
    /// Rename a metadata key.
    Mv(edit::MvArgs),
    /// Rename a tensor.
    RenameTensor(edit::MvArgs),
    /// Rewrite a file (byte-identical unless an option changes the layout),
    /// optionally with another mode, alignment, byte order or version.
    Rewrite(rewrite::Args),
    /// Print a tensor's summary (type, shape, min/max/mean/std of its
    /// values), or export it as a NumPy .npy file.
    Tensor(tensor::Args),
    /// Re-encode the floating-point weight matrices to another type
    /// (norms, biases and other tensors are kept byte for byte).
    Convert(convert::Args),
}

/// Writes a command's output; a closed pipe (`gguf inspect f | head`) is
/// not an error.
fn print(text: &str) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(args),
        Command::Set(args) => edit::set(args),
        Command::Rm(args) => edit::rm(args),
        Command::Mv(args) => edit::mv(args),
        Command::RenameTensor(args) => edit::rename_tensor(args),
        Command::Rewrite(args) => rewrite::run(args),
        Command::Tensor(args) => tensor::run(args),
        Command::Convert(args) => convert::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gguf: {e}");
            ExitCode::FAILURE
        }
    }
}
