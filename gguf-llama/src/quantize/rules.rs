//! llama-quantize's per-tensor rules: which tensors it may quantize, the
//! broad role of each, and the type a preset's mixture gives each role
//! (`tensor_allows_quantization`, `tensor_get_category`,
//! `llama_tensor_get_type_impl` of `src/llama-quant.cpp`).

use gguf_core::GgmlType;

use super::preset::Ftype;

/// The role of a tensor in the mixture rules, from its name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum Category {
    /// `token_embd.weight`, `per_layer_token_embd.weight`.
    TokenEmbd,
    /// `*attn_q.weight`.
    AttnQ,
    /// `*attn_v.weight`.
    AttnV,
    /// `*attn_k.weight`.
    AttnK,
    /// `*attn_qkv.weight`.
    AttnQkv,
    /// `*attn_kv_b.weight`.
    AttnKvB,
    /// `*attn_output.weight`.
    AttnOutput,
    /// `*ffn_up*`.
    FfnUp,
    /// `*ffn_gate*`.
    FfnGate,
    /// `*ffn_down*`.
    FfnDown,
    /// `output.weight`.
    Output,
    /// Anything else.
    Other,
}

impl Category {
    /// The category of tensor `name`, tested in llama-quantize's order
    /// (so `ffn_gate_exps` is a gate, `attn_qkv.weight` never `attn_q`).
    ///
    /// ```
    /// use gguf_llama::quantize::Category;
    /// assert_eq!(Category::of("blk.3.attn_v.weight"), Category::AttnV);
    /// assert_eq!(Category::of("blk.3.ffn_down_exps.weight"), Category::FfnDown);
    /// assert_eq!(Category::of("per_layer_token_embd.weight"), Category::TokenEmbd);
    /// ```
    pub fn of(name: &str) -> Category {
        use Category as C;
        if name == "output.weight" {
            return C::Output;
        }
        if is_token_embd(name) {
            return C::TokenEmbd;
        }
        const BY_FRAGMENT: &[(&str, Category)] = &[
            ("attn_qkv.weight", C::AttnQkv),
            ("attn_kv_b.weight", C::AttnKvB),
            ("attn_v.weight", C::AttnV),
            ("attn_k.weight", C::AttnK),
            ("attn_q.weight", C::AttnQ),
            ("attn_output.weight", C::AttnOutput),
            ("ffn_up", C::FfnUp),
            ("ffn_gate", C::FfnGate),
            ("ffn_down", C::FfnDown),
        ];
        BY_FRAGMENT
            .iter()
            .find(|(f, _)| name.contains(f))
            .map_or(C::Other, |&(_, c)| c)
    }

    /// The value projections llama-quantize gives more bits
    /// (`category_is_attn_v`): V, fused QKV, and MLA's KV-B.
    pub fn is_attn_v(self) -> bool {
        matches!(
            self,
            Category::AttnV | Category::AttnQkv | Category::AttnKvB
        )
    }
}

/// `token_embd.weight` or `per_layer_token_embd.weight`.
pub(crate) fn is_token_embd(name: &str) -> bool {
    name == "token_embd.weight" || name == "per_layer_token_embd.weight"
}

/// Name fragments GLM5-next keeps unquantized besides the common ones.
const GLM5_NEXT_KEPT: &[&str] = &[
    "hc_",
    "indexer.attn_q_b",
    "indexer.attn_k",
    "indexer.proj",
    "indexer_compressor_gate",
    "indexer_compressor_ape",
    "ssm_f_a.weight",
    "ssm_f_b.weight",
    "ssm_g_a.weight",
    "ssm_g_b.weight",
    "ssm_beta.weight",
    "attn_kv_a_mqa.weight",
    "attn_k_b.weight",
    "attn_v_b.weight",
];

/// Fragments that keep a tensor unquantized in every architecture; the
/// exact names `position_embd.weight` and `token_types.weight` are tested
/// apart.
const KEPT: &[&str] = &[
    "_norm.weight",
    "ffn_gate_inp.weight",
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
    ".position_embd",
    "sam.pos_embd",
    "sam.neck.",
    "sam.net_",
    ".rel_pos",
    ".patch_embd",
    ".patch_merger",
    "a.rvq.codebook",
    "mm.a.code_embd",
];

/// ggml's `ggml_n_dims`: dimensions up to the last one above 1.
pub(crate) fn n_dims(shape: &[u64]) -> usize {
    shape.iter().rposition(|&d| d > 1).map_or(1, |i| i + 1)
}

