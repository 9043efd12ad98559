//! Typed metadata: `#[derive(Metadata)]`, `Builder::set_all`, the shipped
//! `General` / `LlamaHyperParams` / `TokenizerMetadata`, and a file written by gguf-py.

use gguf_core::error::{BuildError, LookupError};
use gguf_core::format::{OwnedArray, OwnedValue};
use gguf_core::write::Builder;
use gguf_core::Gguf;
use gguf_core::{
    Error, FromMetadata, General, GgmlType, GgufFile, LlamaHyperParams, Metadata, ToMetadata,
    TokenizerMetadata,
};

/// Writes the builder and returns the file's bytes.
fn write(b: &mut Builder<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    b.write(&mut out).expect("write");
    out
}

/// A file holding exactly these entries.
fn file_with(entries: &[(&str, OwnedValue)]) -> Vec<u8> {
    let mut b = Builder::new();
    for (k, v) in entries {
        b.set(*k, v.clone()).unwrap();
    }
    write(&mut b)
}

fn full_general() -> General {
    General {
        architecture: "llama".into(),
        quantization_version: Some(2),
        alignment: Some(64),
        kind: Some("model".into()),
        name: Some("Tiny Llama".into()),
        author: Some("gguf-rs".into()),
        version: Some("v1.0".into()),
        organization: Some("Example Org".into()),
        basename: Some("tiny-llama".into()),
        finetune: Some("chat".into()),
        description: Some("a tiny test model".into()),
        quantized_by: Some("nobody".into()),
        size_label: Some("1K".into()),
        license: Some("MIT OR Apache-2.0".into()),
        url: Some("https://example.invalid/model".into()),
        source_url: Some("https://example.invalid/source".into()),
        file_type: Some(7),
        tags: Some(vec!["text-generation".into(), "test".into()]),
        languages: Some(vec!["en".into()]),
    }
}

fn full_hyper() -> LlamaHyperParams {
    LlamaHyperParams {
        context_length: 2048,
        embedding_length: 64,
        block_count: 2,
        feed_forward_length: 172,
        head_count: 4,
        head_count_kv: Some(2),
        layer_norm_rms_epsilon: 1e-5,
        rope_dimension_count: Some(16),
        rope_freq_base: Some(10000.0),
        expert_count: Some(8),
        expert_used_count: Some(2),
        vocab_size: Some(5),
    }
}

fn full_tokenizer() -> TokenizerMetadata {
    TokenizerMetadata {
        model: "gpt2".into(),
        pre: Some("default".into()),
        tokens: ["<unk>", "<s>", "</s>", "a", "ab"]
            .map(String::from)
            .to_vec(),
        scores: Some(vec![0.0, 0.0, 0.0, -1.5, -2.5]),
        token_type: Some(vec![2, 3, 3, 1, 1]),
        merges: Some(vec!["a b".into()]),
        bos_token_id: Some(1),
        eos_token_id: Some(2),
        unknown_token_id: Some(0),
        padding_token_id: Some(0),
        add_bos_token: Some(true),
        add_eos_token: Some(false),
        chat_template: Some("{% for m in messages %}{{ m.content }}{% endfor %}".into()),
    }
}

#[test]
fn shipped_structs_round_trip_with_every_field_set() {
    let (general, hyper, tok) = (full_general(), full_hyper(), full_tokenizer());
    let mut b = Builder::new();
    b.set_all(&general)
        .unwrap()
        .set_all(&hyper)
        .unwrap()
        .set_all(&tok)
        .unwrap();
    let bytes = write(&mut b);
    let file = GgufFile::open(&bytes).unwrap();
    assert_eq!(file.alignment(), 64);
    assert_eq!(General::from_gguf(&file).unwrap(), general);
    assert_eq!(LlamaHyperParams::from_gguf(&file).unwrap(), hyper);
    assert_eq!(TokenizerMetadata::from_gguf(&file).unwrap(), tok);
    // Keys follow the spec, with the architecture filled in.
    for key in [
        "general.source.url",
        "general.type",
        "llama.attention.head_count_kv",
        "llama.attention.layer_norm_rms_epsilon",
        "llama.rope.freq_base",
        "tokenizer.ggml.bos_token_id",
        "tokenizer.chat_template",
    ] {
        assert!(file.contains_key(key), "{key} missing");
    }
    assert_eq!(file.kv_count(), 19 + 12 + 13);
}

