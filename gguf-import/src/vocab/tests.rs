//! Unit tests of the tokenizer import.
//!
//! `testdata/<name>/` are tiny Hugging Face tokenizer directories made by
//! `testdata/make_fixtures.py`; `testdata/<name>.expected.json` is what the
//! vendored llama.cpp converter's own `set_vocab` gives for them
//! (`testdata/converter_keys.py`): every `tokenizer.*` key with its type
//! and value in the converter's order, and for BPE tokenizers the
//! converter's hash of the check text's ids.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{pre_hash, vocab_metadata};
use crate::arch::{self, Vocab};
use crate::error::{Error, VocabError};

/// The vocabulary rules of a GGUF architecture's table.
fn vocab_of(gguf: &str) -> Vocab {
    arch::ARCHITECTURES
        .iter()
        .find(|a| a.gguf == gguf)
        .map(|a| a.vocab)
        .unwrap_or_else(|| panic!("no table for {gguf}"))
}
use gguf_core::format::{OwnedArray, OwnedValue};
use gguf_core::write::MetaValue;

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/vocab/testdata")
        .join(name)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn type_name(v: &OwnedValue) -> &'static str {
    match v {
        OwnedValue::String(_) => "STRING",
        OwnedValue::U32(_) => "UINT32",
        OwnedValue::I32(_) => "INT32",
        OwnedValue::F32(_) => "FLOAT32",
        OwnedValue::Bool(_) => "BOOL",
        OwnedValue::Array(_) => "ARRAY",
        _ => "OTHER",
    }
}

