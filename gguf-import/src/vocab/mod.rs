//! The tokenizer of a Hugging Face checkpoint as llama.cpp's `tokenizer.*`
//! metadata.
//!
//! What it reads, from the checkpoint directory: `tokenizer.json` (a BPE
//! vocabulary, through Hugging Face's own `tokenizers` crate),
//! `tokenizer.model` (SentencePiece's protobuf, see `spm`),
//! `added_tokens.json`, `tokenizer_config.json`, `chat_template.jinja` /
//! `chat_template.json`, and the special token ids of `config.json` (passed
//! in by the caller, who has parsed it already).
//!
//! What it writes: the `tokenizer.*` keys, and only those, with the values,
//! types and order llama.cpp's `convert_hf_to_gguf.py` gives them for
//! `LlamaForCausalLM` (and Mistral, which uses it), `Qwen2ForCausalLM` and
//! `Gemma3ForCausalLM`, so an imported model's header equals the
//! converter's. Why the converter and not our own judgement: llama.cpp's
//! loader and every tool around it were tested on the converter's output,
//! and users compare files byte for byte.
//!
//! Which vocabulary each architecture gets (the converter's `set_vocab`):
//! - llama: `tokenizer.model` if there is one (SentencePiece, `spm`); else a
//!   `tokenizer.json` BPE with byte fallback, Llama 2 style (`llama_hf`);
//!   else a byte-level BPE (`gpt2`). `tokenizer_config.json`'s
//!   `add_prefix_space`, when set, comes first as `add_space_prefix`.
//! - qwen2: SentencePiece if there is a `tokenizer.model`, else BPE.
//! - gemma3: SentencePiece plus `add_space_prefix = false`, else BPE.
//!
//! The BPE pre-tokenizer is named the converter's way (`pre_hash`): the
//! sha256 of the ids the Hugging Face tokenizer gives for a fixed text,
//! looked up in the converter's own list; an unknown hash is refused unless
//! the caller names the pre-tokenizer.
//!
//! Where we knowingly differ from the converter (it runs `transformers`):
//! a tokenizer whose `tokenizer_config.json` asks `transformers` to rebuild
//! it from the slow SentencePiece tokenizer (`from_slow`, or
//! `add_prefix_space` on a Llama tokenizer) is read as its `tokenizer.json`
//! says; special tokens named in `tokenizer_config.json` but absent from
//! the vocabulary are not appended as `transformers` would.

mod files;
mod gpt2;
mod hf;
mod keys;
mod llama_hf;
mod pre_hash;
mod special;
mod spm;
#[cfg(test)]
mod tests;

use std::path::Path;

use crate::error::Result;
use gguf_core::write::MetaValue;

use crate::arch::Vocab;
use files::Dir;
use keys::Keys;

/// llama.cpp's token types, as the converter writes them (`i32`).
pub(crate) mod token_type {
    pub(crate) const NORMAL: i32 = 1;
    pub(crate) const UNKNOWN: i32 = 2;
    pub(crate) const CONTROL: i32 = 3;
    pub(crate) const USER_DEFINED: i32 = 4;
    pub(crate) const UNUSED: i32 = 5;
    pub(crate) const BYTE: i32 = 6;
}

/// The `tokenizer.*` keys llama.cpp's converter writes for the checkpoint
/// in `dir` (GGUF architecture `arch`: `llama`, `qwen2` or `gemma3`), in its
/// order and with its types. `config` is the parsed `config.json`;
/// `pre_tokenizer` names the BPE pre-tokenizer when its hash is not in the
/// converter's list (`--pre-tokenizer NAME`), and is then written as is.
pub(crate) fn vocab_metadata(
    dir: &Path,
    vocab: Vocab,
    config: &serde_json::Value,
    pre_tokenizer: Option<&str>,
) -> Result<Vec<(String, MetaValue<'static>)>> {
    if let Some(name) = pre_tokenizer {
        pre_hash::check_name(name)?;
    }
    let dir = Dir::new(dir, config);
    let mut keys = Keys::default();
    match vocab {
        Vocab::Llama => llama(&dir, &mut keys, pre_tokenizer)?,
        Vocab::SentencePieceOrBpe => {
            if dir.has("tokenizer.model") {
                spm::set_vocab(&dir, &mut keys)?;
            } else {
                gpt2::set_vocab(&dir, &mut keys, pre_tokenizer)?;
            }
        }
        Vocab::Gemma => {
            if dir.has("tokenizer.model") {
                spm::set_vocab(&dir, &mut keys)?;
                keys.set("tokenizer.ggml.add_space_prefix", false);
            } else {
                gpt2::set_vocab(&dir, &mut keys, pre_tokenizer)?;
            }
        }
        Vocab::Bpe => gpt2::set_vocab(&dir, &mut keys, pre_tokenizer)?,
        Vocab::Phi3 => spm::set_vocab_phi3(&dir, &mut keys)?,
        Vocab::BpeWithSpecials(specials) => {
            gpt2::set_vocab_with(&dir, &mut keys, pre_tokenizer, specials)?
        }
    }
    Ok(keys.into_vec())
}

/// `LlamaModel.set_vocab`: SentencePiece, else a Llama 2 style BPE
/// `tokenizer.json`, else a byte-level BPE.
fn llama(dir: &Dir, keys: &mut Keys, pre_tokenizer: Option<&str>) -> Result<()> {
    if let Some(config) = dir.tokenizer_config()?
        && let Some(add) = config.get("add_prefix_space").and_then(|v| v.as_bool())
    {
        keys.set("tokenizer.ggml.add_space_prefix", add);
    }
    if dir.has("tokenizer.model") {
        spm::set_vocab(dir, keys)?;
    } else if let Some(json) = llama_hf::applies(dir)? {
        llama_hf::set_vocab(dir, &json, keys)?;
    } else {
        gpt2::set_vocab(dir, keys, pre_tokenizer)?;
    }
    // The converter's special cases for CodeLlama (vocab 32016) and Granite
    // (49152) are for checkpoints of those models only.
    match dir.hparam_u64(&["vocab_size"]) {
        Some(32016) => {
            for (key, id) in [
                ("tokenizer.ggml.prefix_token_id", 32007u32),
                ("tokenizer.ggml.suffix_token_id", 32008),
                ("tokenizer.ggml.middle_token_id", 32009),
                ("tokenizer.ggml.eot_token_id", 32010),
            ] {
                keys.set(key, id);
            }
        }
        Some(49152) => keys.set("tokenizer.ggml.add_bos_token", false),
        _ => {}
    }
    Ok(())
}
