//! The three ways to write a [`Builder`], which all produce the same bytes:
//! single pass, metadata first, and reserve then fill.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use crate::error::{BuildError, Error, Result};
use crate::read::Tensor;
use crate::write::builder::{Builder, PendingTensor};
use crate::write::layout::{Layout, TensorSlot};
use crate::write::source::{kernel_copy, TensorData};
use crate::write::writeback::Writeback;

/// Buffer of the file writers: large enough that small tensors and
/// padding go out in few system calls.
const WRITE_BUFFER: usize = 1 << 20;

/// Zero bytes for padding; alignments above this are written in pieces.
const ZEROS: [u8; 4096] = [0; 4096];

pub(crate) fn write_zeros<W: Write + ?Sized>(w: &mut W, mut n: u64) -> std::io::Result<()> {
    while n > 0 {
        let k = n.min(ZEROS.len() as u64) as usize;
        w.write_all(&ZEROS[..k])?;
        n -= k as u64;
    }
    Ok(())
}

/// Where tensor data goes: any writer, or a buffered file into which
/// tensors of mapped files can be copied by the kernel.
pub(crate) trait DataSink {
    /// The writer for ordinary bytes.
    fn writer(&mut self) -> &mut dyn Write;
    /// Flushes buffered bytes and returns the file underneath, if any.
    fn file(&mut self) -> std::io::Result<Option<&File>>;
}

/// A writer with no file underneath.
struct AnySink<'w>(&'w mut dyn Write);

impl DataSink for AnySink<'_> {
    fn writer(&mut self) -> &mut dyn Write {
        self.0
    }
    fn file(&mut self) -> std::io::Result<Option<&File>> {
        Ok(None)
    }
}

impl DataSink for BufWriter<&mut File> {
    fn writer(&mut self) -> &mut dyn Write {
        self
    }
    fn file(&mut self) -> std::io::Result<Option<&File>> {
        self.flush()?;
        Ok(Some(self.get_ref()))
    }
}

/// Tensors stored back to back in one mapped file exactly as they are to
/// be written, copied by the kernel in one go: `tensors[first..end]`, the
/// `len` bytes at `offset` of `src` (data and the padding between the
/// tensors, not the last one's).
struct CopyRun<'f> {
    /// The first tensor, through whose map the run's first bytes are read.
    first: Tensor<'f>,
    src: &'f File,
    offset: u64,
    len: u64,
    end: usize,
}

/// A tensor the kernel can copy: data of a mapped file in the output's
/// byte order and of the declared size, with its file and offset.
fn copyable<'a>(
    t: &PendingTensor<'a>,
    endian: crate::format::Endian,
) -> Option<(Tensor<'a>, &'a File, u64)> {
    let TensorData::File(src) = &t.data else {
        return None;
    };
    if src.file_endian() != endian || src.byte_size().ok()? != t.nbytes {
        return None;
    }
    let (file, offset) = src.mapped_file()?;
    Some((*src, file, offset))
}

/// The longest run of kernel-copyable tensors starting at `first`: each
/// next tensor lies in the same file right where the output puts it,
/// after the previous one's padding, and the source's padding bytes are
/// zero as the output's are. An unchanged layout is one run: the whole
/// data section goes out in one `copy_file_range` call as `cp` copies it
/// (in 64 MiB pieces for a durable write, see [`copy_by_kernel`]).
fn copy_run<'f>(
    tensors: &IndexMap<String, PendingTensor<'f>>,
    slots: &[TensorSlot],
    first: usize,
    endian: crate::format::Endian,
) -> Option<CopyRun<'f>> {
    let (_, t) = tensors.get_index(first)?;
    let (first_tensor, src, offset) = copyable(t, endian)?;
    let mut prev = first_tensor;
    let mut len = t.nbytes;
    let mut end = first + 1;
    while let (Some((_, t)), Some(slot)) = (tensors.get_index(end), slots.get(end - 1)) {
        let Some((next, file, at)) = copyable(t, endian) else {
            break;
        };
        let expected = offset.checked_add(len)?.checked_add(slot.padding)?;
        let zero_gap = slot.padding == 0
            || prev
                .file_bytes(prev.byte_size().ok()?, slot.padding)
                .is_some_and(|gap| gap.iter().all(|&b| b == 0));
        if !std::ptr::eq(file, src) || at != expected || !zero_gap {
            break;
        }
        len = expected - offset + t.nbytes;
        prev = next;
        end += 1;
    }
    Some(CopyRun {
        first: first_tensor,
        src,
        offset,
        len,
        end,
    })
}

