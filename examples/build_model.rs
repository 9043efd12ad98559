//! Builds a small llama-shaped model from code: general info and
//! hyper-parameters through the typed metadata structs, a BPE vocabulary
//! with scores, token types and merges, and tensors of type F32, F16 and
//! Q8_0.
//!
//! ```sh
//! cargo run --example build_model                                 # writes to a temp dir
//! cargo run --example build_model -- samples/tiny-llama.gguf      # regenerates the sample
//! ```
//!
//! Its output is byte for byte the bundled sample `samples/tiny-llama.gguf`
//! (CI checks it).

use gguf::write::Builder;
use gguf::{GgmlType, LlamaHyperParams, TokenizerMetadata};
use half::f16;

const N_EMBD: u32 = 64;
const N_FF: u32 = 128;
const N_HEAD: u32 = 4;
const N_HEAD_KV: u32 = 2;
const N_LAYER: u32 = 2;

/// ggml's Q8_0: blocks of 32 weights, each an f16 scale then 32 `i8`.
const QK8_0: usize = 32;

fn main() -> gguf::Result<()> {
    let dir = tempfile::tempdir()?;
    let out = match std::env::args().nth(1) {
        Some(path) => path.into(),
        None => dir.path().join("tiny-llama.gguf"),
    };

    let tokenizer = vocabulary();
    let n_vocab = tokenizer.tokens.len() as u64;

    let general = gguf::General {
        architecture: "llama".into(),
        quantization_version: Some(2),
        kind: Some("model".into()),
        name: Some("tiny-llama sample".into()),
        author: Some("gguf examples/build_model.rs".into()),
        version: Some("v2".into()),
        basename: Some("tiny-llama".into()),
        description: Some("A randomly initialised llama-shaped model for tests.".into()),
        size_label: Some("112K".into()), // 112,064 parameters
        license: Some("MIT OR Apache-2.0".into()),
        // llama.cpp's LLAMA_FTYPE_MOSTLY_Q8_0.
        file_type: Some(7),
        ..gguf::General::default()
    };
    let hyper = LlamaHyperParams {
        context_length: 256,
        embedding_length: N_EMBD,
        block_count: N_LAYER,
        feed_forward_length: N_FF,
        head_count: N_HEAD,
        head_count_kv: Some(N_HEAD_KV),
        layer_norm_rms_epsilon: 1e-5,
        rope_dimension_count: Some(N_EMBD / N_HEAD),
        rope_freq_base: Some(10000.0),
        vocab_size: Some(n_vocab as u32),
        ..LlamaHyperParams::default()
    };

    let mut b = Builder::new();
    // `general` carries the architecture, so `{arch}` keys resolve to `llama.*`.
    b.set_all(&general)?.set_all(&hyper)?.set_all(&tokenizer)?;

    let (embd, ff) = (u64::from(N_EMBD), u64::from(N_FF));
    let kv = embd / u64::from(N_HEAD) * u64::from(N_HEAD_KV);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);

    b.add_tensor(
        "token_embd.weight",
        GgmlType::F32,
        &[embd, n_vocab],
        rng.weights(embd * n_vocab),
    )?;
    for i in 0..N_LAYER {
        let blk = |name: &str| format!("blk.{i}.{name}.weight");
        b.add_tensor(
            blk("attn_norm"),
            GgmlType::F32,
            &[embd],
            vec![1.0f32; embd as usize],
        )?;
        b.add_tensor(
            blk("attn_q"),
            GgmlType::F16,
            &[embd, embd],
            halves(&rng.weights(embd * embd)),
        )?;
        b.add_tensor(
            blk("attn_k"),
            GgmlType::F16,
            &[embd, kv],
            halves(&rng.weights(embd * kv)),
        )?;
        b.add_tensor(
            blk("attn_v"),
            GgmlType::Q8_0,
            &[embd, kv],
            q8_0(&rng.weights(embd * kv)),
        )?;
        b.add_tensor(
            blk("attn_output"),
            GgmlType::Q8_0,
            &[embd, embd],
            q8_0(&rng.weights(embd * embd)),
        )?;
        b.add_tensor(
            blk("ffn_norm"),
            GgmlType::F32,
            &[embd],
            vec![1.0f32; embd as usize],
        )?;
        b.add_tensor(
            blk("ffn_gate"),
            GgmlType::Q8_0,
            &[embd, ff],
            q8_0(&rng.weights(embd * ff)),
        )?;
        b.add_tensor(
            blk("ffn_up"),
            GgmlType::Q8_0,
            &[embd, ff],
            q8_0(&rng.weights(embd * ff)),
        )?;
        b.add_tensor(
            blk("ffn_down"),
            GgmlType::Q8_0,
            &[ff, embd],
            q8_0(&rng.weights(ff * embd)),
        )?;
    }
    b.add_tensor(
        "output_norm.weight",
        GgmlType::F32,
        &[embd],
        vec![1.0f32; embd as usize],
    )?;
    b.add_tensor(
        "output.weight",
        GgmlType::F16,
        &[embd, n_vocab],
        halves(&rng.weights(embd * n_vocab)),
    )?;

    let layout = b.write_to_path(&out)?;
    println!(
        "wrote {}: {} tokens, {} tensors, {} bytes",
        out.display(),
        n_vocab,
        b.tensor_names().count(),
        layout.file_len()
    );
    Ok(())
}

