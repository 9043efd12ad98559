//! Split models: our shards equal gguf-py's for the same content and
//! limits, each reads the other's shards, split then merge gives back every
//! canonical file, hostile shard sets give precise errors, and a failed
//! split leaves no file behind.

use gguf::error::{BuildError, FormatError, LookupError, SplitError};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use gguf::naming::parse_shard_name;
use gguf::write::{Builder, SplitOptions};
use gguf::Model;
use gguf::{Endian, Error, GgmlType, Gguf, GgufFile};

use super::util::{ctx, python};

/// gguf-py's unsplit and split outputs (tests/oracles/split_with_gguf_py.py),
/// generated once per run.
fn gguf_py_split() -> &'static (PathBuf, Vec<Json>) {
    static OUT: OnceLock<(PathBuf, Vec<Json>)> = OnceLock::new();
    OUT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("gguf-py-split-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        python("split_with_gguf_py.py", &[dir.as_os_str()]);
        let configs: Vec<Json> =
            serde_json::from_slice(&std::fs::read(dir.join("configs.json")).unwrap()).unwrap();
        assert!(configs.len() >= 4);
        (dir, configs)
    })
}

fn options(config: &Json) -> SplitOptions {
    SplitOptions::default()
        .max_tensors(config["max_tensors"].as_u64().unwrap() as usize)
        .max_size(config["max_size"].as_u64().unwrap())
        .metadata_only_first(config["metadata_only_first"].as_bool().unwrap())
}

/// The files of `case` in `dir`, in shard order: `case.gguf` alone, or
/// `case-00001-of-0000N.gguf` ...
fn files_of(dir: &Path, case: &str) -> Vec<PathBuf> {
    let mut out: Vec<(u32, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if name == format!("{case}.gguf") {
            out.push((0, path));
        } else if let Some((stem, no)) = parse_shard_name(&name)
            && stem == case
        {
            out.push((no.index, path));
        }
    }
    out.sort();
    out.into_iter().map(|(_, p)| p).collect()
}

/// Cases written with the default alignment: gguf-py writes the other
/// cases' later shards without `general.alignment` yet padded to it, which
/// we deliberately do not reproduce (see `write::split`).
const DEFAULT_ALIGNMENT_CASES: [&str; 4] = ["le_all", "le_plain", "be_all", "le_no_tensors"];
const ALL_CASES: [&str; 8] = [
    "le_all",
    "le_align1",
    "le_align64",
    "le_align4096",
    "le_no_tensors",
    "be_all",
    "le_plain",
    "be_align64",
];

fn unsplit(case: &str) -> PathBuf {
    gguf_py_split()
        .0
        .join("unsplit")
        .join(format!("{case}.gguf"))
}

fn split_ours(input: &Path, out: &Path, opts: &SplitOptions) -> Vec<PathBuf> {
    let file = GgufFile::open(input).unwrap();
    let plan = Builder::from_file(&file)
        .unwrap()
        .write_split(out, opts)
        .unwrap();
    plan.into_iter().map(|s| s.path).collect()
}

#[test]
fn our_shards_equal_gguf_py_shards() {
    let (root, configs) = gguf_py_split();
    let ours = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for config in configs {
        let name = config["name"].as_str().unwrap();
        let theirs_dir = root.join(name);
        let ours_dir = ours.path().join(name);
        std::fs::create_dir_all(&ours_dir).unwrap();
        for case in DEFAULT_ALIGNMENT_CASES {
            let ours = split_ours(
                &unsplit(case),
                &ours_dir.join(format!("{case}.gguf")),
                &options(config),
            );
            let theirs = files_of(&theirs_dir, case);
            let names = |v: &[PathBuf]| {
                v.iter()
                    .map(|p| p.file_name().unwrap().to_owned())
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(&ours), names(&theirs), "{name}/{case}: file names");
            for (a, b) in ours.iter().zip(&theirs) {
                assert!(
                    std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
                    "{name}: {} differs",
                    a.display()
                );
                compared += 1;
            }
        }
    }
    // Several shards per case in most configurations, not just single files.
    assert!(compared > 60, "only {compared} files compared");
}

