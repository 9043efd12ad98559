//! The error type: I/O errors name the file they concern, groups can be
//! matched, messages name each file once.

use std::path::Path;

use gguf::edit::Editor;
use gguf::write::Builder;
use gguf::{
    error::{FormatError, LookupError},
    Error,
};
use gguf::{Gguf, GgufFile, Model};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

/// The path and kind of an I/O error, or a panic naming what came instead.
fn io_parts(e: &Error) -> (&Path, std::io::ErrorKind) {
    match e {
        Error::Io {
            path: Some(path),
            source,
        } => (path, source.kind()),
        other => panic!("not an I/O error with a path: {other:?}"),
    }
}

#[test]
fn opening_a_missing_file_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.gguf");
    let e = GgufFile::open(&missing).unwrap_err();
    assert_eq!(
        io_parts(&e),
        (missing.as_path(), std::io::ErrorKind::NotFound)
    );
    let shown = missing.display().to_string();
    assert_eq!(e.to_string().matches(&shown).count(), 1, "{e}");

    let e = Editor::open(&missing).unwrap_err();
    assert_eq!(
        io_parts(&e),
        (missing.as_path(), std::io::ErrorKind::NotFound)
    );

    // A model wraps the file's error once; the message still names it once.
    let e = Model::open(&missing).unwrap_err();
    assert_eq!(e.to_string().matches(&shown).count(), 1, "{e}");
}

#[test]
fn a_failed_write_names_the_output_not_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    // A non-empty directory where the output goes: refused before any
    // temporary file is made (a rename over it would fail), naming the
    // output and what is there.
    let out = dir.path().join("out.gguf");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep"), b"x").unwrap();
    let file = GgufFile::open(SAMPLE).unwrap();
    let e = Builder::from_file(&file)
        .unwrap()
        .write_to_path(&out)
        .unwrap_err();
    match &e {
        Error::Build(gguf::error::BuildError::OutputNotRegular { path, kind }) => {
            assert_eq!(path, &out);
            assert_eq!(*kind, "a directory");
        }
        other => panic!("not OutputNotRegular: {other:?}"),
    }
    assert!(!e.to_string().contains(".gguf-"), "{e}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the directory is there: {left:?}");

    // The temporary file cannot be created: the output is named, and the
    // message says in which directory the temporary file was to be.
    let out = dir.path().join("missing").join("out.gguf");
    let e = Builder::from_file(&file)
        .unwrap()
        .write_to_path(&out)
        .unwrap_err();
    assert_eq!(io_parts(&e).0, out);
    assert!(
        e.to_string().contains("cannot create a temporary file in"),
        "{e}"
    );
}

#[test]
fn an_unreadable_journal_names_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.gguf");
    std::fs::copy(SAMPLE, &model).unwrap();
    // A directory where the journal would be: it opens, but cannot be read.
    let journal = gguf::edit::journal_path(&model.canonicalize().unwrap());
    std::fs::create_dir(&journal).unwrap();
    let e = gguf::edit::recover(&model).unwrap_err();
    let (path, _) = io_parts(&e);
    assert_eq!(path, journal);
}

#[test]
fn groups_match_with_their_details() {
    let e = GgufFile::open(&b"GGUF\x03\x00\x00\x00"[..]).unwrap_err();
    assert!(
        matches!(&e, Error::Format(FormatError::Truncated { offset: 8, what, .. }) if what == "tensor count"),
        "{e:?}"
    );
    let file = GgufFile::open(SAMPLE).unwrap();
    let e = file.get::<u32>("no.such.key").unwrap_err();
    assert!(
        matches!(&e, Error::Lookup(LookupError::KeyNotFound { key }) if key == "no.such.key"),
        "{e:?}"
    );
    // Display is the inner message, unchanged by the grouping.
    assert_eq!(e.to_string(), "metadata key \"no.such.key\" not found");
}

/// Opens `path` through both doors and asserts they give the same error,
/// naming `path` once (in the message and as `path()`), with the same
/// offset; returns it.
#[track_caller]
fn same_at_both_doors(path: &Path) -> Error {
    let file = GgufFile::open(path).unwrap_err();
    let model = Model::open(path).unwrap_err();
    assert_eq!(
        format!("{file:?}"),
        format!("{model:?}"),
        "the doors disagree"
    );
    assert_eq!(file.to_string(), model.to_string());
    assert_eq!(file.path(), Some(path), "{file}");
    assert_eq!(file.offset(), model.offset());
    let shown = path.display().to_string();
    assert_eq!(file.to_string().matches(&shown).count(), 1, "{file}");
    assert!(file.to_string().starts_with(&shown), "{file}");
    file
}

#[test]
fn both_doors_give_the_same_error_for_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let sample = std::fs::read(SAMPLE).unwrap();

    // A missing file: an I/O error holding the path.
    let missing = dir.path().join("missing.gguf");
    let e = same_at_both_doors(&missing);
    assert_eq!(
        io_parts(&e),
        (missing.as_path(), std::io::ErrorKind::NotFound)
    );
    assert_eq!(e.offset(), None);

    // A bad magic: the format error inside the file's context.
    let bad_magic = dir.path().join("bad-magic.gguf");
    let mut bytes = sample.clone();
    bytes[..4].copy_from_slice(b"GGUX");
    std::fs::write(&bad_magic, &bytes).unwrap();
    let e = same_at_both_doors(&bad_magic);
    assert!(
        matches!(&e, Error::File { path, source } if *path == bad_magic
            && matches!(**source, Error::Format(FormatError::BadMagic { found }) if &found == b"GGUX")),
        "{e:?}"
    );
    assert!(matches!(
        e.detail(),
        Error::Format(FormatError::BadMagic { .. })
    ));
    assert_eq!(e.offset(), Some(0));

    // A file cut inside its header: the count that no longer fits, at
    // its offset.
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, &sample[..100]).unwrap();
    let e = same_at_both_doors(&truncated);
    match e.detail() {
        Error::Format(FormatError::CountTooLarge { offset, .. }) => {
            assert_eq!(e.offset(), Some(*offset));
        }
        other => panic!("not CountTooLarge: {other:?}"),
    }
    // The same bytes from memory: the same error, no file to name.
    let from_bytes = GgufFile::open(&sample[..100]).unwrap_err();
    assert_eq!(format!("{from_bytes:?}"), format!("{:?}", e.detail()));
    assert_eq!((from_bytes.path(), from_bytes.offset()), (None, e.offset()));

    // Cut inside the magic: truncated where the file ends.
    let short = dir.path().join("short.gguf");
    std::fs::write(&short, &sample[..2]).unwrap();
    let e = same_at_both_doors(&short);
    assert!(
        matches!(
            e.detail(),
            Error::Format(FormatError::Truncated {
                offset: 0,
                needed: 2,
                ..
            })
        ),
        "{e:?}"
    );
    assert_eq!(e.offset(), Some(0));
}

#[test]
fn a_directory_is_named_once_at_both_doors() {
    let dir = tempfile::tempdir().unwrap();
    let e = same_at_both_doors(dir.path());
    assert!(e.path().is_some());
}
