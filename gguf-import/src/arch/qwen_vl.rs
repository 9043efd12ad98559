//! The text models of vision-language checkpoints, as data: Qwen2-VL and
//! Qwen2.5-VL (the converter's `Qwen2VLModel`, GGUF `qwen2vl`) and
//! Qwen3-VL (`Qwen3VLTextModel`, GGUF `qwen3vl`). Their vision towers are
//! dropped here (the converter's `filter_tensors`); `--mmproj` writes them
//! (`mmproj/`). Gemma 3's (`Gemma3ForConditionalGeneration`) is the
//! `gemma3` table itself.
//!
//! What sets them apart from the text-only tables they extend is their
//! multimodal RoPE: `rope_scaling.mrope_section`, written as
//! `{arch}.rope.dimension_sections` ([`MROPE_ARCHITECTURES`]).

use super::qwen::{QWEN2, QWEN3};
use super::table::{Architecture, Step};
use crate::config::Default as D;

/// The GGUF architectures whose RoPE parameters may hold `mrope_section`
/// (llama.cpp reads `rope.dimension_sections` for them); for any other the
/// key is refused, as llama.cpp would ignore it.
pub(crate) const MROPE_ARCHITECTURES: &[&str] = &["qwen2vl", "qwen3vl"];

/// `Qwen2VLForConditionalGeneration` and
/// `Qwen2_5_VLForConditionalGeneration` (the converter's `Qwen2VLModel`):
/// Qwen2's tensors, the plain `TextModel` keys (no pooling check), with
/// `Qwen2VLTextConfig`'s defaults (`Qwen2_5_VLTextConfig`'s are the same).
pub(crate) const QWEN2VL: Architecture = Architecture {
    hf_names: &[
        "Qwen2VLForConditionalGeneration",
        "Qwen2_5_VLForConditionalGeneration",
    ],
    gguf: "qwen2vl",
    defaults: &[
        ("vocab_size", D::Int(152064)),
        ("hidden_size", D::Int(8192)),
        ("intermediate_size", D::Int(29568)),
        ("num_hidden_layers", D::Int(80)),
        ("num_attention_heads", D::Int(64)),
        ("num_key_value_heads", D::Int(8)),
        ("max_position_embeddings", D::Int(32768)),
        ("rms_norm_eps", D::Float(1e-5)),
        ("rope_theta", D::Float(1_000_000.0)),
    ],
    steps: &[Step::Common, Step::FileType],
    ..QWEN2
};

/// `Qwen3VLForConditionalGeneration` (the converter's `Qwen3VLTextModel`,
/// a `Qwen3Model`): Qwen3's tensors and keys, then the number of
/// DeepStack layers of its vision tower (`n_deepstack_layers`: the length
/// of `vision_config.deepstack_visual_indexes`, `Qwen3VLVisionConfig`'s
/// three when unset).
pub(crate) const QWEN3VL: Architecture = Architecture {
    hf_names: &["Qwen3VLForConditionalGeneration"],
    gguf: "qwen3vl",
    defaults: &[
        ("vocab_size", D::Int(151936)),
        ("hidden_size", D::Int(4096)),
        ("intermediate_size", D::Int(22016)),
        ("num_hidden_layers", D::Int(32)),
        ("num_attention_heads", D::Int(32)),
        ("num_key_value_heads", D::Int(32)),
        ("head_dim", D::Int(128)),
        ("max_position_embeddings", D::Int(128000)),
        ("rms_norm_eps", D::Float(1e-6)),
        ("rope_theta", D::Float(5_000_000.0)),
    ],
    steps: &[
        Step::Common,
        Step::FileType,
        Step::Pooling,
        Step::VisionListLength {
            key: "n_deepstack_layers",
            list: "deepstack_visual_indexes",
            default: 3,
        },
    ],
    ..QWEN3
};
