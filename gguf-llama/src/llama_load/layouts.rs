//! Per-architecture rules, as data: the keys each architecture's
//! `load_arch_hparams` reads and the tensors its `load_arch_tensors`
//! creates. An architecture missing here is still checked for the keys
//! every architecture reads, but its tensors are not.

use super::keys::{self, Expect::*, KeyRule};
use super::tensors::{opt, req, Dim, Dim::*, TensorRule, When::*};
use crate::summary::{key, loader_key};

/// What llama.cpp checks beyond key types for an architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// `n_rot` must equal the head width (`invalid n_rot`).
    RotIsHeadWidth,
    /// `expert_count` and `expert_used_count` above 0 (the MoE models).
    NeedsExperts,
    /// An attention temperature scale needs a non-zero original context.
    TemperatureNeedsContext,
}

/// One architecture's rules.
pub(super) struct Layout {
    pub arch: &'static str,
    pub keys: &'static [KeyRule],
    pub tensors: &'static [&'static [TensorRule]],
    pub checks: &'static [Check],
}

/// The rules for `arch`, if this crate has them.
pub(super) fn layout(arch: &str) -> Option<&'static Layout> {
    LAYOUTS.iter().find(|l| l.arch == arch)
}

const RMS_EPS: KeyRule = keys::req("{arch}.attention.layer_norm_rms_epsilon", F32);
const NORM_EPS: KeyRule = keys::req("{arch}.attention.layer_norm_epsilon", F32);

const TOKEN_EMBD: TensorRule = req("token_embd.weight", &[Embd, Vocab]);
const OUTPUT_NORM: TensorRule = req("output_norm.weight", &[Embd]);
const OUTPUT_NORM_BIAS: TensorRule = req("output_norm.bias", &[Embd]);
/// The output projection; without it llama.cpp ties it to `token_embd`.
const OUTPUT_TIED: TensorRule = opt("output.weight", &[Embd, Vocab]);
const OUTPUT: TensorRule = req("output.weight", &[Embd, Vocab]);

/// The widths `create_tensor_qkv` is given: queries, keys, values.
pub(super) struct QkvWidths {
    w_q: [Dim; 2],
    w_k: [Dim; 2],
    w_v: [Dim; 2],
    b_q: [Dim; 1],
    b_k: [Dim; 1],
    b_v: [Dim; 1],
    w_qkv: [Dim; 2],
    b_qkv: [Dim; 1],
}

impl QkvWidths {
    const fn new(q: Dim, k: Dim, v: Dim, sum: Dim) -> Self {
        QkvWidths {
            w_q: [Embd, q],
            w_k: [Embd, k],
            w_v: [Embd, v],
            b_q: [q],
            b_k: [k],
            b_v: [v],
            w_qkv: [Embd, sum],
            b_qkv: [sum],
        }
    }
}

/// `n_embd_head_k * n_head`, `n_embd_k_gqa`, `n_embd_v_gqa`.
const HEADS: QkvWidths = QkvWidths::new(Q, KGqa, VGqa, Sum(&[Q, KGqa, VGqa]));
/// `n_embd`, `n_embd_gqa`, `n_embd_gqa`.
const EMBD: QkvWidths = QkvWidths::new(Embd, VGqa, VGqa, Sum(&[Embd, VGqa, VGqa]));
/// `n_embd_head_k * n_head`, `n_embd_gqa`, `n_embd_gqa`.
const HEADS_GQA: QkvWidths = QkvWidths::new(Q, VGqa, VGqa, Sum(&[Q, VGqa, VGqa]));

const QKV: &str = "blk.#.attn_qkv.weight";
const QKV_BIAS: &str = "blk.#.attn_qkv.bias";

