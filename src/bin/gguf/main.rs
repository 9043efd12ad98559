//! `gguf`: inspect, build and edit GGUF files from the command line.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod chat;
mod check;
mod convert;
mod diff;
mod edit;
mod estimate;
mod get;
mod hash;
mod imatrix;
mod import;
mod inspect;
mod inspect_file;
mod interrupt;
mod json;
mod merge;
mod open;
mod progress;
mod quantize;
mod report;
mod rewrite;
mod split;
mod tensor;
mod text;
mod tokenize;

/// Inspect, rewrite and edit GGUF model files.
#[derive(Parser)]
#[command(
    name = "gguf",
    version,
    about,
    after_help = "Exit status: 0 on success; 1 on an error (the message on stderr names the \
                  file); 2 on a usage error. `diff`: 0 equal, 1 different, 2 error. `check`: \
                  1 when it finds a problem. `get`: 1 when the key is missing. A command \
                  that writes and is stopped by SIGINT (Ctrl-C) or SIGTERM removes its \
                  temporary files and exits 130 or 143; the file it was replacing is \
                  untouched."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a summary of a file: header, metadata and tensors.
    Inspect(inspect::Args),
    /// Hash the tensor data, per tensor and for the whole model (gguf-py's
    /// gguf_hash.py output by default), or verify a manifest.
    Hash(hash::Args),
    /// Compare two files: header, metadata, tensors (and with --values the
    /// dequantized values). Exit status 0 equal, 1 different, 2 error.
    Diff(diff::Args),
    /// Check a file: validity, llama.cpp's rules, NaN/Inf in tensor data
    /// and block scales, metadata consistency. Exit status 1 on problems.
    Check(check::Args),
    /// Print a shell completion script: `gguf completions bash >
    /// ~/.local/share/bash-completion/completions/gguf` (zsh: a `_gguf`
    /// file on `$fpath`; fish: `~/.config/fish/completions/gguf.fish`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print one metadata value as it is, for scripts: a string's raw
    /// bytes, control characters included (--json or `inspect` show them
    /// escaped); exit status 1 when the key is missing.
    Get(get::Args),
    /// Set a metadata value (in place when it fits). An existing key keeps
    /// its type unless --force; numbers out of the type's range are refused.
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
    /// Re-encode the weight matrices to one ggml type, as llama-quantize
    /// --pure selects them, keeping the input's tensor order (norms, biases
    /// and other tensors are kept byte for byte; already-quantized weights
    /// only with --allow-requantize or a float target). For a preset
    /// (Q4_K_M, ...) and llama-quantize's exact output, use `quantize`. Prints what it converted and what it kept, and why;
    /// sets general.file_type to the target only when every weight matrix
    /// became it. Writes nothing (exit status 1) when no tensor would change.
    Convert(convert::Args),
    /// Estimate the memory llama.cpp allocates to run a model (weights, KV
    /// cache, output and compute buffers, per device; CPU only unless -ts
    /// names GPUs); flags as llama.cpp's. --fit SIZE (a unit is required)
    /// finds the largest context and most GPU layers that fit.
    Estimate(estimate::Args),
    /// Split a model into shards (NAME-00001-of-0000N.gguf, ...) by size
    /// and/or tensor count, as gguf-py's writer splits.
    Split(split::Args),
    /// Merge the shards of a split model into one file.
    Merge(merge::Args),
    /// Importance matrices (llama-imatrix's files): `gguf imatrix convert
    /// IN OUT` between its GGUF and legacy .dat formats.
    Imatrix(imatrix::Args),
    /// Text to token ids with the model's own tokenizer, as llama.cpp's
    /// llama-tokenize prints them (`id -> 'piece'` lines, or `--ids`).
    Tokenize(tokenize::Args),
    /// Quantize a model as llama-quantize does, a drop-in for it: a preset
    /// (Q4_K_M, IQ4_XS, ...) picks every tensor's type by llama.cpp's
    /// rules, optionally guided by an importance matrix; same flags, same
    /// output bytes. `convert` instead re-encodes to one ggml type.
    Quantize(Box<quantize::Args>),
    /// Import a Hugging Face checkpoint (config.json, safetensors,
    /// tokenizer files) as the GGUF llama.cpp's convert_hf_to_gguf.py
    /// writes, or quantized to a preset as llama-quantize would then
    /// quantize it: `gguf import DIR OUT.gguf --type q4_k_m`.
    Import(import::Args),
    /// Render a conversation with the model's chat template as llama.cpp
    /// renders it: the prompt (or --ids, --json) llama.cpp would feed the
    /// model. Messages as llama-server's chat request body, from a file or
    /// standard input.
    Chat(chat::Args),
    /// Write one self-contained HTML page about a model (summary, metadata,
    /// tensor map, bits per weight per layer, memory against context
    /// length), from its header alone; --compare OTHER adds a comparison.
    Report(report::Args),
}

