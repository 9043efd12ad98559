//! Byte-pair pre-tokenizers: every `tokenizer.ggml.pre` name llama.cpp's
//! vocabulary loader accepts, the flags it sets with it, and the patterns
//! its BPE tokenizer splits text with before merging.

use super::split_custom::{self, Llama3Shape};
use super::split_regex::Pattern;

/// The split rules of one pre-tokenizer family (llama.cpp's
/// `LLAMA_VOCAB_PRE_TYPE_*`, which several names share).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Default,
    Llama3,
    Jais2,
    Dbrx,
    DeepseekLlm,
    Deepseek3Llm,
    Spark25,
    Youtu,
    DeepseekCoder,
    Falcon,
    Starcoder,
    Gpt2,
    Qwen2,
    Qwen35,
    Poro,
    Chatglm4,
    Viking,
    Tekken,
    Chameleon,
    Gpt4o,
    GraniteEmbMulti,
    Superbpe,
    Bailingmoe,
    SeedCoder,
    Ufakzeka,
    Grok2,
    Laguna,
    ExaoneMoe,
    Gemma4,
    Minicpm5,
    Whitespace,
    TinyAya,
    KimiK2,
    Afmoe,
    SarvamMoe,
}

/// What a pre-tokenizer name sets besides its family: llama.cpp's flags,
/// changed from the BPE defaults (`clean_spaces` on, the rest off).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Overrides {
    pub(crate) no_clean_spaces: bool,
    pub(crate) ignore_merges: bool,
    pub(crate) add_bos: bool,
    pub(crate) add_sep: bool,
    pub(crate) escape_whitespaces: bool,
    /// The BOS token id is cleared (ChatGLM).
    pub(crate) no_bos_id: bool,
}

/// The family and flags of a `tokenizer.ggml.pre` name, as llama.cpp's
/// `llama_vocab::impl::load` maps it; `None` for a name it refuses.
pub(crate) fn lookup(name: &str) -> Option<(Family, Overrides)> {
    use Family as F;
    let o = Overrides::default();
    let no_clean = Overrides {
        no_clean_spaces: true,
        ..o
    };
    let r = match name {
        "default" => (F::Default, o),
        "minicpm5" => (
            F::Minicpm5,
            Overrides {
                ignore_merges: true,
                ..o
            },
        ),
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral" | "midm-2.0"
        | "lfm2" | "jina-v5-nano" => (
            F::Llama3,
            Overrides {
                ignore_merges: true,
                add_bos: true,
                ..o
            },
        ),
        "deepseek-llm" => (F::DeepseekLlm, no_clean),
        "deepseek-coder" => (F::DeepseekCoder, no_clean),
        "deepseek-v3" => (F::Deepseek3Llm, no_clean),
        "spark2_5" => (F::Spark25, no_clean),
        "youtu" => (
            F::Youtu,
            Overrides {
                no_clean_spaces: true,
                ignore_merges: true,
                ..o
            },
        ),
        "falcon" => (F::Falcon, o),
        "mpt" => (F::Gpt2, o),
        "starcoder" => (F::Starcoder, o),
        "gpt-2" | "phi-2" | "jina-es" | "jina-de" | "gigachat" | "jina-v2-es" | "jina-v2-de"
        | "a.x-4.0" | "mellum" | "modern-bert" => (F::Gpt2, o),
        "jais-2" => (F::Jais2, o),
        "gemma4" | "granite-embed-multi-311m" => (
            F::Gemma4,
            Overrides {
                escape_whitespaces: true,
                ..o
            },
        ),
        "sarvam-moe" => (
            F::SarvamMoe,
            Overrides {
                escape_whitespaces: true,
                no_clean_spaces: true,
                ..o
            },
        ),
        "jina-v1-en" | "jina-v2-code" | "roberta-bpe" => {
            (F::Gpt2, Overrides { add_sep: true, ..o })
        }
        "whitespace" => (F::Whitespace, o),
        "refact" => (F::Starcoder, o),
        "command-r" => (F::Starcoder, no_clean),
        "qwen2" | "deepseek-r1-qwen" | "kormo" | "f2llmv2" => (F::Qwen2, no_clean),
        "qwen35" => (F::Qwen35, no_clean),
        "stablelm2" => (F::Qwen2, o),
        "olmo" => (F::Gpt2, o),
        "dbrx" | "smaug-bpe" => (F::Dbrx, o),
        "poro-chat" => (F::Poro, no_clean),
        "chatglm-bpe" => (
            F::Chatglm4,
            Overrides {
                no_bos_id: true,
                ..o
            },
        ),
        "glm4" | "glm5" => (
            F::Chatglm4,
            Overrides {
                no_bos_id: true,
                ignore_merges: true,
                ..o
            },
        ),
        "viking" => (F::Viking, no_clean),
        "jais" => (F::Gpt2, o),
        "tekken" => (
            F::Tekken,
            Overrides {
                no_clean_spaces: true,
                ignore_merges: true,
                add_bos: true,
                ..o
            },
        ),
        "smollm" => (F::Starcoder, no_clean),
        "codeshell" => (F::Starcoder, o),
        "bloom" | "gpt3-finnish" => (F::Poro, o),
        "exaone" => (F::Starcoder, o),
        "exaone4" => (F::Gpt2, o),
        "exaone-moe" => (F::ExaoneMoe, o),
        "chameleon" => (
            F::Chameleon,
            Overrides {
                add_bos: true,
                no_clean_spaces: true,
                ..o
            },
        ),
        "minerva-7b" => (F::Starcoder, o),
        "megrez" => (F::Qwen2, o),
        "gpt-4o" | "llama4" | "kanana2" | "talkie" => (F::Gpt4o, no_clean),
        "granite-embed-multi-97m" => (
            F::GraniteEmbMulti,
            Overrides {
                no_clean_spaces: true,
                ignore_merges: true,
                ..o
            },
        ),
        "superbpe" => (F::Superbpe, no_clean),
        "trillion" | "granite-docling" => (F::Gpt2, no_clean),
        "bailingmoe" | "bailingmoe2" | "llada-moe" => (F::Bailingmoe, no_clean),
        "seed-coder" => (F::SeedCoder, no_clean),
        "hunyuan" => (F::Qwen2, no_clean),
        "hunyuan-dense" | "hy_v4" | "joyai-llm" => (F::Deepseek3Llm, no_clean),
        "ufakzeka" => (F::Ufakzeka, no_clean),
        "grok-2" => (F::Grok2, no_clean),
        "laguna" => (F::Laguna, no_clean),
        "minimax-m2" => (F::Gpt4o, no_clean),
        "solar-open" => (F::Qwen2, no_clean),
        "mellum2" => (F::Starcoder, o),
        "tiny_aya" | "cohere2moe" => (F::TinyAya, no_clean),
        "kimi-k2" => (F::KimiK2, no_clean),
        "afmoe" => (F::Afmoe, no_clean),
        _ => return None,
    };
    Some(r)
}

