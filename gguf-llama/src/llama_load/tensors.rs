//! Tensor rules: which tensors an architecture's `load_arch_tensors`
//! creates, under which conditions, with which shape; and the check of a
//! model's tensors against them.
//!
//! llama.cpp's loader (`create_tensor`, `check_tensor_dims`) looks each
//! tensor up by name, refuses a missing one unless it is optional, and
//! compares all four dimensions (missing trailing ones must be 1). At the
//! end (`done_getting_tensors`) it refuses a file holding any tensor it
//! did not create.

use std::collections::{HashMap, HashSet};

use gguf_core::GgmlType;

use super::hparams::HParams;
use super::LoadProblem;

/// A tensor dimension, in terms of the hyper-parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dim {
    /// `n_embd`.
    Embd,
    /// `n_vocab`: the tokenizer's token count.
    Vocab,
    /// `n_ctx_train`.
    Ctx,
    /// `n_ff` (layer 0).
    Ff,
    /// `2 * n_ff` (fused gate and up).
    Ff2,
    /// `n_embd_head_k * n_head`: the query width.
    Q,
    /// `n_embd_k_gqa`: `n_embd_head_k * n_head_kv`.
    KGqa,
    /// `n_embd_v_gqa` (llama.cpp's `n_embd_gqa` too).
    VGqa,
    /// The sum of these (a fused QKV's width).
    Sum(&'static [Dim]),
    /// `n_embd_head_k`.
    HeadK,
    /// `n_head`.
    Heads,
    /// `n_head_kv`.
    HeadsKv,
    /// `n_rot / 2`: rope frequency factors.
    Rot2,
    /// `n_expert`.
    Experts,
    /// An expert's feed-forward width: `n_ff_exp`, else `n_ff / n_expert_used`.
    FfExp,
    /// The shared expert's width: `n_ff_shexp`, else `n_ff`.
    FfShexp,
    /// `n_cls_out`: classifier labels (1 without any).
    ClsOut,
}

impl Dim {
    fn eval(&self, hp: &HParams) -> u64 {
        let (e, f) = (hp.n_embd, hp.n_ff);
        let vgqa = hp.head_v.saturating_mul(hp.n_head_kv);
        match self {
            Dim::Embd => e,
            Dim::Vocab => hp.n_vocab,
            Dim::Ctx => hp.n_ctx_train,
            Dim::Ff => f,
            Dim::Ff2 => f.saturating_mul(2),
            Dim::Q => hp.head_k.saturating_mul(hp.n_head),
            Dim::KGqa => hp.head_k.saturating_mul(hp.n_head_kv),
            Dim::VGqa => vgqa,
            Dim::Sum(parts) => parts
                .iter()
                .fold(0, |acc, d| acc.saturating_add(d.eval(hp))),
            Dim::HeadK => hp.head_k,
            Dim::Heads => hp.n_head,
            Dim::HeadsKv => hp.n_head_kv,
            Dim::Rot2 => hp.n_rot / 2,
            Dim::Experts => hp.n_expert,
            Dim::FfExp if hp.n_ff_exp > 0 => hp.n_ff_exp,
            Dim::FfExp => f.checked_div(hp.n_expert_used).unwrap_or(0),
            Dim::FfShexp if hp.n_ff_shexp > 0 => hp.n_ff_shexp,
            Dim::FfShexp => f,
            Dim::ClsOut => hp.n_cls_out,
        }
    }
}

/// When a rule applies. Tensor names in `Present`/`Absent` use `#` for
/// the layer, like rule names.
#[derive(Debug, Clone, Copy)]
pub(super) enum When {
    Always,
    /// `n_expert == 0`.
    Dense,
    /// `n_expert > 0`.
    Moe,
    /// `{arch}.rope.scaling.type` is `longrope`.
    LongRope,
    NotLongRope,
    /// The file has this tensor.
    Present(&'static str),
    /// The file lacks this tensor.
    Absent(&'static str),
    /// Every condition holds.
    All(&'static [When]),
}

/// One tensor llama.cpp creates: its name (`#` stands for the layer
/// number in repeating layers), its shape, whether loading fails without
/// it, and when it is created.
#[derive(Debug, Clone, Copy)]
pub(super) struct TensorRule {
    pub name: &'static str,
    pub dims: &'static [Dim],
    pub required: bool,
    pub when: When,
}

/// A required tensor.
pub(super) const fn req(name: &'static str, dims: &'static [Dim]) -> TensorRule {
    TensorRule {
        name,
        dims,
        required: true,
        when: When::Always,
    }
}

/// An optional tensor.
pub(super) const fn opt(name: &'static str, dims: &'static [Dim]) -> TensorRule {
    TensorRule {
        name,
        dims,
        required: false,
        when: When::Always,
    }
}

impl TensorRule {
    /// The same rule, applying only when `when` holds.
    pub(super) const fn when(self, when: When) -> Self {
        TensorRule { when, ..self }
    }
}

/// Weights llama.cpp's generic pass gives an optional `.scale` and
/// `.input_scale` (NVFP4 and similar) once the weight itself was created;
/// expert weights have one scale per expert.
const SCALED: &[&str] = &[
    "attn_q",
    "attn_k",
    "attn_v",
    "attn_output",
    "attn_qkv",
    "attn_gate",
    "ffn_gate",
    "ffn_down",
    "ffn_up",
    "ffn_gate_shexp",
    "ffn_down_shexp",
    "ffn_up_shexp",
    "ssm_in",
    "ssm_out",
    "ssm_alpha",
    "ssm_beta",
];
const SCALED_PER_EXPERT: &[&str] = &["ffn_gate_exps", "ffn_down_exps", "ffn_up_exps"];

/// A model's tensors as the loader sees them: shape and type by name, and
/// the names in file order.
pub(super) struct TensorSet<'a> {
    pub by_name: HashMap<&'a str, (&'a [u64], GgmlType)>,
    pub order: Vec<&'a str>,
}

impl TensorSet<'_> {
    fn has(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }
}

