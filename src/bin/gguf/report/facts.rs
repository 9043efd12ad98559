//! What the page shows, gathered once from the library: the model's
//! summary (`gguf::summary::ModelSummary`), its tensors grouped by layer,
//! its metadata, and memory estimates (`gguf::estimate`). Nothing here is
//! computed a second time: sizes come from the tensor infos, memory from
//! `Estimate` and `fit` (what `gguf estimate` prints).

use std::collections::BTreeMap;

use gguf::estimate::{fit, Estimate, ModelShape, Settings};
use gguf::summary::ModelSummary;
use gguf::{GgmlType, Gguf, Model, Value};

/// The KV-cache types the memory chart draws, one curve each.
pub const CACHE_TYPES: [GgmlType; 3] = [GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0];

/// Common device sizes in GiB (a "24 GB" card holds 24 GiB), drawn as
/// horizontal lines and fitted against.
pub const DEVICE_GIB: [u64; 6] = [8, 12, 16, 24, 48, 80];

/// Most array elements listed when an array is unfolded: the vocabulary
/// of a 262K-token model is summarised, not dumped.
const ARRAY_ITEMS_SHOWN: usize = 200;
/// Most characters of a string value shown (a chat template is a few KB).
const STRING_CHARS_SHOWN: usize = 64 * 1024;

/// One tensor: a cell of the tensor map.
pub struct Cell {
    pub name: String,
    pub ty: GgmlType,
    pub bytes: u64,
    pub elements: u64,
}

/// The tensors of one `blk.N.` layer, in file order.
pub struct Layer {
    pub index: u64,
    pub cells: Vec<Cell>,
}

impl Layer {
    pub fn bytes(&self) -> u64 {
        self.cells.iter().map(|c| c.bytes).sum()
    }

    /// Bits per weight of the layer, as the summary counts them for the
    /// whole model (bytes of data times 8 over elements).
    pub fn bits_per_weight(&self) -> f64 {
        let elements: u64 = self.cells.iter().map(|c| c.elements).sum();
        if elements == 0 {
            0.0
        } else {
            self.bytes() as f64 * 8.0 / elements as f64
        }
    }

    /// The type holding most of the layer's bytes.
    pub fn main_type(&self) -> GgmlType {
        let mut by_type: Vec<(GgmlType, u64)> = Vec::new();
        for c in &self.cells {
            match by_type.iter_mut().find(|(t, _)| *t == c.ty) {
                Some((_, b)) => *b += c.bytes,
                None => by_type.push((c.ty, c.bytes)),
            }
        }
        by_type
            .into_iter()
            .max_by_key(|(_, b)| *b)
            .map_or(GgmlType::F32, |(t, _)| t)
    }
}

/// One metadata entry as the table shows it.
pub struct MetaRow {
    pub key: String,
    /// `u32`, `string`, `array of string (262144)`.
    pub ty: String,
    /// The value on one line (`gguf inspect`'s short form).
    pub short: String,
    /// The longer text behind a fold: a long string, or more elements.
    pub long: Option<String>,
}

/// One KV-cache type's curve: total memory at each context length, and
/// the largest context that fits each device size.
pub struct Curve {
    pub cache_type: GgmlType,
    pub points: Vec<(u32, u64)>,
    /// (device GiB, largest context that fits, capped at the training
    /// context).
    pub fits: Vec<(u64, Option<u32>)>,
}

/// The memory section's figures.
pub struct Memory {
    /// `gguf estimate MODEL`'s output (default settings).
    pub estimate_text: String,
    pub n_ctx_train: u32,
    pub curves: Vec<Curve>,
    /// Cache types left out, with the estimate's reason.
    pub left_out: Vec<String>,
}

/// Everything the page shows about one model.
pub struct Facts {
    /// The source as messages show it (a URL without credentials).
    pub origin: String,
    pub summary: Result<ModelSummary, String>,
    /// (file, tensors, bytes) per shard.
    pub shards: Vec<(String, usize, u64)>,
    pub total_len: u64,
    pub metadata: Vec<MetaRow>,
    pub layers: Vec<Layer>,
    /// Tensors outside the layers (embeddings, output, norms), file order.
    pub others: Vec<Cell>,
    pub memory: Result<Memory, String>,
}

impl Facts {
    pub fn of(model: &Model<'_>, origin: String) -> Facts {
        let mut layers: BTreeMap<u64, Vec<Cell>> = BTreeMap::new();
        let mut others = Vec::new();
        for t in model.tensors() {
            let cell = Cell {
                name: t.name().to_owned(),
                ty: t.ggml_type(),
                bytes: t.byte_size().unwrap_or(0),
                elements: t.element_count(),
            };
            match layer_of(t.name()) {
                Some(n) => layers.entry(n).or_default().push(cell),
                None => others.push(cell),
            }
        }
        Facts {
            origin,
            summary: ModelSummary::of(model).map_err(|e| e.to_string()),
            shards: model
                .shards()
                .iter()
                .map(|s| {
                    let f = s.file();
                    (s.origin().to_string(), f.tensor_count(), f.file_len())
                })
                .collect(),
            total_len: model.total_len(),
            metadata: model.metadata().map(|(k, v)| meta_row(k, &v)).collect(),
            layers: layers
                .into_iter()
                .map(|(index, cells)| Layer { index, cells })
                .collect(),
            others,
            memory: memory(model),
        }
    }