// The patterns, verbatim from llama.cpp (its "adapted" forms: case
// insensitivity spelled out, possessive quantifiers made greedy).
const CONTRACTIONS: &str = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";
const LLAMA3_REST: &str =
    r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2_REST: &str =
    r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN35_REST: &str = r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const CASED_WORDS: &str = r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+";
const CASED_WORDS2: &str = r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*";
const NEWLINES: &str = r"[^\n]+|[\n]+";
const DEEPSEEK_LLM_LETTERS: &str = "\\s?[A-Za-z\u{B5}\u{C0}-\u{D6}\u{D8}-\u{F6}\u{F8}-\u{1BA}\u{1BC}-\u{1BF}\u{1C4}-\u{293}\u{295}-\u{2AF}\u{370}-\u{373}\u{376}\u{377}\u{37B}-\u{37D}\u{37F}\u{386}\u{388}-\u{38A}\u{38C}\u{38E}-\u{3A1}\u{3A3}-\u{3F5}\u{3F7}-\u{481}\u{48A}-\u{52F}\u{531}-\u{556}\u{10A0}-\u{10C5}\u{13A0}-\u{13F5}\u{13F8}-\u{13FD}\u{1C90}-\u{1CBA}\u{1CBD}-\u{1CBF}\u{1D00}-\u{1D2B}\u{1D6B}-\u{1D77}\u{1D79}-\u{1D9A}\u{1E00}-\u{1F15}\u{1F18}-\u{1F1D}\u{1F20}-\u{1F45}\u{1F48}-\u{1F4D}\u{1F50}-\u{1F57}\u{1F59}\u{1F5B}\u{1F5D}\u{1F5F}-\u{1F7D}\u{1F80}-\u{1FB4}\u{1FB6}-\u{1FBC}\u{1FBE}\u{1FC2}-\u{1FC4}\u{1FC6}-\u{1FCC}\u{1FD0}-\u{1FD3}\u{1FD6}-\u{1FDB}\u{1FE0}-\u{1FEC}\u{1FF2}-\u{1FF4}\u{1FF6}-\u{1FFC}\u{2102}\u{2107}\u{210A}-\u{2113}\u{2115}\u{2119}-\u{211D}\u{2124}\u{2126}\u{2128}\u{212A}-\u{212D}\u{212F}-\u{2134}\u{2139}\u{213C}-\u{213F}\u{2145}-\u{2149}\u{214E}\u{2183}\u{2184}\u{2C00}-\u{2C7B}\u{2C7E}-\u{2CE4}\u{2CEB}-\u{2CEE}\u{2CF2}\u{2CF3}\u{A640}-\u{A66D}\u{A680}-\u{A69B}\u{A722}-\u{A76F}\u{A771}-\u{A787}\u{A78B}-\u{A78E}\u{AB70}-\u{ABBF}\u{FB00}-\u{FB06}\u{FB13}-\u{FB17}\u{FF21}-\u{FF3A}\u{FF41}-\u{FF5A}\u{10400}-\u{1044F}\u{104B0}-\u{104D3}\u{104D8}-\u{104FB}\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}\u{118A0}-\u{118DF}\u{1E900}-\u{1E943}]+";
const CJK_HANGUL: &str = "[\u{4E00}-\u{9FA5}\u{800}-\u{4E00}\u{AC00}-\u{D7FF}]+";
const DEEPSEEK3_WORDS: &str = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
const SPARK_WORDS: &str = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+";
const UPPER_LOWER: &str =
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+";
const UPPER_LOWER2: &str =
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*";
/// The patterns llama.cpp replaces by hand-written splitters (its
/// `unicode_regex_split_custom` picks them by these exact strings).
const KIMI_K2: &str = r"\p{Han}+";
const AFMOE_DIGITS: &str = r"\p{AFMoE_digits}";
const TINY_AYA_DIGITS: &str = r"\d{1,3}(?=(?:\d{3})*\b)";
const AFMOE_CJK: &str = "[\u{4E00}-\u{9FFF}\u{3400}-\u{4DBF}\u{8C48}-\u{FAFF}\u{3040}-\u{309F}\u{30A0}-\u{30FF}\u{FF65}-\u{FF9F}\u{2F00}-\u{2FDF}\u{E40}-\u{E7F}\u{E80}-\u{EFF}\u{1780}-\u{17FF}\u{1000}-\u{109F}\u{AA60}-\u{AA7F}\u{A9E0}-\u{A9FF}\u{AC00}-\u{D7AF}\u{1100}-\u{11FF}]+";
const POR0: &str = " ?[^(\\s|.,!?\u{2026}\u{3002}\u{FF0C}\u{3001}\u{964}\u{6D4}\u{60C})]+";

