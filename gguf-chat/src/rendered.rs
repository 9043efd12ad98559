//! A rendered prompt, marked by origin, and its tokens.

use std::ops::Range;

use gguf_tokenizer::{TokenAttr, Tokenizer, VocabType};

use crate::error::Result;

/// A rendered prompt: its text, and which bytes of it came from the conversation (message
/// content, reasoning, tool-call arguments) rather than from the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The prompt.
    pub text: String,
    input: Vec<Range<usize>>,
}

/// The byte ranges of `text` holding `inputs` (in conversation order): each input is looked
/// for inside the output of the template's expressions (never in its literal text), after the
/// previous input's place first, then anywhere not yet marked; an input the template changed
/// (trimmed) is looked for trimmed.
pub(crate) fn mark(text: &str, expressions: &[Range<usize>], inputs: &[&str]) -> Vec<Range<usize>> {
    let mut marked: Vec<Range<usize>> = Vec::new();
    let inside = |r: &Range<usize>| {
        expressions
            .iter()
            .any(|e| e.start <= r.start && r.end <= e.end)
    };
    let free = |marked: &[Range<usize>], r: &Range<usize>| {
        marked.iter().all(|m| m.end <= r.start || r.end <= m.start)
    };
    let mut cursor = 0;
    for s in inputs {
        let mut found = None;
        for cand in [*s, s.trim()] {
            if cand.is_empty() {
                continue;
            }
            let hit = |from: usize, marked: &[Range<usize>]| {
                text.get(from..)?
                    .match_indices(cand)
                    .map(|(i, _)| from + i..from + i + cand.len())
                    .find(|r| inside(r) && free(marked, r))
            };
            found = hit(cursor, &marked).or_else(|| hit(0, &marked));
            if found.is_some() {
                break;
            }
        }
        if let Some(r) = found {
            cursor = r.end;
            marked.push(r);
        }
    }
    marked.sort_by_key(|r| r.start);
    // Adjacent ranges join.
    let mut out: Vec<Range<usize>> = Vec::with_capacity(marked.len());
    for r in marked {
        match out.last_mut() {
            Some(last) if last.end >= r.start => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// C's `isspace`: the whitespace llama.cpp strips beside an `lstrip`/`rstrip` token.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// Appends text to the current fragment, without its leading whitespace after an `rstrip` token.
fn push_text(text: &mut String, s: &str, strip_next: &mut bool) {
    let s = if *strip_next {
        s.trim_start_matches(is_c_space)
    } else {
        s
    };
    if !s.is_empty() {
        *strip_next = false;
    }
    text.push_str(s);
}

impl Rendered {
    pub(crate) fn new(text: String, input: Vec<Range<usize>>) -> Rendered {
        Rendered { text, input }
    }

    /// The byte ranges of [`text`](Self::text) that came from the conversation, in order,
    /// not overlapping.
    pub fn input_ranges(&self) -> &[Range<usize>] {
        &self.input
    }

    /// The text in pieces, each with whether it came from the conversation (`true`) or from
    /// the template (`false`).
    ///
    /// ```
    /// use gguf_chat::{ChatTemplate, Conversation, RenderOptions};
    /// let t = ChatTemplate::new("[{{ messages[0].content }}]", "", "")?;
    /// let conv = Conversation::from_json(&serde_json::json!([{"role": "user", "content": "x"}]))?;
    /// let r = t.render(&conv, &RenderOptions::new())?;
    /// assert_eq!(r.segments().collect::<Vec<_>>(), [("[", false), ("x", true), ("]", false)]);
    /// # Ok::<(), gguf_chat::Error>(())
    /// ```
    pub fn segments(&self) -> impl Iterator<Item = (&str, bool)> + '_ {
        let mut pieces = Vec::with_capacity(2 * self.input.len() + 1);
        let mut at = 0;
        for r in &self.input {
            if r.start > at {
                pieces.push((&self.text[at..r.start], false));
            }
            pieces.push((&self.text[r.clone()], true));
            at = r.end;
        }
        if at < self.text.len() {
            pieces.push((&self.text[at..], false));
        }
        pieces.into_iter()
    }

    /// Token ids of the prompt, as `llama_tokenize(prompt, add_special, parse_special=true)`
    /// gives them except that special tokens are found only in the template's text: a user who
    /// writes `<|im_end|>` gets the tokens of those characters, not the control token. The
    /// control tokens of the template's pieces cut the prompt into fragments as llama.cpp's
    /// tokenizer cuts it (their `lstrip`/`rstrip` taking the whitespace beside them); each
    /// fragment, template and conversation text together, is tokenized as one text, so a prompt
    /// with no special-token text from the conversation gets exactly llama.cpp's ids. With
    /// `add_special`, the BOS/EOS (CLS/SEP) tokens the vocabulary adds.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = gguf_core::Model::open("model.gguf")?;
    /// let tok = gguf_tokenizer::Tokenizer::from_model(&model)?;
    /// let tmpl = gguf_chat::ChatTemplate::from_model(&model, None)?;
    /// let conv = gguf_chat::Conversation::from_json(&serde_json::json!([{"role": "user", "content": "hi"}]))?;
    /// let ids = tmpl.render(&conv, &gguf_chat::RenderOptions::new())?.encode(&tok, true)?;
    /// # let _ = ids; Ok(()) }
    /// ```
    pub fn encode(&self, tok: &Tokenizer, add_special: bool) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        let (first, last) = match tok.vocab_type() {
            VocabType::Wpm => (add_special, add_special),
            _ => (
                add_special && tok.flags().add_bos,
                add_special && tok.flags().add_eos,
            ),
        };
        if first {
            // The BOS (CLS) the tokenizer adds to an empty text, alone.
            out.extend(tok.encode("", true, false)?.into_iter().take(1));
        }
        // Fragments: runs of text, and the template's control tokens between them.
        let mut text = String::new();
        let mut strip_next = false;
        let flush = |text: &mut String, out: &mut Vec<u32>| -> Result<()> {
            if !text.is_empty() {
                out.extend(tok.encode(text, false, false)?);
                text.clear();
            }
            Ok(())
        };
        for (piece, from_input) in self.segments() {
            let mut rest = piece;
            if !from_input {
                let parsed = tok.encode(piece, false, true)?;
                for id in parsed {
                    let Some(data) = tok.token(id) else { continue };
                    if !data.attr.has(TokenAttr::CONTROL) && !data.attr.has(TokenAttr::UNKNOWN) {
                        continue;
                    }
                    let Some(at) = rest.find(data.text.as_str()) else {
                        continue;
                    };
                    push_text(&mut text, &rest[..at], &mut strip_next);
                    if data.attr.has(TokenAttr::LSTRIP) {
                        let keep = text.trim_end_matches(is_c_space).len();
                        text.truncate(keep);
                    }
                    flush(&mut text, &mut out)?;
                    out.push(id);
                    strip_next = data.attr.has(TokenAttr::RSTRIP);
                    rest = &rest[at + data.text.len()..];
                }
            }
            push_text(&mut text, rest, &mut strip_next);
        }
        flush(&mut text, &mut out)?;
        if last {
            let both = tok.encode("", true, false)?;
            out.extend(
                both.last()
                    .copied()
                    .filter(|_| both.len() > usize::from(first) || !first),
            );
        }
        Ok(out)
    }
}