/// The rule's name for layer `il` (`None` for a non-repeating tensor).
fn name_for(template: &str, il: Option<u64>) -> String {
    match il {
        Some(il) => template.replace('#', &il.to_string()),
        None => template.to_string(),
    }
}

fn holds(when: &When, hp: &HParams, set: &TensorSet<'_>, il: Option<u64>) -> bool {
    match when {
        When::Always => true,
        When::Dense => hp.n_expert == 0,
        When::Moe => hp.n_expert > 0,
        When::LongRope => hp.longrope,
        When::NotLongRope => !hp.longrope,
        When::Present(t) => set.has(&name_for(t, il)),
        When::Absent(t) => !set.has(&name_for(t, il)),
        When::All(all) => all.iter().all(|w| holds(w, hp, set, il)),
    }
}

/// Shapes as llama.cpp compares them: four dimensions, 1 where unstated.
fn same_shape(expected: &[u64], found: &[u64]) -> bool {
    (0..4).all(|i| expected.get(i).unwrap_or(&1) == found.get(i).unwrap_or(&1))
}

/// llama.cpp's `create_tensor` over a model's tensors: what it created,
/// and what it refused.
struct Loader<'s, 'a> {
    set: &'s TensorSet<'a>,
    created: HashSet<String>,
    problems: Vec<LoadProblem>,
}

impl Loader<'_, '_> {
    fn create(&mut self, name: String, dims: Vec<u64>, required: bool) {
        match self.set.by_name.get(name.as_str()) {
            None if required => self
                .problems
                .push(LoadProblem::MissingTensor { tensor: name }),
            None => {}
            Some((shape, _)) => {
                if !same_shape(&dims, shape) {
                    self.problems.push(LoadProblem::WrongShape {
                        tensor: name.clone(),
                        expected: dims,
                        found: shape.to_vec(),
                    });
                }
                self.created.insert(name);
            }
        }
    }

    /// The generic pass after the architecture's: an optional `.scale`
    /// and `.input_scale` for each created weight that takes them.
    fn scales(&mut self, hp: &HParams) {
        let mut stems: Vec<String> = self
            .created
            .iter()
            .filter_map(|w| w.strip_suffix(".weight").map(String::from))
            .collect();
        stems.sort_unstable();
        for stem in stems {
            let kind = stem.split('.').nth(2).filter(|_| stem.starts_with("blk."));
            let dims = match kind {
                Some(k) if SCALED.contains(&k) => vec![1],
                Some(k) if SCALED_PER_EXPERT.contains(&k) => vec![hp.n_expert],
                // The output projection's, when it is NVFP4 (and so not tied).
                None if stem == "output" && self.output_is_nvfp4() => vec![1],
                _ => continue,
            };
            for suffix in ["scale", "input_scale"] {
                self.create(format!("{stem}.{suffix}"), dims.clone(), false);
            }
        }
    }

    fn output_is_nvfp4(&self) -> bool {
        self.set.by_name.get("output.weight").map(|t| t.1) == Some(GgmlType::NVFP4)
    }
}

/// Checks `set` against `rules`; `hp.n_layer` must already be bounded
/// (llama.cpp refuses more than 512 layers before it gets here).
pub(super) fn check(
    rules: &[&[TensorRule]],
    hp: &HParams,
    set: &TensorSet<'_>,
) -> Vec<LoadProblem> {
    let mut loader = Loader {
        set,
        created: HashSet::new(),
        problems: Vec::new(),
    };
    for rule in rules.iter().flat_map(|group| group.iter()) {
        let layers: Vec<Option<u64>> = if rule.name.contains('#') {
            (0..hp.n_layer).map(Some).collect()
        } else {
            vec![None]
        };
        for il in layers {
            if holds(&rule.when, hp, set, il) {
                let dims = rule.dims.iter().map(|d| d.eval(hp)).collect();
                loader.create(name_for(rule.name, il), dims, rule.required);
            }
        }
    }
    loader.scales(hp);
    let Loader {
        created,
        mut problems,
        ..
    } = loader;
    problems.extend(
        set.order
            .iter()
            .filter(|name| !created.contains(**name))
            .map(|t| LoadProblem::UnusedTensor {
                tensor: (*t).into(),
            }),
    );
    problems
}
