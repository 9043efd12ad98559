//! The hand-written splitters llama.cpp runs instead of a regex engine for
//! its most common pre-tokenizer patterns. They are not always what the
//! regex says (a run of spaces at the very end of the text stays whole,
//! unlike `\s+(?!\S)`), so they are reproduced step by step: the ids must
//! be llama.cpp's, not the regex's.
//!
//! Each takes the text as code points and the current split (chunk lengths
//! in code points) and returns the finer split.

use super::unicode::{ascii_lower, flags, Flags};

/// What a splitter sees of one chunk: positions outside it read as
/// "nothing" (no code point, no flags).
struct Chunk<'a> {
    cpts: &'a [u32],
    ini: usize,
    end: usize,
    prev_end: usize,
    out: &'a mut Vec<usize>,
}

const OUT_OF_RANGE: u32 = u32::MAX;

impl Chunk<'_> {
    fn cpt(&self, pos: usize) -> u32 {
        if self.ini <= pos && pos < self.end {
            self.cpts[pos]
        } else {
            OUT_OF_RANGE
        }
    }
    fn flags(&self, pos: usize) -> Flags {
        if self.ini <= pos && pos < self.end {
            flags(self.cpts[pos])
        } else {
            Flags::NONE
        }
    }
    /// Ends a word at `end`; returns its length (0: nothing added).
    fn add(&mut self, end: usize) -> usize {
        let len = end - self.prev_end;
        if len > 0 {
            self.out.push(len);
        }
        self.prev_end = end;
        len
    }
    /// `'s|'t|'re|'ve|'m|'ll|'d` at `pos`, case-insensitive or not: the
    /// length matched.
    fn contraction(&self, pos: usize, ignore_case: bool) -> usize {
        let lower = |c: u32| if ignore_case { ascii_lower(c) } else { c };
        if self.cpt(pos) != u32::from(b'\'') || pos + 1 >= self.end {
            return 0;
        }
        let next = lower(self.cpt(pos + 1));
        if [b's', b't', b'm', b'd']
            .iter()
            .any(|&c| next == u32::from(c))
        {
            return 2;
        }
        if pos + 2 < self.end {
            let next2 = lower(self.cpt(pos + 2));
            let pair = |a: u8, b: u8| next == u32::from(a) && next2 == u32::from(b);
            if pair(b'r', b'e') || pair(b'v', b'e') || pair(b'l', b'l') {
                return 3;
            }
        }
        0
    }
}

