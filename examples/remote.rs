//! Reads a model over HTTP without downloading it: the header by range
//! requests, then one tensor by one more range request.
//!
//! ```sh
//! cargo run --example remote                                  # serves the bundled sample itself
//! cargo run --example remote -- https://host/model.gguf       # any URL, hf://, s3://, gs://, az://
//! ```
//!
//! With no argument it starts a minimal HTTP server on 127.0.0.1 that
//! serves `samples/tiny-llama.gguf` with `Range` support, so the example
//! runs anywhere; the library talks to it exactly as to a model hub.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};

use gguf::{Gguf, GgufFile};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = match std::env::args().nth(1) {
        Some(url) => url,
        None => serve(std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/tiny-llama.gguf"
        ))?)?,
    };
    // Through the one door: a URL opens like a path (`Model::open` would
    // open every shard of a split model).
    let file = GgufFile::open(url.as_str())?;
    let header = file.remote_stats().unwrap_or_default();
    println!("{url}");
    println!(
        "  header: {} bytes of {}, in {} range request(s), {} bytes received",
        file.header_len(),
        file.file_len(),
        header.requests,
        header.bytes
    );
    println!(
        "  {} metadata entries, {} tensors, architecture {}",
        file.kv_count(),
        file.tensor_count(),
        file.get_str("general.architecture").unwrap_or("?")
    );
    // The smallest tensor's values, fetched on their own.
    if let Some(t) = file
        .tensors()
        .min_by_key(|t| t.byte_size().unwrap_or(u64::MAX))
    {
        let rows = t.shape().iter().skip(1).product::<u64>();
        let values = t.read_rows_f32(0..rows.min(1))?;
        let shown: Vec<String> = values.iter().take(4).map(|v| format!("{v:.4}")).collect();
        let total = file.remote_stats().unwrap_or_default();
        println!(
            "  {} ({}, {:?}): first values [{}], {} more request(s), {} more bytes",
            t.name(),
            t.ggml_type(),
            t.shape(),
            shown.join(", "),
            total.requests - header.requests,
            total.bytes - header.bytes
        );
    }
    Ok(())
}

/// Serves `body` on an ephemeral port of 127.0.0.1 in a background thread,
/// answering `GET` with `Range: bytes=a-b` by 206 and the asked bytes; the
/// server lives as long as the process.
fn serve(body: Vec<u8>) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/tiny-llama.gguf", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            // One bad request must not stop the server.
            let _ = answer(stream, &body);
        }
    });
    Ok(url)
}

fn answer(stream: TcpStream, body: &[u8]) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut range = None;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(spec) = lower.strip_prefix("range: bytes=") {
            range = spec.trim().split_once('-').map(|(a, b)| {
                let len = body.len() as u64;
                let start = a.parse::<u64>().unwrap_or(0).min(len);
                let end = b.parse::<u64>().map_or(len, |e| (e + 1).min(len));
                (start as usize, end.max(start) as usize)
            });
        }
    }
    let mut out = stream;
    let (status, part, extra) = match range {
        Some((s, e)) => (
            "206 Partial Content",
            &body[s..e],
            format!(
                "Content-Range: bytes {s}-{}/{}\r\n",
                e.saturating_sub(1),
                body.len()
            ),
        ),
        None => ("200 OK", body, String::new()),
    };
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\nETag: \"sample\"\r\n{extra}Connection: close\r\n\r\n",
        part.len()
    )?;
    out.write_all(part)
}
