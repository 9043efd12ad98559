//! How a whole file goes out: the [`WriteMode`] and the [`WriteOptions`]
//! that carry it with a progress callback and a temporary directory.

use std::path::PathBuf;

#[cfg(doc)]
use crate::write::builder::Builder;

/// Reports bytes written so far and the total (internal form of
/// [`WriteOptions::progress`]).
pub(crate) type Progress<'p> = &'p mut dyn FnMut(u64, u64);

/// A progress callback as [`WriteOptions`] holds it.
type ProgressFn<'p> = Box<dyn FnMut(u64, u64) + 'p>;

/// How a whole file goes out; both modes produce the same bytes. The third
/// way of writing, metadata first with each tensor's data supplied later,
/// is a handle of its own: [`Builder::write_metadata_first`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteMode {
    /// Header, metadata, tensor infos, padding, then each tensor's data, in
    /// one forward pass.
    #[default]
    Single,
    /// Data first, after a hole the size of the header region; then a seek
    /// back to write the header. Needs a seekable output (a file, a
    /// [`Cursor`](std::io::Cursor)).
    Reserve,
}

/// Options of [`Builder::write_with`] and [`Builder::write_to_path_with`]:
/// the [`WriteMode`], a progress callback and, for paths, where the
/// temporary file goes. Set with builder-style methods; the default is a
/// single pass, no progress, a temporary file beside the target.
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::write::{Builder, WriteMode, WriteOptions};
/// let dir = tempfile::tempdir()?;
/// let mut b = Builder::new();
/// b.add_tensor("t", gguf_core::GgmlType::I8, &[3], vec![1u8, 2, 3])?;
/// let mut last = 0;
/// let opts = WriteOptions::new()
///     .mode(WriteMode::Reserve)
///     .progress(|done, _total| last = done);
/// let layout = b.write_to_path_with(dir.path().join("out.gguf"), opts)?;
/// assert_eq!(last, layout.file_len());
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct WriteOptions<'p> {
    pub(super) mode: WriteMode,
    pub(super) progress: Option<ProgressFn<'p>>,
    pub(super) temp_dir: Option<PathBuf>,
}

impl std::fmt::Debug for WriteOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteOptions")
            .field("mode", &self.mode)
            .field("progress", &self.progress.is_some())
            .field("temp_dir", &self.temp_dir)
            .finish()
    }
}

impl<'p> WriteOptions<'p> {
    /// A single pass, no progress, the temporary file beside the target.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the write mode (the bytes are the same in every mode).
    pub fn mode(mut self, mode: WriteMode) -> Self {
        self.mode = mode;
        self
    }

    /// Calls `progress(done, total)` with the bytes written so far and the
    /// file's total length: after the header and after each tensor, or
    /// each piece (up to 1 GiB) of tensors the kernel copies in one go (in
    /// [`WriteMode::Reserve`], `done` counts tensor data until the header
    /// goes last and brings it to `total`).
    pub fn progress(mut self, progress: impl FnMut(u64, u64) + 'p) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// The mode, the progress callback (a no-op when none was set) and the
    /// temporary directory.
    pub(crate) fn into_parts(self) -> (WriteMode, ProgressFn<'p>, Option<PathBuf>) {
        let progress = self.progress.unwrap_or_else(|| Box::new(|_, _| {}));
        (self.mode, progress, self.temp_dir)
    }

    /// Creates the temporary file of a path write in `dir` instead of
    /// beside the target. `dir` must be on the same file system as the
    /// target, since the final rename cannot cross file systems.
    pub fn temp_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.temp_dir = Some(dir.into());
        self
    }
}