/// A byte-pair vocabulary: 3 control tokens, the 94 printable ASCII
/// characters, and one merged token per merge rule.
fn vocabulary() -> TokenizerMetadata {
    let mut tokens: Vec<String> = ["<unk>", "<s>", "</s>"].map(String::from).to_vec();
    let mut token_type = vec![2, 3, 3]; // unknown, control, control
    tokens.extend((b'!'..=b'~').map(|c| char::from(c).to_string()));
    let mut merges = Vec::new();
    let letters = "etaoinshrdlucm";
    for a in letters.chars() {
        for c in letters.chars() {
            merges.push(format!("{a} {c}"));
            tokens.push(format!("{a}{c}"));
        }
    }
    for (left, right) in [("th", "e"), ("in", "g"), ("an", "d"), ("er", "s")] {
        merges.push(format!("{left} {right}"));
        tokens.push(format!("{left}{right}"));
    }
    token_type.resize(tokens.len(), 1); // normal
                                        // Earlier merges rank higher, as in a SentencePiece score table.
    let scores = (0..tokens.len()).map(|i| 0.0 - i as f32).collect();
    TokenizerMetadata {
        model: "gpt2".into(),
        pre: Some("default".into()),
        tokens,
        scores: Some(scores),
        token_type: Some(token_type),
        merges: Some(merges),
        bos_token_id: Some(1),
        eos_token_id: Some(2),
        unknown_token_id: Some(0),
        add_bos_token: Some(true),
        add_eos_token: Some(false),
        chat_template: Some(
            "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}".into(),
        ),
        ..TokenizerMetadata::default()
    }
}

/// Little-endian F16 bytes.
fn halves(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| f16::from_f32(v).to_le_bytes())
        .collect()
}

/// Q8_0 blocks, as ggml's reference quantizer makes them: scale
/// `d = max|x| / 127` stored as f16, then `round(x / d)` as 32 `i8`.
fn q8_0(values: &[f32]) -> Vec<u8> {
    assert_eq!(values.len() % QK8_0, 0, "rows are whole blocks");
    let mut out = Vec::with_capacity(values.len() / QK8_0 * (2 + QK8_0));
    for block in values.chunks_exact(QK8_0) {
        let amax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let inv = if d == 0.0 { 0.0 } else { 1.0 / d };
        out.extend_from_slice(&f16::from_f32(d).to_le_bytes());
        out.extend(block.iter().map(|&v| ((v * inv).round() as i8) as u8));
    }
    out
}

/// xorshift64*: deterministic weights, so the sample is reproducible.
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
        (bits as f32 / (1u64 << 24) as f32 - 0.5) * 0.2
    }

    fn weights(&mut self, n: u64) -> Vec<f32> {
        (0..n).map(|_| self.next_f32()).collect()
    }
}