/// Where the kernel's copies should start in the output: it copies
/// through a pipe of 16 pages, 64 KiB at a time, and a copy whose
/// destination starts on a 64 KiB boundary writes whole 64 KiB blocks that
/// the page cache keeps as large folios. From any other start every block
/// straddles two, and copying and syncing 1 GiB on ext4 took a third
/// longer than `cp`, which copies from offset 0 (benches/write.rs).
const KERNEL_COPY_ALIGN: u64 = 64 << 10;

/// Copies `run` to `dst` at its position: the bytes from the next
/// [`KERNEL_COPY_ALIGN`] boundary on by the kernel, then the bytes before
/// it with one `pwrite`; leaves the position at the end of the run and
/// tells `copied` the bytes done. With a `writeback`, the copy goes in
/// pieces of [`WRITEBACK_PIECE`], each handed to it once copied. Returns
/// `false`, having written nothing, when the kernel cannot copy between
/// these files.
fn copy_by_kernel(
    run: &CopyRun<'_>,
    dst: &File,
    copied: &mut dyn FnMut(u64),
    writeback: Option<&Writeback>,
) -> Result<bool> {
    let mut dst = dst;
    let at = dst.stream_position()?;
    let head = ((KERNEL_COPY_ALIGN - at % KERNEL_COPY_ALIGN) % KERNEL_COPY_ALIGN).min(run.len);
    let (head, head_bytes) = match run.first.file_bytes(0, head) {
        Some(bytes) => (head, bytes),
        None => (0, &[][..]),
    };
    let rest = run.len - head;
    let piece = if writeback.is_some() {
        WRITEBACK_PIECE
    } else {
        u64::MAX
    };
    let mut started = at + head;
    let mut after_head = |n| {
        copied(head + n);
        if let Some(wb) = writeback {
            wb.push(started..at + head + n);
            started = at + head + n;
        }
    };
    if rest > 0
        && !kernel_copy(
            run.src,
            run.offset + head,
            rest,
            dst,
            at + head,
            piece,
            &mut after_head,
        )?
    {
        return Ok(false);
    }
    write_all_at(dst, head_bytes, at)?;
    dst.seek(SeekFrom::Start(at + run.len))?;
    copied(run.len);
    Ok(true)
}

/// Bytes per kernel copy call when each copied piece starts its writeback:
/// small enough that the disk starts early, large enough that the calls
/// cost nothing measurable (16 per GiB).
const WRITEBACK_PIECE: u64 = 64 << 20;

#[cfg(unix)]
fn write_all_at(file: &File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, at)
}

#[cfg(not(unix))]
fn write_all_at(mut file: &File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    let end = file.stream_position()?;
    file.seek(SeekFrom::Start(at))?;
    file.write_all(bytes)?;
    file.seek(SeekFrom::Start(end)).map(drop)
}

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
    mode: WriteMode,
    progress: Option<ProgressFn<'p>>,
    temp_dir: Option<PathBuf>,
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

