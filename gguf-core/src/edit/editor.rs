//! [`Editor`]: queued metadata edits, committed in place or by rewrite.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{io_at, EditError, Error, Result};
use crate::format::align_up;
use crate::format::OwnedValue;
use crate::read::Gguf;
use crate::read::GgufFile;
use crate::write::{replace_file, Builder, Layout, MetaValue, SLACK_KEY};

use super::journal;
use crate::write::slack;

/// How a commit was carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// Only the header region was rewritten; tensor data was not touched.
    InPlace {
        /// Bytes written (the padded header region).
        header_bytes: u64,
        /// Length of the slack entry ([`SLACK_KEY`](crate::write::SLACK_KEY))
        /// after the edit, 0 when the file has none: how much the header
        /// may still grow in place.
        slack_bytes: u64,
    },
    /// The file was rewritten to a temporary file and renamed into place.
    Rewritten {
        /// Size of the new padded header region.
        header_bytes: u64,
        /// Size of the new file.
        file_bytes: u64,
        /// Length of the slack entry the rewrite reserved (see
        /// [`Editor::reserve_on_rewrite`]), 0 when none: the next edit
        /// that grows the header by up to this many bytes is in place.
        slack_bytes: u64,
    },
}

impl Commit {
    /// Length of the slack entry after the commit (0 when there is none).
    pub fn slack_bytes(&self) -> u64 {
        match *self {
            Commit::InPlace { slack_bytes, .. } | Commit::Rewritten { slack_bytes, .. } => {
                slack_bytes
            }
        }
    }
}

/// The room [`Editor`] reserves by default when a commit has to rewrite a
/// file (see [`Editor::reserve_on_rewrite`]): 4 KiB, enough for a
/// reworked chat template or a few new keys, which are most later edits.
/// It is nothing next to a model's tensor data and well under a percent of
/// a downloaded model's header (the vocabulary makes that megabytes).
/// llama.cpp reads the entry as an unknown 4096-element `u8` array (its
/// limit is [`MAX_SLACK`](crate::write::MAX_SLACK) elements; its loader's
/// metadata dump shows `arr[u8,4096]`), gguf-py as a `UINT8` array field.
pub const DEFAULT_RESERVE: u64 = 4096;

/// The steps of an in-place commit, for crash testing: a hook may stop
/// the commit right after any of them (feature `testing` only).
#[cfg(feature = "testing")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The old header is saved in the journal and synced.
    JournalWritten,
    /// Half of the new header region is written (not synced).
    HeaderHalfWritten,
    /// The new header region is written and synced.
    HeaderWritten,
}

/// A crash-test hook between the steps of an in-place commit; without the
/// `testing` feature the steps are unnamed and the hook does nothing.
type Hook<'h> = dyn FnMut(Step) -> Result<()> + 'h;

#[cfg(not(feature = "testing"))]
#[derive(Debug, Clone, Copy)]
#[allow(clippy::enum_variant_names)] // as the public one under `testing`
enum Step {
    JournalWritten,
    HeaderHalfWritten,
    HeaderWritten,
}

/// How long a commit waits for the edit lock before reporting
/// [`EditError::Locked`]: long enough for readers, which hold the lock shared
/// while they copy a header (milliseconds), not for another commit.
const LOCK_PATIENCE_MS: u64 = 250;

/// One queued change.
#[derive(Debug, Clone)]
enum Op {
    Set(String, OwnedValue),
    Remove(String),
    RenameKey(String, String),
    RenameTensor(String, String),
}

/// Opens a file for metadata edits.
///
/// Edits are queued and checked as they are made (a missing key or a
/// clashing name fails at once); [`commit`](Self::commit) writes them:
/// in place when the new header ends in the same aligned block as the
/// old one (using the slack entry, see [`SLACK_KEY`](crate::write::SLACK_KEY)),
/// else through an atomic rewrite. Either way a failure leaves the
/// original file intact.
///
/// Files downloaded from a hub have no slack, so their first edit that
/// grows the header rewrites them; that rewrite reserves
/// [`DEFAULT_RESERVE`] bytes of slack (see
/// [`reserve_on_rewrite`](Self::reserve_on_rewrite)) so the next edit is in
/// place. An edit that shrinks the header of such a file out of its
/// aligned block keeps the freed bytes as slack, in place, instead of
/// moving the tensor data.
#[derive(Debug)]
pub struct Editor {
    path: PathBuf,
    /// `path` with symbolic links resolved: the file that is written, and
    /// beside which the journal and the rewrite's temp file go, so that a
    /// rewrite replaces the target rather than the link, and recovery
    /// finds the journal whichever name the file is opened by.
    real: PathBuf,
    file: GgufFile<'static>,
    /// The header region as it was when opened, to detect changes by others.
    snapshot: Vec<u8>,
    /// Device and inode of the file when opened: a file replaced since
    /// (renamed over, even with identical bytes) is another file.
    identity: (u64, u64),
    ops: Vec<Op>,
    /// Slack a rewrite reserves (0: none).
    reserve: u64,
}

