//! Reserve then fill: the data after a hole the size of the header
//! region, then a seek back to write the header.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};

use crate::error::{Error, Result};
use crate::write::builder::Builder;
use crate::write::layout::Layout;
use crate::write::writeback::Writeback;

use super::options::Progress;
use super::sink::{AnySink, FileOut, WRITE_BUFFER};

impl Builder<'_> {
    /// Writes the whole file to `out` in reserve mode, from its position.
    pub(super) fn write_reserved<W: Write + Seek>(
        &mut self,
        out: &mut W,
        progress: Progress<'_>,
    ) -> Result<Layout> {
        let layout = self.layout()?;
        let start = out.stream_position()?;
        out.seek(SeekFrom::Start(start + layout.data_offset()))?;
        let mut data_progress =
            |done: u64, total: u64| progress(done - layout.data_offset(), total);
        self.write_data(&layout, &mut AnySink(&mut *out), &mut data_progress, None)?;
        self.finish_reserved(&layout, out, start, progress)?;
        Ok(layout)
    }

    /// Writes the whole file to an open file in reserve mode, buffered,
    /// with kernel-side copies of mapped tensors.
    pub(super) fn write_reserved_file(
        &mut self,
        file: &mut File,
        progress: Progress<'_>,
        writeback: Option<&Writeback>,
    ) -> Result<Layout> {
        // The buffered writer lives only while the data streams;
        // the header is one write after a seek.
        let layout = self.layout()?;
        let start = file.stream_position()?;
        file.seek(SeekFrom::Start(start + layout.data_offset()))?;
        let mut w = BufWriter::with_capacity(WRITE_BUFFER, FileOut::new(&mut *file, writeback));
        let mut data_progress =
            |done: u64, total: u64| progress(done - layout.data_offset(), total);
        self.write_data(&layout, &mut w, &mut data_progress, writeback)?;
        w.into_inner().map_err(|e| Error::from(e.into_error()))?;
        self.finish_reserved(&layout, file, start, progress)?;
        Ok(layout)
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
}
