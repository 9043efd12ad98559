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
use gguf::{Endian, GgmlType, Gguf, GgufFile};

use super::util::{ctx, every_value, gguf, tensor_set, Content, Mode, Rng, Src};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

/// A command running llama.cpp's tool `name` from the tools directory.
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

/// The arguments that verify against `manifest`, the same for both tools.
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
    if let [algo] = algos {
        // Of one algorithm, the outputs above are those manifests.
        manifests.push((format!("ours-{algo}"), mine.clone()));
        manifests.push((format!("llama-{algo}"), theirs.clone()));
    } else {
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

/// Values for one row of a weight matrix: noise, or in the first rows
/// cases that probe the quantizers' edges. `f16`: the tensor is stored as
/// F16, so magnitudes stay within its range.
fn weight_row(rng: &mut Rng, row: u64, n: u64, f16: bool) -> Vec<f32> {
    let mut noise = || ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * 0.05;
    (0..n)
        .map(|j| {
            let k = (j % 32) as f32;
            let sign = if j % 3 == 0 { -1.0 } else { 1.0 };
            match row {
                // A zero row: zero scales, no division by zero.
                0 => 0.0,
                // Scale 1 (Q8_0) and ties at .5: ggml rounds half away from zero.
                1 if j % 32 == 0 => 127.0,
                1 => k - 16.0 + 0.5,
                // Large, but with scales that still fit an f16.
                2 => sign * 30000.0 * ((j % 7) + 1) as f32 / 7.0,
                // Tiny: f32 (or f16) subnormals, whose scales underflow.
                3 => sign * if f16 { 1e-7 } else { 1e-40 } * ((j % 5) + 1) as f32,
                // One outlier per block of 32.
                4 if j % 32 == 5 => 1000.0,
                4 => noise() * 0.2,
                // A negative extreme (the signed-scale types keep its sign).
                5 if j % 32 == 3 => -1.0,
                // A constant row: max equals min.
                6 => 0.25,
                _ => noise(),
            }
        })
        .collect()
}

/// A llama-shaped model of F32 and F16 tensors (metadata and vocabulary
/// from the sample; one block, `n_embd` wide, feed-forward `n_ff`), its
/// weight matrices starting with `weight_row`'s edge cases.
fn float_llama(path: &Path, n_embd: u64, n_ff: u64) {
    let sample = GgufFile::open(SAMPLE).unwrap();
    let n_vocab = sample.tensor("token_embd.weight").unwrap().shape()[1];
    let mut b = Builder::new();
    for (k, v) in sample.metadata() {
        b.set(k, OwnedValue::from_value(&v)).unwrap();
    }
    for (k, v) in [
        ("general.file_type", 1), // mostly F16
        ("llama.block_count", 1),
        ("llama.embedding_length", n_embd),
        ("llama.feed_forward_length", n_ff),
        ("llama.rope.dimension_count", n_embd / 4),
    ] {
        b.set(k, OwnedValue::U32(v as u32)).unwrap();
    }
    let (e, kv, f, v) = (n_embd, n_embd / 2, n_ff, n_vocab);
    let tensors: [(&str, GgmlType, &[u64]); 12] = [
        ("token_embd.weight", GgmlType::F32, &[e, v]),
        ("blk.0.attn_norm.weight", GgmlType::F32, &[e]),
        ("blk.0.attn_q.weight", GgmlType::F16, &[e, e]),
        ("blk.0.attn_k.weight", GgmlType::F16, &[e, kv]),
        ("blk.0.attn_v.weight", GgmlType::F32, &[e, kv]),
        ("blk.0.attn_output.weight", GgmlType::F32, &[e, e]),
        ("blk.0.ffn_norm.weight", GgmlType::F32, &[e]),
        ("blk.0.ffn_gate.weight", GgmlType::F32, &[e, f]),
        ("blk.0.ffn_up.weight", GgmlType::F16, &[e, f]),
        ("blk.0.ffn_down.weight", GgmlType::F32, &[f, e]),
        ("output_norm.weight", GgmlType::F32, &[e]),
        ("output.weight", GgmlType::F16, &[e, v]),
    ];
    let mut rng = Rng(0x5eed);
    for (name, ty, shape) in tensors {
        let values: Vec<f32> = if shape.len() == 1 {
            (0..shape[0]).map(|i| 1.0 + (i % 7) as f32 / 16.0).collect()
        } else {
            (0..shape[1])
                .flat_map(|r| weight_row(&mut rng, r, shape[0], ty == GgmlType::F16))
                .collect()
        };
        b.add_tensor_quantized(name, ty, shape, values).unwrap();
    }
    b.write_to_path(path).unwrap();
}

/// Tensor by tensor, how two quantized models differ: type, or the first
/// differing byte (and its block).
fn tensor_differences(ours: &GgufFile<'_>, llama: &GgufFile<'_>) -> Vec<String> {
    let mut diffs = Vec::new();
    for t in ours.tensors() {
        let Ok(l) = llama.tensor(t.name()) else {
            diffs.push(format!("{}: only in ours", t.name()));
            continue;
        };
        if (t.ggml_type(), t.shape()) != (l.ggml_type(), l.shape()) {
            diffs.push(format!(
                "{}: ours {} {:?}, llama-quantize {} {:?}",
                t.name(),
                t.ggml_type(),
                t.shape(),
                l.ggml_type(),
                l.shape()
            ));
            continue;
        }
        let (a, b) = (t.data().unwrap(), l.data().unwrap());
        if let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) {
            let block = i as u64 / t.ggml_type().type_size().unwrap_or(1);
            diffs.push(format!(
                "{}: {} data differ from byte {i} (block {block}): ours {:02x?}, llama-quantize {:02x?}",
                t.name(),
                t.ggml_type(),
                &a[i..a.len().min(i + 8)],
                &b[i..b.len().min(i + 8)]
            ));
        }
    }
    for l in llama.tensors() {
        if ours.tensor(l.name()).is_err() {
            diffs.push(format!("{}: only in llama-quantize's output", l.name()));
        }
    }
    diffs
}

