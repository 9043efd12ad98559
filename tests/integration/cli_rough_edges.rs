//! Small fixes found by trying the tool as a new user would: gguf-py's
//! type names in `gguf set`, shell completions, bad inputs named in errors,
//! exit statuses in `--help`.

use std::process::Output;

use super::util::gguf;

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn set_accepts_gguf_py_type_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf"),
        &path,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    for (key, ty, value, json_type) in [
        ("a.s", "str", "hi there", "string"),
        ("a.i", "int", "-3", "i32"),
        ("a.f", "float", "0.5", "f32"),
        ("a.u", "UINT32", "7", "u32"),
        ("a.d", "float64", "2.25", "f64"),
        ("a.l", "[uint16]", "[1, 2]", "array"),
    ] {
        ok(gguf(&["set", p, key, value, "--type", ty]));
        let doc: serde_json::Value = serde_json::from_str(&ok(gguf(&[
            "inspect",
            p,
            "--json",
            "--no-tensors",
            "--keys",
            key,
        ])))
        .unwrap();
        assert_eq!(doc["metadata"][0]["type"], json_type, "{ty}");
    }
    assert_eq!(ok(gguf(&["get", p, "a.s"])), "hi there\n");
    assert_eq!(ok(gguf(&["get", p, "a.l"])), "[1,2]\n");
    let out = gguf(&["set", p, "a.x", "1", "--type", "nonsense"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown type \"nonsense\""));
}

#[test]
fn completions_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(gguf(&["completions", shell]));
        for cmd in [
            "inspect", "get", "hash", "diff", "check", "rewrite", "convert",
        ] {
            assert!(script.contains(cmd), "{shell} completions lack {cmd}");
        }
    }
    assert!(!gguf(&["completions", "nosuchshell"]).status.success());
}

/// Every command given a missing file, a directory, a truncated file or
/// a file that is not GGUF fails with exit status 1 (2 for `diff`), a
/// message naming the file, nothing on stdout, and leaves no output file.
#[test]
fn bad_inputs_fail_with_a_message_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/tiny-llama.gguf"
    ))
    .unwrap();
    let good = dir.path().join("good.gguf");
    std::fs::write(&good, &sample).unwrap();
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, &sample[..500]).unwrap();
    let text = dir.path().join("text.gguf");
    std::fs::write(&text, "hello\n").unwrap();
    let out_file = dir.path().join("out.gguf");
    let (g, o) = (good.to_str().unwrap(), out_file.to_str().unwrap());
    let missing = dir.path().join("missing.gguf");
    let bad_inputs = [
        (missing.to_str().unwrap(), "No such file"),
        (dir.path().to_str().unwrap(), "is a directory"),
        (truncated.to_str().unwrap(), "truncated"),
        (text.to_str().unwrap(), "bad magic"),
    ];
    for (bad, why) in bad_inputs {
        let commands: Vec<(Vec<&str>, i32)> = vec![
            (vec!["inspect", bad], 1),
            (vec!["get", bad, "general.name"], 1),
            (vec!["hash", bad], 1),
            (vec!["check", bad], 1),
            (vec!["tensor", bad, "output.weight"], 1),
            (vec!["convert", bad, o, "--type", "Q8_0"], 1),
            (vec!["rewrite", bad, o], 1),
            (vec!["set", bad, "general.name", "x"], 1),
            (vec!["rm", bad, "general.name"], 1),
            (vec!["mv", bad, "general.name", "general.n"], 1),
            (vec!["rename-tensor", bad, "output.weight", "o"], 1),
            (vec!["diff", g, bad], 2),
            (vec!["estimate", bad], 1),
        ];
        for (args, code) in commands {
            let out = gguf(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            let stdout = String::from_utf8_lossy(&out.stdout);
            // `check` reports a malformed file on stdout, as any other
            // problem; a file it cannot read is an error on stderr.
            let msg = format!("{err}{stdout}");
            assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
            assert!(msg.contains(bad) && msg.contains(why), "{args:?}: {msg}");
            // Named once: the model's errors carry the path, and the tool
            // used to add it again ("gguf: m.gguf: m.gguf: ...").
            assert_eq!(msg.matches(bad).count(), 1, "{args:?}: {msg}");
            if args[0] != "check" {
                assert!(stdout.is_empty(), "{args:?}: {stdout}");
            }
            assert!(!out_file.exists(), "{args:?} left {o}");
        }
    }
    // And a good file's missing key or tensor names the file too.
    for args in [
        vec!["rm", g, "no.such.key"],
        vec!["mv", g, "no.such.key", "x"],
        vec!["rename-tensor", g, "no.such.tensor", "x"],
        vec!["tensor", g, "no.such.tensor"],
        vec!["get", g, "no.such.key"],
    ] {
        let out = gguf(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            err.contains(g) && err.contains("no.such"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        std::fs::read(&good).unwrap(),
        sample,
        "a failed edit changed the file"
    );
}

#[test]
fn help_documents_the_exit_statuses() {
    let help = ok(gguf(&["--help"]));
    assert!(help.contains("Exit status: 0 on success"), "{help}");
    assert!(
        help.contains("`diff`: 0 equal, 1 different, 2 error"),
        "{help}"
    );
    let out = gguf(&["tensor"]);
    assert_eq!(out.status.code(), Some(2), "usage error");
}
