//! Sources of positional reads: [`ReadAt`] for slices, vectors and files,
//! and [`SeekReader`] over any `Read + Seek`.

use std::io::{Read, Seek, SeekFrom};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::read::range::RangeRead;
use crate::read::source::ReadSeek;

/// A source of positional reads: a file, a byte slice, a stream, a remote
/// object.
///
/// ```
/// use gguf_core::read::ReadAt;
/// let bytes: &[u8] = b"0123456789";
/// assert_eq!(bytes.read_at(2, 3)?, b"234");
/// assert_eq!(bytes.read_at(8, 5)?, b"89"); // short only at the end
/// assert_eq!(bytes.size()?, 10);
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub trait ReadAt {
    /// Reads `len` bytes at `offset`; fewer only when the source ends
    /// before `offset + len`.
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>>;

    /// Length of the source in bytes.
    fn size(&self) -> Result<u64>;
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        (**self).read_at(offset, len)
    }

    fn size(&self) -> Result<u64> {
        (**self).size()
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let start = offset.min(self.len() as u64) as usize;
        let end = offset.saturating_add(len).min(self.len() as u64) as usize;
        Ok(self[start..end].to_vec())
    }

    fn size(&self) -> Result<u64> {
        Ok(self.len() as u64)
    }
}

impl ReadAt for Vec<u8> {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.as_slice().read_at(offset, len)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.len() as u64)
    }
}

impl ReadAt for std::fs::File {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let size = self.metadata()?.len();
        let len = len.min(size.saturating_sub(offset));
        let mut buf = vec![0u8; usize::try_from(len).map_err(|_| too_big(len))?];
        let mut done = 0;
        while done < buf.len() {
            #[cfg(unix)]
            let n =
                std::os::unix::fs::FileExt::read_at(self, &mut buf[done..], offset + done as u64);
            #[cfg(windows)]
            let n = std::os::windows::fs::FileExt::seek_read(
                self,
                &mut buf[done..],
                offset + done as u64,
            );
            match n {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        buf.truncate(done);
        Ok(buf)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.metadata()?.len())
    }
}

fn too_big(len: u64) -> Error {
    Error::from(std::io::Error::new(
        std::io::ErrorKind::OutOfMemory,
        format!("a read of {len} bytes does not fit in memory"),
    ))
}

/// Positional reads over any `Read + Seek`, relative to the stream's
/// position when wrapped (so a GGUF embedded in a larger stream works).
///
/// ```
/// use gguf_core::read::{ReadAt, SeekReader};
/// let src = SeekReader::new(std::io::Cursor::new(b"0123456789".to_vec()))?;
/// assert_eq!(src.read_at(4, 2)?, b"45");
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub struct SeekReader<R> {
    inner: Mutex<R>,
    start: u64,
    size: u64,
}

impl<R: Read + Seek> SeekReader<R> {
    /// Wraps `reader`; offsets count from its current position.
    pub fn new(mut reader: R) -> Result<Self> {
        let start = reader.stream_position()?;
        let end = reader.seek(SeekFrom::End(0))?;
        reader.seek(SeekFrom::Start(start))?;
        Ok(SeekReader {
            inner: Mutex::new(reader),
            start,
            size: end.saturating_sub(start),
        })
    }

    /// The wrapped reader.
    pub fn into_inner(self) -> R {
        self.inner.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<R: Read + Seek> ReadAt for SeekReader<R> {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        // A panic elsewhere while holding the lock leaves a reader whose
        // position we reset below anyway.
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let len = len.min(self.size.saturating_sub(offset));
        r.seek(SeekFrom::Start(self.start.saturating_add(offset)))?;
        let mut buf = Vec::new();
        buf.try_reserve_exact(usize::try_from(len).map_err(|_| too_big(len))?)
            .map_err(|_| too_big(len))?;
        (&mut *r).take(len).read_to_end(&mut buf)?;
        Ok(buf)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.size)
    }
}

/// A stream opened through [`Source::Reader`](crate::read::Source::Reader):
/// tensor data read on request, by positioned reads behind the lock.
impl RangeRead for SeekReader<Box<dyn ReadSeek + Send>> {
    fn read_range(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.read_at(offset, len)
    }
}
