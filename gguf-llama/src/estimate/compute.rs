//! The compute buffer: a model of ggml's graph reservation.
//!
//! llama.cpp reserves the worst-case graph (a full ubatch of
//! `min(n_ctx, n_ubatch)` tokens, one output per token, every cache cell
//! visible) and ggml's allocator lays its intermediate tensors out in one
//! buffer per device, reusing a tensor's memory once its last user has
//! run. The buffer is therefore the peak of the bytes alive at once. This
//! model adds the graph inputs, which live for the whole graph, to the
//! largest of three peaks: attention (the `KQ` matrix, or the flash
//! attention output), the feed-forward block, and the output head (the
//! logits of every token of the ubatch).

use super::{CacheKind, ContextParams, Device, ModelShape, Settings};

/// Bytes of an f32 tensor of `n` elements, padded to ggml's 32-byte
/// tensor alignment.
fn f32s(n: u64) -> u64 {
    (n * 4).div_ceil(32) * 32
}

/// The compute buffer per device. Follows llama.cpp's `sched_reserve`:
/// `n_tokens = min(n_ctx, n_ubatch)`, `n_outputs = n_tokens`, masks of
/// `n_kv x n_tokens` (f16 with flash attention, f32 without) per cache,
/// `n_kv` the whole cache. With GPUs the layers' peaks go to the devices
/// holding layers and the output head's to the output layer's device; the
/// CPU keeps the input embeddings.
pub fn compute_buffer(
    shape: &ModelShape,
    cp: &ContextParams,
    s: &Settings,
    caches: &[CacheKind],
    devices: &[Device],
) -> Vec<(Device, u64)> {
    let t = u64::from(cp.n_tokens());
    let n_embd = u64::from(shape.n_embd);
    let hidden = f32s(n_embd * t);
    let n_head = u64::from(shape.n_head.max());
    let n_head_kv = u64::from(shape.n_head_kv.max());
    let hk = u64::from(shape.head_k.0.max(shape.head_k.1));
    let hv = u64::from(shape.head_v.0.max(shape.head_v.1));
    let n_ff = u64::from(shape.n_ff.max());
    let n_outputs = t;

    // Inputs: token ids, positions, output ids, and per cache a mask and
    // the K/V cell indices.
    let mask_elem = if cp.flash_attn { 2 } else { 4 };
    let mut inputs = f32s(t) * 3;
    let mut n_kv_max = 0u64;
    for c in caches.iter().filter(|c| c.name != "recurrent") {
        let n_kv = u64::from(c.cells) * u64::from(if s.kv_unified { 1 } else { cp.n_seq_max });
        n_kv_max = n_kv_max.max(u64::from(c.cells));
        inputs += (n_kv * t * mask_elem).div_ceil(32) * 32 + 2 * f32s(2 * t);
    }

    let q = f32s(n_head * hk * t);
    let k = f32s(n_head_kv * hk * t);
    let v = f32s(n_head_kv * hv * t);
    let attn = if caches.iter().any(|c| c.name == "recurrent") {
        // Recurrent layers: the state update dominates; count the state
        // copies of one layer.
        let (r, st) = shape.recurrent;
        2 * hidden + f32s(r * u64::from(cp.n_seq_max)) + f32s(st * u64::from(cp.n_seq_max)) * 2
    } else if cp.flash_attn {
        2 * hidden + q + k + v + f32s(n_head * hv * t)
    } else {
        let kq = f32s(n_kv_max * t * n_head);
        2 * hidden + q + kq + f32s(n_head * hv * t)
    };
    let experts = u64::from(shape.experts.1.max(1));
    let ffn = 2 * hidden + 3 * f32s(n_ff * t * if shape.experts.0 > 0 { experts } else { 1 });
    let head = hidden + f32s(n_embd * n_outputs) + f32s(shape.n_vocab * n_outputs);
    let layer_peak = attn.max(ffn);

    let output_dev = devices.last().copied().unwrap_or(Device::Cpu);
    let mut out: Vec<(Device, u64)> = Vec::new();
    let mut put = |d: Device, n: u64| match out.iter_mut().find(|(x, _)| *x == d) {
        Some((_, v)) => *v = (*v).max(n),
        None => out.push((d, n)),
    };
    if s.gpus() == 0 {
        put(Device::Cpu, inputs + layer_peak.max(head));
        return out;
    }
    for (il, &d) in devices.iter().enumerate() {
        let is_output = il + 1 == devices.len();
        let peak = if is_output { head } else { layer_peak };
        put(d, inputs + peak);
    }
    put(output_dev, inputs + head);
    put(Device::Cpu, hidden + inputs);
    out.sort();
    out
}

impl ContextParams {
    /// Tokens of the reserved graph: `min(n_ctx, n_ubatch)`.
    pub fn n_tokens(&self) -> u32 {
        self.n_ctx.min(self.n_ubatch)
    }
}
