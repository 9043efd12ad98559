//! Opening a model named on the command line. Sources:
//! - a local path (any shard of a split model opens the whole model);
//! - `ollama:NAME[:TAG]`: a model of the local Ollama store;
//! - a URL: `http(s)://`, `hf://`, `ms://`, `ollama://`, `s3://`, `gs://`,
//!   `az://` (see `gguf::remote`), read at the cost of their headers.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gguf::remote::{
    is_ollama_store, is_remote, ollama_model_path, redact_url, RemoteFile, RemoteOptions,
};
use gguf::{Gguf, GgufFile, Model, Tensor};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A file name or URL as every message, manifest and JSON document shows
/// it: a URL without user info and with its query values replaced
/// (`gguf::remote::redact_url`), a path as it is.
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
    fn remote_options(&self) -> RemoteOptions {
        RemoteOptions::default().header_deadline(Duration::from_secs_f64(self.remote_deadline))
    }
}

/// Whether `s` has the form of a URL (`scheme://`), supported or not.
fn looks_like_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// A model as opened: memory-mapped files, or remote headers with their
/// connections kept for fetching tensor data.
pub enum Opened {
    /// Local files.
    Local(Model<'static>),
    /// Remote files, one per shard, in order, with the URLs to show.
    Remote(Vec<(PathBuf, RemoteFile)>),
}

impl Opened {
    /// The header of every file, in shard order.
    pub fn files(&self) -> Vec<&GgufFile<'static>> {
        match self {
            Opened::Local(m) => m.shards().iter().map(|s| s.file()).collect(),
            Opened::Remote(r) => r.iter().map(|(_, f)| f.file()).collect(),
        }
    }

    /// The data of tensor `t` of file `shard`: borrowed from the map when
    /// local, one range read when remote.
    pub fn tensor_data<'s>(&'s self, shard: usize, t: &Tensor<'s>) -> Result<Cow<'s, [u8]>> {
        match self {
            Opened::Local(_) => Ok(Cow::Borrowed(t.data()?)),
            Opened::Remote(r) => {
                let (_, remote) = r.get(shard).ok_or("no such shard")?;
                Ok(Cow::Owned(remote.tensor_bytes(t.name())?))
            }
        }
    }

    /// The model, with the data of `tensor` (when named) fetched if
    /// remote: one more range read, from its own shard.
    pub fn into_model(self, tensor: Option<&str>, verbose: bool) -> Result<Model<'static>> {
        let remote = match self {
            Opened::Local(m) => return Ok(m),
            Opened::Remote(r) => r,
        };
        let mut files = Vec::with_capacity(remote.len());
        for (url, file) in remote {
            // A tensor the file lacks is reported by the caller, as for a
            // local file.
            let held = tensor.filter(|t| file.file().tensor(t).is_ok());
            let Some(t) = held else {
                files.push((url, file.into_file()));
                continue;
            };
            let before = file.stats();
            let with = file.with_tensor(t)?;
            if verbose {
                let s = file.stats();
                crate::message(&format!(
                    "{}: tensor data: {} range request, {} bytes",
                    file.url(),
                    s.requests - before.requests,
                    s.bytes - before.bytes,
                ));
            }
            files.push((url, with));
        }
        Ok(Model::from_files(files)?)
    }
}

/// The model at `name` (see the module docs for the sources), any shard
/// of a split model included: local files memory-mapped, remote ones read
/// at the cost of their headers. With `--verbose`, how a remote model was
/// fetched goes to stderr.
pub fn open_source(name: &Path, how: &SourceArgs) -> Result<Opened> {
    let verbose = how.verbose;
    let text = name.to_str();
    if let Some(s) = text.filter(|s| is_ollama_store(s)) {
        let path = ollama_model_path(s).map_err(|e| format!("{s}: {e}"))?;
        if verbose {
            crate::message(&format!("{s}: {}", path.display()));
        }
        return Ok(Opened::Local(
            Model::open(&path).map_err(|e| format!("{s}: {e}"))?,
        ));
    }
    // A URL of a scheme not read remotely is refused as a URL (naming it
    // without credentials), not looked for as a local path.
    let Some(url) = text.filter(|s| is_remote(s) || looks_like_url(s)) else {
        // The model's errors name the file (the shard) themselves.
        return Ok(Opened::Local(Model::open(name)?));
    };
    let started = Instant::now();
    // Errors name the URL themselves (without credentials).
    let files = RemoteFile::open_model(url, &how.remote_options())?;
    let shown_url = redact_url(url);
    if verbose {
        for f in &files {
            let s = f.stats();
            crate::message(&format!(
                "{}: header {} bytes: {} range requests{}, {} bytes, ETag {}",
                f.url(),
                f.file().header_len(),
                s.requests,
                match s.head_requests {
                    0 => String::new(),
                    n => format!(" + {n} metadata"),
                },
                s.bytes,
                f.etag().as_deref().unwrap_or("(none)"),
            ));
        }
        crate::message(&format!(
            "{shown_url}: {} file(s), total {} requests, {} bytes in {:.1} ms",
            files.len(),
            files
                .iter()
                .map(|f| f.stats().requests + f.stats().head_requests)
                .sum::<u64>(),
            files.iter().map(|f| f.stats().bytes).sum::<u64>(),
            started.elapsed().as_secs_f64() * 1e3,
        ));
    }
    let named = files
        .into_iter()
        .map(|f| (PathBuf::from(f.url()), f))
        .collect::<Vec<_>>();
    // A single file keeps the name it was given (hf://, ollama://, ...),
    // redacted.
    Ok(Opened::Remote(match <[_; 1]>::try_from(named) {
        Ok([(_, f)]) => vec![(PathBuf::from(shown_url), f)],
        Err(named) => named,
    }))
}

/// [`open_source`] as a [`Model`], with the data of `tensor` when one is
/// named (one more range read when remote).
pub fn open_model(name: &Path, tensor: Option<&str>, how: &SourceArgs) -> Result<Model<'static>> {
    open_source(name, how)?.into_model(tensor, how.verbose)
}
