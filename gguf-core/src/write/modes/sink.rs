//! Where bytes go: the zero padding, and the sinks tensor data is written
//! to (any writer, or a buffered file the kernel can copy into).

use std::fs::File;
use std::io::{BufWriter, Seek, Write};

use crate::write::writeback::Writeback;

/// Buffer of the file writers: large enough that small tensors and
/// padding go out in few system calls.
pub(super) const WRITE_BUFFER: usize = 1 << 20;

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
pub(super) struct AnySink<'w>(pub(super) &'w mut dyn Write);

impl DataSink for AnySink<'_> {
    fn writer(&mut self) -> &mut dyn Write {
        self.0
    }
    fn file(&mut self) -> std::io::Result<Option<&File>> {
        Ok(None)
    }
}

/// Bytes written to a durable file between two hand-overs to its
/// writeback thread (and per kernel copy call): small enough that the
/// disk starts early, large enough that the calls cost nothing measurable
/// (16 per GiB).
pub(super) const WRITEBACK_PIECE: u64 = 64 << 20;

/// A file being written, whose bytes are handed to a [`Writeback`] every
/// [`WRITEBACK_PIECE`] bytes, so that plain writes (converted or quantized
/// tensors) reach the disk during the write as kernel copies do, instead
/// of all at the final fsync: the kernel itself starts writing back only
/// once a tenth of memory is dirty.
pub(crate) struct FileOut<'f> {
    file: &'f mut File,
    writeback: Option<&'f Writeback>,
    /// The position up to which ranges were handed over.
    pushed: Option<u64>,
    /// Bytes written since then.
    pending: u64,
}

impl<'f> FileOut<'f> {
    pub(super) fn new(file: &'f mut File, writeback: Option<&'f Writeback>) -> Self {
        FileOut {
            file,
            writeback,
            pushed: None,
            pending: 0,
        }
    }
}

impl Write for FileOut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(wb) = self.writeback else {
            return self.file.write(buf);
        };
        if self.pushed.is_none() {
            self.pushed = Some(self.file.stream_position()?);
        }
        let n = self.file.write(buf)?;
        self.pending += n as u64;
        if self.pending >= WRITEBACK_PIECE {
            // From the last hand-over to here, kernel copies in between
            // included (handing them over twice costs nothing).
            let end = self.file.stream_position()?;
            let start = self.pushed.unwrap_or(end).min(end);
            wb.push(start..end);
            self.pushed = Some(end);
            self.pending = 0;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for FileOut<'_> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        let at = self.file.seek(pos)?;
        self.pushed = None;
        Ok(at)
    }
}

impl DataSink for BufWriter<FileOut<'_>> {
    fn writer(&mut self) -> &mut dyn Write {
        self
    }
    fn file(&mut self) -> std::io::Result<Option<&File>> {
        self.flush()?;
        Ok(Some(&*self.get_ref().file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, SeekFrom};

    #[test]
    fn a_durable_file_hands_its_bytes_over_every_piece() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"head").unwrap();
        let wb = Writeback::start(&file);
        let piece = vec![5u8; WRITEBACK_PIECE as usize / 2];
        {
            let mut out = FileOut::new(&mut file, wb.as_ref());
            out.write_all(&piece).unwrap();
            assert_eq!(out.pending, piece.len() as u64);
            out.write_all(&piece).unwrap();
            if wb.is_some() {
                // One piece written since the position 4: handed over.
                assert_eq!((out.pushed, out.pending), (Some(4 + WRITEBACK_PIECE), 0));
            }
            out.seek(SeekFrom::Start(0)).unwrap();
            assert_eq!(out.pushed, None);
            out.write_all(b"HEAD").unwrap();
            assert_eq!(out.pushed, Some(0));
        }
        drop(wb);
        let mut got = Vec::new();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), 4 + WRITEBACK_PIECE as usize);
        assert_eq!(&got[..4], b"HEAD");
        assert!(got[4..].iter().all(|&b| b == 5));
    }
}
