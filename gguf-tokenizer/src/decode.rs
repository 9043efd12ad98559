//! Token ids back to text: llama.cpp's `token_to_piece` and
//! `llama_detokenize`, with its space clean-up.

use std::borrow::Cow;

use crate::error::{Result, TokenizerError};

use super::attr::{TokenAttr, VocabType};
use super::unicode::char_to_byte;
use super::Tokenizer;

impl Tokenizer {
    /// The bytes a token stands for, as `llama_token_to_piece(vocab, id,
    /// buf, len, lstrip = 0, special)` writes them. Control and unknown
    /// tokens give nothing unless `special`. A byte token gives its byte,
    /// so a piece need not be valid UTF-8 alone.
    ///
    /// ```
    /// # fn main() -> gguf_tokenizer::Result<()> {
    /// # let mut b = gguf_core::write::Builder::new();
    /// # use gguf_core::format::OwnedValue;
    /// # b.set("tokenizer.ggml.model", "llama")?;
    /// # b.set("tokenizer.ggml.tokens", OwnedValue::from(vec!["<unk>", "<s>", "</s>", "\u{2581}a", "a"]))?;
    /// # b.set("tokenizer.ggml.scores", OwnedValue::from(vec![0f32, 0.0, 0.0, -1.0, -2.0]))?;
    /// # b.set("tokenizer.ggml.token_type", OwnedValue::from(vec![2i32, 3, 3, 1, 1]))?;
    /// # let model = b.preview()?;
    /// use gguf_tokenizer::Tokenizer;
    /// let tok = Tokenizer::from_model(&model)?;
    /// assert_eq!(tok.token_to_piece(3, false)?, b" a".as_slice());
    /// assert_eq!(tok.token_to_piece(1, false)?, b"".as_slice()); // <s> is a control token
    /// assert_eq!(tok.token_to_piece(1, true)?, b"<s>".as_slice());
    /// # Ok(()) }
    /// ```
    pub fn token_to_piece(&self, id: u32, special: bool) -> Result<Cow<'_, [u8]>> {
        self.piece(id, 0, special)
    }

    fn piece(&self, id: u32, lstrip: usize, special: bool) -> Result<Cow<'_, [u8]>> {
        let data = self
            .tokens
            .get(id as usize)
            .ok_or(TokenizerError::TokenOutOfRange {
                id,
                n_tokens: self.tokens.len(),
            })?;
        let attr = data.attr;
        let hidden = TokenAttr(TokenAttr::UNKNOWN.0 | TokenAttr::CONTROL.0);
        if !special && attr.has(hidden) {
            return Ok(Cow::Borrowed(&[]));
        }
        let text = data.text.as_str();
        let piece: Cow<'_, [u8]> = if attr.has(TokenAttr(hidden.0 | TokenAttr::USER_DEFINED.0)) {
            Cow::Borrowed(text.as_bytes())
        } else if attr.has(TokenAttr::NORMAL) {
            match self.kind {
                VocabType::Bpe if !self.flags.escape_whitespaces => Cow::Owned(gpt2_decode(text)),
                _ if text.contains('\u{2581}') => {
                    Cow::Owned(text.replace('\u{2581}', " ").into_bytes())
                }
                _ => Cow::Borrowed(text.as_bytes()),
            }
        } else if attr.has(TokenAttr::BYTE) && self.kind != VocabType::Wpm {
            Cow::Owned(vec![hex_byte(text)])
        } else {
            Cow::Borrowed(&[])
        };
        let skip = piece
            .iter()
            .take(lstrip)
            .take_while(|&&b| b == b' ')
            .count();
        Ok(match piece {
            Cow::Borrowed(b) => Cow::Borrowed(&b[skip..]),
            Cow::Owned(mut v) => {
                v.drain(..skip);
                Cow::Owned(v)
            }
        })
    }

    /// The text of `ids`, as `llama_detokenize(vocab, ids, .., remove_special,
    /// unparse_special)` writes it: with `remove_special` a leading BOS and a
    /// trailing EOS the model adds are dropped, with `unparse_special`
    /// control tokens are written out; the vocabulary's leading space is
    /// removed and, for vocabularies that clean spaces, the space before
    /// `?!.,` and some contractions.
    ///
    /// Bytes, since byte tokens can make invalid UTF-8; use
    /// [`String::from_utf8_lossy`] for text.
    pub fn decode(
        &self,
        ids: &[u32],
        remove_special: bool,
        unparse_special: bool,
    ) -> Result<Vec<u8>> {
        let mut ids = ids;
        let mut remove_space = self.flags.add_space_prefix;
        if remove_special
            && self.flags.add_bos
            && let (Some(&first), Some(bos)) = (ids.first(), self.specials.bos)
            && first == bos
        {
            remove_space = false;
            ids = &ids[1..];
        }
        if remove_special
            && self.flags.add_eos
            && let (Some(&last), Some(eos)) = (ids.last(), self.specials.eos)
            && last == eos
        {
            ids = &ids[..ids.len() - 1];
        }
        let mut text = Vec::new();
        for &id in ids {
            text.extend_from_slice(&self.piece(id, usize::from(remove_space), unparse_special)?);
            remove_space = false;
        }
        if self.flags.clean_spaces {
            clean_spaces(&mut text);
        }
        Ok(text)
    }
}

