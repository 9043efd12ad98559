//! `gguf hash`: output identical to gguf-py's `gguf_hash.py`, and
//! manifest checks as `llama-gguf-hash --check` does them.

use std::path::Path;
use std::process::{Command, Output};

use gguf::write::OwnedValue;
use gguf::{Endian, GgmlType, Gguf};

use super::util::{ctx, tensor_set, Content, Mode, Src, TensorSpec};

fn gguf_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gguf"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run gguf")
}

/// gguf-py 0.19's `gguf_hash.py`, run from `dir` on `name`.
fn gguf_hash_py(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("python3")
        .current_dir(dir)
        .args(["-m", "gguf.scripts.gguf_hash"])
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}): install tests/oracles/requirements.txt")
        });
    assert!(
        out.status.success(),
        "gguf_hash.py failed (gguf-py missing? run `python3 -m pip install -r tests/oracles/requirements.txt`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A Builder-made file: every plain and some quantized types, an empty
/// tensor, and the tensor names gguf_hash.py skips.
fn builder_file(endian: Endian) -> Vec<u8> {
    let mut tensors = tensor_set(endian == Endian::Little);
    tensors.push(TensorSpec::new(
        "blk.0.attention.bias",
        GgmlType::F32,
        &[4],
        20,
    ));
    tensors.push(TensorSpec::new(
        "blk.0.rotary_emb.inv_freq",
        GgmlType::F32,
        &[4],
        21,
    ));
    tensors.push(TensorSpec::new(
        "blk.0.attention.masked_bias",
        GgmlType::F16,
        &[4],
        22,
    ));
    Content {
        ctx: ctx(3, endian),
        alignment: 64,
        kvs: vec![(
            "general.architecture".into(),
            OwnedValue::String("llama".into()),
        )],
        tensors,
    }
    .write(Mode::Single, Src::Bytes)
}

#[test]
fn default_output_equals_gguf_hash_py() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf"),
        dir.path().join("tiny-llama.gguf"),
    )
    .unwrap();
    std::fs::write(dir.path().join("le.gguf"), builder_file(Endian::Little)).unwrap();
    std::fs::write(dir.path().join("be.gguf"), builder_file(Endian::Big)).unwrap();
    for name in ["tiny-llama.gguf", "le.gguf", "be.gguf"] {
        for extra in [&[][..], &["--no-layer"][..]] {
            let args: Vec<&str> = [name].iter().chain(extra).copied().collect();
            let ours = ok(gguf_in(dir.path(), &[&["hash"][..], &args].concat()));
            let theirs = gguf_hash_py(dir.path(), &args);
            assert_eq!(ours, theirs, "{name} {extra:?}");
            assert!(!ours.contains("inv_freq"), "skipped tensor hashed");
        }
    }
}

/// Tensors of several pieces (the data goes to the digest threads 1 MiB
/// at a time), of exactly one piece, one byte and none: gguf_hash.py's
/// output line for line; split in two shards, the same hashes, and the
/// whole-model sha256 is that of all the data in order.
#[test]
fn tensors_of_many_pieces_hash_as_gguf_hash_py() {
    use sha2::Digest;
    let dir = tempfile::tempdir().unwrap();
    let mib = 1usize << 20;
    let sizes = [5 * mib / 2 + 3, mib, 0, 1, 3 * mib, mib - 1];
    let mut b = gguf::write::Builder::new();
    b.set("general.architecture", "llama").unwrap();
    let mut all = sha2::Sha256::new();
    for (i, &n) in sizes.iter().enumerate() {
        let data: Vec<u8> = (0..n)
            .map(|k| (k.wrapping_mul(2_654_435_761) >> (i + 3)) as u8)
            .collect();
        all.update(&data);
        b.add_tensor(format!("blk.{i}.weight"), GgmlType::I8, &[n as u64], data)
            .unwrap();
    }
    b.write_to_path(dir.path().join("m.gguf")).unwrap();
    let opts = gguf::write::SplitOptions::default().max_tensors(4);
    b.write_split(dir.path().join("s"), &opts).unwrap();

    let whole = ok(gguf_in(dir.path(), &["hash", "m.gguf"]));
    assert_eq!(whole, gguf_hash_py(dir.path(), &["m.gguf"]));
    assert_eq!(whole.lines().count(), 2 * sizes.len() + 3);
    let no_layer = ok(gguf_in(dir.path(), &["hash", "m.gguf", "--no-layer"]));
    assert_eq!(
        no_layer,
        gguf_hash_py(dir.path(), &["m.gguf", "--no-layer"])
    );

    let shard = "s-00001-of-00002.gguf";
    let split = ok(gguf_in(dir.path(), &["hash", shard]));
    assert_eq!(split.replace(shard, "m.gguf"), whole);
    let sha256 = ok(gguf_in(
        dir.path(),
        &["hash", shard, "--no-layer", "--algo", "sha256"],
    ));
    let expected: String = all.finalize().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(sha256, format!("sha256    {expected}  {shard}\n"));
}