/// Our keys in `converter_keys.py`'s form.
fn as_converter_json(keys: &[(String, MetaValue<'static>)]) -> Value {
    let rows: Vec<Value> = keys
        .iter()
        .map(|(k, v)| {
            let v = v.to_owned_value();
            let (sub, value) = match &v {
                OwnedValue::Array(OwnedArray::String(s)) => (json!("STRING"), json!(s)),
                OwnedValue::Array(OwnedArray::I32(s)) => (json!("INT32"), json!(s)),
                OwnedValue::Array(OwnedArray::F32(s)) => (
                    json!("FLOAT32"),
                    json!(s.iter().map(|f| f64::from(*f)).collect::<Vec<_>>()),
                ),
                OwnedValue::Array(_) => (json!("OTHER"), Value::Null),
                OwnedValue::String(s) => (Value::Null, json!(s)),
                OwnedValue::U32(n) => (Value::Null, json!(n)),
                OwnedValue::Bool(b) => (Value::Null, json!(b)),
                _ => (Value::Null, Value::Null),
            };
            json!([k, type_name(&v), sub, value])
        })
        .collect();
    Value::Array(rows)
}

/// Runs one fixture and compares key by key (a readable first difference
/// rather than two 400-token dumps).
fn check_fixture(name: &str, arch: &str, pre: Option<&str>) {
    let dir = testdata(name);
    let expected = read_json(&testdata(&format!("{name}.expected.json")));
    let config = read_json(&dir.join("config.json"));
    let ours = vocab_metadata(&dir, vocab_of(arch), &config, pre).unwrap();
    let ours = as_converter_json(&ours);
    let theirs = expected["keys"].as_array().unwrap();
    let ours = ours.as_array().unwrap();
    let names = |rows: &[Value]| -> Vec<String> {
        rows.iter()
            .map(|r| r[0].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(ours), names(theirs), "{name}: keys and their order");
    for (a, b) in ours.iter().zip(theirs) {
        assert_eq!(a[1], b[1], "{name}: type of {}", a[0]);
        assert_eq!(a[2], b[2], "{name}: element type of {}", a[0]);
        if let (Some(x), Some(y)) = (a[3].as_array(), b[3].as_array()) {
            assert_eq!(x.len(), y.len(), "{name}: length of {}", a[0]);
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                assert_eq!(p, q, "{name}: {}[{i}]", a[0]);
            }
        } else {
            assert_eq!(a[3], b[3], "{name}: value of {}", a[0]);
        }
    }
}

/// The converter's hash for a fixture, and ours.
fn hashes(name: &str) -> (String, String) {
    let dir = testdata(name);
    let expected = read_json(&testdata(&format!("{name}.expected.json")));
    let config = read_json(&dir.join("config.json"));
    let d = super::files::Dir::new(&dir, &config);
    let json = d.json("tokenizer.json").unwrap().unwrap();
    let hf = super::hf::load(&d, json).unwrap();
    let ours = pre_hash::check_hash(&hf.tokenizer).unwrap();
    (expected["chkhsh"].as_str().unwrap().to_owned(), ours)
}

#[test]
fn llama_bpe_keys_equal_the_converters() {
    check_fixture("llama-bpe", "llama", Some("llama-bpe"));
}

#[test]
fn qwen2_bpe_keys_equal_the_converters() {
    check_fixture("qwen2-bpe", "qwen2", Some("qwen2"));
}

#[test]
fn llama_spm_keys_equal_the_converters() {
    check_fixture("llama-spm", "llama", None);
}

#[test]
fn gemma3_spm_keys_equal_the_converters() {
    check_fixture("gemma3-spm", "gemma3", None);
}

#[test]
fn llama_hf_tokenizer_json_keys_equal_the_converters() {
    check_fixture("llama-hf", "llama", None);
}

#[test]
fn check_text_hash_equals_the_converters() {
    // llama-bpe: a BOS template post-processor (tokenizer_class
    // PreTrainedTokenizerFast, so transformers keeps it); qwen2-bpe: NFC and
    // a byte-level post-processor that adds nothing.
    for name in ["llama-bpe", "qwen2-bpe"] {
        let (theirs, ours) = hashes(name);
        assert_eq!(ours, theirs, "{name}");
    }
}

#[test]
fn unknown_hash_is_refused_naming_the_flag() {
    let dir = testdata("qwen2-bpe");
    let config = read_json(&dir.join("config.json"));
    let err = vocab_metadata(&dir, vocab_of("qwen2"), &config, None).unwrap_err();
    let (theirs, _) = hashes("qwen2-bpe");
    match &err {
        Error::Vocab(VocabError::UnknownPreTokenizer { file, hash }) => {
            assert!(file.ends_with("tokenizer.json"));
            assert_eq!(hash, &theirs);
        }
        other => panic!("unexpected: {other}"),
    }
    assert!(err.to_string().contains("--pre-tokenizer NAME"), "{err}");
}

#[test]
fn pre_tokenizer_name_must_be_one_llama_cpp_knows() {
    let dir = testdata("qwen2-bpe");
    let config = read_json(&dir.join("config.json"));
    let err = vocab_metadata(&dir, vocab_of("qwen2"), &config, Some("qwen-2")).unwrap_err();
    assert!(
        matches!(&err, Error::Vocab(VocabError::UnknownPreTokenizerName { name }) if name == "qwen-2"),
        "{err}"
    );
    for name in [
        "qwen2",
        "llama-bpe",
        "gpt-2",
        "default",
        "olmo",
        "jina-v2-en",
    ] {
        pre_hash::check_name(name).unwrap();
    }
}

#[test]
fn hash_table_lookup_takes_the_converters_later_name() {
    // The converter's chain of `if`s lets a later duplicate win.
    let mpt_olmo = "b6dc8df998e1cfbdc4eac8243701a65afe638679230920b50d6f17d81c098166";
    assert_eq!(pre_hash::name_for(mpt_olmo), Some("olmo"));
    // Llama 3's tokenizer.
    let llama3 = "0ef9807a4087ebef797fc749390439009c3b9eda9ad1a097abbe738f486c01e5";
    assert_eq!(pre_hash::name_for(llama3), Some("llama-bpe"));
    assert_eq!(pre_hash::name_for("00"), None);
}

#[test]
fn hash_is_of_the_python_list_text() {
    // Python: sha256(str([1, 2, 3]).encode()).hexdigest(), and of [].
    assert_eq!(
        pre_hash::hash_ids(&[1, 2, 3]),
        "a36b1f2c3f84522dd1005145646617d7054c0851e97c72a039c0bdfac9fa07f3"
    );
    assert_eq!(
        pre_hash::hash_ids(&[]),
        "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
    );
    assert_eq!(pre_hash::CHECK_TEXT.chars().count(), 350);
}

#[test]
fn a_missing_tokenizer_is_an_error() {
    let empty = tempfile::tempdir().unwrap();
    let err = vocab_metadata(empty.path(), vocab_of("qwen2"), &json!({}), None).unwrap_err();
    assert!(
        matches!(err, Error::Vocab(VocabError::NoTokenizer { .. })),
        "{err}"
    );
}

/// The pre-tokenizers of three real tokenizers, rebuilt from llama.cpp's
/// `ggml-vocab-*.gguf` test vocabularies (tokens, types and merges are in
/// them; the pre-tokenizer settings are those of the original
/// `tokenizer.json`s): the hash we compute is the one the converter lists
/// for them. Opt-in, as the vocabularies are llama.cpp's files.
#[test]
fn real_tokenizers_hash_to_their_converter_names() {
    let Ok(models) = std::env::var("GGUF_LLAMA_VOCABS") else {
        eprintln!(
            "skipped: set GGUF_LLAMA_VOCABS to llama.cpp's models/ directory (ggml-vocab-*.gguf)"
        );
        return;
    };
    const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    // (vocabulary, split regex, NFC, BOS template, tokenizer class)
    let cases = [
        ("gpt-2", None, false, None, "GPT2Tokenizer"),
        (
            "llama-bpe",
            Some(LLAMA3),
            false,
            Some("<|begin_of_text|>"),
            "PreTrainedTokenizerFast",
        ),
        ("qwen2", Some(QWEN2), true, None, "Qwen2Tokenizer"),
    ];
    for (name, regex, nfc, bos, class) in cases {
        let path = Path::new(&models).join(format!("ggml-vocab-{name}.gguf"));
        let file = gguf_core::read::GgufFile::open(path.as_path()).unwrap();
        let tok =
            <gguf_core::TokenizerMetadata as gguf_core::FromMetadata>::from_gguf(&file).unwrap();
        let types = tok.token_type.unwrap();
        let mut vocab = serde_json::Map::new();
        let mut added = Vec::new();
        for (i, (t, ty)) in tok.tokens.iter().zip(&types).enumerate() {
            match ty {
                1 | 6 => {
                    vocab.insert(t.clone(), json!(i));
                }
                3 | 4 => added.push(
                    json!({"id": i, "content": t, "single_word": false, "lstrip": false,
                    "rstrip": false, "normalized": false, "special": *ty == 3}),
                ),
                _ => {}
            }
        }
        let merges: Vec<Value> = tok
            .merges
            .unwrap()
            .iter()
            .map(|m| {
                let (a, b) = m.split_once(' ').unwrap();
                json!([a, b])
            })
            .collect();
        let byte_level = |use_regex: bool| json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": use_regex});
        let pre = match regex {
            None => byte_level(true),
            Some(r) => json!({"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": false},
                byte_level(false)]}),
        };
        let post_bl = json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true});
        let post = match bos {
            None => post_bl,
            Some(bos) => {
                let id = tok.tokens.iter().position(|t| t == bos).unwrap();
                let special = json!({"SpecialToken": {"id": bos, "type_id": 0}});
                json!({"type": "Sequence", "processors": [post_bl, {"type": "TemplateProcessing",
                    "single": [special, {"Sequence": {"id": "A", "type_id": 0}}],
                    "pair": [special, {"Sequence": {"id": "A", "type_id": 0}}, special, {"Sequence": {"id": "B", "type_id": 1}}],
                    "special_tokens": {bos: {"id": bos, "ids": [id], "tokens": [bos]}}}]})
            }
        };
        let tokenizer = json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
            "normalizer": if nfc { json!({"type": "NFC"}) } else { Value::Null },
            "pre_tokenizer": pre, "post_processor": post,
            "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
            "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                "ignore_merges": name == "llama-bpe", "vocab": vocab, "merges": merges},
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), tokenizer.to_string()).unwrap();
        std::fs::write(
            dir.path().join("tokenizer_config.json"),
            json!({ "tokenizer_class": class }).to_string(),
        )
        .unwrap();
        let config = json!({"model_type": "gpt2"});
        let d = super::files::Dir::new(dir.path(), &config);
        let hf = super::hf::load(&d, tokenizer).unwrap();
        let hash = pre_hash::check_hash(&hf.tokenizer).unwrap();
        assert_eq!(pre_hash::name_for(&hash), Some(name), "{name}: hash {hash}");
    }
}