/// Whether llama-quantize may change the type of tensor `name` of `shape`
/// (innermost first) in a model of architecture `arch`
/// (`tensor_allows_quantization`): a `*weight` of two or three effective
/// dimensions, not a norm, router, small mixer or position table, and not
/// `output.weight` under `--leave-output-tensor` (`quantize_output` false).
/// `COPY` allows nothing; the caller tests that.
///
/// ```
/// use gguf_llama::quantize::allows_quantization;
/// assert!(allows_quantization("blk.0.attn_q.weight", &[64, 64], "llama", true));
/// assert!(!allows_quantization("blk.0.attn_norm.weight", &[64], "llama", true));
/// assert!(!allows_quantization("output.weight", &[64, 100], "llama", false));
/// assert!(!allows_quantization("position_embd.weight", &[64, 100], "bert", true));
/// ```
pub fn allows_quantization(name: &str, shape: &[u64], arch: &str, quantize_output: bool) -> bool {
    n_dims(shape) >= 2
        && name.ends_with("weight")
        && (quantize_output || name != "output.weight")
        && name != "position_embd.weight"
        && name != "token_types.weight"
        && !KEPT.iter().any(|f| name.contains(f))
        && !(arch == "glm5-next" && GLM5_NEXT_KEPT.iter().any(|f| name.contains(f)))
}

/// What the mixture rules know of the model (`llama_model`'s fields they
/// read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelFacts {
    /// `general.architecture`.
    pub arch: String,
    /// `{arch}.block_count` (llama.cpp's `n_layer_all`, next-token layers
    /// included).
    pub n_layer: u32,
    /// Layer 0's attention heads.
    pub n_head: u32,
    /// Layer 0's key/value heads (`n_head` when the file does not say).
    pub n_head_kv: u32,
    /// `{arch}.expert_count`, 0 when absent.
    pub n_expert: u32,
    /// llama.cpp sizes the model as 70B (`LLM_TYPE_70B`), which gives its
    /// value projections more bits.
    pub is_70b: bool,
}

impl ModelFacts {
    /// Query heads per key/value head (`n_gqa()`), 0 without key/value heads.
    pub fn n_gqa(&self) -> u32 {
        self.n_head.checked_div(self.n_head_kv).unwrap_or(0)
    }
}

/// Whether llama.cpp's `load_arch_hparams` calls a model of `arch` with
/// `n_layer` layers 70B.
pub(crate) fn is_70b(arch: &str, n_layer: u32, n_head: u32, n_head_kv: u32) -> bool {
    match arch {
        "llama" => n_layer == 80 && n_head != n_head_kv,
        "deci" | "olmo" | "qwen2" => n_layer == 80,
        "jais2" => n_layer == 68,
        _ => false,
    }
}

/// The layer number in `blk.N.` at the start of a name, as C's
/// `sscanf(name, "blk.%d.", ...)` reads it.
pub(crate) fn block_number(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("blk.")?.trim_start();
    let (sign, digits) = match rest.as_bytes().first() {
        Some(b'-') => (-1, &rest[1..]),
        Some(b'+') => (1, &rest[1..]),
        _ => (1, rest),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let n: i64 = digits[..end].parse().ok()?;
    Some(sign * n)
}

/// The counters llama-quantize keeps while it walks the tensors
/// (`quantize_state_impl`): how many value projections there are, and how
/// many value, down, gate and up projections it has typed so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Value projections in the model (`n_attention_wv`).
    pub n_attention_wv: u32,
    /// Layers, for the down/gate/up counters (`n_ffn_*`: `n_layer_all`).
    pub n_layers: u32,
    /// Value projections typed so far.
    pub i_attention_wv: u32,
    /// Down projections typed so far.
    pub i_ffn_down: u32,
    /// Gate projections typed so far.
    pub i_ffn_gate: u32,
    /// Up projections typed so far.
    pub i_ffn_up: u32,
}

/// The layer a rule looks at for tensor `name`: the counter, or with
/// experts the number in its name (experts need not come in layer order).
fn layer_of(name: &str, counter: u32, facts: &ModelFacts) -> Result<u32, String> {
    if facts.n_expert <= 1 {
        return Ok(counter);
    }
    let layer =
        block_number(name).ok_or_else(|| format!("failed to determine the layer of {name}"))?;
    if layer < 0 || layer >= i64::from(facts.n_layer) {
        return Err(format!(
            "bad layer {layer} for tensor {name}: must be in [0, {})",
            facts.n_layer
        ));
    }
    Ok(layer as u32)
}

/// llama.cpp's `use_more_bits`: the first and last eighth of the layers
/// and every third one between.
///
/// ```
/// use gguf_llama::quantize::use_more_bits;
/// let more: Vec<u32> = (0..16).filter(|&i| use_more_bits(i, 16)).collect();
/// assert_eq!(more, [0, 1, 4, 7, 10, 13, 14, 15]);
/// ```
pub fn use_more_bits(i_layer: u32, n_layers: u32) -> bool {
    let (i, n) = (i64::from(i_layer), i64::from(n_layers));
    // C's `%` keeps the sign of the dividend: only 2 counts.
    i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2
}