/// Runs `split_chunk` over every chunk of `offsets`.
fn each_chunk(
    cpts: &[u32],
    offsets: &[usize],
    mut split_chunk: impl FnMut(&mut Chunk<'_>),
) -> Vec<usize> {
    let mut out = Vec::with_capacity(offsets.len());
    let mut start = 0;
    for &len in offsets {
        let mut chunk = Chunk {
            cpts,
            ini: start,
            end: start + len,
            prev_end: start,
            out: &mut out,
        };
        split_chunk(&mut chunk);
        start += len;
    }
    out
}

fn is_cr_lf(cpt: u32) -> bool {
    cpt == u32::from(b'\r') || cpt == u32::from(b'\n')
}

/// Whitespace at `pos`: `\s+(?!\S)` or `\s+` (and, when `newline_runs`,
/// `\s*[\r\n]+` first). Returns false when `pos` is not whitespace.
fn whitespace(c: &mut Chunk<'_>, pos: &mut usize, newline_runs: bool) -> bool {
    let mut n = 0;
    let mut last_cr_lf_end = 0;
    while c.flags(*pos + n).is_whitespace() {
        if newline_runs && is_cr_lf(c.cpt(*pos + n)) {
            last_cr_lf_end = *pos + n + 1;
        }
        n += 1;
    }
    if last_cr_lf_end > 0 {
        *pos = last_cr_lf_end;
        c.add(*pos);
        return true;
    }
    // `\s+(?!\S)`: all but the last whitespace, unless the chunk ends there.
    if n > 1 && c.cpt(*pos + n) != OUT_OF_RANGE {
        *pos += n - 1;
        c.add(*pos);
        return true;
    }
    if n > 0 {
        *pos += n;
        c.add(*pos);
        return true;
    }
    false
}

/// GPT-2: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`.
pub(crate) fn gpt2(cpts: &[u32], offsets: &[usize]) -> Vec<usize> {
    each_chunk(cpts, offsets, |c| {
        let mut pos = c.ini;
        while pos < c.end {
            let cpt = c.cpt(pos);
            let f = c.flags(pos);
            let n = c.contraction(pos, false);
            if n > 0 {
                pos += c.add(pos + n);
                continue;
            }
            let space = cpt == u32::from(b' ');
            let mut f2 = if space { c.flags(pos + 1) } else { f };
            if f2.is_letter() {
                pos += usize::from(space);
                while f2.is_letter() {
                    pos += 1;
                    f2 = c.flags(pos);
                }
                c.add(pos);
                continue;
            }
            if f2.is_number() {
                pos += usize::from(space);
                while f2.is_number() {
                    pos += 1;
                    f2 = c.flags(pos);
                }
                c.add(pos);
                continue;
            }
            let other =
                |f: Flags| !(f.is_whitespace() || f.is_letter() || f.is_number()) && f.exists();
            if other(f2) {
                pos += usize::from(space);
                while other(f2) {
                    pos += 1;
                    f2 = c.flags(pos);
                }
                c.add(pos);
                continue;
            }
            if whitespace(c, &mut pos, false) {
                continue;
            }
            pos += 1;
            c.add(pos);
        }
    })
}

/// Which of the llama3-shaped patterns: they differ in the digit run and
/// in whether marks join letters.
#[derive(Clone, Copy)]
pub(crate) enum Llama3Shape {
    /// `\p{N}{1,3}`, letters `\p{L}+` (llama3 and its copies).
    Llama3,
    /// `\p{N}`, letters `\p{L}+` (qwen2 and its copies).
    Qwen2,
    /// `\p{N}`, letters `[\p{L}\p{M}]+` (qwen35).
    Qwen35,
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
/// and its qwen2 / qwen35 variants.
pub(crate) fn llama3(cpts: &[u32], offsets: &[usize], shape: Llama3Shape) -> Vec<usize> {
    let marks = matches!(shape, Llama3Shape::Qwen35);
    let wordish = |f: Flags| f.is_letter() || (marks && f.is_mark());
    each_chunk(cpts, offsets, |c| {
        let mut pos = c.ini;
        while pos < c.end {
            let cpt = c.cpt(pos);
            let f = c.flags(pos);
            let n = c.contraction(pos, true);
            if n > 0 {
                pos += c.add(pos + n);
                continue;
            }
            // [^\r\n\p{L}\p{N}]?\p{L}+
            if !(is_cr_lf(cpt) || f.is_number()) && (wordish(f) || wordish(c.flags(pos + 1))) {
                pos += 1;
                while wordish(c.flags(pos)) {
                    pos += 1;
                }
                c.add(pos);
                continue;
            }
            if f.is_number() {
                match shape {
                    Llama3Shape::Llama3 => {
                        let mut ini = pos;
                        while c.flags(pos).is_number() {
                            pos += 1;
                            if pos - ini >= 3 {
                                c.add(pos);
                                ini = pos;
                            }
                        }
                        c.add(pos);
                    }
                    Llama3Shape::Qwen2 | Llama3Shape::Qwen35 => {
                        pos += 1;
                        c.add(pos);
                    }
                }
                continue;
            }
            // <space>?[^\s\p{L}\p{N}]+[\r\n]*; llama.cpp tests the first
            // code point's own flags for "in the chunk", not the next one's.
            let mut f2 = if cpt == u32::from(b' ') {
                c.flags(pos + 1)
            } else {
                f
            };
            let other = |f: Flags| !(f.is_whitespace() || wordish(f) || f.is_number());
            if other(f2) && f.exists() {
                pos += usize::from(cpt == u32::from(b' '));
                while other(f2) && f2.exists() {
                    pos += 1;
                    f2 = c.flags(pos);
                }
                while is_cr_lf(c.cpt(pos)) {
                    pos += 1;
                }
                c.add(pos);
                continue;
            }
            if whitespace(c, &mut pos, true) {
                continue;
            }
            pos += 1;
            c.add(pos);
        }
    })
}

/// `[^\n]+|[\n]+`: runs of newlines and runs of everything else.
pub(crate) fn newlines(cpts: &[u32], offsets: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(offsets.len());
    let mut start = 0;
    for &len in offsets {
        let chunk = &cpts[start..start + len];
        let mut pos = 0;
        while pos < chunk.len() {
            let newline = chunk[pos] == u32::from(b'\n');
            let run = chunk[pos..]
                .iter()
                .take_while(|&&c| (c == u32::from(b'\n')) == newline)
                .count();
            out.push(run);
            pos += run;
        }
        start += len;
    }
    out
}

/// llama.cpp's Han ranges (`unicode_cpt_is_han`): the CJK Unified
/// Ideographs blocks and the compatibility ones.
fn is_han(cpt: u32) -> bool {
    matches!(cpt,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0x2CEB0..=0x2EBEF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// Kimi-K2: `[\p{Han}]+|[^\r\n\p{L}\p{N}]?[letters but Han]*..(?i:'s|..)?|\p{N}{1,3}|
/// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, as llama.cpp's scanner
/// runs it (letters are `\p{L}` without Han; marks do not join them).
pub(crate) fn kimi_k2(cpts: &[u32], offsets: &[usize]) -> Vec<usize> {
    each_chunk(cpts, offsets, |c| {
        let mut pos = c.ini;
        let letter = |c: &Chunk<'_>, p: usize| c.flags(p).is_letter() && !is_han(c.cpt(p));
        while pos < c.end {
            let cpt = c.cpt(pos);
            let f = c.flags(pos);
            if is_han(cpt) {
                while is_han(c.cpt(pos)) {
                    pos += 1;
                }
                c.add(pos);
                continue;
            }
            // An optional leading code point that is no letter, number or
            // line break, then letters (never Han), then a contraction.
            let leader = !(is_cr_lf(cpt) || f.is_letter() || f.is_number());
            if letter(c, pos) || (leader && letter(c, pos + 1)) {
                pos += usize::from(leader);
                while letter(c, pos) {
                    pos += 1;
                }
                pos += c.contraction(pos, true);
                c.add(pos);
                continue;
            }
            if f.is_number() {
                let mut ini = pos;
                while c.flags(pos).is_number() {
                    pos += 1;
                    if pos - ini >= 3 {
                        c.add(pos);
                        ini = pos;
                    }
                }
                c.add(pos);
                continue;
            }
            // <space>?[^\s\p{L}\p{N}]+[\r\n]*: unlike llama3's, the code
            // point after the space must be in the chunk.
            let space = cpt == u32::from(b' ');
            let mut f2 = if space { c.flags(pos + 1) } else { f };
            let other =
                |f: Flags| !(f.is_whitespace() || f.is_letter() || f.is_number()) && f.exists();
            if other(f2) {
                pos += usize::from(space);
                while other(f2) {
                    pos += 1;
                    f2 = c.flags(pos);
                }
                while is_cr_lf(c.cpt(pos)) {
                    pos += 1;
                }
                c.add(pos);
                continue;
            }
            if whitespace(c, &mut pos, true) {
                continue;
            }
            pos += 1;
            c.add(pos);
        }
    })
}

/// AFMoE's and Tiny Aya's digit grouping (llama.cpp's
/// `unicode_regex_split_custom_afmoe`): each run of numbers is cut into
/// groups of three from the right; whatever precedes a run stays joined
/// to its first group, and what follows the last run is one piece.
pub(crate) fn digit_groups(cpts: &[u32], offsets: &[usize]) -> Vec<usize> {
    each_chunk(cpts, offsets, |c| {
        let mut pos = c.ini;
        while pos < c.end {
            if !c.flags(pos).is_number() {
                pos += 1;
                continue;
            }
            let start = pos;
            while c.flags(pos).is_number() {
                pos += 1;
            }
            let mut cur = start;
            let rem = (pos - start) % 3;
            if rem > 0 {
                cur += rem;
                c.add(cur);
            }
            while cur < pos {
                cur += 3;
                c.add(cur);
            }
        }
        if c.prev_end < c.end {
            c.add(c.end);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str, split: impl Fn(&[u32], &[usize]) -> Vec<usize>) -> Vec<String> {
        let cpts: Vec<u32> = text.chars().map(u32::from).collect();
        let mut start = 0;
        split(&cpts, &[cpts.len()])
            .into_iter()
            .map(|len| {
                let w: String = text.chars().skip(start).take(len).collect();
                start += len;
                w
            })
            .collect()
    }

    #[test]
    fn gpt2_words() {
        assert_eq!(
            words("Hello, y'all!  How 123", gpt2),
            ["Hello", ",", " y", "'", "all", "!", " ", " How", " 123"]
        );
        // Trailing spaces stay one word (the regex would split them).
        assert_eq!(words("a   ", gpt2), ["a", "   "]);
    }

    #[test]
    fn llama3_words() {
        let l3 = |c: &[u32], o: &[usize]| llama3(c, o, Llama3Shape::Llama3);
        assert_eq!(
            words("I'M 12345 \n\n x", l3),
            ["I", "'M", " ", "123", "45", " \n\n", " x"]
        );
        let q2 = |c: &[u32], o: &[usize]| llama3(c, o, Llama3Shape::Qwen2);
        assert_eq!(words("ab12", q2), ["ab", "1", "2"]);
    }

    #[test]
    fn kimi_k2_words() {
        assert_eq!(
            words("Hello中文世界 it's 12345\n\n x", kimi_k2),
            ["Hello", "中文世界", " it's", " ", "123", "45", "\n\n", " x"]
        );
        // A space joins the punctuation after it.
        assert_eq!(words("a !", kimi_k2), ["a", " !"]);
    }

    #[test]
    fn digit_groups_from_the_right() {
        assert_eq!(words("1234567", digit_groups), ["1", "234", "567"]);
        // Text before a run joins its first group; text after the last
        // run is one piece.
        assert_eq!(words("ab1234cd", digit_groups), ["ab1", "234", "cd"]);
        assert_eq!(words("ab123", digit_groups), ["ab123"]);
        assert_eq!(words("none", digit_groups), ["none"]);
    }

    #[test]
    fn newline_runs() {
        assert_eq!(words("a b\n\ncd\n", newlines), ["a b", "\n\n", "cd", "\n"]);
    }
}
