//! The writer: builder validation, the three write modes, atomic writes.

use gguf::error::{BuildError, FormatError, LookupError};
use std::io::Cursor;

use gguf::{
    format::OwnedValue,
    write::{Builder, WriteMode, WriteOptions},
};
use gguf::{Endian, Error, GgmlType, Gguf, GgufFile};

use super::util::{ctx, rich, Content, Mode, Src, TensorSpec};

// ---- builder validation ----

#[test]
fn duplicate_tensor_name_is_refused() {
    let mut b = Builder::new();
    b.add_tensor("a", GgmlType::I8, &[2], vec![1u8, 2]).unwrap();
    let err = b
        .add_tensor("a", GgmlType::I8, &[1], vec![3u8])
        .unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::TensorExists { tensor }) if tensor == "a"),
        "{err:?}"
    );
    // The rename path checks too.
    b.add_tensor("b", GgmlType::I8, &[1], vec![3u8]).unwrap();
    let err = b.rename_tensor("b", "a").unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::TensorExists { tensor }) if tensor == "a"),
        "{err:?}"
    );
}

#[test]
fn data_of_the_wrong_length_is_refused() {
    let data = [0f32; 3];
    let mut b = Builder::new();
    let err = b
        .add_tensor("a", GgmlType::F32, &[4, 2], vec![0u8; 31])
        .unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::TensorDataSize { tensor, expected: 32, actual: 31 }) if tensor == "a"),
        "{err:?}"
    );
    let err = b.add_tensor_typed("t", &[4], &data[..]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Build(BuildError::TensorDataSize {
                expected: 16,
                actual: 12,
                ..
            })
        ),
        "{err:?}"
    );
    // Q4_0: 18 bytes per block of 32.
    let err = b
        .add_tensor("q", GgmlType::Q4_0, &[64], vec![0u8; 32])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Build(BuildError::TensorDataSize {
                expected: 36,
                actual: 32,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(b.tensor_names().count(), 0, "refused tensors were added");
}

#[test]
fn row_not_a_multiple_of_the_block_size_is_refused() {
    let mut b = Builder::new();
    let err = b
        .add_tensor_info("q", GgmlType::Q8_0, &[48, 2])
        .unwrap_err();
    assert!(
        matches!(&err, Error::Format(FormatError::RowNotBlockMultiple { tensor, row: 48, ty: GgmlType::Q8_0, block: 32 }) if tensor == "q"),
        "{err:?}"
    );
    // Only the first dimension must be a multiple; the others are free.
    b.add_tensor_info("ok", GgmlType::Q8_0, &[32, 3]).unwrap();
}

#[test]
fn more_than_four_dimensions_are_refused() {
    let mut b = Builder::new();
    let err = b
        .add_tensor("five", GgmlType::I8, &[1, 1, 1, 1, 1], vec![0u8])
        .unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::InvalidTensor { tensor, reason }) if tensor == "five" && reason.contains("5 dimensions")),
        "{err:?}"
    );
    b.add_tensor("four", GgmlType::I8, &[1, 1, 1, 1], vec![0u8])
        .unwrap();
}

#[test]
fn alignment_must_be_a_power_of_two() {
    for bad in [0u32, 3, 48, 1000] {
        let mut b = Builder::new();
        let err = b.alignment(bad).unwrap_err();
        assert!(
            matches!(err, Error::Format(FormatError::InvalidAlignment { alignment, .. }) if alignment == u64::from(bad)),
            "{bad}: {err:?}"
        );
        // Setting the key directly is checked the same way.
        let err = b.set("general.alignment", bad).unwrap_err();
        assert!(
            matches!(err, Error::Format(FormatError::InvalidAlignment { .. })),
            "{err:?}"
        );
        assert!(b.value("general.alignment").is_none());
    }
    let mut b = Builder::new();
    let err = b.set("general.alignment", 64u64).unwrap_err();
    assert!(
        matches!(err, Error::Format(FormatError::AlignmentType { .. })),
        "{err:?}"
    );
    for good in [1u32, 2, 64, 4096, 1 << 31] {
        b.alignment(good).unwrap();
        assert_eq!(b.current_alignment(), u64::from(good));
    }
}

