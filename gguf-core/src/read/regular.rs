//! Local inputs that must be regular files: a GGUF to map, a checkpoint's
//! safetensors, JSON and text files, an importance matrix.
//!
//! A FIFO blocks a plain `open` for reading until a writer appears, and a
//! device such as `/dev/zero` never ends, so a hostile or mistaken path
//! would hang the process or fill its memory. [`open_regular`] checks the
//! path's metadata (symlinks followed: the Hugging Face cache links every
//! file to a blob) before opening, opens without blocking where the OS
//! offers it, and checks the opened handle again, so a file swapped
//! between the two checks is refused too. [`read_capped`] reads such a
//! file whole, refusing one larger than a limit that names it.

use std::fs::{File, FileType, Metadata};
use std::io::Read;
use std::path::Path;

use crate::error::{io_at, Error, Result, SourceError};

/// The most bytes a JSON or text input of the importer may have
/// (`config.json`, `tokenizer.json`, the shard index, `README.md`,
/// `tokenizer.model`, chat templates...): 256 MiB. The largest real
/// `tokenizer.json` files are about 30 MB; a file above the limit is
/// refused, naming it, before it is read.
pub const MAX_TEXT_INPUT: u64 = 256 << 20;

/// What a file type is, for messages: "a FIFO", "a character device"...
pub(crate) fn kind(ft: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

fn refuse_irregular(path: &Path, meta: &Metadata) -> Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    if meta.is_dir() {
        // An I/O error of its kind, as the OS gives for reading a
        // directory: callers (the Python package's `IsADirectoryError`)
        // tell it apart by kind.
        return Err(Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "is a directory, not a regular file",
            ),
        ));
    }
    Err(Error::Source(SourceError::NotRegularFile {
        path: path.to_owned(),
        kind: kind(&meta.file_type()),
    }))
}

/// Opens `path` for reading if it is a regular file (after following
/// symlinks), and refuses anything else with
/// [`SourceError::NotRegularFile`] (a directory: an I/O error of kind
/// [`IsADirectory`](std::io::ErrorKind::IsADirectory)), without blocking
/// on a FIFO. Errors name `path`.
///
/// ```
/// # #[cfg(unix)] {
/// let err = gguf_core::read::open_regular("/dev/null".as_ref()).unwrap_err();
/// assert_eq!(err.to_string(), "/dev/null: is a character device, not a regular file");
/// # }
/// ```
pub fn open_regular(path: &Path) -> Result<File> {
    // Checked before opening: opening a FIFO for reading blocks.
    let meta = std::fs::metadata(path).map_err(io_at(path))?;
    refuse_irregular(path, &meta)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Should the path become a FIFO after the check, the open returns at
    // once (and the check of the handle below refuses it). Regular files
    // ignore the flag.
    #[cfg(target_os = "linux")]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(io_at(path))?;
    // The handle's own metadata: what is read is what was checked.
    let meta = file.metadata().map_err(io_at(path))?;
    refuse_irregular(path, &meta)?;
    Ok(file)
}

/// Reads the regular file at `path` (see [`open_regular`]) whole, refusing
/// one of more than `limit` bytes with [`SourceError::TooLarge`] naming it.
/// A file that grows while it is read stops at the limit, with the same
/// error.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("config.json");
/// std::fs::write(&path, b"{}")?;
/// assert_eq!(gguf_core::read::read_capped(&path, 2)?, b"{}");
/// assert!(gguf_core::read::read_capped(&path, 1).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let file = open_regular(path)?;
    let len = file.metadata().map_err(io_at(path))?.len();
    let too_large = |len| {
        Error::Source(SourceError::TooLarge {
            path: path.to_owned(),
            len,
            limit,
        })
    };
    if len > limit {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_at(path))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text; invalid UTF-8 is an I/O error of kind
/// `InvalidData` naming `path`, as `std::fs::read_to_string` reports it.
pub fn read_text_capped(path: &Path, limit: u64) -> Result<String> {
    let bytes = read_capped(path, limit)?;
    String::from_utf8(bytes).map_err(|_| {
        Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ),
        )
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::testing::mkfifo;

    #[test]
    fn a_fifo_or_a_link_to_one_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("config.json");
        mkfifo(&fifo);
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for path in [&fifo, &link] {
            let err = read_capped(path, MAX_TEXT_INPUT).unwrap_err().to_string();
            assert_eq!(
                err,
                format!("{}: is a FIFO, not a regular file", path.display())
            );
        }
    }

    #[test]
    fn a_device_is_refused_and_a_link_to_a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = read_capped(&zero, MAX_TEXT_INPUT).unwrap_err().to_string();
        assert!(
            err.ends_with("is a character device, not a regular file"),
            "{err}"
        );

        let blob = dir.path().join("blob");
        std::fs::write(&blob, b"{\"a\": 1}").unwrap();
        let link = dir.path().join("config.json");
        std::os::unix::fs::symlink(&blob, &link).unwrap();
        assert_eq!(read_capped(&link, 8).unwrap(), b"{\"a\": 1}");
        let err = read_capped(&link, 7).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}: 8 bytes, more than the 7 bytes accepted for this file",
                link.display()
            )
        );
        let err = read_capped(dir.path(), 7).unwrap_err().to_string();
        assert!(err.ends_with("is a directory, not a regular file"), "{err}");
    }
}
