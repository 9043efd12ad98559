//! Opening a model named on the command line: a local path, or a URL or
//! object-store path (`https://`, `hf://`, `s3://`, `gs://`, `az://`).

use std::path::Path;
use std::time::Instant;

use std::path::PathBuf;

use gguf::remote::{is_remote, open_shards, shard_file_names, RemoteFile, RemoteOptions};
use gguf::{GgufFile, Model};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The model at `name`, any shard of a split model included: local files
/// memory-mapped; remote files read at the cost of their headers, plus the
/// data of `tensor` when one is named (one more range read). With
/// `verbose`, how a remote file was fetched goes to stderr.
pub fn open_model(name: &Path, tensor: Option<&str>, verbose: bool) -> Result<Model<'static>> {
    let shown = name.display();
    let url = name.to_str().filter(|s| is_remote(s));
    let Some(url) = url else {
        return Ok(Model::open(name).map_err(|e| format!("{shown}: {e}"))?);
    };
    let file_name = url.rsplit('/').next().unwrap_or(url);
    if shard_file_names(file_name).is_none() {
        let file = open(name, tensor, verbose)?;
        return Ok(Model::from_files(vec![(PathBuf::from(url), file)])?);
    }
    // A shard of a split model: every shard's header, fetched concurrently.
    let started = Instant::now();
    let files = open_shards(url, &RemoteOptions::default())?;
    let (dir, _) = url.rsplit_once('/').unwrap_or(("", url));
    let names = shard_file_names(file_name).unwrap_or_default();
    let urls: Vec<String> = names.iter().map(|n| format!("{dir}/{n}")).collect();
    if verbose {
        eprintln!(
            "{url}: {} shard headers in {:.1} ms",
            files.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    let mut shards: Vec<(PathBuf, GgufFile<'static>)> =
        urls.iter().map(PathBuf::from).zip(files).collect();
    // The named tensor's data: one more range read, from its own shard.
    let holder = tensor.and_then(|t| shards.iter().position(|(_, f)| f.tensor(t).is_ok()));
    if let (Some(k), Some(url)) = (holder, holder.and_then(|k| urls.get(k))) {
        shards[k].1 = open(Path::new(url), tensor, verbose)?;
    }
    Ok(Model::from_files(shards)?)
}

/// The file at `name`: memory-mapped when local; when remote, its header
/// region, plus the data of `tensor` when one is named (one more range
/// read). With `verbose`, how a remote file was fetched goes to stderr.
pub fn open(name: &Path, tensor: Option<&str>, verbose: bool) -> Result<GgufFile<'static>> {
    let shown = name.display();
    let remote_url = name.to_str().filter(|s| is_remote(s));
    let Some(url) = remote_url else {
        return Ok(GgufFile::open(name).map_err(|e| format!("{shown}: {e}"))?);
    };
    let started = Instant::now();
    // Errors name the URL themselves (without credentials).
    let remote = RemoteFile::open(url)?;
    let header_time = started.elapsed();
    let header_stats = remote.stats();
    // A tensor the file lacks is reported by the caller, as for a local file.
    let tensor = tensor.filter(|t| remote.file().tensor(t).is_ok());
    let with_tensor = tensor.map(|t| remote.with_tensor(t)).transpose()?;
    if verbose {
        let s = remote.stats();
        eprintln!(
            "{}: header {} bytes: {} range requests{}, {} bytes in {:.1} ms",
            remote.url(),
            remote.file().header_len(),
            header_stats.requests,
            match header_stats.head_requests {
                0 => String::new(),
                n => format!(" + {n} HEAD"),
            },
            header_stats.bytes,
            header_time.as_secs_f64() * 1e3,
        );
        if tensor.is_some() {
            eprintln!(
                "{}: tensor data: {} range request, {} bytes",
                remote.url(),
                s.requests - header_stats.requests,
                s.bytes - header_stats.bytes,
            );
        }
        eprintln!(
            "{}: total {} requests, {} bytes, {:.1} ms{}",
            remote.url(),
            s.requests + s.head_requests,
            s.bytes,
            started.elapsed().as_secs_f64() * 1e3,
            remote
                .etag()
                .map(|e| format!(", ETag {e}"))
                .unwrap_or_default(),
        );
    }
    Ok(with_tensor.unwrap_or_else(|| remote.into_file()))
}