#[test]
fn empty_keys_are_refused() {
    let mut b = Builder::new();
    let err = b.set("", 1u8).unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::InvalidKey { key, .. }) if key.is_empty()),
        "{err:?}"
    );
    b.set("a", 1u8).unwrap();
    let err = b.rename_key("a", "").unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::InvalidKey { key, .. }) if key.is_empty()),
        "{err:?}"
    );
    assert_eq!(b.keys().collect::<Vec<_>>(), ["a"]);
}

#[test]
fn long_tensor_names_need_opting_in() {
    let name63 = "n".repeat(63);
    let name64 = "n".repeat(64);
    let mut b = Builder::new();
    b.add_tensor_info(name63.as_str(), GgmlType::F32, &[1])
        .unwrap();
    let err = b
        .add_tensor_info(name64.as_str(), GgmlType::F32, &[1])
        .unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::InvalidTensor { tensor, reason }) if *tensor == name64 && reason.contains("64 bytes")),
        "{err:?}"
    );
    b.allow_long_tensor_names(true);
    b.add_tensor("x", GgmlType::I8, &[1], vec![7u8]).unwrap();
    b.rename_tensor("x", name64.as_str()).unwrap();
    let mut b2 = Builder::new();
    b2.allow_long_tensor_names(true);
    b2.add_tensor(name64.as_str(), GgmlType::I8, &[1], vec![7u8])
        .unwrap();
    let mut out = Vec::new();
    b2.write(&mut out).unwrap();
    let file = GgufFile::open(&out).unwrap();
    assert_eq!(file.tensor(&name64).unwrap().data().unwrap(), [7]);
}

#[test]
fn closure_writing_the_wrong_byte_count_fails_the_write() {
    for (written, what) in [(15usize, "short"), (17, "long")] {
        let mut b = Builder::new();
        b.add_tensor_fn("t", GgmlType::F32, &[4], move |w| {
            w.write_all(&vec![1u8; written])
        })
        .unwrap();
        let err = b.write(Vec::new()).unwrap_err();
        assert!(
            matches!(&err, Error::Build(BuildError::TensorDataSize { tensor, expected: 16, actual }) if tensor == "t" && *actual == written as u64),
            "{what}: {err:?}"
        );
    }
}

#[test]
fn metadata_first_checks_order_size_and_completeness() {
    let mut b = Builder::new();
    b.add_tensor_info("a", GgmlType::F32, &[2]).unwrap();
    b.add_tensor_info("b", GgmlType::I16, &[3]).unwrap();
    b.add_tensor_info("c", GgmlType::I8, &[1]).unwrap();

    let mut out = Vec::new();
    let mut w = b.write_metadata_first(&mut out).unwrap();
    assert_eq!(w.next_tensor(), Some("a"));
    let err = w.write_tensor("b", &[0; 6]).unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::TensorOrder { tensor, expected }) if expected == "a" && tensor == "b"),
        "{err:?}"
    );
    let err = w.write_tensor("a", &[0; 7]).unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::TensorDataSize { tensor, expected: 8, actual: 7 }) if tensor == "a"),
        "{err:?}"
    );
    // Neither failure consumed the slot: "a" is still due.
    assert_eq!(w.next_tensor(), Some("a"));
    w.write_tensor("a", &[1; 8]).unwrap();
    let err = w.finish().unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::MissingTensorData { missing: 2, tensor }) if tensor == "b"),
        "{err:?}"
    );

    // Writing past the end names no expected tensor.
    let mut out = Vec::new();
    let mut b = Builder::new();
    b.add_tensor_info("a", GgmlType::I8, &[1]).unwrap();
    let mut w = b.write_metadata_first(&mut out).unwrap();
    w.write_tensor("a", &[1]).unwrap();
    let err = w.write_tensor("a", &[1]).unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::TensorOrder { tensor, expected }) if expected.is_empty() && tensor == "a"),
        "{err:?}"
    );
    assert_eq!(w.next_tensor(), None);
    w.finish().unwrap();
}

#[test]
fn deferred_tensors_fail_single_pass_writes() {
    let mut b = Builder::new();
    b.add_tensor("a", GgmlType::I8, &[1], vec![1u8]).unwrap();
    b.add_tensor_info("b", GgmlType::I8, &[1]).unwrap();
    let err = b.write(Vec::new()).unwrap_err();
    assert!(
        matches!(&err, Error::Build(BuildError::MissingTensorData { tensor, .. }) if tensor == "b"),
        "{err:?}"
    );
}

// ---- the three modes ----

