//! The vision projectors, as data: one table per converter class of
//! `MmprojModel` (`conversion/gemma.py`'s `Gemma3VisionModel`,
//! `conversion/qwenvl.py`'s `Qwen2VLVisionModel`, `conversion/qwen3vl.py`'s
//! `Qwen3VLVisionModel`): which checkpoint tensors are the vision tower's,
//! their GGUF names (gguf-py's `tensor_mapping.py` for the `MMPROJ`
//! architecture, `clip`), the types it forces on some, and the `clip.*`
//! keys each class adds to `MmprojModel.set_gguf_parameters`.

use crate::config::Default;

/// A vision projector the import writes (`--mmproj`).
#[derive(Debug)]
pub(crate) struct Projector {
    /// The `architectures[0]` values of `config.json` that select it.
    pub hf_names: &'static [&'static str],
    /// `config.json`'s top-level `model_type` values it is for, among the
    /// tables of the same names (the converter's class chooses by them);
    /// empty for any.
    pub model_types: &'static [&'static str],
    /// The model family, for reports (`Qwen2.5-VL`).
    pub family: &'static str,
    /// `clip.projector_type` (gguf-py's `VisionProjectorType`).
    pub projector_type: &'static str,
    /// What `transformers` (4.57.6) fills in for a key `vision_config`
    /// leaves out (the converter reads it through `AutoConfig`).
    pub vision_defaults: &'static [(&'static str, Default)],
    /// The converter's own edits of the vision config, in order.
    pub vision_edits: &'static [VisionEdit],
    /// The class's keys after `MmprojModel`'s, in order.
    pub steps: &'static [ClipStep],
    /// The class's `filter_tensors`: names containing one of these are
    /// dropped...
    pub drop_containing: &'static [&'static str],
    /// ...a name starting with the first of a pair starts with the second
    /// instead...
    pub prefix_renames: &'static [(&'static str, &'static str)],
    /// ...only names starting with one of these are the projector's...
    pub keep_prefixes: &'static [&'static str],
    /// ...and every occurrence of the first of a pair is replaced by the
    /// second.
    pub replacements: &'static [(&'static str, &'static str)],
    /// How the kept names (without `.weight`/`.bias`) become GGUF tensors.
    pub rules: &'static [Rule],
    /// The class's `tensor_force_quant`, before `MmprojModel`'s
    /// ([`BASE_FORCED`]): the first that matches wins.
    pub forced: &'static [Forced],
}

/// An edit the converter makes to the vision config before reading it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum VisionEdit {
    /// `vision[to] = vision.get(from)` (`num_attention_heads` from
    /// `num_heads`), only when `when` is a key of it (if given).
    Rename {
        to: &'static str,
        from: &'static str,
        when: Option<&'static str>,
    },
    /// Qwen3-VL: `image_size`, when absent, is
    /// `int(sqrt(num_position_embeddings) * patch_size)`.
    ImageSizeFromPositions,
}

/// Where a value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// `vision_config`.
    Vision,
    /// `config.json`'s top level (the converter's `global_config`).
    Top,
    /// `config.json`'s `text_config`.
    Text,
}

/// One key of a class's `set_gguf_parameters`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ClipStep {
    /// `clip.projector_type`, the table's.
    ProjectorType,
    /// `clip.vision.attention.layer_norm_epsilon` from `key` of `source`,
    /// `default` when unset.
    LayerNormEps {
        source: Source,
        key: &'static str,
        default: f32,
    },
    /// A `bool` key set to true (`clip.use_gelu`, `clip.use_silu`).
    Flag(&'static str),
    /// A `u32` key from the vision config's `config`, when it is set.
    U32IfSet {
        key: &'static str,
        config: &'static str,
    },
    /// Qwen2.5-VL's `clip.vision.n_wa_pattern`: the spacing of the
    /// full-attention blocks (`fullatt_block_indexes`), which must be
    /// regular.
    WindowPattern,
    /// Qwen3-VL's `clip.vision.is_deepstack_layers`: per block, whether
    /// `deepstack_visual_indexes` names it.
    DeepstackLayers,
    /// Gemma 3's `clip.vision.projector.scale_factor`: `(image_size /
    /// patch_size) / sqrt(image_seq_length)` (the preprocessor's, 256 when
    /// unset), written only when above 0 and not 4 (a test model's).
    ScaleFactor,
}

