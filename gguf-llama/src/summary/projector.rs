//! A multimodal projector (`general.architecture` `clip`, the `mmproj`
//! file of `convert_hf_to_gguf.py --mmproj`): what it is, from its
//! `clip.*` keys ([`ProjectorSummary`]). llama.cpp loads such a file with
//! libmtmd (`tools/mtmd/clip.cpp`) beside a text model, never with its
//! model loader.

use gguf_core::{Gguf, Value};

/// `general.architecture` of a projector file.
pub const PROJECTOR_ARCHITECTURE: &str = "clip";

/// The projector types libmtmd knows (`tools/mtmd/clip-impl.h`'s
/// `PROJECTOR_TYPE_NAMES`, of [`LLAMA_CPP_VERSION`](crate::llama_load::LLAMA_CPP_VERSION)),
/// with the model family each is for where one name says it; any other
/// type makes libmtmd refuse the file ("unknown projector type").
pub const PROJECTOR_TYPES: &[(&str, Option<&str>)] = &[
    ("mlp", Some("LLaVA")),
    ("ldp", Some("MobileVLM")),
    ("ldpv2", Some("MobileVLM V2")),
    ("resampler", Some("MiniCPM-V")),
    ("adapter", Some("GLM-Edge")),
    ("qwen2vl_merger", Some("Qwen2-VL")),
    ("qwen2.5vl_merger", Some("Qwen2.5-VL")),
    ("qwen3vl_merger", Some("Qwen3-VL")),
    ("ling3vl", None),
    ("step3vl", Some("Step3-VL")),
    ("gemma3", Some("Gemma 3")),
    ("gemma3nv", Some("Gemma 3n (vision)")),
    ("gemma3na", Some("Gemma 3n (audio)")),
    ("gemma4v", Some("Gemma 4 (vision)")),
    ("gemma4a", Some("Gemma 4 (audio)")),
    ("gemma4uv", None),
    ("gemma4ua", None),
    ("phi4", Some("Phi-4")),
    ("idefics3", Some("Idefics3 / SmolVLM")),
    ("pixtral", Some("Pixtral")),
    ("ultravox", Some("Ultravox (audio)")),
    ("internvl", Some("InternVL")),
    ("llama4", Some("Llama 4")),
    ("qwen2a", Some("Qwen2-Audio")),
    ("qwen3a", Some("Qwen3 (audio)")),
    ("glma", None),
    ("qwen2.5o", Some("Qwen2.5-Omni")),
    ("voxtral", Some("Voxtral (audio)")),
    ("meralion", None),
    ("musicflamingo", None),
    ("lfm2", Some("LFM2-VL")),
    ("kimivl", Some("Kimi-VL")),
    ("paddleocr", Some("PaddleOCR-VL")),
    ("lightonocr", Some("LightOnOCR")),
    ("cogvlm", Some("CogVLM")),
    ("janus_pro", Some("Janus-Pro")),
    ("dots_ocr", Some("dots.ocr")),
    ("dots3note_v", None),
    ("dots3note_a", None),
    ("deepseekocr", Some("DeepSeek-OCR")),
    ("deepseekocr2", Some("DeepSeek-OCR 2")),
    ("deepseek4v", None),
    ("lfm2a", Some("LFM2-Audio")),
    ("glm4v", Some("GLM-4.1V / GLM-4.5V")),
    ("glm5v", None),
    ("youtuvl", None),
    ("yasa2", None),
    ("kimik25", Some("Kimi K2.5")),
    ("nemotron_v2_vl", Some("Nemotron Nano V2 VL")),
    ("exaone4_5", None),
    ("hunyuanvl", Some("HunyuanVL")),
    ("minicpmv4_6", Some("MiniCPM-V 4.6")),
    ("granite_speech", Some("Granite Speech")),
    ("mimovl", Some("MiMo-VL")),
    ("minimax_m3", None),
    ("granite4_vision", Some("Granite 4 Vision")),
    ("mimo_audio", None),
    ("parakeet", None),
    ("qwen3tts_spkenc", None),
    ("qwen3tts_gen", None),
    ("pockettts_spkenc", None),
    ("pockettts_gen", None),
    ("muse-glimmer", None),
];

/// Whether libmtmd knows the projector type `name`.
///
/// ```
/// use gguf_llama::summary::is_projector_type;
/// assert!(is_projector_type("qwen2.5vl_merger"));
/// assert!(!is_projector_type("qwen2.5vl"));
/// ```
pub fn is_projector_type(name: &str) -> bool {
    PROJECTOR_TYPES.iter().any(|(n, _)| *n == name)
}

