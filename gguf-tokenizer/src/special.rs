//! Splitting text at special tokens before tokenizing it, with the result
//! of llama.cpp's `tokenizer_st_partition`: each special token in turn,
//! longest first, cuts every text fragment at each of its occurrences
//! (leftmost first, not overlapping), stripping the whitespace beside it
//! when the token says so.
//!
//! Run as written, that costs a scan of the whole text per special token
//! in the vocabulary. Here one Aho-Corasick pass finds where special tokens
//! occur at all, and the text is cut into independent regions around them;
//! inside a region the rule above is applied as a recursion: the
//! highest-priority token occurring in a fragment is the one llama.cpp's
//! loop cuts it with first (the tokens before it in the order do not occur
//! in the fragment, so their turns changed nothing), and each piece it
//! leaves is a fragment in which only lower-priority tokens can occur.
//!
//! Regions are independent when no occurrence of a special token crosses
//! the cut between them and no strip can reach across it: a cut is made
//! only where the occurrences' spans, widened by the whitespace a strip
//! could take (for tokens that strip), do not overlap. Text on either side
//! is then cut by the same tokens, in the same order, at the same places as
//! when the whole text is one fragment.

use std::collections::VecDeque;

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::Anchored;
use rustc_hash::FxHashMap;

use crate::error::Result;

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

/// The special tokens one kind of `encode` call matches (all of them, or
/// all but control and unknown ones), as one automaton.
pub(crate) struct Matcher {
    automaton: Box<dyn Automaton + Send + Sync>,
    start: StateID,
    /// The token of each pattern. Patterns are in llama.cpp's order, so a
    /// lower pattern index is a higher priority and never a shorter text.
    ids: Vec<u32>,
    max_len: usize,
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("patterns", &self.ids.len())
            .finish()
    }
}

impl Matcher {
    /// The matcher for `parse_special` (control and unknown tokens too) or
    /// not; `None` when there is no such token. An error says why the
    /// automaton could not be built.
    pub(crate) fn new(
        tok: &Tokenizer,
        parse_special: bool,
    ) -> std::result::Result<Option<Matcher>, String> {
        let skip = TokenAttr(TokenAttr::CONTROL.0 | TokenAttr::UNKNOWN.0);
        let ids: Vec<u32> = tok
            .special_cache
            .iter()
            .copied()
            .filter(|&id| parse_special || !tok.tokens[id as usize].attr.has(skip))
            .collect();
        if ids.is_empty() {
            return Ok(None);
        }
        let patterns = || {
            ids.iter()
                .map(|&id| tok.tokens[id as usize].text.as_bytes())
        };
        // The compact automaton has a size limit; the other has none short
        // of memory.
        let automaton: Box<dyn Automaton + Send + Sync> =
            match aho_corasick::nfa::contiguous::NFA::new(patterns()) {
                Ok(nfa) => Box::new(nfa),
                Err(_) => Box::new(
                    aho_corasick::nfa::noncontiguous::NFA::new(patterns()).map_err(|e| {
                        format!(
                            "its {} special tokens cannot be matched together: {e}",
                            ids.len()
                        )
                    })?,
                ),
            };
        let start = automaton
            .start_state(Anchored::No)
            .map_err(|e| format!("its special tokens cannot be searched for: {e}"))?;
        let max_len = patterns().map(<[u8]>::len).max().unwrap_or(0);
        Ok(Some(Matcher {
            automaton,
            start,
            ids,
            max_len,
        }))
    }
}

/// What the special tokens ending at one place of the text have in common:
/// the highest-priority one (a pattern index) and whether any strips.
#[derive(Clone, Copy)]
struct Ending {
    best: usize,
    lstrip: bool,
    rstrip: bool,
}

/// One `partition` call's view of a matcher, with what it learnt of the
/// automaton's match states.
struct Search<'m> {
    tok: &'m Tokenizer,
    m: &'m Matcher,
    endings: FxHashMap<StateID, Ending>,
}