/// `create_tensor_qkv`: a fused `attn_qkv` (with its bias, or else
/// separate optional biases), or else separate `attn_q`, `attn_k` and
/// `attn_v` (required when `required`) with optional biases.
const fn qkv(w: &'static QkvWidths, required: bool) -> [TensorRule; 11] {
    let fused_no_bias = All(&[Present(QKV), Absent(QKV_BIAS)]);
    let mut q = req("blk.#.attn_q.weight", &w.w_q).when(Absent(QKV));
    let mut k = req("blk.#.attn_k.weight", &w.w_k).when(Absent(QKV));
    let mut v = req("blk.#.attn_v.weight", &w.w_v).when(Absent(QKV));
    q.required = required;
    k.required = required;
    v.required = required;
    [
        opt(QKV, &w.w_qkv),
        opt(QKV_BIAS, &w.b_qkv).when(Present(QKV)),
        opt("blk.#.attn_q.bias", &w.b_q).when(fused_no_bias),
        opt("blk.#.attn_k.bias", &w.b_k).when(fused_no_bias),
        opt("blk.#.attn_v.bias", &w.b_v).when(fused_no_bias),
        q,
        k,
        v,
        opt("blk.#.attn_q.bias", &w.b_q).when(Absent(QKV)),
        opt("blk.#.attn_k.bias", &w.b_k).when(Absent(QKV)),
        opt("blk.#.attn_v.bias", &w.b_v).when(Absent(QKV)),
    ]
}

const QKV_HEADS: [TensorRule; 11] = qkv(&HEADS, true);
const QKV_EMBD: [TensorRule; 11] = qkv(&EMBD, true);
const QKV_EMBD_OPTIONAL: [TensorRule; 11] = qkv(&EMBD, false);
const QKV_HEADS_GQA: [TensorRule; 11] = qkv(&HEADS_GQA, true);

/// A gated feed-forward block: gate, down, up.
const FFN_GATED: [TensorRule; 3] = [
    req("blk.#.ffn_gate.weight", &[Embd, Ff]),
    req("blk.#.ffn_down.weight", &[Ff, Embd]),
    req("blk.#.ffn_up.weight", &[Embd, Ff]),
];

/// Llama and the architectures that share its `load_arch_tensors`.
const LLAMA_LAYER: &[TensorRule] = &[
    req("blk.#.attn_norm.weight", &[Embd]),
    req("blk.#.attn_output.weight", &[Q, Embd]),
    opt("blk.#.attn_output.bias", &[Embd]),
    req("blk.#.ffn_norm.weight", &[Embd]),
    opt("rope_factors_long.weight", &[Rot2]).when(LongRope),
    opt("rope_factors_short.weight", &[Rot2]).when(LongRope),
    opt("rope_freqs.weight", &[Rot2]).when(NotLongRope),
    req("blk.#.ffn_gate.weight", &[Embd, Ff]).when(Dense),
    req("blk.#.ffn_down.weight", &[Ff, Embd]).when(Dense),
    req("blk.#.ffn_up.weight", &[Embd, Ff]).when(Dense),
    opt("blk.#.ffn_gate.bias", &[Ff]).when(Dense),
    opt("blk.#.ffn_down.bias", &[Embd]).when(Dense),
    opt("blk.#.ffn_up.bias", &[Ff]).when(Dense),
    req("blk.#.ffn_gate_inp.weight", &[Embd, Experts]).when(Moe),
    opt("blk.#.ffn_gate_exps.weight", &[Embd, Ff, Experts]).when(Moe),
    req("blk.#.ffn_down_exps.weight", &[Ff, Embd, Experts]).when(Moe),
    req("blk.#.ffn_up_exps.weight", &[Embd, Ff, Experts]).when(Moe),
];
const LLAMA_TENSORS: &[&[TensorRule]] = &[
    &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT_TIED],
    &QKV_HEADS,
    LLAMA_LAYER,
];

/// Gemma's per-layer tensors; Gemma 2 and 3 add norms.
const GEMMA_LAYER: &[TensorRule] = &[
    req("blk.#.attn_norm.weight", &[Embd]),
    req("blk.#.attn_output.weight", &[Q, Embd]),
    req("blk.#.ffn_norm.weight", &[Embd]),
];
const GEMMA2_NORMS: &[TensorRule] = &[
    req("blk.#.post_attention_norm.weight", &[Embd]),
    req("blk.#.post_ffw_norm.weight", &[Embd]),
];
const QK_NORMS: &[TensorRule] = &[
    req("blk.#.attn_k_norm.weight", &[HeadK]),
    req("blk.#.attn_q_norm.weight", &[HeadK]),
];

