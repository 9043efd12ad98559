//! Unigram (llama.cpp's `llm_tokenizer_ugm`, T5's tokenizer): the text is
//! normalized by SentencePiece's precompiled character map, then the
//! tokenization with the highest sum of token scores is found by Viterbi
//! over the bytes; a code point no token covers is the unknown token
//! (consecutive ones merged into one).
//!
//! llama.cpp's quirks are kept: the user-defined-token check at each
//! normalization step takes the longest prefix that is a path in their
//! trie (not necessarily a whole token), and passes it through
//! unnormalized, even when that cuts a code point (whose remaining bytes
//! then become U+FFFD).

use rustc_hash::FxHashMap;

use crate::error::{Error, Result, TokenizerError};

use super::attr::TokenAttr;
use super::{TokenData, Tokenizer};

/// The score llama.cpp gives an unknown code point, below the lowest
/// normal token's.
const UNKNOWN_PENALTY: f32 = 10.0;

/// A byte trie: node 0 is the root.
#[derive(Default)]
struct Trie {
    children: FxHashMap<(u32, u8), u32>,
    /// Each node's token id, `u32::MAX` for none.
    values: Vec<u32>,
}

impl Trie {
    fn new() -> Trie {
        Trie {
            children: FxHashMap::default(),
            values: vec![u32::MAX],
        }
    }

    /// Inserts `key`; a later insert of the same key replaces the value.
    fn insert(&mut self, key: &[u8], value: u32) {
        let mut node = 0u32;
        for &b in key {
            let next = self.values.len() as u32;
            node = *self.children.entry((node, b)).or_insert_with(|| {
                self.values.push(u32::MAX);
                next
            });
        }
        self.values[node as usize] = value;
    }

    fn child(&self, node: u32, b: u8) -> Option<u32> {
        self.children.get(&(node, b)).copied()
    }

    fn value(&self, node: u32) -> Option<u32> {
        self.values
            .get(node as usize)
            .copied()
            .filter(|&v| v != u32::MAX)
    }

    /// How many bytes of `key` follow a path from the root (whether or not
    /// a key ends there), as llama.cpp's `naive_trie::get_longest_prefix`.
    fn path_len(&self, key: &[u8]) -> usize {
        let mut node = 0u32;
        for (i, &b) in key.iter().enumerate() {
            match self.child(node, b) {
                Some(n) => node = n,
                None => return i,
            }
        }
        key.len()
    }
}

/// SentencePiece's precompiled character map: an XOR-compressed compact
/// double array over input bytes whose leaves index NUL-terminated
/// replacement strings.
struct Charsmap {
    xcda: Vec<u32>,
    replacements: Vec<u8>,
}

fn charsmap_error(reason: impl Into<String>) -> Error {
    TokenizerError::BadKey {
        key: KEY_CHARSMAP.into(),
        reason: reason.into(),
    }
    .into()
}

pub(crate) const KEY_CHARSMAP: &str = "tokenizer.ggml.precompiled_charsmap";

impl Charsmap {
    /// Parses the blob: a little-endian u32 byte length of the array, the
    /// array (little-endian u32 entries), then the replacement strings.
    fn parse(blob: &[u8]) -> Result<Charsmap> {
        let Some(head) = blob.get(..4) else {
            return Err(charsmap_error(format!(
                "has {} bytes, too few for its 4-byte array size",
                blob.len()
            )));
        };
        let size = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        // llama.cpp also refuses a map with no replacement bytes at all.
        if size.checked_add(4).is_none_or(|end| end >= blob.len()) {
            return Err(charsmap_error(format!(
                "declares a {size}-byte array in {} bytes",
                blob.len()
            )));
        }
        let xcda = blob[4..4 + size]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Charsmap {
            xcda,
            replacements: blob[4 + size..].to_vec(),
        })
    }

    fn node(&self, index: u32) -> Result<u32> {
        self.xcda.get(index as usize).copied().ok_or_else(|| {
            charsmap_error(format!(
                "sends the lookup to entry {index} of its {}-entry array",
                self.xcda.len()
            ))
        })
    }

    fn base(&self, index: u32) -> Result<u32> {
        let n = self.node(index)?;
        Ok((n >> 10) << ((n & (1 << 9)) >> 6))
    }

    /// The longest prefix of `input` the map replaces: (bytes consumed,
    /// replacement), or `None`.
    fn longest_match(&self, input: &[u8]) -> Result<Option<(usize, &[u8])>> {
        if self.xcda.is_empty() {
            return Ok(None);
        }
        let mut found = None;
        let mut index = self.base(0)?;
        for (i, &c) in input.iter().enumerate() {
            if c == 0 {
                break;
            }
            index ^= u32::from(c);
            let packed = self.node(index)?;
            // The check byte, with bit 31 kept so that value entries never
            // match.
            if packed & ((1 << 31) | 0xff) != u32::from(c) {
                break;
            }
            let leaf = (packed >> 8) & 1 == 1;
            index ^= self.base(index)?;
            if leaf {
                found = Some((i + 1, self.node(index)? & ((1 << 31) - 1)));
            }
        }
        let Some((len, offset)) = found else {
            return Ok(None);
        };
        let rest = self.replacements.get(offset as usize..).ok_or_else(|| {
            charsmap_error(format!(
                "points at replacement byte {offset} of {}",
                self.replacements.len()
            ))
        })?;
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| {
            charsmap_error(format!("has an unterminated replacement at {offset}"))
        })?;
        Ok(Some((len, &rest[..end])))
    }
}