impl Search<'_> {
    /// The tokens that end where the automaton is in `sid` (a match state).
    fn ending(&mut self, sid: StateID) -> Ending {
        let (tok, m) = (self.tok, self.m);
        *self.endings.entry(sid).or_insert_with(|| {
            let mut e = Ending {
                best: usize::MAX,
                lstrip: false,
                rstrip: false,
            };
            for i in 0..m.automaton.match_len(sid) {
                let p = m.automaton.match_pattern(sid, i).as_usize();
                let attr = tok.tokens[m.ids[p] as usize].attr;
                e.best = e.best.min(p);
                e.lstrip |= attr.has(TokenAttr::LSTRIP);
                e.rstrip |= attr.has(TokenAttr::RSTRIP);
            }
            e
        })
    }

    /// The highest-priority pattern that occurs inside `bytes`, if any.
    fn best_inside(&mut self, bytes: &[u8]) -> Option<usize> {
        let a = &*self.m.automaton;
        let mut sid = self.m.start;
        let mut best = usize::MAX;
        for &b in bytes {
            sid = a.next_state(Anchored::No, sid, b);
            if a.is_special(sid) && a.is_match(sid) {
                best = best.min(self.ending(sid).best);
            }
        }
        (best != usize::MAX).then_some(best)
    }
}

/// Hands fragments on, joining text pieces that meet (the pieces of one
/// fragment of llama.cpp's that fell in two regions).
struct Out<'a, F> {
    text: &'a str,
    pending: Option<(usize, usize)>,
    emit: F,
}

impl<'a, F: FnMut(Fragment<'a>) -> Result<()>> Out<'a, F> {
    fn text(&mut self, start: usize, end: usize) -> Result<()> {
        if start == end {
            return Ok(());
        }
        match self.pending {
            Some((s, e)) if e == start => self.pending = Some((s, end)),
            _ => {
                self.flush()?;
                self.pending = Some((start, end));
            }
        }
        Ok(())
    }

    fn token(&mut self, id: u32) -> Result<()> {
        self.flush()?;
        (self.emit)(Fragment::Token(id))
    }

    fn flush(&mut self) -> Result<()> {
        match self.pending.take() {
            Some((s, e)) => (self.emit)(Fragment::Text(&self.text[s..e])),
            None => Ok(()),
        }
    }
}

/// A run of occurrences that must be cut together: `[start, end)` with the
/// whitespace their strips could take.
#[derive(Clone, Copy, Debug)]
struct Cluster {
    start: usize,
    end: usize,
    /// The first byte at or after `end` that is not whitespace.
    ns: usize,
}

