//! The metadata llama-quantize writes besides the input's.
//!
//! It copies the input's entries in order, then sets
//! [`QUANTIZATION_VERSION`] and [`FILE_TYPE`] (moving them last when the
//! input had them: llama.cpp's `gguf_set_val_*` removes a key before
//! appending it), removes the `split.*` keys, then sets the
//! `--override-kv` values in the order given followed by the importance
//! matrix's [`IMATRIX_FILE`], [`IMATRIX_DATASET`] (when the file names
//! one), [`IMATRIX_ENTRIES`] and [`IMATRIX_CHUNKS`] (when above 0). With
//! `--prune-layers`, `{arch}.block_count` is set last.

/// `general.quantization_version`: u32 [`GGML_QNT_VERSION`].
pub const QUANTIZATION_VERSION: &str = "general.quantization_version";
/// ggml's quantization format version (`GGML_QNT_VERSION`).
pub const GGML_QNT_VERSION: u32 = 2;
/// `general.file_type`: u32, the preset's file type id.
pub const FILE_TYPE: &str = "general.file_type";
/// The importance matrix file's path as given, string, cut to 127 bytes.
pub const IMATRIX_FILE: &str = "quantize.imatrix.file";
/// The first dataset the importance matrix names, string, cut to 127 bytes.
pub const IMATRIX_DATASET: &str = "quantize.imatrix.dataset";
/// Entries of the importance matrix used (after include/exclude), u32.
pub const IMATRIX_ENTRIES: &str = "quantize.imatrix.entries_count";
/// Chunks the importance matrix was computed on, u32.
pub const IMATRIX_CHUNKS: &str = "quantize.imatrix.chunks_count";
/// The split keys llama-quantize removes.
pub const SPLIT_KEYS: [&str; 3] = ["split.no", "split.count", "split.tensors.count"];
/// Longest string an override holds: llama.cpp's 128-byte `val_str`,
/// NUL included.
pub const OVERRIDE_STR_MAX: usize = 127;
