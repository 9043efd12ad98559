//! Outputs that are inputs, outputs that are not regular files, inputs
//! that are not regular files (issue 32, items 1 to 3), and `check` on a
//! missing file beside a leftover temporary file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use gguf::error::{BuildError, SourceError};
use gguf::import::{import_model, ImportOptions, OutType, Target};
use gguf::Error;
use gguf_core::testing::mkfifo;

use super::util::gguf;

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/tiny-llama.gguf")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/import")
        .join(name)
}

/// A directory holding `model.gguf`, a copy of the sample model.
fn model_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    std::fs::copy(sample(), &path).unwrap();
    (dir, path)
}

/// A copy of the import fixture `name` in a temporary directory.
fn checkpoint(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join(name);
    std::fs::create_dir(&to).unwrap();
    for e in std::fs::read_dir(fixture(name)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    (dir, to)
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_fifo()
}

/// Runs `gguf args`, killed after 60 s (a read of a FIFO blocks forever):
/// the test then fails saying it hung.
fn gguf_bounded(args: &[&std::ffi::OsStr]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gguf"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gguf {args:?} did not finish in 60 s (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn os(p: &Path) -> &std::ffi::OsStr {
    p.as_os_str()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The command failed with status 1 and a message naming every one of
/// `names`.
fn fails_naming(o: &Output, names: &[&Path]) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for name in names {
        assert!(err.contains(&*name.to_string_lossy()), "{err}");
    }
    err
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".gguf-"))
        .collect()
}

// ---- 1. the output is one of the inputs ----