/// The Qwen 2 layer's attention output and norms (also Baichuan's and
/// InternLM 2's).
const QWEN2_LAYER: &[TensorRule] = &[
    req("blk.#.attn_norm.weight", &[Embd]),
    req("blk.#.attn_output.weight", &[Embd, Embd]),
    req("blk.#.ffn_norm.weight", &[Embd]),
];
const QWEN3_LAYER: &[TensorRule] = &[
    req("blk.#.attn_norm.weight", &[Embd]),
    req("blk.#.attn_output.weight", &[Q, Embd]),
    req("blk.#.ffn_norm.weight", &[Embd]),
];
/// Routed experts of width `FfExp`.
const EXPERTS: &[TensorRule] = &[
    req("blk.#.ffn_gate_inp.weight", &[Embd, Experts]),
    req("blk.#.ffn_gate_exps.weight", &[Embd, FfExp, Experts]),
    req("blk.#.ffn_down_exps.weight", &[FfExp, Embd, Experts]),
    req("blk.#.ffn_up_exps.weight", &[Embd, FfExp, Experts]),
];
const SHARED_EXPERT: &[TensorRule] = &[
    req("blk.#.ffn_gate_inp_shexp.weight", &[Embd]),
    req("blk.#.ffn_gate_shexp.weight", &[Embd, FfShexp]),
    req("blk.#.ffn_down_shexp.weight", &[FfShexp, Embd]),
    req("blk.#.ffn_up_shexp.weight", &[Embd, FfShexp]),
];

/// Layer norms with biases, attention and feed-forward.
const LAYER_NORMS_BIASED: &[TensorRule] = &[
    req("blk.#.attn_norm.weight", &[Embd]),
    req("blk.#.attn_norm.bias", &[Embd]),
    req("blk.#.ffn_norm.weight", &[Embd]),
    req("blk.#.ffn_norm.bias", &[Embd]),
];

/// GPT-2's block (StarCoder's and BLOOM's too): fused QKV, every
/// projection with a bias, plain (ungated) feed-forward.
const GPT2_LAYER: &[TensorRule] = &[
    req(QKV, &[Embd, Sum(&[Embd, VGqa, VGqa])]),
    req(QKV_BIAS, &[Sum(&[Embd, VGqa, VGqa])]),
    req("blk.#.attn_output.weight", &[Embd, Embd]),
    req("blk.#.attn_output.bias", &[Embd]),
    req("blk.#.ffn_down.weight", &[Ff, Embd]),
    req("blk.#.ffn_down.bias", &[Embd]),
    req("blk.#.ffn_up.weight", &[Embd, Ff]),
    req("blk.#.ffn_up.bias", &[Ff]),
];

const NO_CHECKS: &[Check] = &[];

