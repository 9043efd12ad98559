//! LoRA adapters: a PEFT adapter directory (`adapter_config.json` +
//! `adapter_model.safetensors`) and the base checkpoint it was trained on
//! become the GGUF adapter llama.cpp's `convert_lora_to_gguf.py` writes.
//!
//! The converter runs the base architecture's own tensor code on each
//! `lora_A`/`lora_B` pair as if it were the weight `B @ A`: a rename is the
//! weight's rename, llama's Q/K permutation reorders B's rows, stacking
//! experts stacks the As and the Bs, and cutting a weight's rows cuts B.
//! The pieces below say the same with the tables of [`super::arch`]; what
//! cannot be said of a pair (a transposed or regrouped weight) is refused
//! by name.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, ImportError, Result};
use gguf_core::GgmlType;

use super::arch::{Architecture, Cut, Mapped, Transform};
use super::checkpoint::SourceTensor;
use super::config::{config_error, read_json, Config};
use super::options::OutType;
use super::tensors::{map_source, output_type, tensor_error, Origin, Piece, Planned};

/// The adapter's safetensors file.
pub(crate) const ADAPTER_FILE: &str = "adapter_model.safetensors";

/// What `adapter_config.json` says that the GGUF records.
#[derive(Debug)]
pub(crate) struct AdapterConfig {
    /// `lora_alpha`, written as `adapter.lora.alpha`.
    pub alpha: f32,
}

/// Reads `dir/adapter_config.json`: a PEFT LoRA adapter's settings.
pub(crate) fn read_config(dir: &Path) -> Result<AdapterConfig> {
    let file = dir.join("adapter_config.json");
    let json = read_json(&file)?;
    if let Some(kind) = json.get("peft_type").and_then(Value::as_str)
        && kind != "LORA"
    {
        return Err(config_error(
            &file,
            format!("peft_type {kind:?}: only LoRA adapters (LORA) are imported"),
        ));
    }
    if json.get("use_dora").and_then(Value::as_bool) == Some(true) {
        return Err(config_error(
            &file,
            "use_dora: DoRA adapters have magnitude vectors llama.cpp's adapters do not".into(),
        ));
    }
    let alpha = json
        .get("lora_alpha")
        .and_then(Value::as_f64)
        .ok_or_else(|| config_error(&file, "no lora_alpha number".into()))?;
    Ok(AdapterConfig {
        alpha: alpha as f32,
    })
}

/// The base weight a PEFT tensor adapts (the converter's
/// `get_base_tensor_name`), and which half of the pair it is.
fn base_name(name: &str) -> (String, Half) {
    let base = name.replace("base_model.model.", "");
    for (tag, half) in [
        (".lora_A.weight", Half::A),
        (".lora_B.weight", Half::B),
        (".lora_embedding_A", Half::A),
        (".lora_embedding_B", Half::B),
    ] {
        if base.contains(tag) {
            return (base.replace(tag, ".weight"), half);
        }
    }
    (base, Half::Other)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Half {
    A,
    B,
    Other,
}

/// One block's expert pairs: (rule, expert) -> (A, B).
type ExpertPairs<'a> = BTreeMap<(usize, u64), (SourceTensor<'a>, SourceTensor<'a>)>;

/// A base weight's pair.
#[derive(Default)]
struct Pair<'a> {
    a: Option<SourceTensor<'a>>,
    b: Option<SourceTensor<'a>>,
}