/// `gguf convert IN OUT --type T` and `llama-quantize [--pure] IN OUT T`
/// on a model of F32 and F16 weights: the same tensors of the same types
/// with the same bytes, the same metadata, and, with our tensors put in
/// llama-quantize's order, the same file.
#[test]
fn quantize_interop() {
    let Ok(tools) = std::env::var("GGUF_LLAMA_TOOLS") else {
        eprintln!("skipped: set GGUF_LLAMA_TOOLS to the llama tools directory to compare with llama-quantize");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Rows of 256, so that the K-quants apply to every matrix. Q8_0 as
    // llama-quantize picks per tensor by default; the others with --pure:
    // by default it gives output.weight (and for the K-quant mixtures some
    // other tensors) a more precise type, a choice we leave to the user.
    let mut cases: Vec<(u64, u64, &str, bool, Option<&str>)> = [
        ("Q8_0", false),
        ("Q4_0", true),
        ("Q4_1", true),
        ("Q5_0", true),
        ("Q5_1", true),
        ("IQ4_NL", true),
        ("Q2_K", true),
        ("Q3_K", true),
        ("Q4_K", true),
        ("Q5_K", true),
        ("Q6_K", true),
        ("TQ1_0", true),
        ("TQ2_0", true),
        ("Q1_0", true),
        ("Q2_0", true),
        ("F16", true),
        ("BF16", true),
    ]
    .into_iter()
    .map(|(ty, pure)| (256, 512, ty, pure, None))
    .collect();
    // Rows that are not a whole number of the target's blocks: each tensor
    // falls back to another type (the last field: one that some matrix
    // must get), F16 when even a block of 32 does not divide the row.
    cases.extend([
        (64, 128, "Q4_K", true, Some("Q5_0")),
        (64, 128, "Q5_K", true, Some("Q5_1")),
        (64, 128, "Q6_K", true, Some("Q8_0")),
        (64, 128, "Q3_K", true, Some("Q4_0")),
        (64, 128, "TQ2_0", true, Some("Q4_0")),
        (48, 96, "Q4_K", true, Some("F16")),
        (48, 96, "Q8_0", true, Some("F16")),
    ]);
    let mut problems = Vec::new();
    for (n_embd, n_ff, ty, pure, fallback) in cases {
        let input = dir.path().join(format!("float-{n_embd}.gguf"));
        if !input.exists() {
            float_llama(&input, n_embd, n_ff);
        }
        let ours_path = dir.path().join(format!("ours-{ty}-{n_embd}.gguf"));
        let llama_path = dir.path().join(format!("llama-{ty}-{n_embd}.gguf"));
        ours(&[
            OsStr::new("convert"),
            input.as_os_str(),
            ours_path.as_os_str(),
            OsStr::new("--type"),
            OsStr::new(ty),
        ]);
        let mut cmd = tool(&tools, "llama-quantize");
        if pure {
            cmd.arg("--pure");
        }
        ok(
            &format!("llama-quantize {ty}"),
            output(cmd.arg(&input).arg(&llama_path).arg(ty).arg("1")),
        );
        let (o, l) = (
            GgufFile::open(&ours_path).unwrap(),
            GgufFile::open(&llama_path).unwrap(),
        );
        // Both really converted: every one of the 9 matrices is of the
        // target type (the 3 norms stay F32), or for narrow rows some
        // matrix is of the fallback type.
        let target = GgmlType::from_name(ty).unwrap();
        for (who, f) in [("gguf convert", &o), ("llama-quantize", &l)] {
            match fallback {
                None => {
                    let n = f.tensors().filter(|t| t.ggml_type() == target).count();
                    assert_eq!(n, 9, "{who} --type {ty}: {n} tensors of type {ty}");
                }
                Some(fb) => {
                    let fb = GgmlType::from_name(fb).unwrap();
                    let n = f.tensors().filter(|t| t.ggml_type() == fb).count();
                    assert!(
                        n > 0,
                        "{who} --type {ty}, rows of {n_embd}: nothing fell back to {fb}"
                    );
                }
            }
        }
        let mut diffs = tensor_differences(&o, &l);
        // The same entries; not in the same order: llama-quantize sets
        // general.quantization_version and general.file_type again, which
        // llama.cpp's gguf moves to the end of the metadata, where we keep
        // every key in its place.
        let (mut mo, mut ml) = (entries(o.metadata()), entries(l.metadata()));
        mo.sort();
        ml.sort();
        if mo != ml {
            let only = |a: &[String], b: &[String]| {
                a.iter()
                    .filter(|e| !b.contains(e))
                    .cloned()
                    .collect::<Vec<_>>()
            };
            diffs.push(format!(
                "metadata: ours {:?}, llama-quantize {:?}",
                only(&mo, &ml),
                only(&ml, &mo)
            ));
        }
        if diffs.is_empty() {
            // llama-quantize writes the tensors in its loader's order, not
            // the input's; with our tensors and keys in its order, ours is
            // its file byte for byte (header, padding, layout).
            let mut b = Builder::new();
            for (k, _) in l.metadata() {
                b.set(k, OwnedValue::from_value(&o.value(k).unwrap()))
                    .unwrap();
            }
            for t in l.tensors() {
                let mine = o.tensor(t.name()).unwrap();
                b.add_tensor(
                    t.name(),
                    mine.ggml_type(),
                    mine.shape(),
                    mine.data().unwrap(),
                )
                .unwrap();
            }
            let mut bytes = Vec::new();
            b.write(&mut bytes).unwrap();
            if bytes != std::fs::read(&llama_path).unwrap() {
                diffs.push("same tensors and metadata, yet the files differ".into());
            }
        }
        println!(
            "{ty}{}, rows of {n_embd}: {} tensors, {} differences",
            if pure { " --pure" } else { "" },
            l.tensor_count(),
            diffs.len()
        );
        problems.extend(diffs.into_iter().map(|d| format!("{ty}: {d}")));
    }
    assert!(
        problems.is_empty(),
        "gguf convert and llama-quantize disagree:\n{}",
        problems.join("\n")
    );
}

/// llama.cpp's logits for `prompt` after each of `models`
/// (tests/oracles/llama_logits.py: one JSON object per model, with the
/// sha256 of the last position's logits).
fn llama_logits(tools: &str, prompt: &str, models: &[PathBuf]) -> Vec<serde_json::Value> {
    let python = Path::new(tools).join("venv/bin/python");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracles/llama_logits.py");
    let out = ok(
        "llama_logits.py",
        output(Command::new(python).arg(script).arg(prompt).args(models)),
    );
    let v: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), models.len(), "{out}");
    v
}

