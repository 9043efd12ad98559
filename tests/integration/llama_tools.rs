//! Opt-in interop with llama.cpp's own tools: shards written by either
//! `gguf split` or `llama-gguf-split` are read and merged by the other to
//! the same model, each side verifies the other's `llama-gguf-hash`
//! manifest, `gguf convert` and `llama-quantize` give the same tensor
//! bytes, and llama.cpp computes the same logits, to the bit, for models we
//! rewrote, edited in place or split.
//!
//! The tests run only when `GGUF_LLAMA_TOOLS` names a directory holding
//! llama.cpp's tools (`bin/llama-gguf-split`, `bin/llama-quantize`,
//! `bin/llama-gguf-hash`) and a Python venv with llama-cpp-python
//! (`venv/bin/python`); otherwise each prints a `skipped:` line. With
//! `GGUF_GEMMA_MODEL` naming a real model (Gemma 3 270M), they use it too.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gguf::model::{is_split_key, Model};
use gguf::write::{Builder, OwnedValue};
use gguf::{Endian, GgmlType, GgufFile};

use super::util::{ctx, every_value, gguf, tensor_set, Content, Mode, Rng, Src};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

fn tool(tools: &str, name: &str) -> Command {
    Command::new(Path::new(tools).join("bin").join(name))
}

/// Runs `cmd` and returns its output, whatever its exit status.
fn output(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Standard output of `out`, failing the test with both streams unless it
/// succeeded.
#[track_caller]
fn ok(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Runs our CLI with `args`, which must succeed.
#[track_caller]
fn ours<S: AsRef<OsStr>>(args: &[S]) -> String {
    let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
    ok(&format!("gguf {}", shown.join(" ")), gguf(args))
}

/// The shards of `prefix` (`prefix-00001-of-0000N.gguf`, ...), in order.
fn shards(prefix: &Path) -> Vec<PathBuf> {
    let dir = prefix.parent().unwrap();
    let stem = prefix.file_name().unwrap().to_str().unwrap();
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(&format!("{stem}-0")) && name.ends_with(".gguf")
        })
        .collect();
    v.sort();
    v
}

/// Metadata entries in file order, each `key = value` (debug-printed, so
/// that any difference of type or value shows).
fn entries<'a>(kvs: impl Iterator<Item = (&'a str, gguf::Value<'a>)>) -> Vec<String> {
    kvs.map(|(k, v)| format!("{k} = {:?}", OwnedValue::from_value(&v)))
        .collect()
}

/// Asserts that two models (single files or any shard of split ones) hold
/// the same metadata apart from the split keys, in the same order, and the
/// same tensors (names, order, types, shapes, data bytes).
#[track_caller]
fn assert_same_model(a: &Path, b: &Path) {
    let ma = Model::open(a).unwrap_or_else(|e| panic!("open {}: {e}", a.display()));
    let mb = Model::open(b).unwrap_or_else(|e| panic!("open {}: {e}", b.display()));
    let what = format!("{} vs {}", a.display(), b.display());
    assert_eq!(entries(ma.metadata()), entries(mb.metadata()), "{what}");
    assert_eq!(ma.tensor_count(), mb.tensor_count(), "{what}");
    for (ta, tb) in ma.tensors().zip(mb.tensors()) {
        assert_eq!(
            (ta.name(), ta.ggml_type(), ta.shape()),
            (tb.name(), tb.ggml_type(), tb.shape()),
            "{what}"
        );
        assert!(
            ta.data().unwrap() == tb.data().unwrap(),
            "{what}: data of {}",
            ta.name()
        );
    }
}

/// `path`'s bytes written back with its split keys removed, then the ones
/// in `append` set in that order (so at the end of the metadata).
fn with_split_keys(path: &Path, append: &[&str]) -> Vec<u8> {
    let file = GgufFile::open(path).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    let values: Vec<(String, OwnedValue)> = file
        .metadata()
        .filter(|(k, _)| is_split_key(k))
        .map(|(k, v)| (k.to_owned(), OwnedValue::from_value(&v)))
        .collect();
    for (k, _) in &values {
        b.remove(k).unwrap();
    }
    for key in append {
        let (_, v) = values.iter().find(|(k, _)| k == key).unwrap();
        b.set(*key, v.clone()).unwrap();
    }
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    out
}

