//! The incremental reader against the local one: the same files, the
//! same errors, few reads.

use crate::error::{Error, FormatError, Result};
use crate::read::{Gguf, GgufFile};

use super::walk::min_header_end;
use super::{read_header, ReadAt, ReadOptions};

/// A reader that counts reads and bytes.
struct Counting<'a> {
    bytes: &'a [u8],
    reads: std::cell::Cell<u32>,
    max_end: std::cell::Cell<u64>,
}

impl ReadAt for Counting<'_> {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.reads.set(self.reads.get() + 1);
        let out = self.bytes.read_at(offset, len)?;
        self.max_end
            .set(self.max_end.get().max(offset + out.len() as u64));
        Ok(out)
    }
    fn size(&self) -> Result<u64> {
        Ok(self.bytes.len() as u64)
    }
}

fn vocab_file(tokens: usize, data: usize) -> Vec<u8> {
    let mut r = crate::testing::Raw::new(crate::format::WireFormat::default());
    r.header(1, 2)
        .str("tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .count(tokens as u64);
    for i in 0..tokens {
        r.str(&format!("tok{i}"));
    }
    r.str("tokenizer.ggml.scores")
        .u32(9)
        .u32(6)
        .count(tokens as u64);
    for i in 0..tokens {
        r.f32(i as f32);
    }
    r.tensor_info("t", &[data as u64 / 4], 0, 0).pad(32);
    r.buf.resize(r.buf.len() + data, 7);
    r.buf
}

#[test]
fn lower_bound_never_passes_the_header_end() {
    let bytes = vocab_file(20_000, 4096);
    let file = GgufFile::open(&bytes).unwrap();
    let end = file.header_len();
    for cut in (0..end as usize).step_by(997) {
        let lb = min_header_end(&bytes[..cut], bytes.len() as u64);
        assert!(lb <= end, "cut {cut}: bound {lb} > header end {end}");
    }
    assert_eq!(
        min_header_end(&bytes[..end as usize], bytes.len() as u64),
        end
    );
}

#[test]
fn big_header_takes_few_reads_and_at_most_one_chunk_extra() {
    const CHUNK: u64 = 256 * 1024;
    let bytes = vocab_file(40_000, 1 << 20);
    let src = Counting {
        bytes: &bytes,
        reads: 0.into(),
        max_end: 0.into(),
    };
    let file = read_header(&src, &ReadOptions::default().chunk(CHUNK)).unwrap();
    let local = GgufFile::open(&bytes).unwrap();
    assert_eq!(file.header_len(), local.header_len());
    assert_eq!(
        file.get_strings("tokenizer.ggml.tokens")
            .unwrap()
            .nth(39_999),
        Some("tok39999")
    );
    assert!(src.max_end.get() <= file.header_len() + CHUNK);
    // A header of three chunks in three reads, not four.
    assert!(file.header_len() > 3 * CHUNK);
    assert!(src.reads.get() <= 3, "{} reads", src.reads.get());
}

#[test]
fn header_too_large_is_refused_before_reading_it() {
    let bytes = vocab_file(40_000, 16);
    let options = ReadOptions::default().chunk(4096).max_header_len(100_000);
    let err = read_header(&bytes[..], &options).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Format(FormatError::HeaderTooLarge { limit: 100_000, .. })
        ),
        "{err:?}"
    );
}

#[test]
fn truncated_files_fail_as_locally() {
    let bytes = vocab_file(2000, 64);
    for cut in (0..bytes.len()).step_by(331) {
        let local = GgufFile::open(&bytes[..cut]).map(|_| ()).unwrap_err();
        let inc = read_header(&bytes[..cut], &ReadOptions::default().chunk(1000))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(format!("{local:?}"), format!("{inc:?}"), "cut {cut}");
    }
}

/// Bytes past the first read are checked by one parse once the walk
/// says the header is all there: a corrupt entry deep in the header
/// still fails with the error and offset of the local reader.
#[test]
fn a_corrupt_entry_past_the_first_read_fails_as_locally() {
    let mut bytes = vocab_file(3000, 64);
    // The last byte of a token deep in the vocabulary: invalid UTF-8.
    let at = bytes.windows(7).position(|w| w == b"tok2500").unwrap() + 6;
    bytes[at] = 0xFF;
    let local = GgufFile::open(&bytes).map(|_| ()).unwrap_err();
    assert!(
        matches!(local, Error::Format(FormatError::InvalidUtf8 { .. })),
        "{local:?}"
    );
    for chunk in [100, 1000, 4096] {
        let inc = read_header(&bytes[..], &ReadOptions::default().chunk(chunk))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(format!("{local:?}"), format!("{inc:?}"), "chunk {chunk}");
    }
}

/// Stepping a finished parser, or pushing bytes no step asked for, is the
/// caller's mistake: a usage error, not an I/O error.
#[test]
fn misuse_is_a_usage_error() {
    use super::{HeaderParser, ParseStep};
    use crate::error::UsageError;
    let bytes = vocab_file(10, 64);
    let mut parser = HeaderParser::new(&ReadOptions::default());
    let err = parser.push(bytes.clone(), bytes.len() as u64).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Usage(UsageError::NotAsked {
                method: "HeaderParser::push"
            })
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "HeaderParser::push called without a pending read"
    );
    while let ParseStep::Read { offset, len } = parser.step().unwrap() {
        parser
            .push(bytes[..].read_at(offset, len).unwrap(), bytes.len() as u64)
            .unwrap();
    }
    let err = parser.step().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Usage(UsageError::Finished {
                method: "HeaderParser::step"
            })
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "HeaderParser::step called after it finished"
    );
}
