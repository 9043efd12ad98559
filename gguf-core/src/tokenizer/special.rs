//! Splitting text at special tokens before tokenizing it (llama.cpp's
//! `tokenizer_st_partition`): each special token in turn, longest first,
//! cuts every text fragment at each of its occurrences.

use super::attr::TokenAttr;
use super::Tokenizer;

/// A piece of the input: text still to tokenize, or a special token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fragment<'a> {
    Text(&'a str),
    Token(u32),
}

/// C's `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// Texts shorter than this are searched for each special token directly;
/// longer ones first find which special tokens occur at all.
const PREFILTER_MIN_LEN: usize = 4096;

/// The fragments of `text`. Control and unknown tokens are matched only
/// with `parse_special`; user-defined ones always.
pub(crate) fn partition<'a>(
    tok: &Tokenizer,
    text: &'a str,
    parse_special: bool,
) -> Vec<Fragment<'a>> {
    let mut frags = Vec::new();
    if text.is_empty() {
        return frags;
    }
    frags.push(Fragment::Text(text));
    let candidates = candidates(tok, text, parse_special);
    for id in candidates {
        let data = &tok.tokens[id as usize];
        let needle = data.text.as_str();
        let mut next = Vec::with_capacity(frags.len() + 2);
        for f in frags {
            let Fragment::Text(mut rest) = f else {
                next.push(f);
                continue;
            };
            loop {
                let Some(at) = rest.find(needle) else {
                    if !rest.is_empty() {
                        next.push(Fragment::Text(rest));
                    }
                    break;
                };
                let mut left = &rest[..at];
                if data.attr.has(TokenAttr::LSTRIP) {
                    left = left.trim_end_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
                }
                if !left.is_empty() {
                    next.push(Fragment::Text(left));
                }
                next.push(Fragment::Token(id));
                let mut right = &rest[at + needle.len()..];
                if data.attr.has(TokenAttr::RSTRIP) {
                    right = right.trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
                }
                rest = right;
            }
        }
        frags = next;
    }
    frags
}

/// The special tokens to try, in llama.cpp's order; for a long text only
/// those that occur in it (the others cannot cut anything).
fn candidates(tok: &Tokenizer, text: &str, parse_special: bool) -> Vec<u32> {
    let skip = TokenAttr(TokenAttr::CONTROL.0 | TokenAttr::UNKNOWN.0);
    let wanted: Vec<u32> = tok
        .special_cache
        .iter()
        .copied()
        .filter(|&id| parse_special || !tok.tokens[id as usize].attr.has(skip))
        .collect();
    if text.len() < PREFILTER_MIN_LEN || wanted.is_empty() {
        return wanted;
    }
    let Ok(ac) = aho_corasick::AhoCorasick::new(
        wanted
            .iter()
            .map(|&id| tok.tokens[id as usize].text.as_bytes()),
    ) else {
        return wanted;
    };
    let mut present = vec![false; wanted.len()];
    for m in ac.find_overlapping_iter(text) {
        present[m.pattern().as_usize()] = true;
    }
    wanted
        .into_iter()
        .zip(present)
        .filter_map(|(id, p)| p.then_some(id))
        .collect()
}
