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
//! Speed and memory: each digest (the whole-model ones, and each
//! algorithm's per-tensor ones) runs on its own thread, fed the same
//! pieces of the data in order through a short queue, so the digests
//! spread over the cores and the wall time is about the total work
//! divided by the cores (or the slowest single digest). The data is read
//! front to back once, a piece at a time; a local model's pieces leave
//! the process's memory as soon as every digest has consumed them, so
//! memory stays at the pieces in flight, not the model's size.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, Sender, SyncSender};
use std::sync::Arc;

use gguf::Gguf;
use gguf::Tensor;

use gguf::Model;
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

/// Bytes of one piece of the data stream: large enough that passing it
/// to every digest thread costs nothing measurable, small enough that the
/// pieces in flight stay a few MiB.
const PIECE: usize = 1 << 20;

/// Pieces queued per digest thread: absorbs the jitter of threads
/// sharing cores without letting any digest run far ahead.
const QUEUE: usize = 8;

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

/// One piece of one tensor's data, shared by every digest thread. When
/// the last thread drops it, a local model's pages of it are released.
struct Piece<'m> {
    /// The tensor's whole data (mapped, or downloaded).
    data: Arc<Cow<'m, [u8]>>,
    range: Range<usize>,
    /// Index of the tensor in the hashing order.
    tensor: usize,
    /// The tensor's last piece (an empty tensor has one, empty).
    last: bool,
    /// The tensor whose mapped pages `range` covers, if local.
    mapped: Option<Tensor<'m>>,
}

impl Piece<'_> {
    fn bytes(&self) -> &[u8] {
        &self.data[self.range.clone()]
    }
}

impl Drop for Piece<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.mapped {
            t.release_pages(self.range.start as u64..self.range.end as u64);
        }
    }
}

/// What one digest thread computes.
enum Lane {
    /// The whole model's digest.
    Model(Algo),
    /// Each tensor's digest, sent back as each tensor ends.
    Layer(usize, Algo),
}

/// A per-tensor digest: (tensor, layer lane, hash).
type LayerDigest = (usize, usize, String);

