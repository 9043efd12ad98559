//! The three ways to write a [`Builder`], which all produce the same bytes:
//! single pass, metadata first, and reserve then fill.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::write::builder::Builder;
use crate::write::layout::Layout;
use crate::write::source::{kernel_copy, TensorData};

/// Buffer of the file writers: large enough that small tensors and
/// padding go out in few system calls.
const WRITE_BUFFER: usize = 1 << 20;

/// Zero bytes for padding; alignments above this are written in pieces.
const ZEROS: [u8; 4096] = [0; 4096];

pub(crate) fn write_zeros(w: &mut dyn Write, mut n: u64) -> std::io::Result<()> {
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

/// Writes one tensor's data: tensors of a mapped file in the same byte
/// order are copied file to file by the kernel when `w` is a file; all
/// other sources go through [`TensorData::write_to`].
fn write_source(
    data: &mut TensorData<'_>,
    name: &str,
    ty: crate::format::GgmlType,
    shape: &[u64],
    nbytes: u64,
    endian: crate::format::Endian,
    w: &mut dyn DataSink,
) -> Result<()> {
    if let TensorData::File(t) = data {
        if t.file_endian() == endian && nbytes > 0 && t.byte_size()? == nbytes {
            if let Some((src, offset)) = t.mapped_file() {
                if let Some(dst) = w.file()? {
                    if kernel_copy(src, offset, nbytes, dst)? {
                        return Ok(());
                    }
                }
            }
        }
    }
    data.write_to(name, ty, shape, nbytes, endian, w.writer())
}

/// Reports bytes written so far and the total, e.g. to draw a progress bar.
pub type Progress<'p> = &'p mut dyn FnMut(u64, u64);

impl<'a> Builder<'a> {
    /// Writes the whole file to `w` in one pass: header, metadata, tensor
    /// infos, padding, then each tensor's data padded to the alignment.
    /// Returns the layout written.
    pub fn write<W: Write>(&mut self, mut w: W) -> Result<Layout> {
        self.write_with_progress(&mut w, &mut |_, _| {})
    }

    /// [`write`](Self::write), calling `progress(done, total)` after the
    /// header and after each tensor.
    pub fn write_with_progress(
        &mut self,
        w: &mut dyn Write,
        progress: Progress<'_>,
    ) -> Result<Layout> {
        self.write_single(&mut AnySink(w), progress)
    }

    fn write_single(&mut self, w: &mut dyn DataSink, progress: Progress<'_>) -> Result<Layout> {
        let layout = self.layout()?;
        w.writer().write_all(&self.encode_header(&layout)?)?;
        progress(layout.meta_size(), layout.file_len());
        self.write_data(&layout, w, progress)?;
        w.writer().flush()?;
        Ok(layout)
    }

    fn write_data(
        &mut self,
        layout: &Layout,
        w: &mut dyn DataSink,
        progress: Progress<'_>,
    ) -> Result<()> {
        let endian = self.ctx.endian;
        let mut done = layout.meta_size();
        for ((name, t), slot) in self.tensors.iter_mut().zip(&layout.tensors) {
            write_source(&mut t.data, name, t.ty, &t.shape, t.nbytes, endian, w)?;
            write_zeros(w.writer(), slot.padding)?;
            done += slot.nbytes + slot.padding;
            progress(done, layout.file_len());
        }
        Ok(())
    }

    /// Writes the complete header now and returns a handle that takes each
    /// tensor's data, in declared order, later. Useful when tensors are
    /// produced one at a time (a converter or quantizer) and the output
    /// cannot seek.
    ///
    /// ```
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
    /// assert_eq!(gguf_core::GgufFile::from_bytes(&out)?.tensor("b")?.data()?, &[1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn write_metadata_first<W: Write>(&mut self, mut w: W) -> Result<MetadataFirst<'_, 'a, W>> {
        let layout = self.layout()?;
        w.write_all(&self.encode_header(&layout)?)?;
        Ok(MetadataFirst {
            builder: self,
            layout,
            w,
            next: 0,
        })
    }

    /// Skips the header region (`meta_size()` bytes), streams the tensor
    /// data, then seeks back and writes the header. Needs `Write + Seek`;
    /// the bytes equal those of [`write`](Self::write).
    pub fn write_reserved<W: Write + Seek>(&mut self, mut w: W) -> Result<Layout> {
        self.write_reserved_with_progress(&mut w, &mut |_, _| {})
    }

    /// [`write_reserved`](Self::write_reserved), calling
    /// `progress(done, total)` after each tensor and after the header.
    pub fn write_reserved_with_progress<W: Write + Seek>(
        &mut self,
        mut w: W,
        progress: Progress<'_>,
    ) -> Result<Layout> {
        let layout = self.layout()?;
        let start = w.stream_position()?;
        w.seek(SeekFrom::Start(start + layout.meta_size()))?;
        let mut data_progress = |done: u64, total: u64| progress(done - layout.meta_size(), total);
        self.write_data(&layout, &mut AnySink(&mut w), &mut data_progress)?;
        self.finish_reserved(&layout, &mut w, start, progress)?;
        Ok(layout)
    }

    /// The end of reserve mode: the data is written, the header goes to
    /// `start` and the position returns to the end.
    fn finish_reserved<W: Write + Seek>(
        &self,
        layout: &Layout,
        w: &mut W,
        start: u64,
        progress: Progress<'_>,
    ) -> Result<()> {
        let end = w.stream_position()?;
        w.seek(SeekFrom::Start(start))?;
        w.write_all(&self.encode_header(layout)?)?;
        w.seek(SeekFrom::Start(end))?;
        w.flush()?;
        progress(layout.file_len(), layout.file_len());
        Ok(())
    }

    /// Writes to `path` atomically: into a temporary file in the same
    /// directory, synced, then renamed over `path`. A failed write leaves
    /// any existing file at `path` untouched and no temporary file behind.
    pub fn write_to_path(&mut self, path: impl AsRef<Path>) -> Result<Layout> {
        self.write_to_path_with_progress(path, &mut |_, _| {})
    }

    /// [`write_to_path`](Self::write_to_path) with a progress callback.
    pub fn write_to_path_with_progress(
        &mut self,
        path: impl AsRef<Path>,
        progress: Progress<'_>,
    ) -> Result<Layout> {
        self.write_to_path_in(path, WriteMode::Single, progress)
    }

    /// [`write_to_path`](Self::write_to_path) in a given [`WriteMode`]
    /// (the bytes are the same in every mode), with a progress callback.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::write::{Builder, WriteMode};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("out.gguf");
    /// let mut b = Builder::new();
    /// b.add_tensor("t", gguf_core::GgmlType::I8, &[3], vec![1u8, 2, 3])?;
    /// let layout = b.write_to_path_in(&path, WriteMode::Reserve, &mut |_, _| {})?;
    /// assert_eq!(std::fs::metadata(&path)?.len(), layout.file_len());
    /// # Ok(()) }
    /// ```
    pub fn write_to_path_in(
        &mut self,
        path: impl AsRef<Path>,
        mode: WriteMode,
        progress: Progress<'_>,
    ) -> Result<Layout> {
        let path = path.as_ref();
        crate::write::atomic::replace(path, |file| self.write_to_file(file, mode, progress))
    }

    /// Writes to an open file from its current position, in `mode`,
    /// buffered; tensors of files opened with
    /// [`GgufFile::open`](crate::GgufFile::open) in the same byte order are copied file
    /// to file by the kernel (`copy_file_range` on Linux) instead of
    /// through memory. Neither syncs nor truncates the file: see
    /// [`write_to_path`](Self::write_to_path) for an atomic, durable write.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::write::{Builder, WriteMode};
    /// let mut b = Builder::new();
    /// b.add_tensor("t", gguf_core::GgmlType::I8, &[3], vec![1u8, 2, 3])?;
    /// let mut file = tempfile::tempfile()?;
    /// let layout = b.write_to_file(&mut file, WriteMode::Single, &mut |_, _| {})?;
    /// assert_eq!(file.metadata()?.len(), layout.file_len());
    /// # Ok(()) }
    /// ```
    pub fn write_to_file(
        &mut self,
        file: &mut File,
        mode: WriteMode,
        progress: Progress<'_>,
    ) -> Result<Layout> {
        match mode {
            // With every source at hand, metadata-first is the single
            // pass: the complete header, then each tensor in order.
            WriteMode::Single | WriteMode::MetadataFirst => {
                let mut w = BufWriter::with_capacity(WRITE_BUFFER, file);
                let layout = self.write_single(&mut w, progress)?;
                w.into_inner().map_err(|e| Error::Io(e.into_error()))?;
                Ok(layout)
            }
            WriteMode::Reserve => {
                // The buffered writer lives only while the data streams;
                // the header is one write after a seek.
                let layout = self.layout()?;
                let start = file.stream_position()?;
                file.seek(SeekFrom::Start(start + layout.meta_size()))?;
                let mut w = BufWriter::with_capacity(WRITE_BUFFER, &mut *file);
                let mut data_progress =
                    |done: u64, total: u64| progress(done - layout.meta_size(), total);
                self.write_data(&layout, &mut w, &mut data_progress)?;
                w.into_inner().map_err(|e| Error::Io(e.into_error()))?;
                self.finish_reserved(&layout, file, start, progress)?;
                Ok(layout)
            }
        }
    }
}

