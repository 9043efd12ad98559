//! The plan of whole models for every preset, against tables derived by
//! hand from llama-quantize's rules (`src/llama-quant.cpp`).

use super::*;
use gguf_core::read::GgufFile;
use gguf_core::write::Builder;
use gguf_core::GgmlType as T;

fn zeros(ty: T, shape: &[u64]) -> Vec<u8> {
    let n: u64 = shape.iter().product();
    let bytes = n / ty.block_size().unwrap() * ty.type_size().unwrap();
    vec![0; bytes as usize]
}

fn add(b: &mut Builder<'_>, name: &str, ty: T, shape: &[u64]) {
    b.add_tensor(name, ty, shape, zeros(ty, shape)).unwrap();
}

/// A llama-shaped model: 8 layers, widths of 256 (whole K-quant blocks),
/// 4 heads and 4 key/value heads (no grouping), untied output, F16
/// weights in the converter's order.
fn llama() -> Vec<u8> {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.file_type", 1u32).unwrap();
    b.set("llama.block_count", 8u32).unwrap();
    b.set("llama.attention.head_count", 4u32).unwrap();
    b.set("llama.attention.head_count_kv", 4u32).unwrap();
    add(&mut b, "token_embd.weight", T::F16, &[256, 32]);
    for i in 0..8 {
        let w = |n: &str| format!("blk.{i}.{n}.weight");
        add(&mut b, &w("attn_norm"), T::F32, &[256]);
        add(&mut b, &w("attn_q"), T::F16, &[256, 256]);
        add(&mut b, &w("attn_k"), T::F16, &[256, 256]);
        add(&mut b, &w("attn_v"), T::F16, &[256, 256]);
        add(&mut b, &w("attn_output"), T::F16, &[256, 256]);
        add(&mut b, &w("ffn_norm"), T::F32, &[256]);
        add(&mut b, &w("ffn_gate"), T::F16, &[256, 512]);
        add(&mut b, &w("ffn_up"), T::F16, &[256, 512]);
        add(&mut b, &w("ffn_down"), T::F16, &[512, 256]);
    }
    add(&mut b, "output_norm.weight", T::F32, &[256]);
    add(&mut b, "output.weight", T::F16, &[256, 32]);
    b.to_vec().unwrap()
}

/// A Qwen2-shaped model: 4 layers, width 96 and feed-forward 160 (not
/// whole 256-blocks), 8 heads over 2 key/value heads (grouping 4),
/// biases, embeddings tied to the output (no `output.weight`).
fn qwen2() -> Vec<u8> {
    let mut b = Builder::new();
    b.set("general.architecture", "qwen2").unwrap();
    b.set("qwen2.block_count", 4u32).unwrap();
    b.set("qwen2.attention.head_count", 8u32).unwrap();
    b.set("qwen2.attention.head_count_kv", 2u32).unwrap();
    add(&mut b, "token_embd.weight", T::F16, &[96, 64]);
    for i in 0..4 {
        let w = |n: &str| format!("blk.{i}.{n}.weight");
        let bias = |n: &str| format!("blk.{i}.{n}.bias");
        add(&mut b, &w("attn_norm"), T::F32, &[96]);
        add(&mut b, &w("attn_q"), T::F16, &[96, 96]);
        add(&mut b, &bias("attn_q"), T::F32, &[96]);
        add(&mut b, &w("attn_k"), T::F16, &[96, 24]);
        add(&mut b, &bias("attn_k"), T::F32, &[24]);
        add(&mut b, &w("attn_v"), T::F16, &[96, 24]);
        add(&mut b, &bias("attn_v"), T::F32, &[24]);
        add(&mut b, &w("attn_output"), T::F16, &[96, 96]);
        add(&mut b, &w("ffn_norm"), T::F32, &[96]);
        add(&mut b, &w("ffn_gate"), T::F16, &[96, 160]);
        add(&mut b, &w("ffn_up"), T::F16, &[96, 160]);
        add(&mut b, &w("ffn_down"), T::F16, &[160, 96]);
    }
    add(&mut b, "output_norm.weight", T::F32, &[96]);
    b.to_vec().unwrap()
}

