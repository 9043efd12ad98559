//! Writing GGUF: [`Builder`] collects metadata and tensors, [`Layout`]
//! computes every offset once, and three write modes produce the same bytes.
//!
//! The ways out of a builder: [`Builder::write`] (single pass to any
//! `io::Write`), [`Builder::to_vec`], [`Builder::write_to_path`] (atomic
//! replacement), [`Builder::write_with`] and [`Builder::write_to_path_with`]
//! (with [`WriteOptions`]: a [`WriteMode`], progress, a temporary
//! directory), and [`Builder::write_metadata_first`] (the header now, each
//! tensor's bytes later through a [`MetadataFirst`] handle).

pub(crate) mod atomic;
mod builder;
mod encode;
mod guard;
mod layout;
mod modes;
mod preview;
pub(crate) mod slack;
mod source;
mod split;
pub(crate) mod temp;
mod together;
mod value;
mod writeback;

pub use atomic::replace_file;
pub use builder::Builder;
pub use guard::{check_not_inputs, check_output, check_replacing_model};
pub use layout::{Layout, TensorSlot};
pub use modes::{MetadataFirst, Output, WriteMode, WriteOptions};
pub use slack::{MAX_SLACK, SLACK_KEY};
pub use source::{TensorData, WriteFn};
pub use split::{ShardPlan, SplitOptions};
pub use temp::{exit_removing_temp_files, stale_temp_files, TempFile};
pub use together::write_all_or_none;
pub use value::MetaValue;

pub use atomic::sync_dir;
pub use guard::may_be_shard_of;
#[allow(unused_imports)]
pub(crate) use modes::write_zeros;