/// A file of (almost) every value and tensor type, laid out as llama.cpp
/// reads it: default alignment, no nested arrays (its reader rejects them).
fn rich_model(dir: &Path) -> PathBuf {
    let mut content = Content {
        ctx: ctx(3, Endian::Little),
        alignment: 32,
        kvs: every_value(),
        tensors: tensor_set(true),
    };
    content.kvs.retain(|(k, _)| k != "a.nested");
    let path = dir.join("rich.gguf");
    std::fs::write(&path, content.write(Mode::Single, Src::Bytes)).unwrap();
    path
}

/// The Gemma model named by `GGUF_GEMMA_MODEL`, or `None` after saying how
/// to include it.
fn gemma(check: &str) -> Option<PathBuf> {
    match std::env::var("GGUF_GEMMA_MODEL") {
        Ok(p) => Some(PathBuf::from(p)),
        Err(_) => {
            eprintln!(
                "skipped: set GGUF_GEMMA_MODEL to a Gemma 3 GGUF to also {check} on a real model"
            );
            None
        }
    }
}

/// Split interop on `model`, cut by `ours_limit` / `llama_limit` (the same
/// limit in each tool's flags).
fn split_both_ways(
    tools: &str,
    dir: &Path,
    model: &Path,
    ours_limit: [&str; 2],
    llama_limit: [&str; 2],
    same_cuts: bool,
) {
    let name = model.file_stem().unwrap().to_str().unwrap();
    for sub in ["ours", "llama"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let original = std::fs::read(model).unwrap();

    // Our shards, merged by llama-gguf-split.
    let our_prefix = dir.join("ours").join(name);
    ours(&[
        OsStr::new("split"),
        model.as_os_str(),
        our_prefix.as_os_str(),
        OsStr::new(ours_limit[0]),
        OsStr::new(ours_limit[1]),
    ]);
    let our_shards = shards(&our_prefix);
    assert!(
        our_shards.len() > 1,
        "{name}: split into {} file(s)",
        our_shards.len()
    );
    let merged = dir.join(format!("llama-merged-{name}.gguf"));
    ok(
        "llama-gguf-split --merge",
        output(
            tool(tools, "llama-gguf-split")
                .arg("--merge")
                .arg(&our_shards[0])
                .arg(&merged),
        ),
    );
    assert_same_model(model, &merged);
    // llama-gguf-split's merge keeps the split keys, with split.count 0.
    let m = GgufFile::open(&merged).unwrap();
    assert_eq!(m.get::<u16>("split.no").unwrap(), 0);
    assert_eq!(m.get::<u16>("split.count").unwrap(), 0);
    assert_eq!(
        m.get::<i32>("split.tensors.count").unwrap() as usize,
        m.tensor_count()
    );
    // Apart from them, byte for byte the original: it writes the first
    // shard's entries in order, then the tensor infos in order and the
    // data padded to 32 bytes, the layout our writer (and gguf-py's)
    // produces.
    assert!(with_split_keys(&merged, &[]) == original, "{name}: llama-gguf-split's merge of our shards differs from the original beyond its split keys");

    // llama-gguf-split's shards, read and merged by us.
    let llama_prefix = dir.join("llama").join(name);
    ok(
        "llama-gguf-split --split",
        output(
            tool(tools, "llama-gguf-split")
                .arg("--split")
                .args(llama_limit)
                .arg(model)
                .arg(&llama_prefix),
        ),
    );
    let llama_shards = shards(&llama_prefix);
    assert!(
        llama_shards.len() > 1,
        "{name}: llama-gguf-split wrote {} file(s)",
        llama_shards.len()
    );
    for shard in &llama_shards {
        assert_same_model(model, shard);
    }
    // Our merge drops the split keys and writes the canonical layout, so
    // it gives back the original's bytes.
    let ours_merged = dir.join(format!("ours-merged-{name}.gguf"));
    ours(&[
        OsStr::new("merge"),
        llama_shards.last().unwrap().as_os_str(),
        ours_merged.as_os_str(),
    ]);
    assert!(
        std::fs::read(&ours_merged).unwrap() == original,
        "{name}: our merge of llama-gguf-split's shards differs from the original"
    );

    println!(
        "{name}: our split {} shards, llama-gguf-split {}",
        our_shards.len(),
        llama_shards.len()
    );
    if !same_cuts {
        return;
    }
    // Cut by tensor count, both tools make the same shards. Only the order
    // of the split keys differs: llama-gguf-split appends `split.no`,
    // `split.tensors.count`, `split.count`; we append them in gguf-py's
    // order, `split.no`, `split.count`, `split.tensors.count`. With its
    // keys put in our order, each of its shards is byte for byte ours.
    assert_eq!(our_shards.len(), llama_shards.len(), "{name}: shard count");
    for (o, l) in our_shards.iter().zip(&llama_shards) {
        assert_eq!(o.file_name(), l.file_name());
        let normalized = with_split_keys(l, &["split.no", "split.count", "split.tensors.count"]);
        assert!(
            normalized == std::fs::read(o).unwrap(),
            "{}: llama-gguf-split's shard, split keys reordered, differs from ours",
            l.display()
        );
    }
}

/// `gguf split` shards merged by `llama-gguf-split --merge`, and
/// `llama-gguf-split --split` shards read by `Model::open` and merged by
/// `gguf merge`, give the original model (bytes where the layouts agree).
#[test]
fn split_interop() {
    let Ok(tools) = std::env::var("GGUF_LLAMA_TOOLS") else {
        eprintln!("skipped: set GGUF_LLAMA_TOOLS to the llama tools directory to compare with llama-gguf-split");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let by_count = (["--max-tensors", "5"], ["--split-max-tensors", "5"]);
    split_both_ways(
        &tools,
        dir.path(),
        Path::new(SAMPLE),
        by_count.0,
        by_count.1,
        true,
    );
    let rich = rich_model(dir.path());
    split_both_ways(&tools, dir.path(), &rich, by_count.0, by_count.1, true);
    if let Some(g) = gemma("split") {
        // Cut by size, the tools may cut at different tensors: we count
        // tensor sizes unpadded as gguf-py does, llama-gguf-split padded to
        // 32 bytes. Both give the model back all the same.
        split_both_ways(
            &tools,
            dir.path(),
            &g,
            ["--max-size", "100M"],
            ["--split-max-size", "100M"],
            false,
        );
    }
}

fn check(manifest: &Path) -> [&OsStr; 2] {
    [OsStr::new("--check"), manifest.as_os_str()]
}

/// Flips the last hex digit of the first per-tensor hash of every
/// algorithm in a manifest (so whichever a checker picks is wrong).
fn corrupt(manifest: &str) -> String {
    let mut seen = Vec::new();
    manifest
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 3 || !fields[2].contains(':') || seen.contains(&fields[0]) {
                return format!("{line}\n");
            }
            seen.push(fields[0]);
            let hash = fields[1];
            let last = if hash.ends_with('0') { "1" } else { "0" };
            let altered = format!("{}{last}", &hash[..hash.len() - 1]);
            format!("{}\n", line.replacen(hash, &altered, 1))
        })
        .collect()
}

