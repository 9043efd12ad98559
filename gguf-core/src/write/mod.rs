//! Writing GGUF: [`Builder`] collects metadata and tensors, [`Layout`]
//! computes every offset once, and three write modes produce the same bytes.

mod atomic;
mod builder;
mod encode;
mod layout;
mod modes;
mod source;
mod split;
mod value;

pub use builder::{Builder, MAX_TENSOR_NAME};
pub use layout::{Layout, TensorSlot};
pub use modes::{MetadataFirst, Progress, WriteMode};
pub use source::{TensorData, TensorElement, WriteFn};
pub use split::{ShardPlan, SplitOptions};
pub use value::{MetaValue, OwnedArray, OwnedValue};

#[allow(unused_imports)] // used by the editor
pub(crate) use atomic::{replace as replace_file, sync_dir};
#[allow(unused_imports)]
pub(crate) use modes::write_zeros;
pub(crate) use source::CHUNK;