#[test]
fn none_fields_are_not_written_and_read_back_as_none() {
    let general = General {
        architecture: "llama".into(),
        ..General::default()
    };
    let hyper = LlamaHyperParams {
        context_length: 128,
        embedding_length: 8,
        block_count: 1,
        feed_forward_length: 16,
        head_count: 2,
        layer_norm_rms_epsilon: 1e-6,
        ..LlamaHyperParams::default()
    };
    let mut b = Builder::new();
    b.set_all(&general).unwrap().set_all(&hyper).unwrap();
    assert_eq!(
        b.keys().collect::<Vec<_>>(),
        [
            "general.architecture",
            "llama.context_length",
            "llama.embedding_length",
            "llama.block_count",
            "llama.feed_forward_length",
            "llama.attention.head_count",
            "llama.attention.layer_norm_rms_epsilon",
        ]
    );
    let bytes = write(&mut b);
    let file = GgufFile::open(&bytes).unwrap();
    let back = LlamaHyperParams::from_gguf(&file).unwrap();
    assert_eq!(back.head_count_kv, None);
    assert_eq!(back.rope_freq_base, None);
    assert_eq!(back, hyper);
    assert_eq!(General::from_gguf(&file).unwrap(), general);
}

#[test]
fn missing_required_key_names_the_full_key() {
    let bytes = file_with(&[
        ("general.architecture", "qwen2".into()),
        ("qwen2.context_length", 4096u32.into()),
        ("qwen2.embedding_length", 64u32.into()),
        ("qwen2.block_count", 2u32.into()),
    ]);
    let file = GgufFile::open(&bytes).unwrap();
    match LlamaHyperParams::from_gguf(&file) {
        Err(Error::Lookup(LookupError::KeyNotFound { key })) => {
            assert_eq!(key, "qwen2.feed_forward_length")
        }
        other => panic!("expected KeyNotFound, got {other:?}"),
    }
    let err = LlamaHyperParams::from_gguf(&file).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"metadata key "qwen2.feed_forward_length" not found"#
    );
}

#[test]
fn templated_struct_needs_general_architecture() {
    let bytes = file_with(&[("llama.context_length", 4096u32.into())]);
    let file = GgufFile::open(&bytes).unwrap();
    match LlamaHyperParams::from_gguf(&file) {
        Err(Error::Lookup(LookupError::KeyNotFound { key })) => {
            assert_eq!(key, "general.architecture")
        }
        other => panic!("expected KeyNotFound, got {other:?}"),
    }
    // A struct without templated keys does not need it.
    #[derive(Debug, Metadata)]
    #[gguf(prefix = "llama")]
    struct Fixed {
        context_length: u32,
    }
    assert_eq!(Fixed::from_gguf(&file).unwrap().context_length, 4096);
}

