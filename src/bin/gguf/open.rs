//! Opening a model named on the command line, through the library's one
//! door (`gguf::Model::open_with`), so the CLI and the library agree on
//! what a source is (`gguf::Source::from(&str)`):
//! - a local path (any shard of a split model opens the whole model);
//! - `ollama:NAME[:TAG]`: a model of the local Ollama store;
//! - a URL: `http(s)://`, `hf://`, `ms://`, `ollama://`, `s3://`, `gs://`,
//!   `az://`, read at the cost of their headers (any shard's URL opens the
//!   whole model; tensor data is fetched when read, one range request per
//!   tensor). A build without the cargo feature `remote` (the lighter
//!   local-only CLI, README "Installing") refuses URLs, saying so.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use gguf::{read::redact_url, Model, OpenOptions, Source};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A file name or URL as every message, manifest and JSON document shows
/// it: a URL without user info and with its query values replaced
/// (`gguf::read::redact_url`), a path as it is.
pub fn shown(name: &Path) -> String {
    redact_url(&name.to_string_lossy())
}

/// `text` with every URL in it (`scheme://` up to white space, a quote or
/// `<>`, trailing punctuation left out) passed through [`redact_url`]:
/// the last guard on error messages, whatever produced them.
pub fn redact_urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(0, |i| i + 1);
        let after = &rest[at..];
        let len = after
            .find(|c: char| c.is_whitespace() || "\"'<>".contains(c))
            .unwrap_or(after.len());
        let end = at
            + after[..len]
                .trim_end_matches([':', ',', ';', '.', ')'])
                .len();
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end.max(at + 3)..];
    }
    out.push_str(rest);
    out
}

/// How a command reads a source: `--verbose` and `--remote-deadline`.
#[derive(clap::Args, Debug, Clone)]
pub struct SourceArgs {
    /// For a remote source, print to stderr how it was fetched (requests,
    /// bytes, time).
    #[arg(long, short)]
    pub verbose: bool,
    /// For a remote source, the most seconds reading its header may take,
    /// all requests together (a server trickling bytes is stopped with an
    /// error saying how much arrived).
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0, value_parser = positive_seconds)]
    pub remote_deadline: f64,
}

fn positive_seconds(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && Duration::try_from_secs_f64(v).is_ok() => Ok(v),
        _ => Err(format!("expected a positive number of seconds, got {s:?}")),
    }
}

impl SourceArgs {
    #[cfg(feature = "remote")]
    fn options(&self) -> OpenOptions {
        OpenOptions::default().header_deadline(Duration::from_secs_f64(self.remote_deadline))
    }

    // The deadline only bounds remote reads, which this build has none of.
    #[cfg(not(feature = "remote"))]
    fn options(&self) -> OpenOptions {
        OpenOptions::default()
    }
}

/// Whether this build reads URLs (cargo feature `remote`).
const REMOTE: bool = cfg!(feature = "remote");

/// Refuses a URL in a build without remote reading, naming it (without
/// credentials) and saying how to get a build that reads it; `remote` is
/// whether this build has it ([`REMOTE`], a parameter for the tests).
fn require_remote_reading(source: &Source<'_>, remote: bool) -> Result<()> {
    match source {
        Source::Url(url) if !remote => Err(format!(
            "{}: this gguf was built without remote reading (cargo feature `remote`), \
             so it reads local files only; download the file first, or install the \
             default build (`cargo install --path .` in gguf-kit's source), which reads URLs",
            redact_url(url)
        )
        .into()),
        _ => Ok(()),
    }
}

/// The source a command-line argument names, as the library reads a
/// string (a path that is not UTF-8 is a path).
pub fn source(arg: &OsStr) -> Source<'static> {
    match arg.to_str() {
        Some(s) => Source::from(s),
        None => Source::path(arg),
    }
}