fn contents() -> Vec<(String, Content)> {
    let mut v = Vec::new();
    for version in [1, 2, 3] {
        for endian in [Endian::Little, Endian::Big] {
            for alignment in [1u32, 32, 64, 4096] {
                v.push((
                    format!("v{version} {endian} align {alignment}"),
                    rich(ctx(version, endian), alignment),
                ));
            }
        }
    }
    v
}

#[test]
fn every_mode_and_source_writes_the_same_bytes_which_read_back() {
    for (name, content) in contents() {
        let reference = content.write(Mode::Single, Src::Bytes);
        content.check_read_back(&reference);
        let cases = [
            (Mode::Single, Src::Native),
            (Mode::Single, Src::Fn),
            (Mode::MetaFirst, Src::Bytes),
            (Mode::MetaFirst, Src::Fn),
            (Mode::MetaFirstManual, Src::Deferred),
            (Mode::Reserved, Src::Native),
            (Mode::Reserved, Src::Fn),
        ];
        for (mode, src) in cases {
            let bytes = content.write(mode, src);
            assert!(
                bytes == reference,
                "{name}: {mode:?} with {src:?} sources differs from single pass ({} vs {} bytes)",
                bytes.len(),
                reference.len()
            );
        }
        // The layout the builder reports is the one written.
        let layout = content.builder(Src::Bytes).layout().unwrap();
        assert_eq!(layout.file_len(), reference.len() as u64, "{name}");
        let file = GgufFile::open(&reference).unwrap();
        assert_eq!(layout.data_offset(), file.data_offset(), "{name}");
        for (slot, t) in layout.tensors.iter().zip(file.tensors()) {
            assert_eq!(slot.offset, t.offset(), "{name}");
        }
    }
}

#[test]
fn tensors_are_contiguous_and_padding_is_zero() {
    let content = rich(ctx(3, Endian::Little), 64);
    let bytes = content.write(Mode::Single, Src::Bytes);
    let file = GgufFile::open(&bytes).unwrap();
    // Header padding is zero.
    let header_len = file.header_len() as usize;
    assert!(bytes[header_len..file.data_offset() as usize]
        .iter()
        .all(|&b| b == 0));
    let mut expect = 0u64;
    for t in file.tensors() {
        assert_eq!(
            t.offset(),
            expect,
            "{} not at the running padded sum",
            t.name()
        );
        let end = t.offset() + t.byte_size().unwrap();
        let next = end.div_ceil(64) * 64;
        let pad = &bytes[(file.data_offset() + end) as usize..(file.data_offset() + next) as usize];
        assert!(pad.iter().all(|&b| b == 0), "padding after {}", t.name());
        expect = next;
    }
    assert_eq!(file.data_offset() + expect, bytes.len() as u64);
}

#[test]
fn reserved_mode_writes_at_the_stream_position() {
    let content = rich(ctx(3, Endian::Little), 32);
    let reference = content.write(Mode::Single, Src::Bytes);
    let mut cur = Cursor::new(b"PREFIX".to_vec());
    cur.set_position(6);
    content
        .builder(Src::Fn)
        .write_with(&mut cur, WriteOptions::new().mode(WriteMode::Reserve))
        .unwrap();
    assert_eq!(cur.position() as usize, 6 + reference.len());
    let out = cur.into_inner();
    assert_eq!(&out[..6], b"PREFIX");
    assert!(out[6..] == reference[..]);
}

#[test]
fn set_keeps_position_remove_and_rename_reorder_as_documented() {
    let mut b = Builder::new();
    b.set("a", 1u8).unwrap();
    b.set("b", "x").unwrap();
    b.set("c", 2u16).unwrap();
    b.set("a", 3.5f64).unwrap();
    b.rename_key("b", "bee").unwrap();
    b.remove("c").unwrap();
    let err = b.remove("c").unwrap_err();
    assert!(
        matches!(err, Error::Lookup(LookupError::KeyNotFound { .. })),
        "{err:?}"
    );
    let err = b.rename_key("missing", "z").unwrap_err();
    assert!(
        matches!(err, Error::Lookup(LookupError::KeyNotFound { .. })),
        "{err:?}"
    );
    let err = b.rename_key("a", "bee").unwrap_err();
    assert!(
        matches!(err, Error::Build(BuildError::InvalidKey { .. })),
        "{err:?}"
    );
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    let file = GgufFile::open(&out).unwrap();
    let kvs: Vec<_> = file
        .metadata()
        .map(|(k, v)| (k.to_owned(), OwnedValue::from_value(&v)))
        .collect();
    assert_eq!(
        kvs,
        [
            ("a".to_owned(), OwnedValue::F64(3.5)),
            ("bee".to_owned(), OwnedValue::String("x".into()))
        ]
    );
}