impl<'a> Builder<'a> {
    /// Writes the whole file to `w` in one pass: header, metadata, tensor
    /// infos, padding, then each tensor's data padded to the alignment.
    /// Returns the layout written. `w` is not buffered here: wrap an
    /// unbuffered writer in a [`BufWriter`](std::io::BufWriter). For a
    /// mode, progress, or kernel-side copies into a file see
    /// [`write_with`](Self::write_with); for a path,
    /// [`write_to_path`](Self::write_to_path).
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// let mut b = gguf_core::write::Builder::new();
    /// b.set("general.architecture", "llama")?;
    /// let mut out = Vec::new();
    /// let layout = b.write(&mut out)?;
    /// assert_eq!(out.len() as u64, layout.file_len());
    /// # Ok(()) }
    /// ```
    pub fn write<W: Write>(&mut self, mut w: W) -> Result<Layout> {
        self.write_single(&mut AnySink(&mut w), &mut |_, _| {}, None)
    }

    /// The whole file in memory (a single-pass [`write`](Self::write)).
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// let mut b = gguf_core::write::Builder::new();
    /// b.add_tensor_typed("t", &[2], &[1.0f32, 2.0][..])?;
    /// let bytes = b.to_vec()?;
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// assert_eq!(file.tensor("t")?.as_slice::<f32>()?, [1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    pub fn to_vec(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write(&mut out)?;
        Ok(out)
    }

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
            WriteMode::Reserve => {
                let layout = self.layout()?;
                let start = out.stream_position()?;
                out.seek(SeekFrom::Start(start + layout.data_offset()))?;
                let mut data_progress =
                    |done: u64, total: u64| progress(done - layout.data_offset(), total);
                self.write_data(&layout, &mut AnySink(&mut out), &mut data_progress, None)?;
                self.finish_reserved(&layout, &mut out, start, progress)?;
                Ok(layout)
            }
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

    fn write_single(
        &mut self,
        w: &mut dyn DataSink,
        progress: Progress<'_>,
        writeback: Option<&Writeback>,
    ) -> Result<Layout> {
        let layout = self.layout()?;
        self.write_header(w.writer(), &layout)?;
        progress(layout.data_offset(), layout.file_len());
        self.write_data(&layout, w, progress, writeback)?;
        w.writer().flush()?;
        Ok(layout)
    }

    /// Writes every tensor's data, padded. Tensors of mapped files in the
    /// output's byte order go file to file by the kernel when `w` is a
    /// file, as many at a time as lie back to back (see [`copy_run`]);
    /// all other sources go through [`TensorData::write_to`].
    fn write_data(
        &mut self,
        layout: &Layout,
        w: &mut dyn DataSink,
        progress: Progress<'_>,
        writeback: Option<&Writeback>,
    ) -> Result<()> {
        let endian = self.ctx.endian;
        let total = layout.file_len();
        let mut done = layout.data_offset();
        // Cleared when the kernel cannot copy between these files, so
        // later tensors go straight to plain writes.
        let mut kernel = true;
        let mut i = 0;
        while i < layout.tensors.len() {
            let candidate = kernel
                && self
                    .tensors
                    .get_index(i)
                    .is_some_and(|(_, t)| t.nbytes > 0 && copyable(t, endian).is_some());
            if candidate {
                // Flushes what is buffered, so the copy lands after it.
                match w.file()? {
                    None => kernel = false,
                    Some(dst) => {
                        if let Some(run) = copy_run(&self.tensors, &layout.tensors, i, endian) {
                            #[cfg(test)]
                            tests::KERNEL_COPIES.with(|n| n.set(n.get() + 1));
                            let mut copied = |n| progress(done + n, total);
                            if copy_by_kernel(&run, dst, &mut copied, writeback)? {
                                let padding = layout.tensors[run.end - 1].padding;
                                write_zeros(w.writer(), padding)?;
                                done += run.len + padding;
                                progress(done, total);
                                i = run.end;
                                continue;
                            }
                            kernel = false;
                        }
                    }
                }
            }
            let (Some((name, t)), Some(slot)) =
                (self.tensors.get_index_mut(i), layout.tensors.get(i))
            else {
                break;
            };
            t.data
                .write_to(name, t.ty, &t.shape, t.nbytes, endian, w.writer())?;
            write_zeros(w.writer(), slot.padding)?;
            done += slot.nbytes + slot.padding;
            progress(done, total);
            i += 1;
        }
        Ok(())
    }

    /// Writes the complete header now and returns a handle that takes each
    /// tensor's data, in declared order, later: the metadata-first mode.
    /// Useful when tensors are produced one at a time (a converter or
    /// quantizer) and the output cannot seek. Tensors declared with data
    /// are written from it when their turn comes
    /// ([`MetadataFirst::write_from_sources`]); those declared with
    /// [`add_tensor_info`](Self::add_tensor_info) wait for
    /// [`MetadataFirst::write_tensor`].
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{write::Builder, GgmlType};
    /// let mut b = Builder::new();
    /// b.add_tensor_info("a", GgmlType::F32, &[2])?;
    /// b.add_tensor_info("b", GgmlType::I8, &[3])?;
    /// let mut out = Vec::new();
    /// let mut w = b.write_metadata_first(&mut out)?;
    /// w.write_tensor("a", &[0u8; 8])?;
    /// assert!(w.write_tensor("a", &[0u8; 8]).is_err()); // "b" is due
    /// w.write_tensor("b", &[1, 2, 3])?;
    /// w.finish()?;
    /// assert_eq!(gguf_core::GgufFile::open(&out)?.tensor("b")?.data()?, &[1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn write_metadata_first<W: Write>(&mut self, mut w: W) -> Result<MetadataFirst<'_, 'a, W>> {
        let layout = self.layout()?;
        self.write_header(&mut w, &layout)?;
        Ok(MetadataFirst {
            builder: self,
            layout,
            w,
            next: 0,
        })
    }

    /// The end of reserve mode: the data is written, the header goes to
    /// `start` and the position returns to the end.
    fn finish_reserved<W: Write + Seek + ?Sized>(
        &self,
        layout: &Layout,
        w: &mut W,
        start: u64,
        progress: Progress<'_>,
    ) -> Result<()> {
        let end = w.stream_position()?;
        w.seek(SeekFrom::Start(start))?;
        self.write_header(w, layout)?;
        w.seek(SeekFrom::Start(end))?;
        w.flush()?;
        progress(layout.file_len(), layout.file_len());
        Ok(())
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
                let mut w = BufWriter::with_capacity(WRITE_BUFFER, file);
                let layout = self.write_single(&mut w, progress, writeback.as_ref())?;
                w.into_inner().map_err(|e| Error::from(e.into_error()))?;
                Ok(layout)
            }
            WriteMode::Reserve => {
                // The buffered writer lives only while the data streams;
                // the header is one write after a seek.
                let layout = self.layout()?;
                let start = file.stream_position()?;
                file.seek(SeekFrom::Start(start + layout.data_offset()))?;
                let mut w = BufWriter::with_capacity(WRITE_BUFFER, &mut *file);
                let mut data_progress =
                    |done: u64, total: u64| progress(done - layout.data_offset(), total);
                self.write_data(&layout, &mut w, &mut data_progress, writeback.as_ref())?;
                w.into_inner().map_err(|e| Error::from(e.into_error()))?;
                self.finish_reserved(&layout, file, start, progress)?;
                Ok(layout)
            }
        }
    }
}

