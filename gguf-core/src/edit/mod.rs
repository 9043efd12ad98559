//! Editing metadata of an existing file: in place when the new header
//! fits where the old one was, an atomic rewrite otherwise.
//!
//! An in-place commit is crash-safe: the old header region is saved to a
//! journal beside the file (`model.gguf.journal`) and synced before the
//! header is overwritten, and the journal is deleted once the new header is
//! synced. A crash leaves the journal behind, and then:
//!
//! - readers ([`GgufFile::open`](crate::GgufFile::open)) present the file as
//!   it was before the interrupted edit, taking the old header from the
//!   journal, and write nothing, so read-only files open normally;
//! - [`Editor::open`] and [`recover`] write the old header back and delete
//!   the journal (they need write access to the file and its directory).
//!
//! A rewrite goes to a temporary file renamed over the original, so a
//! crash leaves the original untouched (and at most a stray temporary).
//! It reserves [`DEFAULT_RESERVE`] bytes of header slack (unless
//! [`Editor::reserve_on_rewrite`] says otherwise), so the edit after it is
//! in place.
//!
//! [`ModelEditor`] edits a model split into shards the same way, through
//! one [`Editor`] per file that changes.
//!
//! ```no_run
//! # fn main() -> gguf_core::Result<()> {
//! use gguf_core::edit::{Commit, Editor};
//! let mut ed = Editor::open("model.gguf")?;
//! ed.set("general.name", "my model")?;
//! ed.remove("tokenizer.chat_template")?;
//! match ed.commit()? {
//!     Commit::InPlace { header_bytes, .. } => println!("rewrote {header_bytes} header bytes"),
//!     Commit::Rewritten { file_bytes, slack_bytes, .. } => println!(
//!         "rewrote the whole file, {file_bytes} bytes; reserved {slack_bytes} bytes of slack"
//!     ),
//! }
//! # Ok(()) }
//! ```

mod editor;
mod journal;
mod model_editor;

pub use crate::journal::journal_path;
#[cfg(feature = "testing")]
pub use editor::Step;
pub use editor::{Commit, Editor, DEFAULT_RESERVE};
pub use journal::recover;
pub use model_editor::ModelEditor;