/// A projector file at a glance, from its `clip.*` keys.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProjectorSummary {
    /// `clip.projector_type`, else the vision's or the audio's
    /// (`clip.vision.projector_type`, `clip.audio.projector_type`), as
    /// libmtmd reads it.
    pub projector_type: Option<String>,
    /// The model family the projector type is for, when it names one.
    pub family: Option<&'static str>,
    /// Whether libmtmd knows the projector type.
    pub known_type: bool,
    /// `clip.has_vision_encoder`.
    pub vision: bool,
    /// `clip.has_audio_encoder`.
    pub audio: bool,
    /// `clip.vision.image_size`: the side of the square image the encoder
    /// sees, in pixels.
    pub image_size: Option<u32>,
    /// `clip.vision.patch_size`, in pixels.
    pub patch_size: Option<u32>,
    /// `clip.vision.embedding_length` (else the audio encoder's).
    pub embedding_length: Option<u32>,
    /// `clip.vision.block_count` (else the audio encoder's).
    pub block_count: Option<u32>,
    /// `clip.vision.projection_dim` (else the audio encoder's): the text
    /// model's embedding width the projector maps to.
    pub projection_dim: Option<u32>,
}

impl ProjectorSummary {
    /// The summary of a projector file; `None` unless
    /// `general.architecture` is [`PROJECTOR_ARCHITECTURE`].
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{write::Builder, GgufFile};
    /// use gguf_llama::summary::ProjectorSummary;
    /// let mut b = Builder::new();
    /// b.set("general.architecture", "clip")?;
    /// b.set("clip.projector_type", "gemma3")?;
    /// b.set("clip.has_vision_encoder", true)?;
    /// b.set("clip.vision.image_size", 896u32)?;
    /// let bytes = b.to_vec()?;
    /// let p = ProjectorSummary::of(&GgufFile::open(&bytes)?).unwrap();
    /// assert_eq!(p.family, Some("Gemma 3"));
    /// assert_eq!(p.image_size, Some(896));
    /// # Ok(()) }
    /// ```
    pub fn of(model: &(impl Gguf + ?Sized)) -> Option<ProjectorSummary> {
        if model.get_str("general.architecture").ok() != Some(PROJECTOR_ARCHITECTURE) {
            return None;
        }
        let string = |key: &str| model.get_str(key).ok().filter(|s| !s.is_empty());
        let vision = matches!(
            model.value("clip.has_vision_encoder"),
            Some(Value::Bool(true))
        );
        let audio = matches!(
            model.value("clip.has_audio_encoder"),
            Some(Value::Bool(true))
        );
        let projector_type = string("clip.projector_type")
            .or_else(|| string("clip.vision.projector_type"))
            .or_else(|| string("clip.audio.projector_type"))
            .map(str::to_owned);
        let entry = projector_type
            .as_deref()
            .and_then(|t| PROJECTOR_TYPES.iter().find(|(n, _)| *n == t));
        let u32_of = |key: &str| model.get::<u32>(key).ok();
        let either = |field: &str| {
            u32_of(&format!("clip.vision.{field}"))
                .or_else(|| u32_of(&format!("clip.audio.{field}")))
        };
        Some(ProjectorSummary {
            family: entry.and_then(|(_, f)| *f),
            known_type: entry.is_some(),
            projector_type,
            vision,
            audio,
            image_size: u32_of("clip.vision.image_size"),
            patch_size: u32_of("clip.vision.patch_size"),
            embedding_length: either("embedding_length"),
            block_count: either("block_count"),
            projection_dim: either("projection_dim"),
        })
    }

    /// What it is, as a phrase: `a vision projector (general.architecture
    /// "clip", projector type "gemma3", for Gemma 3)`.
    pub fn describe(&self) -> String {
        let kind = match (self.vision, self.audio) {
            (true, true) => "a vision and audio projector",
            (true, false) => "a vision projector",
            (false, true) => "an audio projector",
            (false, false) => "a multimodal projector",
        };
        let ty = match (&self.projector_type, self.family) {
            (None, _) => String::new(),
            (Some(t), Some(family)) => format!(", projector type {t:?}, for {family}"),
            (Some(t), None) if self.known_type => format!(", projector type {t:?}"),
            (Some(t), None) => format!(", projector type {t:?}, which libmtmd does not know"),
        };
        format!("{kind} (general.architecture {PROJECTOR_ARCHITECTURE:?}{ty})")
    }
}
