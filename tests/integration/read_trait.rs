//! The read-side trait `Gguf`: one function inspects a single file and a
//! split model alike, and a model shows its metadata without the split keys.

use gguf::error::LookupError;
use std::fmt::Write;
use std::path::Path;

use gguf::summary::ModelSummary;
use gguf::write::{Builder, SplitOptions};
use gguf::Model;
use gguf::{Error, GgmlType, Gguf, GgufFile};

/// Everything the trait shows, as text: the same for any two views of the
/// same model.
fn describe(g: &impl Gguf) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "v{} {} {:?}", g.version(), g.endian(), g.architecture());
    let _ = writeln!(s, "{} keys", g.kv_count());
    assert_eq!(g.metadata().len(), g.kv_count());
    assert_eq!(g.keys().len(), g.kv_count());
    for (i, (key, value)) in g.metadata().enumerate() {
        assert_eq!(g.entry_at(i).map(|e| e.0), Some(key));
        assert_eq!(g.value(key), Some(value));
        assert!(g.contains_key(key));
        let _ = writeln!(s, "  {key}: {:?} = {value}", g.value_type(key).unwrap());
    }
    assert!(g.entry_at(g.kv_count()).is_none());
    let _ = writeln!(s, "{} tensors", g.tensor_count());
    assert_eq!(g.tensors().len(), g.tensor_count());
    for (i, t) in g.tensors().enumerate() {
        assert_eq!(g.tensor_index(t.name()), Some(i));
        assert_eq!(g.tensor(t.name()).unwrap().shape(), t.shape());
        let _ = writeln!(
            s,
            "  {} {} {:?} {}",
            t.name(),
            t.ggml_type(),
            t.shape(),
            t.element_count(),
        );
    }
    assert!(g.tensor_at(g.tensor_count()).is_none());
    let _ = writeln!(s, "ctx {:?}", g.get::<u32>("llama.context_length"));
    let _ = writeln!(
        s,
        "ctx as u64: {:?}",
        g.get::<u64>("llama.context_length").err()
    );
    let tokens: Vec<&str> = g.get_strings("tokenizer.ggml.tokens").unwrap().collect();
    let _ = writeln!(s, "tokens {tokens:?}");
    let scores: Vec<f32> = g.get_array_of("tokenizer.ggml.scores").unwrap().collect();
    let _ = writeln!(s, "scores {scores:?}");
    let _ = writeln!(
        s,
        "{}",
        g.get_array_of::<u32>("tokenizer.ggml.scores").unwrap_err()
    );
    let _ = writeln!(s, "{:?}", g.get_str("llama.context_length").err());
    let _ = writeln!(s, "{}", g.require("no.such.key").unwrap_err());
    let _ = writeln!(s, "{}", g.tensor("no.such.tensor").unwrap_err());
    s
}

fn builder() -> Builder<'static> {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("llama.context_length", 4096u32).unwrap();
    b.set("tokenizer.ggml.tokens", vec!["<s>", "</s>", "a"])
        .unwrap();
    b.set("tokenizer.ggml.scores", vec![0.0f32, -1.0, -2.5])
        .unwrap();
    b.set("general.name", "tiny").unwrap();
    for i in 0..3u8 {
        b.add_tensor(format!("blk.{i}.w"), GgmlType::I8, &[2, 2], vec![i; 4])
            .unwrap();
    }
    b
}