/// A checkpoint tensor name pattern (without `.weight`/`.bias`; `{bid}`
/// stands for a block number below the vision block count, as gguf-py's
/// tensor map holds them) and what it becomes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rule {
    pub hf: &'static str,
    pub out: Out,
}

/// What a [`Rule`] makes of a tensor. GGUF names are without the suffix
/// and may hold `{bid}` too.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Out {
    /// One tensor.
    Plain(&'static str),
    /// One tensor, its `.weight` plus one (Gemma 3's `soft_emb_norm`,
    /// a Gemma RMS norm).
    PlusOne(&'static str),
    /// Equal parts along the first dimension, one per name (Qwen2-VL's
    /// fused `qkv` weight and bias).
    Rows(&'static [&'static str]),
    /// A 3-D convolution's weight `[out, in, 2, h, w]` as its two temporal
    /// slices, `{name}.weight` and `{name}.weight.1`; its bias as
    /// `{name}.bias`.
    TemporalPair(&'static str),
    /// The block number `{bid}` is an index into the vision config's
    /// `list`, whose value (a block number below the block count) is the
    /// GGUF name's `{bid}` (Qwen3-VL's DeepStack mergers).
    Indexed {
        list: &'static str,
        gguf: &'static str,
    },
}

/// Which name a [`Forced`] rule looks in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    /// The checkpoint's (after the class's `filter_tensors`).
    Hf,
    /// The GGUF name.
    Gguf,
}

/// The type a [`Forced`] rule gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Force {
    /// F16.
    F16,
    /// F32.
    F32,
    /// F16 in an F16 file, F32 in any other (`MmprojModel`'s patch
    /// embeddings).
    F16InF16,
}

/// A `tensor_force_quant` rule: a name holding `contains` gets `ty`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Forced {
    pub field: Field,
    pub contains: &'static str,
    pub ty: Force,
}

const fn forced(field: Field, contains: &'static str, ty: Force) -> Forced {
    Forced {
        field,
        contains,
        ty,
    }
}

const fn rule(hf: &'static str, out: Out) -> Rule {
    Rule { hf, out }
}

/// `MmprojModel.tensor_force_quant`, after every class's own.
pub(crate) const BASE_FORCED: &[Forced] = &[
    forced(Field::Gguf, ".patch_embd.weight", Force::F16InF16),
    forced(Field::Gguf, ".patch_merger.weight", Force::F16InF16),
];

/// The GGUF names `prepare_tensors` keeps F32 whatever the output type
/// (those of its list that the `clip` architecture has).
pub(crate) const ALWAYS_F32: &[&str] = &["v.position_embd.weight", "a.position_embd.weight"];

/// The vision config keys of the block count, in the converter's order
/// (`MmprojModel.n_block_keys`).
pub(crate) const BLOCK_KEYS: &[&str] = &[
    "n_layers",
    "num_hidden_layers",
    "n_layer",
    "num_layers",
    "depth",
    "layers",
    "encoder_layers",
    "vt_num_hidden_layers",
];

use Default as D;
use Out::{Plain, Rows};