/// conv's fixtures (`tests/data/import/`): each checkpoint's `tokenizer.*`
/// keys, ours against the vendored converter's output file (keys, order,
/// types, values), and for the BPE ones our check-text hash against the
/// one the converter computed (tests/data/import/README.md).
#[test]
fn keys_equal_the_converter_files_tokenizer_keys() {
    use gguf_core::read::GgufFile;
    use gguf_core::Gguf;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/import");
    let cases = [
        ("llama-bpe", "llama", Some("llama-bpe")),
        ("llama-spm", "llama", None),
        ("mistral-swa", "llama", None),
        ("qwen2-bias", "qwen2", Some("qwen2")),
        ("gemma3", "gemma3", None),
    ];
    for (name, arch, pre) in cases {
        let dir = root.join(name);
        let config = read_json(&dir.join("config.json"));
        let ours = vocab_metadata(&dir, vocab_of(arch), &config, pre).unwrap();
        let file = GgufFile::open(root.join(format!("{name}.f16.gguf")).as_path()).unwrap();
        let theirs: Vec<(String, OwnedValue)> = file
            .metadata()
            .filter(|(k, _)| k.starts_with("tokenizer."))
            .map(|(k, v)| (k.to_owned(), OwnedValue::from_value(&v)))
            .collect();
        let our_names: Vec<&str> = ours.iter().map(|(k, _)| k.as_str()).collect();
        let their_names: Vec<&str> = theirs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(our_names, their_names, "{name}: keys and their order");
        for ((key, a), (_, b)) in ours.iter().zip(&theirs) {
            let a = a.to_owned_value();
            assert_eq!(a.value_type(), b.value_type(), "{name}: type of {key}");
            match (&a, b) {
                (OwnedValue::Array(x), OwnedValue::Array(y)) => {
                    assert_eq!(
                        x.element_type(),
                        y.element_type(),
                        "{name}: element type of {key}"
                    );
                    assert_eq!(x.len(), y.len(), "{name}: length of {key}");
                    assert!(x == y, "{name}: values of {key} differ");
                }
                _ => assert_eq!(a, *b, "{name}: value of {key}"),
            }
        }
    }
    let converter_hashes = [
        (
            "llama-bpe",
            "fb8c91a09497c6001a93e314cd56fd6638ae01f3689998fd1fba4b7d8baf85b4",
        ),
        (
            "qwen2-bias",
            "e7653b233e5be7704491d2b548b570338dcf2c2a444a29bfa00be1713238e522",
        ),
    ];
    for (name, theirs) in converter_hashes {
        let dir = root.join(name);
        let config = read_json(&dir.join("config.json"));
        let d = super::files::Dir::new(&dir, &config);
        let json = d.json("tokenizer.json").unwrap().unwrap();
        let hf = super::hf::load(&d, json).unwrap();
        assert_eq!(
            pre_hash::check_hash(&hf.tokenizer).unwrap(),
            theirs,
            "{name}"
        );
    }
}

