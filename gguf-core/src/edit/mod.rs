//! Editing metadata of an existing file: in place when the new header
//! fits where the old one was, an atomic rewrite otherwise.
//!
//! ```no_run
//! # fn main() -> gguf_core::Result<()> {
//! use gguf_core::edit::{Commit, Editor};
//! let mut ed = Editor::open("model.gguf")?;
//! ed.set("general.name", "my model")?;
//! ed.remove("tokenizer.chat_template")?;
//! match ed.commit()? {
//!     Commit::InPlace { header_bytes } => println!("rewrote {header_bytes} header bytes"),
//!     Commit::Rewritten { file_bytes, .. } => println!("rewrote the whole file, {file_bytes} bytes"),
//! }
//! # Ok(()) }
//! ```

mod editor;
pub(crate) mod journal;
mod slack;

pub use editor::{Commit, Editor};
#[cfg(feature = "testing")]
pub use editor::Step;
pub use journal::{journal_path, recover};
pub use slack::SLACK_KEY;