    /// `general.name`, else the file.
    pub fn title(&self) -> &str {
        match &self.summary {
            Ok(ModelSummary {
                name: Some(name), ..
            }) if !name.trim().is_empty() => name,
            _ => &self.origin,
        }
    }
}

/// `blk.17.attn_q.weight` -> 17.
fn layer_of(name: &str) -> Option<u64> {
    name.strip_prefix("blk.")?.split('.').next()?.parse().ok()
}

fn meta_row(key: &str, value: &Value<'_>) -> MetaRow {
    let (ty, long) = match value {
        Value::Array(a) => {
            let elem = a.element_type();
            let long = (a.len() > 8).then(|| crate::json::short(value, ARRAY_ITEMS_SHOWN));
            (format!("array of {elem} ({})", a.len()), long)
        }
        Value::String(s) => {
            let long = (s.chars().count() > 60).then(|| {
                let shown: String = s.chars().take(STRING_CHARS_SHOWN).collect();
                if shown.len() < s.len() {
                    format!("{shown}\n... ({} bytes in all)", s.len())
                } else {
                    shown
                }
            });
            ("string".to_owned(), long)
        }
        v => (v.value_type().name().to_owned(), None),
    };
    MetaRow {
        key: key.to_owned(),
        ty,
        short: crate::json::short(value, 8),
        long,
    }
}

/// The context lengths the memory chart samples: powers of two from 512
/// below the training context, then the training context itself.
pub fn contexts(n_ctx_train: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut c = 512u32;
    while c < n_ctx_train {
        out.push(c);
        c = match c.checked_mul(2) {
            Some(next) => next,
            None => break,
        };
    }
    if n_ctx_train > 0 {
        out.push(n_ctx_train);
    }
    out
}

/// The estimate at llama.cpp's defaults (what `gguf estimate MODEL`
/// prints), then one curve per cache type, or why there is none.
fn memory(model: &Model<'_>) -> Result<Memory, String> {
    let base = Settings::default();
    let est = Estimate::of(model, &base).map_err(|e| e.to_string())?;
    let estimate_text = crate::estimate::to_text(&est, &base);
    let summary = est.summary.clone();
    let shape = ModelShape::of(model, &summary).map_err(|e| e.to_string())?;
    let mut curves = Vec::new();
    let mut left_out = Vec::new();
    for ty in CACHE_TYPES {
        let s = base.clone().type_k(ty).type_v(ty);
        let points: Result<Vec<(u32, u64)>, gguf::llama::Error> = contexts(est.n_ctx_train)
            .into_iter()
            .map(|c| {
                let e = Estimate::with_shape(model, summary.clone(), &shape, &s.clone().n_ctx(c))?;
                Ok((c, e.total_bytes()))
            })
            .collect();
        let fits: Result<Vec<(u64, Option<u32>)>, gguf::llama::Error> = DEVICE_GIB
            .iter()
            .map(|&gib| Ok((gib, fit(model, &s, gib << 30)?.max_ctx)))
            .collect();
        match (points, fits) {
            (Ok(points), Ok(fits)) => curves.push(Curve {
                cache_type: ty,
                points,
                fits,
            }),
            (Err(e), _) | (_, Err(e)) => left_out.push(format!("{}: {e}", cache_name(ty))),
        }
    }
    Ok(Memory {
        estimate_text,
        n_ctx_train: est.n_ctx_train,
        curves,
        left_out,
    })
}

/// `q8_0`, as `-ctk` spells it.
pub fn cache_name(ty: GgmlType) -> String {
    ty.name()
        .map_or_else(|| ty.to_string(), str::to_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_double_from_512_and_end_at_the_training_context() {
        assert_eq!(contexts(256), vec![256]);
        assert_eq!(contexts(4096), vec![512, 1024, 2048, 4096]);
        assert_eq!(
            contexts(40960)[5..],
            [16384, 32768, 40960],
            "the training context closes the curve"
        );
        assert_eq!(contexts(u32::MAX).len(), 24);
        assert!(contexts(0).is_empty());
    }

    #[test]
    fn only_blk_n_tensors_belong_to_a_layer() {
        assert_eq!(layer_of("blk.17.attn_q.weight"), Some(17));
        assert_eq!(layer_of("blk.x.attn_q.weight"), None);
        assert_eq!(layer_of("token_embd.weight"), None);
        assert_eq!(layer_of("blk.3"), Some(3));
    }
}
