//! Small models that llama.cpp loads and runs, built with our `Builder`,
//! for the comparisons with llama-quantize (`quantize_oracle`): a
//! llama-shaped and a Qwen2-shaped layout (the latter with attention
//! biases), rows that are and are not whole K-quant blocks (so that the
//! fallbacks show), tied and untied output, the sample's byte-level BPE
//! vocabulary (so that llama-imatrix can tokenize a text), deterministic
//! pseudo-random F16 and F32 weights.
//!
//! The same spec always gives the same bytes, so the committed goldens
//! (`tests/data/quantize/`) stay valid without storing the models.

use std::path::Path;

use gguf::format::OwnedValue;
use gguf::write::Builder;
use gguf::{GgmlType, Gguf, GgufFile};

use super::util::Rng;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

/// The shape of one test model.
#[derive(Clone, Copy, Debug)]
pub struct ModelSpec {
    /// File stem, also the goldens' name.
    pub name: &'static str,
    /// `general.architecture`: `llama` or `qwen2`.
    pub arch: &'static str,
    pub n_embd: u64,
    pub n_ff: u64,
    pub n_layer: u32,
    pub n_head: u64,
    pub n_head_kv: u64,
    /// The model has an `output.weight` of its own.
    pub untied: bool,
    /// Seed of the weights.
    pub seed: u64,
}

/// The test models. `llama-256`: rows that are whole K-quant blocks, 8
/// layers (so that the first-eighth and every-third-layer rules apply),
/// 4 query heads per KV head, untied output, some F32 matrices.
/// `llama-160`: rows of 160 (no K-quant fits: the 32-blocks fallbacks) and
/// a feed-forward width of 336 (not even a block of 32: F16), tied output.
/// `qwen2-384`: Qwen2 layout with Q/K/V biases, rows of 384 (a K-quant
/// block and a half), 3 query heads per KV head, tied output.
pub const MODELS: &[ModelSpec] = &[
    ModelSpec {
        name: "llama-256",
        arch: "llama",
        n_embd: 256,
        n_ff: 512,
        n_layer: 8,
        n_head: 4,
        n_head_kv: 1,
        untied: true,
        seed: 0x256,
    },
    ModelSpec {
        name: "llama-160",
        arch: "llama",
        n_embd: 160,
        n_ff: 336,
        n_layer: 3,
        n_head: 5,
        n_head_kv: 5,
        untied: false,
        seed: 0x160,
    },
    ModelSpec {
        name: "qwen2-384",
        arch: "qwen2",
        n_embd: 384,
        n_ff: 768,
        n_layer: 6,
        n_head: 6,
        n_head_kv: 2,
        untied: false,
        seed: 0x384,
    },
];

/// One weight: uniform noise of amplitude `scale`, with a few rows that
/// probe the quantizers (a zero row, a constant row, an outlier per block).
fn weight(rng: &mut Rng, row: u64, col: u64, scale: f32) -> f32 {
    let noise = ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale;
    match row {
        0 => 0.0,
        1 => scale * 0.5,
        2 if col % 32 == 7 => scale * 8.0,
        _ => noise,
    }
}

/// Values of a matrix of `shape` (innermost first).
fn matrix(rng: &mut Rng, shape: [u64; 2], scale: f32) -> Vec<f32> {
    let mut v = Vec::with_capacity((shape[0] * shape[1]) as usize);
    for r in 0..shape[1] {
        for c in 0..shape[0] {
            v.push(weight(rng, r, c, scale));
        }
    }
    v
}