static LAYOUTS: &[Layout] = &[
    Layout {
        arch: "llama",
        keys: &[keys::opt(key::vocab_size, U32), RMS_EPS],
        tensors: LLAMA_TENSORS,
        checks: &[Check::RotIsHeadWidth],
    },
    Layout {
        arch: "refact",
        keys: &[RMS_EPS],
        tensors: LLAMA_TENSORS,
        checks: NO_CHECKS,
    },
    Layout {
        arch: "mistral3",
        keys: &[
            RMS_EPS,
            keys::opt(loader_key::attention_temperature_scale, F32),
            keys::opt("{arch}.rope.scaling.yarn_beta_fast", F32),
            keys::opt("{arch}.rope.scaling.yarn_beta_slow", F32),
            keys::opt("{arch}.rope.scaling.yarn_log_multiplier", F32),
        ],
        tensors: LLAMA_TENSORS,
        checks: &[Check::TemperatureNeedsContext],
    },
    Layout {
        arch: "gemma",
        keys: &[RMS_EPS],
        // The output projection is always `token_embd`.
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM],
            &QKV_HEADS,
            GEMMA_LAYER,
            &FFN_GATED,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "gemma2",
        keys: &[
            keys::opt(loader_key::sliding_window_pattern, U32OrLayerFlags),
            keys::opt("{arch}.rope.freq_base_swa", F32),
            keys::opt(key::sliding_window, U32),
            RMS_EPS,
            keys::opt("{arch}.attn_logit_softcapping", F32),
            keys::opt("{arch}.final_logit_softcapping", F32),
        ],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM],
            &QKV_HEADS,
            GEMMA_LAYER,
            &FFN_GATED,
            GEMMA2_NORMS,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "gemma3",
        keys: &[
            keys::opt(key::sliding_window, U32),
            keys::opt(loader_key::sliding_window_pattern, U32OrLayerFlags),
            keys::opt("{arch}.rope.freq_base_swa", F32),
            keys::opt("{arch}.final_logit_softcapping", F32),
            RMS_EPS,
        ],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT_TIED],
            &QKV_HEADS,
            GEMMA_LAYER,
            &FFN_GATED,
            GEMMA2_NORMS,
            QK_NORMS,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "qwen2",
        keys: &[RMS_EPS],
        tensors: &[
            &[
                TOKEN_EMBD,
                OUTPUT_NORM,
                OUTPUT_TIED,
                opt("output.bias", &[Vocab]),
            ],
            &QKV_EMBD,
            QWEN2_LAYER,
            &FFN_GATED,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "qwen2moe",
        keys: &[
            keys::opt(loader_key::expert_feed_forward_length, U32PerLayer),
            keys::opt(loader_key::expert_shared_feed_forward_length, U32),
            RMS_EPS,
        ],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT],
            &QKV_EMBD,
            QWEN2_LAYER,
            EXPERTS,
            SHARED_EXPERT,
        ],
        checks: &[Check::NeedsExperts],
    },
    Layout {
        arch: "qwen3",
        keys: &[RMS_EPS],
        tensors: &[
            &[
                TOKEN_EMBD,
                OUTPUT_NORM,
                OUTPUT_TIED,
                opt("cls.output.weight", &[Embd, ClsOut]),
            ],
            &QKV_HEADS_GQA,
            QWEN3_LAYER,
            QK_NORMS,
            &FFN_GATED,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "qwen3moe",
        keys: &[
            keys::opt(loader_key::expert_feed_forward_length, U32PerLayer),
            RMS_EPS,
        ],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT_TIED],
            &QKV_HEADS_GQA,
            QWEN3_LAYER,
            QK_NORMS,
            EXPERTS,
        ],
        checks: &[Check::NeedsExperts],
    },
    Layout {
        arch: "phi3",
        keys: &[RMS_EPS, keys::opt(key::sliding_window, U32)],
        tensors: &[
            &[
                TOKEN_EMBD,
                OUTPUT_NORM,
                OUTPUT_TIED,
                opt("rope_factors_long.weight", &[Rot2]),
                opt("rope_factors_short.weight", &[Rot2]),
            ],
            &QKV_EMBD_OPTIONAL,
            &[
                req("blk.#.attn_norm.weight", &[Embd]),
                req("blk.#.attn_output.weight", &[Embd, Embd]),
                req("blk.#.ffn_norm.weight", &[Embd]),
                req("blk.#.ffn_down.weight", &[Ff, Embd]),
                // Gate and up, fused.
                req("blk.#.ffn_up.weight", &[Embd, Ff2]),
            ],
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "falcon",
        keys: &[NORM_EPS],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT_NORM_BIAS, OUTPUT_TIED],
            &[
                req("blk.#.attn_norm.weight", &[Embd]),
                req("blk.#.attn_norm.bias", &[Embd]),
                opt("blk.#.attn_norm_2.weight", &[Embd]),
                opt("blk.#.attn_norm_2.bias", &[Embd]),
                req(QKV, &[Embd, Sum(&[Embd, VGqa, VGqa])]),
                req("blk.#.attn_output.weight", &[Embd, Embd]),
                req("blk.#.ffn_down.weight", &[Ff, Embd]),
                req("blk.#.ffn_up.weight", &[Embd, Ff]),
            ],
        ],
        checks: &[Check::RotIsHeadWidth],
    },
    Layout {
        arch: "starcoder2",
        keys: &[NORM_EPS],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT_NORM_BIAS, OUTPUT_TIED],
            &QKV_EMBD,
            LAYER_NORMS_BIASED,
            &[
                req("blk.#.attn_output.weight", &[Embd, Embd]),
                req("blk.#.attn_output.bias", &[Embd]),
                req("blk.#.ffn_down.weight", &[Ff, Embd]),
                req("blk.#.ffn_up.weight", &[Embd, Ff]),
                req("blk.#.ffn_down.bias", &[Embd]),
                req("blk.#.ffn_up.bias", &[Ff]),
            ],
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "baichuan",
        keys: &[RMS_EPS],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT],
            &QKV_EMBD,
            QWEN2_LAYER,
            &FFN_GATED,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "internlm2",
        keys: &[RMS_EPS],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT],
            &QKV_EMBD,
            QWEN2_LAYER,
            &FFN_GATED,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "orion",
        keys: &[NORM_EPS],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM, OUTPUT_NORM_BIAS, OUTPUT],
            &QKV_EMBD,
            LAYER_NORMS_BIASED,
            &[req("blk.#.attn_output.weight", &[Embd, Embd])],
            &FFN_GATED,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "stablelm",
        keys: &[NORM_EPS],
        tensors: &[
            &[TOKEN_EMBD, OUTPUT_NORM_BIAS, OUTPUT_NORM, OUTPUT],
            &QKV_EMBD,
            &[
                req("blk.#.attn_norm.weight", &[Embd]),
                req("blk.#.attn_norm.bias", &[Embd]),
                req("blk.#.attn_output.weight", &[Embd, Embd]),
                opt("blk.#.attn_q_norm.weight", &[HeadK, Heads]),
                opt("blk.#.attn_k_norm.weight", &[HeadK, HeadsKv]),
                opt("blk.#.ffn_norm.weight", &[Embd]),
                opt("blk.#.ffn_norm.bias", &[Embd]),
            ],
            &FFN_GATED,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "gpt2",
        keys: &[NORM_EPS],
        tensors: &[
            &[
                TOKEN_EMBD,
                req("position_embd.weight", &[Embd, Ctx]),
                OUTPUT_NORM,
                OUTPUT_NORM_BIAS,
                OUTPUT_TIED,
            ],
            LAYER_NORMS_BIASED,
            GPT2_LAYER,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "starcoder",
        keys: &[NORM_EPS],
        tensors: &[
            &[
                TOKEN_EMBD,
                req("position_embd.weight", &[Embd, Ctx]),
                OUTPUT_NORM,
                OUTPUT_NORM_BIAS,
                OUTPUT_TIED,
            ],
            LAYER_NORMS_BIASED,
            GPT2_LAYER,
        ],
        checks: NO_CHECKS,
    },
    Layout {
        arch: "bloom",
        keys: &[NORM_EPS],
        tensors: &[
            &[
                TOKEN_EMBD,
                req("token_embd_norm.weight", &[Embd]),
                req("token_embd_norm.bias", &[Embd]),
                OUTPUT_NORM,
                OUTPUT_NORM_BIAS,
                OUTPUT_TIED,
            ],
            LAYER_NORMS_BIASED,
            GPT2_LAYER,
        ],
        checks: NO_CHECKS,
    },
];