#[test]
fn xxh64_of_empty_data_is_the_reference_value() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = Content {
        ctx: ctx(3, Endian::Little),
        alignment: 32,
        kvs: vec![],
        tensors: vec![TensorSpec::new("empty", GgmlType::F32, &[0], 1)],
    }
    .write(Mode::Single, Src::Bytes);
    std::fs::write(dir.path().join("e.gguf"), bytes).unwrap();
    let out = ok(gguf_in(
        dir.path(),
        &["hash", "e.gguf", "--algo", "xxh64,sha256"],
    ));
    assert_eq!(
        out,
        "xxh64     ef46db3751d8e999  e.gguf:empty\n\
         sha256    e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  e.gguf:empty\n\
         xxh64     ef46db3751d8e999  e.gguf\n\
         sha256    e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  e.gguf\n"
    );
}

#[test]
fn check_verifies_a_manifest_like_llama_gguf_hash() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.gguf"), builder_file(Endian::Little)).unwrap();
    let manifest = ok(gguf_in(
        d,
        &["hash", "m.gguf", "--algo", "xxh64,sha1,sha256,uuid"],
    ));
    std::fs::write(d.join("all.txt"), &manifest).unwrap();

    // Unchanged: every line Ok, exit 0; the strongest algorithm is used.
    let out = gguf_in(d, &["hash", "m.gguf", "--check", "all.txt"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("manifest  all.txt  sha256  sha1  xxh64  uuid\n"),
        "{text}"
    );
    assert!(
        text.lines()
            .filter(|l| l.starts_with("sha256"))
            .all(|l| l.ends_with("  -  Ok")),
        "{text}"
    );
    assert!(!text.lines().any(|l| l.starts_with("sha1 ")), "{text}");
    assert!(
        text.ends_with("\nVerification results for all.txt - Success\n"),
        "{text}"
    );
    // The UUID is verified against the uuid line.
    let out = gguf_in(
        d,
        &["hash", "m.gguf", "--check", "all.txt", "--algo", "uuid"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // One tensor changed: its line and the model's mismatch, exit 1.
    let mut bytes = std::fs::read(d.join("m.gguf")).unwrap();
    let file = gguf::GgufFile::open(&bytes).unwrap();
    let at = file.tensor("q8_0").unwrap().file_offset() as usize;
    drop(file);
    bytes[at + 5] ^= 1;
    std::fs::write(d.join("m.gguf"), &bytes).unwrap();
    let out = gguf_in(
        d,
        &["hash", "m.gguf", "--check", "all.txt", "--algo", "xxh64"],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let bad: Vec<&str> = text.lines().filter(|l| l.ends_with("Mismatch")).collect();
    assert_eq!(bad.len(), 2, "{text}");
    assert!(bad[0].contains("m.gguf:q8_0"), "{text}");

    // A manifest naming the model otherwise (the file was renamed since):
    // read as naming it, and the result says under which name.
    std::fs::copy(d.join("m.gguf"), d.join("other.gguf")).unwrap();
    let out = gguf_in(d, &["hash", "other.gguf", "--check", "all.txt"]);
    assert_eq!(out.status.code(), Some(1), "q8_0 still differs");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("other.gguf:q8_0  -  Mismatch"), "{text}");
    assert!(
        text.ends_with(
            " - Failure (the manifest names this model m.gguf: compared under that name)\n"
        ),
        "{text}"
    );
    bytes[at + 5] ^= 1;
    std::fs::write(d.join("other.gguf"), &bytes).unwrap();
    let out = gguf_in(d, &["hash", "other.gguf", "--check", "all.txt"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .filter(|l| l.starts_with("sha256"))
            .all(|l| l.contains("  other.gguf") && l.ends_with("  -  Ok")),
        "{text}"
    );
    assert!(
        text.ends_with(
            "\nVerification results for all.txt - Success (the manifest names this model \
             m.gguf: the hashes match under that name)\n"
        ),
        "{text}"
    );
    // A manifest of two other models names neither: nothing found, exit 3.
    let two = manifest.clone() + &manifest.replace("m.gguf", "n.gguf");
    std::fs::write(d.join("two.txt"), two).unwrap();
    let out = gguf_in(d, &["hash", "other.gguf", "--check", "two.txt"]);
    assert_eq!(out.status.code(), Some(3));
    // No known algorithm: 4; unreadable manifest: 5.
    std::fs::write(d.join("junk.txt"), "md5 abc m.gguf\n").unwrap();
    assert_eq!(
        gguf_in(d, &["hash", "m.gguf", "--check", "junk.txt"])
            .status
            .code(),
        Some(4)
    );
    let out = gguf_in(d, &["hash", "m.gguf", "--check", "missing.txt"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr)
        .starts_with("gguf: missing.txt: cannot read manifest: "));
}