#[test]
fn import_refuses_to_write_over_a_file_of_the_checkpoint() {
    let (_tmp, dir) = checkpoint("llama-spm");
    for name in ["model.safetensors", "config.json", "tokenizer.model"] {
        let input = dir.join(name);
        let before = std::fs::read(&input).unwrap();
        let o = gguf(&[os("import".as_ref()), os(&dir), os(&input)]);
        let err = fails_naming(&o, &[&input]);
        assert!(err.contains("which this command reads"), "{err}");
        assert_eq!(std::fs::read(&input).unwrap(), before, "{name} changed");
    }
    // The same through the library, and through another spelling.
    let spelled = dir.join(".").join("config.json");
    let err = import_model(
        &dir,
        &spelled,
        &ImportOptions::new(Target::Float(OutType::F16)),
        |_, _, _| {},
    )
    .unwrap_err();
    match err {
        gguf::import::Error::Gguf(Error::Build(BuildError::OutputIsInput {
            output,
            input,
            ..
        })) => {
            assert_eq!(output, spelled);
            assert_eq!(input, dir.join("config.json"));
        }
        other => panic!("{other}"),
    }
    // The importance matrix given is an input too (a preset needs one).
    let imatrix = dir.join("imatrix.dat");
    std::fs::write(&imatrix, b"not read").unwrap();
    let o = gguf(&[
        os("import".as_ref()),
        os(&dir),
        os(&imatrix),
        os("--type".as_ref()),
        os("q4_k_m".as_ref()),
        os("--imatrix".as_ref()),
        os(&imatrix),
    ]);
    fails_naming(&o, &[&imatrix]);
    assert_eq!(std::fs::read(&imatrix).unwrap(), b"not read");
    // A GGUF written beside the checkpoint is fine.
    let out = dir.join("model.gguf");
    let o = gguf(&[os("import".as_ref()), os(&dir), os(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn writing_commands_refuse_an_output_that_is_their_input() {
    let (dir, model) = model_dir();
    let before = std::fs::read(&model).unwrap();
    let hard = dir.path().join("page.html");
    std::fs::hard_link(&model, &hard).unwrap();
    let imatrix = dir.path().join("imatrix.dat");
    std::fs::write(&imatrix, b"an importance matrix").unwrap();
    let m = os(&model);
    let cases: Vec<(Vec<&std::ffi::OsStr>, &Path)> = vec![
        (
            vec![os("report".as_ref()), m, os("-o".as_ref()), os(&hard)],
            &hard,
        ),
        (
            vec![
                os("tensor".as_ref()),
                m,
                os("token_embd.weight".as_ref()),
                os("--npy".as_ref()),
                m,
            ],
            &model,
        ),
        (vec![os("merge".as_ref()), m, m], &model),
        (
            vec![
                os("imatrix".as_ref()),
                os("convert".as_ref()),
                os(&imatrix),
                os(&imatrix),
                os("--to".as_ref()),
                os("gguf".as_ref()),
            ],
            &imatrix,
        ),
        (
            vec![
                os("quantize".as_ref()),
                os("--imatrix".as_ref()),
                os(&imatrix),
                m,
                os(&imatrix),
                os("Q4_K_M".as_ref()),
            ],
            &imatrix,
        ),
    ];
    for (args, output) in cases {
        let o = gguf(&args);
        let err = fails_naming(&o, &[output]);
        assert!(err.contains("which this command reads"), "{args:?}: {err}");
        assert_eq!(std::fs::read(&model).unwrap(), before, "{args:?}");
        assert!(temp_files(dir.path()).is_empty(), "{args:?}");
    }
    assert_eq!(std::fs::read(&imatrix).unwrap(), b"an importance matrix");
}

#[test]
fn a_split_model_is_replaced_whole_or_not_at_all() {
    let (dir, model) = model_dir();
    let prefix = dir.path().join("m");
    let o = gguf(&[
        os("split".as_ref()),
        os(&model),
        os(&prefix),
        os("--max-tensors".as_ref()),
        os("6".as_ref()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = dir.path().join("m-00001-of-00004.gguf");
    let second = dir.path().join("m-00002-of-00004.gguf");
    let before = std::fs::read(&second).unwrap();
    // A merged or converted file over one shard would leave the others.
    for args in [
        vec![os("merge".as_ref()), os(&first), os(&second)],
        vec![
            os("convert".as_ref()),
            os(&first),
            os(&second),
            os("--type".as_ref()),
            os("F16".as_ref()),
        ],
        vec![os("rewrite".as_ref()), os(&second), os(&first)],
    ] {
        let o = gguf(&args);
        fails_naming(&o, &[]);
        assert!(
            stderr(&o).contains("which this command reads"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(&second).unwrap(), before);
    }
    // The same shards again: every file replaced, as before this change.
    let o = gguf(&[
        os("split".as_ref()),
        os(&second),
        os(&prefix),
        os("--max-tensors".as_ref()),
        os("6".as_ref()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&second).unwrap(), before);
}

#[test]
fn rewrite_and_quantize_may_still_replace_their_own_input() {
    let (_dir, model) = model_dir();
    let o = gguf(&[os("rewrite".as_ref()), os(&model), os(&model)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gguf(&[
        os("quantize".as_ref()),
        os("--allow-requantize".as_ref()),
        os(&model),
        os(&model),
        os("Q8_0".as_ref()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let quantized = gguf::Model::open(&model).unwrap();
    assert_eq!(
        gguf::Gguf::get::<u32>(&quantized, "general.file_type").unwrap(),
        7
    );
}

// ---- 2. special files at the output path ----

#[test]
fn a_fifo_at_the_output_path_is_refused_and_left_alone() {
    let (dir, model) = model_dir();
    let (_ck, ckpt) = checkpoint("llama-spm");
    let fifo = dir.path().join("out.gguf");
    mkfifo(&fifo);
    let link = dir.path().join("link.html");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let m = os(&model);
    let cases: Vec<(Vec<&std::ffi::OsStr>, &Path)> = vec![
        (
            vec![os("report".as_ref()), m, os("-o".as_ref()), os(&link)],
            &link,
        ),
        (vec![os("rewrite".as_ref()), m, os(&fifo)], &fifo),
        (vec![os("merge".as_ref()), m, os(&fifo)], &fifo),
        (
            vec![
                os("quantize".as_ref()),
                os("--allow-requantize".as_ref()),
                m,
                os(&fifo),
                os("Q8_0".as_ref()),
            ],
            &fifo,
        ),
        (vec![os("import".as_ref()), os(&ckpt), os(&fifo)], &fifo),
        (
            vec![
                os("tensor".as_ref()),
                m,
                os("token_embd.weight".as_ref()),
                os("--npy".as_ref()),
                os(&fifo),
            ],
            &fifo,
        ),
    ];
    for (args, named) in cases {
        let o = gguf_bounded(&args);
        let err = fails_naming(&o, &[named]);
        assert!(
            err.contains("the output is a FIFO, not a regular file"),
            "{args:?}: {err}"
        );
        assert!(is_fifo(&fifo), "{args:?}: the FIFO was replaced");
        assert!(temp_files(dir.path()).is_empty(), "{args:?}");
    }
    // A shard of a split output.
    let shard = dir.path().join("s-00002-of-00004.gguf");
    mkfifo(&shard);
    let o = gguf_bounded(&[
        os("split".as_ref()),
        m,
        os(&dir.path().join("s")),
        os("--max-tensors".as_ref()),
        os("6".as_ref()),
    ]);
    fails_naming(&o, &[&shard]);
    assert!(is_fifo(&shard));
    assert!(!dir.path().join("s-00001-of-00004.gguf").exists());
}

#[test]
fn a_symlink_to_a_regular_file_is_replaced_by_the_output_as_before() {
    let (dir, model) = model_dir();
    let target = dir.path().join("target.gguf");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.gguf");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = gguf(&[os("rewrite".as_ref()), os(&model), os(&link)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The link's name holds the new file; the file it pointed to is as it
    // was.
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    assert_eq!(
        std::fs::read(&link).unwrap(),
        std::fs::read(&model).unwrap()
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"old");
}

// ---- 3. inputs that are not regular files ----

#[test]
fn import_refuses_a_fifo_or_a_device_among_the_checkpoint_files() {
    for (name, special) in [
        ("config.json", "fifo"),
        ("model.safetensors", "fifo"),
        ("generation_config.json", "fifo"),
        ("config.json", "/dev/zero"),
        ("tokenizer_config.json", "/dev/zero"),
    ] {
        let (_tmp, dir) = checkpoint("llama-spm");
        let path = dir.join(name);
        std::fs::remove_file(&path).unwrap();
        let kind = if special == "fifo" {
            mkfifo(&path);
            "a FIFO"
        } else {
            std::os::unix::fs::symlink(special, &path).unwrap();
            "a character device"
        };
        let out = dir.join("out.gguf");
        let o = gguf_bounded(&[os("import".as_ref()), os(&dir), os(&out)]);
        let err = fails_naming(&o, &[&path]);
        assert!(
            err.contains(&format!("is {kind}, not a regular file")),
            "{name}: {err}"
        );
        assert!(!out.exists());
    }
}

#[test]
fn a_json_input_above_the_cap_is_refused_naming_it() {
    let (_tmp, dir) = checkpoint("llama-spm");
    let path = dir.join("config.json");
    // Sparse: no disk space taken, and refused by its size before a read.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(gguf::read::MAX_TEXT_INPUT + 1).unwrap();
    drop(f);
    let err = import_model(
        &dir,
        dir.join("out.gguf"),
        &ImportOptions::new(Target::Float(OutType::F16)),
        |_, _, _| {},
    )
    .unwrap_err();
    assert!(
        matches!(&err, gguf::import::Error::Gguf(Error::Source(SourceError::TooLarge { path: p, .. })) if *p == path),
        "{err}"
    );
    assert!(
        err.to_string().contains("more than the 268435456 bytes"),
        "{err}"
    );
}

#[test]
fn a_checkpoint_of_symlinks_to_blobs_imports_as_its_copy() {
    // The Hugging Face cache: snapshots/REV/NAME -> ../../blobs/HASH.
    let tmp = tempfile::tempdir().unwrap();
    let blobs = tmp.path().join("blobs");
    let snapshot = tmp.path().join("snapshots").join("rev");
    std::fs::create_dir_all(&blobs).unwrap();
    std::fs::create_dir_all(&snapshot).unwrap();
    for (i, e) in std::fs::read_dir(fixture("llama-spm")).unwrap().enumerate() {
        let e = e.unwrap();
        let blob = blobs.join(format!("blob{i}"));
        std::fs::copy(e.path(), &blob).unwrap();
        let relative = Path::new("../../blobs").join(format!("blob{i}"));
        std::os::unix::fs::symlink(relative, snapshot.join(e.file_name())).unwrap();
    }
    let options = ImportOptions::new(Target::Float(OutType::F16));
    let linked = tmp.path().join("linked.gguf");
    import_model(&snapshot, &linked, &options, |_, _, _| {}).unwrap();
    let (_c, copy) = checkpoint("llama-spm");
    let copied = tmp.path().join("copied.gguf");
    import_model(&copy, &copied, &options, |_, _, _| {}).unwrap();
    // The directory's name differs (general.name comes from it): compare
    // the tensors.
    let a = gguf::Model::open(&linked).unwrap();
    let b = gguf::Model::open(&copied).unwrap();
    use gguf::Gguf;
    let names = |m: &gguf::Model<'_>| m.tensors().map(|t| t.name().to_owned()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for t in a.tensors() {
        assert_eq!(
            t.data().unwrap(),
            b.tensor(t.name()).unwrap().data().unwrap()
        );
    }
}

#[test]
fn reading_commands_refuse_a_fifo_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("model.gguf");
    mkfifo(&fifo);
    for args in [
        vec![os("inspect".as_ref()), os(&fifo)],
        vec![os("check".as_ref()), os(&fifo)],
        vec![
            os("set".as_ref()),
            os(&fifo),
            os("general.name".as_ref()),
            os("x".as_ref()),
        ],
    ] {
        let o = gguf_bounded(&args);
        let err = fails_naming(&o, &[&fifo]);
        assert!(
            err.contains("is a FIFO, not a regular file"),
            "{args:?}: {err}"
        );
    }
    // An importance matrix.
    let model = dir.path().join("m.gguf");
    std::fs::copy(sample(), &model).unwrap();
    let o = gguf_bounded(&[
        os("quantize".as_ref()),
        os("--imatrix".as_ref()),
        os(&fifo),
        os(&model),
        os(&dir.path().join("out.gguf")),
        os("Q4_K_M".as_ref()),
    ]);
    let err = fails_naming(&o, &[&fifo]);
    assert!(err.contains("is a FIFO, not a regular file"), "{err}");
}

// ---- 15. `check` on a missing file beside a leftover ----

#[test]
fn check_of_a_missing_file_says_so_and_calls_the_leftover_a_leftover() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("out.gguf");
    let o = gguf(&[os("check".as_ref()), os(&missing)]);
    let err = fails_naming(&o, &[&missing]);
    assert!(!err.contains(".gguf-"), "{err}");

    // What a killed write leaves: its temporary file, unlocked.
    let left = dir.path().join(".gguf-AbC123.tmp");
    std::fs::copy(sample(), &left).unwrap();
    let o = gguf(&[os("check".as_ref()), os(&missing)]);
    let err = fails_naming(&o, &[&missing, &left]);
    assert_eq!(
        err.trim_end(),
        format!(
            "gguf: {}: no such file; beside it, {:?} is a temporary file left by an \
             interrupted write (no process is writing it): not this file, and safe to remove \
             with rm",
            missing.display(),
            left.display().to_string()
        )
    );
}
