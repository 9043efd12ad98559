//! The checks in llama.cpp's loading order: architecture, hyper-parameter
//! keys, tokenizer, tensors.

use std::collections::HashMap;

use gguf_core::Gguf;
use gguf_core::Value;

use super::arch::{is_model_architecture, PROJECTOR};
use super::hparams::HParams;
use super::keys::{self, KeyRule, MAX_LAYERS};
use super::layouts::{layout, Check, Layout};
use super::tensors::{self, TensorSet};
use super::{vocab, Coverage, LoadProblem, LoadReport};
use crate::summary::{
    arch_key, key, loader_key, str_of, ArchParams, LoaderParams, ProjectorSummary,
};

/// `LLAMA_MAX_EXPERTS`.
const MAX_EXPERTS: u64 = 1024;

/// Rope scaling types llama.cpp knows; any other aborts it.
const ROPE_SCALING_TYPES: &[&str] = &["none", "linear", "yarn", "longrope"];

pub(super) fn check(model: &(impl Gguf + ?Sized)) -> LoadReport {
    let mut report = check_loading(model);
    if !matches!(
        report.coverage,
        Coverage::NotAModel { .. } | Coverage::Projector { .. }
    ) {
        report.problems.extend(activation_types(model));
    }
    report
}

/// The tensors llama.cpp loads but cannot compute with, by type, after
/// everything its loader checks: it meets them at the first matrix
/// multiplication.
fn activation_types(model: &(impl Gguf + ?Sized)) -> Vec<LoadProblem> {
    let mut out: Vec<LoadProblem> = Vec::new();
    for t in model.tensors() {
        let ty = t.ggml_type();
        if !gguf_core::codec::is_activation_type(ty) {
            continue;
        }
        let name = t.name().to_owned();
        match out
            .iter_mut()
            .find(|p| matches!(p, LoadProblem::ActivationType { ty: t, .. } if *t == ty))
        {
            Some(LoadProblem::ActivationType { tensors, .. }) => tensors.push(name),
            _ => out.push(LoadProblem::ActivationType {
                ty,
                tensors: vec![name],
            }),
        }
    }
    out
}

/// A projector's summary, and what libmtmd refuses of its type (as it
/// reads it: `clip.projector_type`, else the vision's or the audio's):
/// none, or one it does not know ("unknown projector type").
fn projector(meta: &(impl Gguf + ?Sized)) -> (ProjectorSummary, Vec<LoadProblem>) {
    let summary = ProjectorSummary::of(meta).unwrap_or_default();
    let mut problems = Vec::new();
    match &summary.projector_type {
        None => problems.push(LoadProblem::MissingKey {
            key: "clip.projector_type".into(),
        }),
        Some(t) if !summary.known_type => problems.push(LoadProblem::BadValue {
            key: "clip.projector_type".into(),
            reason: format!("{t:?} is not a projector type libmtmd knows (it refuses the file)"),
        }),
        Some(_) => {}
    }
    (summary, problems)
}