/// Hands `emit` the fragments of `text`, in order. Control and unknown
/// tokens are matched only with `parse_special`; user-defined ones always.
pub(crate) fn partition<'a>(
    tok: &Tokenizer,
    text: &'a str,
    parse_special: bool,
    emit: impl FnMut(Fragment<'a>) -> Result<()>,
) -> Result<()> {
    let mut out = Out {
        text,
        pending: None,
        emit,
    };
    let Some(m) = tok.special_matcher(parse_special)? else {
        out.text(0, text.len())?;
        return out.flush();
    };
    let mut search = Search {
        tok,
        m,
        endings: FxHashMap::default(),
    };
    let bytes = text.as_bytes();
    let n = bytes.len();
    // The first byte at or after `x` that is not whitespace; asked for
    // growing `x`, so a cache of the last run scans each run once.
    let mut ns_cache = (0usize, 0usize);
    let mut not_space_from = |x: usize| -> usize {
        if ns_cache.0 <= x && x <= ns_cache.1 {
            return ns_cache.1;
        }
        let mut p = x;
        while p < n && is_c_space(bytes[p]) {
            p += 1;
        }
        ns_cache = (x, p);
        p
    };
    // The start of the whitespace run that ends at `x`; asked for places
    // that grow but for the length of a token, so the last run found
    // (`from..to`, all whitespace) saves rescanning it.
    let mut ws_cache = (0usize, 0usize);
    let mut ws_start = |x: usize| -> usize {
        if ws_cache.0 <= x && x <= ws_cache.1 {
            return ws_cache.0;
        }
        let mut p = x;
        while p > 0 && is_c_space(bytes[p - 1]) {
            p -= 1;
            if p == ws_cache.1 {
                p = ws_cache.0;
                break;
            }
        }
        ws_cache = (p, x);
        p
    };
    let mut pending: VecDeque<Cluster> = VecDeque::new();
    // Bytes before `done` have been handed on.
    let mut done = 0;
    let a = &*m.automaton;
    let mut sid = m.start;
    for (i, &b) in bytes.iter().enumerate() {
        sid = a.next_state(Anchored::No, sid, b);
        if !(a.is_special(sid) && a.is_match(sid)) {
            continue;
        }
        let end = i + 1;
        let ending = search.ending(sid);
        // The longest token ending here spans every other one that does.
        let start = end - tok.tokens[m.ids[ending.best] as usize].text.len();
        let ns = not_space_from(end);
        let mut c = Cluster {
            start,
            // An rstrip token takes the whitespace after it.
            end: if ending.rstrip { ns } else { end },
            ns,
        };
        // An lstrip token takes the whitespace before it.
        if ending.lstrip {
            c.start = ws_start(start).max(done);
        }
        while let Some(&last) = pending.back() {
            if last.end <= c.start {
                break;
            }
            pending.pop_back();
            c.start = c.start.min(last.start);
            if last.end > c.end {
                c.end = last.end;
                c.ns = last.ns;
            }
        }
        pending.push_back(c);
        // A cluster is final once no later occurrence can reach it: a
        // later one starts after `end - max_len`, and the whitespace an
        // lstrip takes cannot cross the first non-space byte after it.
        while let Some(&front) = pending.front() {
            if end < m.max_len || front.ns > end - m.max_len {
                break;
            }
            pending.pop_front();
            out.text(done, front.start)?;
            region(&mut search, &mut out, front)?;
            done = front.end;
        }
    }
    while let Some(c) = pending.pop_front() {
        out.text(done, c.start)?;
        region(&mut search, &mut out, c)?;
        done = c.end;
    }
    out.text(done, n)?;
    out.flush()
}

/// A piece of a region still to cut, or a token found.
enum Work {
    Range(usize, usize),
    Token(u32),
}

/// Cuts one region as llama.cpp's loop would, with a stack instead of
/// recursion (its depth is the number of tokens nested in one another).
fn region<'a, F: FnMut(Fragment<'a>) -> Result<()>>(
    search: &mut Search<'_>,
    out: &mut Out<'a, F>,
    c: Cluster,
) -> Result<()> {
    let text = out.text;
    let bytes = text.as_bytes();
    let mut stack = vec![Work::Range(c.start, c.end)];
    let mut pieces = Vec::new();
    while let Some(w) = stack.pop() {
        let (s, e) = match w {
            Work::Token(id) => {
                out.token(id)?;
                continue;
            }
            Work::Range(s, e) => (s, e),
        };
        let Some(best) = search.best_inside(&bytes[s..e]) else {
            out.text(s, e)?;
            continue;
        };
        let id = search.m.ids[best];
        let data = &search.tok.tokens[id as usize];
        let needle = data.text.as_str();
        pieces.clear();
        let mut rest = s;
        while let Some(at) = text[rest..e].find(needle) {
            let at = rest + at;
            let mut left = at;
            if data.attr.has(TokenAttr::LSTRIP) {
                while left > rest && is_c_space(bytes[left - 1]) {
                    left -= 1;
                }
            }
            if left > rest {
                pieces.push(Work::Range(rest, left));
            }
            pieces.push(Work::Token(id));
            rest = at + needle.len();
            if data.attr.has(TokenAttr::RSTRIP) {
                while rest < e && is_c_space(bytes[rest]) {
                    rest += 1;
                }
            }
        }
        if rest < e {
            pieces.push(Work::Range(rest, e));
        }
        stack.extend(pieces.drain(..).rev());
    }
    Ok(())
}