/// gguf-py's later shards of a custom alignment lack `general.alignment`;
/// ours carry it, and are otherwise gguf-py's.
#[test]
fn custom_alignment_shards_carry_the_alignment_key() {
    let (root, _) = gguf_py_split();
    let theirs = files_of(&root.join("metadata_first_only"), "le_align64");
    assert_eq!(theirs.len(), 2);
    let second = GgufFile::open(&theirs[1]).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !second.contains_key("general.alignment"),
        "gguf-py changed: it now writes the key in every shard"
    );
    let dir = tempfile::tempdir().unwrap();
    let ours = split_ours(
        &unsplit("le_align64"),
        &dir.path().join("le_align64.gguf"),
        &SplitOptions::default().metadata_only_first(true),
    );
    let second = GgufFile::open(&ours[1]).unwrap();
    assert_eq!(
        second.keys().collect::<Vec<_>>(),
        [
            "general.alignment",
            "split.no",
            "split.count",
            "split.tensors.count"
        ]
    );
    assert_eq!(second.alignment(), 64);
    let model = Model::open(&ours[0]).unwrap();
    let original = GgufFile::open(unsplit("le_align64")).unwrap();
    for t in original.tensors() {
        assert_eq!(
            model.tensor(t.name()).unwrap().data().unwrap(),
            t.data().unwrap()
        );
    }
}

#[test]
fn we_read_gguf_py_shards_as_one_model() {
    let (root, configs) = gguf_py_split();
    for config in configs {
        let name = config["name"].as_str().unwrap();
        for case in DEFAULT_ALIGNMENT_CASES {
            let files = files_of(&root.join(name), case);
            let original = GgufFile::open(unsplit(case)).unwrap();
            // Open from the last shard: any shard finds its siblings.
            let model = Model::open(files.last().unwrap()).unwrap();
            assert_eq!(model.shard_count(), files.len(), "{name}/{case}");
            assert_eq!(model.is_split(), files.len() > 1);
            let keys: Vec<&str> = model.keys().collect();
            assert_eq!(
                keys,
                original.keys().collect::<Vec<_>>(),
                "{name}/{case}: metadata"
            );
            for (k, v) in model.metadata() {
                assert_eq!(Some(v), original.value(k), "{name}/{case}: {k}");
            }
            assert_eq!(model.tensor_count(), original.tensor_count());
            let names: Vec<&str> = model.tensors().map(|t| t.name()).collect();
            assert_eq!(
                names,
                original.tensors().map(|t| t.name()).collect::<Vec<_>>()
            );
            for t in original.tensors() {
                let m = model.tensor(t.name()).unwrap();
                assert_eq!(m.shape(), t.shape());
                assert_eq!(m.ggml_type(), t.ggml_type());
                assert!(
                    m.data().unwrap() == t.data().unwrap(),
                    "{name}/{case}: {}",
                    t.name()
                );
                if t.ggml_type() == GgmlType::F32 && t.file_endian() == Endian::NATIVE {
                    assert_eq!(m.as_slice::<f32>().unwrap(), t.as_slice::<f32>().unwrap());
                }
                if gguf::codec::can_dequantize(t.ggml_type()) {
                    let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
                    assert!(
                        bits(m.to_f32().unwrap()) == bits(t.to_f32().unwrap()),
                        "{}",
                        t.name()
                    );
                }
            }
            for (i, t) in original.tensors().enumerate() {
                assert_eq!(model.tensor_at(i).unwrap().name(), t.name());
            }
            if let Some(split) = model.split() {
                assert_eq!(usize::from(split.count), files.len());
                assert_eq!(split.tensors_count, Some(original.tensor_count() as i32));
            }
        }
    }
}