#[test]
fn mistyped_keys_name_the_key_and_both_types() {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set_all(&full_hyper()).unwrap();
    // What the spec text says (u64) instead of what llama.cpp reads (u32).
    b.set("llama.context_length", 2048u64).unwrap();
    let bytes = write(&mut b);
    let file = GgufFile::open(&bytes).unwrap();
    match LlamaHyperParams::from_gguf(&file) {
        Err(Error::Lookup(LookupError::TypeMismatch {
            key,
            expected,
            found,
        })) => {
            assert_eq!(key, "llama.context_length");
            assert_eq!(expected, "u32");
            assert_eq!(found, "u64");
        }
        other => panic!("expected TypeMismatch, got {other:?}"),
    }

    // Optional fields are type-checked too when present.
    let bytes = file_with(&[
        ("tokenizer.ggml.model", "llama".into()),
        ("tokenizer.ggml.tokens", vec!["a", "b"].into()),
        ("tokenizer.ggml.scores", vec![0.0f64, 1.0].into()),
    ]);
    let file = GgufFile::open(&bytes).unwrap();
    let err = TokenizerMetadata::from_gguf(&file).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"metadata key "tokenizer.ggml.scores" has type array of f64, expected array of f32"#
    );

    // A scalar where an array is expected, and the other way round.
    let bytes = file_with(&[
        ("tokenizer.ggml.model", vec!["llama"].into()),
        ("tokenizer.ggml.tokens", "a".into()),
    ]);
    let file = GgufFile::open(&bytes).unwrap();
    let err = TokenizerMetadata::from_gguf(&file).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"metadata key "tokenizer.ggml.model" has type array of string, expected string"#
    );
    let err = <Vec<String> as gguf_core::metadata::MetaField>::read(&file, "tokenizer.ggml.tokens")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"metadata key "tokenizer.ggml.tokens" has type string, expected array of string"#
    );
}

#[derive(Debug, Clone, PartialEq, Metadata)]
#[gguf(prefix = "{arch}.vision")]
struct Vision {
    #[gguf(arch, key = "general.architecture")]
    arch: Option<String>,
    image_size: u32,
    #[gguf(rename = "patch")]
    patch_size: u16,
    #[gguf(key = "clip.has_vision_encoder")]
    has_encoder: bool,
    #[gguf(key = "{arch}.mean")]
    image_mean: Vec<f32>,
    grid: Option<Vec<Vec<i32>>>,
    offset: i64,
    gamma: Option<f64>,
}

fn vision(arch: Option<&str>) -> Vision {
    Vision {
        arch: arch.map(String::from),
        image_size: 224,
        patch_size: 14,
        has_encoder: true,
        image_mean: vec![0.5, 0.25, 0.125],
        grid: Some(vec![vec![1, 2], vec![], vec![-3]]),
        offset: -7,
        gamma: Some(2.2),
    }
}

#[test]
fn derive_round_trip_with_renames_keys_and_templates() {
    let v = vision(Some("clip"));
    let mut b = Builder::new();
    b.set_all(&v).unwrap();
    assert_eq!(
        b.keys().collect::<Vec<_>>(),
        [
            "general.architecture",
            "clip.vision.image_size",
            "clip.vision.patch",
            "clip.has_vision_encoder",
            "clip.mean",
            "clip.vision.grid",
            "clip.vision.offset",
            "clip.vision.gamma",
        ]
    );
    let bytes = write(&mut b);
    let file = GgufFile::open(&bytes).unwrap();
    assert_eq!(
        file.value_type("clip.vision.patch"),
        Some(gguf_core::ValueType::U16)
    );
    assert_eq!(Vision::from_gguf(&file).unwrap(), v);
    // The same keys read with an explicit architecture.
    assert_eq!(Vision::from_gguf_arch(&file, "clip").unwrap(), v);
    match Vision::from_gguf_arch(&file, "siglip") {
        Err(Error::Lookup(LookupError::KeyNotFound { key })) => {
            assert_eq!(key, "siglip.vision.image_size")
        }
        other => panic!("expected KeyNotFound, got {other:?}"),
    }
}

