//! `gguf get FILE KEY [--json]`: one metadata value, printed for scripts.

use std::path::PathBuf;

use gguf::{Gguf, Model, Value};

use crate::json;

#[derive(clap::Args)]
pub struct Args {
    /// The model: a path (any shard of a split model), ollama:NAME[:TAG]
    /// or a URL (only its header is fetched).
    file: PathBuf,
    /// The metadata key, e.g. `general.architecture`.
    key: String,
    /// Print the value as JSON (strings quoted and escaped).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// Prints the value raw: a string as is (no quotes, no escaping: its
/// control characters reach the terminal, unlike in every other command's
/// text output), a number as its literal, a bool as `true`/`false`, an
/// array as JSON.
/// A missing key is an error (exit status 1), so `gguf get f k || ...`
/// works in scripts.
pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let file = crate::open(&args.file, &args.source)?;
    let value = file.value(&args.key).ok_or_else(|| missing(&file, &args))?;
    let text = match (&value, args.json) {
        (_, true) => json::value(&value).to_string(),
        (Value::String(s), false) => (*s).to_owned(),
        (Value::Array(_), false) => json::value(&value).to_string(),
        (other, false) => other.to_string(),
    };
    crate::print_raw(&text)
}

/// "no key K", with the keys sharing its first dotted part as hints.
fn missing(file: &Model<'_>, args: &Args) -> Box<dyn std::error::Error> {
    let prefix = args.key.split('.').next().unwrap_or_default();
    let near: Vec<&str> = file
        .keys()
        .filter(|k| k.split('.').next() == Some(prefix))
        .take(8)
        .collect();
    let hint = if near.is_empty() {
        String::new()
    } else {
        format!(" (keys starting with {prefix:?}: {})", near.join(", "))
    };
    format!(
        "{}: no metadata key {:?}{hint}",
        crate::open::shown(&args.file),
        args.key
    )
    .into()
}