/// The fragments of `text`, collected (tests and short texts).
#[cfg(test)]
pub(crate) fn partition_vec<'a>(
    tok: &Tokenizer,
    text: &'a str,
    parse_special: bool,
) -> Vec<Fragment<'a>> {
    let mut v = Vec::new();
    partition(tok, text, parse_special, |f| {
        v.push(f);
        Ok(())
    })
    .unwrap();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use gguf_core::format::OwnedValue;

    /// llama.cpp's loop as written (and as this module ran it before): each
    /// special token in turn rescans every text fragment. The oracle.
    fn sequential<'a>(tok: &Tokenizer, text: &'a str, parse_special: bool) -> Vec<Fragment<'a>> {
        let skip = TokenAttr(TokenAttr::CONTROL.0 | TokenAttr::UNKNOWN.0);
        let mut frags = Vec::new();
        if text.is_empty() {
            return frags;
        }
        frags.push(Fragment::Text(text));
        for &id in &tok.special_cache {
            let data = &tok.tokens[id as usize];
            if !parse_special && data.attr.has(skip) {
                continue;
            }
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
                        right =
                            right.trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
                    }
                    rest = right;
                }
            }
            frags = next;
        }
        frags
    }

    /// A SentencePiece vocabulary: `<unk>`, `<s>`, `</s>`, the letters
    /// `a`..`e` and space as normal tokens, then `specials` as (text, token
    /// type: 3 control, 4 user-defined) with the strip attributes given,
    /// then byte tokens.
    fn vocab(specials: &[(&str, i32, bool, bool)]) -> Tokenizer {
        let mut texts = vec!["<unk>", "<s>", "</s>", "a", "b", "c", "d", "e", "\u{2581}"];
        let mut types = vec![2i32, 3, 3, 1, 1, 1, 1, 1, 1];
        for &(t, ty, _, _) in specials {
            texts.push(t);
            types.push(ty);
        }
        // Byte tokens last, so that the special tokens' ids start at 9.
        let bytes: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
        texts.extend(bytes.iter().map(String::as_str));
        types.extend([6; 256]);
        let mut b = gguf_core::write::Builder::new();
        b.set("tokenizer.ggml.model", "llama").unwrap();
        b.set("tokenizer.ggml.tokens", OwnedValue::from(texts.clone()))
            .unwrap();
        b.set(
            "tokenizer.ggml.scores",
            OwnedValue::from(vec![0f32; texts.len()]),
        )
        .unwrap();
        b.set("tokenizer.ggml.token_type", OwnedValue::from(types))
            .unwrap();
        let model = b.preview().unwrap();
        let mut tok = Tokenizer::from_model(&model).unwrap();
        for (i, &(text, _, lstrip, rstrip)) in specials.iter().enumerate() {
            let id = 9 + i;
            assert_eq!(tok.tokens[id].text, text);
            tok.tokens[id].attr.set(TokenAttr::LSTRIP, lstrip);
            tok.tokens[id].attr.set(TokenAttr::RSTRIP, rstrip);
        }
        tok
    }

    fn assert_same(tok: &Tokenizer, text: &str) {
        for parse_special in [false, true] {
            assert_eq!(
                partition_vec(tok, text, parse_special),
                sequential(tok, text, parse_special),
                "{text:?}, parse_special {parse_special}"
            );
        }
    }

    #[test]
    fn priority_beats_position() {
        // "abc" is cut first although "ca" starts before it; "b" only gets
        // what is left, and "ca" nothing.
        let tok = vocab(&[
            ("ca", 4, false, false),
            ("abc", 4, false, false),
            ("b", 4, false, false),
        ]);
        let text = "cabcab";
        assert_eq!(
            partition_vec(&tok, text, false),
            [
                Fragment::Text("c"),
                Fragment::Token(10),
                Fragment::Text("a"),
                Fragment::Token(11),
            ]
        );
        assert_same(&tok, text);
    }

    #[test]
    fn nested_overlapping_and_stripping_tokens() {
        let tok = vocab(&[
            ("<a>", 3, false, false),
            ("<a><b>", 3, true, false),
            ("a><", 4, false, true),
            ("<b>", 4, true, true),
            ("b> <", 4, false, false),
            ("  ", 4, false, false),
            ("aa", 4, false, true),
            ("aaa", 3, true, false),
        ]);
        for text in [
            "<a><b> <b>  <a>aaaa <b>",
            "   <b>   <a>   a><   aaaaaaa  b> <a><a><b>",
            " <b><b><b>  <a> <a><b>   ",
            "aaaaaaaaaaaa",
            "x <a>y",
        ] {
            assert_same(&tok, text);
        }
    }

    /// Many special tokens that overlap one another: the ids `encode`
    /// gives are the old loop's.
    #[test]
    fn many_overlapping_tokens_give_the_old_ids() {
        let owned: Vec<String> = (0..300)
            .map(|i| {
                let s: String = std::iter::repeat_n("ab", 1 + i % 7).collect();
                match i % 4 {
                    0 => format!("<{s}"),
                    1 => format!("{s}>"),
                    2 => format!("b{i}a"),
                    _ => format!("{}{s}", i % 10),
                }
            })
            .collect();
        let specials: Vec<(&str, i32, bool, bool)> = owned
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), 3 + (i % 2) as i32, i % 5 == 0, i % 3 == 0))
            .collect();
        let tok = vocab(&specials);
        let text: String = (0..400)
            .map(|i| format!("<{}> {}b{}a ", "ab".repeat(i % 9), i % 10, i % 300))
            .collect();
        let old: Vec<u32> = {
            let mut ids = Vec::new();
            let mut prev_special = true;
            for f in sequential(&tok, &text, true) {
                match f {
                    Fragment::Token(id) => {
                        ids.push(id);
                        prev_special = true;
                    }
                    Fragment::Text(t) => {
                        let mut s = String::new();
                        if tok.flags.add_space_prefix && prev_special {
                            s.push(' ');
                        }
                        s.push_str(t);
                        super::super::spm::tokenize(&tok, &s.replace(' ', "\u{2581}"), &mut ids)
                            .unwrap();
                        prev_special = false;
                    }
                }
            }
            ids
        };
        let new = tok.encode(&text, false, true).unwrap();
        assert!(new.iter().filter(|&&id| id >= 9).count() > 400);
        assert_eq!(new, old);
    }

    /// Random small vocabularies over a few characters (so that tokens
    /// overlap, nest and meet whitespace), random strip attributes, random
    /// texts: the same fragments as the old loop.
    #[test]
    fn random_vocabularies_match_the_old_loop() {
        let mut next = gguf_core::testing::random_below(0x9E37_79B9_7F4A_7C15u64);
        let alphabet = ['a', 'b', ' ', '<', '\n', 'é'];
        for _ in 0..400 {
            let mut owned = Vec::new();
            for _ in 0..1 + next(12) {
                let len = 1 + next(5);
                let s: String = (0..len)
                    .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                    .collect();
                owned.push(s);
            }
            let specials: Vec<(&str, i32, bool, bool)> = owned
                .iter()
                .map(|s| (s.as_str(), 3 + next(2) as i32, next(3) == 0, next(3) == 0))
                .collect();
            let tok = vocab(&specials);
            for _ in 0..10 {
                let len = next(60);
                let text: String = (0..len)
                    .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                    .collect();
                assert_same(&tok, &text);
            }
        }
    }

    /// Thousands of distinct control tokens in the text: found in one pass
    /// (the old loop scanned the text once per token). A count, not a time.
    #[test]
    fn many_distinct_tokens_are_each_found() {
        let owned: Vec<String> = (0..5000).map(|i| format!("<ctl{i}>")).collect();
        let specials: Vec<(&str, i32, bool, bool)> = owned
            .iter()
            .map(|s| (s.as_str(), 3, false, false))
            .collect();
        let tok = vocab(&specials);
        let text: String = owned.iter().rev().map(|s| format!("{s} a")).collect();
        let frags = partition_vec(&tok, &text, true);
        assert_eq!(frags.len(), 10_000);
        assert_eq!(frags[0], Fragment::Token(9 + 4999));
        assert_eq!(frags[1], Fragment::Text(" a"));
    }
}