#[test]
fn arch_comes_from_the_field_then_the_builder_else_errors() {
    // Field wins over the builder's general.architecture.
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set_all(&vision(Some("clip"))).unwrap();
    assert!(b.value("clip.vision.image_size").is_some());
    assert_eq!(b.get_str("general.architecture").unwrap(), "clip");

    // No field value: the builder's architecture is used.
    let mut b = Builder::new();
    b.set("general.architecture", "llava").unwrap();
    b.set_all(&vision(None)).unwrap();
    assert!(b.value("llava.vision.image_size").is_some());
    assert!(b.value("llava.mean").is_some());

    // Neither: an error naming the template, and nothing is set.
    let mut b = Builder::new();
    match b.set_all(&vision(None)) {
        Err(Error::Build(BuildError::ArchUnknown { key })) => {
            assert_eq!(key, "{arch}.vision.image_size")
        }
        other => panic!("expected ArchUnknown, got {other:?}"),
    }
    assert_eq!(b.keys().count(), 0);
    let err = b.set_all(&vision(None)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "metadata key \"{arch}.vision.image_size\": `{arch}` has no value \
         (set general.architecture first, or mark a field #[gguf(arch)])"
    );

    // to_metadata takes the architecture directly.
    let entries = vision(None).to_metadata(Some("x")).unwrap();
    assert_eq!(entries[0].0, "x.vision.image_size");
    assert_eq!(entries[0].1, OwnedValue::U32(224));
    assert_eq!(
        entries[4].1,
        OwnedValue::Array(OwnedArray::Array(vec![
            OwnedArray::I32(vec![1, 2]),
            OwnedArray::I32(vec![]),
            OwnedArray::I32(vec![-3]),
        ]))
    );
}

#[test]
fn nested_arrays_are_type_checked_at_depth() {
    let bytes = file_with(&[
        ("general.architecture", "clip".into()),
        ("clip.vision.image_size", 224u32.into()),
        ("clip.vision.patch", 14u16.into()),
        ("clip.has_vision_encoder", true.into()),
        ("clip.mean", vec![0.5f32].into()),
        (
            "clip.vision.grid",
            vec![OwnedArray::U32(vec![1]), OwnedArray::U32(vec![2])].into(),
        ),
        ("clip.vision.offset", (-7i64).into()),
    ]);
    let file = GgufFile::open(&bytes).unwrap();
    match Vision::from_gguf(&file) {
        Err(Error::Lookup(LookupError::TypeMismatch {
            key,
            expected,
            found,
        })) => {
            assert_eq!(key, "clip.vision.grid");
            assert_eq!(expected, "array of array of i32");
            assert_eq!(found, "array of array of u32");
        }
        other => panic!("expected TypeMismatch, got {other:?}"),
    }
}

/// A gguf-py 0.19 script writing the values checked below.
const GGUF_PY_SCRIPT: &str = r#"
import sys
import numpy as np
import gguf

w = gguf.GGUFWriter(sys.argv[1], "llama")
w.add_name("py tiny")
w.add_author("gguf-py")
w.add_version("v0.1")
w.add_organization("Example")
w.add_basename("py-tiny")
w.add_size_label("1K")
w.add_license("mit")
w.add_url("https://example.invalid/m")
w.add_source_url("https://example.invalid/src")
w.add_description("written by gguf-py")
w.add_quantization_version(2)
w.add_file_type(1)
w.add_context_length(2048)
w.add_embedding_length(64)
w.add_block_count(2)
w.add_feed_forward_length(176)
w.add_head_count(4)
w.add_head_count_kv(2)
w.add_layer_norm_rms_eps(1e-5)
w.add_rope_dimension_count(16)
w.add_rope_freq_base(500000.0)
w.add_vocab_size(6)
w.add_tokenizer_model("llama")
w.add_token_list(["<unk>", "<s>", "</s>", "a", "b", "ab"])
w.add_token_scores([0.0, 0.0, 0.0, -1.0, -2.0, -3.5])
w.add_token_types([2, 3, 3, 1, 1, 1])
w.add_token_merges(["a b"])
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
w.add_add_bos_token(True)
w.add_add_eos_token(False)
w.add_chat_template("{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}")
w.add_tensor("token_embd.weight", np.ones((6, 64), dtype=np.float32))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
"#;