impl ModelSpec {
    /// The model's bytes (an F16 model: `general.file_type` 1).
    pub fn bytes(&self) -> Vec<u8> {
        let sample = GgufFile::open(SAMPLE).unwrap();
        let n_vocab = sample.tensor("token_embd.weight").unwrap().shape()[1];
        let arch = self.arch;
        let mut b = Builder::new();
        let u32v = |v: u64| OwnedValue::U32(v as u32);
        b.set("general.architecture", arch).unwrap();
        b.set("general.type", "model").unwrap();
        b.set("general.name", format!("gguf-kit test {}", self.name))
            .unwrap();
        b.set("general.file_type", 1u32).unwrap();
        b.set("general.quantization_version", 2u32).unwrap();
        let k = |key: &str| format!("{arch}.{key}");
        let head_dim = self.n_embd / self.n_head;
        b.set(k("context_length"), u32v(256)).unwrap();
        b.set(k("embedding_length"), u32v(self.n_embd)).unwrap();
        b.set(k("block_count"), u32v(u64::from(self.n_layer)))
            .unwrap();
        b.set(k("feed_forward_length"), u32v(self.n_ff)).unwrap();
        b.set(k("attention.head_count"), u32v(self.n_head)).unwrap();
        b.set(k("attention.head_count_kv"), u32v(self.n_head_kv))
            .unwrap();
        b.set(k("attention.layer_norm_rms_epsilon"), 1e-6f32)
            .unwrap();
        b.set(k("rope.freq_base"), 10000.0f32).unwrap();
        if arch == "llama" {
            b.set(k("rope.dimension_count"), u32v(head_dim)).unwrap();
            b.set(k("vocab_size"), u32v(n_vocab)).unwrap();
        }
        for (key, v) in sample.metadata() {
            if key.starts_with("tokenizer.") {
                b.set(key, OwnedValue::from_value(&v)).unwrap();
            }
        }

        let (e, f, v) = (self.n_embd, self.n_ff, n_vocab);
        let kv = head_dim * self.n_head_kv;
        let mut rng = Rng(self.seed | 1);
        let mut add = |b: &mut Builder<'_>, name: String, ty: GgmlType, shape: &[u64]| {
            let values = match *shape {
                [n] => (0..n).map(|i| 1.0 + (i % 7) as f32 / 32.0).collect(),
                [c, r] => matrix(&mut rng, [c, r], 1.0 / (c as f32).sqrt()),
                _ => unreachable!(),
            };
            let values = if name.ends_with(".bias") {
                values.iter().map(|x| (x - 1.0) * 0.5).collect()
            } else {
                values
            };
            b.add_tensor_quantized(name, ty, shape, values).unwrap();
        };
        use GgmlType::{F16, F32};
        add(&mut b, "token_embd.weight".into(), F16, &[e, v]);
        for i in 0..self.n_layer {
            let n = |t: &str| format!("blk.{i}.{t}");
            // Layers alternate F16 and F32 for some matrices, so that both
            // input types are dequantized.
            let alt = if i % 2 == 0 { F16 } else { F32 };
            add(&mut b, n("attn_norm.weight"), F32, &[e]);
            add(&mut b, n("attn_q.weight"), F16, &[e, e]);
            add(&mut b, n("attn_k.weight"), F16, &[e, kv]);
            add(&mut b, n("attn_v.weight"), alt, &[e, kv]);
            if arch == "qwen2" {
                add(&mut b, n("attn_q.bias"), F32, &[e]);
                add(&mut b, n("attn_k.bias"), F32, &[kv]);
                add(&mut b, n("attn_v.bias"), F32, &[kv]);
            }
            add(&mut b, n("attn_output.weight"), alt, &[e, e]);
            add(&mut b, n("ffn_norm.weight"), F32, &[e]);
            add(&mut b, n("ffn_gate.weight"), F16, &[e, f]);
            add(&mut b, n("ffn_up.weight"), F16, &[e, f]);
            add(&mut b, n("ffn_down.weight"), alt, &[f, e]);
        }
        add(&mut b, "output_norm.weight".into(), F32, &[e]);
        if self.untied {
            add(&mut b, "output.weight".into(), F16, &[e, v]);
        }
        let mut out = Vec::new();
        b.write(&mut out).unwrap();
        out
    }

    /// Writes the model to `dir/NAME.gguf` (unless there already) and
    /// returns that path.
    pub fn write_to(&self, dir: &Path) -> std::path::PathBuf {
        let path = dir.join(format!("{}.gguf", self.name));
        if !path.exists() {
            std::fs::write(&path, self.bytes()).unwrap();
        }
        path
    }
}

#[test]
fn test_models_are_deterministic_and_shaped_as_specified() {
    for m in MODELS {
        let bytes = m.bytes();
        assert_eq!(bytes, m.bytes(), "{}", m.name);
        let f = GgufFile::open(&bytes).unwrap();
        let arch = f.architecture().unwrap();
        assert_eq!(arch, m.arch);
        let per_layer = if m.arch == "qwen2" { 12 } else { 9 };
        let expected = 2 + usize::from(m.untied) + per_layer * m.n_layer as usize;
        assert_eq!(f.tensor_count(), expected, "{}", m.name);
        let q = f.tensor("blk.0.attn_q.weight").unwrap();
        assert_eq!(q.shape(), [m.n_embd, m.n_embd]);
        assert_eq!(f.tensor("output.weight").is_ok(), m.untied, "{}", m.name);
    }
}
