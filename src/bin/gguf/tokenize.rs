//! `gguf tokenize MODEL`: text to token ids with the model's own tokenizer,
//! as llama.cpp's `llama-tokenize` prints them (same flags, same output).

use std::io::{Read, Write};
use std::path::PathBuf;

use gguf::tokenizer::Tokenizer;

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

/// llama.cpp's `string_process_escapes`, in place: the text never grows,
/// and a long input is not held twice.
fn process_escapes(buf: &mut Vec<u8>) {
    let (mut i, mut o) = (0, 0);
    let n = buf.len();
    while i < n {
        if buf[i] == b'\\' && i + 1 < n {
            i += 1;
            let c = buf[i];
            let byte = match c {
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'\'' => b'\'',
                b'"' => b'"',
                b'\\' => b'\\',
                b'x' if i + 2 < n
                    && buf[i + 1].is_ascii_hexdigit()
                    && buf[i + 2].is_ascii_hexdigit() =>
                {
                    let hex = |d: u8| (d as char).to_digit(16).unwrap_or(0) as u8;
                    let v = hex(buf[i + 1]) * 16 + hex(buf[i + 2]);
                    i += 2;
                    v
                }
                _ => {
                    // Kept as written: two bytes for the two read.
                    buf[o] = b'\\';
                    o += 1;
                    c
                }
            };
            buf[o] = byte;
        } else {
            buf[o] = buf[i];
        }
        o += 1;
        i += 1;
    }
    buf.truncate(o);
}

/// `--json`'s document, written as it is serialized: the pieces of a long
/// text are never all held as strings.
struct JsonDoc<'a> {
    model: String,
    tok: &'a Tokenizer,
    add_special: bool,
    parse_special: bool,
    ids: &'a [u32],
}

/// The pieces of `ids`, one string each, made as they are written.
struct Pieces<'a>(&'a Tokenizer, &'a [u32]);

impl serde::Serialize for Pieces<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(Some(self.1.len()))?;
        for &id in self.1 {
            let piece = self.0.token_to_piece(id, true).map_err(S::Error::custom)?;
            seq.serialize_element(&*String::from_utf8_lossy(&piece))?;
        }
        seq.end()
    }
}

impl serde::Serialize for JsonDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(9))?;
        map.serialize_entry("model", &self.model)?;
        map.serialize_entry("vocab_type", self.tok.vocab_type().name())?;
        map.serialize_entry("tokenizer_model", self.tok.model_name())?;
        map.serialize_entry("pre", &self.tok.pre_name())?;
        map.serialize_entry("add_special", &self.add_special)?;
        map.serialize_entry("parse_special", &self.parse_special)?;
        map.serialize_entry("count", &self.ids.len())?;
        map.serialize_entry("ids", self.ids)?;
        map.serialize_entry("pieces", &Pieces(self.tok, self.ids))?;
        map.end()
    }
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
        process_escapes(&mut text);
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
        return crate::json::print_pretty(&JsonDoc {
            model: crate::open::shown(path),
            tok: &tok,
            add_special,
            parse_special: !args.no_parse_special,
            ids: &ids,
        });
    }

    if ids.is_empty() && !args.show_count && !args.ids {
        return Ok(());
    }
    // Written as made, a line at a time, not built as one string first.
    crate::print_with(|w| {
        let mut w = std::io::BufWriter::with_capacity(64 << 10, w);
        if args.ids {
            w.write_all(b"[")?;
            for (i, id) in ids.iter().enumerate() {
                if i > 0 {
                    w.write_all(b", ")?;
                }
                write!(w, "{id}")?;
            }
            w.write_all(b"]")?;
        } else {
            for (i, &id) in ids.iter().enumerate() {
                if i > 0 {
                    w.write_all(b"\n")?;
                }
                let piece = tok
                    .token_to_piece(id, true)
                    .map_err(std::io::Error::other)?;
                let (piece, utf8) = shown_piece(&piece);
                write!(w, "{id:6} -> '{piece}'")?;
                if !utf8 {
                    w.write_all(b" (utf-8 decode failure)")?;
                }
            }
        }
        if args.show_count {
            if args.ids || !ids.is_empty() {
                w.write_all(b"\n")?;
            }
            write!(w, "Total number of tokens: {}", ids.len())?;
        }
        w.flush()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_llama_cpp() {
        let escaped = |s: &[u8]| {
            let mut v = s.to_vec();
            process_escapes(&mut v);
            v
        };
        assert_eq!(escaped(br"a\nb\tc\\d\x41\q\x4"), b"a\nb\tc\\dA\\q\\x4");
        assert_eq!(escaped(b"end\\"), b"end\\");
        assert_eq!(escaped(br"\xzz\x7e"), b"\\xzz~");
    }
}
