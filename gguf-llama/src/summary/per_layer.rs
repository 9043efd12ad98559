//! [`PerLayer`]: a hyper-parameter stored as one value or one per layer.

use crate::error::LookupError;
use gguf_core::format::{OwnedArray, OwnedValue};
use gguf_core::metadata::MetaField;
use gguf_core::Gguf;
use gguf_core::Value;

/// A `u32` hyper-parameter that llama.cpp reads with `get_key_or_arr`: a
/// scalar shared by every layer, or an array with one value per layer
/// (OpenELM's head counts, Gemma 3n's feed-forward lengths).
///
/// ```
/// use gguf_core::Gguf;
/// use gguf_llama::summary::PerLayer;
/// let heads = PerLayer::Layers(vec![4, 8, 8]);
/// assert_eq!(heads.get(1), 8);
/// assert_eq!(heads.max(), 8);
/// assert_eq!(PerLayer::Scalar(4).get(17), 4);
/// assert_eq!(heads.to_string(), "[4, 8, 8]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PerLayer {
    /// One value for every layer.
    Scalar(u32),
    /// One value per layer, in layer order.
    Layers(Vec<u32>),
}

impl PerLayer {
    /// The value for layer `il`; 0 past the end of a per-layer array (llama.cpp
    /// zero-fills its per-layer arrays before reading them).
    pub fn get(&self, il: usize) -> u32 {
        match self {
            PerLayer::Scalar(v) => *v,
            PerLayer::Layers(v) => v.get(il).copied().unwrap_or(0),
        }
    }

    /// The largest value (0 for an empty array).
    pub fn max(&self) -> u32 {
        match self {
            PerLayer::Scalar(v) => *v,
            PerLayer::Layers(v) => v.iter().copied().max().unwrap_or(0),
        }
    }

    /// The value of layer 0, as llama.cpp's `n_head()` without a layer.
    pub fn first(&self) -> u32 {
        self.get(0)
    }

    /// Layer 0's value as llama.cpp's loader reads it; `None` for an empty
    /// array, which the loader's getters treat as no value.
    pub(crate) fn layer0(&self) -> Option<u32> {
        match self {
            PerLayer::Scalar(v) => Some(*v),
            PerLayer::Layers(v) => v.first().copied(),
        }
    }
}

impl std::fmt::Display for PerLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PerLayer::Scalar(v) => write!(f, "{v}"),
            PerLayer::Layers(v) => {
                let items: Vec<String> = v.iter().map(u32::to_string).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

impl MetaField for PerLayer {
    /// A `u32`, or an array of `u32` or `i32` (llama.cpp's `get_arr` accepts
    /// both element types; negative entries are refused).
    fn read(file: &(impl Gguf + ?Sized), key: &str) -> gguf_core::Result<Self> {
        let value = file.require(key)?;
        let mismatch = |found: String| {
            gguf_core::Error::Lookup(LookupError::TypeMismatch {
                key: key.into(),
                expected: "u32 or array of u32".into(),
                found,
            })
        };
        match value {
            Value::U32(v) => Ok(PerLayer::Scalar(v)),
            Value::Array(a) => {
                if let Some(it) = a.typed::<u32>() {
                    return Ok(PerLayer::Layers(it.collect()));
                }
                if let Some(it) = a.typed::<i32>() {
                    return it
                        .map(|v| {
                            u32::try_from(v).map_err(|_| mismatch(format!("negative entry {v}")))
                        })
                        .collect::<gguf_core::Result<Vec<u32>>>()
                        .map(PerLayer::Layers);
                }
                Err(mismatch(format!("array of {}", a.element_type().name())))
            }
            other => Err(mismatch(other.value_type().name().into())),
        }
    }

    fn write(&self) -> Option<OwnedValue> {
        Some(match self {
            PerLayer::Scalar(v) => OwnedValue::U32(*v),
            PerLayer::Layers(v) => OwnedValue::Array(OwnedArray::U32(v.clone())),
        })
    }
}