/// What a Unigram vocabulary needs besides the token list.
pub(crate) struct Ugm {
    charsmap: Option<Charsmap>,
    /// Normal, user-defined and unused tokens, by text.
    tokens: Trie,
    /// User-defined tokens, by text.
    user_defined: Trie,
    unknown_score: f32,
}

impl Ugm {
    /// Built from the tokens' attributes as read from `token_type` (before
    /// llama.cpp's fixes by text, as llama.cpp builds it).
    pub(crate) fn new(tokens: &[TokenData], charsmap: Option<&[u8]>) -> Result<Ugm> {
        let charsmap = charsmap.map(Charsmap::parse).transpose()?;
        let mut trie = Trie::new();
        let mut user_defined = Trie::new();
        let mut min_score = f32::MAX;
        let matched =
            TokenAttr(TokenAttr::NORMAL.0 | TokenAttr::USER_DEFINED.0 | TokenAttr::UNUSED.0);
        for (id, t) in tokens.iter().enumerate() {
            // `std::min(min, score)`: a NaN score leaves the minimum.
            if t.attr.has(TokenAttr::NORMAL) && t.score < min_score {
                min_score = t.score;
            }
            if t.attr.has(matched) {
                trie.insert(t.text.as_bytes(), id as u32);
            }
            if t.attr.has(TokenAttr::USER_DEFINED) {
                user_defined.insert(t.text.as_bytes(), 0);
            }
        }
        Ok(Ugm {
            charsmap,
            tokens: trie,
            user_defined,
            unknown_score: min_score - UNKNOWN_PENALTY,
        })
    }
}

/// The length of the UTF-8 sequence a lead byte starts, as llama.cpp's
/// `unicode_len_utf8` reads it (1 for continuation bytes).
fn utf8_len(b: u8) -> usize {
    match b >> 4 {
        0xC | 0xD => 2,
        0xE => 3,
        0xF => 4,
        _ => 1,
    }
}

/// The length of the code point at the start of `input` if its bytes have
/// the shape llama.cpp's `unicode_cpt_from_utf8` accepts, else `None`.
fn valid_cpt_len(input: &[u8]) -> Option<usize> {
    let b0 = *input.first()?;
    let n = match b0 {
        _ if b0 & 0x80 == 0 => return Some(1),
        _ if b0 & 0x40 == 0 => return None,
        _ if b0 & 0x20 == 0 => 2,
        _ if b0 & 0x10 == 0 => 3,
        _ if b0 & 0x08 == 0 => 4,
        _ => return None,
    };
    let tail = input.get(1..n)?;
    tail.iter().all(|&b| b & 0xC0 == 0x80).then_some(n)
}

const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// One normalization step at the start of `input`: (replacement, bytes
/// consumed).
fn normalize_prefix<'a>(ugm: &'a Ugm, input: &'a [u8]) -> Result<(&'a [u8], usize)> {
    let user = ugm.user_defined.path_len(input);
    if user > 0 {
        return Ok((&input[..user], user));
    }
    if let Some(map) = &ugm.charsmap
        && let Some((len, replacement)) = map.longest_match(input)?
    {
        return Ok((replacement, len));
    }
    Ok(match valid_cpt_len(input) {
        Some(n) => (&input[..n], n),
        None => (REPLACEMENT, 1),
    })
}

/// llama.cpp's `normalize`: the character map, then spaces escaped as
/// `▁`, a space before the text (`add_space_prefix`) and, with
/// `remove_extra_whitespaces`, runs of spaces made one space before each
/// word (none at the ends).
fn normalize(tok: &Tokenizer, ugm: &Ugm, input: &[u8]) -> Result<Vec<u8>> {
    let space: &[u8] = if tok.flags.escape_whitespaces {
        "\u{2581}".as_bytes()
    } else {
        b" "
    };
    let prepend = tok.flags.add_space_prefix;
    let merge = tok.flags.remove_extra_whitespaces;
    let mut out = Vec::with_capacity(input.len() * 3);
    let mut space_prepended = false;
    let mut in_word = false;
    let mut at = 0;
    while at < input.len() {
        let (piece, consumed) = normalize_prefix(ugm, &input[at..])?;
        for &c in piece {
            if c != b' ' {
                if !in_word {
                    in_word = true;
                    if (prepend && !space_prepended) || merge {
                        out.extend_from_slice(space);
                        space_prepended = true;
                    }
                }
                out.push(c);
            } else {
                in_word = false;
                if !merge {
                    out.extend_from_slice(space);
                }
            }
        }
        at += consumed;
    }
    Ok(out)
}

