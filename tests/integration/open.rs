//! `GgufFile::open`: the header region is an owned copy (small headers in a
//! `Vec`, headers over 256 KiB in an anonymous map of their own on Linux),
//! the tensor data a map of the file.

use std::path::{Path, PathBuf};

use gguf::edit::{Commit, Editor};
use gguf::Gguf;
use gguf::GgufFile;

use super::util::{assert_same_index, raw};

/// A file with `tokens` vocabulary strings (so its header region is about
/// `tokens * 16` bytes), scores, a name and two small F32 tensors.
fn vocab_file(tokens: usize) -> Vec<u8> {
    let mut r = raw();
    r.header(2, 3)
        .str("general.name")
        .u32(8)
        .str("first name")
        .str("tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .count(tokens as u64);
    for i in 0..tokens {
        r.str(&format!("token{i:08}"));
    }
    r.str("tokenizer.ggml.scores")
        .u32(9)
        .u32(6)
        .count(tokens as u64);
    for i in 0..tokens {
        r.f32(i as f32);
    }
    r.tensor_info("a", &[8], 0, 0)
        .tensor_info("b", &[4, 2], 0, 32)
        .pad(32);
    r.buf
        .extend((0..64u32).flat_map(|i| (i as f32).to_le_bytes()));
    r.buf
}

fn put(dir: &Path, bytes: &[u8]) -> PathBuf {
    let path = dir.join("m.gguf");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Small and big headers (either side of the 256 KiB where the copy moves
/// from a `Vec` to a map) open as `from_bytes` reads them: same header
/// bytes, metadata, tensor infos and data.
#[test]
fn small_and_big_headers_open_as_from_bytes_reads_them() {
    for tokens in [1_000, 100_000] {
        let bytes = vocab_file(tokens);
        let dir = tempfile::tempdir().unwrap();
        let file = GgufFile::open(put(dir.path(), &bytes)).unwrap();
        let mem = GgufFile::open(&bytes).unwrap();
        assert_eq!(tokens > 60_000, file.header_len() > 256 << 10, "{tokens}");
        assert_same_index(&file, &mem);
        assert_eq!(file.header_bytes(), mem.header_bytes());
        assert_eq!(file.data_section(), mem.data_section());
        let last = file.get_strings("tokenizer.ggml.tokens").unwrap().last();
        assert_eq!(last, Some(format!("token{:08}", tokens - 1).as_str()));
        for t in file.tensors() {
            assert_eq!(
                t.data().unwrap(),
                mem.tensor(t.name()).unwrap().data().unwrap()
            );
        }
    }
}

/// The point of the copy: an in-place edit of the file (here by this
/// process's own `Editor`) cannot change a string already handed out. With
/// the header borrowed from a shared map of the file, `name` and `token`
/// would read the new bytes.
#[test]
fn an_in_place_edit_leaves_the_strings_of_an_open_file_unchanged() {
    for tokens in [1_000, 100_000] {
        let dir = tempfile::tempdir().unwrap();
        let path = put(dir.path(), &vocab_file(tokens));
        let file = GgufFile::open(&path).unwrap();
        let name = file.get_str("general.name").unwrap();
        let token = file.get_strings("tokenizer.ggml.tokens").unwrap().next();

        let mut ed = Editor::open(&path).unwrap();
        ed.set("general.name", "other name").unwrap();
        ed.set(
            "tokenizer.ggml.tokens",
            gguf::format::OwnedValue::Array(gguf::format::OwnedArray::String(
                (0..tokens).map(|i| format!("TOKEN{i:08}")).collect(),
            )),
        )
        .unwrap();
        let commit = ed.commit().unwrap();
        assert!(matches!(commit, Commit::InPlace { .. }), "{commit:?}");

        assert_eq!(name, "first name");
        assert_eq!(token, Some("token00000000"));
        let again = GgufFile::open(&path).unwrap();
        assert_eq!(again.get_str("general.name").unwrap(), "other name");
        let token = again.get_strings("tokenizer.ggml.tokens").unwrap().next();
        assert_eq!(token, Some("TOKEN00000000"));
    }
}

/// A file cut anywhere in its header region (small headers and big ones
/// alike) fails to open with the error `from_bytes` gives for the same
/// bytes, in the context of the file.
#[test]
fn every_cut_fails_to_open_as_from_bytes_fails() {
    let bytes = vocab_file(20_000);
    let dir = tempfile::tempdir().unwrap();
    let header_len = GgufFile::open(&bytes).unwrap().header_len() as usize;
    assert!(header_len > 256 << 10, "{header_len}");
    for cut in (0..header_len).step_by(9_973).chain([header_len - 1]) {
        let input = &bytes[..cut];
        let path = put(dir.path(), input);
        let opened = GgufFile::open(&path).unwrap_err();
        let parsed = GgufFile::open(input).unwrap_err();
        // Opened by path, the same error inside the file's context.
        assert_eq!(opened.path(), Some(path.as_path()), "cut {cut}");
        assert_eq!(
            format!("{:?}", opened.detail()),
            format!("{parsed:?}"),
            "cut {cut}"
        );
    }
}