/// `model` as our tools change it without changing a weight: rewritten,
/// rewritten with another alignment, its name edited in place and with a
/// longer name (so the file is rewritten), and split (the first shard,
/// which llama.cpp opens with its siblings).
fn unchanged_weights(dir: &Path, model: &Path, split: [&str; 2]) -> Vec<(String, PathBuf)> {
    let original = std::fs::read(model).unwrap();
    let at = |name: &str| dir.join(name);
    let mut v = vec![("original".to_string(), model.to_path_buf())];

    ours(&[
        OsStr::new("rewrite"),
        model.as_os_str(),
        at("rewrite.gguf").as_os_str(),
    ]);
    v.push(("gguf rewrite".into(), at("rewrite.gguf")));

    let aligned = at("aligned.gguf");
    ours(&[
        OsStr::new("rewrite"),
        model.as_os_str(),
        aligned.as_os_str(),
        OsStr::new("--alignment"),
        OsStr::new("256"),
    ]);
    assert!(std::fs::read(&aligned).unwrap() != original);
    v.push(("gguf rewrite --alignment 256".into(), aligned));

    // A name of the same length (reversed) fits in place.
    let name = GgufFile::open(model)
        .unwrap()
        .get_str("general.name")
        .unwrap()
        .to_owned();
    for (file, new_name, how) in [
        (
            "in-place.gguf",
            name.chars().rev().collect::<String>(),
            "in place",
        ),
        (
            "renamed.gguf",
            format!("{name}, renamed by gguf set to a longer name"),
            "rewritten",
        ),
    ] {
        let path = at(file);
        std::fs::copy(model, &path).unwrap();
        let said = ours(&[
            OsStr::new("set"),
            path.as_os_str(),
            OsStr::new("general.name"),
            OsStr::new(&new_name),
        ]);
        assert!(said.contains(how), "gguf set {new_name:?}: {said}");
        assert_eq!(
            GgufFile::open(&path)
                .unwrap()
                .get_str("general.name")
                .unwrap(),
            new_name
        );
        v.push((format!("gguf set general.name ({how})"), path));
    }

    std::fs::create_dir(at("split")).unwrap();
    let prefix = at("split").join("model");
    ours(&[
        OsStr::new("split"),
        model.as_os_str(),
        prefix.as_os_str(),
        OsStr::new(split[0]),
        OsStr::new(split[1]),
    ]);
    let parts = shards(&prefix);
    assert!(parts.len() > 1);
    v.push((
        format!(
            "gguf split {} {} (first of {} shards)",
            split[0],
            split[1],
            parts.len()
        ),
        parts[0].clone(),
    ));
    v
}