/// The model at `name` (see the module docs for the sources), any shard
/// of a split model included: local files memory-mapped, remote ones read
/// at the cost of their headers. With `--verbose`, how a remote model was
/// fetched goes to stderr. Errors name the source (a URL without its
/// credentials).
pub fn open_model(name: &Path, how: &SourceArgs) -> Result<Model<'static>> {
    let source = source(name.as_os_str());
    require_remote_reading(&source, REMOTE)?;
    let shown_source = source.to_string();
    let started = Instant::now();
    let local = !source.is_url();
    let ollama = matches!(source, Source::Ollama(_));
    if ollama && how.verbose {
        crate::message(&format!("{shown_source}: the local Ollama store"));
    }
    // Errors name the file (the shard) or the URL (without credentials)
    // themselves; an Ollama entry's are prefixed with the name given.
    let model = Model::open_with(source, &how.options()).map_err(|e| match ollama {
        true => format!("{shown_source}: {e}"),
        false => e.to_string(),
    })?;
    if how.verbose && !local {
        report_fetch(&model, &shown_source, started);
    }
    Ok(model)
}

/// One file at `name`, not its whole model (`inspect --file`): a shard
/// opens as itself, split keys included.
pub fn open_file(name: &Path, how: &SourceArgs) -> Result<gguf::GgufFile<'static>> {
    let source = source(name.as_os_str());
    require_remote_reading(&source, REMOTE)?;
    let shown_source = source.to_string();
    let started = Instant::now();
    let remote = source.is_url();
    let file = gguf::GgufFile::open_with(source, &how.options()).map_err(|e| match remote {
        // A URL's errors name it (without credentials) themselves.
        true => e.to_string(),
        // Named as given (an Ollama entry by its name, not its blob's path).
        false => format!("{}: {}", shown(name), e.detail()),
    })?;
    if how.verbose && remote {
        report_file_fetch(&file, &shown_source, started);
    }
    Ok(file)
}

/// `--verbose` for one remote file: its header read.
#[cfg(feature = "remote")]
fn report_file_fetch(file: &gguf::GgufFile<'_>, shown: &str, started: Instant) {
    let s = file.remote_stats().unwrap_or_default();
    crate::message(&format!(
        "{shown}: header {} bytes: {} range requests, {} bytes in {:.1} ms",
        file.header_len(),
        s.requests + s.head_requests,
        s.bytes,
        started.elapsed().as_secs_f64() * 1e3,
    ));
}