/// The byte of a byte token's text (`<0x0A>`), read as `strtol` reads
/// the two characters after `<0x`.
fn hex_byte(text: &str) -> u8 {
    let digits = text.get(3..).unwrap_or("");
    let mut v: u32 = 0;
    for c in digits.chars().take(2) {
        match c.to_digit(16) {
            Some(d) => v = v * 16 + d,
            None => break,
        }
    }
    v as u8
}

/// GPT-2 byte characters back to bytes; a character that stands for no
/// byte is written as llama.cpp writes it (`[UNK_BYTE_0x..<text>]`).
fn gpt2_decode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match char_to_byte(c) {
            Some(b) => out.push(b),
            None => {
                out.extend_from_slice(b"[UNK_BYTE_0x");
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.extend_from_slice(format!("{b:02x}").as_bytes());
                }
                out.extend_from_slice(text.as_bytes());
                out.push(b']');
            }
        }
    }
    out
}

/// llama.cpp's three clean-up passes over the decoded bytes, in place and
/// index for index (the second pass overwrites a space it skips with NUL,
/// which the third pass then sees).
fn clean_spaces(text: &mut Vec<u8>) {
    // " ?", " !", " .", " ,": drop the space.
    let total1 = text.len();
    let mut total = usize::from(total1 > 0);
    for i in 1..total1 {
        let x = text[i];
        if text[i - 1] == b' ' && matches!(x, b'?' | b'!' | b'.' | b',') {
            total -= 1;
        }
        text[total] = x;
        total += 1;
    }
    // " ' ": drop both spaces.
    let total2 = total;
    total = usize::from(total2 > 0);
    let mut i = 1;
    while i < total2 {
        let x = text[i];
        if x == b'\'' && i + 1 < total2 && text[i - 1] == b' ' && text[i + 1] == b' ' {
            total -= 1;
            i += 1;
            text[i] = 0;
        }
        text[total] = x;
        total += 1;
        i += 1;
    }
    // " 's", " 'm", " 're", " 've": drop the space.
    let total3 = total;
    total = usize::from(total3 > 0);
    for i in 1..total3 {
        let x = text[i];
        if text[i - 1] == b' ' && x == b'\'' && i + 1 < total3 {
            let x1 = text[i + 1];
            if x1 == b's' || x1 == b'm' {
                total -= 1;
            } else if x1 != b't' && x1 != b'd' && i + 2 < total3 {
                let x2 = text[i + 2];
                if (x1 == b'r' || x1 == b'v') && x2 == b'e' {
                    total -= 1;
                }
            }
        }
        text[total] = x;
        total += 1;
    }
    text.truncate(total);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cleaned(s: &str) -> String {
        let mut v = s.as_bytes().to_vec();
        clean_spaces(&mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn clean_up_passes() {
        assert_eq!(cleaned("Hello , world !"), "Hello, world!");
        assert_eq!(cleaned("it ' s"), "it's");
        assert_eq!(
            cleaned("it 's I 'm we 're they 've I 'd I 'll"),
            "it's I'm we're they've I 'd I 'll"
        );
        assert_eq!(cleaned(""), "");
        assert_eq!(cleaned(" ."), ".");
    }

    #[test]
    fn byte_token_text() {
        assert_eq!(hex_byte("<0x0A>"), 10);
        assert_eq!(hex_byte("<0xFF>"), 255);
        assert_eq!(hex_byte("<0x"), 0);
    }
}
