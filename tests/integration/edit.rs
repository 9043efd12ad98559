//! Editor semantics: which edits land in place, what bytes they touch,
//! what the slack does, errors, and that a failed edit loses nothing.

use gguf::error::{BuildError, EditError, LookupError};
use std::path::Path;

use gguf::edit::{Commit, Editor, DEFAULT_RESERVE};
use gguf::format::OwnedValue;
use gguf::write::SLACK_KEY;
use gguf::{Endian, Error, Gguf, GgufFile};

use super::edit_fixtures::{
    leftovers, metadata, model, padding, put, slack_len, tensor_hashes, Spec, TEMPLATE,
};

/// The result of one edit made on a fresh copy of `before`.
struct Outcome {
    before: Vec<u8>,
    after: Vec<u8>,
    commit: Commit,
}

impl Outcome {
    fn old(&self) -> GgufFile<'_> {
        GgufFile::open(&self.before).unwrap()
    }
    fn edited(&self) -> GgufFile<'_> {
        GgufFile::open(&self.after).expect("edited file must be valid")
    }
    fn in_place(&self) -> bool {
        matches!(self.commit, Commit::InPlace { .. })
    }

    /// In place: same length, every byte from the data offset on unchanged.
    fn assert_in_place(&self) {
        assert!(self.in_place(), "expected InPlace, got {:?}", self.commit);
        let data_offset = self.old().data_offset() as usize;
        assert_eq!(self.after.len(), self.before.len(), "file length changed");
        assert!(
            self.after[data_offset..] == self.before[data_offset..],
            "bytes after the data offset changed"
        );
        assert_eq!(self.edited().data_offset(), self.old().data_offset());
    }

    fn assert_rewritten(&self) {
        assert!(
            matches!(self.commit, Commit::Rewritten { .. }),
            "expected Rewritten, got {:?}",
            self.commit
        );
    }

    /// Every tensor keeps its name, order and bytes.
    fn assert_tensors_kept(&self) {
        assert_eq!(tensor_hashes(&self.edited()), tensor_hashes(&self.old()));
    }

    /// Metadata equals the old metadata with `expected` applied to it.
    fn assert_metadata(&self, expected: Vec<(String, OwnedValue)>) {
        let strip = |m: Vec<(String, OwnedValue)>| -> Vec<(String, OwnedValue)> {
            m.into_iter().filter(|(k, _)| k != SLACK_KEY).collect()
        };
        assert_eq!(strip(metadata(&self.edited())), strip(expected));
    }
}

/// Opens a copy of `before`, applies `edit`, checks that `plan()`
/// predicts what `commit()` does and that nothing is left behind.
fn run_edit(before: Vec<u8>, edit: impl FnOnce(&mut Editor)) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = put(dir.path(), "m.gguf", &before);
    let mut ed = Editor::open(&path).unwrap();
    edit(&mut ed);
    let plan = ed.plan().unwrap();
    let commit = ed.commit().unwrap();
    assert_eq!(plan, commit, "plan() differs from what commit() did");
    let after = std::fs::read(&path).unwrap();
    match commit {
        Commit::InPlace { header_bytes, .. } => {
            let old = GgufFile::open(&before).unwrap();
            assert_eq!(header_bytes, old.data_offset());
        }
        Commit::Rewritten {
            header_bytes,
            file_bytes,
            ..
        } => {
            assert_eq!(file_bytes, after.len() as u64);
            assert_eq!(header_bytes, GgufFile::open(&after).unwrap().data_offset());
        }
    }
    // The slack reported is the slack in the file.
    assert_eq!(
        slack_len(&GgufFile::open(&after).unwrap()).unwrap_or(0) as u64,
        commit.slack_bytes(),
        "{commit:?}"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
    Outcome {
        before,
        after,
        commit,
    }
}

/// The metadata of `bytes` with `key` set to `value` (kept in place, or last).
fn with_set(bytes: &[u8], key: &str, value: OwnedValue) -> Vec<(String, OwnedValue)> {
    let mut m = metadata(&GgufFile::open(bytes).unwrap());
    match m.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => m.push((key.to_owned(), value)),
    }
    m
}

/// Size of a string KV entry in a v2/v3 file.
fn string_entry_len(key: &str, value: &str) -> u64 {
    8 + key.len() as u64 + 4 + 8 + value.len() as u64
}

/// A model whose header padding is at least `min` bytes (the padding
/// depends on the name length, so try a few).
fn model_with_padding(spec: Spec, min: u64) -> Vec<u8> {
    for n in 9..9 + 64 {
        let bytes = model(spec.name_len(n));
        if padding(&GgufFile::open(&bytes).unwrap()) >= min {
            return bytes;
        }
    }
    panic!("no name length gives {min} bytes of padding");
}

fn name_of(bytes: &[u8]) -> usize {
    GgufFile::open(bytes)
        .unwrap()
        .get_str("general.name")
        .unwrap()
        .len()
}