// ---- write_to_path ----

#[test]
fn a_failed_write_to_path_leaves_the_old_file_and_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    let old = rich(ctx(3, Endian::Little), 32).write(Mode::Single, Src::Bytes);
    std::fs::write(&path, &old).unwrap();

    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.add_tensor("ok", GgmlType::F32, &[1 << 20], vec![0u8; 4 << 20])
        .unwrap();
    b.add_tensor_fn("fails", GgmlType::F32, &[1 << 20], |w| {
        w.write_all(&vec![1u8; 2 << 20])?;
        Err(std::io::Error::other("source went away"))
    })
    .unwrap();
    let err = b.write_to_path(&path).unwrap_err();
    assert!(
        matches!(&err, Error::Io { source: e, .. } if e.to_string().contains("source went away")),
        "{err:?}"
    );
    assert!(std::fs::read(&path).unwrap() == old, "old file changed");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["model.gguf"], "temporary file left behind");

    // A failing write to a new path creates nothing.
    let fresh = dir.path().join("new.gguf");
    let err = b.write_to_path(&fresh).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Io { .. } | Error::Build(BuildError::TensorDataSize { .. })
        ),
        "{err:?}"
    );
    assert!(!fresh.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn write_to_path_replaces_the_file_and_keeps_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    std::fs::write(&path, b"old contents").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let content = Content {
        tensors: vec![TensorSpec::new("w", GgmlType::F16, &[100], 3)],
        ..rich(ctx(3, Endian::Little), 32)
    };
    let layout = content.builder(Src::Native).write_to_path(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, layout.file_len());
    assert!(bytes == content.write(Mode::Single, Src::Bytes));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn write_with_a_file_copies_mapped_tensors_at_the_file_position_in_every_mode() {
    use std::io::{Read, Seek, SeekFrom, Write};
    let dir = tempfile::tempdir().unwrap();
    let content = rich(ctx(3, Endian::Little), 64);
    let reference = content.write(Mode::Single, Src::Bytes);
    let src = dir.path().join("src.gguf");
    std::fs::write(&src, &reference).unwrap();
    let mapped = GgufFile::open(&src).unwrap();
    for mode in [WriteMode::Single, WriteMode::Reserve] {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"PREFIX").unwrap();
        let mut calls = Vec::new();
        let layout = Builder::from_file(&mapped)
            .unwrap()
            .write_with(
                &mut f,
                WriteOptions::new()
                    .mode(mode)
                    .progress(|done, total| calls.push((done, total))),
            )
            .unwrap();
        assert_eq!(
            f.stream_position().unwrap(),
            6 + layout.file_len(),
            "{mode:?}"
        );
        let mut out = Vec::new();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut out).unwrap();
        assert_eq!(&out[..6], b"PREFIX");
        assert!(out[6..] == reference[..], "{mode:?}");
        // Progress ends at the total and never goes backwards.
        assert_eq!(
            calls.last(),
            Some(&(layout.file_len(), layout.file_len())),
            "{mode:?}"
        );
        assert!(
            calls.windows(2).all(|w| w[0].0 <= w[1].0),
            "{mode:?}: {calls:?}"
        );
    }
}

#[test]
fn write_with_a_cursor_reports_progress_and_matches_write_in_every_mode() {
    let content = rich(ctx(3, Endian::Little), 32);
    let reference = content.write(Mode::Single, Src::Bytes);
    assert!(content.builder(Src::Bytes).to_vec().unwrap() == reference);
    for mode in [WriteMode::Single, WriteMode::Reserve] {
        let mut calls = Vec::new();
        let mut cur = Cursor::new(Vec::new());
        let opts = WriteOptions::new()
            .mode(mode)
            .progress(|done, total| calls.push((done, total)));
        let layout = content.builder(Src::Fn).write_with(&mut cur, opts).unwrap();
        assert!(cur.into_inner() == reference, "{mode:?}");
        let total = layout.file_len();
        assert_eq!(calls.last(), Some(&(total, total)), "{mode:?}");
        assert!(
            calls.iter().all(|&(d, t)| d <= t && t == total),
            "{calls:?}"
        );
        // One call after the header and one per tensor.
        assert_eq!(calls.len(), 1 + content.tensors.len(), "{mode:?}");
    }
}

