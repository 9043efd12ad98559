//! Byte-level BPE (llama.cpp's `llm_tokenizer_bpe_session`): split the text
//! into words with the pre-tokenizer, then in each word merge the adjacent
//! pair of lowest merge rank (leftmost first on ties) until none is left.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{Result, TokenizerError};

use super::merge::{merge, push_chars, Symbol, MAX_WORD, NONE};
use super::pre::Family;
use super::unicode::byte_to_char;
use super::Tokenizer;

/// The pre-tokenizer's words of `text`, as lengths in code points.
fn word_lengths(tok: &Tokenizer, text: &str) -> Vec<usize> {
    let cpts: Vec<u32> = text.chars().map(u32::from).collect();
    let mut offsets = vec![cpts.len()];
    for step in &tok.steps {
        offsets = step.split(&cpts, &offsets);
    }
    offsets
}

/// Tokenizes `text` onto `out`, one word at a time (the words are never
/// all held as text at once).
pub(crate) fn tokenize(tok: &Tokenizer, text: &str, out: &mut Vec<u32>) -> Result<()> {
    let lengths = word_lengths(tok, text);
    let mut key = String::new();
    let mut word = String::new();
    let mut symbols: Vec<Symbol> = Vec::new();
    let mut queue = BinaryHeap::new();
    let mut chars = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()));
    let mut start_byte = chars.next().unwrap_or(0);
    for len in lengths {
        // `len` code points from `start_byte`.
        let mut end_byte = start_byte;
        for _ in 0..len {
            end_byte = chars.next().unwrap_or(text.len());
        }
        let raw = &text[start_byte..end_byte];
        start_byte = end_byte;
        word.clear();
        if tok.byte_encode {
            word.extend(raw.bytes().map(byte_to_char));
        } else {
            word.push_str(raw);
        }
        if word.len() > MAX_WORD {
            return Err(TokenizerError::PieceTooLong {
                len: word.len(),
                max: MAX_WORD,
            }
            .into());
        }
        let word = word.as_str();
        symbols.clear();
        let bytes = word.as_bytes();
        let whole = (tok.flags.ignore_merges && tok.token_id(word).is_some())
            || (tok.family == Some(Family::Gemma4)
                && bytes.iter().all(|&b| b == b'\n')
                && tok.token_id(word).is_some());
        if whole {
            symbols.push(Symbol {
                start: 0,
                len: bytes.len() as u32,
                prev: NONE,
                next: NONE,
            });
        } else {
            push_chars(bytes, &mut symbols);
        }
        // The lower rank merges first.
        merge(&mut symbols, &mut queue, |l, r| {
            key.clear();
            key.push_str(&word[l.range()]);
            key.push(' ');
            key.push_str(&word[r.range()]);
            tok.merges.get(key.as_str()).map(|&rank| Reverse(rank))
        });
        for s in symbols.iter().filter(|s| s.len > 0) {
            let piece = &word[s.range()];
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
    Ok(())
}