/// Hash interop on `model`, run from its directory so that both tools
/// name it the same way; `algos` are the algorithms both compute.
fn hash_both_ways(tools: &str, dir: &Path, model: &Path, algos: &[&str]) {
    let cwd = model.parent().unwrap();
    let name = model.file_name().unwrap();
    let llama = |args: &[&OsStr]| {
        output(
            tool(tools, "llama-gguf-hash")
                .current_dir(cwd)
                .args(args)
                .arg(name),
        )
    };
    let ours = |args: &[&OsStr]| {
        output(
            Command::new(env!("CARGO_BIN_EXE_gguf"))
                .current_dir(cwd)
                .arg("hash")
                .args(args)
                .arg(name),
        )
    };
    let flags: Vec<String> = algos.iter().map(|a| format!("--{a}")).collect();
    let flags: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    let list = algos.join(",");
    let tensors = GgufFile::open(model).unwrap().tensor_count();
    let save = |file: &str, text: &str| {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        path
    };

    // Both print the same lines, per tensor and for the whole model.
    let theirs = ok("llama-gguf-hash", llama(&flags));
    let mine = ok(
        "gguf hash",
        ours(&[OsStr::new("--algo"), OsStr::new(&list)]),
    );
    assert_eq!(theirs.lines().count(), algos.len() * (tensors + 1));
    assert_eq!(
        mine,
        theirs,
        "{}: gguf hash --algo {list} vs llama-gguf-hash {flags:?}",
        model.display()
    );
    let theirs_uuid = ok("llama-gguf-hash --uuid", llama(&[OsStr::new("--uuid")]));
    assert_eq!(
        ok(
            "gguf hash --algo uuid",
            ours(&[OsStr::new("--algo"), OsStr::new("uuid")])
        ),
        theirs_uuid
    );
    let theirs_whole = ok(
        "llama-gguf-hash --no-layer",
        llama(&[&[OsStr::new("--no-layer")], &flags[..]].concat()),
    );
    assert_eq!(
        ok(
            "gguf hash --no-layer",
            ours(&[
                OsStr::new("--no-layer"),
                OsStr::new("--algo"),
                OsStr::new(&list)
            ])
        ),
        theirs_whole
    );

    // Each verifies the other's manifest of every single algorithm, and of
    // all of them together (then both check the strongest), and both
    // reject a manifest with one tensor's hash altered, exit status 1.
    let mut manifests = Vec::new();
    for (algo, flag) in algos.iter().zip(&flags) {
        manifests.push((
            format!("ours-{algo}"),
            ok("gguf hash", ours(&[OsStr::new("--algo"), OsStr::new(algo)])),
        ));
        manifests.push((
            format!("llama-{algo}"),
            ok("llama-gguf-hash", llama(&[flag])),
        ));
    }
    if algos.len() > 1 {
        manifests.push(("ours-default".into(), ok("gguf hash", ours(&[]))));
        manifests.push(("llama-all".into(), theirs));
    }
    for (what, text) in &manifests {
        let good = save(&format!("{what}.txt"), text);
        let bad = save(&format!("{what}-bad.txt"), &corrupt(text));
        let v = ok(
            &format!("llama-gguf-hash --check {what}"),
            llama(&check(&good)),
        );
        assert!(
            v.contains("Verification results") && v.trim_end().ends_with("Success"),
            "{v}"
        );
        assert_eq!(
            v.matches("  -  Ok").count(),
            tensors + 1,
            "{what}: llama-gguf-hash verified\n{v}"
        );
        ok(&format!("gguf hash --check {what}"), ours(&check(&good)));
        for (who, out) in [
            ("llama-gguf-hash", llama(&check(&bad))),
            ("gguf hash", ours(&check(&bad))),
        ] {
            assert_eq!(
                out.status.code(),
                Some(1),
                "{who} --check on {what} with one hash altered:\n{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
    // A manifest of the UUID alone: we verify it. llama-gguf-hash cannot
    // (its check looks the UUID up under the `sha256` algorithm name, so
    // never finds it, and reports a missing entry), so it is not asked.
    let uuid = save("ours-uuid.txt", &theirs_uuid);
    ok(
        "gguf hash --check uuid",
        ours(&[OsStr::new("--check"), uuid.as_os_str()]),
    );
    println!(
        "{}: {} lines agree, manifests cross-verified",
        model.display(),
        mine.lines().count()
    );
}

/// `llama-gguf-hash` and `gguf hash` print the same lines, each verifies
/// the other's manifests, and both reject an altered one.
#[test]
fn hash_interop() {
    let Ok(tools) = std::env::var("GGUF_LLAMA_TOOLS") else {
        eprintln!("skipped: set GGUF_LLAMA_TOOLS to the llama tools directory to compare with llama-gguf-hash");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let all = ["xxh64", "sha1", "sha256"];
    hash_both_ways(&tools, dir.path(), Path::new(SAMPLE), &all);
    let rich = rich_model(dir.path());
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    hash_both_ways(&tools, &manifests, &rich, &all);
    if let Some(g) = gemma("hash") {
        // xxh64 (and the UUID) only: on 250 MB, the SHA-1 and SHA-256 of
        // an unoptimized test build take many seconds each.
        hash_both_ways(&tools, &manifests, &g, &["xxh64"]);
    }
}
