//! [`Settings`]: the llama.cpp options that change what it allocates.

use gguf_core::GgmlType;

/// The KV cache types llama.cpp accepts (`-ctk`/`-ctv`: `kv_cache_types`
/// in its `common/arg.cpp`); [`Estimate`](super::Estimate) refuses others,
/// as llama.cpp's tools do.
///
/// ```
/// use gguf_core::GgmlType;
/// use gguf_llama::estimate::KV_CACHE_TYPES;
/// assert!(KV_CACHE_TYPES.contains(&GgmlType::Q8_0));
/// assert!(!KV_CACHE_TYPES.contains(&GgmlType::Q4_K));
/// ```
pub const KV_CACHE_TYPES: &[GgmlType] = &[
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q8_0,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::IQ4_NL,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
];

/// The accepted cache types as llama.cpp spells them, for messages.
///
/// ```
/// assert!(gguf_llama::estimate::kv_cache_type_names().starts_with("f32, f16, bf16, q8_0"));
/// ```
pub fn kv_cache_type_names() -> String {
    KV_CACHE_TYPES
        .iter()
        .filter_map(|t| t.name())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `-fa/--flash-attn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlashAttn {
    /// Enabled.
    On,
    /// Disabled.
    Off,
    /// llama.cpp probes whether the flash-attention op runs on each
    /// layer's device; on CPU and the GPU backends that implement it, it
    /// does, so `auto` is treated as on.
    #[default]
    Auto,
}

/// The settings of one llama.cpp context, with the defaults of llama.cpp's
/// command-line tools (`common_params`).
///
/// ```
/// use gguf_llama::estimate::{FlashAttn, Settings};
/// let s = Settings::default();
/// assert_eq!((s.n_ctx, s.n_batch, s.n_ubatch, s.n_parallel), (0, 2048, 512, 1));
/// assert_eq!(s.flash_attn, FlashAttn::Auto);
/// let s = s.n_ctx(4096).flash_attn(FlashAttn::On);
/// assert_eq!((s.n_ctx, s.flash_attn), (4096, FlashAttn::On));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// `-c`: context size; 0 means the model's training context.
    pub n_ctx: u32,
    /// `-b`: logical batch size.
    pub n_batch: u32,
    /// `-ub`: physical batch size.
    pub n_ubatch: u32,
    /// `-np`: parallel sequences (`n_seq_max`).
    pub n_parallel: u32,
    /// `-fa`.
    pub flash_attn: FlashAttn,
    /// `-ctk`: one of [`KV_CACHE_TYPES`].
    pub type_k: GgmlType,
    /// `-ctv`: one of [`KV_CACHE_TYPES`].
    pub type_v: GgmlType,
    /// `--swa-full`: full-size cache for sliding-window layers.
    pub swa_full: bool,
    /// `--kv-unified`: one KV stream shared by all sequences.
    pub kv_unified: bool,
    /// `-ngl`: layers on the GPUs (the output layer counts as one); a
    /// negative value means all.
    pub n_gpu_layers: i32,
    /// `-ts`: share of each GPU; its length is the number of GPUs (empty:
    /// CPU only). All zeros split evenly.
    pub tensor_split: Vec<f32>,
    /// `--no-kv-offload`: keep the KV cache in CPU memory.
    pub no_kv_offload: bool,
    /// `--no-mmap`: load weights into allocated buffers instead of mapping.
    pub no_mmap: bool,
    /// Also produce embeddings (adds `n_embd` floats per output).
    pub embeddings: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            n_ctx: 0,
            n_batch: 2048,
            n_ubatch: 512,
            n_parallel: 1,
            flash_attn: FlashAttn::Auto,
            type_k: GgmlType::F16,
            type_v: GgmlType::F16,
            swa_full: false,
            kv_unified: false,
            n_gpu_layers: -1,
            tensor_split: Vec::new(),
            no_kv_offload: false,
            no_mmap: false,
            embeddings: false,
        }
    }
}

impl Settings {
    /// Sets [`n_ctx`](Self::n_ctx).
    pub fn n_ctx(mut self, n_ctx: u32) -> Self {
        self.n_ctx = n_ctx;
        self
    }

    /// Sets [`n_batch`](Self::n_batch).
    pub fn n_batch(mut self, n_batch: u32) -> Self {
        self.n_batch = n_batch;
        self
    }

    /// Sets [`n_ubatch`](Self::n_ubatch).
    pub fn n_ubatch(mut self, n_ubatch: u32) -> Self {
        self.n_ubatch = n_ubatch;
        self
    }

    /// Sets [`n_parallel`](Self::n_parallel).
    pub fn n_parallel(mut self, n_parallel: u32) -> Self {
        self.n_parallel = n_parallel;
        self
    }

    /// Sets [`flash_attn`](Self::flash_attn).
    pub fn flash_attn(mut self, flash_attn: FlashAttn) -> Self {
        self.flash_attn = flash_attn;
        self
    }

    /// Sets [`type_k`](Self::type_k).
    pub fn type_k(mut self, type_k: GgmlType) -> Self {
        self.type_k = type_k;
        self
    }

    /// Sets [`type_v`](Self::type_v).
    pub fn type_v(mut self, type_v: GgmlType) -> Self {
        self.type_v = type_v;
        self
    }

    /// Sets [`swa_full`](Self::swa_full).
    pub fn swa_full(mut self, swa_full: bool) -> Self {
        self.swa_full = swa_full;
        self
    }

    /// Sets [`kv_unified`](Self::kv_unified).
    pub fn kv_unified(mut self, kv_unified: bool) -> Self {
        self.kv_unified = kv_unified;
        self
    }

    /// Sets [`n_gpu_layers`](Self::n_gpu_layers).
    pub fn n_gpu_layers(mut self, n_gpu_layers: i32) -> Self {
        self.n_gpu_layers = n_gpu_layers;
        self
    }

    /// Sets [`tensor_split`](Self::tensor_split).
    pub fn tensor_split(mut self, tensor_split: Vec<f32>) -> Self {
        self.tensor_split = tensor_split;
        self
    }

    /// Sets [`no_kv_offload`](Self::no_kv_offload).
    pub fn no_kv_offload(mut self, no_kv_offload: bool) -> Self {
        self.no_kv_offload = no_kv_offload;
        self
    }

    /// Sets [`no_mmap`](Self::no_mmap).
    pub fn no_mmap(mut self, no_mmap: bool) -> Self {
        self.no_mmap = no_mmap;
        self
    }

    /// Sets [`embeddings`](Self::embeddings).
    pub fn embeddings(mut self, embeddings: bool) -> Self {
        self.embeddings = embeddings;
        self
    }

    /// Number of GPUs.
    pub fn gpus(&self) -> usize {
        self.tensor_split.len()
    }
}
