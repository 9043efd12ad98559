//! Kernel-side copies: runs of tensors that lie in a mapped file exactly
//! as the output puts them go file to file (`copy_file_range`) instead of
//! through memory.

use std::fs::File;
#[cfg(not(unix))]
use std::io::Write;
use std::io::{Seek, SeekFrom};

use indexmap::IndexMap;

use crate::error::Result;
use crate::read::Tensor;
use crate::write::builder::PendingTensor;
use crate::write::layout::TensorSlot;
use crate::write::source::{kernel_copy, TensorData};
use crate::write::writeback::Writeback;

use super::sink::WRITEBACK_PIECE;

/// Tensors stored back to back in one mapped file exactly as they are to
/// be written, copied by the kernel in one go: `tensors[first..end]`, the
/// `len` bytes at `offset` of `src` (data and the padding between the
/// tensors, not the last one's).
pub(super) struct CopyRun<'f> {
    /// The first tensor, through whose map the run's first bytes are read.
    first: Tensor<'f>,
    src: &'f File,
    offset: u64,
    pub(super) len: u64,
    pub(super) end: usize,
}

/// A tensor the kernel can copy: data of a mapped file in the output's
/// byte order and of the declared size, with its file and offset.
pub(super) fn copyable<'a>(
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
pub(super) fn copy_run<'f>(
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
pub(super) fn copy_by_kernel(
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
