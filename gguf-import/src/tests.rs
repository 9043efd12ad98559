use super::arch;
use super::*;

#[test]
fn targets_parse_as_the_converter_and_llama_quantize_name_them() {
    assert!(matches!(
        Target::parse("bf16"),
        Ok(Target::Float(OutType::BF16))
    ));
    assert!(matches!(
        Target::parse("Q8_0"),
        Ok(Target::Float(OutType::Q8_0))
    ));
    assert!(matches!(Target::parse("iq4_xs"), Ok(Target::Preset(p)) if p.name == "IQ4_XS"));
    assert!(matches!(
        Target::parse("copy"),
        Err(Error::Import(ImportError::UnknownType { .. }))
    ));
    assert!(Target::parse("7").is_err());
}

#[test]
fn names_map_through_the_tables() {
    let m = |a: &arch::Architecture, n: &str| match a.map(n, 2) {
        Some(arch::Mapped::Plain(gguf, block, _)) => Some(arch::Mapped::plain_name(gguf, block)),
        _ => None,
    };
    assert_eq!(
        m(&arch::LLAMA, "model.layers.1.self_attn.q_proj").as_deref(),
        Some("blk.1.attn_q")
    );
    assert_eq!(m(&arch::LLAMA, "model.layers.2.self_attn.q_proj"), None);
    assert_eq!(m(&arch::LLAMA, "model.layers.01.self_attn.q_proj"), None);
    assert_eq!(
        m(&arch::GEMMA3, "model.layers.0.post_attention_layernorm").as_deref(),
        Some("blk.0.post_attention_norm")
    );
    assert_eq!(
        m(&arch::QWEN2, "model.layers.0.post_attention_layernorm").as_deref(),
        Some("blk.0.ffn_norm")
    );
    assert_eq!(m(&arch::QWEN2, "lm_head").as_deref(), Some("output"));
    assert!(arch::find("MistralForCausalLM").is_some());
    assert!(arch::find("BertModel").is_none());
}

#[test]
fn experts_and_cut_tensors_are_recognised_by_the_tables() {
    let expert = arch::QWEN3MOE.map("model.layers.1.mlp.experts.3.gate_proj", 2);
    assert!(matches!(
        expert,
        Some(arch::Mapped::Expert {
            block: 1,
            expert: 3,
            rule: 1
        })
    ));
    // Expert numbers are written without leading zeros.
    assert!(arch::QWEN3MOE
        .map("model.layers.1.mlp.experts.03.gate_proj", 2)
        .is_none());
    assert!(matches!(
        arch::GRANITEMOE.map("model.layers.0.block_sparse_moe.input_linear", 2),
        Some(arch::Mapped::Split { block: 0, .. })
    ));
    // DeepSeek drops its multi-token-prediction layer; llama has none.
    assert!(matches!(
        arch::DEEPSEEK2.map("model.layers.2.self_attn.q_a_proj", 2),
        Some(arch::Mapped::Skipped)
    ));
    assert!(arch::LLAMA
        .map("model.layers.2.self_attn.q_proj", 2)
        .is_none());
}

#[test]
fn every_table_names_a_distinct_architecture_and_is_listed() {
    let mut names: Vec<&str> = arch::ARCHITECTURES
        .iter()
        .flat_map(|a| a.hf_names.iter().copied())
        .collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "an architecture name is in two tables");
    assert_eq!(architectures().count(), arch::ARCHITECTURES.len());
}
