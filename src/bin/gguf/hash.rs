//! `gguf hash FILE [--no-layer] [--algo A,B] [--check MANIFEST]`: hashes of
//! the tensor data, per tensor and for the whole model.
//!
//! Output lines are `ALGO  HASH  FILE[:TENSOR]`, the algorithm name padded
//! to 8 characters, which is what gguf-py's `gguf_hash.py` and llama.cpp's
//! `llama-gguf-hash` print. With no `--algo` the output is, line for line,
//! `gguf_hash.py`'s: per tensor `sha1` then `sha256`, then the whole-model
//! `sha1`, `sha256` and `uuid` (a UUIDv5: SHA-1 over the llama.cpp
//! namespace followed by every tensor's data). Tensors whose names end in
//! `.attention.masked_bias`, `.attention.bias` or `.rotary_emb.inv_freq`
//! are skipped, as `gguf_hash.py` skips them (converters drop them; they
//! are not weights).
//!
//! `--check` follows `llama-gguf-hash --check` (its manifest lines, its
//! "Ok"/"Mismatch"/"Not Found" verdicts and exit statuses) with two
//! deliberate differences: a `uuid` is compared with the manifest's `uuid`
//! line, where llama-gguf-hash looks it up among the `sha256` lines and so
//! can never verify one; and a manifest of one model that does not name
//! this file (which was renamed or moved since) is read as naming it, and
//! the result says under which name the hashes match.
//!
//! Tensor names are printed with their control characters escaped (see
//! `text`), and looked up in a manifest both escaped and raw.
//!
//! Speed: the whole-model hashes are sequential by nature, so the data is
//! walked once in chunks and every hash state (whole-model and per-tensor)
//! consumes each chunk on its own rayon thread while the chunk is still in
//! cache. The wall time is then about that of the slowest single hash over
//! the data, or the total work divided by the cores, whichever is larger.

use std::collections::HashMap;
use std::path::PathBuf;

use rayon::prelude::*;
use sha1::{Digest, Sha1};
use sha2::Sha256;
use xxhash_rust::xxh64::Xxh64;

/// A hash algorithm, in output order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, clap::ValueEnum)]
pub enum Algo {
    /// xxHash64, seed 0 (llama-gguf-hash's default; not cryptographic).
    Xxh64,
    /// SHA-1.
    Sha1,
    /// SHA-256.
    Sha256,
    /// UUIDv5 of the whole model's data in the llama.cpp namespace (no
    /// per-tensor line).
    Uuid,
}

