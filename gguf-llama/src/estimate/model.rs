//! [`ModelShape`]: the hyper-parameters llama.cpp derives for memory, per layer.

use crate::error::{Error, LookupError, Result};
use crate::summary::{arch_key, key, loader_key, swa_layout, ArchParams, ModelSummary, PerLayer};
use gguf_core::Gguf;

/// How a model keeps its per-sequence state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKind {
    /// A KV cache (every transformer).
    Kv,
    /// Recurrent state (Mamba, RWKV): fixed size per sequence, no KV cache.
    Recurrent,
    /// Neither: encoder-only models (BERT-like) allocate no memory module.
    None,
}

/// The shape of a model as llama.cpp's `llama_hparams` sees it after
/// `load_hparams`: per-layer heads, key/value widths, which layers slide.
#[derive(Debug, Clone)]
pub struct ModelShape {
    /// `general.architecture`.
    pub arch: String,
    /// `n_layer_all`: every block, NextN layers included.
    pub n_layer_all: u32,
    /// Trailing NextN (multi-token prediction) layers, which the main
    /// context's cache skips.
    pub n_layer_nextn: u32,
    /// `n_embd`.
    pub n_embd: u32,
    /// Vocabulary size (rows of the logits).
    pub n_vocab: u64,
    /// Training context (`n_ctx_train`), the default `-c 0`.
    pub n_ctx_train: u32,
    /// Query heads per layer.
    pub n_head: PerLayer,
    /// KV heads per layer.
    pub n_head_kv: PerLayer,
    /// `n_ff` per layer.
    pub n_ff: PerLayer,
    /// Key head width of full-attention and sliding-window layers.
    pub head_k: (u32, u32),
    /// Value head width of full-attention and sliding-window layers.
    pub head_v: (u32, u32),
    /// Sliding window (`n_swa`), 0 when none.
    pub n_swa: u32,
    /// Which layers use the sliding window.
    pub is_swa: Vec<bool>,
    /// MLA (DeepSeek-style): `(kv_lora_rank, rope width)`; the cache then
    /// holds one compressed row per token and no V.
    pub mla: Option<(u32, u32)>,
    /// How state is kept.
    pub memory: MemoryKind,
    /// Recurrent state widths per layer and cell: (`n_embd_r`, `n_embd_s`).
    pub recurrent: (u64, u64),
    /// Experts, and experts used per token.
    pub experts: (u32, u32),
    /// Bytes of `token_embd.weight` when the model ties its output layer
    /// to it (no `output.weight`), so that llama.cpp loads it a second time
    /// as the output layer (see `duplicated_output`); `None` otherwise.
    pub tied_output: Option<u64>,
}

/// Architectures whose llama.cpp loaders do not load `token_embd.weight`
/// again as the output layer when `output.weight` is absent: BitNet
/// multiplies by the input embeddings themselves.
const NO_DUPLICATED_OUTPUT: &[&str] = &["bitnet"];

/// llama.cpp's tied output layer: when a model has no `output.weight`, most
/// architectures' loaders create the output layer from `token_embd.weight`
/// with `TENSOR_DUPLICATED` (`llama_model_loader::create_tensor`). The
/// duplicate is placed by the output layer's buffer type; when that is the
/// buffer type the input embeddings already use (both on the CPU), the
/// loader hands back the same tensor, otherwise it is a second tensor,
/// allocated and filled on the output layer's device. Returns the bytes
/// of that tensor for a decoder that ties its output layer. Models without
/// a memory module (encoders, diffusion models) are left out: the BERT
/// family has no output layer at all.
fn duplicated_output(model: &(impl Gguf + ?Sized), arch: &str, memory: MemoryKind) -> Option<u64> {
    if memory == MemoryKind::None || NO_DUPLICATED_OUTPUT.contains(&arch) {
        return None;
    }
    let mut embd = None;
    for t in model.tensors() {
        match t.name() {
            "output.weight" => return None,
            "token_embd.weight" => embd = Some(t.byte_size().unwrap_or(0)),
            _ => {}
        }
    }
    embd
}

/// Architectures llama.cpp runs with recurrent memory (`llm_arch_is_recurrent`).
const RECURRENT: &[&str] = &["mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"];

/// Architectures without a memory module (`create_memory` returns none).
const NO_MEMORY: &[&str] = &[
    "bert",
    "jina-bert-v2",
    "jina-bert-v3",
    "nomic-bert",
    "nomic-bert-moe",
    "neo-bert",
    "eurobert",
    "modern-bert",
    "gemma-embedding",
    "dream",
    "llada",
    "llada-moe",
    "rnd1",
];