/// Writes a command's output, its control characters but line feeds
/// escaped (see [`text`]); a closed pipe (`gguf inspect f | head`) is not
/// an error.
fn print(text: &str) -> Result<(), Box<dyn std::error::Error>> {
    print_with(|out| text::write(out, text, text::Style::RustLines))
}

/// Writes a JSON document, DEL and C1 escaped as JSON escapes them
/// (serde_json escaped the rest).
fn print_json(json: &str) -> Result<(), Box<dyn std::error::Error>> {
    print_with(|out| text::write(out, json, text::Style::Json))
}

/// Writes `text` as it is: for `get` (whose raw bytes are for scripts)
/// and the tool's own completion scripts.
fn print_raw(text: &str) -> Result<(), Box<dyn std::error::Error>> {
    print_with(|out| std::io::Write::write_all(out, text.as_bytes()))
}

/// Writes to stdout with `write`, then a line feed.
fn print_with(
    write: impl FnOnce(&mut std::io::StdoutLock<'static>) -> std::io::Result<()>,
) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let written = write(&mut out)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// `P: P: why` as `P: why`, wherever `P: ` starts (the start of the line or
/// after `: `). Commands name their file in their errors, and an I/O error
/// of the library names the file it concerns too.
fn name_once(text: &str) -> std::borrow::Cow<'_, str> {
    let starts = std::iter::once(0).chain(text.match_indices(": ").map(|(i, _)| i + 2));
    for start in starts {
        let mut from = start;
        while let Some(i) = text[from..].find(": ") {
            let end = from + i + 2;
            if text[end..].starts_with(&text[start..end]) {
                return format!("{}{}", &text[..start], &text[end..]).into();
            }
            from = end;
        }
    }
    text.into()
}

/// Writes one line to stderr (an error, a warning, what `--verbose`
/// tells), every control character escaped, line feeds included: messages
/// carry names from files and text from servers, and a line feed in them
/// must not start a line of its own. A message of several lines is a
/// [`Lines`].
fn message(line: &str) {
    eprintln!("{}", text::escape(&name_once(line)));
}

/// Writes the lines of a message of several lines to stderr, each as
/// [`message`] writes one: the line breaks between them are the tool's,
/// and any line feed inside a line stays escaped.
fn message_lines(lines: &[String]) {
    for line in lines {
        message(line);
    }
}

/// An error or warning of several lines (a refusal and the list of what
/// it concerns, a warning and the command that undoes it), as the tool
/// builds it: the lines are kept apart, never joined with a line feed,
/// so that printing can escape every line feed inside a line (text from a
/// file, a path, a server's message) and still break the message where
/// the tool means it to ([`message_lines`]). Displayed (in a test, by a
/// caller that does not print it) as the lines joined by line feeds.
#[derive(Debug)]
struct Lines(Vec<String>);

impl std::fmt::Display for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

impl std::error::Error for Lines {}

/// `shown: error`, for an error about the file shown as `shown` (a
/// command's input), unless the error is an I/O error that names a file
/// itself (the output, a temporary file beside it, a shard): that file is
/// the one to name, once.
fn about(shown: &str, e: gguf::llama::Error) -> String {
    match &e {
        gguf::llama::Error::Gguf(gguf::Error::Io { path: Some(_), .. }) => e.to_string(),
        _ => format!("{shown}: {e}"),
    }
}

/// A command's result; errors are printed as `gguf: {error}`.
type CliResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// An error that ends the process with this exit status, its message
/// already printed.
#[derive(Debug)]
struct Exit(u8);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit status {}", self.0)
    }
}

impl std::error::Error for Exit {}

/// A usage error found after parsing (a combination of flags clap cannot
/// check alone): printed as clap prints its own, exit status 2.
fn usage_error(subcommand: &str, message: impl std::fmt::Display) -> Box<dyn std::error::Error> {
    let kind = clap::error::ErrorKind::ArgumentConflict;
    let mut cli = Cli::command();
    // Built, so that the usage line names the subcommand (`gguf set`).
    cli.build();
    let err = match cli.find_subcommand_mut(subcommand) {
        Some(sub) => sub.error(kind, message),
        None => Cli::command().error(kind, message),
    };
    let _ = err.print();
    Exit(2).into()
}

