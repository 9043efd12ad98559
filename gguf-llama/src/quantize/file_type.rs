//! How llama-quantize labels its output: `general.file_type`.

use gguf_core::format::file_type_of;
use gguf_core::GgmlType;

/// What becomes of `general.file_type` when a model is converted.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum FileTypeLabel {
    /// Some weight matrices keep other types: a label would describe the
    /// mixture no better than the input's did, so the input's stays.
    KeepInput,
    /// Every weight matrix is of the target type (or llama-quantize's
    /// fallback for it): the file type of that type.
    Set(u32),
    /// Every weight matrix is of the target type, which has no file type
    /// in llama.cpp: no label is better than a wrong one.
    Remove,
}

/// The `general.file_type` of a model converted to `target` with
/// `weights_left_behind` weight matrices kept at other types (those whose
/// [`Kept`](super::Kept) says [`is_weight_left_behind`](super::Kept::is_weight_left_behind)).
///
/// ```
/// use gguf_llama::quantize::{output_file_type, FileTypeLabel};
/// use gguf_core::GgmlType;
/// assert_eq!(output_file_type(GgmlType::Q8_0, 0), FileTypeLabel::Set(7));
/// assert_eq!(output_file_type(GgmlType::Q8_0, 2), FileTypeLabel::KeepInput);
/// assert_eq!(output_file_type(GgmlType::Q8_K, 0), FileTypeLabel::Remove);
/// ```
pub fn output_file_type(target: GgmlType, weights_left_behind: usize) -> FileTypeLabel {
    if weights_left_behind > 0 {
        return FileTypeLabel::KeepInput;
    }
    match file_type_of(target) {
        Some(ft) => FileTypeLabel::Set(ft),
        None => FileTypeLabel::Remove,
    }
}