impl ModelShape {
    /// Reads the shape from a model's header, as llama.cpp's
    /// `llama_model_base::load_hparams` and the architecture's
    /// `load_arch_hparams` do for the keys that decide memory.
    pub fn of(model: &(impl Gguf + ?Sized), summary: &ModelSummary) -> Result<Self> {
        let meta = model;
        let arch = summary.architecture.clone().ok_or_else(|| {
            Error::Gguf(gguf_core::Error::Lookup(LookupError::KeyNotFound {
                key: "general.architecture".into(),
            }))
        })?;
        let hp: &ArchParams = &summary.params;
        let need = |v: Option<u32>, name: &str| {
            v.ok_or_else(|| {
                Error::Gguf(gguf_core::Error::Lookup(LookupError::KeyNotFound {
                    key: arch_key(name, &arch),
                }))
            })
        };
        let n_layer_all = need(hp.block_count, key::block_count)?;
        let n_embd = need(hp.embedding_length, key::embedding_length)?;
        let n_ctx_train = need(hp.context_length, key::context_length)?;
        let n_head = hp.head_count.clone().unwrap_or(PerLayer::Scalar(0));
        let n_head_kv = hp.n_head_kv();
        let (hk, hv) = hp.head_widths();
        let (hk_swa, hv_swa) = hp.head_widths_swa();
        let head_k = (hk, hk_swa);
        let head_v = (hv, hv_swa);

        let n_layer_nextn = hp.nextn_predict_layers.unwrap_or(0).min(n_layer_all);
        let n_layer = hp.n_layer() as usize;
        let mut is_swa = vec![false; n_layer_all as usize];
        let mut n_swa = 0;
        if let Some(layout) = swa_layout(&arch) {
            let window = hp.sliding_window.unwrap_or(layout.default_window);
            // Gemma 3 turns the window off when the key is absent or 0.
            if window > 0 {
                n_swa = window;
                let pattern_key = arch_key(loader_key::sliding_window_pattern, &arch);
                // Only boolean flags are taken from an array here; the
                // loader's rules read layer 0 of any per-layer array.
                if let Ok(arr) = meta.get_array(&pattern_key) {
                    if let Some(flags) = arr.typed::<bool>() {
                        for (slot, f) in is_swa.iter_mut().zip(flags) {
                            *slot = f;
                        }
                    }
                } else {
                    let p = meta.get::<u32>(&pattern_key).unwrap_or(layout.period);
                    for (il, slot) in is_swa.iter_mut().enumerate().take(n_layer) {
                        *slot = layout.slides(p, il as u32);
                    }
                }
            }
        }

        let mla = match (hp.kv_lora_rank, hp.key_length_mla, hp.value_length_mla) {
            (Some(rank), Some(k_mla), Some(_)) if k_mla > 0 => {
                // key_length = kv_lora_rank + rope width; the MLA cache row is
                // n_embd_head_k (one "head") of that compressed width.
                Some((rank, hk.saturating_sub(rank)))
            }
            _ => None,
        };

        let memory = if RECURRENT.contains(&arch.as_str()) {
            MemoryKind::Recurrent
        } else if NO_MEMORY.contains(&arch.as_str()) {
            MemoryKind::None
        } else {
            MemoryKind::Kv
        };
        let recurrent = recurrent_widths(hp, n_embd);
        let tied_output = duplicated_output(model, &arch, memory);
        let experts = (
            hp.expert_count.unwrap_or(0),
            hp.expert_used_count
                .as_ref()
                .map(PerLayer::max)
                .unwrap_or(0),
        );
        Ok(ModelShape {
            n_vocab: summary.vocab_size.unwrap_or(0),
            n_ff: hp
                .feed_forward_length
                .clone()
                .unwrap_or(PerLayer::Scalar(0)),
            arch,
            n_layer_all,
            n_layer_nextn,
            n_embd,
            n_ctx_train,
            n_head,
            n_head_kv,
            head_k,
            head_v,
            n_swa,
            is_swa,
            mla,
            memory,
            recurrent,
            experts,
            tied_output,
        })
    }

    /// Layers the main context computes (`n_layer()`: NextN excluded).
    pub fn n_layer(&self) -> u32 {
        self.n_layer_all - self.n_layer_nextn
    }

    /// Whether layer `il` uses the sliding window.
    pub fn is_swa(&self, il: usize) -> bool {
        self.is_swa.get(il).copied().unwrap_or(false)
    }

    /// `n_embd_head_k(il)`.
    pub fn head_k(&self, il: usize) -> u32 {
        if self.is_swa(il) {
            self.head_k.1
        } else {
            self.head_k.0
        }
    }

    /// `n_embd_head_v(il)`.
    pub fn head_v(&self, il: usize) -> u32 {
        if self.is_swa(il) {
            self.head_v.1
        } else {
            self.head_v.0
        }
    }

    /// `n_embd_k_gqa(il)`: key width of one cache row.
    pub fn n_embd_k_gqa(&self, il: usize) -> u64 {
        u64::from(self.head_k(il)) * u64::from(self.n_head_kv.get(il))
    }

    /// `n_embd_v_gqa(il)`: value width of one cache row.
    pub fn n_embd_v_gqa(&self, il: usize) -> u64 {
        u64::from(self.head_v(il)) * u64::from(self.n_head_kv.get(il))
    }

    /// `n_embd_v_gqa_max()`: without flash attention the V cache is stored
    /// transposed and every layer is padded to the widest.
    pub fn n_embd_v_gqa_max(&self) -> u64 {
        (0..self.n_layer_all as usize)
            .map(|il| self.n_embd_v_gqa(il))
            .max()
            .unwrap_or(0)
    }

    /// True when any layer slides.
    pub fn has_swa(&self) -> bool {
        self.is_swa.iter().any(|&s| s)
    }
}

/// `n_embd_r()` and `n_embd_s()` of llama.cpp's hparams: the widths of a
/// recurrent layer's two state tensors (token-shift/conv state and the
/// WKV/SSM state) per cell.
fn recurrent_widths(hp: &ArchParams, n_embd: u32) -> (u64, u64) {
    let n_embd = u64::from(n_embd);
    if let Some(head_size) = hp.wkv_head_size.filter(|&h| h != 0) {
        let shift = u64::from(hp.token_shift_count.unwrap_or(2));
        return (shift * n_embd, n_embd * u64::from(head_size));
    }
    let d_conv = u64::from(hp.ssm_conv_kernel.unwrap_or(0));
    let d_inner = u64::from(hp.ssm_inner_size.unwrap_or(0));
    let d_state = u64::from(hp.ssm_state_size.unwrap_or(0));
    let n_group = u64::from(hp.ssm_group_count.unwrap_or(0));
    let r = d_conv.saturating_sub(1) * (d_inner + 2 * n_group * d_state);
    (r, d_state * d_inner)
}