impl Algo {
    fn name(self) -> &'static str {
        match self {
            Algo::Xxh64 => "xxh64",
            Algo::Sha1 => "sha1",
            Algo::Sha256 => "sha256",
            Algo::Uuid => "uuid",
        }
    }

    fn from_name(s: &str) -> Option<Self> {
        [Algo::Xxh64, Algo::Sha1, Algo::Sha256, Algo::Uuid]
            .into_iter()
            .find(|a| a.name() == s)
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// The model, printed as given (a URL without its user info and query
    /// values) so manifests name it the same way: a
    /// path (any shard of a split model hashes the whole model),
    /// ollama:NAME[:TAG], or a URL (http(s)://, hf://, ms://, ollama://,
    /// s3://, gs://, az://). A remote model is downloaded tensor by tensor
    /// (one range read each): all of its data crosses the network.
    file: PathBuf,
    /// Print only the whole-model hashes, not one line per tensor.
    #[arg(long)]
    no_layer: bool,
    /// Algorithms, comma-separated. Default: sha1,sha256,uuid (gguf-py's
    /// gguf_hash.py output, line for line); with --check, the strongest
    /// algorithm the manifest holds.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "ALGOS")]
    algo: Vec<Algo>,
    /// Verify against a manifest of `ALGO  HASH  FILE[:TENSOR]` lines (a
    /// saved output of this command, gguf_hash.py or llama-gguf-hash), as
    /// `llama-gguf-hash --check` does. Exit status: 0 verified, 1
    /// mismatch, 3 nothing of this file in the manifest, 4 no known
    /// algorithm in the manifest, 5 manifest unreadable.
    #[arg(long, value_name = "MANIFEST")]
    check: Option<PathBuf>,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// Tensors `gguf_hash.py` leaves out.
const SKIPPED_SUFFIXES: [&str; 3] = [
    ".attention.masked_bias",
    ".attention.bias",
    ".rotary_emb.inv_freq",
];

/// `uuid.uuid5(uuid.NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp')`.
const UUID_NAMESPACE_LLAMA_CPP: [u8; 16] = [
    0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d, 0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5,
];

/// Bytes each hash state consumes per step: small enough to stay in the
/// shared cache while every state reads it, large enough that the
/// per-step synchronisation costs nothing measurable.
const CHUNK: usize = 1 << 20;

/// Below this, a chunk is hashed by every state on the calling thread:
/// waking the pool would cost more than the hashing.
const PARALLEL_MIN: usize = 64 << 10;

enum State {
    Xxh64(Box<Xxh64>),
    Sha1(Sha1),
    Sha256(Sha256),
    Uuid(Sha1),
}

impl State {
    fn new(algo: Algo) -> Self {
        match algo {
            Algo::Xxh64 => State::Xxh64(Box::new(Xxh64::new(0))),
            Algo::Sha1 => State::Sha1(Sha1::new()),
            Algo::Sha256 => State::Sha256(Sha256::new()),
            Algo::Uuid => State::Uuid(Sha1::new_with_prefix(UUID_NAMESPACE_LLAMA_CPP)),
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            State::Xxh64(h) => h.update(data),
            State::Sha1(h) | State::Uuid(h) => h.update(data),
            State::Sha256(h) => h.update(data),
        }
    }

    fn finish(self) -> String {
        match self {
            State::Xxh64(h) => format!("{:016x}", h.digest()),
            State::Sha1(h) => hex(&h.finalize()),
            State::Sha256(h) => hex(&h.finalize()),
            State::Uuid(h) => {
                let digest = h.finalize();
                let mut bytes = [0u8; 16];
                bytes.copy_from_slice(&digest[..16]);
                uuid::Builder::from_sha1_bytes(bytes)
                    .into_uuid()
                    .hyphenated()
                    .to_string()
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Feeds `data` to every state, each on its own thread for large chunks.
fn feed(states: &mut [&mut State], data: &[u8]) {
    for chunk in data.chunks(CHUNK) {
        if chunk.len() < PARALLEL_MIN || states.len() < 2 {
            states.iter_mut().for_each(|s| s.update(chunk));
        } else {
            states.par_iter_mut().for_each(|s| s.update(chunk));
        }
    }
}

/// A manifest: the first hash given for each (algorithm, name).
struct Manifest {
    path: PathBuf,
    entries: HashMap<(String, String), String>,
    algos: Vec<Algo>,
}

/// Where a manifest's entries for this model are: under the name given on
/// the command line, or under the one other model name it holds.
enum ManifestName {
    Given,
    Other(String),
}

#[derive(Clone, Copy, PartialEq)]
enum Verdict {
    NotFound,
    Mismatch,
    Ok,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::NotFound => "Not Found",
            Verdict::Mismatch => "Mismatch",
            Verdict::Ok => "Ok",
        }
    }
}

impl Manifest {
    /// Reads whitespace-separated `ALGO HASH NAME` lines; other lines are
    /// ignored, as llama-gguf-hash ignores them.
    fn read(path: PathBuf) -> std::io::Result<Self> {
        let text = std::fs::read(&path)?;
        let text = String::from_utf8_lossy(&text);
        let mut entries = HashMap::new();
        let mut algos = Vec::new();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let Some(algo) = words.next() else { continue };
            if let Some(a) = Algo::from_name(algo) {
                if !algos.contains(&a) {
                    algos.push(a);
                }
            }
            if let (Some(hash), Some(name)) = (words.next(), words.next()) {
                entries
                    .entry((algo.to_owned(), name.to_owned()))
                    .or_insert_with(|| hash.to_owned());
            }
        }
        Ok(Manifest {
            path,
            entries,
            algos,
        })
    }

    fn verify(&self, algo: Algo, hash: &str, name: &str) -> Verdict {
        match self.entries.get(&(algo.name().to_owned(), name.to_owned())) {
            None => Verdict::NotFound,
            Some(h) if h == hash => Verdict::Ok,
            Some(_) => Verdict::Mismatch,
        }
    }

    /// Under which name to look this model up: the given one when the
    /// manifest mentions it (alone, or as `NAME:TENSOR`), else the only
    /// model the manifest holds, if it holds one (a file renamed or moved
    /// since its manifest was written). A model's name is an entry name
    /// that is no other entry's `MODEL:TENSOR`.
    fn name_for(&self, given: &str) -> ManifestName {
        let names: std::collections::HashSet<&str> =
            self.entries.keys().map(|(_, n)| n.as_str()).collect();
        let tensor_of = format!("{given}:");
        if names
            .iter()
            .any(|n| *n == given || n.starts_with(&tensor_of))
        {
            return ManifestName::Given;
        }
        let is_tensor_line = |n: &str| {
            n.char_indices()
                .any(|(i, c)| c == ':' && names.contains(&n[..i]))
        };
        let mut models = names.iter().filter(|n| !is_tensor_line(n));
        match (models.next(), models.next()) {
            (Some(only), None) => ManifestName::Other((*only).to_owned()),
            _ => ManifestName::Given,
        }
    }
}

/// What the manifest check saw, for the exit status.
#[derive(Default)]
struct Tally {
    layer_found: bool,
    layer_mismatch: bool,
    model_found: bool,
    model_mismatch: bool,
}

impl Tally {
    /// llama-gguf-hash's rule: the whole-model hashes decide when present,
    /// a mismatching tensor fails in any case, and per-tensor hashes alone
    /// are enough when the manifest has no whole-model line.
    fn exit_code(&self) -> (u8, &'static str) {
        if !self.model_found && !self.layer_found {
            return (3, "Manifest Missing Entry");
        }
        if self.layer_mismatch || self.model_mismatch {
            return (1, "Failure");
        }
        (0, "Success")
    }
}

/// Prints one output line, with the manifest verdict when checking.
struct Printer<'m> {
    manifest: Option<&'m Manifest>,
    /// The model's name on the command line, as printed.
    given: String,
    /// The model's name in the manifest, when another.
    other: Option<String>,
    tally: Tally,
}

impl Printer<'_> {
    /// The line of `tensor` (escaped), or of the whole model for `None`.
    fn line(&mut self, algo: Algo, hash: &str, tensor: Option<&str>) -> crate::CliResult {
        let named = |model: &str, t: &str| match tensor {
            Some(_) => format!("{model}:{t}"),
            None => model.to_owned(),
        };
        let shown = crate::text::escape(tensor.unwrap_or_default());
        let name = named(&self.given, &shown);
        let Some(m) = self.manifest else {
            return crate::print(&format!("{:<8}  {hash}  {name}", algo.name()));
        };
        let model = self.other.as_deref().unwrap_or(&self.given);
        let mut verdict = m.verify(algo, hash, &named(model, &shown));
        if verdict == Verdict::NotFound && shown != tensor.unwrap_or_default() {
            // A manifest written by another tool holds the raw name.
            verdict = m.verify(algo, hash, &named(model, tensor.unwrap_or_default()));
        }
        let layer = tensor.is_some();
        let (found, mismatch) = if layer {
            (&mut self.tally.layer_found, &mut self.tally.layer_mismatch)
        } else {
            (&mut self.tally.model_found, &mut self.tally.model_mismatch)
        };
        *found |= verdict != Verdict::NotFound;
        *mismatch |= verdict == Verdict::Mismatch;
        crate::print(&format!(
            "{:<8}  {hash}  {name}  -  {}",
            algo.name(),
            verdict.as_str()
        ))
    }
}

