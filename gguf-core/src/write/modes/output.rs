//! The ways out of a builder that take a mode: [`Builder::write_with`] to
//! any seekable [`Output`], and the atomic, durable
//! [`Builder::write_to_path`]; files are written buffered, with
//! kernel-side copies and (when durable) early writeback.

use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::write::builder::Builder;
use crate::write::layout::Layout;
use crate::write::writeback::Writeback;

use super::options::{Progress, WriteMode, WriteOptions};
use super::sink::{AnySink, FileOut, WRITE_BUFFER};

/// A seekable destination of [`Builder::write_with`]. Files are written
/// buffered and take tensors of files opened with
/// [`GgufFile::open`](crate::read::GgufFile::open) by a kernel-side copy
/// (`copy_file_range` on Linux) instead of through memory; other outputs
/// take plain writes (wrap an unbuffered one in a
/// [`BufWriter`](std::io::BufWriter)). Implemented for [`File`], in-memory
/// [`Cursor`](std::io::Cursor)s, `BufWriter`s and mutable references to
/// any of them; for another `Write + Seek` type an empty `impl Output for
/// MyType {}` is enough.
pub trait Output: Write + Seek {
    /// The file underneath, for kernel-side copies; `None` by default.
    fn file(&mut self) -> Option<&mut File> {
        None
    }
}

impl Output for File {
    fn file(&mut self) -> Option<&mut File> {
        Some(self)
    }
}

impl<O: Output + ?Sized> Output for &mut O {
    fn file(&mut self) -> Option<&mut File> {
        (**self).file()
    }
}

impl<W: Write + Seek> Output for BufWriter<W> {}
impl Output for std::io::Cursor<Vec<u8>> {}
impl Output for std::io::Cursor<&mut Vec<u8>> {}
impl Output for std::io::Cursor<&mut [u8]> {}
impl Output for std::io::Cursor<Box<[u8]>> {}

impl Builder<'_> {
    /// Writes the whole file to `out` from its current position, in
    /// `opts`' mode, reporting progress (`opts`' temporary directory does
    /// not apply). Leaves the position at the end of the file written;
    /// neither syncs nor truncates: see [`write_to_path`](Self::write_to_path)
    /// for an atomic, durable write. A [`File`] is written buffered, with
    /// kernel-side copies of tensors from mapped files in the same byte
    /// order (see [`Output`]).
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::write::{Builder, WriteMode, WriteOptions};
    /// let mut b = Builder::new();
    /// b.add_tensor("t", gguf_core::GgmlType::I8, &[3], vec![1u8, 2, 3])?;
    /// let mut file = tempfile::tempfile()?;
    /// let layout = b.write_with(&mut file, WriteOptions::new().mode(WriteMode::Reserve))?;
    /// assert_eq!(file.metadata()?.len(), layout.file_len());
    /// # Ok(()) }
    /// ```
    pub fn write_with<O: Output>(&mut self, mut out: O, opts: WriteOptions<'_>) -> Result<Layout> {
        let WriteOptions { mode, progress, .. } = opts;
        let mut nothing = |_: u64, _: u64| {};
        let mut progress = progress;
        let progress: Progress<'_> = match &mut progress {
            Some(p) => &mut **p,
            None => &mut nothing,
        };
        if let Some(file) = out.file() {
            return self.write_file(file, mode, progress, false);
        }
        match mode {
            WriteMode::Single => self.write_single(&mut AnySink(&mut out), progress, None),
            WriteMode::Reserve => self.write_reserved(&mut out, progress),
        }
    }

    /// Writes to `path` atomically: into a temporary file in the same
    /// directory, synced, then renamed over `path`, so `path` may even be
    /// the file the builder's tensors come from. A failed write leaves any
    /// existing file at `path` untouched and no temporary file behind. A
    /// replaced file keeps its permissions and (where the OS allows) its
    /// owner; a new one gets `0o666` minus the umask. Tensors of files
    /// opened with [`GgufFile::open`](crate::read::GgufFile::open) are copied by
    /// the kernel where it can.
    ///
    /// An interrupted process (SIGINT, SIGTERM, SIGKILL) leaves the
    /// temporary file, `.gguf-XXXXXX.tmp` in the output's directory (or
    /// the [`WriteOptions::temp_dir`]), though never a changed output: the
    /// library installs no signal handler. A program that handles signals
    /// calls [`exit_removing_temp_files`](crate::write::exit_removing_temp_files)
    /// from its handler thread; [`stale_temp_files`](crate::write::stale_temp_files)
    /// finds the files a killed process left. Errors never name the
    /// temporary file.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::write::Builder;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("out.gguf");
    /// let mut b = Builder::new();
    /// b.add_tensor("t", gguf_core::GgmlType::I8, &[3], vec![1u8, 2, 3])?;
    /// let layout = b.write_to_path(&path)?;
    /// assert_eq!(std::fs::metadata(&path)?.len(), layout.file_len());
    /// # Ok(()) }
    /// ```
    pub fn write_to_path(&mut self, path: impl AsRef<Path>) -> Result<Layout> {
        self.write_to_path_with(path, WriteOptions::new())
    }

    /// [`write_to_path`](Self::write_to_path) with [`WriteOptions`]: a
    /// mode, progress, and the directory of the temporary file.
    pub fn write_to_path_with(
        &mut self,
        path: impl AsRef<Path>,
        opts: WriteOptions<'_>,
    ) -> Result<Layout> {
        let WriteOptions {
            mode,
            progress,
            temp_dir,
        } = opts;
        let mut nothing = |_: u64, _: u64| {};
        let mut progress = progress;
        let progress: Progress<'_> = match &mut progress {
            Some(p) => &mut **p,
            None => &mut nothing,
        };
        crate::write::atomic::replace_in(path.as_ref(), temp_dir.as_deref(), |file| {
            self.write_file(file, mode, progress, true)
        })
    }

    /// Writes to an open file from its current position, buffered, with
    /// kernel-side copies of mapped tensors. For a `durable` write (one
    /// that an fsync follows), what the kernel copies starts for the disk
    /// at once (see [`Writeback`]).
    pub(crate) fn write_file(
        &mut self,
        file: &mut File,
        mode: WriteMode,
        progress: Progress<'_>,
        durable: bool,
    ) -> Result<Layout> {
        let writeback = durable.then(|| Writeback::start(file)).flatten();
        match mode {
            WriteMode::Single => {
                let out = FileOut::new(file, writeback.as_ref());
                let mut w = BufWriter::with_capacity(WRITE_BUFFER, out);
                let layout = self.write_single(&mut w, progress, writeback.as_ref())?;
                w.into_inner().map_err(|e| Error::from(e.into_error()))?;
                Ok(layout)
            }
            WriteMode::Reserve => self.write_reserved_file(file, progress, writeback.as_ref()),
        }
    }
}