/// Architectures with rules here.
pub(super) fn modelled() -> impl Iterator<Item = &'static str> {
    LAYOUTS.iter().map(|l| l.arch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_rule() -> impl Iterator<Item = &'static KeyRule> {
        keys::BASE_KEYS
            .iter()
            .chain(keys::VOCABLESS_KEYS)
            .chain(LAYOUTS.iter().flat_map(|l| l.keys))
    }

    /// The hyper-parameter reader's tables and these rules state each
    /// key's type once each: they must agree.
    #[test]
    fn the_rules_check_each_key_of_the_readers_tables_as_its_type() {
        let table = || key::ALL.iter().chain(loader_key::ALL);
        let mut checked = 0;
        for rule in every_rule() {
            let Some((_, ty)) = table().find(|(k, _)| *k == rule.key) else {
                continue;
            };
            let expect = match *ty {
                "u32" => U32,
                "f32" => F32,
                "String" => Str,
                "PerLayer" => U32PerLayer,
                "SwaPattern" => U32OrLayerFlags,
                "ArrayLen" => StrArray,
                other => panic!("{}: no rule type for {other}", rule.key),
            };
            assert_eq!(rule.expect, expect, "{}", rule.key);
            checked += 1;
        }
        assert!(checked > 20, "{checked}");
        // The loader reads no key that its rules do not check.
        for (k, _) in loader_key::ALL {
            assert!(every_rule().any(|r| r.key == *k), "{k}");
        }
    }
}