#[test]
fn same_size_scalar_edit_is_in_place_and_touches_only_that_value() {
    let before = model(Spec::default());
    let out = run_edit(before.clone(), |ed| {
        ed.set("llama.context_length", 8192u32).unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(
        &before,
        "llama.context_length",
        OwnedValue::U32(8192),
    ));
    // The only bytes that differ are inside that entry.
    let range = out.old().entry_range("llama.context_length").unwrap();
    let changed: Vec<usize> = (0..before.len())
        .filter(|&i| before[i] != out.after[i])
        .collect();
    assert!(!changed.is_empty());
    assert!(
        changed.iter().all(|&i| range.contains(&(i as u64))),
        "bytes outside the entry changed: {changed:?} vs {range:?}"
    );
}

#[test]
fn longer_string_within_the_padding_is_in_place() {
    let before = model_with_padding(Spec::default(), 8);
    let pad = padding(&GgufFile::open(&before).unwrap());
    let name = "x".repeat(name_of(&before) + pad as usize); // fills the padding exactly
    let out = run_edit(before.clone(), |ed| {
        ed.set("general.name", name.as_str()).unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(&before, "general.name", name.as_str().into()));
    assert_eq!(padding(&out.edited()), 0);
}

#[test]
fn longer_string_crossing_the_block_is_rewritten() {
    let before = model(Spec::default());
    let old = GgufFile::open(&before).unwrap();
    let name = "y".repeat(name_of(&before) + padding(&old) as usize + 1);
    let out = run_edit(before.clone(), |ed| {
        ed.reserve_on_rewrite(0).unwrap();
        ed.set("general.name", name.as_str()).unwrap();
    });
    assert_eq!(out.commit.slack_bytes(), 0);
    assert_eq!(
        slack_len(&out.edited()),
        None,
        "slack reserved though turned off"
    );
    out.assert_rewritten();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(&before, "general.name", name.as_str().into()));
    assert_eq!(
        out.edited().data_offset(),
        old.data_offset() + old.alignment(),
        "one more aligned block"
    );
    assert_eq!(out.after.len(), before.len() + old.alignment() as usize);
}

#[test]
fn longer_string_with_slack_is_in_place_and_the_slack_shrinks() {
    let before = model(Spec::default().slack(1024));
    let old = GgufFile::open(&before).unwrap();
    let grow = padding(&old) as usize + 200; // would cross the block without slack
    let name = "z".repeat(name_of(&before) + grow);
    let out = run_edit(before.clone(), |ed| {
        ed.set("general.name", name.as_str()).unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(&before, "general.name", name.as_str().into()));
    // The slack absorbs the growth and the old padding.
    assert_eq!(
        slack_len(&out.edited()),
        Some(1024 + padding(&old) as usize - grow)
    );
    assert_eq!(padding(&out.edited()), 0);
    // The slack entry keeps its place.
    let keys_old: Vec<&str> = old.keys().collect();
    let new = out.edited();
    let keys_new: Vec<&str> = new.keys().collect();
    assert_eq!(keys_old, keys_new);
}

#[test]
fn shorter_string_in_the_same_block_is_in_place() {
    let before = model(Spec::default().name_len(40));
    let old = GgufFile::open(&before).unwrap();
    // Shrink by as much as still ends in the same block.
    let room = old.alignment() - padding(&old) - 1;
    let shrink = room.min(39) as usize;
    assert!(shrink > 0);
    let name = "s".repeat(40 - shrink);
    let out = run_edit(before.clone(), |ed| {
        ed.set("general.name", name.as_str()).unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(&before, "general.name", name.as_str().into()));
    assert_eq!(padding(&out.edited()), padding(&old) + shrink as u64);
    // The freed bytes are zero padding.
    let new = out.edited();
    assert!(
        out.after[new.header_len() as usize..new.data_offset() as usize]
            .iter()
            .all(|&b| b == 0)
    );
}

#[test]
fn shorter_string_leaving_the_block_is_rewritten_and_the_file_shrinks() {
    let before = model(Spec::default().name_len(100));
    let out = run_edit(before.clone(), |ed| {
        ed.reserve_on_rewrite(0).unwrap();
        ed.set("general.name", "short").unwrap();
    });
    assert_eq!(slack_len(&out.edited()), None);
    out.assert_rewritten();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(&before, "general.name", "short".into()));
    assert!(out.after.len() < before.len());
}

#[test]
fn shorter_string_with_slack_is_in_place_and_the_slack_grows() {
    let before = model(Spec::default().slack(256).name_len(100));
    let old = GgufFile::open(&before).unwrap();
    let out = run_edit(before.clone(), |ed| {
        ed.set("general.name", "short").unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(&before, "general.name", "short".into()));
    assert_eq!(
        slack_len(&out.edited()),
        Some(256 + padding(&old) as usize + 95)
    );
}

#[test]
fn new_key_with_slack_is_in_place_and_goes_last() {
    let before = model(Spec::default().slack(512));
    let old = GgufFile::open(&before).unwrap();
    let out = run_edit(before.clone(), |ed| {
        ed.set("general.license", "apache-2.0").unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(&before, "general.license", "apache-2.0".into()));
    assert_eq!(out.edited().keys().last(), Some("general.license"));
    let entry = string_entry_len("general.license", "apache-2.0") as usize;
    assert_eq!(
        slack_len(&out.edited()),
        Some(512 + padding(&old) as usize - entry)
    );
}

#[test]
fn new_key_without_room_is_rewritten() {
    let before = model(Spec::default());
    let value = "v".repeat(64);
    let out = run_edit(before.clone(), |ed| {
        ed.set("general.license", value.as_str()).unwrap();
    });
    out.assert_rewritten();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(&before, "general.license", value.as_str().into()));
}

#[test]
fn removed_key_with_slack_is_in_place_and_the_slack_grows() {
    let before = model(Spec::default().slack(64));
    let old = GgufFile::open(&before).unwrap();
    let out = run_edit(before.clone(), |ed| {
        ed.remove("tokenizer.chat_template").unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    let mut expected = metadata(&old);
    expected.retain(|(k, _)| k != "tokenizer.chat_template");
    out.assert_metadata(expected);
    let entry = string_entry_len("tokenizer.chat_template", TEMPLATE) as usize;
    assert_eq!(
        slack_len(&out.edited()),
        Some(64 + padding(&old) as usize + entry)
    );
}

#[test]
fn removed_key_without_slack_shrinks_the_file() {
    let before = model(Spec::default());
    let old = GgufFile::open(&before).unwrap();
    let out = run_edit(before.clone(), |ed| {
        ed.reserve_on_rewrite(0).unwrap();
        ed.remove("tokenizer.chat_template").unwrap();
    });
    // The template is longer than an aligned block: the header must shrink.
    out.assert_rewritten();
    out.assert_tensors_kept();
    let mut expected = metadata(&old);
    expected.retain(|(k, _)| k != "tokenizer.chat_template");
    out.assert_metadata(expected);
    assert!(out.after.len() < before.len());
}

#[test]
fn renamed_key_keeps_its_position_and_value() {
    let before = model(Spec::default().slack(64));
    let old = GgufFile::open(&before).unwrap();
    let out = run_edit(before.clone(), |ed| {
        ed.rename_key("llama.rope.freq_base", "llama.rope.freq_base_train")
            .unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    let expected: Vec<_> = metadata(&old)
        .into_iter()
        .map(|(k, v)| {
            if k == "llama.rope.freq_base" {
                ("llama.rope.freq_base_train".to_owned(), v)
            } else {
                (k, v)
            }
        })
        .collect();
    out.assert_metadata(expected);
}

#[test]
fn renamed_tensor_keeps_its_data_and_position() {
    let before = model(Spec::default().slack(64));
    let old = GgufFile::open(&before).unwrap();
    let out = run_edit(before.clone(), |ed| {
        ed.rename_tensor("blk.0.attn_q.weight", "blk.0.attn_query.weight")
            .unwrap();
    });
    out.assert_in_place();
    let expected: Vec<(String, String)> = tensor_hashes(&old)
        .into_iter()
        .map(|(n, h)| {
            if n == "blk.0.attn_q.weight" {
                ("blk.0.attn_query.weight".to_owned(), h)
            } else {
                (n, h)
            }
        })
        .collect();
    assert_eq!(tensor_hashes(&out.edited()), expected);
    out.assert_metadata(metadata(&old));
    let new = out.edited();
    let t = new.tensor("blk.0.attn_query.weight").unwrap();
    let o = old.tensor("blk.0.attn_q.weight").unwrap();
    assert_eq!((t.shape(), t.ggml_type()), (o.shape(), o.ggml_type()));
}

#[test]
fn exhausted_slack_rewrites_and_keeps_the_slack_and_tensor_bytes() {
    let before = model(Spec::default().slack(64));
    let template = "t".repeat(4096);
    let out = run_edit(before.clone(), |ed| {
        ed.set("tokenizer.chat_template", template.as_str())
            .unwrap();
    });
    out.assert_rewritten();
    out.assert_tensors_kept();
    out.assert_metadata(with_set(
        &before,
        "tokenizer.chat_template",
        template.as_str().into(),
    ));
    let slack = slack_len(&out.edited());
    assert!(
        slack.is_some(),
        "the slack entry was dropped by the rewrite"
    );
    assert!(
        slack.unwrap() >= 64,
        "slack shrank to {slack:?} in a rewrite"
    );
    // Topped up to the default reservation, so the next edit fits.
    assert!(slack.unwrap() as u64 >= DEFAULT_RESERVE, "{slack:?}");
    assert_eq!(slack.unwrap() as u64, out.commit.slack_bytes());
}

#[test]
fn big_endian_files_stay_big_endian() {
    // In place (with slack) and rewritten (without).
    for (spec, in_place) in [
        (Spec::default().big_endian().slack(128), true),
        (Spec::default().big_endian(), false),
    ] {
        let before = model(spec);
        assert_eq!(GgufFile::open(&before).unwrap().endian(), Endian::Big);
        let out = run_edit(before.clone(), |ed| {
            ed.set("general.name", "a big-endian model of some length")
                .unwrap();
            ed.set("llama.context_length", 2048u32).unwrap();
        });
        assert_eq!(out.in_place(), in_place, "{:?}", out.commit);
        if in_place {
            out.assert_in_place();
        }
        let new = out.edited();
        assert_eq!(new.endian(), Endian::Big);
        assert_eq!(&out.after[4..8], &3u32.to_be_bytes());
        assert_eq!(new.get::<u32>("llama.context_length").unwrap(), 2048);
        out.assert_tensors_kept();
        let expected = with_set(
            &before,
            "general.name",
            "a big-endian model of some length".into(),
        );
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(k, v)| {
                if k == "llama.context_length" {
                    (k, OwnedValue::U32(2048))
                } else {
                    (k, v)
                }
            })
            .collect();
        out.assert_metadata(expected);
    }
}

#[test]
fn v2_files_stay_v2() {
    for (spec, in_place) in [
        (Spec::default().version(2).slack(128), true),
        (Spec::default().version(2), false),
    ] {
        let before = model(spec);
        let name = "m".repeat(120);
        let out = run_edit(before.clone(), |ed| {
            ed.set("general.name", name.as_str()).unwrap();
        });
        assert_eq!(out.in_place(), in_place, "{:?}", out.commit);
        assert_eq!(out.edited().version(), 2);
        assert_eq!(&out.after[4..8], &2u32.to_le_bytes());
        out.assert_tensors_kept();
        out.assert_metadata(with_set(&before, "general.name", name.as_str().into()));
    }
}

#[test]
fn several_edits_in_one_commit() {
    let before = model(Spec::default().slack(256));
    let old = GgufFile::open(&before).unwrap();
    let out = run_edit(before.clone(), |ed| {
        ed.set("general.name", "renamed").unwrap();
        ed.remove("general.parameter_count").unwrap();
        ed.rename_key("llama.block_count", "llama.n_layer").unwrap();
        ed.set("general.tags", vec!["a", "b"]).unwrap();
    });
    out.assert_in_place();
    out.assert_tensors_kept();
    let mut expected = Vec::new();
    for (k, v) in metadata(&old) {
        match k.as_str() {
            "general.name" => expected.push((k, "renamed".into())),
            "general.parameter_count" => {}
            "llama.block_count" => expected.push(("llama.n_layer".to_owned(), v)),
            _ => expected.push((k, v)),
        }
    }
    expected.push(("general.tags".to_owned(), vec!["a", "b"].into()));
    out.assert_metadata(expected);
}

// ---- slack reserved by a rewrite ----

fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().ino()
}

/// A file without slack (as downloaded from a hub) is rewritten by an
/// edit that does not fit; that rewrite reserves slack, so the next edit,
/// which grows the header by less than the reservation, is in place: same
/// inode, same length, the data section byte for byte.
#[test]
fn a_rewrite_reserves_slack_so_the_next_edit_is_in_place() {
    for spec in [
        Spec::default(),
        Spec::default().big_endian(),
        Spec::default().version(2),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let before = model(spec);
        let old = GgufFile::open(&before).unwrap();
        assert_eq!(slack_len(&old), None);
        let path = put(dir.path(), "m.gguf", &before);

        let mut ed = Editor::open(&path).unwrap();
        ed.set("general.name", "y".repeat(500)).unwrap();
        let planned = ed.plan().unwrap();
        let first = ed.commit().unwrap();
        assert_eq!(planned, first);
        let Commit::Rewritten {
            header_bytes,
            file_bytes,
            slack_bytes,
        } = first
        else {
            panic!("{spec:?}: expected a rewrite, got {first:?}");
        };
        // The reservation, rounded up so the header ends on the alignment.
        assert!(
            (DEFAULT_RESERVE..DEFAULT_RESERVE + old.alignment()).contains(&slack_bytes),
            "{spec:?}: {slack_bytes}"
        );
        let after = std::fs::read(&path).unwrap();
        let new = GgufFile::open(&after).unwrap();
        assert_eq!(slack_len(&new), Some(slack_bytes as usize));
        assert_eq!(padding(&new), 0, "{spec:?}: the slack fills the block");
        assert_eq!(new.data_offset(), header_bytes);
        assert_eq!(after.len() as u64, file_bytes);
        assert_eq!(new.endian(), old.endian());
        assert_eq!(new.version(), old.version());
        assert_eq!(tensor_hashes(&new), tensor_hashes(&old));
        assert_eq!(new.keys().last(), Some(SLACK_KEY), "a new key goes last");
        if spec.endian == Endian::Little && spec.version == 3 {
            assert!(
                new.lint_llama_cpp().is_empty(),
                "{:?}",
                new.lint_llama_cpp()
            );
        }
        drop(new);

        // The next edit grows the header by 3000 bytes: in place.
        let (ino, len) = (inode(&path), after.len());
        let mut ed = Editor::open(&path).unwrap();
        ed.set("general.name", "y".repeat(3500)).unwrap();
        let second = ed.commit().unwrap();
        assert_eq!(
            second,
            Commit::InPlace {
                header_bytes,
                slack_bytes: slack_bytes - 3000
            },
            "{spec:?}"
        );
        assert_eq!(inode(&path), ino, "the file was replaced");
        let again = std::fs::read(&path).unwrap();
        assert_eq!(again.len(), len);
        assert!(again[header_bytes as usize..] == after[header_bytes as usize..]);
        let new = GgufFile::open(&again).unwrap();
        assert_eq!(new.get_str("general.name").unwrap(), "y".repeat(3500));
        assert_eq!(tensor_hashes(&new), tensor_hashes(&old));
        assert!(leftovers(dir.path()).is_empty());
    }
}

/// Without slack, a header that shrinks out of its aligned block keeps
/// the freed bytes as a new slack entry, in place, instead of moving the
/// tensor data; the file keeps its length.
#[test]
fn a_header_that_shrinks_out_of_its_block_keeps_the_room_as_slack() {
    let template = string_entry_len("tokenizer.chat_template", TEMPLATE);
    for (before, edit, shrink) in [
        (
            model(Spec::default().name_len(100)),
            (|ed: &mut Editor| {
                ed.set("general.name", "short").unwrap();
            }) as fn(&mut Editor),
            95,
        ),
        (
            model(Spec::default()),
            |ed: &mut Editor| {
                ed.remove("tokenizer.chat_template").unwrap();
            },
            template,
        ),
    ] {
        let old = GgufFile::open(&before).unwrap();
        let out = run_edit(before.clone(), edit);
        out.assert_in_place();
        out.assert_tensors_kept();
        let new = out.edited();
        let slack = slack_len(&new).expect("the freed room became slack") as u64;
        assert_eq!(out.commit.slack_bytes(), slack);
        assert_eq!(padding(&new), 0);
        // The slack is the old padding plus what the edit freed, less the
        // entry's own key, type, element type and count.
        let entry = 8 + SLACK_KEY.len() as u64 + 4 + 4 + 8;
        assert_eq!(slack, padding(&old) + shrink - entry);
    }
}

/// An edit that names the slack entry itself manages it: removing it
/// leaves no slack, even though the commit rewrites the file.
#[test]
fn an_edit_of_the_slack_entry_is_left_as_asked() {
    let before = model(Spec::default().slack(4096));
    let out = run_edit(before.clone(), |ed| {
        ed.remove(SLACK_KEY).unwrap();
    });
    out.assert_rewritten();
    out.assert_tensors_kept();
    assert_eq!(slack_len(&out.edited()), None);
    assert_eq!(out.commit.slack_bytes(), 0);
    assert!(out.after.len() < before.len());
}

#[test]
fn a_reservation_llama_cpp_would_refuse_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = put(dir.path(), "m.gguf", &model(Spec::default()));
    let mut ed = Editor::open(&path).unwrap();
    let e = ed
        .reserve_on_rewrite(gguf::write::MAX_SLACK + 1)
        .unwrap_err();
    assert!(
        matches!(&e, Error::Build(BuildError::InvalidKey { key, .. }) if key == SLACK_KEY),
        "{e:?}"
    );
    assert!(e.to_string().contains("llama.cpp"), "{e}");
    ed.reserve_on_rewrite(gguf::write::MAX_SLACK).unwrap();
    let mut m = gguf::edit::ModelEditor::open(&path).unwrap();
    assert!(m.reserve_on_rewrite(u64::MAX).is_err());
}

/// The preview shows the file as the commit leaves it, slack included.
#[test]
fn the_preview_shows_the_reserved_slack() {
    let dir = tempfile::tempdir().unwrap();
    let path = put(dir.path(), "m.gguf", &model(Spec::default()));
    let mut ed = Editor::open(&path).unwrap();
    ed.set("general.name", "p".repeat(700)).unwrap();
    let preview = ed.preview().unwrap();
    let planned = ed.plan().unwrap();
    assert_eq!(slack_len(&preview), Some(planned.slack_bytes() as usize));
    ed.commit().unwrap();
    let after = std::fs::read(&path).unwrap();
    let new = GgufFile::open(&after).unwrap();
    assert_eq!(metadata(&new), metadata(&preview));
    assert_eq!(new.data_offset(), preview.data_offset());
}

/// `ModelEditor` reserves slack in every shard it rewrites (the first for
/// metadata, another for a tensor rename), the model still opens as one,
/// and the next edits of those shards are in place.
#[test]
fn a_model_editor_reserves_slack_in_each_shard_it_rewrites() {
    use gguf::edit::ModelEditor;
    use gguf::write::{Builder, SplitOptions};
    use gguf::Model;
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    for (i, t) in ["a", "b", "c"].iter().enumerate() {
        b.add_tensor(*t, gguf::GgmlType::I8, &[4], vec![i as u8; 4])
            .unwrap();
    }
    let shards = b
        .write_split(
            dir.path().join("m.gguf"),
            &SplitOptions::default().max_tensors(1),
        )
        .unwrap();
    let long = "t".repeat(60); // tensor names stay under llama.cpp's 64 bytes
    let mut ed = ModelEditor::open(&shards[1].path).unwrap();
    ed.set("general.name", "n".repeat(200)).unwrap();
    ed.rename_tensor("c", long.clone()).unwrap();
    let planned = ed.plan().unwrap();
    let done = ed.commit().unwrap();
    assert_eq!(planned, done);
    let paths: Vec<&Path> = done.iter().map(|(p, _)| p.as_path()).collect();
    assert_eq!(paths, [&shards[0].path, &shards[2].path]);
    for (path, c) in &done {
        assert!(
            matches!(c, Commit::Rewritten { slack_bytes, .. } if *slack_bytes >= DEFAULT_RESERVE),
            "{path:?}: {c:?}"
        );
        let f = GgufFile::open(path).unwrap();
        assert_eq!(slack_len(&f), Some(c.slack_bytes() as usize));
        assert!(f.lint_llama_cpp().is_empty(), "{:?}", f.lint_llama_cpp());
    }
    let m = Model::open(&shards[0].path).unwrap();
    assert_eq!(m.get_str("general.name").unwrap(), "n".repeat(200));
    assert_eq!(m.tensor(&long).unwrap().data().unwrap(), &[2; 4]);
    assert_eq!(m.split().unwrap().count, 3);
    drop(m);

    let inodes: Vec<u64> = shards.iter().map(|s| inode(&s.path)).collect();
    let mut ed = ModelEditor::open(&shards[2].path).unwrap();
    ed.set("general.name", "n".repeat(1200)).unwrap();
    ed.rename_tensor(long.clone(), "u".repeat(63)).unwrap();
    for (path, c) in ed.commit().unwrap() {
        assert!(matches!(c, Commit::InPlace { .. }), "{path:?}: {c:?}");
    }
    let now: Vec<u64> = shards.iter().map(|s| inode(&s.path)).collect();
    assert_eq!(now, inodes, "a shard was replaced");
    let m = Model::open(&shards[1].path).unwrap();
    assert_eq!(m.get_str("general.name").unwrap(), "n".repeat(1200));
    assert_eq!(m.tensor(&"u".repeat(63)).unwrap().data().unwrap(), &[2; 4]);

    // Turned off, a rewrite of a shard reserves nothing.
    let mut ed = ModelEditor::open(&shards[0].path).unwrap();
    ed.reserve_on_rewrite(0).unwrap();
    ed.remove(SLACK_KEY).unwrap();
    ed.rename_tensor("a", "v".repeat(63)).unwrap();
    let done = ed.commit().unwrap();
    assert!(done.iter().all(|(_, c)| c.slack_bytes() == 0), "{done:?}");
    assert_eq!(slack_len(&GgufFile::open(&shards[0].path).unwrap()), None);
}

// ---- errors ----

fn open_copy(dir: &Path, bytes: &[u8]) -> (std::path::PathBuf, Editor) {
    let path = put(dir, "m.gguf", bytes);
    let ed = Editor::open(&path).unwrap();
    (path, ed)
}

#[test]
fn invalid_edits_are_refused_and_leave_the_queue_usable() {
    let dir = tempfile::tempdir().unwrap();
    let before = model(Spec::default().slack(64));
    let (path, mut ed) = open_copy(dir.path(), &before);
    let e = ed.remove("no.such.key").unwrap_err();
    assert!(
        matches!(&e, Error::Lookup(LookupError::KeyNotFound { key }) if key == "no.such.key"),
        "{e:?}"
    );
    let e = ed
        .rename_key("general.name", "general.architecture")
        .unwrap_err();
    assert!(
        matches!(&e, Error::Build(BuildError::InvalidKey { key, .. }) if key == "general.architecture"),
        "{e:?}"
    );
    let e = ed.rename_key("no.such.key", "x").unwrap_err();
    assert!(
        matches!(&e, Error::Lookup(LookupError::KeyNotFound { .. })),
        "{e:?}"
    );
    let e = ed
        .rename_tensor("token_embd.weight", "output.weight")
        .unwrap_err();
    assert!(
        matches!(&e, Error::Build(BuildError::TensorExists { tensor }) if tensor == "output.weight"),
        "{e:?}"
    );
    let e = ed.rename_tensor("nope", "x").unwrap_err();
    assert!(
        matches!(&e, Error::Lookup(LookupError::TensorNotFound { .. })),
        "{e:?}"
    );
    // A removed key cannot be removed twice.
    ed.remove("general.file_type").unwrap();
    assert!(matches!(
        ed.remove("general.file_type").unwrap_err(),
        Error::Lookup(LookupError::KeyNotFound { .. })
    ));
    // Nothing was written so far.
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // The refused edits are not in the queue: only the removal lands.
    ed.commit().unwrap();
    let after = std::fs::read(&path).unwrap();
    let new = GgufFile::open(&after).unwrap();
    let mut expected = metadata(&GgufFile::open(&before).unwrap());
    expected.retain(|(k, _)| k != "general.file_type" && k != SLACK_KEY);
    let mut got = metadata(&new);
    got.retain(|(k, _)| k != SLACK_KEY);
    assert_eq!(got, expected);
    assert_eq!(
        tensor_hashes(&new),
        tensor_hashes(&GgufFile::open(&before).unwrap())
    );
}

#[test]
fn commit_after_another_in_place_edit_is_a_concurrent_modification() {
    let dir = tempfile::tempdir().unwrap();
    let before = model(Spec::default().slack(64));
    let (path, mut a) = open_copy(dir.path(), &before);
    a.set("general.name", "from a").unwrap();
    let mut b = Editor::open(&path).unwrap();
    b.set("general.name", "from b").unwrap();
    assert!(matches!(b.commit().unwrap(), Commit::InPlace { .. }));
    let after_b = std::fs::read(&path).unwrap();
    let e = a.commit().unwrap_err();
    assert!(
        matches!(e, Error::Edit(EditError::ConcurrentModification { .. })),
        "{e:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), after_b, "a's commit wrote");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn commit_after_the_file_was_rewritten_is_a_concurrent_modification() {
    let dir = tempfile::tempdir().unwrap();
    let before = model(Spec::default());
    // Another editor rewrites the file (new inode, same header size is
    // not needed: any replacement must be noticed).
    let (path, mut a) = open_copy(dir.path(), &before);
    a.set("llama.context_length", 1u32).unwrap();
    let mut b = Editor::open(&path).unwrap();
    b.set("general.name", "x".repeat(500)).unwrap();
    assert!(matches!(b.commit().unwrap(), Commit::Rewritten { .. }));
    let after_b = std::fs::read(&path).unwrap();
    let e = a.commit().unwrap_err();
    assert!(
        matches!(e, Error::Edit(EditError::ConcurrentModification { .. })),
        "{e:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), after_b);

    // A replacement with identical bytes (another tool copying the file
    // over it) is noticed too: the editor's view is of the old inode.
    let (path, mut a) = open_copy(dir.path(), &before);
    a.set("llama.context_length", 1u32).unwrap();
    let tmp = put(dir.path(), "copy.tmp", &before);
    std::fs::rename(&tmp, &path).unwrap();
    let e = a.commit().unwrap_err();
    assert!(
        matches!(e, Error::Edit(EditError::ConcurrentModification { .. })),
        "{e:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn commit_while_another_handle_holds_the_lock_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let before = model(Spec::default().slack(64));
    let (path, mut ed) = open_copy(dir.path(), &before);
    ed.set("general.name", "locked out").unwrap();
    let holder = std::fs::File::open(&path).unwrap();
    holder.try_lock().unwrap();
    let e = ed.commit().unwrap_err();
    assert!(matches!(e, Error::Edit(EditError::Locked { .. })), "{e:?}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(leftovers(dir.path()).is_empty());
    // Released: the same edit goes through.
    holder.unlock().unwrap();
    drop(holder);
    let mut ed = Editor::open(&path).unwrap();
    ed.set("general.name", "locked out").unwrap();
    ed.commit().unwrap();
    let after = std::fs::read(&path).unwrap();
    assert_eq!(
        GgufFile::open(&after)
            .unwrap()
            .get_str("general.name")
            .unwrap(),
        "locked out"
    );
}

#[test]
fn a_rewrite_commit_is_also_refused_while_locked() {
    let dir = tempfile::tempdir().unwrap();
    let before = model(Spec::default());
    let (path, mut ed) = open_copy(dir.path(), &before);
    ed.set("general.name", "x".repeat(1000)).unwrap();
    assert!(matches!(ed.plan().unwrap(), Commit::Rewritten { .. }));
    let holder = std::fs::File::open(&path).unwrap();
    holder.try_lock().unwrap();
    let e = ed.commit().unwrap_err();
    assert!(matches!(e, Error::Edit(EditError::Locked { .. })), "{e:?}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(leftovers(dir.path()).is_empty());
}

// ---- nothing is lost ----

/// Runs `gguf set` with a file-size limit below the file's size, so the
/// rewrite's temp file cannot be written (EFBIG, even as root).
fn gguf_set_with_fsize_limit(
    path: &Path,
    key: &str,
    value: &str,
    limit: u64,
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"));
    cmd.args(["set", path.to_str().unwrap(), key, value]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: limit as libc::rlim_t,
                rlim_max: limit as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn a_rewrite_that_fails_midway_leaves_the_original_and_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    // Large enough that the copy of the data section hits the limit.
    let small = model(Spec::default());
    let before = {
        // Append a big tensor so the data section dwarfs the limit.
        let file = GgufFile::open(&small).unwrap();
        let mut b = gguf::write::Builder::from_file(&file).unwrap();
        let big = super::edit_fixtures::noise(9, 1 << 20);
        b.add_tensor("big.weight", gguf::GgmlType::I8, &[1 << 20], big)
            .unwrap();
        let mut out = Vec::new();
        b.write(&mut out).unwrap();
        out
    };
    let path = put(dir.path(), "m.gguf", &before);
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let out = gguf_set_with_fsize_limit(&path, "general.name", &"x".repeat(2000), 256 << 10);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "rewrite succeeded under the limit");
    assert!(stderr.contains("I/O error"), "{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "original changed");
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
    // Without the limit the same edit goes through.
    let out = gguf_set_with_fsize_limit(&path, "general.name", &"x".repeat(2000), u64::MAX);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = std::fs::read(&path).unwrap();
    let new = GgufFile::open(&after).unwrap();
    assert_eq!(new.get_str("general.name").unwrap(), "x".repeat(2000));
    assert_eq!(
        tensor_hashes(&new),
        tensor_hashes(&GgufFile::open(&before).unwrap())
    );
}

#[test]
fn a_file_truncated_after_open_is_not_rewritten() {
    // The data section shrinks under the editor: the rewrite must not
    // produce a file with missing tensor bytes, nor touch the original.
    let dir = tempfile::tempdir().unwrap();
    let before = model(Spec::default());
    let (path, mut ed) = open_copy(dir.path(), &before);
    ed.set("general.name", "x".repeat(1000)).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(before.len() as u64 - 100).unwrap();
    drop(f);
    let truncated = std::fs::read(&path).unwrap();
    let e = ed.commit().unwrap_err();
    assert!(
        matches!(e, Error::Edit(EditError::ConcurrentModification { .. })),
        "{e:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), truncated);
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn rewrite_of_a_file_with_gaps_between_tensors_keeps_every_tensor() {
    // Non-contiguous (but aligned) tensor offsets: the data section cannot
    // be copied as one block; the rewrite lays the tensors out again.
    use gguf::testing::Raw;
    let mut r = Raw::default();
    r.header(2, 1).str("general.name").u32(8).str("gaps");
    r.tensor_info("a", &[8], 0, 0);
    r.tensor_info("b", &[8], 0, 96);
    r.pad(32);
    let data_offset = r.buf.len();
    r.buf.extend(super::edit_fixtures::noise(5, 32));
    r.buf.extend(std::iter::repeat_n(0xEE, 64)); // a gap of junk
    r.buf.extend(super::edit_fixtures::noise(6, 32));
    let before = r.buf.clone();
    let out = run_edit(before.clone(), |ed| {
        ed.set("general.name", "g".repeat(300)).unwrap();
    });
    out.assert_rewritten();
    out.assert_tensors_kept();
    assert_eq!(
        out.edited().get_str("general.name").unwrap(),
        "g".repeat(300)
    );
    // Laid out again: contiguous, the junk gap dropped.
    assert_eq!(out.edited().tensor("b").unwrap().offset(), 32);
    assert_eq!(
        out.after.len() as u64,
        out.edited().data_offset() + 64,
        "{data_offset}"
    );
}

#[test]
fn changing_the_alignment_rewrites_with_aligned_tensors() {
    for alignment in [64u32, 16] {
        let before = model(Spec::default().slack(256));
        let out = run_edit(before.clone(), |ed| {
            ed.set("general.alignment", alignment).unwrap();
        });
        out.assert_rewritten();
        out.assert_tensors_kept();
        let new = out.edited();
        assert_eq!(new.alignment(), u64::from(alignment));
        assert_eq!(new.data_offset() % u64::from(alignment), 0);
        for t in new.tensors() {
            assert_eq!(t.offset() % u64::from(alignment), 0, "{}", t.name());
        }
    }
}

/// Editing through a symbolic link edits the file it points to, both in
/// place and by rewrite, and a crash while editing through the link is
/// recovered when the file is opened by its real name (the journal lies
/// beside the real file).
#[test]
fn edits_through_a_symlink_reach_the_target() {
    for (spec, value) in [
        (Spec::default().slack(256), "x".repeat(30)),
        (Spec::default(), "x".repeat(3000)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let before = model(spec);
        let real = put(dir.path(), "real.gguf", &before);
        let link_dir = tempfile::tempdir().unwrap();
        let link = link_dir.path().join("link.gguf");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut ed = Editor::open(&link).unwrap();
        ed.set("general.name", value.as_str()).unwrap();
        ed.commit().unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link was replaced by a file"
        );
        let after = std::fs::read(&real).unwrap();
        let new = GgufFile::open(&after).unwrap();
        assert_eq!(new.get_str("general.name").unwrap(), value);
        assert!(leftovers(dir.path()).is_empty());
        assert!(leftovers(link_dir.path()).is_empty());
    }
    // A crash in the middle of an in-place edit made through the link.
    let dir = tempfile::tempdir().unwrap();
    let before = model(Spec::default().slack(256));
    let real = put(dir.path(), "real.gguf", &before);
    let link_dir = tempfile::tempdir().unwrap();
    let link = link_dir.path().join("link.gguf");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let mut ed = Editor::open(&link).unwrap();
    ed.set("general.name", "y".repeat(100)).unwrap();
    let r = ed.commit_with_hook(&mut |step| {
        if step == gguf::edit::Step::HeaderHalfWritten {
            Err(super::edit_fixtures::simulated_crash())
        } else {
            Ok(())
        }
    });
    assert!(super::edit_fixtures::is_simulated_crash(&r), "{r:?}");
    // Readers see the old version by either name, without writing.
    for name in [&real, &link] {
        let f = GgufFile::open(name).expect("the real file must open");
        assert_eq!(super::edit_fixtures::view(&f), before);
    }
    assert!(!leftovers(dir.path()).is_empty(), "the journal is kept");
    // The editor, opened by the link, repairs the real file.
    drop(Editor::open(&link).unwrap());
    assert_eq!(std::fs::read(&real).unwrap(), before);
    assert!(leftovers(dir.path()).is_empty());
    assert!(leftovers(link_dir.path()).is_empty());
}