/// Header written, tensor data due in declared order
/// (see [`Builder::write_metadata_first`]).
#[derive(Debug)]
pub struct MetadataFirst<'b, 'a, W: Write> {
    builder: &'b mut Builder<'a>,
    layout: Layout,
    w: W,
    next: usize,
}

impl<W: Write> MetadataFirst<'_, '_, W> {
    /// The layout being written.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Name of the tensor whose data is due next.
    pub fn next_tensor(&self) -> Option<&str> {
        self.layout.tensors.get(self.next).map(|s| s.name.as_str())
    }

    /// Writes the data of tensor `name`, which must be the next one, and
    /// exactly its size; pads it to the alignment.
    pub fn write_tensor(&mut self, name: &str, data: &[u8]) -> Result<()> {
        let slot = self.due(name)?;
        if data.len() as u64 != slot.nbytes {
            return Err(Error::Build(BuildError::TensorDataSize {
                tensor: name.into(),
                expected: slot.nbytes,
                actual: data.len() as u64,
            }));
        }
        let padding = slot.padding;
        self.w.write_all(data)?;
        write_zeros(&mut self.w, padding)?;
        self.next += 1;
        Ok(())
    }

    /// Writes the next tensors from the sources given to the builder, up
    /// to the first one declared without data.
    pub fn write_from_sources(&mut self) -> Result<()> {
        self.write_sources(&mut |_, _| {})
    }