/// The preset and the options that decide the output and embedding rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MixtureOptions {
    /// The preset's file type.
    pub ftype: Ftype,
    /// `--output-tensor-type`.
    pub output_tensor_type: Option<GgmlType>,
    /// `--token-embedding-type`.
    pub token_embedding_type: Option<GgmlType>,
    /// An importance matrix is given.
    pub has_imatrix: bool,
    /// The model has no `output.weight` (its embeddings are tied).
    pub tied_embeddings: bool,
}

/// The type the mixture of `opts.ftype` gives tensor `name` (category `cat`,
/// shape innermost first) whose default is `ty`, advancing `counters` as
/// llama-quantize does (`llama_tensor_get_type_impl`). An error names a
/// tensor whose layer cannot be told.
pub fn mixture_type(
    name: &str,
    shape: &[u64],
    cat: Category,
    ty: GgmlType,
    facts: &ModelFacts,
    opts: &MixtureOptions,
    counters: &mut Counters,
) -> Result<GgmlType, String> {
    use Category as C;
    use Ftype as F;
    use GgmlType as T;
    let arch = facts.arch.as_str();
    let falcon = arch == "falcon";
    let gqa4 = facts.n_gqa() >= 4;
    let n_expert = facts.n_expert;
    let imatrix = opts.has_imatrix;
    let ftype = opts.ftype;
    let mut new = ty;

    if arch == "glm5-next"
        && ["attn_q_a", "attn_q_b", "nextn.eh_proj"]
            .iter()
            .any(|f| name.contains(f))
        && !matches!(new, T::F32 | T::BF16 | T::F16)
    {
        return Ok(T::Q8_0);
    }

    let very_low = matches!(
        ftype,
        F::IQ2_XXS | F::IQ2_XS | F::IQ1_S | F::IQ2_S | F::IQ2_M | F::IQ1_M
    );
    let iq2_s_or_m = matches!(ftype, F::IQ2_S | F::IQ2_M);

    if cat == C::Output || (opts.tied_embeddings && cat == C::TokenEmbd) {
        if let Some(t) = opts.output_tensor_type {
            new = t;
        } else {
            let row = shape.first().copied().unwrap_or(1);
            let whole = new.block_size().is_some_and(|b| row.is_multiple_of(b));
            if ftype == F::MXFP4_MOE || falcon || !whole {
                new = T::Q8_0;
            } else if very_low || ftype == F::IQ3_XXS {
                new = T::Q5_K;
            } else if new != T::Q8_0 {
                new = T::Q6_K;
            }
        }
    } else if ftype == F::MXFP4_MOE {
        let ffn = matches!(cat, C::FfnUp | C::FfnGate | C::FfnDown);
        let experts = shape.get(2).copied().unwrap_or(1) > 1;
        new = if experts && (arch != "bailingmoe3" || ffn) {
            T::MXFP4
        } else {
            T::Q8_0
        };
    } else if cat == C::TokenEmbd {
        if let Some(t) = opts.token_embedding_type {
            new = t;
        } else if matches!(ftype, F::IQ2_XXS | F::IQ2_XS | F::IQ1_S | F::IQ1_M) {
            new = T::Q2_K;
        } else if iq2_s_or_m || ftype == F::IQ3_XXS {
            new = T::IQ3_S;
        } else if matches!(ftype, F::TQ1_0 | F::TQ2_0 | F::Q2_0) {
            new = T::Q4_K;
        }
    } else if very_low {
        let low = if iq2_s_or_m { T::IQ3_S } else { T::Q2_K };
        if cat.is_attn_v() {
            new = if gqa4 || n_expert >= 4 { T::Q4_K } else { low };
            counters.i_attention_wv += 1;
        } else if n_expert == 8 && cat == C::AttnK {
            new = T::Q4_K;
        } else if cat == C::FfnDown {
            if counters.i_ffn_down < counters.n_layers / 8 {
                new = low;
            }
            counters.i_ffn_down += 1;
        } else if cat == C::AttnOutput {
            if n_expert == 8 {
                new = T::Q5_K;
            } else if matches!(ftype, F::IQ1_S | F::IQ1_M) {
                new = T::IQ2_XXS;
            } else if iq2_s_or_m {
                new = T::IQ3_S;
            }
        }
    } else if cat.is_attn_v() {
        let i = counters.i_attention_wv;
        match ftype {
            F::Q2_K => new = if gqa4 { T::Q4_K } else { T::Q3_K },
            F::Q2_K_S if gqa4 => new = T::Q4_K,
            F::IQ3_XXS => {
                new = if gqa4 {
                    T::Q4_K
                } else if !imatrix {
                    T::IQ3_S
                } else {
                    T::IQ3_XXS
                }
            }
            F::IQ3_XS | F::IQ3_S if gqa4 => new = T::Q4_K,
            F::IQ3_M => new = T::Q4_K,
            F::Q3_K_M => new = if i < 2 { T::Q5_K } else { T::Q4_K },
            F::Q3_K_L => new = T::Q5_K,
            F::IQ4_NL | F::IQ4_XS if gqa4 => new = T::Q5_K,
            F::Q4_K_M | F::Q5_K_M if use_more_bits(i, counters.n_attention_wv) => new = T::Q6_K,
            F::Q4_K_S if i < 4 => new = T::Q5_K,
            _ => {}
        }
        if facts.is_70b && matches!(new, T::Q3_K | T::Q4_K) {
            new = T::Q5_K;
        }
        if n_expert == 8 {
            new = T::Q8_0;
        }
        counters.i_attention_wv += 1;
    } else if cat == C::AttnK {
        if n_expert == 8 {
            new = T::Q8_0;
        } else if ftype == F::IQ3_XS {
            new = T::IQ3_XXS;
        } else if ftype == F::IQ3_XXS {
            new = T::IQ2_S;
        }
    } else if cat == C::AttnQ {
        if ftype == F::IQ3_XS {
            new = T::IQ3_XXS;
        } else if ftype == F::IQ3_XXS {
            new = T::IQ2_S;
        }
    } else if cat == C::FfnDown {
        let i = layer_of(name, counters.i_ffn_down, facts)?;
        let n = counters.n_layers;
        let first_eighth = i < n / 8;
        match ftype {
            F::Q2_K => new = T::Q3_K,
            F::Q2_K_S if first_eighth => new = T::Q4_K,
            F::IQ3_XXS if !imatrix => new = if first_eighth { T::Q4_K } else { T::Q3_K },
            F::Q3_K_M => {
                new = if i < n / 16 {
                    T::Q5_K
                } else if !falcon || use_more_bits(i, n) {
                    T::Q4_K
                } else {
                    T::Q3_K
                }
            }
            F::IQ3_M if first_eighth || (n_expert == 8 && use_more_bits(i, n)) => new = T::Q4_K,
            F::Q3_K_L => new = if falcon { T::Q4_K } else { T::Q5_K },
            F::Q4_K_M => {
                if falcon {
                    new = if i < n / 16 {
                        T::Q6_K
                    } else if use_more_bits(i, n) {
                        T::Q5_K
                    } else {
                        T::Q4_K
                    };
                } else if use_more_bits(i, n) {
                    new = T::Q6_K;
                }
            }
            F::IQ4_NL | F::IQ4_XS if first_eighth && !imatrix => new = T::Q5_K,
            F::Q5_K_M if use_more_bits(i, n) => new = T::Q6_K,
            F::Q4_K_S if !falcon && first_eighth => new = T::Q5_K,
            F::Q4_0 if imatrix && first_eighth => new = T::Q4_1,
            F::Q5_0 if imatrix && first_eighth => new = T::Q5_1,
            _ => {}
        }
        counters.i_ffn_down += 1;
    } else if cat == C::AttnOutput {
        if !falcon {
            if n_expert == 8 {
                if matches!(
                    ftype,
                    F::Q2_K
                        | F::IQ3_XS
                        | F::IQ3_XXS
                        | F::Q3_K_S
                        | F::Q3_K_M
                        | F::IQ4_NL
                        | F::Q4_K_S
                        | F::Q4_K_M
                        | F::IQ3_S
                        | F::IQ3_M
                        | F::IQ4_XS
                ) {
                    new = T::Q5_K;
                }
            } else {
                match ftype {
                    F::Q2_K => new = T::Q3_K,
                    F::IQ3_XXS => new = T::IQ3_S,
                    F::Q3_K_M | F::IQ3_M => new = T::Q4_K,
                    F::Q3_K_L => new = T::Q5_K,
                    _ => {}
                }
            }
        } else if ftype == F::Q3_K_L {
            new = T::Q4_K;
        }
    } else if cat == C::AttnQkv {
        // Unreachable in llama.cpp too: fused QKV counts as a value
        // projection above. Kept so the table reads as the C++ does.
        match ftype {
            F::Q3_K_M | F::Q3_K_L | F::IQ3_M => new = T::Q4_K,
            F::Q4_K_M => new = T::Q5_K,
            F::Q5_K_M => new = T::Q6_K,
            _ => {}
        }
    } else if cat == C::FfnGate || cat == C::FfnUp {
        let counter = if cat == C::FfnGate {
            &mut counters.i_ffn_gate
        } else {
            &mut counters.i_ffn_up
        };
        let i = layer_of(name, *counter, facts)?;
        let n = counters.n_layers;
        if ftype == F::IQ3_XS && i >= n / 8 && i < 7 * n / 8 {
            new = T::IQ3_XXS;
        }
        *counter += 1;
    }
    Ok(new)
}