/// Runs one digest over every piece, in order, until the reader hangs up;
/// returns the whole-model digest (per-tensor ones go to `out`).
fn run_lane(lane: Lane, pieces: Receiver<Arc<Piece<'_>>>, out: Sender<LayerDigest>) -> String {
    match lane {
        Lane::Model(algo) => {
            let mut state = State::new(algo);
            for p in pieces {
                state.update(p.bytes());
            }
            state.finish()
        }
        Lane::Layer(k, algo) => {
            let mut state = State::new(algo);
            for p in pieces {
                state.update(p.bytes());
                if p.last {
                    let done = std::mem::replace(&mut state, State::new(algo));
                    // The reader stops listening only when it failed.
                    let _ = out.send((p.tensor, k, done.finish()));
                }
            }
            String::new()
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
            if let Some(a) = Algo::from_name(algo)
                && !algos.contains(&a)
            {
                algos.push(a);
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

    let opened = crate::open::open_model(&args.file, &args.source)?;
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
    let layer_algos: Vec<Algo> = if args.no_layer {
        Vec::new()
    } else {
        algos.iter().copied().filter(|&a| a != Algo::Uuid).collect()
    };
    let tensors: Vec<_> = opened
        .tensors_with_shard()
        .filter(|(_, t)| !SKIPPED_SUFFIXES.iter().any(|s| t.name().ends_with(s)))
        .collect();
    let bar = crate::progress::Bar::new();
    let job = Job {
        opened: &opened,
        tensors: &tensors,
        model_algos: &algos,
        layer_algos: &layer_algos,
        fname: &fname,
    };
    let model = job.run(&mut printer, &bar);
    drop(bar);
    for (algo, hash) in algos.iter().zip(model?) {
        printer.line(*algo, &hash, None)?;
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

/// The tensors to hash and the digests to compute over them.
struct Job<'j, 'm> {
    opened: &'m Model<'static>,
    tensors: &'j [(usize, Tensor<'m>)],
    model_algos: &'j [Algo],
    layer_algos: &'j [Algo],
    fname: &'j str,
}

impl<'m> Job<'_, 'm> {
    /// Starts one thread per digest, feeds them every tensor's data in
    /// pieces, and prints each tensor's lines as soon as all its digests
    /// are in. Returns the whole-model digests in `model_algos` order; an
    /// error (a tensor's data unreadable, output failing) after printing
    /// the lines of the tensors hashed before it.
    fn run(
        &self,
        printer: &mut Printer<'_>,
        bar: &crate::progress::Bar,
    ) -> crate::CliResult<Vec<String>> {
        std::thread::scope(|scope| {
            let (digest_tx, digests) = std::sync::mpsc::channel();
            let lanes = self.model_algos.iter().map(|&a| Lane::Model(a)).chain(
                self.layer_algos
                    .iter()
                    .enumerate()
                    .map(|(k, &a)| Lane::Layer(k, a)),
            );
            let mut queues = Vec::new();
            let mut workers = Vec::new();
            for lane in lanes {
                let (tx, rx) = sync_channel(QUEUE);
                let out = digest_tx.clone();
                queues.push(tx);
                workers.push(scope.spawn(move || run_lane(lane, rx, out)));
            }
            drop(digest_tx);
            let mut lines = InOrder::new(self.tensors.len(), self.layer_algos.len());
            let fed = self.feed(&queues, bar, || {
                lines.take(&digests);
                lines.print_ready(printer, self)
            });
            // Hanging up ends every digest thread once its queue is empty.
            drop(queues);
            let model: Result<Vec<String>, _> = workers.into_iter().map(|w| w.join()).collect();
            let model = model.map_err(|_| "a digest thread panicked")?;
            lines.take(&digests);
            lines.print_ready(printer, self)?;
            fed?;
            Ok(model.into_iter().take(self.model_algos.len()).collect())
        })
    }

    /// Sends every tensor's data to every queue, piece by piece, calling
    /// `between` after each tensor. A local tensor's data is its mapped
    /// bytes, released piece by piece once every digest has read them.
    fn feed(
        &self,
        queues: &[SyncSender<Arc<Piece<'m>>>],
        bar: &crate::progress::Bar,
        mut between: impl FnMut() -> crate::CliResult,
    ) -> crate::CliResult {
        let local = self.opened.shards().iter().all(|s| s.file().has_data());
        let total: u64 = self
            .tensors
            .iter()
            .filter_map(|(_, t)| t.byte_size().ok())
            .sum();
        let mut done = 0u64;
        for (i, (_, t)) in self.tensors.iter().enumerate() {
            // Borrowed from the map when local, one range read when remote.
            let data = t.read().map_err(|e| format!("{}: {e}", self.fname))?;
            let data = Arc::new(data);
            let len = data.len();
            let mut start = 0;
            loop {
                let end = len.min(start + PIECE);
                let piece = Arc::new(Piece {
                    data: Arc::clone(&data),
                    range: start..end,
                    tensor: i,
                    last: end == len,
                    mapped: local.then_some(*t),
                });
                for q in queues {
                    q.send(Arc::clone(&piece))
                        .map_err(|_| "a digest thread stopped")?;
                }
                if end == len {
                    break;
                }
                start = end;
            }
            done += len as u64;
            bar.update(done, total);
            between()?;
        }
        Ok(())
    }
}

/// Per-tensor digests as they arrive, printed in tensor order once all of
/// a tensor's are in.
struct InOrder {
    /// For each tensor, one slot per per-tensor algorithm.
    digests: Vec<Vec<Option<String>>>,
    next: usize,
}

impl InOrder {
    fn new(tensors: usize, lanes: usize) -> Self {
        InOrder {
            digests: vec![vec![None; lanes]; if lanes == 0 { 0 } else { tensors }],
            next: 0,
        }
    }

    /// Takes every digest already sent.
    fn take(&mut self, from: &Receiver<LayerDigest>) {
        for (tensor, lane, hash) in from.try_iter() {
            if let Some(slot) = self.digests.get_mut(tensor).and_then(|d| d.get_mut(lane)) {
                *slot = Some(hash);
            }
        }
    }

    /// Prints the lines of every tensor, in order, whose digests are all in.
    fn print_ready(&mut self, printer: &mut Printer<'_>, job: &Job<'_, '_>) -> crate::CliResult {
        while let Some(d) = self.digests.get_mut(self.next) {
            if d.iter().any(Option::is_none) {
                break;
            }
            let hashes: Vec<String> = d.iter_mut().filter_map(Option::take).collect();
            let (_, t) = job.tensors[self.next];
            for (algo, hash) in job.layer_algos.iter().zip(hashes) {
                printer.line(*algo, &hash, Some(t.name()))?;
            }
            self.next += 1;
        }
        Ok(())
    }
}