impl Editor {
    /// Opens `path`, first finishing what an interrupted earlier edit left
    /// behind (see [`recover`](super::recover)); this writes, unlike
    /// [`GgufFile::open`].
    ///
    /// Symbolic links are resolved: edits go to the file the link points
    /// to. If another editor is committing to the file, this waits until
    /// that commit is done (the header is read under a shared lock).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let real = std::fs::canonicalize(&path).map_err(io_at(&path))?;
        // Read the header under a shared lock: a commit in progress holds
        // the exclusive lock while it rewrites the header, so without it
        // the editor could read (and snapshot) a half-written header.
        let (file, identity) = loop {
            journal::recover(&real)?;
            // A FIFO or device is refused here: its open would block.
            let guard = crate::read::open_regular(&real)?;
            guard.lock_shared().map_err(io_at(&real))?;
            let guard = LockGuard(guard);
            if crate::journal::journal_path(&real).exists() {
                // A commit was interrupted while we waited: recover first
                // (recovery takes the exclusive lock, so drop ours).
                continue;
            }
            let id = identity(&guard.0.metadata().map_err(io_at(&real))?);
            if identity(&std::fs::metadata(&real).map_err(io_at(&real))?) != id {
                // Replaced (rewritten) while we waited: lock the new file.
                continue;
            }
            // No journal (checked under our lock): the reader sees the
            // file's own header. Its errors are the parser's: the caller
            // names the file as it was given, not as resolved here.
            let file = GgufFile::parse_path(&real, &crate::read::Limits::default())?;
            break (file, id);
        };
        let snapshot = file.header_region().to_vec();
        Ok(Editor {
            path,
            real,
            file,
            snapshot,
            identity,
            ops: Vec::new(),
            reserve: DEFAULT_RESERVE,
        })
    }

    /// Path of the file being edited.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file as it is on disk (without the queued edits).
    pub fn file(&self) -> &GgufFile<'static> {
        &self.file
    }

    /// How many bytes of slack a commit that has to rewrite the file
    /// reserves in the header, so that the next edit is in place:
    /// [`DEFAULT_RESERVE`] unless changed; 0 turns reserving off (a
    /// rewrite then keeps the file's own slack entry, if any, as it is).
    ///
    /// The entry ([`SLACK_KEY`](crate::write::SLACK_KEY)) is sized so the
    /// header ends on the alignment, so it may be up to an alignment
    /// larger; a file that already has more slack keeps its amount. With 0,
    /// or when the queued edits set, remove or rename the slack entry
    /// themselves, the editor adds none, and a header that shrinks out of
    /// its block moves the data (the file gets shorter) rather than keeping
    /// the freed room. More than [`MAX_SLACK`](crate::write::MAX_SLACK)
    /// (llama.cpp's limit) is refused.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("model.gguf");
    /// # std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf"), &path)?;
    /// use gguf_core::edit::{Commit, Editor};
    /// let mut ed = Editor::open(&path)?;
    /// ed.set("general.description", "d".repeat(500))?; // does not fit: a rewrite
    /// let Commit::Rewritten { slack_bytes, .. } = ed.commit()? else { panic!() };
    /// assert!(slack_bytes >= gguf_core::edit::DEFAULT_RESERVE);
    ///
    /// let mut ed = Editor::open(&path)?;
    /// ed.set("general.description", "d".repeat(1500))?; // 1000 bytes more
    /// assert!(matches!(ed.commit()?, Commit::InPlace { .. }));
    ///
    /// let mut ed = Editor::open(&path)?;
    /// ed.reserve_on_rewrite(0)?; // no slack beyond what the file has
    /// # Ok(()) }
    /// ```
    pub fn reserve_on_rewrite(&mut self, bytes: u64) -> Result<&mut Self> {
        if bytes > crate::write::MAX_SLACK {
            return Err(slack::too_much_slack());
        }
        self.reserve = bytes;
        Ok(self)
    }

    /// Sets a key to a value (a new key goes last, an existing one keeps its place).
    pub fn set(
        &mut self,
        key: impl Into<String>,
        value: impl Into<OwnedValue>,
    ) -> Result<&mut Self> {
        self.push(Op::Set(key.into(), value.into()))
    }

    /// Removes a key; an error if it does not exist.
    pub fn remove(&mut self, key: impl Into<String>) -> Result<&mut Self> {
        self.push(Op::Remove(key.into()))
    }

    /// Renames a key, keeping its place and value.
    pub fn rename_key(
        &mut self,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Result<&mut Self> {
        self.push(Op::RenameKey(old.into(), new.into()))
    }

    /// Renames a tensor.
    pub fn rename_tensor(
        &mut self,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Result<&mut Self> {
        self.push(Op::RenameTensor(old.into(), new.into()))
    }

    fn push(&mut self, op: Op) -> Result<&mut Self> {
        self.ops.push(op);
        let checked = self.builder().map(drop);
        if let Err(e) = checked {
            self.ops.pop();
            return Err(e);
        }
        Ok(self)
    }

    /// A builder holding the file with every queued edit applied.
    fn builder(&self) -> Result<Builder<'_>> {
        let mut b = Builder::from_file(&self.file)?;
        for op in &self.ops {
            match op {
                Op::Set(k, v) => {
                    b.set(k.clone(), MetaValue::Owned(v.clone()))?;
                }
                Op::Remove(k) => {
                    b.remove(k)?;
                }
                Op::RenameKey(old, new) => {
                    b.rename_key(old, new.clone())?;
                }
                Op::RenameTensor(old, new) => {
                    b.rename_tensor(old, new.clone())?;
                }
            }
        }
        Ok(b)
    }

    /// The file as [`commit`](Self::commit) would leave it, as far as its
    /// header goes: every queued edit applied, read back as a header-only
    /// [`GgufFile`] (see [`Builder::preview`]), so the read-side
    /// [`Gguf`](crate::Gguf) getters inspect the edited file before it is
    /// written. Tensor data is not part of it.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("model.gguf");
    /// # std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf"), &path)?;
    /// use gguf_core::{edit::Editor, Gguf};
    /// let mut ed = Editor::open(&path)?;
    /// ed.set("general.name", "renamed")?.rename_tensor("output.weight", "lm_head")?;
    /// let after = ed.preview()?;
    /// assert_eq!(after.get_str("general.name")?, "renamed");
    /// assert!(after.tensor("lm_head").is_ok() && after.tensor("output.weight").is_err());
    /// assert!(!ed.file().contains_key("general.name")); // not written yet
    /// # Ok(()) }
    /// ```
    pub fn preview(&self) -> Result<GgufFile<'static>> {
        let mut b = self.builder()?;
        // As the commit decides: the slack entry sized to fit in place, or
        // as the rewrite reserves it.
        self.decide(&mut b)?;
        b.preview()
    }

    /// What [`commit`](Self::commit) would do, without writing anything.
    pub fn plan(&self) -> Result<Commit> {
        let mut b = self.builder()?;
        let way = self.decide(&mut b)?;
        let slack_bytes = slack::len(b.value(SLACK_KEY));
        Ok(match way {
            Way::InPlace(layout) => Commit::InPlace {
                header_bytes: layout.data_offset(),
                slack_bytes,
            },
            Way::Rewrite(layout) => Commit::Rewritten {
                header_bytes: layout.data_offset(),
                file_bytes: self.rewritten_len(&layout),
                slack_bytes,
            },
        })
    }

    /// Writes the queued edits. A process interrupted during a rewrite
    /// (SIGINT, SIGTERM, SIGKILL) leaves its temporary file,
    /// `.gguf-XXXXXX.tmp` beside the file, which is untouched: the library
    /// installs no signal handler (see
    /// [`exit_removing_temp_files`](crate::write::exit_removing_temp_files)
    /// and [`stale_temp_files`](crate::write::stale_temp_files)). One
    /// interrupted in place leaves the journal `FILE.journal`, and the
    /// next open restores the old header from it.
    pub fn commit(self) -> Result<Commit> {
        self.commit_hooked(&mut |_| Ok(()))
    }

    /// [`commit`](Self::commit) with a hook run after each step of an
    /// in-place commit; an error from the hook stops the commit right
    /// there, as a crash would (no clean-up runs). Feature `testing` only.
    #[cfg(feature = "testing")]
    pub fn commit_with_hook(self, hook: &mut dyn FnMut(Step) -> Result<()>) -> Result<Commit> {
        self.commit_hooked(hook)
    }

    fn commit_hooked(self, hook: &mut Hook<'_>) -> Result<Commit> {
        let out = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.real)
            .map_err(io_at(&self.real))?;
        // Readers hold the shared lock for the few milliseconds they take
        // to copy the header: wait that out, but not another commit.
        let mut waited = 0;
        loop {
            match out.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if waited < LOCK_PATIENCE_MS => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    waited += 5;
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::Edit(EditError::Locked {
                        path: self.path.clone(),
                    }))
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            }
        }
        let out = LockGuard(out);
        self.commit_locked(&out.0, hook)
    }

    fn commit_locked(&self, out: &File, hook: &mut Hook<'_>) -> Result<Commit> {
        self.check_unchanged(out)?;
        let mut b = self.builder()?;
        match self.decide(&mut b)? {
            Way::InPlace(layout) => {
                // In place, the padding overwrites what the old header
                // left there; it is shorter than the alignment, and the
                // header region of this file is already held in memory.
                let mut header = b.encode_header(&layout)?;
                header.resize(layout.data_offset() as usize, 0);
                self.write_in_place(out, &header, hook)?;
                Ok(Commit::InPlace {
                    header_bytes: header.len() as u64,
                    slack_bytes: slack::len(b.value(SLACK_KEY)),
                })
            }
            Way::Rewrite(layout) => self.rewrite(&mut b, &layout),
        }
    }

    /// True when this commit may add or resize the slack entry on its own:
    /// reserving is on and no queued edit names the entry (one that sets,
    /// removes or renames it manages the slack itself).
    fn manages_slack(&self) -> bool {
        self.reserve > 0
            && !self.ops.iter().any(|op| match op {
                Op::Set(k, _) | Op::Remove(k) => k == SLACK_KEY,
                Op::RenameKey(old, new) => old == SLACK_KEY || new == SLACK_KEY,
                Op::RenameTensor(..) => false,
            })
    }

    /// Decides how `b` (the queued edits applied) is committed, sizing
    /// its slack entry for that: to fill the header region when the edit
    /// fits in place, else to what the rewrite reserves.
    fn decide<'s>(&'s self, b: &mut Builder<'s>) -> Result<Way> {
        if let Some(layout) = self.fit_in_place(b)? {
            return Ok(Way::InPlace(layout));
        }
        if self.manages_slack() {
            // At least what the file had: a rewrite never shrinks it.
            let had = self
                .file
                .value(SLACK_KEY)
                .and_then(|v| v.as_array().map(|a| a.len() as u64))
                .unwrap_or(0);
            b.reserve_metadata_aligned(self.reserve.max(had).min(crate::write::MAX_SLACK))?;
        }
        Ok(Way::Rewrite(b.layout()?))
    }

    /// Refuses to commit if the file on disk is no longer what was opened.
    fn check_unchanged(&self, out: &File) -> Result<()> {
        let changed = || {
            Error::Edit(EditError::ConcurrentModification {
                path: self.path.clone(),
            })
        };
        let on_disk = std::fs::metadata(&self.real).map_err(io_at(&self.real))?;
        let ours = out.metadata().map_err(io_at(&self.real))?;
        if on_disk.len() != self.file.file_len()
            || identity(&on_disk) != identity(&ours)
            || identity(&ours) != self.identity
        {
            return Err(changed());
        }
        let mut now = vec![0u8; self.snapshot.len()];
        out.read_exact_at(&mut now, 0)?;
        if now != self.snapshot {
            return Err(changed());
        }
        Ok(())
    }

    /// Adjusts the slack entry so the new header ends where the data
    /// starts; returns the layout when the edit fits in place.
    fn fit_in_place<'s>(&'s self, b: &mut Builder<'s>) -> Result<Option<Layout>> {
        let data_offset = self.file.data_offset();
        if data_offset > self.file.file_len() {
            return Ok(None);
        }
        let had_slack = b.value(SLACK_KEY).is_some();
        if had_slack {
            // Size the slack to fill the header region exactly.
            b.set(SLACK_KEY, slack::value(0))?;
            let base = b.layout()?.header_len;
            if base <= data_offset {
                b.set(SLACK_KEY, slack::value(data_offset - base))?;
            } else {
                // Even an empty slack is too big: keep the original
                // reservation for the rewrite.
                b.set(
                    SLACK_KEY,
                    MetaValue::Borrowed(self.file.require(SLACK_KEY)?),
                )?;
                return Ok(None);
            }
        }
        let layout = b.layout()?;
        if self.fits(&layout) {
            return Ok(Some(layout));
        }
        if had_slack || !self.manages_slack() {
            return Ok(None);
        }
        // No slack, and the header left its aligned block. When it shrank
        // by at least an empty slack entry, the freed room becomes slack in
        // place: no tensor byte moves, and the next edit has room.
        b.set(SLACK_KEY, slack::value(0))?;
        let base = b.layout()?.header_len;
        if base <= data_offset {
            b.set(SLACK_KEY, slack::value(data_offset - base))?;
            let layout = b.layout()?;
            if self.fits(&layout) {
                return Ok(Some(layout));
            }
        }
        b.remove(SLACK_KEY)?;
        Ok(None)
    }

    /// True when `layout` puts every tensor where it is now and ends the
    /// header region where the data starts.
    fn fits(&self, layout: &Layout) -> bool {
        let same_tensors = layout.tensors.len() == self.file.tensor_count()
            && layout
                .tensors
                .iter()
                .zip(self.file.tensors())
                .all(|(slot, t)| slot.offset == t.offset());
        same_tensors
            && align_up(layout.header_len, layout.alignment) == Some(self.file.data_offset())
            && layout.alignment == self.file.alignment()
    }

    fn write_in_place(&self, out: &File, header: &[u8], hook: &mut Hook<'_>) -> Result<()> {
        journal::write(&self.real, self.file.file_len(), &self.snapshot)?;
        hook(Step::JournalWritten)?;
        let half = header.len() / 2;
        out.write_all_at(&header[..half], 0)
            .map_err(io_at(&self.real))?;
        hook(Step::HeaderHalfWritten)?;
        out.write_all_at(&header[half..], half as u64)
            .and_then(|()| out.sync_all())
            .map_err(io_at(&self.real))?;
        hook(Step::HeaderWritten)?;
        journal::remove(&self.real)?;
        Ok(())
    }

    /// Size of the file a rewrite produces.
    fn rewritten_len(&self, layout: &Layout) -> u64 {
        if self.keeps_data_section(layout) {
            layout.data_offset() + (self.file.file_len() - self.file.data_offset())
        } else {
            layout.file_len()
        }
    }

    /// True when the data section can be copied as one block: every tensor
    /// keeps its offset within it.
    fn keeps_data_section(&self, layout: &Layout) -> bool {
        self.file.data_offset() <= self.file.file_len()
            && layout.tensors.len() == self.file.tensor_count()
            && layout
                .tensors
                .iter()
                .zip(self.file.tensors())
                .all(|(slot, t)| slot.offset == t.offset())
    }

    fn rewrite<'s>(&'s self, b: &mut Builder<'s>, layout: &Layout) -> Result<Commit> {
        let file_bytes = self.rewritten_len(layout);
        let slack_bytes = slack::len(b.value(SLACK_KEY));
        if !self.keeps_data_section(layout) {
            b.write_to_path(&self.real)?;
            return Ok(Commit::Rewritten {
                header_bytes: layout.data_offset(),
                file_bytes,
                slack_bytes,
            });
        }
        replace_file(&self.real, |tmp| {
            b.write_header(tmp, layout)?;
            // The data section moves as one block. std's File-to-File
            // copy uses copy_file_range, so the kernel copies (or
            // reflinks) it without passing it through user space.
            let mut src = File::open(&self.real).map_err(io_at(&self.real))?;
            src.seek(SeekFrom::Start(self.file.data_offset()))
                .map_err(io_at(&self.real))?;
            let want = self.file.file_len() - self.file.data_offset();
            let copied = std::io::copy(&mut (&mut src).take(want), tmp)?;
            if copied != want {
                return Err(Error::from(std::io::Error::from(
                    std::io::ErrorKind::UnexpectedEof,
                )));
            }
            Ok(())
        })?;
        Ok(Commit::Rewritten {
            header_bytes: layout.data_offset(),
            file_bytes,
            slack_bytes,
        })
    }
}

/// How a commit goes, with the layout it writes.
enum Way {
    /// The header region is overwritten.
    InPlace(Layout),
    /// The whole file is written anew.
    Rewrite(Layout),
}

#[cfg(unix)]
fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// An flock released explicitly when dropped. Releasing it only by closing
/// the descriptor is not enough in a multi-threaded program: a child process
/// forked by another thread holds a copy of the descriptor until its exec,
/// and the lock lives as long as any copy does.
struct LockGuard(File);

impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}