    fn write_sources(&mut self, progress: Progress<'_>) -> Result<()> {
        let endian = self.builder.ctx.endian;
        let mut done = self.layout.data_offset()
            + self.layout.tensors[..self.next]
                .iter()
                .map(|s| s.nbytes + s.padding)
                .sum::<u64>();
        while let Some(slot) = self.layout.tensors.get(self.next) {
            let Some(t) = self.builder.tensors.get_mut(&slot.name) else {
                break;
            };
            if matches!(t.data, TensorData::Deferred) {
                break;
            }
            t.data
                .write_to(&slot.name, t.ty, &t.shape, t.nbytes, endian, &mut self.w)?;
            write_zeros(&mut self.w, slot.padding)?;
            self.next += 1;
            done += slot.nbytes + slot.padding;
            progress(done, self.layout.file_len());
        }
        Ok(())
    }

    fn due(&self, name: &str) -> Result<&crate::write::TensorSlot> {
        match self.layout.tensors.get(self.next) {
            Some(slot) if slot.name == name => Ok(slot),
            Some(slot) => Err(Error::Build(BuildError::TensorOrder {
                tensor: name.into(),
                expected: slot.name.clone(),
            })),
            None => Err(Error::Build(BuildError::TensorOrder {
                tensor: name.into(),
                expected: String::new(),
            })),
        }
    }