/// The adapter's output tensors, in the converter's order: each pair's
/// `lora_a` and `lora_b` (norms an adapter carries, as they are), in the
/// order the pairs first appear in the adapter file.
pub(crate) fn plan<'a>(
    arch: &Architecture,
    config: &Config,
    sources: Vec<SourceTensor<'a>>,
    out: OutType,
) -> Result<Vec<Planned<'a>>> {
    let blocks = arch.block_count(config)?;
    let mut order: Vec<String> = Vec::new();
    let mut pairs: BTreeMap<String, Pair<'a>> = BTreeMap::new();
    let mut planned = Vec::new();
    for source in sources {
        let (base, half) = base_name(&source.name);
        if half == Half::Other {
            if base.contains(".base_layer.weight") {
                continue;
            }
            if base.contains("_layernorm") || base.contains(".norm") {
                // Norms mergekit adds to its adapters, kept as they are.
                let mut norm = source.clone();
                norm.name = base;
                if let Some(p) = plain_norm(arch, norm, blocks)? {
                    planned.push(p);
                }
                continue;
            }
            let hint = if base.contains(".embed_tokens.weight") || base.contains(".lm_head.weight")
            {
                " (embeddings in an adapter: tokens added during fine-tuning, which llama.cpp's adapters cannot carry)"
            } else {
                ""
            };
            return Err(tensor_error(
                &source,
                format!("not a lora_A or lora_B tensor{hint}"),
            ));
        }
        if !pairs.contains_key(&base) {
            order.push(base.clone());
        }
        let pair = pairs.entry(base).or_default();
        let slot = if half == Half::A {
            &mut pair.a
        } else {
            &mut pair.b
        };
        if slot.replace(source.clone()).is_some() {
            return Err(tensor_error(&source, "appears twice in the adapter".into()));
        }
    }
    let n_experts = config
        .find_u32(&["num_local_experts", "num_experts", "n_routed_experts"])?
        .map_or(0, u64::from);
    let mut experts: BTreeMap<u32, ExpertPairs<'a>> = BTreeMap::new();
    for base in order {
        let Some(Pair {
            a: Some(a),
            b: Some(b),
        }) = pairs.remove(&base)
        else {
            return Err(Error::Import(ImportError::Tensor {
                file: Path::new(ADAPTER_FILE).to_owned(),
                tensor: base,
                reason: "has only one of its lora_A and lora_B tensors".into(),
            }));
        };
        check_pair(&a, &b)?;
        let mut probe = a.clone();
        probe.name = base.clone();
        let Some((mapped, suffix)) = map_source(arch, &probe, blocks)? else {
            continue;
        };
        match mapped {
            Mapped::Skipped => {}
            Mapped::Plain(gguf, block, transforms) => {
                let name = format!("{}{suffix}", Mapped::plain_name(gguf, block));
                planned.extend(plain_pair(config, &name, transforms, a, b, out)?);
            }
            Mapped::Expert {
                block,
                expert,
                rule,
            } => {
                if expert >= n_experts {
                    return Err(tensor_error(
                        &a,
                        format!("adapts expert {expert}, but the base has {n_experts} experts"),
                    ));
                }
                let group = experts.entry(block).or_default();
                group.insert((rule, expert), (a, b));
                if group.len() as u64 == n_experts * arch.experts.len() as u64 {
                    let group = experts.remove(&block).unwrap_or_default();
                    planned.extend(stack_pairs(arch, block, group, out)?);
                }
            }
            Mapped::Split { block, rule } if rule.cut == Cut::Rows && b.shape.len() == 2 => {
                // B's rows are cut; every part keeps A.
                let parts = rule.parts.len() as u64;
                let rows = b.shape[0];
                if rows % parts != 0 {
                    return Err(tensor_error(
                        &b,
                        format!("shape {:?}: rows do not cut into {parts} parts", b.shape),
                    ));
                }
                for (i, part) in rule.parts.iter().enumerate() {
                    let name = format!("blk.{block}.{part}{suffix}");
                    let n = rows / parts;
                    let b_piece = Piece::rows(b.clone(), i as u64 * n, n);
                    planned.extend(pair_tensors(
                        &name,
                        &a,
                        vec![Piece::whole(a.clone())],
                        vec![b_piece],
                        vec![n, b.shape[1]],
                        None,
                        out,
                    ));
                }
            }
            Mapped::Split { .. } => {
                return Err(tensor_error(
                    &a,
                    format!("the converter cuts {base} in a way its LoRA pair cannot follow here (a transposed or regrouped weight)"),
                ));
            }
        }
    }
    if let Some((block, _)) = experts.into_iter().next() {
        return Err(config_error(
            &config.file,
            format!("the adapter adapts some but not all of block {block}'s {n_experts} experts, which the converter stacks"),
        ));
    }
    Ok(planned)
}

/// A's shape `[rank, in]` and B's `[out, rank]` agree.
fn check_pair(a: &SourceTensor<'_>, b: &SourceTensor<'_>) -> Result<()> {
    match (&a.shape[..], &b.shape[..]) {
        ([ra, _], [_, rb]) if ra == rb && *ra > 0 => Ok(()),
        _ => Err(tensor_error(
            b,
            format!(
                "shape {:?} does not pair with its lora_A {:?} (lora_B is [out, rank], lora_A [rank, in])",
                b.shape, a.shape
            ),
        )),
    }
}

/// A norm an adapter carries, under the base's name.
fn plain_norm<'a>(
    arch: &Architecture,
    norm: SourceTensor<'a>,
    blocks: u32,
) -> Result<Option<Planned<'a>>> {
    let Some((Mapped::Plain(gguf, block, transforms), suffix)) = map_source(arch, &norm, blocks)?
    else {
        return Ok(None);
    };
    let name = format!("{}{suffix}", Mapped::plain_name(gguf, block));
    let shape: Vec<u64> = norm.shape.iter().rev().copied().collect();
    Ok(Some(Planned {
        ty: GgmlType::F32,
        shape,
        name,
        add_one: transforms.contains(&Transform::AddOne),
        permute_heads: None,
        neg_exp: false,
        origin: Origin::Checkpoint(vec![Piece::whole(norm)]),
    }))
}

