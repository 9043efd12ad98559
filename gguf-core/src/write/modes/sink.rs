//! Where bytes go: the zero padding, and the sinks tensor data is written
//! to (any writer, or a buffered file the kernel can copy into).

use std::fs::File;
use std::io::{BufWriter, Write};

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

impl DataSink for BufWriter<&mut File> {
    fn writer(&mut self) -> &mut dyn Write {
        self
    }
    fn file(&mut self) -> std::io::Result<Option<&File>> {
        self.flush()?;
        Ok(Some(self.get_ref()))
    }
}