/// Writes a hand-made checkpoint directory (file name, JSON) and returns
/// our keys for it in `converter_keys.py`'s form.
fn hand_made(files: &[(&str, Value)], arch: &str, pre: Option<&str>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    for (name, value) in files {
        std::fs::write(dir.path().join(name), value.to_string()).unwrap();
    }
    let config = files
        .iter()
        .find(|(n, _)| *n == "config.json")
        .unwrap()
        .1
        .clone();
    as_converter_json(&vocab_metadata(dir.path(), vocab_of(arch), &config, pre).unwrap())
}

fn added(id: u32, content: &str) -> Value {
    json!({"id": id, "content": content, "single_word": false, "lstrip": false, "rstrip": false,
        "normalized": false, "special": true})
}

fn bpe_model(vocab: Value, merges: Value) -> Value {
    json!({"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
        "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
        "vocab": vocab, "merges": merges})
}

/// A template that adds `</s>` while tokenizer_config.json's EOS is
/// another token: the converter makes `</s>` the EOS and the configured
/// one the EOT. Expected keys: the vendored converter's, for these files.
#[test]
fn template_eos_other_than_the_configured_one_becomes_eot() {
    let st = |t: &str, i: u32| json!({"SpecialToken": {"id": t, "type_id": i}});
    let sq = |t: &str, i: u32| json!({"Sequence": {"id": t, "type_id": i}});
    let tokenizer = json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [added(3, "<s>"), added(4, "</s>"), added(5, "<|eot|>")],
        "normalizer": null, "pre_tokenizer": null, "decoder": null,
        "post_processor": {"type": "TemplateProcessing",
            "single": [st("<s>", 0), sq("A", 0), st("</s>", 0)],
            "pair": [st("<s>", 0), sq("A", 0), st("</s>", 0), sq("B", 1), st("</s>", 1)],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]},
                "</s>": {"id": "</s>", "ids": [4], "tokens": ["</s>"]}}},
        "model": bpe_model(json!({"a": 0, "b": 1, "ab": 2, "<s>": 3, "</s>": 4, "<|eot|>": 5}), json!(["a b"])),
    });
    let ours = hand_made(
        &[
            ("tokenizer.json", tokenizer),
            (
                "tokenizer_config.json",
                json!({"bos_token": "<s>", "eos_token": "<|eot|>",
                "add_eos_token": true, "tokenizer_class": "PreTrainedTokenizerFast"}),
            ),
            (
                "config.json",
                json!({"vocab_size": 6, "model_type": "llama"}),
            ),
        ],
        "llama",
        Some("gpt-2"),
    );
    let expected = json!([
        ["tokenizer.ggml.model", "STRING", null, "gpt2"],
        ["tokenizer.ggml.pre", "STRING", null, "gpt-2"],
        [
            "tokenizer.ggml.tokens",
            "ARRAY",
            "STRING",
            ["a", "b", "ab", "<s>", "</s>", "<|eot|>"]
        ],
        [
            "tokenizer.ggml.token_type",
            "ARRAY",
            "INT32",
            [1, 1, 1, 3, 3, 3]
        ],
        ["tokenizer.ggml.merges", "ARRAY", "STRING", ["a b"]],
        ["tokenizer.ggml.bos_token_id", "UINT32", null, 3],
        ["tokenizer.ggml.eos_token_id", "UINT32", null, 4],
        ["tokenizer.ggml.eot_token_id", "UINT32", null, 5],
        ["tokenizer.ggml.add_bos_token", "BOOL", null, true],
        ["tokenizer.ggml.add_eos_token", "BOOL", null, true],
        ["tokenizer.ggml.add_sep_token", "BOOL", null, false],
    ]);
    assert_eq!(ours, expected);
}