/// `Gemma3ForConditionalGeneration` (the converter's `Gemma3VisionModel`):
/// a SigLIP encoder (`SiglipVisionConfig`) and Gemma 3's projector (an
/// input projection kept F16, a soft embedding norm + 1).
pub(crate) const GEMMA3: Projector = Projector {
    hf_names: &["Gemma3ForConditionalGeneration"],
    model_types: &[],
    family: "Gemma 3",
    projector_type: "gemma3",
    vision_defaults: &[
        ("hidden_size", D::Int(768)),
        ("intermediate_size", D::Int(3072)),
        ("num_hidden_layers", D::Int(12)),
        ("num_attention_heads", D::Int(12)),
        ("image_size", D::Int(224)),
        ("patch_size", D::Int(16)),
        ("layer_norm_eps", D::Float(1e-6)),
    ],
    vision_edits: &[],
    steps: &[
        ClipStep::ProjectorType,
        ClipStep::LayerNormEps {
            source: Source::Vision,
            key: "layer_norm_eps",
            default: 1e-6,
        },
        ClipStep::Flag("clip.use_gelu"),
        ClipStep::ScaleFactor,
    ],
    drop_containing: &["vision_model.head."],
    prefix_renames: &[],
    keep_prefixes: &[
        "multi_modal_projector.",
        "vision_tower.",
        "multimodal_projector.",
        "vision_model.",
    ],
    replacements: &[("_weight", ".weight")],
    rules: &[
        rule(
            "multi_modal_projector.mm_input_projection",
            Plain("mm.input_projection"),
        ),
        rule(
            "multi_modal_projector.mm_soft_emb_norm",
            Out::PlusOne("mm.soft_emb_norm"),
        ),
        rule(
            "vision_tower.vision_model.embeddings.patch_embedding",
            Plain("v.patch_embd"),
        ),
        rule(
            "vision_tower.vision_model.embeddings.position_embedding",
            Plain("v.position_embd"),
        ),
        rule(
            "vision_tower.vision_model.embeddings.class_embedding",
            Plain("v.class_embd"),
        ),
        rule("vision_tower.vision_model.pre_layrnorm", Plain("v.pre_ln")),
        rule(
            "vision_tower.vision_model.post_layernorm",
            Plain("v.post_ln"),
        ),
        rule(
            "vision_tower.vision_model.encoder.layers.{bid}.self_attn.q_proj",
            Plain("v.blk.{bid}.attn_q"),
        ),
        rule(
            "vision_tower.vision_model.encoder.layers.{bid}.self_attn.k_proj",
            Plain("v.blk.{bid}.attn_k"),
        ),
        rule(
            "vision_tower.vision_model.encoder.layers.{bid}.self_attn.v_proj",
            Plain("v.blk.{bid}.attn_v"),
        ),
        rule(
            "vision_tower.vision_model.encoder.layers.{bid}.self_attn.out_proj",
            Plain("v.blk.{bid}.attn_out"),
        ),
        rule(
            "vision_tower.vision_model.encoder.layers.{bid}.layer_norm1",
            Plain("v.blk.{bid}.ln1"),
        ),
        rule(
            "vision_tower.vision_model.encoder.layers.{bid}.layer_norm2",
            Plain("v.blk.{bid}.ln2"),
        ),
        rule(
            "vision_tower.vision_model.encoder.layers.{bid}.mlp.fc1",
            Plain("v.blk.{bid}.ffn_up"),
        ),
        rule(
            "vision_tower.vision_model.encoder.layers.{bid}.mlp.fc2",
            Plain("v.blk.{bid}.ffn_down"),
        ),
    ],
    forced: &[
        // ggml-org/llama.cpp#13025: the input projection stays F16.
        forced(Field::Hf, "input_projection", Force::F16),
        forced(Field::Hf, ".embeddings.", Force::F32),
    ],
};

/// The vision tower of the Qwen-VL checkpoints, `visual.blocks.{bid}.`.
const QWEN2VL_RULES: &[Rule] = &[
    rule("visual.patch_embed.proj", Out::TemporalPair("v.patch_embd")),
    rule(
        "visual.blocks.{bid}.attn.qkv",
        Rows(&[
            "v.blk.{bid}.attn_q",
            "v.blk.{bid}.attn_k",
            "v.blk.{bid}.attn_v",
        ]),
    ),
    rule(
        "visual.blocks.{bid}.attn.proj",
        Plain("v.blk.{bid}.attn_out"),
    ),
    rule("visual.blocks.{bid}.norm1", Plain("v.blk.{bid}.ln1")),
    rule("visual.blocks.{bid}.norm2", Plain("v.blk.{bid}.ln2")),
    // Qwen2-VL's MLP.
    rule("visual.blocks.{bid}.mlp.fc1", Plain("v.blk.{bid}.ffn_up")),
    rule("visual.blocks.{bid}.mlp.fc2", Plain("v.blk.{bid}.ffn_down")),
    // Qwen2.5-VL's gated MLP.
    rule(
        "visual.blocks.{bid}.mlp.gate_proj",
        Plain("v.blk.{bid}.ffn_gate"),
    ),
    rule(
        "visual.blocks.{bid}.mlp.up_proj",
        Plain("v.blk.{bid}.ffn_up"),
    ),
    rule(
        "visual.blocks.{bid}.mlp.down_proj",
        Plain("v.blk.{bid}.ffn_down"),
    ),
    rule("visual.merger.ln_q", Plain("v.post_ln")),
    // gguf-py maps `mlp.{bid}` for the block numbers only: a vision tower of
    // two blocks has no `mm.2` (the converter cannot map `mlp.2` then).
    rule("visual.merger.mlp.{bid}", Plain("mm.{bid}")),
];

