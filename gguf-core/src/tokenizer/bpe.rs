//! Byte-level BPE (llama.cpp's `llm_tokenizer_bpe_session`): split the text
//! into words with the pre-tokenizer, then in each word merge the adjacent
//! pair of lowest merge rank (leftmost first on ties) until none is left.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::merge::{merge, push_chars, Symbol};
use super::pre::Family;
use super::unicode::byte_to_char;
use super::Tokenizer;

/// Splits `text` into the pre-tokenizer's words, byte-encoded when the
/// vocabulary is GPT-2 byte-level.
pub(crate) fn words(tok: &Tokenizer, text: &str) -> Vec<String> {
    let cpts: Vec<u32> = text.chars().map(u32::from).collect();
    let mut offsets = vec![cpts.len()];
    for step in &tok.steps {
        offsets = step.split(&cpts, &offsets);
    }
    let mut words = Vec::with_capacity(offsets.len());
    let mut chars = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()));
    let mut start_byte = chars.next().unwrap_or(0);
    for len in offsets {
        // `len` code points from `start_byte`.
        let mut end_byte = start_byte;
        for _ in 0..len {
            end_byte = chars.next().unwrap_or(text.len());
        }
        let word = &text[start_byte..end_byte];
        words.push(if tok.byte_encode {
            word.bytes().map(byte_to_char).collect()
        } else {
            word.to_owned()
        });
        start_byte = end_byte;
    }
    words
}

/// Tokenizes `text` onto `out`.
pub(crate) fn tokenize(tok: &Tokenizer, text: &str, out: &mut Vec<u32>) {
    let mut key = String::new();
    let mut symbols: Vec<Symbol> = Vec::new();
    let mut queue = BinaryHeap::new();
    for word in words(tok, text) {
        symbols.clear();
        let bytes = word.as_bytes();
        let whole = (tok.flags.ignore_merges && tok.token_id(&word).is_some())
            || (tok.family == Some(Family::Gemma4)
                && bytes.iter().all(|&b| b == b'\n')
                && tok.token_id(&word).is_some());
        if whole {
            symbols.push(Symbol {
                start: 0,
                len: bytes.len(),
                prev: -1,
                next: -1,
            });
        } else {
            push_chars(bytes, &mut symbols);
        }
        // The lower rank merges first.
        merge(&mut symbols, &mut queue, |l, r| {
            key.clear();
            key.push_str(&word[l.start..l.start + l.len]);
            key.push(' ');
            key.push_str(&word[r.start..r.start + r.len]);
            tok.merges.get(key.as_str()).map(|&rank| Reverse(rank))
        });
        for s in symbols.iter().filter(|s| s.len > 0) {
            let piece = &word[s.start..s.start + s.len];
            if let Some(id) = tok.token_id(piece) {
                out.push(id);
                continue;
            }
            // Not a token: its bytes, each as a token if there is one
            // (GPT-2 vocabularies: the byte as text, which only ASCII can
            // be; raw UTF-8 ones: `<0xXX>`), silently dropped otherwise.
            for &b in piece.as_bytes() {
                let id = if tok.byte_encode {
                    if b.is_ascii() {
                        tok.token_id(std::str::from_utf8(&[b]).unwrap_or(""))
                    } else {
                        None
                    }
                } else {
                    tok.token_id(&format!("<0x{b:02X}>"))
                };
                out.extend(id);
            }
        }
    }
}
