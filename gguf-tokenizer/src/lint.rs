//! The classic cause of wrong token counts: a byte-level BPE vocabulary
//! with no pre-tokenizer named (or `default`), which llama.cpp then splits
//! with its generic rules instead of the model's own. When the token list
//! is one a known pre-tokenizer was made for (told by tokens only that
//! tokenizer has), that name is suggested.

use gguf_core::Gguf;
use gguf_core::Value;

/// A pre-tokenizer the vocabulary should name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreHint {
    /// What `tokenizer.ggml.pre` holds (`None`: the key is missing).
    pub current: Option<String>,
    /// The name llama.cpp knows for this vocabulary's pre-tokenizer.
    pub suggested: &'static str,
    /// Which tokens told it.
    pub evidence: String,
}

impl std::fmt::Display for PreHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let current = match &self.current {
            Some(c) => format!("is {c:?}"),
            None => "is missing".into(),
        };
        write!(
            f,
            "tokenizer.ggml.pre {current}, so llama.cpp splits text with its generic rules, but the \
             vocabulary is {}'s ({}): token counts will differ from the model's; set it with \
             `gguf set FILE tokenizer.ggml.pre {}`",
            self.suggested, self.evidence, self.suggested
        )
    }
}

/// Known vocabularies: the pre-tokenizer, and tokens that together only
/// its vocabulary has (with the vocabulary size range where one family
/// shares its markers between sizes).
const FINGERPRINTS: &[(&str, &[&str], std::ops::RangeInclusive<usize>)] = &[
    (
        "llama-bpe",
        &["<|begin_of_text|>", "<|start_header_id|>"],
        128_000..=128_512,
    ),
    (
        "qwen2",
        &["<|im_start|>", "<|endoftext|>", "<|fim_prefix|>"],
        151_000..=152_100,
    ),
    (
        "deepseek-coder",
        &["<｜begin▁of▁sentence｜>", "<｜fim▁begin｜>"],
        32_000..=33_000,
    ),
    (
        "deepseek-llm",
        &["<｜begin▁of▁sentence｜>"],
        100_000..=103_000,
    ),
    (
        "deepseek-v3",
        &["<｜begin▁of▁sentence｜>"],
        128_000..=130_000,
    ),
    ("falcon", &[">>TITLE<<", ">>ABSTRACT<<"], 0..=usize::MAX),
    (
        "command-r",
        &["<BOS_TOKEN>", "<|START_OF_TURN_TOKEN|>"],
        0..=usize::MAX,
    ),
    ("starcoder", &["<fim_prefix>", "<gh_stars>"], 0..=usize::MAX),
    (
        "refact",
        &["<fim_prefix>", "<empty_output>"],
        0..=usize::MAX,
    ),
    ("mpt", &["<|padding|>", "<|endoftext|>"], 50_200..=50_500),
    ("gpt-2", &["<|endoftext|>"], 50_257..=50_257),
];

/// The pre-tokenizer a byte-level BPE model should name, when it names
/// none or `default` and its token list is one of a known tokenizer's.
/// `None` for other vocabularies, models that name a pre-tokenizer, and
/// token lists we do not recognize.
///
/// ```
/// # fn main() -> gguf_tokenizer::Result<()> {
/// use gguf_tokenizer::pre_tokenizer_hint;
/// let mut b = gguf_core::write::Builder::new();
/// b.set("tokenizer.ggml.model", "gpt2")?;
/// let names: Vec<String> = (0..50_256).map(|i| format!("t{i}")).collect();
/// let mut tokens: Vec<&str> = names.iter().map(String::as_str).collect();
/// tokens.push("<|endoftext|>");
/// b.set("tokenizer.ggml.tokens", gguf_core::format::OwnedValue::from(tokens))?;
/// let hint = pre_tokenizer_hint(&b.preview()?).unwrap();
/// assert_eq!(hint.suggested, "gpt-2");
/// # Ok(()) }
/// ```
pub fn pre_tokenizer_hint(model: &impl Gguf) -> Option<PreHint> {
    let Some(Value::String("gpt2")) = model.value("tokenizer.ggml.model") else {
        return None;
    };
    let current = match model.value("tokenizer.ggml.pre") {
        None => None,
        Some(Value::String("default")) => Some("default".to_owned()),
        Some(_) => return None,
    };
    let tokens: Vec<&str> = model.get_strings("tokenizer.ggml.tokens").ok()?.collect();
    let has = |t: &str| tokens.contains(&t);
    FINGERPRINTS
        .iter()
        .find(|(_, markers, sizes)| sizes.contains(&tokens.len()) && markers.iter().all(|m| has(m)))
        .map(|(name, markers, _)| PreHint {
            current,
            suggested: name,
            evidence: format!("{} tokens with {}", tokens.len(), markers.join(", ")),
        })
}