/// The best tokenization ending at one byte offset (16 bytes: one per
/// byte of normalized text).
#[derive(Clone, Copy)]
struct Best {
    /// The last token, [`NO_TOKEN`] for the unknown token when the
    /// vocabulary has none.
    token: u32,
    start: u32,
    score: f64,
}

const NO_TOKEN: u32 = u32::MAX;

/// Tokenizes `text` onto `out`.
pub(crate) fn tokenize(tok: &Tokenizer, ugm: &Ugm, text: &str, out: &mut Vec<u32>) -> Result<()> {
    let text = normalize(tok, ugm, text.as_bytes())?;
    let n = text.len();
    if n == 0 {
        return Ok(());
    }
    if n >= u32::MAX as usize {
        return Err(TokenizerError::PieceTooLong {
            len: n,
            max: u32::MAX as usize - 1,
        }
        .into());
    }
    let unk = tok.specials.unk;
    let unk_token = unk.unwrap_or(NO_TOKEN);
    let mut best = vec![
        Best {
            token: unk_token,
            start: 0,
            score: f64::MIN,
        };
        n + 1
    ];
    best[0].score = 0.0;
    let mut pos = 0;
    while pos < n {
        let cpt_len = utf8_len(text[pos]).min(n - pos);
        let here = best[pos].score;
        let mut whole_cpt_token = false;
        let mut node = ugm.tokens.child(0, text[pos]);
        let mut end = pos + 1;
        while let Some(nd) = node {
            if let Some(id) = ugm.tokens.value(nd) {
                if end - pos == cpt_len {
                    whole_cpt_token = true;
                }
                let data = &tok.tokens[id as usize];
                // User-defined tokens score 0, above every normal token
                // (whose scores are log probabilities).
                let score = if data.attr.has(TokenAttr::USER_DEFINED) {
                    0.0
                } else {
                    f64::from(data.score)
                };
                let challenger = here + score;
                if challenger > best[end].score {
                    best[end] = Best {
                        token: id,
                        start: pos as u32,
                        score: challenger,
                    };
                }
            }
            if end >= n {
                break;
            }
            node = ugm.tokens.child(nd, text[end]);
            end += 1;
        }
        if !whole_cpt_token {
            let challenger = here + f64::from(ugm.unknown_score);
            let end = pos + cpt_len;
            if challenger > best[end].score {
                best[end] = Best {
                    token: unk_token,
                    start: pos as u32,
                    score: challenger,
                };
            }
        }
        pos += cpt_len;
    }

    let first = out.len();
    let mut prev_unknown = false;
    let mut at = n;
    loop {
        let b = best[at];
        let unknown = b.token == unk_token;
        if !(prev_unknown && unknown) {
            out.push(tok.required((b.token != NO_TOKEN).then_some(b.token), "unknown token")?);
        }
        if b.start == 0 {
            break;
        }
        prev_unknown = unknown;
        at = b.start as usize;
    }
    out[first..].reverse();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trie_path_len_is_any_path_not_only_keys() {
        let mut t = Trie::new();
        t.insert(b"abc", 0);
        assert_eq!(t.path_len(b"abx"), 2);
        assert_eq!(t.path_len(b"abcd"), 3);
        assert_eq!(t.path_len(b"x"), 0);
        assert_eq!(t.value(t.child(0, b'a').unwrap()), None);
    }

    #[test]
    fn trie_later_insert_wins() {
        let mut t = Trie::new();
        t.insert(b"a", 1);
        t.insert(b"a", 7);
        assert_eq!(t.value(t.child(0, b'a').unwrap()), Some(7));
    }

    #[test]
    fn code_point_shapes_as_llama_cpp_reads_them() {
        assert_eq!(valid_cpt_len(b"a"), Some(1));
        assert_eq!(valid_cpt_len("é".as_bytes()), Some(2));
        assert_eq!(valid_cpt_len(&[0x80]), None);
        assert_eq!(valid_cpt_len(&[0xE2, 0x96]), None);
        assert_eq!(valid_cpt_len(&[0xF8, 0x80, 0x80, 0x80]), None);
        assert_eq!(utf8_len(0x80), 1);
        assert_eq!(utf8_len(0xF9), 4);
    }

    #[test]
    fn charsmap_bounds_are_errors() {
        assert!(Charsmap::parse(&[1, 0]).is_err());
        // The declared array leaves no replacement bytes.
        assert!(Charsmap::parse(&[4, 0, 0, 0, 1, 2, 3, 4]).is_err());
        assert!(Charsmap::parse(&[0xFF, 0xFF, 0xFF, 0xFF, 0]).is_err());
        // A root whose base points past the array.
        let map = Charsmap::parse(&[4, 0, 0, 0, 0, 0xFC, 0xFF, 0xFF, 0]).unwrap();
        assert!(map.longest_match(b"a").is_err());
    }
}
