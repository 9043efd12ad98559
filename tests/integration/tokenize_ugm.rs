//! Unigram (`t5`) vocabularies: the committed one
//! (`tests/data/tokenizer/ugm.gguf`, a SentencePiece model with T5's
//! nmt_nfkc character map, made by `tests/oracles/tokenizer_ugm.py` and
//! written by our Builder) and its llama.cpp goldens (`ugm.json`, checked
//! with the other goldens in `tokenize_vocab`), plus the rules llama.cpp
//! applies around the Unigram search.

use std::path::{Path, PathBuf};

use gguf::format::OwnedValue;
use gguf::tokenizer::{Tokenizer, VocabType};
use gguf::write::Builder;
use gguf::GgufFile;

use super::util::{gguf, stdout};

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tokenizer/ugm.gguf")
}

/// Writes the GGUF that llama.cpp's T5 converter would write from a spec
/// made by `tokenizer_ugm.py train` (opt-in: `GGUF_UGM_SPEC`, and
/// `GGUF_UGM_OUT` for where).
#[test]
fn ugm_vocab_from_spec() {
    let (Ok(spec), Ok(out)) = (
        std::env::var("GGUF_UGM_SPEC"),
        std::env::var("GGUF_UGM_OUT"),
    ) else {
        eprintln!("skipped: set GGUF_UGM_SPEC and GGUF_UGM_OUT to write the Unigram vocabulary");
        return;
    };
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(spec).unwrap()).unwrap();
    let strings = |k: &str| -> Vec<String> {
        spec[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let charsmap: Vec<u8> = (0..spec["charsmap"].as_str().unwrap().len() / 2)
        .map(|i| {
            u8::from_str_radix(&spec["charsmap"].as_str().unwrap()[2 * i..2 * i + 2], 16).unwrap()
        })
        .collect();
    let mut b = Builder::new();
    b.set("general.architecture", "t5").unwrap();
    b.set("general.name", "ugm test vocabulary").unwrap();
    b.set("tokenizer.ggml.model", "t5").unwrap();
    b.set("tokenizer.ggml.pre", "default").unwrap();
    b.set("tokenizer.ggml.tokens", OwnedValue::from(strings("tokens")))
        .unwrap();
    let scores: Vec<f32> = spec["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    b.set("tokenizer.ggml.scores", OwnedValue::from(scores))
        .unwrap();
    let types: Vec<i32> = spec["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap() as i32)
        .collect();
    b.set("tokenizer.ggml.token_type", OwnedValue::from(types))
        .unwrap();
    for key in ["add_space_prefix", "remove_extra_whitespaces"] {
        b.set(
            format!("tokenizer.ggml.{key}"),
            spec[key].as_bool().unwrap(),
        )
        .unwrap();
    }
    b.set(
        "tokenizer.ggml.precompiled_charsmap",
        OwnedValue::from(charsmap),
    )
    .unwrap();
    for (key, name) in [("eos", "eos"), ("unk", "unknown"), ("pad", "padding")] {
        b.set(
            format!("tokenizer.ggml.{name}_token_id"),
            spec[key].as_u64().unwrap() as u32,
        )
        .unwrap();
    }
    b.write_to_path(&out).unwrap();
}

#[test]
fn t5_is_a_unigram_vocabulary_that_adds_eos() {
    let tok = Tokenizer::from_model(&GgufFile::open(committed()).unwrap()).unwrap();
    assert_eq!(tok.vocab_type(), VocabType::Ugm);
    assert_eq!(tok.pre_name(), None);
    let plain = tok.encode("Hello world", false, false).unwrap();
    let added = tok.encode("Hello world", true, false).unwrap();
    assert_eq!(added[..plain.len()], plain[..]);
    assert_eq!(added.last().copied(), tok.specials().eos);
    assert!(!tok.flags().add_bos);
    // The leading space the normalizer adds is removed again.
    assert_eq!(tok.decode(&plain, false, false).unwrap(), b"Hello world");
}

/// A hand-made vocabulary: the highest-scoring path wins, code points no
/// token covers become one unknown token per run, user-defined tokens are
/// split off first, and without a character map text passes through
/// unchanged.
#[test]
fn viterbi_picks_the_best_scoring_path() {
    let mut b = Builder::new();
    b.set("tokenizer.ggml.model", "t5").unwrap();
    let tokens = vec![
        "<pad>",
        "</s>",
        "<unk>",
        "\u{2581}ab",
        "\u{2581}a",
        "b",
        "\u{2581}",
        "c",
        "bc",
        "XY",
    ];
    b.set("tokenizer.ggml.tokens", OwnedValue::from(tokens))
        .unwrap();
    let scores = vec![0f32, 0.0, 0.0, -5.0, -1.0, -1.0, -1.0, -2.0, -1.5, -100.0];
    b.set("tokenizer.ggml.scores", OwnedValue::from(scores))
        .unwrap();
    let types = vec![3i32, 3, 2, 1, 1, 1, 1, 1, 1, 4];
    b.set("tokenizer.ggml.token_type", OwnedValue::from(types))
        .unwrap();
    b.set("tokenizer.ggml.add_space_prefix", true).unwrap();
    b.set("tokenizer.ggml.remove_extra_whitespaces", true)
        .unwrap();
    let model = b.preview().unwrap();
    let tok = Tokenizer::from_model(&model).unwrap();
    // "▁a" + "b" (-2) beats "▁ab" (-5); "bc" (-1.5) beats "b" + "c" (-3).
    assert_eq!(tok.encode("ab", false, false).unwrap(), [4, 5]);
    assert_eq!(tok.encode("abc", false, false).unwrap(), [4, 8]);
    // Spaces merge; unknown runs are one <unk>.
    assert_eq!(
        tok.encode("  a   éé b ", false, false).unwrap(),
        [4, 6, 2, 6, 5]
    );
    // User-defined "XY" is split off before the search; each side gets
    // its own leading space.
    assert_eq!(tok.encode("cXYc", false, false).unwrap(), [6, 7, 9, 6, 7]);
    assert_eq!(tok.encode("", true, false).unwrap(), [1]);
}

/// `gguf tokenize` on a Unigram model: llama-tokenize adds special tokens
/// by the model's add_bos rule, which T5 leaves off, so no EOS either
/// (llama-tokenize prints `[111, 375, 2003]` for this text: the
/// user-defined `<extra_id_0>` is matched).
#[test]
fn cli_tokenizes_a_unigram_model_as_llama_tokenize() {
    let model = committed().display().to_string();
    let text = "Hello world <extra_id_0>";
    let out = stdout(&gguf(&["tokenize", &model, "-p", text, "--ids"]));
    assert_eq!(out, "[111, 375, 2003]\n");
    let tok = Tokenizer::from_model(&GgufFile::open(&model).unwrap()).unwrap();
    assert_eq!(tok.encode(text, false, true).unwrap(), [111, 375, 2003]);
}
