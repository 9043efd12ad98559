//! `llama_load::LoadReport`: llama.cpp's model loader rules. Each failure
//! is one change to a loadable file (the sample, or a tiny model built per
//! architecture), and the report must name it.

use gguf::llama_load::{Coverage, LoadProblem, LoadReport};
use gguf::{
    format::{OwnedArray, OwnedValue},
    write::Builder,
};
use gguf::{GgmlType, Gguf, GgufFile};

const SAMPLE: &[u8] = include_bytes!("../../samples/tiny-llama.gguf");

fn report_of(bytes: &[u8]) -> LoadReport {
    LoadReport::of(&GgufFile::open(bytes).expect("valid GGUF"))
}

/// The sample, changed by `edit`, written out.
fn sample_with(edit: impl FnOnce(&mut Builder<'_>)) -> Vec<u8> {
    let file = GgufFile::open(SAMPLE).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    edit(&mut b);
    b.to_vec().unwrap()
}

fn zeros(shape: &[u64]) -> Vec<u8> {
    vec![0u8; shape.iter().product::<u64>() as usize * 4]
}

fn add(b: &mut Builder<'_>, name: &str, shape: &[u64]) {
    b.add_tensor(name, GgmlType::F32, shape, zeros(shape))
        .unwrap();
}

#[track_caller]
fn assert_problem(report: &LoadReport, expected: &LoadProblem) {
    assert!(!report.loadable(), "{report:?}");
    assert!(
        report.problems.contains(expected),
        "missing {expected:?} in {:#?}",
        report.problems
    );
}

#[test]
fn the_sample_is_loadable() {
    let report = report_of(SAMPLE);
    assert_eq!(report.problems, []);
    assert_eq!(report.coverage, Coverage::Full);
    assert!(report.loadable());
    assert_eq!(report.note(), None);
}

#[test]
fn a_key_of_another_type_is_refused() {
    let bytes = sample_with(|b| {
        b.set("llama.context_length", "8192").unwrap();
    });
    let report = report_of(&bytes);
    assert_problem(
        &report,
        &LoadProblem::WrongType {
            key: "llama.context_length".into(),
            expected: "u32",
            found: "string".into(),
        },
    );
    // An integer of another width is refused as well: llama.cpp compares
    // the stored type with the one it reads.
    let bytes = sample_with(|b| {
        b.set("llama.embedding_length", 64u64).unwrap();
    });
    assert_problem(
        &report_of(&bytes),
        &LoadProblem::WrongType {
            key: "llama.embedding_length".into(),
            expected: "u32",
            found: "u64".into(),
        },
    );
    let bytes = sample_with(|b| {
        b.set("tokenizer.ggml.add_bos_token", 1u8).unwrap();
    });
    assert_problem(
        &report_of(&bytes),
        &LoadProblem::WrongType {
            key: "tokenizer.ggml.add_bos_token".into(),
            expected: "bool",
            found: "u8".into(),
        },
    );
}

#[test]
fn per_layer_keys_take_a_scalar_or_one_entry_per_layer() {
    let per_layer = |values: OwnedArray| {
        sample_with(|b| {
            b.set("llama.attention.head_count", OwnedValue::Array(values))
                .unwrap();
        })
    };
    assert!(report_of(&per_layer(OwnedArray::I32(vec![4, 4]))).loadable());
    let report = report_of(&per_layer(OwnedArray::U32(vec![4, 4, 4])));
    assert!(
        matches!(&report.problems[..], [LoadProblem::BadValue { key, reason }]
            if key == "llama.attention.head_count" && reason.contains("has 3 entries")),
        "{report:?}"
    );
    let report = report_of(&per_layer(OwnedArray::F32(vec![4.0, 4.0])));
    assert_problem(
        &report,
        &LoadProblem::WrongType {
            key: "llama.attention.head_count".into(),
            expected: "u32, or an array of u32/i32/bool with one entry per layer",
            found: "array of f32".into(),
        },
    );
}

#[test]
fn missing_renamed_and_extra_tensors_are_refused() {
    let bytes = sample_with(|b| {
        b.rename_tensor("blk.0.attn_q.weight", "blk.0.attn_qq.weight")
            .unwrap();
    });
    let report = report_of(&bytes);
    assert_problem(
        &report,
        &LoadProblem::MissingTensor {
            tensor: "blk.0.attn_q.weight".into(),
        },
    );
    assert_problem(
        &report,
        &LoadProblem::UnusedTensor {
            tensor: "blk.0.attn_qq.weight".into(),
        },
    );
    let bytes = sample_with(|b| {
        b.remove_tensor("blk.1.ffn_up.weight").unwrap();
    });
    assert_eq!(
        report_of(&bytes).problems,
        [LoadProblem::MissingTensor {
            tensor: "blk.1.ffn_up.weight".into()
        }]
    );
    // A layer past block_count is not loaded either.
    let bytes = sample_with(|b| add(b, "blk.2.attn_norm.weight", &[64]));
    assert_eq!(
        report_of(&bytes).problems,
        [LoadProblem::UnusedTensor {
            tensor: "blk.2.attn_norm.weight".into()
        }]
    );
}

#[test]
fn a_tensor_of_the_wrong_shape_is_refused() {
    let bytes = sample_with(|b| {
        b.remove_tensor("blk.1.attn_k.weight").unwrap();
        add(b, "blk.1.attn_k.weight", &[64, 64]);
    });
    assert_eq!(
        report_of(&bytes).problems,
        [LoadProblem::WrongShape {
            tensor: "blk.1.attn_k.weight".into(),
            expected: vec![64, 32],
            found: vec![64, 64],
        }]
    );
    // Trailing dimensions of 1 are the same shape, as in ggml.
    let bytes = sample_with(|b| {
        b.remove_tensor("blk.0.ffn_norm.weight").unwrap();
        add(b, "blk.0.ffn_norm.weight", &[64, 1]);
    });
    assert!(report_of(&bytes).loadable());
}

#[test]
fn optional_tensors_and_alternatives_are_accepted() {
    // llama3 rope factors, a scale; no output projection (tied to the
    // embedding then).
    let bytes = sample_with(|b| {
        add(b, "rope_freqs.weight", &[8]);
        add(b, "blk.0.attn_q.scale", &[1]);
        b.remove_tensor("output.weight").unwrap();
    });
    assert_eq!(report_of(&bytes).problems, []);
    // A fused QKV in place of Q, K and V.
    let bytes = sample_with(|b| {
        for il in 0..2 {
            for t in ["attn_q", "attn_k", "attn_v"] {
                b.remove_tensor(&format!("blk.{il}.{t}.weight")).unwrap();
            }
            add(b, &format!("blk.{il}.attn_qkv.weight"), &[64, 64 + 32 + 32]);
        }
    });
    assert_eq!(report_of(&bytes).problems, []);
    // A scale only goes with weights that take one.
    let bytes = sample_with(|b| add(b, "blk.0.attn_norm.scale", &[1]));
    assert_eq!(
        report_of(&bytes).problems,
        [LoadProblem::UnusedTensor {
            tensor: "blk.0.attn_norm.scale".into()
        }]
    );
}

#[test]
fn an_unknown_architecture_is_refused() {
    let bytes = sample_with(|b| {
        b.set("general.architecture", "mynet").unwrap();
    });
    let report = report_of(&bytes);
    assert_eq!(report.architecture.as_deref(), Some("mynet"));
    assert_eq!(
        report.problems,
        [LoadProblem::UnknownArchitecture {
            name: "mynet".into()
        }]
    );
    assert!(!report.loadable());
    // gptj has a name in llama.cpp but no model.
    let bytes = sample_with(|b| {
        b.set("general.architecture", "gptj").unwrap();
    });
    assert!(!report_of(&bytes).loadable());
    let bytes = sample_with(|b| {
        b.remove("general.architecture").unwrap();
    });
    assert_problem(&report_of(&bytes), &LoadProblem::NoArchitecture);
}

#[test]
fn a_known_architecture_without_rules_is_not_called_loadable() {
    // xverse: llama.cpp knows it; this crate has no tensor rules for it.
    let file = GgufFile::open(SAMPLE).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    b.set("general.architecture", "xverse").unwrap();
    let llama_keys: Vec<String> = file
        .keys()
        .filter(|k| k.starts_with("llama."))
        .map(String::from)
        .collect();
    for key in llama_keys {
        b.rename_key(&key, key.replacen("llama.", "xverse.", 1))
            .unwrap();
    }
    let report = report_of(&b.to_vec().unwrap());
    assert_eq!(report.problems, []);
    assert_eq!(report.coverage, Coverage::CommonKeysOnly);
    assert!(!report.loadable());
    let note = report.note().unwrap();
    assert!(
        note.contains("\"xverse\"") && note.contains("not checked"),
        "{note}"
    );
}

#[test]
fn adapters_are_not_models() {
    let bytes = sample_with(|b| {
        b.set("general.type", "adapter").unwrap();
    });
    let report = report_of(&bytes);
    assert!(
        matches!(report.coverage, Coverage::NotAModel { .. }),
        "{report:?}"
    );
    assert_eq!(report.problems, []);
    assert!(!report.loadable());
    assert!(report.note().unwrap().contains("adapter"));
}

/// A `clip` file (an mmproj, `general.type` `mmproj`) is libmtmd's: no
/// loader rule applies, the note says who loads it, and only a projector
/// type libmtmd would refuse is a problem.
#[test]
fn projectors_are_libmtmds() {
    for (ty, problem) in [
        (Some("qwen2.5vl_merger"), None),
        (Some("qwen2.5vl"), Some("libmtmd knows")),
        (None, Some("clip.projector_type")),
    ] {
        let bytes = sample_with(|b| {
            b.set("general.architecture", "clip").unwrap();
            b.set("general.type", "mmproj").unwrap();
            b.set("clip.has_vision_encoder", true).unwrap();
            if let Some(ty) = ty {
                b.set("clip.projector_type", ty).unwrap();
            }
        });
        let report = report_of(&bytes);
        let Coverage::Projector { projector } = &report.coverage else {
            panic!("{report:?}");
        };
        assert_eq!(projector.projector_type.as_deref(), ty);
        assert!(!report.loadable());
        match problem {
            None => {
                assert_eq!(report.problems, []);
                let note = report.note().unwrap();
                assert!(
                    note.contains("a vision projector")
                        && note.contains("Qwen2.5-VL")
                        && note.contains("libmtmd")
                        && note.contains("not with its model loader"),
                    "{note}"
                );
            }
            Some(text) => {
                assert_eq!(report.problems.len(), 1, "{report:?}");
                assert!(report.problems[0].to_string().contains(text), "{report:?}");
            }
        }
    }
}

#[test]
fn hyper_parameter_values_llama_cpp_asserts_on() {
    // (key set, its value, the key the problem names, part of the reason)
    let cases: [(&str, OwnedValue, &str, &str); 5] = [
        (
            "llama.rope.scaling.type",
            OwnedValue::String("dynamic".into()),
            "llama.rope.scaling.type",
            "is \"dynamic\"",
        ),
        (
            "llama.rope.dimension_count",
            8u32.into(),
            "llama.rope.dimension_count",
            "head width, 16",
        ),
        (
            "llama.block_count",
            0u32.into(),
            "llama.block_count",
            "1 to 512",
        ),
        (
            "llama.expert_count",
            4u32.into(),
            "llama.expert_used_count",
            "must be above 0 when there are experts",
        ),
        (
            "llama.expert_used_count",
            2u32.into(),
            "llama.expert_used_count",
            "more than the 0 experts",
        ),
    ];
    for (set, value, key, needle) in cases {
        let bytes = sample_with(|b| {
            b.set(set, value).unwrap();
        });
        let report = report_of(&bytes);
        assert!(
            report.problems.iter().any(|p| matches!(p,
                LoadProblem::BadValue { key: k, reason } if k == key && reason.contains(needle))),
            "{set}: {:#?}",
            report.problems
        );
    }
}

#[test]
fn the_tokenizer_is_checked() {
    let tokens = |v: Vec<&str>| {
        OwnedValue::Array(OwnedArray::String(
            v.into_iter().map(String::from).collect(),
        ))
    };
    let bytes = sample_with(|b| {
        b.set("tokenizer.ggml.model", "sentencepiece").unwrap();
    });
    assert_problem(
        &report_of(&bytes),
        &LoadProblem::BadValue {
            key: "tokenizer.ggml.model".into(),
            reason: "is \"sentencepiece\", not a tokenizer llama.cpp knows".into(),
        },
    );
    let bytes = sample_with(|b| {
        b.remove("tokenizer.ggml.merges").unwrap();
    });
    assert_problem(
        &report_of(&bytes),
        &LoadProblem::MissingKey {
            key: "tokenizer.ggml.merges".into(),
        },
    );
    let bytes = sample_with(|b| {
        b.set(
            "tokenizer.ggml.scores",
            OwnedValue::Array(OwnedArray::F32(vec![0.0; 3])),
        )
        .unwrap();
    });
    assert_problem(
        &report_of(&bytes),
        &LoadProblem::BadValue {
            key: "tokenizer.ggml.scores".into(),
            reason: "has 3 entries, fewer than the 297 tokens".into(),
        },
    );
    let bytes = sample_with(|b| {
        b.set("tokenizer.ggml.token_type", 1i32).unwrap();
    });
    assert_problem(
        &report_of(&bytes),
        &LoadProblem::WrongType {
            key: "tokenizer.ggml.token_type".into(),
            expected: "an array of i32",
            found: "i32".into(),
        },
    );
    // Without a vocabulary, the embedding is as wide as `vocab_size`.
    let bytes = sample_with(|b| {
        b.set("tokenizer.ggml.model", "none").unwrap();
    });
    assert_eq!(report_of(&bytes).problems, []);
    let bytes = sample_with(|b| {
        b.set("tokenizer.ggml.model", "none").unwrap();
        b.set("llama.vocab_size", "297").unwrap();
    });
    assert_eq!(
        report_of(&bytes).problems,
        [LoadProblem::WrongType {
            key: "llama.vocab_size".into(),
            expected: "u32",
            found: "string".into(),
        }]
    );
    // Two tokens with the same text (the vocabulary shrinks, so the
    // embedding no longer matches it either: keys come first).
    let bytes = sample_with(|b| {
        b.set("tokenizer.ggml.tokens", tokens(vec!["a", "b", "a"]))
            .unwrap();
    });
    let report = report_of(&bytes);
    assert!(
        report.problems.iter().any(|p| matches!(p,
            LoadProblem::BadValue { key, reason }
                if key == "tokenizer.ggml.tokens" && reason.contains("\"a\" twice (ids 0 and 2)"))),
        "{report:?}"
    );
}

/// A tensor's name (`#` for the layer number) and shape.
type Tensor = (&'static str, &'static [u64]);
/// A key under the architecture's prefix, and its value.
type Key = (&'static str, OwnedValue);

/// A tiny model of architecture `arch`: hyper-parameters `n_embd` 8,
/// 2 heads of 4 (1 KV head), feed-forward 16, 2 layers, 4 tokens, and the
/// given tensors (`#` for the layer number).
fn tiny(arch: &str, extra_keys: &[Key], tensors: &[Tensor]) -> Vec<u8> {
    let mut b = Builder::new();
    b.set("general.architecture", arch).unwrap();
    for (k, v) in [
        ("context_length", 32u32),
        ("embedding_length", 8),
        ("block_count", 2),
        ("feed_forward_length", 16),
        ("attention.head_count", 2),
        ("attention.head_count_kv", 1),
    ] {
        b.set(format!("{arch}.{k}"), v).unwrap();
    }
    for eps in ["layer_norm_rms_epsilon", "layer_norm_epsilon"] {
        b.set(format!("{arch}.attention.{eps}"), 1e-5f32).unwrap();
    }
    for (k, v) in extra_keys {
        b.set(format!("{arch}.{k}"), v.clone()).unwrap();
    }
    b.set("tokenizer.ggml.model", "llama").unwrap();
    let tokens = ["<unk>", "<s>", "</s>", "a"].map(String::from).to_vec();
    b.set(
        "tokenizer.ggml.tokens",
        OwnedValue::Array(OwnedArray::String(tokens)),
    )
    .unwrap();
    for (name, shape) in tensors {
        if name.contains('#') {
            for il in 0..2 {
                add(&mut b, &name.replace('#', &il.to_string()), shape);
            }
        } else {
            add(&mut b, name, shape);
        }
    }
    b.to_vec().unwrap()
}

#[test]
fn common_architectures_have_their_tensors_checked() {
    // n_embd 8, vocab 4, ff 16, heads 2 x 4 wide, 1 KV head: GQA width 4.
    let attn: &[(&str, &[u64])] = &[
        ("blk.#.attn_q.weight", &[8, 8]),
        ("blk.#.attn_k.weight", &[8, 4]),
        ("blk.#.attn_v.weight", &[8, 4]),
    ];
    let ffn: &[(&str, &[u64])] = &[
        ("blk.#.ffn_gate.weight", &[8, 16]),
        ("blk.#.ffn_up.weight", &[8, 16]),
        ("blk.#.ffn_down.weight", &[16, 8]),
    ];
    let base: &[(&str, &[u64])] = &[
        ("token_embd.weight", &[8, 4]),
        ("output_norm.weight", &[8]),
        ("blk.#.attn_norm.weight", &[8]),
        ("blk.#.attn_output.weight", &[8, 8]),
        ("blk.#.ffn_norm.weight", &[8]),
    ];
    let with =
        |parts: &[&[(&'static str, &'static [u64])]]| -> Vec<(&'static str, &'static [u64])> {
            parts.iter().flat_map(|p| p.iter().copied()).collect()
        };
    let gemma2_norms: &[(&str, &[u64])] = &[
        ("blk.#.post_attention_norm.weight", &[8]),
        ("blk.#.post_ffw_norm.weight", &[8]),
    ];
    let qk_norms: &[(&str, &[u64])] = &[
        ("blk.#.attn_q_norm.weight", &[4]),
        ("blk.#.attn_k_norm.weight", &[4]),
    ];
    let qkv_biases: &[(&str, &[u64])] = &[
        ("blk.#.attn_q.bias", &[8]),
        ("blk.#.attn_k.bias", &[4]),
        ("blk.#.attn_v.bias", &[4]),
    ];
    let experts: &[(&str, &[u64])] = &[
        ("blk.#.ffn_gate_inp.weight", &[8, 4]),
        ("blk.#.ffn_gate_exps.weight", &[8, 6, 4]),
        ("blk.#.ffn_up_exps.weight", &[8, 6, 4]),
        ("blk.#.ffn_down_exps.weight", &[6, 8, 4]),
    ];
    let moe_keys = [
        ("expert_count", OwnedValue::U32(4)),
        ("expert_used_count", OwnedValue::U32(2)),
        ("expert_feed_forward_length", OwnedValue::U32(6)),
    ];
    let biased_norms: &[(&str, &[u64])] =
        &[("output_norm.bias", &[8]), ("blk.#.attn_norm.bias", &[8])];
    let cases: Vec<(&str, &[Key], Vec<Tensor>)> = vec![
        ("llama", &[], with(&[base, attn, ffn])),
        ("gemma", &[], with(&[base, attn, ffn])),
        ("gemma2", &[], with(&[base, attn, ffn, gemma2_norms])),
        (
            "gemma3",
            &[],
            with(&[base, attn, ffn, gemma2_norms, qk_norms]),
        ),
        ("qwen2", &[], with(&[base, attn, qkv_biases, ffn])),
        ("qwen3", &[], with(&[base, attn, ffn, qk_norms])),
        (
            "qwen3moe",
            &moe_keys,
            with(&[base, attn, qk_norms, experts]),
        ),
        (
            "phi3",
            &[],
            with(&[
                base,
                &[
                    ("blk.#.attn_qkv.weight", &[8, 16]),
                    ("blk.#.ffn_up.weight", &[8, 32]),
                    ("blk.#.ffn_down.weight", &[16, 8]),
                ],
            ]),
        ),
        (
            "falcon",
            &[],
            with(&[
                base,
                biased_norms,
                &[
                    ("blk.#.attn_qkv.weight", &[8, 16]),
                    ("blk.#.ffn_up.weight", &[8, 16]),
                    ("blk.#.ffn_down.weight", &[16, 8]),
                ],
            ])
            .into_iter()
            .filter(|(n, _)| *n != "blk.#.ffn_norm.weight")
            .collect(),
        ),
        (
            "starcoder2",
            &[],
            with(&[
                base,
                attn,
                qkv_biases,
                biased_norms,
                &[
                    ("blk.#.attn_output.bias", &[8]),
                    ("blk.#.ffn_norm.bias", &[8]),
                    ("blk.#.ffn_up.weight", &[8, 16]),
                    ("blk.#.ffn_up.bias", &[16]),
                    ("blk.#.ffn_down.weight", &[16, 8]),
                    ("blk.#.ffn_down.bias", &[8]),
                ],
            ]),
        ),
    ];
    for (arch, keys, tensors) in cases {
        let bytes = tiny(arch, keys, &tensors);
        let report = report_of(&bytes);
        assert_eq!(report.problems, [], "{arch}");
        assert!(report.loadable(), "{arch}: {report:?}");
        // Without a required tensor it is not.
        let (name, _) = tensors[2];
        assert_eq!(name, "blk.#.attn_norm.weight");
        let shorter: Vec<_> = tensors.iter().copied().filter(|t| t.0 != name).collect();
        assert_eq!(
            report_of(&tiny(arch, keys, &shorter)).problems,
            [
                LoadProblem::MissingTensor {
                    tensor: "blk.0.attn_norm.weight".into()
                },
                LoadProblem::MissingTensor {
                    tensor: "blk.1.attn_norm.weight".into()
                }
            ],
            "{arch}"
        );
    }
    // Gemma and Gemma 2 always tie the output to the embedding: a separate
    // output projection is a tensor llama.cpp does not load.
    let mut tensors = with(&[base, attn, ffn]);
    tensors.push(("output.weight", &[8, 4]));
    assert_eq!(
        report_of(&tiny("gemma", &[], &tensors)).problems,
        [LoadProblem::UnusedTensor {
            tensor: "output.weight".into()
        }]
    );
    assert!(report_of(&tiny("llama", &[], &tensors)).loadable());
}

/// The real Gemma 3 270M (Q4_K_M) must stay loadable: opt-in, as the
/// other tests on it, through `GGUF_GEMMA_MODEL`.
#[test]
fn the_real_gemma_3_model_is_loadable() {
    let Ok(path) = std::env::var("GGUF_GEMMA_MODEL") else {
        eprintln!("skipped: set GGUF_GEMMA_MODEL to a Gemma 3 GGUF to check it is loadable");
        return;
    };
    let file = GgufFile::open(&path).unwrap();
    let report = LoadReport::of(&file);
    assert_eq!(report.problems, [], "{path}");
    assert_eq!(report.architecture.as_deref(), Some("gemma3"));
    assert!(report.loadable());
    assert!(file.lint_llama_cpp().is_empty());
}

#[test]
fn hostile_hyper_parameters_neither_panic_nor_hang() {
    let cases: [(&str, OwnedValue); 8] = [
        ("llama.block_count", u32::MAX.into()),
        ("llama.attention.head_count", 0u32.into()),
        ("llama.attention.head_count_kv", u32::MAX.into()),
        ("llama.embedding_length", u32::MAX.into()),
        ("llama.attention.key_length", u32::MAX.into()),
        ("llama.expert_count", u32::MAX.into()),
        (
            "llama.expert_used_count",
            OwnedValue::Array(OwnedArray::I32(vec![-1, -1])),
        ),
        (
            "llama.feed_forward_length",
            OwnedValue::Array(OwnedArray::U32(vec![])),
        ),
    ];
    for (key, value) in cases {
        let bytes = sample_with(|b| {
            b.set(key, value).unwrap();
        });
        let report = report_of(&bytes);
        assert!(!report.loadable(), "{key}: {report:?}");
        assert!(!report.problems.is_empty(), "{key}");
    }
}

/// Tensors of a type ggml uses only for activations: llama.cpp loads
/// them but cannot compute with them, so the model is not loadable (and
/// runnable), with one problem per type naming its tensors.
#[test]
fn activation_types_make_a_model_that_cannot_run() {
    let file = GgufFile::open(SAMPLE).unwrap();
    let weights: Vec<String> = file
        .tensors()
        .filter(|t| t.name().starts_with("blk.0.") && t.shape().len() == 2)
        .map(|t| t.name().to_owned())
        .collect();
    let bytes = sample_with(|b| {
        // (Its rows are shorter than a Q8_K block.)
        b.requantize_tensor(&weights[0], GgmlType::Q8_1).unwrap();
        b.requantize_tensor(&weights[1], GgmlType::Q8_1).unwrap();
    });
    let report = report_of(&bytes);
    assert!(!report.loadable(), "{report:?}");
    assert_eq!(report.coverage, Coverage::Full);
    let found: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.found_when_running())
        .collect();
    assert!(!found.is_empty(), "{report:?}");
    let named: Vec<&String> = found
        .iter()
        .flat_map(|p| match p {
            LoadProblem::ActivationType { tensors, .. } => tensors.iter(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(named, [&weights[0], &weights[1]]);
    // Only this: the loader itself has nothing against the file.
    assert_eq!(found.len(), report.problems.len(), "{report:?}");
    assert_eq!(found.len(), 1, "one problem per type: {report:?}");
    assert!(found[0].to_string().contains("cannot run the model"));
}