#[test]
fn builder_getters_and_removals_match_the_reader() {
    let mut b = Builder::new();
    b.set("n", 7u32).unwrap().set("s", "text").unwrap();
    b.set("a", vec![1u8, 2]).unwrap();
    b.add_tensor("t", GgmlType::I8, &[1], vec![0u8]).unwrap();
    assert_eq!(b.get::<u32>("n").unwrap(), 7);
    assert_eq!(b.get_str("s").unwrap(), "text");
    let e = b.get::<u8>("a").unwrap_err();
    assert_eq!(
        e.to_string(),
        "metadata key \"a\" has type array of u8, expected u8"
    );
    assert!(matches!(
        b.get::<u32>("x"),
        Err(Error::Lookup(LookupError::KeyNotFound { .. }))
    ));
    // The same answers from the file written.
    let bytes = b.to_vec().unwrap();
    let file = GgufFile::open(&bytes).unwrap();
    assert_eq!(file.get::<u32>("n").unwrap(), 7);
    assert_eq!(file.get::<u8>("a").unwrap_err().to_string(), e.to_string());
    // Borrowed values answer like owned ones.
    let from = Builder::from_file(&file).unwrap();
    assert_eq!(from.get::<u32>("n").unwrap(), 7);
    assert_eq!(from.get_str("s").unwrap(), "text");

    b.remove_tensor("t").unwrap().remove("n").unwrap();
    assert!(matches!(
        b.remove_tensor("t"),
        Err(Error::Lookup(LookupError::TensorNotFound { .. }))
    ));
    assert!(matches!(
        b.remove("n"),
        Err(Error::Lookup(LookupError::KeyNotFound { .. }))
    ));
    assert_eq!(b.tensor_names().count(), 0);
    assert_eq!(b.keys().collect::<Vec<_>>(), ["s", "a"]);
}

#[cfg(unix)]
/// The process umask, read without changing it (Linux), or `None`.
fn umask() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Umask:"))?;
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
}

#[cfg(unix)]
#[test]
fn write_to_path_gives_new_files_the_default_mode_and_keeps_the_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.gguf");
    let content = rich(ctx(3, Endian::Little), 32);
    content.builder(Src::Bytes).write_to_path(&path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    match umask() {
        Some(mask) => assert_eq!(mode, 0o666 & !mask, "umask {mask:o}"),
        None => {
            eprintln!("skipped: umask unknown (no /proc/self/status); mode {mode:o}");
            assert_ne!(mode & 0o600, 0);
        }
    }

    // Only root can give a file away: elsewhere the owner check is skipped.
    let meta = std::fs::metadata(&path).unwrap();
    if meta.uid() != 0 {
        eprintln!("skipped: keeping another owner needs root");
        return;
    }
    std::os::unix::fs::chown(&path, Some(4321), Some(4322)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).unwrap();
    content.builder(Src::Fn).write_to_path(&path).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (4321, 4322));
    assert_eq!(meta.permissions().mode() & 0o777, 0o604);
}

#[test]
fn write_to_path_with_a_temp_dir_writes_the_temp_file_there() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("scratch");
    std::fs::create_dir(&tmp).unwrap();
    let path = dir.path().join("model.gguf");
    let content = rich(ctx(3, Endian::Little), 32);
    // A failing write shows where the temporary file was: it is removed
    // from the temp dir and nothing appears beside the target.
    let mut b = content.builder(Src::Bytes);
    b.add_tensor_fn("fails", GgmlType::I8, &[4], |_| {
        Err(std::io::Error::other("no data"))
    })
    .unwrap();
    let mut seen = Vec::new();
    let opts = WriteOptions::new().temp_dir(&tmp).progress(|_, _| {
        seen = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
    });
    assert!(b.write_to_path_with(&path, opts).is_err());
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    assert!(!path.exists());

    let opts = WriteOptions::new().temp_dir(&tmp);
    content
        .builder(Src::Bytes)
        .write_to_path_with(&path, opts)
        .unwrap();
    assert!(std::fs::read(&path).unwrap() == content.write(Mode::Single, Src::Bytes));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}