/// RoBERTa's post-processor (BOS, EOS and SEP added, CLS and SEP taken
/// from it), merges as pairs with a space (written as U+0120), a
/// lower-casing BERT normalizer. Expected keys: the vendored converter's.
#[test]
fn roberta_processor_merge_pairs_and_normalizer() {
    let tokenizer = json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [added(3, "<s>"), added(4, "</s>"), added(5, "<pad>")],
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
            "strip_accents": null, "lowercase": true},
        "pre_tokenizer": null, "decoder": null,
        "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 4], "cls": ["<s>", 3],
            "trim_offsets": true, "add_prefix_space": false},
        "model": bpe_model(json!({"a": 0, " b": 1, "a b": 2, "<s>": 3, "</s>": 4, "<pad>": 5}), json!([["a", " b"]])),
    });
    let ours = hand_made(
        &[
            ("tokenizer.json", tokenizer),
            (
                "tokenizer_config.json",
                json!({"pad_token": "<pad>", "tokenizer_class": "PreTrainedTokenizerFast"}),
            ),
            (
                "config.json",
                json!({"vocab_size": 6, "model_type": "qwen2"}),
            ),
        ],
        "qwen2",
        Some("gpt-2"),
    );
    let expected = json!([
        ["tokenizer.ggml.model", "STRING", null, "gpt2"],
        ["tokenizer.ggml.pre", "STRING", null, "gpt-2"],
        [
            "tokenizer.ggml.tokens",
            "ARRAY",
            "STRING",
            ["a", " b", "a b", "<s>", "</s>", "<pad>"]
        ],
        [
            "tokenizer.ggml.token_type",
            "ARRAY",
            "INT32",
            [1, 1, 1, 3, 3, 3]
        ],
        ["tokenizer.ggml.merges", "ARRAY", "STRING", ["a \u{120}b"]],
        ["tokenizer.ggml.seperator_token_id", "UINT32", null, 4],
        ["tokenizer.ggml.padding_token_id", "UINT32", null, 5],
        ["tokenizer.ggml.add_bos_token", "BOOL", null, true],
        ["tokenizer.ggml.add_eos_token", "BOOL", null, true],
        ["tokenizer.ggml.add_sep_token", "BOOL", null, true],
        ["tokenizer.ggml.normalizer.lowercase", "BOOL", null, true],
    ]);
    assert_eq!(ours, expected);
}