/// What llama.cpp's loader refuses, in its order.
fn check_loading(model: &(impl Gguf + ?Sized)) -> LoadReport {
    let meta = model;
    let architecture = str_of(meta, "general.architecture").map(String::from);
    let report = |problems, coverage| LoadReport {
        architecture: architecture.clone(),
        problems,
        coverage,
    };
    // A projector (general.type "mmproj") is libmtmd's.
    if architecture.as_deref() == Some(PROJECTOR) {
        let (projector, problems) = projector(meta);
        return report(problems, Coverage::Projector { projector });
    }
    // Adapters, imatrix files and the like are read by other code.
    if let Some(kind) = str_of(meta, "general.type").filter(|t| *t != "model") {
        let kind = format!("general.type {kind:?}");
        return report(Vec::new(), Coverage::NotAModel { kind });
    }
    let mut out = Vec::new();
    let arch = match (meta.value("general.architecture"), architecture.as_deref()) {
        (_, Some(a)) if is_model_architecture(a) => Some(a),
        (_, Some(a)) => {
            out.push(LoadProblem::UnknownArchitecture { name: a.into() });
            None
        }
        (None, None) => {
            out.push(LoadProblem::NoArchitecture);
            None
        }
        (Some(v), None) => {
            out.push(LoadProblem::WrongType {
                key: "general.architecture".into(),
                expected: "string",
                found: v.value_type().name().into(),
            });
            None
        }
    };
    let Some(arch) = arch else {
        // Without an architecture only its keys that name none apply.
        for rule in keys::BASE_KEYS.iter().filter(|r| !r.key.contains("{arch}")) {
            keys::check(meta, rule, "", None, &mut out);
        }
        tokenizer_keys(meta, "", &mut out);
        vocab::check(meta, &mut out);
        return report(out, Coverage::CommonKeysOnly);
    };
    let layout = layout(arch);
    let params = ArchParams::as_llama_cpp_reads(meta, arch);
    let more = LoaderParams::as_llama_cpp_reads(meta, arch);
    let n_layer = params.block_count.map(u64::from);
    check_keys(meta, keys::BASE_KEYS, arch, n_layer, &mut out);
    base_values(meta, arch, &params, &more, &mut out);
    if let Some(l) = layout {
        check_keys(meta, l.keys, arch, n_layer, &mut out);
    }
    tokenizer_keys(meta, arch, &mut out);
    let n_tokens = vocab::check(meta, &mut out);
    let Some(layout) = layout else {
        return report(out, Coverage::CommonKeysOnly);
    };
    let hp = HParams::of(&params, &more, arch, n_tokens);
    arch_values(arch, layout, &hp, &more, &mut out);
    // Some keys have two readers (llama's vocabulary size): one problem each.
    let mut unique: Vec<LoadProblem> = Vec::with_capacity(out.len());
    for p in out {
        if !unique.contains(&p) {
            unique.push(p);
        }
    }
    let mut out = unique;
    // Tensor shapes come from the keys: checked once those are right (as
    // llama.cpp, which stops at the first problem, would reach them).
    if out.is_empty() {
        out.extend(tensors::check(layout.tensors, &hp, &tensor_set(model)));
    }
    report(out, Coverage::Full)
}

fn check_keys(
    meta: &(impl Gguf + ?Sized),
    rules: &[KeyRule],
    arch: &str,
    n_layer: Option<u64>,
    out: &mut Vec<LoadProblem>,
) {
    for rule in rules {
        keys::check(meta, rule, arch, n_layer, out);
    }
}

/// The tokenizer's scalar keys: all of them, or the vocabulary size
/// alone for a model without a vocabulary (llama.cpp reads no more).
fn tokenizer_keys(meta: &(impl Gguf + ?Sized), arch: &str, out: &mut Vec<LoadProblem>) {
    check_keys(meta, keys::VOCAB_TYPE_KEYS, arch, None, out);
    if !vocab::is_vocabless(str_of(meta, "tokenizer.ggml.model")) {
        check_keys(meta, keys::VOCAB_KEYS, arch, None, out);
    } else if !arch.is_empty() {
        check_keys(meta, keys::VOCABLESS_KEYS, arch, None, out);
    }
}

fn bad(key: impl Into<String>, reason: String) -> LoadProblem {
    LoadProblem::BadValue {
        key: key.into(),
        reason,
    }
}

/// Values `load_hparams` asserts on, for every architecture.
fn base_values(
    meta: &(impl Gguf + ?Sized),
    arch: &str,
    params: &ArchParams,
    more: &LoaderParams,
    out: &mut Vec<LoadProblem>,
) {
    let name = |k: &str| arch_key(k, arch);
    if let Some(n) = params.block_count.map(u64::from) {
        if n == 0 || n > MAX_LAYERS {
            out.push(bad(
                name(key::block_count),
                format!("is {n}; llama.cpp takes 1 to {MAX_LAYERS} layers"),
            ));
        }
        let nextn = params.nextn_predict_layers.map(u64::from);
        if let Some(nextn) = nextn.filter(|&m| m > n) {
            out.push(bad(
                name(key::nextn_predict_layers),
                format!("is {nextn}, more than the {n} layers"),
            ));
        }
    }
    if let Some(t) = more.rope_scaling_type.as_deref()
        && !ROPE_SCALING_TYPES.contains(&t)
    {
        out.push(bad(
            name(loader_key::rope_scaling_type),
            format!("is {t:?}, not one of {ROPE_SCALING_TYPES:?}"),
        ));
    }
    experts(arch, params, more, out);
    tensor_extra(meta, out);
}

