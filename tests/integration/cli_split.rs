//! `gguf split` / `gguf merge`, and the commands that take any shard of a
//! split model and act on the whole model.

use std::path::Path;

use gguf::write::Builder;
use gguf::Gguf;
use gguf::Model;

use super::util::gguf;

#[track_caller]
fn ok(args: &[&str]) -> String {
    let out = gguf(args);
    assert!(
        out.status.success(),
        "gguf {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Four F32 weight matrices of 1000 bytes each.
fn model(path: &Path) -> Vec<u8> {
    let values: Vec<f32> = (0..250).map(|i| i as f32).collect();
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.name", "cli").unwrap();
    for name in [
        "token_embd.weight",
        "blk.0.attn_q.weight",
        "blk.0.ffn_up.weight",
        "output.weight",
    ] {
        b.add_tensor_typed(name, &[50, 5], &values[..]).unwrap();
    }
    b.write_to_path(path).unwrap();
    std::fs::read(path).unwrap()
}

#[test]
fn split_merge_and_whole_model_commands() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let original = model(&input);
    let prefix = dir.path().join("out");

    // Dry run: the plan, no file.
    let plan = ok(&[
        "split",
        s(&input),
        s(&prefix),
        "--max-size",
        "2K",
        "--dry-run",
    ]);
    assert!(
        plan.contains("would write 2 file(s)") && plan.contains("out-00002-of-00002.gguf"),
        "{plan}"
    );
    assert!(!dir.path().join("out-00001-of-00002.gguf").exists());

    // 2K decimal = 2000 bytes: two 1000-byte tensors per shard.
    let text = ok(&[
        "split",
        s(&input),
        s(&prefix),
        "--max-size",
        "2K",
        "--no-tensor-first-split",
    ]);
    assert!(text.contains("wrote 3 file(s)"), "{text}");
    let shard = |k| dir.path().join(format!("out-0000{k}-of-00003.gguf"));
    let m = Model::open(shard(1)).unwrap();
    assert_eq!(
        m.shards()
            .iter()
            .map(|s| s.file().tensor_count())
            .collect::<Vec<_>>(),
        [0, 2, 2]
    );

    // inspect of any shard describes the whole model.
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", s(&shard(3)), "--json"])).unwrap();
    let names: Vec<&str> = doc["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "token_embd.weight",
            "blk.0.attn_q.weight",
            "blk.0.ffn_up.weight",
            "output.weight"
        ]
    );
    assert_eq!(doc["tensors"][3]["shard"], 2);
    let shards = doc["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 3);
    assert_eq!(shards[1]["tensors"], 2);
    assert_eq!(
        shards[2]["bytes"],
        std::fs::metadata(shard(3)).unwrap().len()
    );
    assert_eq!(doc["split"]["count"], 3);
    let keys: Vec<&str> = doc["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["general.architecture", "general.name"]);
    let text = ok(&["inspect", s(&shard(2))]);
    assert!(
        text.contains("Split model: 3 shards") && text.contains("out-00003-of-00003.gguf"),
        "{text}"
    );

    // tensor reads from whichever shard holds it.
    let t = ok(&["tensor", s(&shard(1)), "output.weight"]);
    assert!(t.contains("249"), "{t}");

    // set goes to the first shard, mv to the shard holding the tensor.
    ok(&["set", s(&shard(2)), "general.name", "renamed"]);
    ok(&["rename-tensor", s(&shard(1)), "output.weight", "out.weight"]);
    let m = Model::open(shard(3)).unwrap();
    assert_eq!(m.get_str("general.name").unwrap(), "renamed");
    assert_eq!(m.tensor_shard("out.weight"), Some(2));
    ok(&["set", s(&shard(2)), "general.name", "cli"]);
    ok(&["rename-tensor", s(&shard(2)), "out.weight", "output.weight"]);
    let err = gguf(&["set", s(&shard(1)), "split.count", "7"]);
    assert!(!err.status.success());

    // merge gives back the original bytes.
    let merged = dir.path().join("merged.gguf");
    let text = ok(&["merge", s(&shard(2)), s(&merged)]);
    assert!(text.contains("from 3 shard(s)"), "{text}");
    assert!(std::fs::read(&merged).unwrap() == original);

    // rewrite and convert of a split model write one file.
    let rewritten = dir.path().join("rewritten.gguf");
    ok(&["rewrite", s(&shard(1)), s(&rewritten)]);
    assert!(std::fs::read(&rewritten).unwrap() == original);
    let converted = dir.path().join("f16.gguf");
    let text = ok(&["convert", s(&shard(1)), s(&converted), "--type", "f16"]);
    assert!(text.contains("4 of 4 tensors converted to F16"), "{text}");
    assert_eq!(Model::open(&converted).unwrap().tensor_count(), 4);
    // Converting it again would only merge the shards: refused, and said.
    let out = gguf(&["convert", s(&shard(1)), s(&converted), "--type", "f32"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("nothing to convert") && err.contains("gguf merge"),
        "{err}"
    );

    // --max-tensors 1: one tensor per shard.
    let one = dir.path().join("one");
    let text = ok(&["split", s(&merged), s(&one), "--max-tensors", "1"]);
    assert!(text.contains("wrote 4 file(s)"), "{text}");

    // Bad limits are refused before anything is written.
    for bad in [
        &["--max-size", "0"][..],
        &["--max-size", "5X"],
        &["--max-tensors", "0"],
        &[],
    ] {
        let mut args = vec!["split", s(&merged), "bad"];
        args.extend_from_slice(bad);
        assert!(!gguf(&args).status.success(), "{bad:?}");
    }
}

#[test]
fn a_missing_shard_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    model(&input);
    ok(&[
        "split",
        s(&input),
        s(&dir.path().join("m")),
        "--max-tensors",
        "2",
    ]);
    std::fs::remove_file(dir.path().join("m-00002-of-00002.gguf")).unwrap();
    let out = gguf(&["inspect", s(&dir.path().join("m-00001-of-00002.gguf"))]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("m-00002-of-00002.gguf") && err.contains("missing"),
        "{err}"
    );
}