#[test]
fn gguf_py_reads_our_shards_with_the_expected_keys() {
    let dir = tempfile::tempdir().unwrap();
    let case = "le_all";
    let original = GgufFile::open(unsplit(case)).unwrap();
    let opts = SplitOptions::default()
        .max_tensors(7)
        .metadata_only_first(true);
    let shards = split_ours(&unsplit(case), &dir.path().join("m.gguf"), &opts);
    let args: Vec<&OsStr> = shards.iter().map(|p| p.as_os_str()).collect();
    let views: Vec<Json> =
        serde_json::from_slice(&python("read_with_gguf_py.py", &args).stdout).unwrap();
    assert_eq!(views.len(), shards.len());
    let n = shards.len();
    let mut seen = Vec::new();
    for (i, view) in views.iter().enumerate() {
        let kvs = view["kvs"].as_array().unwrap();
        let keys: Vec<&str> = kvs.iter().map(|k| k["key"].as_str().unwrap()).collect();
        let split: Vec<(&str, &str, u64)> = kvs[kvs.len() - 3..]
            .iter()
            .map(|k| {
                (
                    k["key"].as_str().unwrap(),
                    k["type"].as_str().unwrap(),
                    k["value"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            split,
            [
                ("split.no", "u16", i as u64),
                ("split.count", "u16", n as u64),
                ("split.tensors.count", "i32", original.tensor_count() as u64)
            ]
        );
        if i == 0 {
            assert_eq!(keys[..keys.len() - 3], original.keys().collect::<Vec<_>>());
            assert!(view["tensors"].as_array().unwrap().is_empty());
        } else {
            assert_eq!(keys.len(), 3);
        }
        for t in view["tensors"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            let data = original.tensor(name).unwrap().data().unwrap();
            assert_eq!(
                t["sha256"].as_str().unwrap(),
                Sha256::digest(data)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>(),
                "{name}"
            );
            seen.push(name.to_owned());
        }
    }
    assert_eq!(
        seen,
        original
            .tensors()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    );
}

/// Canonical files: every gguf-py case, and files of every version, byte
/// order and several alignments built field by field.
fn canonical_files() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = ALL_CASES
        .iter()
        .map(|c| (c.to_string(), std::fs::read(unsplit(c)).unwrap()))
        .collect();
    for version in [1, 2, 3] {
        for endian in [Endian::Little, Endian::Big] {
            for alignment in [32, 8, 256] {
                let c = ctx(version, endian);
                out.push((
                    format!("raw-v{version}-{endian}-{alignment}"),
                    super::round_trip::raw_file(c, alignment),
                ));
            }
        }
    }
    out
}

#[test]
fn split_then_merge_gives_back_every_canonical_file() {
    let dir = tempfile::tempdir().unwrap();
    let configs = [
        SplitOptions::default().max_tensors(1),
        SplitOptions::default().max_size(40),
        SplitOptions::default()
            .max_tensors(2)
            .metadata_only_first(true),
        SplitOptions::default().metadata_only_first(true),
        SplitOptions::default(),
    ];
    for (name, bytes) in canonical_files() {
        let input = dir.path().join(format!("{name}.gguf"));
        std::fs::write(&input, &bytes).unwrap();
        for (i, opts) in configs.iter().enumerate() {
            let out = dir.path().join(format!("{name}-split{i}.gguf"));
            let shards = split_ours(&input, &out, opts);
            let model = Model::open(&shards[0]).unwrap();
            let mut merged = Vec::new();
            Builder::from_model(&model)
                .unwrap()
                .write(&mut merged)
                .unwrap();
            assert!(
                merged == bytes,
                "{name} with {opts:?}: merge differs from the original"
            );
            let merged_path = dir.path().join(format!("{name}-merged{i}.gguf"));
            Builder::from_model(&model)
                .unwrap()
                .write_to_path(&merged_path)
                .unwrap();
            assert!(
                std::fs::read(&merged_path).unwrap() == bytes,
                "{name}: merged file differs"
            );
            for s in shards {
                std::fs::remove_file(s).unwrap();
            }
        }
    }
}

// ---- hostile shard sets ----

/// Writes a shard with the given split keys (`None` leaves a key out) and
/// tensors.
fn shard(path: &Path, no: Option<u16>, count: Option<u16>, total: Option<i32>, tensors: &[&str]) {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    if let Some(no) = no {
        b.set("split.no", no).unwrap();
    }
    if let Some(count) = count {
        b.set("split.count", count).unwrap();
    }
    if let Some(total) = total {
        b.set("split.tensors.count", total).unwrap();
    }
    for t in tensors {
        b.add_tensor(*t, GgmlType::I8, &[2], vec![1u8, 2]).unwrap();
    }
    b.write_to_path(path).unwrap();
}

fn good_set(dir: &Path) -> [PathBuf; 3] {
    let p = |k| dir.join(format!("m-0000{k}-of-00003.gguf"));
    shard(&p(1), Some(0), Some(3), Some(3), &["a"]);
    shard(&p(2), Some(1), Some(3), Some(3), &["b"]);
    shard(&p(3), Some(2), Some(3), Some(3), &["c"]);
    [p(1), p(2), p(3)]
}

#[test]
fn a_good_hand_made_set_opens_from_every_shard() {
    let dir = tempfile::tempdir().unwrap();
    for path in good_set(dir.path()) {
        let m = Model::open(&path).unwrap();
        assert_eq!(
            m.tensors().map(|t| t.name()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(m.tensor_shard("c"), Some(2));
        assert_eq!(
            m.shards()[1].origin().path(),
            Some(dir.path().join("m-00002-of-00003.gguf").as_path())
        );
        assert!(matches!(
            m.tensor("zz"),
            Err(Error::Lookup(LookupError::TensorNotFound { .. }))
        ));
    }
}

#[test]
fn hostile_shard_sets_give_precise_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |k: u32| d.join(format!("m-0000{k}-of-00003.gguf"));

    // A missing shard names the expected path.
    let [_, second, _] = good_set(d);
    std::fs::remove_file(&second).unwrap();
    match Model::open(p(1)) {
        Err(Error::Split(SplitError::ShardMissing {
            path,
            index: 2,
            count: 3,
        })) => assert_eq!(path, second),
        other => panic!("{other:?}"),
    }
    let msg = Model::open(p(3)).unwrap_err().to_string();
    assert!(
        msg.contains("m-00002-of-00003.gguf") && msg.contains("missing"),
        "{msg}"
    );

    // split.no not the shard's position.
    good_set(d);
    shard(&p(2), Some(2), Some(3), Some(3), &["b"]);
    match Model::open(p(1)) {
        Err(Error::Split(SplitError::ShardNumber {
            path,
            expected: 1,
            found: 2,
        })) => assert_eq!(path, p(2)),
        other => panic!("{other:?}"),
    }
    // ... also when the shard given is the one whose number is wrong.
    assert!(matches!(
        Model::open(p(2)),
        Err(Error::Split(SplitError::ShardNumber {
            expected: 1,
            found: 2,
            ..
        }))
    ));

    // split.count differing between shards.
    good_set(d);
    shard(&p(3), Some(2), Some(4), Some(3), &["c"]);
    match Model::open(p(1)) {
        Err(Error::Split(SplitError::ShardCount {
            path,
            expected: 3,
            found: 4,
        })) => assert_eq!(path, p(3)),
        other => panic!("{other:?}"),
    }

    // The tensor total differs from split.tensors.count.
    good_set(d);
    shard(&p(3), Some(2), Some(3), Some(3), &["c", "d"]);
    match Model::open(p(2)) {
        Err(Error::Split(SplitError::ShardTensorCount {
            path,
            expected: 3,
            found: 4,
        })) => assert_eq!(path, p(1)),
        other => panic!("{other:?}"),
    }

    // A tensor name in two shards.
    good_set(d);
    shard(&p(3), Some(2), Some(3), Some(3), &["a"]);
    match Model::open(p(1)) {
        Err(Error::Split(SplitError::ShardDuplicateTensor {
            tensor,
            first,
            second,
        })) => {
            assert_eq!((tensor.as_str(), first, second), ("a", p(1), p(3)));
        }
        other => panic!("{other:?}"),
    }

    // A shard that is not GGUF.
    good_set(d);
    std::fs::write(p(2), b"not a gguf file at all").unwrap();
    match Model::open(p(1)) {
        Err(Error::File { path, source }) => {
            assert_eq!(path, p(2));
            assert!(
                matches!(*source, Error::Format(FormatError::BadMagic { .. })),
                "{source}"
            );
        }
        other => panic!("{other:?}"),
    }
    std::fs::write(p(2), b"").unwrap();
    assert!(matches!(
        Model::open(p(1)),
        Err(Error::File { path, .. }) if path == p(2)
    ));

    // split.no missing, split.count of the wrong type.
    good_set(d);
    shard(&p(2), None, Some(3), Some(3), &["b"]);
    let e = Model::open(p(1)).unwrap_err();
    assert!(
        matches!(&e, Error::File { path, source } if *path == p(2) && matches!(**source, Error::Lookup(LookupError::KeyNotFound { .. }))),
        "{e}"
    );
    good_set(d);
    let mut b = Builder::new();
    b.set("split.no", 1u16)
        .unwrap()
        .set("split.count", 3u32)
        .unwrap()
        .set("split.tensors.count", 3i32)
        .unwrap();
    b.add_tensor("b", GgmlType::I8, &[2], vec![1u8, 2]).unwrap();
    b.write_to_path(p(2)).unwrap();
    let e = Model::open(p(1)).unwrap_err();
    assert!(
        matches!(&e, Error::File { source, .. } if matches!(**source, Error::Lookup(LookupError::TypeMismatch { .. }))),
        "{e}"
    );
    assert!(e.to_string().contains("m-00002-of-00003.gguf"), "{e}");

    // split.tensors.count missing from the first shard.
    good_set(d);
    shard(&p(1), Some(0), Some(3), None, &["a"]);
    assert!(
        matches!(Model::open(p(3)), Err(Error::File { source, .. }) if matches!(*source, Error::Lookup(LookupError::KeyNotFound { .. })))
    );

    // A shard renamed so that its name does not say where its siblings are.
    good_set(d);
    let renamed = d.join("renamed.gguf");
    std::fs::copy(p(2), &renamed).unwrap();
    assert!(matches!(
        Model::open(&renamed),
        Err(Error::Split(SplitError::ShardName { .. }))
    ));
    // ... or whose name and keys disagree on the count.
    let other = d.join("m-00002-of-00004.gguf");
    std::fs::copy(p(2), &other).unwrap();
    assert!(matches!(
        Model::open(&other),
        Err(Error::Split(SplitError::ShardCount {
            expected: 4,
            found: 3,
            ..
        }))
    ));
}

#[test]
fn a_single_file_with_split_count_zero_or_one_is_an_ordinary_model() {
    let dir = tempfile::tempdir().unwrap();
    for count in [0u16, 1] {
        // llama-gguf-split --merge leaves split.count 0 in the merged file.
        let path = dir.path().join(format!("merged{count}.gguf"));
        shard(&path, Some(0), Some(count), Some(0), &["a", "b"]);
        let m = Model::open(&path).unwrap();
        assert!(!m.is_split());
        assert_eq!(m.tensor_count(), 2);
        assert_eq!(m.split().map(|s| s.count), Some(count));
        assert!(!m.contains_key("split.count") && m.contains_key("general.architecture"));
        assert_eq!(m.kv_count(), 1);
    }
}

#[test]
fn a_failed_split_leaves_no_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new();
    b.add_tensor("a", GgmlType::I8, &[2], vec![1u8, 2]).unwrap();
    b.add_tensor_fn("b", GgmlType::I8, &[2], |_w| {
        Err(std::io::Error::other("source failed"))
    })
    .unwrap();
    let out = dir.path().join("m.gguf");
    let err = b
        .write_split(&out, &SplitOptions::default().max_tensors(1))
        .unwrap_err();
    assert!(err.to_string().contains("source failed"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "files left: {left:?}");
    // The builder keeps its tensors after the failure: planning still works.
    assert_eq!(
        b.plan_split(&out, &SplitOptions::default().max_tensors(1))
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn editing_a_split_model_stays_in_place_and_renames_across_shards() {
    use gguf::edit::Commit;
    use gguf::edit::ModelEditor;
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.reserve_metadata(512).unwrap();
    for (i, t) in ["a", "b", "c"].iter().enumerate() {
        b.add_tensor(*t, GgmlType::I8, &[4], vec![i as u8; 4])
            .unwrap();
    }
    let shards = b
        .write_split(
            dir.path().join("m.gguf"),
            &SplitOptions::default().max_tensors(1),
        )
        .unwrap();
    let before: Vec<Vec<u8>> = shards
        .iter()
        .map(|s| std::fs::read(&s.path).unwrap())
        .collect();

    let mut ed = ModelEditor::open(&shards[2].path).unwrap();
    ed.set("general.name", "edited").unwrap();
    ed.remove("general.architecture").unwrap();
    assert!(matches!(
        ed.rename_tensor("a", "c"),
        Err(Error::Build(BuildError::TensorExists { .. }))
    ));
    assert!(matches!(
        ed.rename_tensor("zz", "y"),
        Err(Error::Lookup(LookupError::TensorNotFound { .. }))
    ));
    for key in ["split.no", "split.count", "split.tensors.count"] {
        assert!(
            matches!(
                ed.set(key, 1u16),
                Err(Error::Build(BuildError::InvalidKey { .. }))
            ),
            "{key}"
        );
        assert!(ed.remove(key).is_err());
    }
    ed.rename_tensor("c", "output.weight").unwrap();
    ed.rename_tensor("a", "c").unwrap(); // free again
    let done = ed.commit().unwrap();
    assert_eq!(
        done.len(),
        2,
        "first and last shards change, the middle one does not"
    );
    assert_eq!(done[0].0, shards[0].path);
    assert!(
        matches!(done[0].1, Commit::InPlace { .. }),
        "{:?}",
        done[0].1
    );
    assert_eq!(std::fs::read(&shards[1].path).unwrap(), before[1]);
    for (s, old) in shards.iter().zip(&before) {
        assert_eq!(std::fs::metadata(&s.path).unwrap().len(), old.len() as u64);
    }

    let m = Model::open(&shards[1].path).unwrap();
    assert_eq!(m.get_str("general.name").unwrap(), "edited");
    assert!(!m.contains_key("general.architecture"));
    assert_eq!(
        m.tensors().map(|t| t.name()).collect::<Vec<_>>(),
        ["c", "b", "output.weight"]
    );
    assert_eq!(m.tensor("output.weight").unwrap().data().unwrap(), &[2; 4]);
    assert_eq!(m.split().unwrap().count, 3);
}
