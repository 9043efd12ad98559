//! The one reader of an architecture's `{arch}.*` hyper-parameters:
//! [`ArchParams`] (what decides a model's shapes and memory) and
//! [`LoaderParams`] (what only llama.cpp's loader checks), each key named
//! once in the tables below, and the defaults llama.cpp's `load_hparams`
//! fills in for the absent ones.
//!
//! [`ArchParams`] is read two ways: strictly, through [`FromMetadata`]
//! (the summary and the estimate: a key of another type is an error), or
//! as llama.cpp's typed getters do ([`ArchParams::as_llama_cpp_reads`]:
//! a key of another type reads as absent, and the loader's rules, which
//! name each key's type, report it; the quantizer reads what it needs
//! the same way). [`LoaderParams`] is read the second way only, so that
//! the keys only the loader checks never fail a summary.

use gguf_core::Gguf;
use gguf_core::Metadata;
use gguf_core::{Value, ValueType};

#[cfg(doc)]
use gguf_core::FromMetadata;

use super::PerLayer;

/// How llama.cpp's typed getters read one value: exactly the type they ask
/// for; any other type reads as absent (llama.cpp throws on it, and the
/// loader's key rules report it).
pub(crate) trait Getter: Sized {
    /// The value of `key`, if it has this type.
    fn get(meta: &(impl Gguf + ?Sized), key: &str) -> Option<Self>;
}

impl Getter for u32 {
    fn get(meta: &(impl Gguf + ?Sized), key: &str) -> Option<Self> {
        match meta.value(key)? {
            Value::U32(v) => Some(v),
            _ => None,
        }
    }
}

impl Getter for f32 {
    fn get(meta: &(impl Gguf + ?Sized), key: &str) -> Option<Self> {
        match meta.value(key)? {
            Value::F32(v) => Some(v),
            _ => None,
        }
    }
}

impl Getter for String {
    fn get(meta: &(impl Gguf + ?Sized), key: &str) -> Option<Self> {
        str_of(meta, key).map(String::from)
    }
}