#[test]
fn one_function_inspects_a_file_and_a_split_model_alike() {
    let mut bytes = Vec::new();
    builder().write(&mut bytes).unwrap();
    let file = GgufFile::open(&bytes).unwrap();

    let dir = tempfile::tempdir().unwrap();
    builder()
        .write_split(
            dir.path().join("m.gguf"),
            &SplitOptions::default().max_tensors(1),
        )
        .unwrap();
    let model = Model::open(dir.path().join("m-00003-of-00003.gguf")).unwrap();
    assert_eq!(model.shard_count(), 3);

    let of_file = describe(&file);
    assert_eq!(describe(&model), of_file);
    // And what it says is right, not only equal.
    for line in [
        "5 keys",
        "  general.architecture: String = \"llama\"",
        "3 tensors",
        "  blk.2.w I8 [2, 2] 4",
        "ctx Ok(4096)",
        "tokens [\"<s>\", \"</s>\", \"a\"]",
        "scores [0.0, -1.0, -2.5]",
    ] {
        assert!(of_file.contains(line), "{line:?} not in\n{of_file}");
    }
    let err = model.get::<u64>("llama.context_length").unwrap_err();
    assert!(
        err.to_string().contains("has type u32, expected u64"),
        "{err}"
    );
    assert!(of_file.contains("expected array of u32"), "{of_file}");
    assert!(of_file.contains("no.such.key"), "{of_file}");
    assert!(of_file.contains("no.such.tensor"), "{of_file}");

    for (a, b) in file.tensors().zip(model.tensors()) {
        assert_eq!(a.data().unwrap(), b.data().unwrap());
    }
    assert_eq!(model.tensor("blk.2.w").unwrap().data().unwrap(), [2; 4]);

    // A file under construction: the builder's preview.
    let preview = builder().preview().unwrap();
    assert_eq!(describe(&preview), of_file);
    let offsets = |g: &GgufFile<'_>| g.tensors().map(|t| t.offset()).collect::<Vec<_>>();
    assert_eq!(offsets(&preview), [0, 32, 64]);
    assert_eq!(offsets(&preview), offsets(&file));
    assert_eq!(preview.data_offset(), file.data_offset());
    assert_eq!(preview.file_len(), file.file_len());
    assert!(matches!(
        preview.tensor("blk.1.w").unwrap().data(),
        Err(Error::Lookup(LookupError::DataNotLoaded { tensor })) if tensor == "blk.1.w"
    ));

    // The summary (and so estimate and llama_load, which take the same
    // trait) sees the same model.
    assert_eq!(
        ModelSummary::of(&model).unwrap(),
        ModelSummary::of(&file).unwrap()
    );
    // Each tensor's file: the shards', in order.
    let shards: Vec<usize> = model.tensors_with_shard().map(|(i, _)| i).collect();
    assert_eq!(shards, [0, 1, 2]);
    assert!(file.tensors_with_shard().all(|(i, _)| i == 0));
    // The shard's own view keeps its split keys.
    let first = model.shards()[0].file();
    assert_eq!(first.kv_count(), 5 + 3);
    assert_eq!(first.get::<u16>("split.count").unwrap(), 3);
}

/// Writes one shard whose metadata has the keys in `order` (split keys and
/// model keys interleaved) and one tensor.
fn shard(path: &Path, order: &[&str], no: u16, count: u16, tensor: &str) {
    let mut b = Builder::new();
    for key in order {
        match *key {
            "split.no" => b.set(*key, no),
            "split.count" => b.set(*key, count),
            "split.tensors.count" => b.set(*key, i32::from(count)),
            k => b.set(k, format!("value of {k}")),
        }
        .unwrap();
    }
    b.add_tensor(tensor, GgmlType::I8, &[1], vec![no as u8])
        .unwrap();
    b.write_to_path(path).unwrap();
}