/// The `lora_a` and `lora_b` tensors of a weight converted alone: its
/// permutation, if any, applies to B's rows.
fn plain_pair<'a>(
    config: &Config,
    name: &str,
    transforms: &[Transform],
    a: SourceTensor<'a>,
    b: SourceTensor<'a>,
    out: OutType,
) -> Result<Vec<Planned<'a>>> {
    let mut permute = None;
    for t in transforms {
        match t {
            Transform::Permute { heads } => {
                let n = config.find_u32(heads)?.map(u64::from).unwrap_or(0);
                if n == 0 || !b.shape[0].is_multiple_of(2 * n) {
                    return Err(tensor_error(
                        &b,
                        format!(
                            "shape {:?}: rows do not split into {n} heads of row pairs",
                            b.shape
                        ),
                    ));
                }
                permute = Some(n);
            }
            // Norm shifts and vocabulary cuts are for the weights themselves.
            Transform::AddOne | Transform::TrimToVocab => {}
            Transform::Transpose3d | Transform::NegExp | Transform::Squeeze => {
                return Err(tensor_error(
                    &a,
                    format!(
                        "the converter transforms {name} in a way its LoRA pair cannot follow here"
                    ),
                ));
            }
        }
    }
    let b_shape = b.shape.clone();
    let (a_pieces, a_shape) = if name.starts_with("token_embd.") {
        // The converter transposes an embedding's A (llama.cpp's
        // llm_build_inp_embd reads it that way).
        let [rank, vocab] = a.shape[..] else {
            return Err(tensor_error(
                &a,
                format!("shape {:?}: lora_A is a matrix", a.shape),
            ));
        };
        let piece = Piece {
            source: a.clone(),
            start: 0,
            rows: vocab,
            row_step: 1,
            len: rank,
            col_step: vocab,
        };
        (vec![piece], vec![vocab, rank])
    } else {
        (vec![Piece::whole(a.clone())], a.shape.clone())
    };
    let mut tensors = pair_tensors(
        name,
        &a,
        a_pieces,
        vec![Piece::whole(b)],
        b_shape,
        permute,
        out,
    );
    if let Some(first) = tensors.first_mut() {
        first.shape = a_shape.iter().rev().copied().collect();
        first.ty = output_type(&first.name, &a_shape, out);
    }
    Ok(tensors)
}

/// `name.lora_a` (A's pieces, A's shape) and `name.lora_b` (B's pieces of
/// shape `b_shape`, numpy order).
fn pair_tensors<'a>(
    name: &str,
    a: &SourceTensor<'a>,
    a_pieces: Vec<Piece<'a>>,
    b_pieces: Vec<Piece<'a>>,
    b_shape: Vec<u64>,
    permute: Option<u64>,
    out: OutType,
) -> Vec<Planned<'a>> {
    let tensor = |suffix: &str, np: &[u64], pieces, permute_heads| {
        let name = format!("{name}{suffix}");
        Planned {
            ty: output_type(&name, np, out),
            shape: np.iter().rev().copied().collect(),
            name,
            origin: Origin::Checkpoint(pieces),
            permute_heads,
            add_one: false,
            neg_exp: false,
        }
    };
    vec![
        tensor(".lora_a", &a.shape, a_pieces, None),
        tensor(".lora_b", &b_shape, b_pieces, permute),
    ]
}

/// One block's expert pairs stacked: per rule, the As as `[experts, rank,
/// in]` and the Bs as `[experts, out, rank]`.
fn stack_pairs<'a>(
    arch: &Architecture,
    block: u32,
    group: ExpertPairs<'a>,
    out: OutType,
) -> Result<Vec<Planned<'a>>> {
    let mut by_rule: Vec<Vec<(SourceTensor<'a>, SourceTensor<'a>)>> =
        vec![Vec::new(); arch.experts.len()];
    for ((rule, _), pair) in group {
        by_rule[rule].push(pair);
    }
    let mut planned = Vec::new();
    for (rule, pairs) in arch.experts.iter().zip(by_rule) {
        let Some((a0, b0)) = pairs.first() else {
            continue;
        };
        if let Some((a, _)) = pairs
            .iter()
            .find(|(a, b)| a.shape != a0.shape || b.shape != b0.shape)
        {
            return Err(tensor_error(
                a,
                "the experts' LoRA pairs of a block stack only when their shapes are equal".into(),
            ));
        }
        let n = pairs.len() as u64;
        let name = format!("blk.{block}.{}.weight", rule.gguf);
        let mut a_shape = vec![n];
        a_shape.extend(&a0.shape);
        let mut b_shape = vec![n];
        b_shape.extend(&b0.shape);
        let (a_pieces, b_pieces): (Vec<_>, Vec<_>) = pairs
            .into_iter()
            .map(|(a, b)| (Piece::whole(a), Piece::whole(b)))
            .unzip();
        for (suffix, np, pieces) in [
            (".lora_a", a_shape, a_pieces),
            (".lora_b", b_shape, b_pieces),
        ] {
            let full = format!("{name}{suffix}");
            planned.push(Planned {
                ty: output_type(&full, &np, out),
                shape: np.iter().rev().copied().collect(),
                name: full,
                origin: Origin::Checkpoint(pieces),
                permute_heads: None,
                add_one: false,
                neg_exp: false,
            });
        }
    }
    Ok(planned)
}