pub fn run(args: Args) -> crate::CliResult {
    let manifest = match &args.check {
        None => None,
        Some(path) => {
            let m = Manifest::read(path.clone()).map_err(|e| {
                crate::message(&format!(
                    "gguf: {}: cannot read manifest: {e}",
                    path.display()
                ));
                crate::Exit(5)
            })?;
            if m.algos.is_empty() {
                crate::message(&format!(
                    "gguf: {}: no known hash algorithm (xxh64, sha1, sha256, uuid)",
                    path.display()
                ));
                return Err(crate::Exit(4).into());
            }
            // Listed strongest first, as llama-gguf-hash lists them.
            let names: Vec<_> = [Algo::Sha256, Algo::Sha1, Algo::Xxh64, Algo::Uuid]
                .into_iter()
                .filter(|a| m.algos.contains(a))
                .map(Algo::name)
                .collect();
            crate::print(&format!(
                "manifest  {}  {}",
                path.display(),
                names.join("  ")
            ))?;
            Some(m)
        }
    };
    let mut algos = args.algo.clone();
    if algos.is_empty() {
        algos = match &manifest {
            // The strongest the manifest holds, as llama-gguf-hash picks.
            Some(m) => [Algo::Sha256, Algo::Sha1, Algo::Xxh64, Algo::Uuid]
                .into_iter()
                .find(|a| m.algos.contains(a))
                .into_iter()
                .collect(),
            None => vec![Algo::Sha1, Algo::Sha256, Algo::Uuid],
        };
    }
    algos.sort();
    algos.dedup();

    let opened = crate::open::open_source(&args.file, &args.source)?;
    // A URL as shown everywhere: no user info, query values replaced.
    let fname = crate::open::shown(&args.file);
    let shown = crate::text::escape(&fname).into_owned();
    let other = match manifest.as_ref().map(|m| m.name_for(&shown)) {
        Some(ManifestName::Other(name)) => Some(name),
        _ => None,
    };
    let mut printer = Printer {
        manifest: manifest.as_ref(),
        given: shown,
        other,
        tally: Tally::default(),
    };
    let mut model: Vec<(Algo, State)> = algos.iter().map(|&a| (a, State::new(a))).collect();
    let layer_algos: Vec<Algo> = if args.no_layer {
        Vec::new()
    } else {
        algos.iter().copied().filter(|&a| a != Algo::Uuid).collect()
    };
    let files = opened.files();
    let tensors: Vec<_> = files
        .iter()
        .enumerate()
        .flat_map(|(k, f)| f.tensors().map(move |t| (k, t)))
        .filter(|(_, t)| !SKIPPED_SUFFIXES.iter().any(|s| t.name().ends_with(s)))
        .collect();
    let total: u64 = tensors.iter().filter_map(|(_, t)| t.byte_size().ok()).sum();
    let bar = crate::progress::Bar::new();
    let mut done = 0u64;
    for (k, t) in &tensors {
        let data = opened
            .tensor_data(*k, t)
            .map_err(|e| format!("{}: {e}", fname))?;
        let mut layer: Vec<(Algo, State)> =
            layer_algos.iter().map(|&a| (a, State::new(a))).collect();
        {
            let mut states: Vec<&mut State> = model
                .iter_mut()
                .chain(layer.iter_mut())
                .map(|(_, s)| s)
                .collect();
            feed(&mut states, &data);
        }
        done += data.len() as u64;
        bar.update(done, total);
        for (algo, state) in layer {
            printer.line(algo, &state.finish(), Some(t.name()))?;
        }
    }
    drop(bar);
    for (algo, state) in model {
        printer.line(algo, &state.finish(), None)?;
    }
    if let Some(m) = &manifest {
        let (code, text) = printer.tally.exit_code();
        let under = match (&printer.other, code) {
            (None, _) => String::new(),
            (Some(other), 0) => format!(
                " (the manifest names this model {other}: the hashes match under that name)"
            ),
            (Some(other), _) => {
                format!(" (the manifest names this model {other}: compared under that name)")
            }
        };
        crate::print(&format!(
            "\nVerification results for {} - {text}{under}",
            m.path.display()
        ))?;
        if code != 0 {
            return Err(crate::Exit(code).into());
        }
    }
    Ok(())
}
