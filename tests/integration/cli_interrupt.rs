//! SIGINT, SIGTERM and SIGKILL while the `gguf` binary writes: the
//! original is untouched, the temporary files go (or, after SIGKILL, are
//! named by `gguf check`), and errors name the output, never a temporary
//! file. The writes are paused at a known point by gguf-core's test hook
//! (`testing::PAUSE_BEFORE_RENAME`), so no test depends on timing.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use gguf::testing::{PAUSE_AFTER_RENAME, PAUSE_BEFORE_RENAME};

use super::util::gguf;

/// How long a debug binary may take to reach the pause, or to exit.
const PATIENCE: Duration = Duration::from_secs(120);

/// A running `gguf`, killed if the test ends before it does.
struct Running {
    child: std::process::Child,
    marker: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Starts `gguf args` with the pause hook `var` set.
    fn start(dir: &Path, var: &str, args: &[&str]) -> Running {
        Running::start_with(dir, var, args, |_| {})
    }

    /// [`start`](Running::start), after `setup` has its say on the command.
    fn start_with(
        dir: &Path,
        var: &str,
        args: &[&str],
        setup: impl FnOnce(&mut Command),
    ) -> Running {
        let marker = dir.join("paused.marker");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gguf"));
        cmd.args(args)
            .env(var, &marker)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // The child starts with SIGINT and SIGTERM at their defaults, as
        // from an interactive shell, whatever the test run inherited: a
        // suite started as a background job of a script has SIGINT
        // ignored, and `gguf` rightly keeps it ignored then. `setup` may
        // still change them (its pre_exec runs after this one).
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                Ok(())
            });
        }
        setup(&mut cmd);
        let child = cmd.spawn().expect("run gguf");
        Running { child, marker }
    }

    /// Waits until the write is paused at the hook.
    fn wait_for_pause(&mut self) {
        let start = Instant::now();
        while !self.marker.exists() {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut err)
                    .unwrap();
                panic!("gguf ended ({status}) before the pause: {err}");
            }
            assert!(start.elapsed() < PATIENCE, "gguf never reached the pause");
            std::thread::sleep(Duration::from_millis(10));
        }
        std::fs::remove_file(&self.marker).unwrap();
    }

    fn signal(&self, signal: i32) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill has no memory-safety preconditions; `pid` is our
        // child, not yet waited for, so the id still names it.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill failed");
    }

    /// The exit status, after at most PATIENCE.
    fn wait(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < PATIENCE, "gguf did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The `.gguf-*.tmp` files in `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(".gguf-") && name.ends_with(".tmp")
        })
        .collect();
    v.sort();
    v
}

/// Every file name in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A directory holding `model.gguf`, a copy of the sample model.
fn model_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf"),
        &path,
    )
    .unwrap();
    (dir, path)
}

/// Runs `args` (which write into `dir`, `{model}` standing for the
/// model's path), pauses it just before its rename, sends `signal`, and
/// checks what the issue asks: `temps` temporary files while paused,
/// then exit status `expected`, the model untouched, no temporary file
/// left. Returns the names in `dir`.
fn interrupt(args: &[&str], temps: usize, signal: i32, expected: i32) -> Vec<String> {
    let (dir, model) = model_dir();
    let before = std::fs::read(&model).unwrap();
    let m = model.to_str().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{model}", m).replace("{out}", o))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut run = Running::start(dir.path(), PAUSE_BEFORE_RENAME, &args);
    run.wait_for_pause();
    assert_eq!(
        temp_files(dir.path()).len(),
        temps,
        "temporary files while paused: {:?}",
        names(dir.path())
    );
    run.signal(signal);
    let status = run.wait();
    assert_eq!(status.code(), Some(expected), "{args:?}: {status}");
    assert_eq!(
        std::fs::read(&model).unwrap(),
        before,
        "{args:?}: model changed"
    );
    assert_eq!(temp_files(dir.path()), Vec::<PathBuf>::new(), "{args:?}");
    names(dir.path())
}

#[test]
fn sigint_during_rewrite_in_place_removes_the_temp_file_and_exits_130() {
    let left = interrupt(
        &["rewrite", "{model}", "{model}", "--endian", "big"],
        1,
        libc::SIGINT,
        130,
    );
    assert_eq!(left, ["model.gguf"]);
}

#[test]
fn sigterm_during_rewrite_exits_143_and_writes_nothing() {
    let left = interrupt(&["rewrite", "{model}", "{out}.gguf"], 1, libc::SIGTERM, 143);
    assert_eq!(left, ["model.gguf"]);
}

#[test]
fn sigint_during_convert_removes_the_temp_file() {
    let left = interrupt(
        &["convert", "{model}", "{out}.gguf", "--type", "F16"],
        1,
        libc::SIGINT,
        130,
    );
    assert_eq!(left, ["model.gguf"]);
}