    /// Checks every tensor was written, flushes, and returns the writer.
    pub fn finish(mut self) -> Result<W> {
        self.write_from_sources()?;
        if let Some(slot) = self.layout.tensors.get(self.next) {
            return Err(Error::Build(BuildError::MissingTensorData {
                tensor: slot.name.clone(),
                missing: self.layout.tensors.len() - self.next,
            }));
        }
        self.w.flush()?;
        Ok(self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::Gguf;
    use std::cell::Cell;
    use std::io::Cursor;

    thread_local! {
        /// Kernel-side copies (runs of tensors) started on this thread.
        pub(super) static KERNEL_COPIES: Cell<u64> = const { Cell::new(0) };
    }

    fn copies_while(f: impl FnOnce()) -> u64 {
        let before = KERNEL_COPIES.with(Cell::get);
        f();
        KERNEL_COPIES.with(Cell::get) - before
    }

    #[test]
    fn files_take_one_kernel_copy_other_outputs_none() {
        let bytes = crate::testing::tiny_file();
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.gguf");
        std::fs::write(&src, &bytes).unwrap();
        let file = crate::read::GgufFile::open(&src).unwrap();
        assert_eq!(file.tensor_count(), 2);
        for mode in [WriteMode::Single, WriteMode::Reserve] {
            let opts = || WriteOptions::new().mode(mode);
            let mut out = tempfile::tempfile().unwrap();
            let copies = copies_while(|| {
                Builder::from_file(&file)
                    .unwrap()
                    .write_with(&mut out, opts())
                    .unwrap();
            });
            // The data section is contiguous in both files: one copy.
            assert_eq!(copies, 1, "{mode:?}: &mut File");
            let copies = copies_while(|| {
                let path = dir.path().join("out.gguf");
                let mut b = Builder::from_file(&file).unwrap();
                b.write_to_path_with(&path, opts()).unwrap();
                assert_eq!(std::fs::read(&path).unwrap(), bytes);
            });
            assert_eq!(copies, 1, "{mode:?}: path");
            let copies = copies_while(|| {
                let mut cur = Cursor::new(Vec::new());
                let mut b = Builder::from_file(&file).unwrap();
                b.write_with(&mut cur, opts()).unwrap();
                assert_eq!(cur.into_inner(), bytes);
            });
            assert_eq!(copies, 0, "{mode:?}: cursor");
        }
    }

    /// Five I8 tensors of 3, 40, 0, 7 and 64 bytes (padding 29, 24, 0,
    /// 25, 0 at alignment 32), written canonically.
    fn padded_file() -> Vec<u8> {
        let mut b = Builder::new();
        b.set("general.architecture", "llama").unwrap();
        for (i, n) in [3u8, 40, 0, 7, 64].into_iter().enumerate() {
            let data: Vec<u8> = (0..n)
                .map(|k| k.wrapping_mul(7).wrapping_add(i as u8 + 1))
                .collect();
            b.add_tensor(
                format!("t{i}"),
                crate::format::GgmlType::I8,
                &[u64::from(n)],
                data,
            )
            .unwrap();
        }
        b.to_vec().unwrap()
    }

    /// Writes `b` to a file with kernel copies and to memory without;
    /// returns the file's bytes, the memory's and the copies made.
    fn both_ways(mut b: Builder<'_>, mode: WriteMode) -> (Vec<u8>, Vec<u8>, u64) {
        let mut cur = Cursor::new(Vec::new());
        b.write_with(&mut cur, WriteOptions::new().mode(mode))
            .unwrap();
        let mut out = tempfile::tempfile().unwrap();
        let copies = copies_while(|| {
            b.write_with(&mut out, WriteOptions::new().mode(mode))
                .unwrap();
        });
        out.seek(SeekFrom::Start(0)).unwrap();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut bytes).unwrap();
        (bytes, cur.into_inner(), copies)
    }

    #[test]
    fn a_large_run_lands_at_the_file_position_whatever_its_alignment() {
        let mut b = Builder::new();
        b.set("general.architecture", "llama").unwrap();
        for (i, n) in [100_003u64, 70_000, 5, 1 << 17].into_iter().enumerate() {
            let data: Vec<u8> = (0..n).map(|k| (k * 31 + i as u64) as u8).collect();
            b.add_tensor(format!("t{i}"), crate::format::GgmlType::I8, &[n], data)
                .unwrap();
        }
        let bytes = b.to_vec().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.gguf");
        std::fs::write(&src, &bytes).unwrap();
        let file = crate::read::GgufFile::open(&src).unwrap();
        // The data section starts before, on and after a 64 KiB boundary.
        for prefix in [0usize, 6, 65_536 - 40, 65_536, 200_000] {
            for mode in [WriteMode::Single, WriteMode::Reserve] {
                let mut out = tempfile::tempfile().unwrap();
                out.write_all(&vec![0xEE; prefix]).unwrap();
                let copies = copies_while(|| {
                    Builder::from_file(&file)
                        .unwrap()
                        .write_with(&mut out, WriteOptions::new().mode(mode))
                        .unwrap();
                });
                assert_eq!(copies, 1, "{mode:?} after {prefix}");
                assert_eq!(
                    out.stream_position().unwrap(),
                    (prefix + bytes.len()) as u64
                );
                out.seek(SeekFrom::Start(0)).unwrap();
                let mut got = Vec::new();
                std::io::Read::read_to_end(&mut out, &mut got).unwrap();
                assert!(got[..prefix].iter().all(|&b| b == 0xEE));
                assert!(got[prefix..] == bytes[..], "{mode:?} after {prefix}");
            }
        }
        // Through a path: durable, so the copy also starts its writeback.
        for mode in [WriteMode::Single, WriteMode::Reserve] {
            let path = dir.path().join("out.gguf");
            let copies = copies_while(|| {
                Builder::from_file(&file)
                    .unwrap()
                    .write_to_path_with(&path, WriteOptions::new().mode(mode))
                    .unwrap();
            });
            assert_eq!(copies, 1, "{mode:?}: path");
            assert!(std::fs::read(&path).unwrap() == bytes, "{mode:?}: path");
        }
    }

    #[test]
    fn padded_tensors_go_in_one_copy_when_the_layout_is_unchanged() {
        let bytes = padded_file();
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.gguf");
        std::fs::write(&src, &bytes).unwrap();
        let file = crate::read::GgufFile::open(&src).unwrap();
        for mode in [WriteMode::Single, WriteMode::Reserve] {
            let (out, mem, copies) = both_ways(Builder::from_file(&file).unwrap(), mode);
            assert_eq!(out, bytes, "{mode:?}");
            assert_eq!(mem, bytes, "{mode:?}");
            assert_eq!(copies, 1, "{mode:?}");
        }
    }

    #[test]
    fn a_new_alignment_copies_the_tensors_that_stay_together() {
        let bytes = padded_file();
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.gguf");
        std::fs::write(&src, &bytes).unwrap();
        let file = crate::read::GgufFile::open(&src).unwrap();
        let mut b = Builder::from_file(&file).unwrap();
        b.alignment(64).unwrap();
        let (out, mem, copies) = both_ways(b, WriteMode::Single);
        assert_eq!(out, mem);
        assert_ne!(out, bytes);
        // t1 moves away from t0 and t4 from t3 (padding 61 and 57 where
        // the source has 29 and 25); t1's padding is still 24 and t2 is
        // empty, so t1..t3 stay together: [t0], [t1, t2, t3], [t4].
        assert_eq!(copies, 3);
    }

    #[test]
    fn nonzero_source_padding_splits_the_copy_and_is_written_as_zeros() {
        let mut bytes = padded_file();
        let file = crate::read::GgufFile::open(&bytes).unwrap();
        // The padding after t1 (24 bytes) holds garbage in the source.
        let t1 = file.tensor("t1").unwrap();
        let gap = (t1.file_offset() + 40) as usize;
        drop(file);
        let canonical = bytes.clone();
        bytes[gap..gap + 24].fill(0xAB);
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.gguf");
        std::fs::write(&src, &bytes).unwrap();
        let file = crate::read::GgufFile::open(&src).unwrap();
        let (out, mem, copies) = both_ways(Builder::from_file(&file).unwrap(), WriteMode::Single);
        assert_eq!(out, canonical);
        assert_eq!(mem, canonical);
        // t0..t1, then t2..t4.
        assert_eq!(copies, 2);
    }

    #[test]
    fn a_tensor_from_memory_splits_the_copy() {
        let bytes = padded_file();
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.gguf");
        std::fs::write(&src, &bytes).unwrap();
        let file = crate::read::GgufFile::open(&src).unwrap();
        let mut b = Builder::new();
        b.set("general.architecture", "llama").unwrap();
        for t in file.tensors() {
            let data = if t.name() == "t1" {
                TensorData::from(t.data().unwrap().to_vec())
            } else {
                TensorData::from(t)
            };
            b.add_tensor(t.name(), t.ggml_type(), t.shape(), data)
                .unwrap();
        }
        let (out, mem, copies) = both_ways(b, WriteMode::Single);
        assert_eq!(out, bytes);
        assert_eq!(mem, bytes);
        // t0, then t3..t4 (t2 is empty; t1 is written from memory).
        assert_eq!(copies, 2);
    }
}
