//! Crash safety of in-place edits: a commit stopped after each step (test
//! hook), damaged journals, and `gguf set` killed with SIGKILL at random
//! moments. After recovery the file is always exactly the old or the new
//! version, never a mix.

use std::path::Path;
use std::time::Duration;

use gguf::edit::{journal_path, Commit, Editor, Step};
use gguf::write::SLACK_KEY;
use gguf::Gguf;
use gguf::GgufFile;

use super::edit_fixtures::{
    is_simulated_crash, leftovers, metadata, model, padding, put, simulated_crash, tensor_hashes,
    view, Rng, Spec,
};

type Edit = fn(&mut Editor, &[u8]);

/// The in-place edits the crash tests are run with: (name, file, edit).
fn cases() -> Vec<(&'static str, Vec<u8>, Edit)> {
    fn same_size(ed: &mut Editor, _: &[u8]) {
        ed.set("llama.context_length", 8192u32).unwrap();
    }
    fn longer_in_block(ed: &mut Editor, before: &[u8]) {
        let f = GgufFile::open(before).unwrap();
        let n = f.get_str("general.name").unwrap().len() + padding(&f) as usize;
        ed.set("general.name", "L".repeat(n)).unwrap();
    }
    fn with_slack(ed: &mut Editor, _: &[u8]) {
        ed.set("general.name", "S".repeat(700)).unwrap();
        ed.set("tokenizer.ggml.add_bos_token", false).unwrap();
    }
    fn new_key_and_rename(ed: &mut Editor, _: &[u8]) {
        ed.set("general.license", "mit").unwrap();
        ed.rename_tensor("output.weight", "lm_head.weight").unwrap();
        ed.remove("general.parameter_count").unwrap();
    }
    // A file whose padding leaves room for a longer name.
    let padded = (9..80)
        .map(|n| model(Spec::default().name_len(n)))
        .find(|b| padding(&GgufFile::open(b).unwrap()) >= 8)
        .unwrap();
    vec![
        ("same size", model(Spec::default()), same_size as Edit),
        ("longer in block", padded, longer_in_block),
        ("slack", model(Spec::default().slack(1024)), with_slack),
        (
            "big-endian slack",
            model(Spec::default().big_endian().slack(1024)),
            with_slack,
        ),
        (
            "new key, rename, remove",
            model(Spec::default().slack(256)),
            new_key_and_rename,
        ),
    ]
}

/// The bytes the edit produces when nothing interrupts it.
fn expected_new(before: &[u8], edit: Edit) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = put(dir.path(), "m.gguf", before);
    let mut ed = Editor::open(&path).unwrap();
    edit(&mut ed, before);
    let commit = ed.commit().unwrap();
    assert!(
        matches!(commit, Commit::InPlace { .. }),
        "case must be in place: {commit:?}"
    );
    std::fs::read(&path).unwrap()
}

/// Commits `edit` to `path`, stopped right after `stop`.
fn interrupted_commit(path: &Path, before: &[u8], edit: Edit, stop: Step) {
    let mut ed = Editor::open(path).unwrap();
    edit(&mut ed, before);
    let mut seen = Vec::new();
    let result = ed.commit_with_hook(&mut |step| {
        seen.push(step);
        if step == stop {
            Err(simulated_crash())
        } else {
            Ok(())
        }
    });
    assert!(
        is_simulated_crash(&result),
        "commit was not stopped at {stop:?}: {result:?}"
    );
    assert_eq!(seen.last(), Some(&stop));
}

const STEPS: [Step; 3] = [
    Step::JournalWritten,
    Step::HeaderHalfWritten,
    Step::HeaderWritten,
];