// Without `remote` no URL opens (`require_remote_reading`): nothing was
// fetched, so there is nothing to report.
#[cfg(not(feature = "remote"))]
fn report_file_fetch(_: &gguf::GgufFile<'_>, _: &str, _: Instant) {}

#[cfg(not(feature = "remote"))]
fn report_fetch(_: &Model<'_>, _: &str, _: Instant) {}

/// What reading a remote model's files has cost so far.
#[cfg(feature = "remote")]
pub type FetchStats = gguf::read::RemoteStats;

/// What reading a remote model's files has cost so far: nothing to count
/// in a build without `remote`.
#[cfg(not(feature = "remote"))]
#[derive(Debug, Clone, Copy)]
pub struct FetchStats;

/// `--verbose` for one tensor: nothing is fetched without `remote`.
#[cfg(not(feature = "remote"))]
pub fn report_tensor_fetch(_: &Model<'_>, _: &str, _: Option<FetchStats>) -> Option<FetchStats> {
    None
}

/// `--verbose` for a remote model: each shard's header read, then the
/// totals.
#[cfg(feature = "remote")]
fn report_fetch(model: &Model<'_>, shown: &str, started: Instant) {
    let mut requests = 0;
    let mut bytes = 0;
    for shard in model.shards() {
        let f = shard.file();
        let s = f.remote_stats().unwrap_or_default();
        requests += s.requests + s.head_requests;
        bytes += s.bytes;
        crate::message(&format!(
            "{}: header {} bytes: {} range requests{}, {} bytes, ETag {}",
            shard.origin(),
            f.header_len(),
            s.requests,
            match s.head_requests {
                0 => String::new(),
                n => format!(" + {n} metadata"),
            },
            s.bytes,
            f.remote_etag().as_deref().unwrap_or("(none)"),
        ));
    }
    crate::message(&format!(
        "{shown}: {} file(s), total {requests} requests, {bytes} bytes in {:.1} ms",
        model.shard_count(),
        started.elapsed().as_secs_f64() * 1e3,
    ));
}

/// `--verbose` for one tensor read from a remote model: what it cost.
#[cfg(feature = "remote")]
pub fn report_tensor_fetch(
    model: &Model<'_>,
    name: &str,
    before: Option<FetchStats>,
) -> Option<FetchStats> {
    let shard = model.shards().get(model.tensor_shard(name)?)?;
    let now = shard.file().remote_stats()?;
    if let Some(before) = before {
        crate::message(&format!(
            "{}: tensor data: {} range request, {} bytes",
            shard.origin(),
            now.requests - before.requests,
            now.bytes - before.bytes,
        ));
    }
    Some(now)
}

/// Refuses a source an editing command cannot write: a URL, an Ollama
/// store entry (the store's blobs are Ollama's, addressed by digest) or
/// standard input. `command` names the command in the message.
pub fn require_local(arg: &Path, command: &str) -> Result<()> {
    let what = match source(arg.as_os_str()) {
        Source::Path(p) if p.as_os_str() == "-" => "standard input",
        Source::Path(_) => return Ok(()),
        Source::Url(_) => "a URL",
        Source::Ollama(_) => "an Ollama store entry",
        _ => "not a file",
    };
    Err(format!(
        "{}: gguf {command} needs a local file to edit, and this is {what} (read-only); \
         copy the model to a local file first",
        shown(arg)
    )
    .into())
}

/// The local files of `model` (every shard; none for a URL): what a
/// command's output must not replace.
pub fn local_files(model: &Model<'_>) -> Vec<std::path::PathBuf> {
    model
        .shards()
        .iter()
        .filter_map(|s| s.origin().path().map(Path::to_owned))
        .collect()
}

/// Refuses, before a command reads its inputs' data, `outputs` (a file or
/// every shard) that are not regular files or that are one of `inputs`
/// (`gguf::write::check_output`, `check_not_inputs`): the one check of
/// every writing command whose output may never replace what it reads.
pub fn guard_outputs(outputs: &[&Path], inputs: &[&Path]) -> Result<()> {
    gguf::write::check_not_inputs(outputs, inputs)?;
    for output in outputs {
        gguf::write::check_output(output)?;
    }
    Ok(())
}

/// [`guard_outputs`] for a command that turns a model into another version
/// of itself (`rewrite`, `convert`, `quantize`, `split`): its outputs may
/// be every file of `model` (read whole before the rename), never only
/// some of them nor one of `others` (`gguf::write::check_replacing_model`).
pub fn guard_replacing(outputs: &[&Path], model: &Model<'_>, others: &[&Path]) -> Result<()> {
    let files = local_files(model);
    let files: Vec<&Path> = files.iter().map(std::path::PathBuf::as_path).collect();
    gguf::write::check_replacing_model(outputs, &files, others)?;
    for output in outputs {
        gguf::write::check_output(output)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_without_remote_reading_refuses_a_url_saying_why() {
        let url = source(OsStr::new("https://user:secret@host/m.gguf?sig=abc"));
        let e = require_remote_reading(&url, false).unwrap_err().to_string();
        assert!(
            e.starts_with("https://host/m.gguf?sig=REDACTED: "),
            "names the URL first, without credentials: {e}"
        );
        assert!(!e.contains("secret") && !e.contains("abc"), "{e}");
        assert!(e.contains("cargo feature `remote`"), "{e}");
        assert!(e.contains("download the file first"), "{e}");
        // Local files and the local Ollama store need no remote reading.
        for local in ["model.gguf", "ollama:gemma3", "-"] {
            assert!(require_remote_reading(&source(OsStr::new(local)), false).is_ok());
        }
        // A build with remote reading lets the URL through to the library.
        assert!(require_remote_reading(&url, true).is_ok());
        assert_eq!(REMOTE, cfg!(feature = "remote"));
    }
}
