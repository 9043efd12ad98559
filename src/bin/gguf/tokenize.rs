//! `gguf tokenize MODEL`: text to token ids with the model's own tokenizer,
//! as llama.cpp's `llama-tokenize` prints them (same flags, same output).

use std::io::{Read, Write};
use std::path::PathBuf;

use gguf::tokenizer::Tokenizer;
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    /// The model: a path (a vocab-only GGUF, any shard of a split model),
    /// ollama:NAME[:TAG] or a URL (only its header is fetched).
    #[arg(required_unless_present = "model_flag")]
    model: Option<PathBuf>,
    /// The model, as llama-tokenize takes it.
    #[arg(
        short = 'm',
        long = "model",
        value_name = "MODEL",
        conflicts_with = "model"
    )]
    model_flag: Option<PathBuf>,
    /// The text to tokenize.
    #[arg(short, long)]
    prompt: Option<String>,
    /// Read the text from a file, byte for byte (over -p).
    #[arg(short, long, value_name = "FILE")]
    file: Option<PathBuf>,
    /// Read the text from standard input (over -f and -p).
    #[arg(long)]
    stdin: bool,
    /// Print only the ids, as one line `[1, 2, 3]`.
    #[arg(long)]
    ids: bool,
    /// Add no special tokens (by default BOS/EOS are added when the model's
    /// add_bos rule says so, as llama-tokenize does).
    #[arg(long)]
    no_bos: bool,
    /// Do not turn special-token text (`<start_of_turn>`) into its id.
    #[arg(long)]
    no_parse_special: bool,
    /// Print the number of tokens last.
    #[arg(long)]
    show_count: bool,
    /// Process escapes (\n, \r, \t, \', \", \\, \xNN) in the text, as
    /// llama-tokenize does by default.
    #[arg(short = 'e', long, overrides_with = "no_escape")]
    escape: bool,
    /// Take the text as it is.
    #[arg(long, overrides_with = "escape")]
    no_escape: bool,
    /// Print a JSON document: ids, pieces, count, and the tokenizer used.
    #[arg(long, conflicts_with = "ids")]
    json: bool,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// llama.cpp's `string_process_escapes`.
fn process_escapes(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'\\' && i + 1 < input.len() {
            i += 1;
            match input[i] {
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'\'' => out.push(b'\''),
                b'"' => out.push(b'"'),
                b'\\' => out.push(b'\\'),
                b'x' if i + 2 < input.len()
                    && input[i + 1].is_ascii_hexdigit()
                    && input[i + 2].is_ascii_hexdigit() =>
                {
                    let hex = std::str::from_utf8(&input[i + 1..i + 3]).unwrap_or("0");
                    out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                    i += 2;
                }
                c => {
                    out.push(b'\\');
                    out.push(c);
                }
            }
        } else {
            out.push(input[i]);
        }
        i += 1;
    }
    out
}

/// The piece as llama-tokenize shows it between quotes: the text (control
/// characters escaped, as everywhere in this tool's output), or its bytes
/// in hex when they are not UTF-8 alone (a byte token).
fn shown_piece(piece: &[u8]) -> (String, bool) {
    match std::str::from_utf8(piece) {
        Ok(s) => (crate::text::escape(s).into_owned(), true),
        Err(_) => {
            let hex: Vec<String> = piece.iter().map(|b| format!("{b:02x}")).collect();
            (format!("<{}>", hex.join(" ")), false)
        }
    }
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let path = args
        .model
        .as_ref()
        .or(args.model_flag.as_ref())
        .ok_or("no model given")?;
    if !args.stdin && args.file.is_none() && args.prompt.is_none() {
        return Err(crate::usage_error(
            "tokenize",
            "must specify one of: --stdin, --file or --prompt",
        ));
    }
    let escape = !args.no_escape;
    let model = crate::open(path, &args.source)?;
    let tok =
        Tokenizer::from_model(&model).map_err(|e| format!("{}: {e}", crate::open::shown(path)))?;

    let mut text: Vec<u8> = if args.stdin {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| format!("<stdin>: {e}"))?;
        buf
    } else if let Some(f) = &args.file {
        std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?
    } else {
        args.prompt.clone().unwrap_or_default().into_bytes()
    };
    if escape {
        text = process_escapes(&text);
    }
    // Where the text came from, for its messages.
    let text_source = match (&args.file, args.stdin) {
        (_, true) => "<stdin>".to_owned(),
        (Some(f), false) => f.display().to_string(),
        (None, false) => "--prompt".to_owned(),
    };
    let text = String::from_utf8(text).map_err(|e| {
        format!(
            "{text_source}: the text is not valid UTF-8 (byte {} is not): the tokenizer takes \
             text",
            e.utf8_error().valid_up_to()
        )
    })?;

    let add_special = tok.flags().add_bos && !args.no_bos;
    // What the text needs and the vocabulary lacks is about the model.
    let ids = tok
        .encode(&text, add_special, !args.no_parse_special)
        .map_err(|e| format!("{}: {e}", crate::open::shown(path)))?;

    if args.json {
        let pieces: Vec<String> = ids
            .iter()
            .map(|&id| {
                tok.token_to_piece(id, true)
                    .map(|p| String::from_utf8_lossy(&p).into_owned())
            })
            .collect::<Result<_, _>>()?;
        let doc = json!({
            "model": crate::open::shown(path),
            "vocab_type": tok.vocab_type().name(),
            "tokenizer_model": tok.model_name(),
            "pre": tok.pre_name(),
            "add_special": add_special,
            "parse_special": !args.no_parse_special,
            "count": ids.len(),
            "ids": ids,
            "pieces": pieces,
        });
        return crate::json::print_pretty(&doc);
    }

    let mut out = String::new();
    if args.ids {
        let list: Vec<String> = ids.iter().map(u32::to_string).collect();
        out.push_str(&format!("[{}]", list.join(", ")));
    } else {
        for (i, &id) in ids.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let (piece, utf8) = shown_piece(&tok.token_to_piece(id, true)?);
            out.push_str(&format!("{id:6} -> '{piece}'"));
            if !utf8 {
                out.push_str(" (utf-8 decode failure)");
            }
        }
    }
    if args.show_count {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("Total number of tokens: {}", ids.len()));
    }
    if out.is_empty() {
        return Ok(());
    }
    crate::print_with(|w| w.write_all(out.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_llama_cpp() {
        assert_eq!(
            process_escapes(br"a\nb\tc\\d\x41\q\x4"),
            b"a\nb\tc\\dA\\q\\x4"
        );
        assert_eq!(process_escapes(b"end\\"), b"end\\");
    }
}