#[test]
fn reads_a_file_written_by_gguf_py() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("py.gguf");
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(GGUF_PY_SCRIPT)
        .arg(&path)
        .output()
        .expect("python3 must be installed (scripts/test.sh installs gguf-py)");
    assert!(
        out.status.success(),
        "gguf-py script failed (install tests/oracles/requirements.txt): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = GgufFile::open(&path).unwrap();

    let general = General::from_gguf(&file).unwrap();
    assert_eq!(
        general,
        General {
            architecture: "llama".into(),
            quantization_version: Some(2),
            name: Some("py tiny".into()),
            author: Some("gguf-py".into()),
            version: Some("v0.1".into()),
            organization: Some("Example".into()),
            basename: Some("py-tiny".into()),
            description: Some("written by gguf-py".into()),
            size_label: Some("1K".into()),
            license: Some("mit".into()),
            url: Some("https://example.invalid/m".into()),
            source_url: Some("https://example.invalid/src".into()),
            file_type: Some(1),
            ..General::default()
        }
    );

    let hyper = LlamaHyperParams::from_gguf(&file).unwrap();
    assert_eq!(
        hyper,
        LlamaHyperParams {
            context_length: 2048,
            embedding_length: 64,
            block_count: 2,
            feed_forward_length: 176,
            head_count: 4,
            head_count_kv: Some(2),
            layer_norm_rms_epsilon: 1e-5,
            rope_dimension_count: Some(16),
            rope_freq_base: Some(500000.0),
            expert_count: None,
            expert_used_count: None,
            vocab_size: Some(6),
        }
    );

    let tok = TokenizerMetadata::from_gguf(&file).unwrap();
    assert_eq!(
        tok,
        TokenizerMetadata {
            model: "llama".into(),
            pre: None,
            tokens: ["<unk>", "<s>", "</s>", "a", "b", "ab"]
                .map(String::from)
                .to_vec(),
            scores: Some(vec![0.0, 0.0, 0.0, -1.0, -2.0, -3.5]),
            token_type: Some(vec![2, 3, 3, 1, 1, 1]),
            merges: Some(vec!["a b".into()]),
            bos_token_id: Some(1),
            eos_token_id: Some(2),
            unknown_token_id: Some(0),
            padding_token_id: None,
            add_bos_token: Some(true),
            add_eos_token: Some(false),
            chat_template: Some(
                "{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}".into()
            ),
        }
    );
    let t = file.tensor("token_embd.weight").unwrap();
    assert_eq!(t.ggml_type(), GgmlType::F32);
    assert_eq!(t.shape(), &[64, 6]);
}

#[test]
fn bundled_sample_reads_into_the_typed_structs() {
    // samples/tiny-llama.gguf is the output of examples/build_model.rs.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/tiny-llama.gguf");
    let file = GgufFile::open(path).unwrap();
    let general = General::from_gguf(&file).unwrap();
    assert_eq!(general.architecture, "llama");
    assert_eq!(general.file_type, Some(7));
    let hyper = LlamaHyperParams::from_gguf(&file).unwrap();
    assert_eq!(
        (hyper.embedding_length, hyper.block_count, hyper.head_count),
        (64, 2, 4)
    );
    let tok = TokenizerMetadata::from_gguf(&file).unwrap();
    assert_eq!(Some(tok.tokens.len() as u32), hyper.vocab_size);
    assert_eq!(tok.token_type.map(|t| t.len()), Some(tok.tokens.len()));
    let n_vocab = tok.tokens.len() as u64;
    assert_eq!(
        file.tensor("token_embd.weight").unwrap().shape(),
        &[64, n_vocab]
    );
    let q = file.tensor("blk.0.ffn_down.weight").unwrap();
    assert_eq!(q.ggml_type(), GgmlType::Q8_0);
    assert_eq!(q.data().unwrap().len(), 128 * 64 / 32 * 34);
}