#[test]
fn sigint_during_quantize_removes_the_temp_file() {
    let left = interrupt(
        &[
            "quantize",
            "--allow-requantize",
            "{model}",
            "{out}.gguf",
            "Q4_K_M",
        ],
        1,
        libc::SIGINT,
        130,
    );
    assert_eq!(left, ["model.gguf"]);
}

#[test]
fn sigterm_during_split_removes_every_shard_s_temp_file() {
    // All shards are complete temporary files at the pause; none may stay.
    let left = interrupt(
        &["split", "{model}", "{out}", "--max-tensors", "6"],
        4,
        libc::SIGTERM,
        143,
    );
    assert_eq!(left, ["model.gguf"]);
}

#[test]
fn sigint_during_merge_removes_the_temp_file() {
    let (dir, model) = model_dir();
    let prefix = dir.path().join("part");
    let out = gguf(&[
        "split",
        model.to_str().unwrap(),
        prefix.to_str().unwrap(),
        "--max-tensors",
        "6",
    ]);
    assert!(out.status.success(), "{out:?}");
    let shard = dir.path().join("part-00001-of-00004.gguf");
    let shards_before: Vec<Vec<u8>> = (1..=4)
        .map(|k| std::fs::read(dir.path().join(format!("part-0000{k}-of-00004.gguf"))).unwrap())
        .collect();
    let merged = dir.path().join("merged.gguf");
    let mut run = Running::start(
        dir.path(),
        PAUSE_BEFORE_RENAME,
        &["merge", shard.to_str().unwrap(), merged.to_str().unwrap()],
    );
    run.wait_for_pause();
    assert_eq!(temp_files(dir.path()).len(), 1);
    run.signal(libc::SIGINT);
    assert_eq!(run.wait().code(), Some(130));
    assert!(temp_files(dir.path()).is_empty());
    assert!(!merged.exists());
    for (k, bytes) in shards_before.iter().enumerate() {
        let path = dir.path().join(format!("part-0000{}-of-00004.gguf", k + 1));
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "shard {k} changed");
    }
}

#[test]
fn sigterm_during_set_that_rewrites_removes_the_temp_file() {
    // A name far longer than the header's padding cannot go in place.
    let long = "x".repeat(20_000);
    let left = interrupt(
        &["set", "{model}", "general.name", &long],
        1,
        libc::SIGTERM,
        143,
    );
    assert_eq!(left, ["model.gguf"]);
}

#[test]
fn a_signal_after_the_rename_keeps_the_new_file() {
    // The handler removes only files still temporary: a rename it raced
    // with must stand.
    let (dir, model) = model_dir();
    let out = dir.path().join("out.gguf");
    let mut run = Running::start(
        dir.path(),
        PAUSE_AFTER_RENAME,
        &["rewrite", model.to_str().unwrap(), out.to_str().unwrap()],
    );
    run.wait_for_pause();
    run.signal(libc::SIGINT);
    assert_eq!(run.wait().code(), Some(130));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&model).unwrap());
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn sigint_ignored_at_start_stays_ignored() {
    // As a shell starts a script's background jobs: Ctrl-C must not reach
    // them. SIGTERM still cleans up.
    use std::os::unix::process::CommandExt;
    let (dir, model) = model_dir();
    let m = model.to_str().unwrap();
    let mut run = Running::start_with(dir.path(), PAUSE_BEFORE_RENAME, &["rewrite", m, m], |cmd| {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                Ok(())
            });
        }
    });
    run.wait_for_pause();
    // Were SIGINT handled, it would be seen first (the lower number is
    // delivered first) and the status would be 130.
    run.signal(libc::SIGINT);
    run.signal(libc::SIGTERM);
    assert_eq!(run.wait().code(), Some(143));
    assert_eq!(names(dir.path()), ["model.gguf"]);
}

