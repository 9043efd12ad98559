//! Metadata first: the complete header now, each tensor's data later in
//! declared order, through a [`MetadataFirst`] handle.

use std::io::Write;

use crate::error::{BuildError, Error, Result};
use crate::write::builder::Builder;
use crate::write::layout::Layout;
use crate::write::source::TensorData;

use super::options::Progress;
use super::sink::write_zeros;

impl<'a> Builder<'a> {
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