#[test]
fn a_commit_stopped_after_any_step_recovers_to_old_or_new() {
    for (name, before, edit) in cases() {
        let new = expected_new(&before, edit);
        assert_ne!(new, before, "{name}: the edit changes nothing");
        for stop in STEPS {
            for recover_with_editor in [false, true] {
                let ctx = format!("{name}, stopped after {stop:?}, editor={recover_with_editor}");
                let dir = tempfile::tempdir().unwrap();
                let path = put(dir.path(), "m.gguf", &before);
                interrupted_commit(&path, &before, edit, stop);
                let journal = journal_path(&path);
                assert!(journal.exists(), "{ctx}: no journal left by the crash");
                let raw = std::fs::read(&path).unwrap();
                match stop {
                    Step::JournalWritten => assert_eq!(raw, before, "{ctx}: file touched"),
                    Step::HeaderWritten => assert_eq!(raw, new, "{ctx}: header not written"),
                    Step::HeaderHalfWritten => {}
                }
                // A reader sees the recovered version without writing it.
                let f = GgufFile::open(&path).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                let seen = view(&f);
                drop(f);
                assert_eq!(std::fs::read(&path).unwrap(), raw, "{ctx}: open wrote");
                assert!(journal.exists(), "{ctx}: open removed the journal");
                // Recovery that writes: by the editor or explicitly.
                let got = if recover_with_editor {
                    let ed = Editor::open(&path).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                    drop(ed);
                    std::fs::read(&path).unwrap()
                } else {
                    assert!(gguf::edit::recover(&path).unwrap(), "{ctx}");
                    std::fs::read(&path).unwrap()
                };
                assert_eq!(seen, got, "{ctx}: the reader saw another version");
                assert!(
                    got == before || got == new,
                    "{ctx}: the file is neither the old nor the new version"
                );
                assert_eq!(std::fs::read(&path).unwrap(), got, "{ctx}");
                assert!(!journal.exists(), "{ctx}: journal not removed");
                assert!(leftovers(dir.path()).is_empty(), "{ctx}");
                // The recovered file can be edited again to the new version.
                if got == before {
                    let mut ed = Editor::open(&path).unwrap();
                    edit(&mut ed, &before);
                    ed.commit().unwrap();
                    assert_eq!(std::fs::read(&path).unwrap(), new, "{ctx}: redo");
                }
            }
        }
    }
}

#[test]
fn a_damaged_journal_is_discarded_and_the_untouched_file_opens_as_old() {
    for (name, before, edit) in cases() {
        // A real journal, as the editor writes it.
        let dir = tempfile::tempdir().unwrap();
        let path = put(dir.path(), "m.gguf", &before);
        interrupted_commit(&path, &before, edit, Step::JournalWritten);
        let journal = std::fs::read(journal_path(&path)).unwrap();
        assert!(journal.len() > 64);
        let damaged: Vec<(&str, Vec<u8>)> = vec![
            ("empty", Vec::new()),
            ("cut in its header", journal[..10].to_vec()),
            ("cut after its header", journal[..32].to_vec()),
            ("cut in half", journal[..journal.len() / 2].to_vec()),
            ("last byte missing", journal[..journal.len() - 1].to_vec()),
            ("flipped byte", {
                let mut j = journal.clone();
                let i = j.len() - 7;
                j[i] ^= 0x55;
                j
            }),
        ];
        for (what, bytes) in damaged {
            let ctx = format!("{name}: journal {what}");
            let dir = tempfile::tempdir().unwrap();
            let path = put(dir.path(), "m.gguf", &before);
            std::fs::write(journal_path(&path), &bytes).unwrap();
            let f = GgufFile::open(&path).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert_eq!(view(&f), before, "{ctx}");
            assert!(
                journal_path(&path).exists(),
                "{ctx}: open removed the journal"
            );
            drop(Editor::open(&path).unwrap_or_else(|e| panic!("{ctx}: {e}")));
            assert!(!journal_path(&path).exists(), "{ctx}: journal kept");
            assert_eq!(std::fs::read(&path).unwrap(), before, "{ctx}");
        }
        // The intact journal restores the old header over a half-written one.
        let dir = tempfile::tempdir().unwrap();
        let path = put(dir.path(), "m.gguf", &before);
        interrupted_commit(&path, &before, edit, Step::HeaderHalfWritten);
        let f = GgufFile::open(&path).unwrap();
        assert_eq!(view(&f), before, "{name}: intact journal not applied");
    }
}