/// Runs a README clean-up command with `dir` as `$1`.
fn sh(script: &str, dir: &Path) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("sh")
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn a_temp_file_left_by_sigkill_is_named_by_check_until_removed() {
    let (dir, model) = model_dir();
    let before = std::fs::read(&model).unwrap();
    let m = model.to_str().unwrap();
    let mut killed = Running::start(dir.path(), PAUSE_BEFORE_RENAME, &["rewrite", m, m]);
    killed.wait_for_pause();
    let temps = temp_files(dir.path());
    assert_eq!(temps.len(), 1);

    // While the write runs, its temporary file is not stale.
    let check = gguf(&["check", m]);
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(!text.contains(".gguf-"), "{text}");

    killed.signal(libc::SIGKILL);
    assert_eq!(killed.wait().signal(), Some(libc::SIGKILL));
    assert_eq!(std::fs::read(&model).unwrap(), before);
    assert_eq!(temp_files(dir.path()), temps, "SIGKILL cannot clean up");
    let stale = temps[0].to_str().unwrap();

    // Another write into the same directory, still running.
    let mut running = Running::start(dir.path(), PAUSE_BEFORE_RENAME, &["rewrite", m, m]);
    running.wait_for_pause();
    let all = temp_files(dir.path());
    assert_eq!(all.len(), 2);
    let live = all.iter().find(|p| **p != temps[0]).unwrap().clone();

    let check = gguf(&["check", m]);
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "the model itself is fine: {check:?}"
    );
    assert!(
        text.contains(&format!(
            "note: {stale:?} is a temporary file left by an interrupted write"
        )),
        "{text}"
    );
    assert!(!text.contains(&*live.to_string_lossy()), "{text}");
    let json = gguf(&["check", m, "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["stale_temp_files"], serde_json::json!([stale]));

    // The README's clean-up that spares running writes (util-linux flock).
    if Command::new("flock").arg("--version").output().is_ok() {
        let out = sh(
            r#"for f in "$1"/.gguf-*.tmp; do flock -n "$f" rm -f -- "$f"; done; true"#,
            dir.path(),
        );
        assert!(out.status.success(), "{out:?}");
        assert_eq!(temp_files(dir.path()), vec![live]);
    } else {
        println!("skipped: flock(1) is not installed; its README command is untested");
        std::fs::remove_file(&temps[0]).unwrap();
    }
    running.signal(libc::SIGINT);
    assert_eq!(running.wait().code(), Some(130));
    assert_eq!(names(dir.path()), ["model.gguf"]);
    assert_eq!(std::fs::read(&model).unwrap(), before);

    // The plain README command, once no write runs.
    std::fs::write(dir.path().join(".gguf-Left01.tmp"), b"half").unwrap();
    assert!(String::from_utf8_lossy(&gguf(&["check", m]).stdout).contains("note:"));
    let out = sh(r#"rm -f -- "$1"/.gguf-*.tmp"#, dir.path());
    assert!(out.status.success(), "{out:?}");
    assert_eq!(names(dir.path()), ["model.gguf"]);
    assert!(!String::from_utf8_lossy(&gguf(&["check", m]).stdout).contains("note:"));
}

/// Asserts that a failed command's message names `output` and no
/// temporary file, and that nothing temporary is left in `dir`.
#[track_caller]
fn fails_naming(out: &std::process::Output, output: &Path, dir: &Path) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&*output.to_string_lossy()),
        "does not name {output:?}: {err}"
    );
    assert!(!err.contains(".gguf-"), "names a temporary file: {err}");
    assert!(temp_files(dir).is_empty());
    err
}

#[test]
fn write_errors_name_the_output_not_the_temp_file() {
    let (dir, model) = model_dir();
    let m = model.to_str().unwrap();

    // The temporary file cannot be created.
    let missing = dir.path().join("missing").join("out.gguf");
    let out = gguf(&["rewrite", m, missing.to_str().unwrap()]);
    let err = fails_naming(&out, &missing, dir.path());
    assert!(err.contains("cannot create a temporary file in"), "{err}");

    // The rename fails: the output is a directory.
    let taken = dir.path().join("taken.gguf");
    std::fs::create_dir(&taken).unwrap();
    for cmd in [
        vec!["rewrite", m, taken.to_str().unwrap()],
        vec!["merge", m, taken.to_str().unwrap()],
        vec!["convert", m, taken.to_str().unwrap(), "--type", "F16"],
    ] {
        let out = gguf(&cmd);
        fails_naming(&out, &taken, dir.path());
    }

    // A split names the shard it was writing.
    let prefix = dir.path().join("missing").join("part");
    let out = gguf(&["split", m, prefix.to_str().unwrap(), "--max-tensors", "6"]);
    let first = dir.path().join("missing").join("part-00001-of-00004.gguf");
    fails_naming(&out, &first, dir.path());

    let second = dir.path().join("part-00002-of-00004.gguf");
    std::fs::create_dir(&second).unwrap();
    let prefix = dir.path().join("part");
    let out = gguf(&["split", m, prefix.to_str().unwrap(), "--max-tensors", "6"]);
    fails_naming(&out, &second, dir.path());
    // The shard renamed before the failure was taken back.
    assert!(!dir.path().join("part-00001-of-00004.gguf").exists());
    assert_eq!(
        names(dir.path()),
        ["model.gguf", "part-00002-of-00004.gguf", "taken.gguf"]
    );
}

#[test]
fn an_error_midway_names_the_output_and_leaves_nothing() {
    use std::os::unix::process::CommandExt;
    let (dir, model) = model_dir();
    let out_path = dir.path().join("out.gguf");
    let limit = std::fs::metadata(&model).unwrap().len() / 2;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gguf"));
    cmd.args([
        "rewrite",
        model.to_str().unwrap(),
        out_path.to_str().unwrap(),
    ]);
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
    let out = cmd.output().unwrap();
    let err = fails_naming(&out, &out_path, dir.path());
    assert!(err.contains("I/O error"), "{err}");
    assert_eq!(names(dir.path()), ["model.gguf"]);
}