fn ty(name: &str) -> T {
    parse_ggml_type(name).unwrap_or_else(|_| panic!("{name}"))
}

/// Expected types per role; a role written as one type holds for every
/// layer, as `a b c ...` it is per layer.
struct Expect<'a> {
    embd: &'a str,
    output: &'a str,
    q: &'a str,
    k: &'a str,
    v: &'a str,
    o: &'a str,
    gate: &'a str,
    up: &'a str,
    down: &'a str,
}

fn per_layer(spec: &str, layer: usize) -> T {
    let parts: Vec<&str> = spec.split_whitespace().collect();
    ty(if parts.len() == 1 {
        parts[0]
    } else {
        parts[layer]
    })
}

fn check(bytes: &[u8], opts: &QuantizeOptions, e: &Expect<'_>, label: &str) -> Plan {
    let file = GgufFile::open(bytes).unwrap();
    let p = plan(&file, opts).unwrap();
    for t in &p.tensors {
        let want = match t.name.as_str() {
            "token_embd.weight" => ty(e.embd),
            "output.weight" => ty(e.output),
            n if n.ends_with("_norm.weight") || n.ends_with(".bias") => t.source,
            n => {
                let layer = super::rules::block_number(n).unwrap() as usize;
                let role = n.split('.').nth(2).unwrap();
                let spec = match role {
                    "attn_q" => e.q,
                    "attn_k" => e.k,
                    "attn_v" => e.v,
                    "attn_output" => e.o,
                    "ffn_gate" => e.gate,
                    "ffn_up" => e.up,
                    "ffn_down" => e.down,
                    _ => panic!("{n}"),
                };
                per_layer(spec, layer)
            }
        };
        assert_eq!(t.target, want, "{label}: {}", t.name);
    }
    p
}

fn uniform<'a>(embd: &'a str, output: &'a str, all: &'a str) -> Expect<'a> {
    Expect {
        embd,
        output,
        q: all,
        k: all,
        v: all,
        o: all,
        gate: all,
        up: all,
        down: all,
    }
}