/// A leftover journal beside a file in a read-only directory: opening (the
/// library and `gguf inspect`) shows the version before the interrupted
/// edit and writes nothing; the editor repairs the file once it may write.
#[test]
fn a_read_only_file_with_a_journal_opens_as_old_without_writing() {
    use std::os::unix::fs::PermissionsExt;
    let (name, before, edit) = cases().swap_remove(2);
    let dir = tempfile::tempdir().unwrap();
    let path = put(dir.path(), "m.gguf", &before);
    interrupted_commit(&path, &before, edit, Step::HeaderHalfWritten);
    let journal = journal_path(&path);
    let raw = std::fs::read(&path).unwrap();
    assert_ne!(raw, before, "{name}: the crash left the old file");
    let saved = std::fs::read(&journal).unwrap();
    let mtimes = || [&path, &journal].map(|p| std::fs::metadata(p).unwrap().modified().unwrap());
    let before_mtimes = mtimes();
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    mode(&path, 0o444).unwrap();
    mode(dir.path(), 0o555).unwrap();
    // As root the permission bits stop no write: then only the checks
    // below that nothing changed hold the reader to its promise.
    let enforced = std::fs::File::create(dir.path().join("probe")).is_err();
    if !enforced {
        eprintln!("running as root: permission bits not enforced, checking that nothing changed");
    }

    let f = GgufFile::open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(view(&f), before, "{name}: not the old version");
    drop(f);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
        .args(["inspect", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&path).unwrap(), raw, "{name}: file written");
    assert_eq!(
        std::fs::read(&journal).unwrap(),
        saved,
        "{name}: journal changed"
    );
    assert_eq!(mtimes(), before_mtimes, "{name}: touched");
    if enforced {
        assert!(
            Editor::open(&path).is_err(),
            "{name}: repaired a read-only file"
        );
    }

    mode(dir.path(), 0o755).unwrap();
    mode(&path, 0o644).unwrap();
    let _ = std::fs::remove_file(dir.path().join("probe"));
    drop(Editor::open(&path).unwrap());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "{name}: not repaired"
    );
    assert!(!journal.exists(), "{name}: journal kept");
}

/// SIGKILL `gguf set` at random moments; after each kill the file must
/// open as the version before that edit or the version after it.
#[test]
fn gguf_set_killed_at_random_moments_never_corrupts_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let original = model(Spec::default().slack(4096));
    let path = put(dir.path(), "m.gguf", &original);
    let orig = GgufFile::open(&original).unwrap();
    let orig_hashes = tensor_hashes(&orig);
    let orig_data = original[orig.data_offset() as usize..].to_vec();
    let others = |m: Vec<(String, gguf::write::OwnedValue)>| {
        m.into_iter()
            .filter(|(k, _)| k != "general.name" && k != SLACK_KEY)
            .collect::<Vec<_>>()
    };
    let orig_others = others(metadata(&orig));

    // How long one uninterrupted `gguf set` takes here (on a scratch
    // copy): delays are spread over 0..5 ms, or over the whole run when
    // it is slower, so that kills land in every phase of the commit.
    let scratch = put(dir.path(), "scratch.gguf", &original);
    let mut runs: Vec<Duration> = (0..3)
        .map(|k| {
            let t = std::time::Instant::now();
            let st = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
                .args([
                    "set",
                    scratch.to_str().unwrap(),
                    "general.name",
                    &format!("c{k}"),
                ])
                .output()
                .unwrap();
            assert!(st.status.success());
            t.elapsed()
        })
        .collect();
    runs.sort();
    std::fs::remove_file(&scratch).unwrap();
    let span = runs[1].as_micros().max(5000) as u64 * 5 / 4;

    let mut rng = Rng(0x5EED_0FC4_A5A5);
    let mut mid_commit = 0;
    let mut current = orig.get_str("general.name").unwrap().to_owned();
    let (mut old_count, mut new_count) = (0, 0);
    let started = std::time::Instant::now();
    for i in 0..50 {
        // Lengths vary so the slack grows and shrinks.
        let value = format!("name-{i}-{}", "v".repeat(rng.below(600) as usize));
        let delay = Duration::from_micros(rng.below(span));
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
            .args(["set", path.to_str().unwrap(), "general.name", &value])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL; fails only if it already exited
        child.wait().unwrap();
        if journal_path(&path).exists() {
            mid_commit += 1;
        }

        let f = GgufFile::open(&path)
            .unwrap_or_else(|e| panic!("iteration {i}: file does not open: {e}"));
        let name = f.get_str("general.name").unwrap().to_owned();
        if name == value {
            new_count += 1;
        } else {
            assert_eq!(name, current, "iteration {i}: unknown general.name");
            old_count += 1;
        }
        assert_eq!(f.file_len(), original.len() as u64, "iteration {i}");
        assert_eq!(f.data_offset(), orig.data_offset(), "iteration {i}");
        assert!(
            f.data_section().unwrap() == &orig_data[..],
            "iteration {i}: tensor data changed"
        );
        assert_eq!(tensor_hashes(&f), orig_hashes, "iteration {i}");
        assert_eq!(others(metadata(&f)), orig_others, "iteration {i}");
        current = name;
    }
    // The last kill may have left a journal; readers left it alone.
    gguf::edit::recover(&path).unwrap();
    assert_eq!(
        GgufFile::open(&path)
            .unwrap()
            .get_str("general.name")
            .unwrap(),
        current
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    eprintln!(
        "killed edits (delays 0..{span} us): {old_count} left the old version, \
         {new_count} completed, {mid_commit} killed mid-commit (journal present)"
    );
}