/// `get_key_or_arr`: a scalar, or an array of `u32`, `i32` (reinterpreted
/// as `u32`, as llama.cpp copies them) or `bool` (0 or 1).
impl Getter for PerLayer {
    fn get(meta: &(impl Gguf + ?Sized), key: &str) -> Option<Self> {
        match meta.value(key)? {
            Value::U32(v) => Some(PerLayer::Scalar(v)),
            Value::Array(a) => match a.element_type() {
                ValueType::U32 => Some(PerLayer::Layers(a.typed::<u32>()?.collect())),
                ValueType::I32 => Some(PerLayer::Layers(
                    a.typed::<i32>()?.map(|v| v as u32).collect(),
                )),
                ValueType::Bool => Some(PerLayer::Layers(
                    a.typed::<bool>()?.map(u32::from).collect(),
                )),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The number of entries of an array of any type (`get_arr_n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArrayLen(pub u64);

impl Getter for ArrayLen {
    fn get(meta: &(impl Gguf + ?Sized), key: &str) -> Option<Self> {
        match meta.value(key)? {
            Value::Array(a) => Some(ArrayLen(a.len() as u64)),
            _ => None,
        }
    }
}

/// `{arch}.attention.sliding_window_pattern` as the loader reads it for
/// layer 0: a period, or per-layer flags of which layer 0's is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SwaPattern {
    /// Every `n`-th layer is dense (`set_swa_pattern(n)`).
    Period(u32),
    /// Whether layer 0 slides (false for an empty array or one of another
    /// element type, which llama.cpp zero-fills or refuses).
    Layer0(bool),
}

impl Getter for SwaPattern {
    fn get(meta: &(impl Gguf + ?Sized), key: &str) -> Option<Self> {
        match meta.value(key)? {
            Value::U32(p) => Some(SwaPattern::Period(p)),
            Value::Array(_) => Some(SwaPattern::Layer0(
                <PerLayer as Getter>::get(meta, key)
                    .and_then(|p| p.layer0())
                    .is_some_and(|v| v != 0),
            )),
            _ => None,
        }
    }
}

/// The `u32` value of `key`, if it is one, as llama.cpp's getter reads it.
pub(crate) fn u32_of(meta: &(impl Gguf + ?Sized), key: &str) -> Option<u32> {
    u32::get(meta, key)
}

/// `key` of a table (`{arch}.…`) for architecture `arch`.
pub(crate) fn arch_key(key: &str, arch: &str) -> String {
    key.replace("{arch}", arch)
}

/// The string value of `key`, if it is one.
pub(crate) fn str_of<'a>(meta: &'a (impl Gguf + ?Sized), key: &str) -> Option<&'a str> {
    meta.value(key)?.as_str()
}

/// One table, three products: the struct (its fields, with their docs),
/// `key::FIELD` (the key, `{arch}.` included, for the loader's rule
/// tables) and the reading as llama.cpp's getters read. A table marked
/// `derive` also names its keys to `#[derive(Metadata)]`, the strict reader.
macro_rules! hparams_table {
    (
        derive;
        $(#[$struct_attr:meta])*
        $vis:vis struct $name:ident;
        keys: $keys:ident;
        $( $(#[$attr:meta])* $field:ident: $ty:ty = $key:tt, )*
    ) => {
        $(#[$struct_attr])*
        $vis struct $name {
            $( $(#[$attr])* #[gguf(rename = $key)] $vis $field: Option<$ty>, )*
        }
        hparams_table!(@read $name $keys $( $field $ty = $key )*);
    };
    (
        $(#[$struct_attr:meta])*
        $vis:vis struct $name:ident;
        keys: $keys:ident;
        $( $(#[$attr:meta])* $field:ident: $ty:ty = $key:tt, )*
    ) => {
        $(#[$struct_attr])*
        $vis struct $name {
            $( $(#[$attr])* $vis $field: Option<$ty>, )*
        }
        hparams_table!(@read $name $keys $( $field $ty = $key )*);
    };
    (@read $name:ident $keys:ident $( $field:ident $ty:ty = $key:tt )*) => {
        /// The keys of the table, `{arch}` standing for the architecture.
        #[allow(non_upper_case_globals, dead_code)]
        pub(crate) mod $keys {
            $( pub(crate) const $field: &str = concat!("{arch}.", $key); )*

            /// Every key with the name of its field's type, for the test
            /// that the loader's rules read each key as this type.
            #[cfg(test)]
            pub(crate) const ALL: &[(&str, &str)] = &[ $( ($field, stringify!($ty)), )* ];
        }

        impl $name {
            /// Reads the table for architecture `arch` as llama.cpp's typed
            /// getters do: a key of another type reads as absent.
            pub(crate) fn as_llama_cpp_reads(meta: &(impl Gguf + ?Sized), arch: &str) -> Self {
                $name {
                    $( $field: Getter::get(meta, &format!("{arch}.{}", $key)), )*
                }
            }
        }
    };
}

hparams_table! {
    derive;
    /// The architecture hyper-parameters under `{arch}.*` that decide a
    /// model's shapes and memory: every key optional, as most are optional
    /// for some architecture.
    ///
    /// Keys that llama.cpp reads with `get_key_or_arr` (head counts,
    /// feed-forward lengths, experts used) are [`PerLayer`]: a scalar or one
    /// value per layer.
    ///
    /// ```
    /// # fn main() -> gguf_llama::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::{FromMetadata, GgufFile};
    /// use gguf_llama::summary::ArchParams;
    /// let file = GgufFile::open(&bytes)?;
    /// let hp = ArchParams::from_gguf(&file)?;
    /// assert_eq!(hp.context_length, Some(4096));
    /// # Ok(()) }
    /// ```
    #[derive(Debug, Clone, Default, PartialEq, Metadata)]
    #[gguf(prefix = "{arch}", crate = "gguf_core")]
    pub struct ArchParams;
    keys: key;
    /// `{arch}.context_length` (`n_ctx_train`).
    context_length: u32 = "context_length",
    /// `{arch}.embedding_length` (`n_embd`).
    embedding_length: u32 = "embedding_length",
    /// `{arch}.block_count` (`n_layer`, NextN layers included).
    block_count: u32 = "block_count",
    /// `{arch}.nextn_predict_layers`: trailing multi-token-prediction layers.
    nextn_predict_layers: u32 = "nextn_predict_layers",
    /// `{arch}.feed_forward_length` (`n_ff`).
    feed_forward_length: PerLayer = "feed_forward_length",
    /// `{arch}.attention.head_count` (`n_head`).
    head_count: PerLayer = "attention.head_count",
    /// `{arch}.attention.head_count_kv` (`n_head_kv`; `n_head` when absent).
    head_count_kv: PerLayer = "attention.head_count_kv",
    /// `{arch}.attention.key_length` (`n_embd_head_k`; `n_embd / n_head` when absent).
    key_length: u32 = "attention.key_length",
    /// `{arch}.attention.value_length` (`n_embd_head_v`).
    value_length: u32 = "attention.value_length",
    /// `{arch}.attention.key_length_swa`: key length of sliding-window layers.
    key_length_swa: u32 = "attention.key_length_swa",
    /// `{arch}.attention.value_length_swa`.
    value_length_swa: u32 = "attention.value_length_swa",
    /// `{arch}.attention.key_length_mla`: MLA (DeepSeek-style) key length.
    key_length_mla: u32 = "attention.key_length_mla",
    /// `{arch}.attention.value_length_mla`.
    value_length_mla: u32 = "attention.value_length_mla",
    /// `{arch}.attention.kv_lora_rank`: MLA's compressed KV width.
    kv_lora_rank: u32 = "attention.kv_lora_rank",
    /// `{arch}.attention.sliding_window` (`n_swa`).
    sliding_window: u32 = "attention.sliding_window",
    /// `{arch}.expert_count`.
    expert_count: u32 = "expert_count",
    /// `{arch}.expert_used_count`.
    expert_used_count: PerLayer = "expert_used_count",
    /// `{arch}.expert_shared_count`.
    expert_shared_count: u32 = "expert_shared_count",
    /// `{arch}.vocab_size`.
    vocab_size: u32 = "vocab_size",
    /// `{arch}.embedding_length_out`: output embedding width when it differs.
    embedding_length_out: u32 = "embedding_length_out",
    /// `{arch}.ssm.conv_kernel` (Mamba `d_conv`).
    ssm_conv_kernel: u32 = "ssm.conv_kernel",
    /// `{arch}.ssm.inner_size` (Mamba `d_inner`).
    ssm_inner_size: u32 = "ssm.inner_size",
    /// `{arch}.ssm.state_size` (Mamba `d_state`).
    ssm_state_size: u32 = "ssm.state_size",
    /// `{arch}.ssm.group_count` (Mamba-2 `n_group`).
    ssm_group_count: u32 = "ssm.group_count",
    /// `{arch}.wkv.head_size` (RWKV).
    wkv_head_size: u32 = "wkv.head_size",
    /// `{arch}.token_shift_count` (RWKV; 2 when absent).
    token_shift_count: u32 = "token_shift_count",
}

hparams_table! {
    /// The `{arch}.*` keys llama.cpp's loader reads beyond [`ArchParams`]:
    /// read only as its getters read them, so that a summary never fails
    /// on them.
    #[derive(Debug, Clone, Default, PartialEq)]
    pub(crate) struct LoaderParams;
    keys: loader_key;
    /// `{arch}.rope.dimension_count` (`n_rot`; the key width when absent).
    rope_dimension_count: u32 = "rope.dimension_count",
    /// `{arch}.rope.dimension_count_swa` (`n_rot` of sliding-window layers).
    rope_dimension_count_swa: u32 = "rope.dimension_count_swa",
    /// `{arch}.rope.scaling.type`.
    rope_scaling_type: String = "rope.scaling.type",
    /// `{arch}.rope.scaling.original_context_length` (`n_ctx_train` when absent).
    rope_scaling_original_context_length: u32 = "rope.scaling.original_context_length",
    /// `{arch}.attention.sliding_window_pattern`.
    sliding_window_pattern: SwaPattern = "attention.sliding_window_pattern",
    /// `{arch}.attention.temperature_scale`.
    attention_temperature_scale: f32 = "attention.temperature_scale",
    /// `{arch}.expert_feed_forward_length` (`n_ff_exp`).
    expert_feed_forward_length: PerLayer = "expert_feed_forward_length",
    /// `{arch}.expert_shared_feed_forward_length` (`n_ff_shexp`).
    expert_shared_feed_forward_length: u32 = "expert_shared_feed_forward_length",
    /// `{arch}.expert_group_count`.
    expert_group_count: u32 = "expert_group_count",
    /// `{arch}.expert_group_used_count`.
    expert_group_used_count: u32 = "expert_group_used_count",
    /// `{arch}.classifier.output_labels`: their number (`n_cls_out`).
    classifier_output_labels: ArrayLen = "classifier.output_labels",
}

/// The defaults `load_hparams` fills in, shared by every reader of the
/// table (strict or as llama.cpp's getters read).
impl ArchParams {
    /// `n_head()`: layer 0's query heads, 0 when absent.
    pub(crate) fn n_head0(&self) -> u32 {
        self.head_count.as_ref().map_or(0, PerLayer::first)
    }

    /// `n_head_kv` per layer: the key, else `n_head` (llama.cpp copies
    /// `n_head_arr` into `n_head_kv_arr` before reading the optional key).
    pub(crate) fn n_head_kv(&self) -> PerLayer {
        self.head_count_kv
            .clone()
            .unwrap_or_else(|| self.head_count.clone().unwrap_or(PerLayer::Scalar(0)))
    }

    /// `n_head_kv()` of layer 0 as the loader's getters give it: an empty
    /// array reads as absent, so as `n_head`.
    pub(crate) fn n_head_kv0(&self) -> u32 {
        self.head_count_kv
            .as_ref()
            .and_then(PerLayer::layer0)
            .unwrap_or_else(|| self.n_head0())
    }

    /// Layers the main context computes (`n_layer()`: NextN layers
    /// excluded), 0 without `block_count`.
    pub(crate) fn n_layer(&self) -> u32 {
        self.block_count
            .unwrap_or(0)
            .saturating_sub(self.nextn_predict_layers.unwrap_or(0))
    }

    /// Key and value head widths of full-attention layers
    /// (`n_embd_head_k`, `n_embd_head_v`): the keys, else `n_embd / n_head`;
    /// both 0 without heads (recurrent models), as llama.cpp leaves them.
    pub(crate) fn head_widths(&self) -> (u32, u32) {
        let n_embd = self.embedding_length.unwrap_or(0);
        match n_embd.checked_div(self.n_head0()) {
            Some(width) => (
                self.key_length.unwrap_or(width),
                self.value_length.unwrap_or(width),
            ),
            None => (0, 0),
        }
    }

    /// Key and value head widths of sliding-window layers: their keys,
    /// else the full-attention widths.
    pub(crate) fn head_widths_swa(&self) -> (u32, u32) {
        let (k, v) = self.head_widths();
        (
            self.key_length_swa.unwrap_or(k),
            self.value_length_swa.unwrap_or(v),
        )
    }
}

/// The sliding-window layout an architecture's `load_arch_hparams`
/// hard-codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SwaLayout {
    /// The pattern's period: with period `p`, layer `il` slides unless it
    /// is the last of each group of `p` (llama.cpp's `set_swa_pattern`);
    /// 0 means every layer slides.
    pub period: u32,
    /// `n_swa` when `{arch}.attention.sliding_window` is absent; 0 means
    /// the window (and so the pattern) is off unless the key sets one.
    pub default_window: u32,
    /// The first layer of each group is the dense one.
    pub dense_first: bool,
}

impl SwaLayout {
    /// Whether layer `il` slides with period `period` (the file's, or
    /// this layout's).
    pub(crate) fn slides(&self, period: u32, il: u32) -> bool {
        period == 0
            || if self.dense_first {
                !il.is_multiple_of(period)
            } else {
                il % period < period - 1
            }
    }
}

/// The sliding-window layout of `arch`, `None` when it has none.
pub(crate) fn swa_layout(arch: &str) -> Option<SwaLayout> {
    let (period, default_window, dense_first) = match arch {
        "gemma2" => (2, 4096, false),
        "gemma3" => (6, 0, false),
        "gemma3n" => (5, 0, false),
        "cohere2" => (4, 0, false),
        "exaone4" => (4, 4096, false),
        "llama4" => (4, 0, false),
        _ => return None,
    };
    Some(SwaLayout {
        period,
        default_window,
        dense_first,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gguf_core::write::Builder;
    use gguf_core::{FromMetadata, GgufFile};

    #[test]
    fn one_table_reads_strictly_or_as_llama_cpp_does() {
        let mut b = Builder::new();
        b.set("general.architecture", "llama").unwrap();
        b.set("llama.context_length", "4096").unwrap();
        b.set("llama.attention.head_count", vec![-1i32, 8]).unwrap();
        b.set("llama.block_count", 2u32).unwrap();
        let bytes = b.to_vec().unwrap();
        let file = GgufFile::open(&bytes).unwrap();
        // Strictly, a string context length is an error.
        assert!(ArchParams::from_gguf(&file).is_err());
        let hp = ArchParams::as_llama_cpp_reads(&file, "llama");
        assert_eq!(hp.context_length, None);
        assert_eq!(hp.block_count, Some(2));
        assert_eq!(hp.head_count, Some(PerLayer::Layers(vec![u32::MAX, 8])));
        assert_eq!(key::head_count, "{arch}.attention.head_count");
        assert_eq!(
            loader_key::rope_dimension_count,
            "{arch}.rope.dimension_count"
        );
    }

    #[test]
    fn defaults_follow_load_hparams() {
        let hp = ArchParams {
            embedding_length: Some(64),
            head_count: Some(PerLayer::Scalar(4)),
            key_length_swa: Some(32),
            block_count: Some(3),
            nextn_predict_layers: Some(5),
            ..ArchParams::default()
        };
        assert_eq!(hp.head_widths(), (16, 16));
        assert_eq!(hp.head_widths_swa(), (32, 16));
        assert_eq!(hp.n_head_kv(), PerLayer::Scalar(4));
        assert_eq!(hp.n_head_kv0(), 4);
        assert_eq!(hp.n_layer(), 0);
        let empty_kv = ArchParams {
            head_count_kv: Some(PerLayer::Layers(Vec::new())),
            ..hp
        };
        assert_eq!(empty_kv.n_head_kv().get(0), 0);
        assert_eq!(empty_kv.n_head_kv0(), 4);
        assert_eq!(ArchParams::default().head_widths(), (0, 0));
    }
}