/// Broken input: an error naming the file and what is wrong in it, never a
/// panic.
#[test]
fn broken_files_are_errors_naming_file_and_place() {
    let run = |files: &[(&str, &[u8])], arch: &str, config: Value| {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        vocab_metadata(dir.path(), vocab_of(arch), &config, Some("gpt-2"))
            .unwrap_err()
            .to_string()
    };
    let msg = run(&[("tokenizer.json", b"{ not json")], "qwen2", json!({}));
    assert!(msg.contains("tokenizer.json: invalid JSON"), "{msg}");
    let msg = run(
        &[("tokenizer.model", b"\xff\xff\xff\xff")],
        "llama",
        json!({}),
    );
    assert!(
        msg.contains("tokenizer.model: not a SentencePiece model"),
        "{msg}"
    );
    let msg = run(&[("tokenizer.model", b"")], "gemma3", json!({}));
    assert!(
        msg.contains("tokenizer.model: the model has no pieces"),
        "{msg}"
    );
    let tokenizer =
        json!({"version": "1.0", "added_tokens": [], "normalizer": null, "pre_tokenizer": null,
        "post_processor": null, "decoder": null, "truncation": null, "padding": null,
        "model": bpe_model(json!({"a": 0, "b": 1, "ab": 2}), json!(["a b", 7]))})
        .to_string();
    let msg = run(
        &[("tokenizer.json", tokenizer.as_bytes())],
        "qwen2",
        json!({"vocab_size": 3}),
    );
    assert!(
        msg.contains("tokenizer.json: the tokenizers crate cannot load it"),
        "{msg}"
    );
    let tokenizer =
        json!({"version": "1.0", "added_tokens": [], "normalizer": null, "pre_tokenizer": null,
        "post_processor": null, "decoder": null, "truncation": null, "padding": null,
        "model": bpe_model(json!({"a": 0, "b": 1, "ab": 2}), json!(["a b"]))})
        .to_string();
    let msg = run(
        &[("tokenizer.json", tokenizer.as_bytes())],
        "qwen2",
        json!({"vocab_size": 2}),
    );
    assert!(
        msg.contains("token id 2 is not below config.json's vocab_size 2"),
        "{msg}"
    );
    let msg = run(
        &[("tokenizer.json", tokenizer.as_bytes())],
        "qwen2",
        json!({"vocab_size": 1u64 << 40}),
    );
    assert!(
        msg.contains("config.json: vocab_size 1099511627776 is more than"),
        "{msg}"
    );
    let msg = run(
        &[("tokenizer.json", tokenizer.as_bytes())],
        "qwen2",
        json!({"vocab_size": 3, "bos_token_id": -1}),
    );
    assert!(
        msg.contains("config.json: bos_token_id: invalid id -1"),
        "{msg}"
    );
}

/// `transformers` (what the converter hashes through) lets an older
/// checkpoint's `special_tokens_map.json` name the BOS its Llama class
/// adds; checked with transformers 4.57.6: `encode("ab")` is `[5, 2]`.
#[test]
fn llama_class_bos_comes_from_special_tokens_map_in_older_checkpoints() {
    let tokenizer = json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [added(3, "<s>"), added(4, "</s>"), added(5, "<x>")],
        "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
        "model": bpe_model(json!({"a": 0, "b": 1, "ab": 2, "<s>": 3, "</s>": 4, "<x>": 5}), json!(["a b"])),
    });
    let dir = tempfile::tempdir().unwrap();
    let write =
        |name: &str, v: Value| std::fs::write(dir.path().join(name), v.to_string()).unwrap();
    write(
        "tokenizer_config.json",
        json!({"tokenizer_class": "LlamaTokenizerFast", "bos_token": "<s>"}),
    );
    write("special_tokens_map.json", json!({"bos_token": "<x>"}));
    let config = json!({"model_type": "llama"});
    let d = super::files::Dir::new(dir.path(), &config);
    let hf = super::hf::load(&d, tokenizer.clone()).unwrap();
    assert_eq!(hf.tokenizer.encode("ab", true).unwrap().get_ids(), [5, 2]);
    // With added_tokens_decoder (a newer file) the map is not read.
    write(
        "tokenizer_config.json",
        json!({"tokenizer_class": "LlamaTokenizerFast", "bos_token": "<s>",
        "added_tokens_decoder": {}}),
    );
    let hf = super::hf::load(&d, tokenizer.clone()).unwrap();
    assert_eq!(hf.tokenizer.encode("ab", true).unwrap().get_ids(), [3, 2]);
    // A null BOS that the class must add: transformers refuses, so do we.
    write(
        "tokenizer_config.json",
        json!({"tokenizer_class": "LlamaTokenizerFast", "bos_token": null,
        "added_tokens_decoder": {}}),
    );
    let err = super::hf::load(&d, tokenizer).err().unwrap().to_string();
    assert!(err.contains("add_bos_token but a null bos_token"), "{err}");
}