/// The expert counts' consistency, as `load_hparams` asserts it.
fn experts(arch: &str, params: &ArchParams, more: &LoaderParams, out: &mut Vec<LoadProblem>) {
    let count = |v: Option<u32>| v.map_or(0, u64::from);
    let mut n_expert = count(params.expert_count);
    let mut used = params
        .expert_used_count
        .as_ref()
        .map_or(0, |p| u64::from(p.max()));
    if matches!(arch, "hunyuan_vl" | "hunyuan-dense") && n_expert <= 1 {
        (n_expert, used) = (0, 0);
    }
    let groups = count(more.expert_group_count);
    let group_used = count(more.expert_group_used_count);
    let mut refuse = |k: &str, reason: String| out.push(bad(arch_key(k, arch), reason));
    if n_expert > MAX_EXPERTS {
        refuse(
            key::expert_count,
            format!("is {n_expert}, more than llama.cpp's {MAX_EXPERTS}"),
        );
    }
    if used > n_expert {
        refuse(
            key::expert_used_count,
            format!("is {used}, more than the {n_expert} experts"),
        );
    }
    if n_expert > 0 && used == 0 {
        refuse(
            key::expert_used_count,
            "must be above 0 when there are experts".into(),
        );
    }
    if n_expert > 0 && groups >= n_expert {
        refuse(
            loader_key::expert_group_count,
            format!("is {groups}, not fewer than the {n_expert} experts"),
        );
    }
    if n_expert > 0
        && groups > 1
        && (n_expert % groups != 0 || group_used == 0 || group_used >= groups)
    {
        refuse(
            loader_key::expert_group_count,
            format!("{groups} groups with {group_used} used do not divide {n_expert} experts"),
        );
    }
    if n_expert == 0 && groups != 0 {
        refuse(
            loader_key::expert_group_count,
            "is set without experts".into(),
        );
    }
}

/// Per-tensor precision hints: names, then as many `bool` flags.
fn tensor_extra(meta: &(impl Gguf + ?Sized), out: &mut Vec<LoadProblem>) {
    let Some(Value::Array(names)) = meta.value("general.tensor_extra.name") else {
        return;
    };
    let key = "general.tensor_extra.prec_a4";
    match meta.value(key) {
        Some(Value::Array(a)) if a.element_type() == gguf_core::ValueType::Bool => {
            if a.len() != names.len() {
                out.push(bad(
                    key,
                    format!("has {} flags for {} names", a.len(), names.len()),
                ));
            }
        }
        _ => out.push(bad(
            key,
            "must be an array of bool when tensor_extra.name is set".into(),
        )),
    }
}

/// The checks an architecture adds beyond key types.
fn arch_values(
    arch: &str,
    layout: &Layout,
    hp: &HParams,
    more: &LoaderParams,
    out: &mut Vec<LoadProblem>,
) {
    let name = |k: &str| arch_key(k, arch);
    for check in layout.checks {
        match check {
            Check::RotIsHeadWidth if hp.n_head > 0 && hp.n_rot_full != hp.head_k_full => {
                out.push(bad(
                    name(loader_key::rope_dimension_count),
                    format!(
                        "is {}; llama.cpp requires the head width, {}, for this architecture",
                        hp.n_rot_full, hp.head_k_full
                    ),
                ))
            }
            Check::NeedsExperts if hp.n_layer > 0 && hp.n_expert == 0 => out.push(bad(
                name(key::expert_count),
                "must be above 0 for this architecture".into(),
            )),
            Check::NeedsExperts if hp.n_layer > 0 && hp.n_expert_used == 0 => out.push(bad(
                name(key::expert_used_count),
                "must be above 0 for this architecture".into(),
            )),
            Check::TemperatureNeedsContext => {
                let scale = more.attention_temperature_scale.unwrap_or(0.0);
                let orig = more
                    .rope_scaling_original_context_length
                    .map_or(hp.n_ctx_train, u64::from);
                if scale != 0.0 && orig == 0 {
                    out.push(bad(
                        name(loader_key::attention_temperature_scale),
                        "is set but the original context length is 0".into(),
                    ));
                }
            }
            _ => {}
        }
    }
}

/// The model's tensors, by name and in order.
fn tensor_set<'m>(model: &'m (impl Gguf + ?Sized)) -> TensorSet<'m> {
    let mut set = TensorSet {
        by_name: HashMap::new(),
        order: Vec::new(),
    };
    for t in model.tensors() {
        set.by_name.insert(t.name(), (t.shape(), t.ggml_type()));
        set.order.push(t.name());
    }
    set
}