const QWEN2VL_VISION_EDITS: &[VisionEdit] = &[
    VisionEdit::Rename {
        to: "num_attention_heads",
        from: "num_heads",
        when: None,
    },
    VisionEdit::Rename {
        to: "num_hidden_layers",
        from: "depth",
        when: None,
    },
    // Qwen2-VL's `hidden_size` is the merger's output: its width is
    // `embed_dim`, and the converter writes `hidden_size` as the
    // feed-forward length.
    VisionEdit::Rename {
        to: "intermediate_size",
        from: "hidden_size",
        when: Some("embed_dim"),
    },
    VisionEdit::Rename {
        to: "hidden_size",
        from: "embed_dim",
        when: Some("embed_dim"),
    },
];

const QWENVL_NAMES: &[&str] = &[
    "Qwen2VLForConditionalGeneration",
    "Qwen2_5_VLForConditionalGeneration",
];

/// Qwen2-VL's tower (the converter's `Qwen2VLVisionModel`, `model_type`
/// `qwen2_vl`): `Qwen2VLVisionConfig`, its fused QKV cut in three, its
/// 3-D patch embedding as two 2-D ones.
pub(crate) const QWEN2VL: Projector = Projector {
    hf_names: QWENVL_NAMES,
    model_types: &["qwen2_vl"],
    family: "Qwen2-VL",
    projector_type: "qwen2vl_merger",
    vision_defaults: &[
        ("patch_size", D::Int(14)),
        ("hidden_size", D::Int(3584)),
        ("embed_dim", D::Int(1280)),
        ("depth", D::Int(32)),
        ("num_heads", D::Int(16)),
        ("spatial_merge_size", D::Int(2)),
        ("image_size", D::Int(560)),
    ],
    vision_edits: QWEN2VL_VISION_EDITS,
    steps: &[
        ClipStep::ProjectorType,
        ClipStep::LayerNormEps {
            source: Source::Top,
            key: "rms_norm_eps",
            default: 1e-6,
        },
    ],
    drop_containing: &[],
    prefix_renames: &[],
    keep_prefixes: &["visual."],
    replacements: &[],
    rules: QWEN2VL_RULES,
    forced: &[forced(Field::Gguf, ".position_embd.", Force::F32)],
};

/// Qwen2.5-VL's tower (the same converter class, `model_type`
/// `qwen2_5_vl`): `Qwen2_5_VLVisionConfig`, a gated SiLU MLP, window
/// attention with full attention every `n_wa_pattern` blocks.
pub(crate) const QWEN25VL: Projector = Projector {
    model_types: &["qwen2_5_vl"],
    family: "Qwen2.5-VL",
    projector_type: "qwen2.5vl_merger",
    vision_defaults: &[
        ("patch_size", D::Int(14)),
        ("hidden_size", D::Int(3584)),
        ("intermediate_size", D::Int(3420)),
        ("depth", D::Int(32)),
        ("num_heads", D::Int(16)),
        ("spatial_merge_size", D::Int(2)),
        ("fullatt_block_indexes", D::Ints(&[7, 15, 23, 31])),
        ("image_size", D::Int(560)),
    ],
    steps: &[
        ClipStep::ProjectorType,
        ClipStep::Flag("clip.use_silu"),
        ClipStep::WindowPattern,
        ClipStep::LayerNormEps {
            source: Source::Top,
            key: "rms_norm_eps",
            default: 1e-6,
        },
    ],
    ..QWEN2VL
};