/// The patterns of a family, in the order llama.cpp applies them.
pub(crate) fn patterns(family: Family) -> Vec<String> {
    use Family as F;
    let c = CONTRACTIONS;
    let s = |x: &str| x.to_owned();
    match family {
        F::Llama3 | F::Dbrx | F::Chatglm4 => vec![format!("{c}{LLAMA3_REST}")],
        F::Jais2 => vec![format!(
            r"{c}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s{{512}}(?!\S)|\s{{256}}(?!\S)|\s{{128}}(?!\S)|\s{{64}}(?!\S)|\s{{32}}(?!\S)|\s{{16}}(?!\S)|\s{{8}}(?!\S)|\s{{4}}(?!\S)|\s{{1,2}}(?!\S)|\s{{1}}"
        )],
        F::DeepseekLlm => vec![
            s("[\r\n]"),
            s(DEEPSEEK_LLM_LETTERS),
            s("\\s?[!-/:-~\u{FF01}-\u{FF0F}\u{FF1A}-\u{FF5E}\u{2018}-\u{201F}\u{3000}-\u{3002}]+"),
            s("\\s+$"),
            s(CJK_HANGUL),
            s(r"\p{N}+"),
        ],
        F::Deepseek3Llm => vec![s(r"\p{N}{1,3}"), s("[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+"), s(DEEPSEEK3_WORDS)],
        F::Spark25 => vec![s(r"\p{N}{1,3}"), s("[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+"), s(SPARK_WORDS), s(r"\p{N}")],
        F::Youtu => vec![
            s("[\u{AC00}-\u{D7A3}\u{3131}-\u{318E}]+|[\u{FF01}\u{2026}\u{201C}\u{201D}\u{2018}\u{2019}\u{2014}\u{FF1A}\u{FF1B}\u{FF0C}\u{3001}-\u{303F}\u{FE30}-\u{FE4F}]+|[\u{3105}-\u{312F}]+|[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+"),
            format!(
                r"{UPPER_LOWER}{c}?|{UPPER_LOWER2}{c}?|\p{{N}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
            ),
        ],
        F::DeepseekCoder => vec![s("[\r\n]"), s(r"\s?\p{L}+"), s(r"\s?\p{P}+"), s(CJK_HANGUL), s(r"\p{N}")],
        F::Falcon => vec![s(r"[\p{P}\$\+<=>\^~\|`]+"), s(GPT2), s("[0-9][0-9][0-9]")],
        F::Starcoder => vec![s(r"\p{N}"), s(GPT2)],
        F::Gpt2 => vec![s(GPT2)],
        F::Qwen2 | F::Grok2 => vec![format!("{c}{QWEN2_REST}")],
        F::Qwen35 => vec![format!("{c}{QWEN35_REST}")],
        F::Poro => vec![s(POR0)],
        F::Viking => vec![s(POR0), s(r"\p{N}")],
        F::Tekken => vec![format!(
            r"{CASED_WORDS}|{CASED_WORDS2}|\p{{N}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
        )],
        F::Chameleon => vec![
            s("<sentinel:[0-9]+>"),
            s("(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z"),
            s("([\\t\\n]|    |  )"),
            s(r"\p{N}"),
            s(r"[\p{P}!-/:-@\[-`{-~]"),
            s(GPT2),
        ],
        F::Gpt4o => vec![format!(
            r"{CASED_WORDS}{c}?|{CASED_WORDS2}{c}?|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
        )],
        F::GraniteEmbMulti => vec![format!(
            r"[^\r\n\p{{L}}\p{{N}}]?((?=[\p{{L}}\p{{M}}])([^a-z]))*((?=[\p{{L}}\p{{M}}])([^A-Z]))+{c}?|[^\r\n\p{{L}}\p{{N}}]?((?=[\p{{L}}\p{{M}}])([^a-z]))+((?=[\p{{L}}\p{{M}}])([^A-Z]))*{c}?|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
        )],
        F::Superbpe => vec![s(r"\p{N}+"), s(r"(?=(\d{3})+(?!\d))")],
        F::Bailingmoe => vec![s(
            r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",
        )],
        F::SeedCoder => vec![format!(
            r"{c}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}{{1}}| ?[^\s\p{{L}}\p{{N}}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"
        )],
        F::Ufakzeka => vec![s(
            r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        )],
        F::Laguna => vec![s(NEWLINES), format!("{c}{QWEN2_REST}")],
        F::ExaoneMoe => vec![format!(
            r"{c}|[^\r\n\p{{L}}\p{{N}}]?(?:\p{{L}}\p{{M}}*(?: \p{{L}}\p{{M}}*)*)+|\p{{N}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"
        )],
        // Gemma 4's split; llama.cpp forces BOS and keeps all-newline
        // tokens whole for Gemma 4 only.
        F::Gemma4 | F::SarvamMoe => vec![s(NEWLINES)],
        F::Minicpm5 => vec![
            s(r"\p{N}{1,3}"),
            format!(r"{c}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}+| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
        ],
        F::Whitespace => vec![s(r"\S+")],
        F::TinyAya => vec![
            s(TINY_AYA_DIGITS),
            format!(
                r"{UPPER_LOWER}{c}?|{UPPER_LOWER2}{c}?|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
            ),
        ],
        F::KimiK2 => vec![s(KIMI_K2)],
        F::Afmoe => vec![s(AFMOE_DIGITS), s(AFMOE_CJK), s(DEEPSEEK3_WORDS)],
        F::Default => vec![s(r"[\p{P}\$\+<=>\^~\|]+"), s(GPT2), s(r"\p{N}+"), s("[0-9][0-9][0-9]")],
    }
}

/// Whether the family's words are GPT-2 byte-encoded before merging
/// (`false`: raw UTF-8 with `<0xXX>` byte tokens).
pub(crate) fn byte_encode(family: Family) -> bool {
    !matches!(
        family,
        Family::Gemma4 | Family::SarvamMoe | Family::Whitespace
    )
}

/// One step of a split: one of llama.cpp's hand-written splitters when the
/// pattern is one of theirs (chosen by the exact pattern text, as llama.cpp
/// chooses), otherwise the pattern itself.
pub(crate) enum Step {
    Gpt2,
    Llama3(Llama3Shape),
    Newlines,
    KimiK2,
    DigitGroups,
    Regex(Pattern),
}

impl Step {
    pub(crate) fn new(pattern: &str) -> Result<Step, String> {
        let c = CONTRACTIONS;
        Ok(if pattern == GPT2 {
            Step::Gpt2
        } else if pattern == format!("{c}{LLAMA3_REST}") {
            Step::Llama3(Llama3Shape::Llama3)
        } else if pattern == format!("{c}{QWEN2_REST}") {
            Step::Llama3(Llama3Shape::Qwen2)
        } else if pattern == format!("{c}{QWEN35_REST}") {
            Step::Llama3(Llama3Shape::Qwen35)
        } else if pattern == NEWLINES {
            Step::Newlines
        } else if pattern == KIMI_K2 {
            Step::KimiK2
        } else if pattern == AFMOE_DIGITS || pattern == TINY_AYA_DIGITS {
            Step::DigitGroups
        } else {
            Step::Regex(Pattern::new(pattern)?)
        })
    }

    pub(crate) fn split(&self, cpts: &[u32], offsets: &[usize]) -> Vec<usize> {
        match self {
            Step::Gpt2 => split_custom::gpt2(cpts, offsets),
            Step::Llama3(shape) => split_custom::llama3(cpts, offsets, *shape),
            Step::Newlines => split_custom::newlines(cpts, offsets),
            Step::KimiK2 => split_custom::kimi_k2(cpts, offsets),
            Step::DigitGroups => split_custom::digit_groups(cpts, offsets),
            Step::Regex(p) => p.split(cpts, offsets),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const ALL: &[Family] = &[
        Family::Default,
        Family::Llama3,
        Family::Jais2,
        Family::Dbrx,
        Family::DeepseekLlm,
        Family::Deepseek3Llm,
        Family::Spark25,
        Family::Youtu,
        Family::DeepseekCoder,
        Family::Falcon,
        Family::Starcoder,
        Family::Gpt2,
        Family::Qwen2,
        Family::Qwen35,
        Family::Poro,
        Family::Chatglm4,
        Family::Viking,
        Family::Tekken,
        Family::Chameleon,
        Family::Gpt4o,
        Family::GraniteEmbMulti,
        Family::Superbpe,
        Family::Bailingmoe,
        Family::SeedCoder,
        Family::Ufakzeka,
        Family::Grok2,
        Family::Laguna,
        Family::ExaoneMoe,
        Family::Gemma4,
        Family::Minicpm5,
        Family::Whitespace,
        Family::TinyAya,
        Family::KimiK2,
        Family::Afmoe,
        Family::SarvamMoe,
    ];

    #[test]
    fn every_family_compiles() {
        for &family in ALL {
            for p in patterns(family) {
                Step::new(&p).unwrap_or_else(|e| panic!("{family:?}: {e}"));
            }
        }
    }

    /// Prints every pattern, one JSON string a line, to compare with
    /// llama.cpp's source (`cargo test -p gguf-core print_patterns --
    /// --ignored --nocapture`).
    #[test]
    #[ignore]
    fn print_patterns() {
        for &family in ALL {
            for p in patterns(family) {
                println!("PATTERN {p:?}");
            }
        }
    }

    #[test]
    fn custom_splitters_are_chosen_by_pattern() {
        assert!(matches!(Step::new(GPT2), Ok(Step::Gpt2)));
        assert!(matches!(
            Step::new(&patterns(Family::Llama3)[0]),
            Ok(Step::Llama3(Llama3Shape::Llama3))
        ));
        assert!(matches!(
            Step::new(&patterns(Family::Qwen2)[0]),
            Ok(Step::Llama3(Llama3Shape::Qwen2))
        ));
        assert!(matches!(
            Step::new(&patterns(Family::Gemma4)[0]),
            Ok(Step::Newlines)
        ));
        assert!(matches!(
            Step::new(&patterns(Family::Jais2)[0]),
            Ok(Step::Regex(_))
        ));
        assert!(matches!(
            Step::new(&patterns(Family::KimiK2)[0]),
            Ok(Step::KimiK2)
        ));
        for f in [Family::TinyAya, Family::Afmoe] {
            assert!(matches!(Step::new(&patterns(f)[0]), Ok(Step::DigitGroups)));
        }
    }
}