/// Kills land during recovery too: several `gguf set` runs are killed in
/// a row without the file being opened in between, so each run starts by
/// recovering what the previous one left (and may itself be killed while
/// doing so). Every few kills the file must open as one of the versions
/// written since the last check.
#[test]
fn kills_during_recovery_are_recovered_too() {
    let dir = tempfile::tempdir().unwrap();
    let original = model(Spec::default().slack(2048));
    let path = put(dir.path(), "m.gguf", &original);
    let orig = GgufFile::open(&original).unwrap();
    let orig_hashes = tensor_hashes(&orig);
    let mut rng = Rng(0xC0FF_EE00_1234_5678);
    let mut candidates = vec![orig.get_str("general.name").unwrap().to_owned()];
    for i in 0..40 {
        let value = format!("r{i}-{}", "w".repeat(rng.below(400) as usize));
        candidates.push(value.clone());
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
            .args(["set", path.to_str().unwrap(), "general.name", &value])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(20_000)));
        let _ = child.kill();
        child.wait().unwrap();
        if i % 5 == 4 {
            let f = GgufFile::open(&path)
                .unwrap_or_else(|e| panic!("iteration {i}: file does not open: {e}"));
            let name = f.get_str("general.name").unwrap().to_owned();
            assert!(
                candidates.contains(&name),
                "iteration {i}: general.name {name:?} was never written"
            );
            assert_eq!(tensor_hashes(&f), orig_hashes, "iteration {i}");
            assert_eq!(f.file_len(), original.len() as u64);
            // The repair writes what the reader showed.
            gguf::edit::recover(&path).unwrap();
            assert!(!journal_path(&path).exists());
            let fixed = GgufFile::open(&path).unwrap();
            assert_eq!(fixed.get_str("general.name").unwrap(), name);
            candidates = vec![name];
        }
    }
}

/// Several `gguf set` processes at once: each either commits or is
/// refused (lock held, or the file changed under it); the file ends as
/// one of the written versions.
#[test]
fn concurrent_gguf_set_processes_never_corrupt_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let original = model(Spec::default().slack(2048));
    let path = put(dir.path(), "m.gguf", &original);
    let orig = GgufFile::open(&original).unwrap();
    let values: Vec<String> = (0..12)
        .map(|i| format!("c{i}-{}", "q".repeat(i * 37)))
        .collect();
    let children: Vec<_> = values
        .iter()
        .map(|v| {
            std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
                .args(["set", path.to_str().unwrap(), "general.name", v])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut committed = Vec::new();
    for (child, v) in children.into_iter().zip(&values) {
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            committed.push(v.clone());
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("advisory lock") || err.contains("changed on disk"),
                "unexpected failure: {err}"
            );
        }
    }
    assert!(!committed.is_empty(), "no process committed");
    let f = GgufFile::open(&path).unwrap();
    let name = f.get_str("general.name").unwrap();
    assert!(
        committed.iter().any(|v| v == name),
        "{name:?} not committed"
    );
    assert_eq!(tensor_hashes(&f), tensor_hashes(&orig));
    assert!(leftovers(dir.path()).is_empty());
}
