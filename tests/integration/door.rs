//! The one door: every source opens through `Model::open` /
//! `GgufFile::open`, and every reading command of the CLI takes every
//! source, while the editing commands refuse what they cannot write.

use std::path::Path;

use gguf::model::Origin;
use gguf::write::{Builder, SplitOptions};
use gguf::{GgmlType, Gguf, GgufFile, Model};
use gguf::{OpenOptions, Source};

use super::remote::{gguf, run, Server};

/// A split model of three shards (one tensor each) in `dir`, named
/// `m-0000K-of-00003.gguf`.
fn split_model(dir: &Path) {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.name", "door").unwrap();
    for i in 0..3u8 {
        b.add_tensor(format!("t{i}"), GgmlType::F32, &[4], vec![i; 16])
            .unwrap();
    }
    b.write_split(dir.join("m.gguf"), &SplitOptions::default().max_tensors(1))
        .unwrap();
}

#[test]
fn every_source_opens_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    split_model(dir.path());
    let server = Server::http(dir.path());
    let shard = dir.path().join("m-00002-of-00003.gguf");
    let bytes = std::fs::read(dir.path().join("m-00001-of-00003.gguf")).unwrap();
    let local = Model::open(&shard).unwrap();
    let remote = Model::open(server.url("m-00003-of-00003.gguf")).unwrap();
    for m in [&local, &remote] {
        assert_eq!(m.shard_count(), 3);
        assert_eq!(m.get_str("general.name").unwrap(), "door");
        // Held (mapped) or read on request: the same bytes.
        assert_eq!(&*m.tensor("t2").unwrap().read().unwrap(), &[2u8; 16]);
    }
    assert_eq!(
        local.shards()[1].origin(),
        &Origin::Path(dir.path().join("m-00002-of-00003.gguf"))
    );
    let url = remote.shards()[2].origin().url().unwrap().to_owned();
    assert!(url.ends_with("/m-00003-of-00003.gguf"), "{url}");
    // One file: the bytes of a shard, the same shard as a stream, as a URL.
    let from_bytes = GgufFile::open(&bytes).unwrap();
    let from_stream = GgufFile::open(Source::reader(std::io::Cursor::new(bytes.clone()))).unwrap();
    let from_url = GgufFile::open(server.url("m-00001-of-00003.gguf")).unwrap();
    for f in [&from_bytes, &from_stream, &from_url] {
        assert_eq!(f.value("split.count").and_then(|v| v.as_integer()), Some(3));
        assert_eq!(f.tensor_count(), 1);
        assert_eq!(&*f.tensor("t0").unwrap().read().unwrap(), &[0u8; 16]);
    }
    // The bytes of one shard are not a whole model.
    assert!(Model::open(&bytes).is_err());
}

#[test]
fn a_string_is_a_url_an_ollama_entry_or_a_path() {
    assert!(Source::from("https://h/m.gguf").is_url());
    assert!(Source::from("S3://bucket/m.gguf").is_url());
    assert!(matches!(Source::from("ollama:gemma3"), Source::Ollama(_)));
    assert!(Source::from("ollama://registry.ollama.ai/x").is_url());
    assert!(Source::from("models/m.gguf").is_path());
    assert!(Source::path("hf://x").is_path());
    // A path never reaches the network, whatever it looks like.
    let e = Model::open(Source::path("hf://owner/repo/m.gguf")).unwrap_err();
    assert!(
        e.to_string().contains("No such file or directory") || e.to_string().contains("I/O"),
        "{e}"
    );
}

#[test]
fn commands_that_did_not_read_urls_now_do() {
    let dir = tempfile::tempdir().unwrap();
    split_model(dir.path());
    let server = Server::http(dir.path());
    let url = server.url("m-00002-of-00003.gguf");
    // `get` of a later shard's URL: the model's metadata (the first shard's).
    let (name, _) = run(gguf().args(["get", &url, "general.name"]));
    assert_eq!(name.trim(), "door");
    // `diff` of the remote model against its local copy: no difference.
    let local = dir.path().join("m-00001-of-00003.gguf");
    run(gguf().args(["diff", &url, local.to_str().unwrap()]));
    // `merge` of a remote split model: one local file of every tensor.
    let out = dir.path().join("whole.gguf");
    run(gguf().args(["merge", &url, out.to_str().unwrap()]));
    let whole = Model::open(&out).unwrap();
    assert!(!whole.is_split());
    assert_eq!(whole.tensor("t1").unwrap().data().unwrap(), &[1u8; 16]);
}