/// Asserts llama.cpp computes the same logits, bit for bit, for every
/// variant of a model, and other logits for `control` (the same model
/// with a weight changed: the comparison sees the weights).
fn assert_same_logits(
    tools: &str,
    prompt: &str,
    variants: &[(String, PathBuf)],
    control: Option<&Path>,
) {
    let mut paths: Vec<PathBuf> = variants.iter().map(|(_, p)| p.clone()).collect();
    paths.extend(control.map(Path::to_path_buf));
    let got = llama_logits(tools, prompt, &paths);
    let reference = &got[0];
    println!(
        "{}: tokens {}, logits sha256 {}, first {}",
        variants[0].1.display(),
        reference["tokens"],
        reference["sha256"],
        reference["first"]
    );
    for ((what, _), g) in variants.iter().zip(&got).skip(1) {
        assert_eq!(g["tokens"], reference["tokens"], "{what}: prompt tokens");
        assert_eq!(
            g["sha256"], reference["sha256"],
            "{what}: logits differ, first {} instead of {}",
            g["first"], reference["first"]
        );
        println!("  {what}: same logits");
    }
    if control.is_some() {
        let c = &got[variants.len()];
        assert_ne!(
            c["sha256"], reference["sha256"],
            "a changed weight left the logits as they were"
        );
        println!(
            "  control (a weight changed): other logits, first {}",
            c["first"]
        );
    }
}

/// llama.cpp (through llama-cpp-python) computes the same logits, to the
/// bit, for a model and for it rewritten, edited in place and split by us.
#[test]
fn logits_unchanged_by_our_tools() {
    let Ok(tools) = std::env::var("GGUF_LLAMA_TOOLS") else {
        eprintln!("skipped: set GGUF_LLAMA_TOOLS to the llama tools directory to compare logits with llama.cpp");
        return;
    };
    let prompt = "The capital of France is";
    let dir = tempfile::tempdir().unwrap();

    let sample_dir = dir.path().join("sample");
    std::fs::create_dir(&sample_dir).unwrap();
    let variants = unchanged_weights(&sample_dir, Path::new(SAMPLE), ["--max-tensors", "8"]);
    let changed = sample_dir.join("changed.gguf");
    let file = GgufFile::open(SAMPLE).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    let norm = file.tensor("output_norm.weight").unwrap();
    let mut x = norm.to_f32().unwrap();
    x[0] += 0.25;
    b.remove_tensor("output_norm.weight").unwrap();
    b.add_tensor_quantized("output_norm.weight", GgmlType::F32, norm.shape(), x)
        .unwrap();
    b.write_to_path(&changed).unwrap();
    assert_same_logits(&tools, prompt, &variants, Some(&changed));

    let Some(g) = gemma("compare logits") else {
        return;
    };
    let gemma_dir = dir.path().join("gemma");
    std::fs::create_dir(&gemma_dir).unwrap();
    let variants = unchanged_weights(&gemma_dir, &g, ["--max-size", "100M"]);
    assert_same_logits(&tools, prompt, &variants, None);
}