/// The three ways of writing, for APIs that take the mode as a value; all
/// produce the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteMode {
    /// [`Builder::write`]: header, metadata, infos, then data, in one pass.
    #[default]
    Single,
    /// [`Builder::write_metadata_first`]: the header first, then each
    /// tensor's data in declared order.
    MetadataFirst,
    /// [`Builder::write_reserved`]: data first after a hole for the header,
    /// then the header (needs a seekable output).
    Reserve,
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
            return Err(Error::TensorDataSize {
                tensor: name.into(),
                expected: slot.nbytes,
                actual: data.len() as u64,
            });
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
        let mut done = self.layout.meta_size()
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
            Some(slot) => Err(Error::TensorOrder {
                expected: slot.name.clone(),
                got: name.into(),
            }),
            None => Err(Error::TensorOrder {
                expected: String::new(),
                got: name.into(),
            }),
        }
    }

    /// Checks every tensor was written, flushes, and returns the writer.
    pub fn finish(mut self) -> Result<W> {
        self.write_from_sources()?;
        if let Some(slot) = self.layout.tensors.get(self.next) {
            return Err(Error::MissingTensorData {
                missing: self.layout.tensors.len() - self.next,
                next: slot.name.clone(),
            });
        }
        self.w.flush()?;
        Ok(self.w)
    }
}
