//! The single pass: header, metadata, tensor infos, padding, then each
//! tensor's data, to any writer; and the data section every mode shares.

use std::io::Write;

use crate::error::Result;
use crate::write::builder::Builder;
use crate::write::layout::Layout;
use crate::write::writeback::Writeback;

use super::kernel::{copy_by_kernel, copy_run, copyable};
use super::options::Progress;
use super::sink::{write_zeros, AnySink, DataSink};

impl Builder<'_> {
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

    pub(super) fn write_single(
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
    pub(super) fn write_data(
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
                            super::tests::KERNEL_COPIES.with(|n| n.set(n.get() + 1));
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
}