#[test]
fn llama_shaped_model_for_every_preset() {
    let bytes = llama();
    // use_more_bits over 8 layers: 0, 3, 6, 7.
    let table: &[(&str, Expect<'_>)] = &[
        ("Q1_0", uniform("Q1_0", "Q6_K", "Q1_0")),
        ("Q2_0", uniform("Q4_K", "Q6_K", "Q2_0")),
        ("Q4_0", uniform("Q4_0", "Q6_K", "Q4_0")),
        ("Q4_1", uniform("Q4_1", "Q6_K", "Q4_1")),
        ("MXFP4_MOE", uniform("Q8_0", "Q8_0", "Q8_0")),
        ("Q5_0", uniform("Q5_0", "Q6_K", "Q5_0")),
        ("Q5_1", uniform("Q5_1", "Q6_K", "Q5_1")),
        (
            "IQ2_XXS",
            Expect {
                v: "Q2_K",
                down: "Q2_K IQ2_XXS IQ2_XXS IQ2_XXS IQ2_XXS IQ2_XXS IQ2_XXS IQ2_XXS",
                ..uniform("Q2_K", "Q5_K", "IQ2_XXS")
            },
        ),
        (
            "IQ2_XS",
            Expect {
                v: "Q2_K",
                down: "Q2_K IQ2_XS IQ2_XS IQ2_XS IQ2_XS IQ2_XS IQ2_XS IQ2_XS",
                ..uniform("Q2_K", "Q5_K", "IQ2_XS")
            },
        ),
        (
            "IQ2_S",
            Expect {
                v: "IQ3_S",
                o: "IQ3_S",
                down: "IQ3_S IQ2_XS IQ2_XS IQ2_XS IQ2_XS IQ2_XS IQ2_XS IQ2_XS",
                ..uniform("IQ3_S", "Q5_K", "IQ2_XS")
            },
        ),
        (
            "IQ2_M",
            Expect {
                v: "IQ3_S",
                o: "IQ3_S",
                down: "IQ3_S IQ2_S IQ2_S IQ2_S IQ2_S IQ2_S IQ2_S IQ2_S",
                ..uniform("IQ3_S", "Q5_K", "IQ2_S")
            },
        ),
        (
            "IQ1_S",
            Expect {
                v: "Q2_K",
                o: "IQ2_XXS",
                down: "Q2_K IQ1_S IQ1_S IQ1_S IQ1_S IQ1_S IQ1_S IQ1_S",
                ..uniform("Q2_K", "Q5_K", "IQ1_S")
            },
        ),
        (
            "IQ1_M",
            Expect {
                v: "Q2_K",
                o: "IQ2_XXS",
                down: "Q2_K IQ1_M IQ1_M IQ1_M IQ1_M IQ1_M IQ1_M IQ1_M",
                ..uniform("Q2_K", "Q5_K", "IQ1_M")
            },
        ),
        ("TQ1_0", uniform("Q4_K", "Q6_K", "TQ1_0")),
        ("TQ2_0", uniform("Q4_K", "Q6_K", "TQ2_0")),
        (
            "Q2_K",
            Expect {
                v: "Q3_K",
                o: "Q3_K",
                down: "Q3_K",
                ..uniform("Q2_K", "Q6_K", "Q2_K")
            },
        ),
        (
            "Q2_K_S",
            Expect {
                down: "Q4_K Q2_K Q2_K Q2_K Q2_K Q2_K Q2_K Q2_K",
                ..uniform("Q2_K", "Q6_K", "Q2_K")
            },
        ),
        (
            "IQ3_XXS",
            Expect {
                q: "IQ2_S",
                k: "IQ2_S",
                v: "IQ3_S",
                o: "IQ3_S",
                down: "Q4_K Q3_K Q3_K Q3_K Q3_K Q3_K Q3_K Q3_K",
                ..uniform("IQ3_S", "Q5_K", "IQ3_XXS")
            },
        ),
        ("IQ3_S", uniform("IQ3_S", "Q6_K", "IQ3_S")),
        (
            "IQ3_M",
            Expect {
                v: "Q4_K",
                o: "Q4_K",
                down: "Q4_K IQ3_S IQ3_S IQ3_S IQ3_S IQ3_S IQ3_S IQ3_S",
                ..uniform("IQ3_S", "Q6_K", "IQ3_S")
            },
        ),
        (
            "IQ3_XS",
            Expect {
                q: "IQ3_XXS",
                k: "IQ3_XXS",
                gate: "IQ3_S IQ3_XXS IQ3_XXS IQ3_XXS IQ3_XXS IQ3_XXS IQ3_XXS IQ3_S",
                up: "IQ3_S IQ3_XXS IQ3_XXS IQ3_XXS IQ3_XXS IQ3_XXS IQ3_XXS IQ3_S",
                ..uniform("IQ3_S", "Q6_K", "IQ3_S")
            },
        ),
        ("Q3_K_S", uniform("Q3_K", "Q6_K", "Q3_K")),
        (
            "Q3_K_M",
            Expect {
                v: "Q5_K Q5_K Q4_K Q4_K Q4_K Q4_K Q4_K Q4_K",
                o: "Q4_K",
                down: "Q4_K",
                ..uniform("Q3_K", "Q6_K", "Q3_K")
            },
        ),
        (
            "Q3_K_L",
            Expect {
                v: "Q5_K",
                o: "Q5_K",
                down: "Q5_K",
                ..uniform("Q3_K", "Q6_K", "Q3_K")
            },
        ),
        (
            "IQ4_NL",
            Expect {
                down: "Q5_K IQ4_NL IQ4_NL IQ4_NL IQ4_NL IQ4_NL IQ4_NL IQ4_NL",
                ..uniform("IQ4_NL", "Q6_K", "IQ4_NL")
            },
        ),
        (
            "IQ4_XS",
            Expect {
                down: "Q5_K IQ4_XS IQ4_XS IQ4_XS IQ4_XS IQ4_XS IQ4_XS IQ4_XS",
                ..uniform("IQ4_XS", "Q6_K", "IQ4_XS")
            },
        ),
        (
            "Q4_K_S",
            Expect {
                v: "Q5_K Q5_K Q5_K Q5_K Q4_K Q4_K Q4_K Q4_K",
                down: "Q5_K Q4_K Q4_K Q4_K Q4_K Q4_K Q4_K Q4_K",
                ..uniform("Q4_K", "Q6_K", "Q4_K")
            },
        ),
        (
            "Q4_K_M",
            Expect {
                v: "Q6_K Q4_K Q4_K Q6_K Q4_K Q4_K Q6_K Q6_K",
                down: "Q6_K Q4_K Q4_K Q6_K Q4_K Q4_K Q6_K Q6_K",
                ..uniform("Q4_K", "Q6_K", "Q4_K")
            },
        ),
        ("Q5_K_S", uniform("Q5_K", "Q6_K", "Q5_K")),
        (
            "Q5_K_M",
            Expect {
                v: "Q6_K Q5_K Q5_K Q6_K Q5_K Q5_K Q6_K Q6_K",
                down: "Q6_K Q5_K Q5_K Q6_K Q5_K Q5_K Q6_K Q6_K",
                ..uniform("Q5_K", "Q6_K", "Q5_K")
            },
        ),
        ("Q6_K", uniform("Q6_K", "Q6_K", "Q6_K")),
        ("Q8_0", uniform("Q8_0", "Q8_0", "Q8_0")),
        ("F16", uniform("F16", "F16", "F16")),
        ("BF16", uniform("BF16", "BF16", "BF16")),
        ("F32", uniform("F32", "F32", "F32")),
        ("COPY", uniform("F16", "F16", "F16")),
    ];
    let aliases = [("Q3_K", "Q3_K_M"), ("Q4_K", "Q4_K_M"), ("Q5_K", "Q5_K_M")];
    // Every preset is in the table, directly or through its alias.
    for p in PRESETS {
        let name = aliases
            .iter()
            .find(|a| a.0 == p.name)
            .map_or(p.name, |a| a.1);
        let (_, e) = table
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{} missing", p.name));
        let plan = check(&bytes, &QuantizeOptions::new(p.name).unwrap(), e, p.name);
        let want_ft = if p.is_copy() { 1 } else { p.ftype.id() };
        assert_eq!(plan.file_type, want_ft, "{}", p.name);
        assert_eq!(plan.fallback_count(), 0, "{}", p.name);
    }
}

#[test]
fn llama_quantize_order_puts_non_block_tensors_first_then_blocks_by_number() {
    let bytes = llama();
    let file = GgufFile::open(&bytes).unwrap();
    let p = plan(&file, &QuantizeOptions::new("Q8_0").unwrap()).unwrap();
    let names: Vec<&str> = p.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        &names[..6],
        [
            "output.weight",
            "output_norm.weight",
            "token_embd.weight",
            "blk.0.attn_k.weight",
            "blk.0.attn_norm.weight",
            "blk.0.attn_output.weight",
        ]
    );
    assert_eq!(names[3 + 9], "blk.1.attn_k.weight");
    assert_eq!(names.len(), 3 + 8 * 9);
}