#[test]
fn editing_commands_need_a_local_file() {
    let dir = tempfile::tempdir().unwrap();
    split_model(dir.path());
    let server = Server::http(dir.path());
    let url = server.url("m-00001-of-00003.gguf");
    for source in [url.as_str(), "ollama:tiny", "-"] {
        for args in [
            vec!["set", source, "general.name", "x"],
            vec!["rm", source, "general.name"],
            vec!["mv", source, "general.name", "general.other"],
        ] {
            let out = gguf().args(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{args:?}");
            assert!(stderr.contains("needs a local file"), "{args:?}: {stderr}");
        }
    }
}

#[test]
fn inspect_file_shows_one_shard_as_gguf_dump_does() {
    let dir = tempfile::tempdir().unwrap();
    split_model(dir.path());
    let shard = dir.path().join("m-00002-of-00003.gguf");
    let shard = shard.to_str().unwrap();
    // Without --file: the whole model, no split keys among its metadata.
    let (whole, _) = run(gguf().args(["inspect", shard]));
    assert!(whole.contains("t0") && whole.contains("t2"), "{whole}");
    // With --file: this shard's own header.
    let (text, _) = run(gguf().args(["inspect", shard, "--file"]));
    assert!(text.contains("* Dumping 1 tensor(s)"), "{text}");
    assert!(text.contains("split.no = 1"), "{text}");
    assert!(text.contains("GGUF.tensor_count = 1"), "{text}");
    assert!(text.contains("| t1 | offset 0"), "{text}");
    assert!(
        !text.contains("| t0 |") && !text.contains("| t2 |"),
        "{text}"
    );
    let (json, _) = run(gguf().args(["inspect", shard, "--file", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&str> = doc["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert!(
        keys.contains(&"split.no") && keys.contains(&"split.count"),
        "{keys:?}"
    );
    let tensors = doc["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 1);
    assert_eq!(tensors[0]["name"], "t1");
    let file = GgufFile::open(shard).unwrap();
    assert_eq!(
        tensors[0]["file_offset"],
        file.tensor("t1").unwrap().file_offset()
    );
}

#[test]
fn the_async_door_reads_a_remote_split_model() {
    let dir = tempfile::tempdir().unwrap();
    split_model(dir.path());
    let server = Server::http(dir.path());
    let url = server.url("m-00001-of-00003.gguf");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let model = Model::open_async(url, &OpenOptions::default())
            .await
            .unwrap();
        assert_eq!(model.shard_count(), 3);
        server.take_stats();
        let t = model.tensor("t1").unwrap();
        assert_eq!(&*t.read_async().await.unwrap(), &[1u8; 16]);
        assert_eq!(&*t.read_range_async(4..8).await.unwrap(), &[1u8; 4]);
        assert_eq!(server.take_stats().0, 2, "one request per read");
        // A blocking read of a file opened from async code: an error
        // naming the async read, not a hang.
        let e = t.read().unwrap_err();
        assert!(e.to_string().contains("read_async"), "{e}");
        // A local source opens synchronously inside the future.
        let local = Model::open_async(
            dir.path().join("m-00003-of-00003.gguf"),
            &OpenOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(local.tensor("t2").unwrap().data().unwrap(), &[2u8; 16]);
    });
}

/// An empty tensor whose data would start at the very end of the file (found
/// by the `reader_agree` fuzz target): a stream reads it as the empty slice
/// the slice reader holds, instead of failing because a stream holds no data.
#[test]
fn an_empty_tensor_at_the_end_of_a_stream_reads_as_empty() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"GGUF");
    bytes.extend_from_slice(&3u32.to_le_bytes()); // version
    bytes.extend_from_slice(&1u64.to_le_bytes()); // one tensor
    bytes.extend_from_slice(&0u64.to_le_bytes()); // no metadata
    bytes.extend_from_slice(&8u64.to_le_bytes());
    bytes.extend_from_slice(b"e.weight");
    bytes.extend_from_slice(&3u32.to_le_bytes()); // dims: 0 x 5 x 2^62
    for d in [0u64, 5, 1 << 62] {
        bytes.extend_from_slice(&d.to_le_bytes());
    }
    bytes.extend_from_slice(&0u32.to_le_bytes()); // F32
    bytes.extend_from_slice(&0u64.to_le_bytes()); // offset 0
    bytes.resize(96, 0); // padded to the data section, which is empty
    let held = GgufFile::open(&bytes).unwrap();
    let stream = GgufFile::open(Source::reader(std::io::Cursor::new(bytes.clone()))).unwrap();
    assert_eq!(
        held.tensor("e.weight").unwrap().data().unwrap(),
        &[] as &[u8]
    );
    let t = stream.tensor("e.weight").unwrap();
    assert!(t.data().is_err(), "a stream holds no data");
    assert_eq!(t.read().unwrap().as_ref(), &[] as &[u8]);
    assert_eq!(t.read_range(0..0).unwrap().as_ref(), &[] as &[u8]);
}
