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