#[test]
fn qwen2_shaped_model_falls_back_and_ties_embeddings_to_the_output_rule() {
    let bytes = qwen2();
    // Rows of 96 and 160: 256-blocks fall back (Q4_K -> Q5_0, Q6_K ->
    // Q8_0, Q2_K/Q3_K -> Q4_0, Q5_K -> Q5_1, IQ* -> IQ4_NL). Grouping 4.
    // use_more_bits over 4 layers: 2, 3. The tied embeddings take the
    // output's rule: Q8_0 when the default's block does not divide 96,
    // else Q6_K, which falls back to Q8_0.
    let table: &[(&str, Expect<'_>)] = &[
        (
            "Q4_K_M",
            Expect {
                v: "Q5_0 Q5_0 Q8_0 Q8_0",
                down: "Q5_0 Q5_0 Q8_0 Q8_0",
                ..uniform("Q8_0", "-", "Q5_0")
            },
        ),
        (
            "Q2_K",
            Expect {
                v: "Q5_0",
                o: "Q4_0",
                down: "Q4_0",
                ..uniform("Q8_0", "-", "Q4_0")
            },
        ),
        (
            "Q3_K_M",
            Expect {
                v: "Q5_1 Q5_1 Q5_0 Q5_0",
                o: "Q5_0",
                down: "Q5_0",
                ..uniform("Q8_0", "-", "Q4_0")
            },
        ),
        (
            "IQ4_XS",
            Expect {
                v: "Q5_1",
                ..uniform("Q8_0", "-", "IQ4_NL")
            },
        ),
        (
            "IQ3_XXS",
            Expect {
                v: "Q5_0",
                down: "Q4_0",
                ..uniform("Q8_0", "-", "IQ4_NL")
            },
        ),
        (
            "IQ2_M",
            Expect {
                v: "Q5_0",
                ..uniform("Q8_0", "-", "IQ4_NL")
            },
        ),
        ("Q4_0", uniform("Q8_0", "-", "Q4_0")),
        ("Q8_0", uniform("Q8_0", "-", "Q8_0")),
        ("MXFP4_MOE", uniform("Q8_0", "-", "Q8_0")),
        ("F16", uniform("F16", "-", "F16")),
    ];
    for (name, e) in table {
        let p = check(&bytes, &QuantizeOptions::new(name).unwrap(), e, name);
        // Fallbacks leave nothing that needs an importance matrix.
        assert_eq!(p.needing_imatrix().count(), 0, "{name}");
        // With no general.file_type in the input, COPY's is guessed: F16
        // has the most tensors.
    }
    let copy = plan(
        &GgufFile::open(&bytes).unwrap(),
        &QuantizeOptions::new("COPY").unwrap(),
    )
    .unwrap();
    assert_eq!(copy.file_type, 1 | 1024);
    let q4 = plan(
        &GgufFile::open(&bytes).unwrap(),
        &QuantizeOptions::new("Q4_K_M").unwrap(),
    )
    .unwrap();
    // 7 of each layer's 7 matrices fall back, and the embeddings do not
    // (Q8_0 chosen directly).
    assert_eq!(q4.fallback_count(), 4 * 7);
}

fn plan_llama(opts: &QuantizeOptions) -> Plan {
    plan(&GgufFile::open(&llama()).unwrap(), opts).unwrap()
}

fn target(p: &Plan, name: &str) -> T {
    p.tensors.iter().find(|t| t.name == name).unwrap().target
}

#[test]
fn imatrix_changes_the_rules_that_depend_on_it() {
    let mut o = QuantizeOptions::new("Q4_0").unwrap();
    o.has_imatrix = true;
    let p = plan_llama(&o);
    assert_eq!(target(&p, "blk.0.ffn_down.weight"), T::Q4_1);
    assert_eq!(target(&p, "blk.1.ffn_down.weight"), T::Q4_0);
    let mut o = QuantizeOptions::new("IQ4_XS").unwrap();
    o.has_imatrix = true;
    assert_eq!(target(&plan_llama(&o), "blk.0.ffn_down.weight"), T::IQ4_XS);
    let mut o = QuantizeOptions::new("IQ3_XXS").unwrap();
    o.has_imatrix = true;
    let p = plan_llama(&o);
    assert_eq!(target(&p, "blk.0.attn_v.weight"), T::IQ3_XXS);
    assert_eq!(target(&p, "blk.0.ffn_down.weight"), T::IQ3_XXS);
}

#[test]
fn types_that_need_an_imatrix_are_reported() {
    let p = plan_llama(&QuantizeOptions::new("IQ2_XXS").unwrap());
    let need: Vec<&str> = p.needing_imatrix().map(|t| t.name.as_str()).collect();
    assert!(need.contains(&"blk.1.attn_q.weight"));
    // Q2_K is fine outside Q2_K_S; the output and embeddings never need one.
    assert!(!need.contains(&"blk.0.attn_v.weight"));
    assert!(!need.contains(&"token_embd.weight"));
    let p = plan_llama(&QuantizeOptions::new("Q2_K_S").unwrap());
    assert!(p
        .needing_imatrix()
        .any(|t| t.name == "blk.1.ffn_down.weight"));
    assert!(!p.needing_imatrix().any(|t| t.name == "token_embd.weight"));
    assert_eq!(
        plan_llama(&QuantizeOptions::new("Q2_K").unwrap())
            .needing_imatrix()
            .count(),
        0
    );
}

#[test]
fn flags_override_the_mixture() {
    let mut o = QuantizeOptions::new("Q4_K_M").unwrap();
    o.output_tensor_type = Some(T::Q8_0);
    o.token_embedding_type = Some(T::F16);
    o.tensor_types = vec![
        TensorTypeOverride::parse("attn_v=q8_0").unwrap(),
        TensorTypeOverride::parse("blk\\.[0-3]\\.ffn=q5_k").unwrap(),
        TensorTypeOverride::parse("ffn_up=q2_k").unwrap(),
    ];
    let p = plan_llama(&o);
    assert_eq!(target(&p, "output.weight"), T::Q8_0);
    assert_eq!(target(&p, "token_embd.weight"), T::F16);
    assert_eq!(target(&p, "blk.5.attn_v.weight"), T::Q8_0);
    // The first matching pattern wins.
    assert_eq!(target(&p, "blk.2.ffn_up.weight"), T::Q5_K);
    assert_eq!(target(&p, "blk.6.ffn_up.weight"), T::Q2_K);
    // Manual tensors do not advance the counters: the down projections of
    // layers 4..8 are counted 0..4, so layer 4 is a "first" (Q6_K) and
    // layer 6 is not (Q4_K, where the plain mixture gives it Q6_K).
    assert_eq!(target(&p, "blk.3.ffn_down.weight"), T::Q5_K);
    assert_eq!(target(&p, "blk.4.ffn_down.weight"), T::Q6_K);
    assert_eq!(target(&p, "blk.5.ffn_down.weight"), T::Q4_K);
    assert_eq!(target(&p, "blk.6.ffn_down.weight"), T::Q4_K);
    assert_eq!(target(&p, "blk.7.ffn_down.weight"), T::Q6_K);
    let plain = plan_llama(&QuantizeOptions::new("Q4_K_M").unwrap());
    assert_eq!(target(&plain, "blk.6.ffn_down.weight"), T::Q6_K);

    let mut o = QuantizeOptions::new("Q4_K_M").unwrap();
    o.pure = true;
    let p = plan_llama(&o);
    assert_eq!(target(&p, "blk.0.attn_v.weight"), T::Q4_K);
    // --pure keeps llama-quantize's output rule out too: Q4_K.
    assert_eq!(target(&p, "output.weight"), T::Q4_K);

    let mut o = QuantizeOptions::new("Q4_K_M").unwrap();
    o.leave_output_tensor = true;
    let p = plan_llama(&o);
    assert_eq!(target(&p, "output.weight"), T::F16);
    assert!(
        !p.tensors
            .iter()
            .find(|t| t.name == "output.weight")
            .unwrap()
            .quantizable
    );
}

#[test]
fn tied_embeddings_take_the_output_type_option() {
    let bytes = qwen2();
    let mut o = QuantizeOptions::new("Q4_K_M").unwrap();
    o.output_tensor_type = Some(T::Q6_K);
    let p = plan(&GgufFile::open(&bytes).unwrap(), &o).unwrap();
    // Q6_K asked for through the output's option; 96 is not whole blocks:
    // the fallback still applies.
    assert_eq!(target(&p, "token_embd.weight"), T::Q8_0);
    assert!(
        p.tensors
            .iter()
            .find(|t| t.name == "token_embd.weight")
            .unwrap()
            .fell_back
    );
}

#[test]
fn experts_take_their_layer_from_the_name() {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("llama.block_count", 2u32).unwrap();
    b.set("llama.expert_count", 8u32).unwrap();
    add(&mut b, "blk.1.ffn_down_exps.weight", T::F16, &[256, 256, 8]);
    add(&mut b, "blk.7.ffn_down_exps.weight", T::F16, &[256, 256, 8]);
    let bytes = b.to_vec().unwrap();
    let err = plan(
        &GgufFile::open(&bytes).unwrap(),
        &QuantizeOptions::new("Q4_K_M").unwrap(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("bad layer 7"), "{err}");

    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("llama.block_count", 2u32).unwrap();
    b.set("llama.expert_count", 8u32).unwrap();
    add(&mut b, "blk.0.ffn_gate_exps.weight", T::F16, &[256, 256, 8]);
    add(&mut b, "blk.0.attn_v.weight", T::F16, &[256, 256]);
    let bytes = b.to_vec().unwrap();
    let file = GgufFile::open(&bytes).unwrap();
    let p = plan(&file, &QuantizeOptions::new("MXFP4_MOE").unwrap()).unwrap();
    assert_eq!(target(&p, "blk.0.ffn_gate_exps.weight"), T::MXFP4);
    assert_eq!(target(&p, "blk.0.attn_v.weight"), T::Q8_0);
    // Eight experts: value projections get Q8_0 in every mixture.
    let p = plan(&file, &QuantizeOptions::new("Q3_K_S").unwrap()).unwrap();
    assert_eq!(target(&p, "blk.0.attn_v.weight"), T::Q8_0);
}

#[test]
fn the_70b_rule_and_falcon() {
    let f = |arch: &str, n_layer, n_head, n_head_kv| {
        super::rules::is_70b(arch, n_layer, n_head, n_head_kv)
    };
    assert!(f("llama", 80, 64, 8));
    assert!(!f("llama", 80, 64, 64));
    assert!(f("qwen2", 80, 64, 64));
    assert!(f("jais2", 68, 1, 1));
    assert!(!f("gemma3", 80, 64, 8));

    let mut b = Builder::new();
    b.set("general.architecture", "falcon").unwrap();
    b.set("falcon.block_count", 1u32).unwrap();
    add(&mut b, "token_embd.weight", T::F16, &[256, 32]);
    add(&mut b, "output.weight", T::F16, &[256, 32]);
    add(&mut b, "blk.0.attn_output.weight", T::F16, &[256, 256]);
    let bytes = b.to_vec().unwrap();
    let p = plan(
        &GgufFile::open(&bytes).unwrap(),
        &QuantizeOptions::new("Q3_K_L").unwrap(),
    )
    .unwrap();
    // Falcon's output is always Q8_0; its attn_output in Q3_K_L is Q4_K.
    assert_eq!(target(&p, "output.weight"), T::Q8_0);
    assert_eq!(target(&p, "blk.0.attn_output.weight"), T::Q4_K);
}

#[test]
fn a_model_without_block_count_is_refused_by_name() {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    let bytes = b.to_vec().unwrap();
    let err = plan(
        &GgufFile::open(&bytes).unwrap(),
        &QuantizeOptions::new("Q8_0").unwrap(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("llama.block_count"), "{err}");
}

#[test]
fn categories_and_quantizable_tensors() {
    use Category as C;
    for (name, cat) in [
        ("output.weight", C::Output),
        ("token_embd.weight", C::TokenEmbd),
        ("blk.0.attn_qkv.weight", C::AttnQkv),
        ("blk.0.attn_kv_b.weight", C::AttnKvB),
        ("blk.0.attn_k.weight", C::AttnK),
        ("blk.0.attn_q.weight", C::AttnQ),
        ("blk.0.attn_output.weight", C::AttnOutput),
        ("blk.0.ffn_up_exps.weight", C::FfnUp),
        ("blk.0.ffn_gate_inp.weight", C::FfnGate),
        ("blk.0.ffn_down_shexp.weight", C::FfnDown),
        ("blk.0.attn_q_a.weight", C::Other),
        ("output_norm.weight", C::Other),
    ] {
        assert_eq!(Category::of(name), cat, "{name}");
    }
    let q = |name, shape: &[u64], arch| allows_quantization(name, shape, arch, true);
    assert!(q("blk.0.attn_q.weight", &[64, 64], "llama"));
    assert!(!q("blk.0.attn_q.bias", &[64, 64], "llama"));
    assert!(!q("blk.0.attn_q.weight", &[64, 1, 1], "llama"));
    assert!(q("blk.0.ffn_up_exps.weight", &[64, 64, 8], "llama"));
    assert!(!q("blk.0.ffn_gate_inp.weight", &[64, 8], "llama"));
    assert!(!q("token_types.weight", &[64, 2], "bert"));
    assert!(!q("v.position_embd.weight", &[64, 64], "clip"));
    assert!(!q("blk.0.attn_k_b.weight", &[64, 64], "glm5-next"));
    assert!(q("blk.0.attn_k_b.weight", &[64, 64], "deepseek2"));
}

#[test]
fn use_more_bits_is_c_arithmetic() {
    // 32 layers: the first 4, the last 4, and every third from 6.
    let more: Vec<u32> = (0..32).filter(|&i| use_more_bits(i, 32)).collect();
    assert_eq!(
        more,
        [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]
    );
    // Fewer than 8 layers: no eighth, every third from 2.
    let more: Vec<u32> = (0..4).filter(|&i| use_more_bits(i, 4)).collect();
    assert_eq!(more, [2, 3]);
}

#[test]
fn pruned_layers_leave_and_later_blocks_are_renumbered() {
    let mut o = QuantizeOptions::new("Q4_K_M").unwrap();
    o.prune_layers = vec![5, 2, 2];
    let p = plan_llama(&o);
    assert_eq!(p.block_count, Some(6));
    assert_eq!(p.tensors.len(), 3 + 6 * 9);
    let t = p
        .tensors
        .iter()
        .find(|t| t.input_name == "blk.7.attn_v.weight")
        .unwrap();
    assert_eq!(t.name, "blk.5.attn_v.weight");
    let t = p
        .tensors
        .iter()
        .find(|t| t.input_name == "blk.3.ffn_up.weight")
        .unwrap();
    assert_eq!(t.name, "blk.2.ffn_up.weight");
    assert!(p
        .tensors
        .iter()
        .all(|t| !t.input_name.starts_with("blk.2.")));
    // The counters run over what is left, against the model's 8 layers:
    // value projections 0..6 of 6 -> use_more_bits(i, 6): 2, 5 (no
    // eighth of 6).
    let v: Vec<T> = (0..6)
        .map(|i| target(&p, &format!("blk.{i}.attn_v.weight")))
        .collect();
    assert_eq!(v, [T::Q4_K, T::Q4_K, T::Q6_K, T::Q4_K, T::Q4_K, T::Q6_K]);
    // ffn_down counts against n_layer = 8: 0, 3 of the remaining indices.
    let d: Vec<T> = (0..6)
        .map(|i| target(&p, &format!("blk.{i}.ffn_down.weight")))
        .collect();
    assert_eq!(d, [T::Q6_K, T::Q4_K, T::Q4_K, T::Q6_K, T::Q4_K, T::Q4_K]);
    assert_eq!(
        plan_llama(&QuantizeOptions::new("Q4_K_M").unwrap()).block_count,
        None
    );
}

#[test]
fn keep_split_keeps_file_order() {
    let mut o = QuantizeOptions::new("Q8_0").unwrap();
    o.keep_split = true;
    let p = plan_llama(&o);
    assert_eq!(p.tensors[0].name, "token_embd.weight");
    assert_eq!(p.tensors[1].name, "blk.0.attn_norm.weight");
    assert_eq!(p.tensors.last().unwrap().name, "output.weight");
}