/// `Qwen3VLForConditionalGeneration` (the converter's
/// `Qwen3VLVisionModel`): `Qwen3VLVisionConfig`, QKV kept fused, learned
/// position embeddings, the merger's and the DeepStack mergers' MLPs.
pub(crate) const QWEN3VL: Projector = Projector {
    hf_names: &["Qwen3VLForConditionalGeneration"],
    model_types: &[],
    family: "Qwen3-VL",
    projector_type: "qwen3vl_merger",
    vision_defaults: &[
        ("patch_size", D::Int(16)),
        ("hidden_size", D::Int(1152)),
        ("intermediate_size", D::Int(4304)),
        ("depth", D::Int(27)),
        ("num_heads", D::Int(16)),
        ("spatial_merge_size", D::Int(2)),
        ("deepstack_visual_indexes", D::Ints(&[8, 16, 24])),
        ("num_position_embeddings", D::Int(2304)),
    ],
    vision_edits: &[
        VisionEdit::ImageSizeFromPositions,
        VisionEdit::Rename {
            to: "num_attention_heads",
            from: "num_heads",
            when: None,
        },
        VisionEdit::Rename {
            to: "num_hidden_layers",
            from: "depth",
            when: None,
        },
    ],
    steps: &[
        ClipStep::ProjectorType,
        ClipStep::Flag("clip.use_gelu"),
        ClipStep::U32IfSet {
            key: "clip.vision.spatial_merge_size",
            config: "spatial_merge_size",
        },
        ClipStep::LayerNormEps {
            source: Source::Text,
            key: "rms_norm_eps",
            default: 1e-6,
        },
        ClipStep::DeepstackLayers,
    ],
    drop_containing: &[],
    prefix_renames: &[("model.visual.", "visual.")],
    keep_prefixes: &["visual."],
    replacements: &[],
    rules: &[
        rule("visual.patch_embed.proj", Out::TemporalPair("v.patch_embd")),
        rule("visual.pos_embed", Plain("v.position_embd")),
        rule(
            "visual.blocks.{bid}.attn.qkv",
            Plain("v.blk.{bid}.attn_qkv"),
        ),
        rule(
            "visual.blocks.{bid}.attn.proj",
            Plain("v.blk.{bid}.attn_out"),
        ),
        rule("visual.blocks.{bid}.norm1", Plain("v.blk.{bid}.ln1")),
        rule("visual.blocks.{bid}.norm2", Plain("v.blk.{bid}.ln2")),
        rule(
            "visual.blocks.{bid}.mlp.linear_fc1",
            Plain("v.blk.{bid}.ffn_up"),
        ),
        rule(
            "visual.blocks.{bid}.mlp.linear_fc2",
            Plain("v.blk.{bid}.ffn_down"),
        ),
        rule(
            "visual.deepstack_merger_list.{bid}.norm",
            Out::Indexed {
                list: "deepstack_visual_indexes",
                gguf: "v.deepstack.{bid}.norm",
            },
        ),
        rule(
            "visual.deepstack_merger_list.{bid}.linear_fc1",
            Out::Indexed {
                list: "deepstack_visual_indexes",
                gguf: "v.deepstack.{bid}.fc1",
            },
        ),
        rule(
            "visual.deepstack_merger_list.{bid}.linear_fc2",
            Out::Indexed {
                list: "deepstack_visual_indexes",
                gguf: "v.deepstack.{bid}.fc2",
            },
        ),
        // The merger's names are the converter's own, not gguf-py's map.
        rule("visual.merger.linear_fc1", Plain("mm.0")),
        rule("visual.merger.linear_fc2", Plain("mm.2")),
        rule("visual.merger.norm", Plain("v.post_ln")),
    ],
    forced: &[],
};

/// Every projector the import writes.
pub(crate) const PROJECTORS: &[&Projector] = &[&GEMMA3, &QWEN2VL, &QWEN25VL, &QWEN3VL];

/// The `config.json` architecture names that have a projector, for
/// errors and lists.
pub(crate) fn supported() -> String {
    let mut names: Vec<&str> = Vec::new();
    for p in PROJECTORS {
        for n in p.hf_names {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    names.join(", ")
}