#[test]
fn a_model_shows_its_metadata_without_the_split_keys_wherever_they_are() {
    let orders: [&[&str]; 4] = [
        &[
            "split.no",
            "split.count",
            "split.tensors.count",
            "a",
            "b",
            "c",
        ],
        &[
            "a",
            "b",
            "c",
            "split.no",
            "split.count",
            "split.tensors.count",
        ],
        &[
            "split.tensors.count",
            "a",
            "split.no",
            "b",
            "split.count",
            "c",
        ],
        &[
            "a",
            "split.count",
            "b",
            "split.no",
            "c",
            "split.tensors.count",
        ],
    ];
    let dir = tempfile::tempdir().unwrap();
    for (case, order) in orders.iter().enumerate() {
        for count in [1u16, 2] {
            let p = |k: u16| {
                dir.path()
                    .join(format!("c{case}-0000{k}-of-0000{count}.gguf"))
            };
            for no in 0..count {
                shard(&p(no + 1), order, no, count, &format!("t{no}"));
            }
            let model = Model::open(p(1)).unwrap();
            let keys: Vec<&str> = model.keys().collect();
            assert_eq!(keys, ["a", "b", "c"], "order {order:?}, {count} shard(s)");
            assert_eq!(model.kv_count(), 3);
            assert_eq!(model.metadata().len(), 3);
            for (i, key) in keys.iter().enumerate() {
                let (k, v) = model.entry_at(i).unwrap();
                assert_eq!((k, v.as_str()), (*key, Some(&*format!("value of {key}"))));
            }
            assert!(model.entry_at(3).is_none());
            for split_key in ["split.no", "split.count", "split.tensors.count"] {
                assert!(!model.contains_key(split_key));
                assert!(model.value(split_key).is_none());
                assert!(matches!(
                    model.get::<u16>(split_key),
                    Err(Error::Lookup(LookupError::KeyNotFound { .. }))
                ));
                // The shard's own view keeps them.
                assert!(model.shards()[0].file().contains_key(split_key));
            }
            assert_eq!(model.tensor_count(), usize::from(count));
        }
    }
}

#[test]
fn an_editors_preview_is_the_file_its_commit_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    builder().write_to_path(&path).unwrap();
    let before = describe(&GgufFile::open(&path).unwrap());

    let mut ed = gguf::edit::Editor::open(&path).unwrap();
    ed.set(
        "general.name",
        "a much longer name than before, so the header grows",
    )
    .unwrap()
    .remove("llama.context_length")
    .unwrap()
    .rename_tensor("blk.0.w", "blk.0.renamed")
    .unwrap()
    .set("tokenizer.ggml.tokens", vec!["x".to_string(); 40])
    .unwrap();
    let preview = describe(&ed.preview().unwrap());
    // Not written yet.
    assert_eq!(describe(ed.file()), before);
    assert_ne!(preview, before);
    assert!(preview.contains("blk.0.renamed"), "{preview}");
    assert!(preview.contains("ctx Err("), "{preview}");
    ed.commit().unwrap();
    assert_eq!(describe(&GgufFile::open(&path).unwrap()), preview);
}

#[test]
fn a_builders_preview_of_a_large_header_is_the_written_files_header() {
    let mut b = builder();
    let tokens: Vec<String> = (0..150_000).map(|i| format!("token{i}")).collect();
    b.set("tokenizer.ggml.tokens", tokens).unwrap();
    b.alignment(4096).unwrap();
    let preview = b.preview().unwrap();
    let bytes = b.to_vec().unwrap();
    let file = GgufFile::open(&bytes).unwrap();
    assert!(file.header_len() > 1 << 20, "{}", file.header_len());
    assert_eq!(describe_header(&preview), describe_header(&file));
    assert_eq!(preview.header_bytes(), file.header_bytes());
    assert_eq!(
        (
            preview.data_offset(),
            preview.file_len(),
            preview.alignment()
        ),
        (file.data_offset(), file.file_len(), 4096)
    );
    assert_eq!(
        preview.get_strings("tokenizer.ggml.tokens").unwrap().last(),
        Some("token149999")
    );
}

/// The metadata and tensor infos, without the checks of [`describe`] that
/// need the tokenizer it writes.
fn describe_header(g: &impl Gguf) -> Vec<String> {
    let mut out: Vec<String> = g.metadata().map(|(k, v)| format!("{k}={v}")).collect();
    out.extend(g.tensors().map(|t| {
        format!(
            "{} {} {:?} {}",
            t.name(),
            t.ggml_type(),
            t.shape(),
            t.offset()
        )
    }));
    out
}