/// A command line that does not fit the file it names (a value that is
/// not of the key's type, a new key without `--type`): a usage error, exit
/// status 2 as for clap's, with a message that names the file.
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Opens the model a command reads (any source, see `open.rs`); errors
/// name the source (a URL without its credentials).
fn open(path: &std::path::Path, how: &open::SourceArgs) -> Result<gguf::Model<'static>, String> {
    // The model's errors name the file, shard or URL themselves.
    open::open_model(path, how).map_err(|e| e.to_string())
}

impl Command {
    /// True for the commands that write files through temporary files
    /// (an edit may rewrite the file).
    fn writes(&self) -> bool {
        if let Command::Tensor(args) = self {
            return args.writes();
        }
        matches!(
            self,
            Command::Set(_)
                | Command::Rm(_)
                | Command::Mv(_)
                | Command::RenameTensor(_)
                | Command::Rewrite(_)
                | Command::Convert(_)
                | Command::Split(_)
                | Command::Merge(_)
                | Command::Imatrix(_)
                | Command::Quantize(_)
                | Command::Import(_)
                | Command::Report(_)
        )
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(estimate::normalize_args(std::env::args_os()));
    if cli.command.writes()
        && let Err(e) = interrupt::install()
    {
        eprintln!("gguf: cannot handle SIGINT and SIGTERM: {e}");
        return ExitCode::FAILURE;
    }
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(args),
        Command::Get(args) => get::run(args),
        Command::Hash(args) => hash::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Check(args) => check::run(args),
        Command::Completions { shell } => {
            // Generated into memory: clap_complete panics on a closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "gguf", &mut script);
            print_raw(String::from_utf8_lossy(&script).trim_end())
        }
        Command::Set(args) => edit::set(args),
        Command::Rm(args) => edit::rm(args),
        Command::Mv(args) => edit::mv(args),
        Command::RenameTensor(args) => edit::rename_tensor(args),
        Command::Rewrite(args) => rewrite::run(args),
        Command::Tensor(args) => tensor::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Estimate(args) => estimate::run(args),
        Command::Split(args) => split::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Imatrix(args) => imatrix::run(args),
        Command::Tokenize(args) => tokenize::run(args),
        Command::Chat(args) => chat::run(args),
        Command::Quantize(args) => quantize::run(*args),
        Command::Import(args) => import::run(args),
        Command::Report(args) => report::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(Exit(code)) = e.downcast_ref::<Exit>() {
                return ExitCode::from(*code);
            }
            match e.downcast_ref::<Lines>() {
                Some(Lines(lines)) => {
                    let lines: Vec<String> = lines
                        .iter()
                        .enumerate()
                        .map(|(i, l)| {
                            let l = open::redact_urls_in(l);
                            if i == 0 {
                                format!("gguf: {l}")
                            } else {
                                l
                            }
                        })
                        .collect();
                    message_lines(&lines);
                }
                None => message(&format!("gguf: {}", open::redact_urls_in(&e.to_string()))),
            }
            if e.is::<Usage>() {
                return ExitCode::from(2);
            }
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = include_str!("../../../README.md");

    /// The README's feature list and its Command line table name every
    /// subcommand there is, and the count the list gives.
    #[test]
    fn the_readme_names_every_command() {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        let mut lines = README.lines();
        let bullet: Vec<&str> = lines
            .by_ref()
            .skip_while(|l| !l.starts_with("- **A command-line tool**"))
            .take_while(|l| l.starts_with("- **A command-line tool**") || l.starts_with("  "))
            .collect();
        let bullet = bullet.join(" ");
        assert!(
            bullet.contains(&format!("of {} commands", names.len())),
            "{bullet}"
        );
        let rows: Vec<&str> = README
            .lines()
            .skip_while(|l| *l != "## Command line")
            .skip(1)
            .take_while(|l| !l.starts_with("## "))
            .filter(|l| l.starts_with("| `"))
            .collect();
        for name in &names {
            assert!(bullet.contains(&format!("`{name}`")), "{name}: {bullet}");
            let first_cell = |row: &&str| row.split(" | ").next().unwrap_or("").to_owned();
            assert!(
                rows.iter()
                    .map(first_cell)
                    .any(|c| c.contains(&format!("`{name}`")) || c.contains(&format!("`{name} "))),
                "{name} has no row in the Command line table"
            );
        }
    }
}
