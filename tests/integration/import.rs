//! `gguf import` / `gguf::import`: our import of each checkpoint of
//! `tests/data/import/` against what llama.cpp's converter wrote from it
//! (`<name>.f16.gguf`, `<name>.q8_0.gguf`), and the errors of bad input.
//!
//! The comparison is whole: metadata keys in order with their types and
//! values, tensors in order with their names, types, shapes and bytes, and
//! then the files byte for byte. While the tokenizer part of the import is
//! a stub (no `tokenizer.*` key written), the `tokenizer.*` keys are left
//! out of the comparison and the test prints a `note:` line saying so.

use std::path::{Path, PathBuf};

use gguf::import::Error;
use gguf::import::{import_model, ImportOptions, OutType, Target};
use gguf::quantize::{quantize_model, QuantizeJob, QuantizeOptions};
use gguf::write::{Builder, SplitOptions};
use gguf::{Gguf, GgufFile, Model};

use super::util::gguf;

use super::import_oracle::{pre_tokenizer, FIXTURES};

/// The fixtures, and `llama-card`: llama-spm plus a model card (README.md
/// front matter: license, tags, languages, base models and datasets as the
/// converter writes them).
fn fixtures() -> impl Iterator<Item = (&'static str, bool)> {
    FIXTURES
        .iter()
        .map(|f| (f.0, f.2))
        .chain([("llama-card", false)])
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/import")
}

/// The options the converter's outputs were made with: the BPE fixtures'
/// pre-tokenizers are registered under these names (the README of
/// `tests/data/import/`), which the importer takes as `--pre-tokenizer`.
fn options(dir: &Path, target: Target) -> ImportOptions<'static> {
    let mut o = ImportOptions::new(target);
    o.pre_tokenizer = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(pre_tokenizer)
        .map(str::to_owned);
    o
}

fn import_to(
    dir: &Path,
    out: &Path,
    target: Target,
) -> gguf::import::Result<gguf::import::ImportReport> {
    import_model(dir, out, &options(dir, target), |_, _, _| {})
}

/// Whether our import wrote tokenizer keys (the tokenizer part merged).
fn has_tokenizer(file: &GgufFile<'_>) -> bool {
    file.value("tokenizer.ggml.model").is_some()
}

/// Every difference between the converter's file and ours: metadata
/// (order, type, value), tensors (order, name, type, shape, bytes).
pub(super) fn differences(
    theirs: &GgufFile<'_>,
    ours: &GgufFile<'_>,
    with_tokenizer: bool,
) -> Vec<String> {
    let keep = |k: &&str| with_tokenizer || !k.starts_with("tokenizer.");
    let a: Vec<(&str, String)> = theirs
        .metadata()
        .filter(|(k, _)| keep(k))
        .map(|(k, v)| (k, format!("{:?}", gguf::format::OwnedValue::from_value(&v))))
        .collect();
    let b: Vec<(&str, String)> = ours
        .metadata()
        .filter(|(k, _)| keep(k))
        .map(|(k, v)| (k, format!("{:?}", gguf::format::OwnedValue::from_value(&v))))
        .collect();
    let mut diffs = Vec::new();
    let ka: Vec<&str> = a.iter().map(|(k, _)| *k).collect();
    let kb: Vec<&str> = b.iter().map(|(k, _)| *k).collect();
    if ka != kb {
        diffs.push(format!(
            "metadata keys differ:\n  converter {ka:?}\n  ours      {kb:?}"
        ));
    }
    for (k, v) in &a {
        match b.iter().find(|(kb, _)| kb == k) {
            Some((_, w)) if w != v => diffs.push(format!("{k}: converter {v}, ours {w}")),
            _ => {}
        }
    }
    let ta: Vec<_> = theirs.tensors().collect();
    let tb: Vec<_> = ours.tensors().collect();
    let na: Vec<&str> = ta.iter().map(|t| t.name()).collect();
    let nb: Vec<&str> = tb.iter().map(|t| t.name()).collect();
    if na != nb {
        diffs.push(format!(
            "tensors differ:\n  converter {na:?}\n  ours      {nb:?}"
        ));
    }
    for t in &ta {
        let Some(u) = tb.iter().find(|u| u.name() == t.name()) else {
            continue;
        };
        if (t.ggml_type(), t.shape()) != (u.ggml_type(), u.shape()) {
            diffs.push(format!(
                "{}: converter {} {:?}, ours {} {:?}",
                t.name(),
                t.ggml_type(),
                t.shape(),
                u.ggml_type(),
                u.shape()
            ));
        } else if t.data().ok() != u.data().ok() {
            diffs.push(format!("{}: the bytes differ", t.name()));
        }
    }
    diffs
}

/// Imports `name` to `ty` and compares it with the converter's file.
fn compare_with_converter(name: &str, ty: OutType, suffix: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format!("{name}.{suffix}.gguf"));
    let report = import_to(&data().join(name), &out, Target::Float(ty)).unwrap();
    assert_eq!(report.files, std::slice::from_ref(&out));
    let theirs_bytes = std::fs::read(data().join(format!("{name}.{suffix}.gguf"))).unwrap();
    let ours_bytes = std::fs::read(&out).unwrap();
    let theirs = GgufFile::open(&theirs_bytes[..]).unwrap();
    let ours = GgufFile::open(&ours_bytes[..]).unwrap();
    let with_tokenizer = has_tokenizer(&ours);
    if !with_tokenizer {
        println!("note: {name} {suffix}: tokenizer.* keys not compared (the tokenizer part of the import is a stub)");
    }
    let diffs = differences(&theirs, &ours, with_tokenizer);
    assert!(diffs.is_empty(), "{name} {suffix}:\n{}", diffs.join("\n"));
    assert_eq!(report.tensors, theirs.tensor_count());
    if with_tokenizer {
        assert!(
            theirs_bytes == ours_bytes,
            "{name} {suffix}: same content but not the same bytes"
        );
    }
}

#[test]
fn f16_imports_equal_the_converters() {
    for (name, _) in fixtures() {
        compare_with_converter(name, OutType::F16, "f16");
    }
}

#[test]
fn q8_0_imports_equal_the_converters() {
    for (name, _) in fixtures() {
        compare_with_converter(name, OutType::Q8_0, "q8_0");
    }
}

#[test]
fn bf16_imports_equal_the_converters() {
    let mut compared = 0;
    for (name, _) in fixtures().filter(|f| f.1) {
        compare_with_converter(name, OutType::BF16, "bf16");
        compared += 1;
    }
    assert!(
        compared >= 14,
        "only {compared} fixtures have a BF16 output"
    );
}

/// F32 and BF16 (the converter's outputs are not committed for them):
/// the F16 layout at another precision. llama-spm's weights are f32, so
/// the F32 import holds them exactly (they round to the converter's F16
/// values), and the BF16 import holds them rounded to bfloat16.
#[test]
fn f32_and_bf16_keep_the_f16_layout_at_their_precision() {
    let dir = tempfile::tempdir().unwrap();
    let f16 = Model::open(data().join("llama-spm.f16.gguf")).unwrap();
    let f32_out = dir.path().join("f32.gguf");
    let bf16_out = dir.path().join("bf16.gguf");
    import_to(
        &data().join("llama-spm"),
        &f32_out,
        Target::Float(OutType::F32),
    )
    .unwrap();
    import_to(
        &data().join("llama-spm"),
        &bf16_out,
        Target::Float(OutType::BF16),
    )
    .unwrap();
    let f32m = Model::open(&f32_out).unwrap();
    let bf16m = Model::open(&bf16_out).unwrap();
    assert_eq!(f32m.get::<u32>("general.file_type").unwrap(), 0);
    assert_eq!(bf16m.get::<u32>("general.file_type").unwrap(), 32);
    for t in f16.tensors() {
        let exact = f32m.tensor(t.name()).unwrap();
        let b = bf16m.tensor(t.name()).unwrap();
        assert_eq!(exact.ggml_type(), gguf::GgmlType::F32, "{}", t.name());
        let kept = t.ggml_type() == gguf::GgmlType::F32;
        let want = if kept {
            gguf::GgmlType::F32
        } else {
            gguf::GgmlType::BF16
        };
        assert_eq!(b.ggml_type(), want, "{}", t.name());
        assert_eq!((exact.shape(), b.shape()), (t.shape(), t.shape()));
        let x = exact.to_f32().unwrap();
        let as_f16: Vec<f32> = x
            .iter()
            .map(|&v| {
                if kept {
                    v
                } else {
                    half::f16::from_f32(v).to_f32()
                }
            })
            .collect();
        assert_eq!(as_f16, t.to_f32().unwrap(), "{}", t.name());
        let as_bf16: Vec<f32> = x
            .iter()
            .map(|&v| {
                if kept {
                    v
                } else {
                    half::bf16::from_f32(v).to_f32()
                }
            })
            .collect();
        assert_eq!(as_bf16, b.to_f32().unwrap(), "{}", t.name());
    }
}

#[test]
fn a_preset_is_the_f16_import_quantized_by_quantize_model() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["llama-bpe", "gemma3"] {
        let ours = dir.path().join(format!("{name}.q4_k_m.gguf"));
        let target = Target::parse("q4_k_m").unwrap();
        let report = import_to(&data().join(name), &ours, target).unwrap();
        assert_eq!(report.files, std::slice::from_ref(&ours));
        // Quantize the f16 file the import starts from: the converter's when
        // the tokenizer part is there, else our own f16 import.
        let f16 = dir.path().join(format!("{name}.f16.gguf"));
        import_to(&data().join(name), &f16, Target::Float(OutType::F16)).unwrap();
        let ours_f16 = GgufFile::open(&f16).unwrap();
        let source = if has_tokenizer(&ours_f16) {
            data().join(format!("{name}.f16.gguf"))
        } else {
            println!("note: {name}: preset compared with our own f16 import quantized (tokenizer part is a stub)");
            f16.clone()
        };
        let expected = dir.path().join(format!("{name}.expected.gguf"));
        let job = QuantizeJob::new(QuantizeOptions::new("Q4_K_M").unwrap());
        quantize_model(&Model::open(&source).unwrap(), &expected, &job, |_, _| {}).unwrap();
        assert!(
            std::fs::read(&ours).unwrap() == std::fs::read(&expected).unwrap(),
            "{name}: the preset import differs from quantize_model on the f16 file"
        );
        // The temporary f16 file is gone.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }
}

#[test]
fn split_output_merges_back_to_the_single_file() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("one.gguf");
    import_to(
        &data().join("qwen2-bias"),
        &single,
        Target::Float(OutType::F16),
    )
    .unwrap();
    for target in ["f16", "q4_k_m"] {
        let out = dir.path().join(format!("split-{target}.gguf"));
        let mut options = options(&data().join("qwen2-bias"), Target::parse(target).unwrap());
        options.split = Some(SplitOptions::default().max_tensors(10));
        let report = import_model(data().join("qwen2-bias"), &out, &options, |_, _, _| {}).unwrap();
        assert_eq!(report.files.len(), 3, "27 tensors, 10 a shard");
        assert!(report.files[0].ends_with(format!("split-{target}-00001-of-00003.gguf")));
        let model = Model::open(&report.files[1]).unwrap();
        let merged = Builder::from_model(&model).unwrap().to_vec().unwrap();
        let whole = if target == "f16" {
            std::fs::read(&single).unwrap()
        } else {
            let q = dir.path().join("q.gguf");
            import_to(
                &data().join("qwen2-bias"),
                &q,
                Target::parse(target).unwrap(),
            )
            .unwrap();
            std::fs::read(&q).unwrap()
        };
        assert!(
            merged == whole,
            "{target}: merged shards differ from the single file"
        );
    }
}

// ---- bad input ----

/// A copy of fixture `name` to break.
pub(super) fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join(name);
    std::fs::create_dir(&to).unwrap();
    for e in std::fs::read_dir(data().join(name)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    dir
}

/// A safetensors file of the given tensors (name, dtype, shape, bytes).
fn safetensors(tensors: &[(&str, &str, &[u64], Vec<u8>)]) -> Vec<u8> {
    let mut header = String::from("{");
    let mut data = Vec::new();
    for (i, (name, dtype, shape, bytes)) in tensors.iter().enumerate() {
        if i > 0 {
            header.push(',');
        }
        let start = data.len();
        data.extend_from_slice(bytes);
        header.push_str(&format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":{shape:?},\"data_offsets\":[{start},{}]}}",
            data.len()
        ));
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&data);
    out
}

/// Imports `dir` over an existing output: the error, with the output
/// untouched and no temporary file left.
fn import_error(dir: &Path) -> Error {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.gguf");
    std::fs::write(&out, b"the old file").unwrap();
    let err = import_to(dir, &out, Target::Float(OutType::F16)).unwrap_err();
    assert_eq!(std::fs::read(&out).unwrap(), b"the old file");
    assert_eq!(std::fs::read_dir(out_dir.path()).unwrap().count(), 1);
    err
}

#[test]
fn a_missing_config_is_an_error_naming_it() {
    let tmp = copy_fixture("llama-spm");
    let dir = tmp.path().join("llama-spm");
    std::fs::remove_file(dir.join("config.json")).unwrap();
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("config.json") && err.contains("missing"),
        "{err}"
    );
}

#[test]
fn a_malformed_config_is_an_error_naming_it() {
    let tmp = copy_fixture("llama-spm");
    let dir = tmp.path().join("llama-spm");
    std::fs::write(dir.join("config.json"), b"{\"architectures\": [").unwrap();
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("config.json") && err.contains("malformed JSON"),
        "{err}"
    );
}

/// The converter stops on front matter PyYAML cannot parse; so do we, with
/// an error naming README.md and the line.
#[test]
fn a_malformed_model_card_is_an_error_naming_readme() {
    let tmp = copy_fixture("llama-card");
    let dir = tmp.path().join("llama-card");
    std::fs::write(
        dir.join("README.md"),
        "---\nlicense: mit\ntags: [a, b\n---\n# card\n",
    )
    .unwrap();
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("README.md") && err.contains("malformed") && err.contains("line"),
        "{err}"
    );
}

/// A card value the converter cannot write as a string (a float version)
/// makes it fail; we refuse it by name instead of writing something else.
#[test]
fn a_model_card_value_of_the_wrong_type_is_an_error_naming_it() {
    let tmp = copy_fixture("llama-card");
    let dir = tmp.path().join("llama-card");
    std::fs::write(dir.join("README.md"), "---\nversion: 1.5\n---\n").unwrap();
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("README.md") && err.contains("\"version\""),
        "{err}"
    );
}

#[test]
fn an_unsupported_architecture_is_refused() {
    let tmp = copy_fixture("llama-spm");
    let dir = tmp.path().join("llama-spm");
    let config = std::fs::read_to_string(dir.join("config.json")).unwrap();
    std::fs::write(
        dir.join("config.json"),
        config.replace("LlamaForCausalLM", "BertModel"),
    )
    .unwrap();
    let err = import_error(&dir);
    assert!(
        matches!(&err, Error::Import(gguf::import::ImportError::UnsupportedArchitecture { arch, .. }) if arch == "BertModel"),
        "{err}"
    );
    assert!(err.to_string().contains("Qwen2ForCausalLM"), "{err}");
}

#[test]
fn a_missing_shard_is_an_error_naming_it_and_a_tensor() {
    let tmp = copy_fixture("llama-bpe");
    let dir = tmp.path().join("llama-bpe");
    std::fs::remove_file(dir.join("model-00002-of-00002.safetensors")).unwrap();
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("model-00002-of-00002.safetensors")
            && err.contains("missing (the index places \"lm_head.weight\" in it)"),
        "{err}"
    );
}

#[test]
fn a_tensor_of_the_wrong_shape_or_type_is_an_error_naming_it() {
    let tmp = copy_fixture("llama-spm");
    let dir = tmp.path().join("llama-spm");
    let part = dir.join("model.safetensors");
    let original = std::fs::read(&part).unwrap();
    // The fixture's tensors, with one replaced.
    let replace = |name: &str, dtype: &str, shape: &[u64]| {
        let header_len = u64::from_le_bytes(original[..8].try_into().unwrap()) as usize;
        let header: serde_json::Value =
            serde_json::from_slice(&original[8..8 + header_len]).unwrap();
        let data = &original[8 + header_len..];
        let mut tensors: Vec<(String, String, Vec<u64>, Vec<u8>)> = Vec::new();
        for (k, v) in header.as_object().unwrap() {
            if k == "__metadata__" {
                continue;
            }
            let o = v["data_offsets"].as_array().unwrap();
            let (a, b) = (
                o[0].as_u64().unwrap() as usize,
                o[1].as_u64().unwrap() as usize,
            );
            let s: Vec<u64> = v["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .collect();
            let t = v["dtype"].as_str().unwrap().to_owned();
            if k == name {
                let n: u64 = shape.iter().product();
                let size = if dtype == "I32" || dtype == "F32" {
                    4
                } else {
                    2
                };
                tensors.push((
                    k.clone(),
                    dtype.into(),
                    shape.to_vec(),
                    vec![0u8; (n * size) as usize],
                ));
            } else {
                tensors.push((k.clone(), t, s, data[a..b].to_vec()));
            }
        }
        let refs: Vec<(&str, &str, &[u64], Vec<u8>)> = tensors
            .iter()
            .map(|(a, b, c, d)| (a.as_str(), b.as_str(), c.as_slice(), d.clone()))
            .collect();
        std::fs::write(&part, safetensors(&refs)).unwrap();
    };
    replace("model.layers.1.mlp.up_proj.weight", "F32", &[255, 64]);
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("model.safetensors")
            && err.contains("model.layers.1.mlp.up_proj.weight")
            && err.contains("shape [255, 64]"),
        "{err}"
    );
    replace("model.layers.1.mlp.up_proj.weight", "I32", &[256, 64]);
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("model.layers.1.mlp.up_proj.weight") && err.contains("I32"),
        "{err}"
    );
}

#[test]
fn an_unmappable_tensor_or_malformed_safetensors_is_an_error() {
    let tmp = copy_fixture("llama-spm");
    let dir = tmp.path().join("llama-spm");
    std::fs::write(
        dir.join("model.safetensors"),
        safetensors(&[("model.layers.0.mystery.weight", "F32", &[2], vec![0; 8])]),
    )
    .unwrap();
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("model.layers.0.mystery.weight") && err.contains("no GGUF name"),
        "{err}"
    );
    let mut truncated = safetensors(&[("model.norm.weight", "F32", &[64], vec![0; 256])]);
    truncated.truncate(truncated.len() - 4);
    std::fs::write(dir.join("model.safetensors"), truncated).unwrap();
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("model.safetensors") && err.contains("not a valid safetensors file"),
        "{err}"
    );
}

// ---- the command ----

#[test]
fn the_command_imports_and_says_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.gguf");
    let o = gguf(&[
        "import".as_ref(),
        data().join("mistral-swa").as_os_str(),
        out.as_os_str(),
        "--type".as_ref(),
        "Q8_0".as_ref(),
    ]);
    let text = super::util::stdout(&o);
    assert!(
        text.contains("MistralForCausalLM")
            && text.contains("as Q8_0")
            && text.contains("21 tensors"),
        "{text}"
    );
    assert_eq!(
        Model::open(&out)
            .unwrap()
            .get::<u32>("general.file_type")
            .unwrap(),
        7
    );

    let o = gguf(&[
        "import".as_ref(),
        data().join("mistral-swa").as_os_str(),
        out.as_os_str(),
        "--type".as_ref(),
        "q9".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown output type \"q9\""));
}

/// SIGINT while `gguf import` is paused just before its rename (the test
/// hook `PAUSE_BEFORE_RENAME`): exit 130, no output, no temporary file.
/// A preset's import has one temporary file too: the converted tensors
/// stream into the quantizer, with no intermediate f16 file.
#[test]
fn sigint_during_import_removes_every_temporary_file() {
    use std::time::{Duration, Instant};
    let patience = Duration::from_secs(60);
    for (ty, temps) in [("f16", 1), ("q4_k_m", 1)] {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("paused.marker");
        let out = dir.path().join("out.gguf");
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"));
        cmd.arg("import")
            .arg(data().join("gemma3"))
            .arg(&out)
            .args(["--type", ty])
            .env(gguf::testing::PAUSE_BEFORE_RENAME, &marker)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: only async-signal-safe calls between fork and exec: the
        // child starts with SIGINT at its default whatever the test run
        // inherited.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let start = Instant::now();
        while !marker.exists() {
            assert!(
                child.try_wait().unwrap().is_none(),
                "{ty}: gguf ended before the pause"
            );
            assert!(
                start.elapsed() < patience,
                "{ty}: gguf never reached the pause"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let tmp = |d: &Path| -> Vec<String> {
            std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".gguf-") && n.ends_with(".tmp"))
                .collect()
        };
        assert_eq!(
            tmp(dir.path()).len(),
            temps,
            "{ty}: temporary files while paused"
        );
        // SAFETY: kill has no memory-safety preconditions; the child is
        // not yet waited for, so its id still names it.
        assert_eq!(
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
            0
        );
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(start.elapsed() < patience, "{ty}: gguf did not exit");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.code(), Some(130), "{ty}");
        assert!(!out.exists(), "{ty}: output written");
        assert_eq!(
            tmp(dir.path()),
            Vec::<String>::new(),
            "{ty}: temporary files left"
        );
    }
}

// ---- hyper-parameters beyond the tensors ----

/// `gguf import DIR OUT EXTRA...` in a child whose address space is capped
/// at 2 GiB (`RLIMIT_AS`, two rayon threads, two malloc arenas): a
/// regression that builds from a hyper-parameter before checking it fails
/// here in a moment instead of taking gigabytes from the test machine.
fn import_capped(dir: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"));
    cmd.arg("import")
        .arg(dir)
        .arg(out)
        .args(extra)
        .env("RAYON_NUM_THREADS", "2")
        .env("MALLOC_ARENA_MAX", "2");
    // SAFETY: setrlimit is async-signal-safe, the only call between fork
    // and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            let cap = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &cap) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// A copy of fixture `name` with config.json's `key` set to `value`.
fn with_config(name: &str, key: &str, value: u64) -> (tempfile::TempDir, PathBuf) {
    let tmp = copy_fixture(name);
    let dir = tmp.path().join(name);
    let path = dir.join("config.json");
    let mut config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    config[key] = value.into();
    std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    (tmp, dir)
}

/// A fixture, a config.json key, its value, further arguments, and texts
/// the error must hold.
type BadConfig = (
    &'static str,
    &'static str,
    u64,
    &'static [&'static str],
    &'static [&'static str],
);

/// A head dimension, block count or vocabulary size far beyond the
/// checkpoint's tensors was computed with before any shape was checked:
/// `head_dim` 2^32-1 with Llama 3 RoPE scaling allocated 8 GiB of RoPE
/// factors (SIGABRT under a cap), `num_hidden_layers` 2^32-1 was written
/// as the block count, `vocab_size` 2^24 built 16 M padding tokens (1.9
/// GiB). Each is refused first, naming config.json, the key and the
/// tensor or the blocks found, with nothing written.
#[test]
fn hyper_parameters_beyond_the_tensors_are_refused_before_anything_is_built() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.gguf");
    // The cap leaves room for a real import.
    let o = import_capped(
        &data().join("llama-bpe"),
        &out,
        &["--pre-tokenizer", "llama-bpe"],
    );
    assert!(o.status.success(), "{o:?}");
    std::fs::remove_file(&out).unwrap();

    let cases: [BadConfig; 4] = [
        (
            "llama-bpe",
            "head_dim",
            u32::MAX.into(),
            &["--pre-tokenizer", "llama-bpe"],
            &[
                "\"head_dim\" is 4294967295",
                "\"model.layers.0.self_attn.q_proj.weight\"",
                "has shape [64, 64]",
            ],
        ),
        (
            "llama-spm",
            "num_hidden_layers",
            u32::MAX.into(),
            &[],
            &["\"num_hidden_layers\" is 4294967295", "2 block(s): 0-1"],
        ),
        (
            "llama-spm",
            "num_hidden_layers",
            3,
            &[],
            &["\"num_hidden_layers\" is 3", "2 block(s): 0-1"],
        ),
        (
            "llama-spm",
            "vocab_size",
            1 << 24,
            &[],
            &[
                "\"vocab_size\" is 16777216",
                "\"model.embed_tokens.weight\"",
                "has 640 rows",
            ],
        ),
    ];
    for (fixture, key, value, extra, wanted) in cases {
        let (_tmp, dir) = with_config(fixture, key, value);
        let o = import_capped(&dir, &out, extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{key} {value}: {err}");
        assert!(err.contains("config.json: "), "{key} {value}: {err}");
        for w in wanted {
            assert!(err.contains(w), "{key} {value}: {w:?} not in {err}");
        }
        assert_eq!(
            std::fs::read_dir(out_dir.path()).unwrap().count(),
            0,
            "{key} {value}: a file was written"
        );
    }
}

/// `gguf import --threads` for a preset is lowered to four per core with
/// a warning naming the checkpoint, as `gguf quantize`'s THREADS.
#[test]
fn import_threads_above_four_per_core_are_lowered_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.gguf");
    let o = gguf(&[
        "import".as_ref(),
        data().join("llama-spm").as_os_str(),
        out.as_os_str(),
        "--type".as_ref(),
        "q4_k_m".as_ref(),
        "--threads".as_ref(),
        "100000".as_ref(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let max = gguf::quantize::max_threads();
    assert!(
        err.contains("llama-spm: warning: --threads 100000")
            && err.contains(&format!("quantizing on {max} threads")),
        "{err}"
    );
}

/// Rewrites the safetensors file `part`, keeping the tensors `keep` says
/// yes to (and their bytes).
fn keep_tensors(part: &Path, keep: impl Fn(&str) -> bool) {
    let original = std::fs::read(part).unwrap();
    let header_len = u64::from_le_bytes(original[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&original[8..8 + header_len]).unwrap();
    let data = &original[8 + header_len..];
    let mut kept: Vec<(String, String, Vec<u64>, Vec<u8>)> = Vec::new();
    for (k, v) in header.as_object().unwrap() {
        if k == "__metadata__" || !keep(k) {
            continue;
        }
        let o = v["data_offsets"].as_array().unwrap();
        let (a, b) = (
            o[0].as_u64().unwrap() as usize,
            o[1].as_u64().unwrap() as usize,
        );
        let shape: Vec<u64> = v["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        kept.push((
            k.clone(),
            v["dtype"].as_str().unwrap().to_owned(),
            shape,
            data[a..b].to_vec(),
        ));
    }
    let refs: Vec<(&str, &str, &[u64], Vec<u8>)> = kept
        .iter()
        .map(|(n, d, s, b)| (n.as_str(), d.as_str(), s.as_slice(), b.clone()))
        .collect();
    std::fs::write(part, safetensors(&refs)).unwrap();
}

#[test]
fn quantized_checkpoints_the_import_cannot_read_are_refused_by_name() {
    // A quantization method the converter does not read either.
    let tmp = copy_fixture("qwen3-fp8");
    let dir = tmp.path().join("qwen3-fp8");
    let config = std::fs::read_to_string(dir.join("config.json")).unwrap();
    std::fs::write(
        dir.join("config.json"),
        config.replace("\"fp8\"", "\"gptq\""),
    )
    .unwrap();
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("config.json") && err.contains("\"gptq\""),
        "{err}"
    );
    // A block scale whose weight is missing, named.
    let tmp = copy_fixture("qwen3-fp8");
    let dir = tmp.path().join("qwen3-fp8");
    keep_tensors(&dir.join("model.safetensors"), |n| {
        n != "model.layers.1.mlp.up_proj.weight"
    });
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("model.layers.1.mlp.up_proj.weight_scale_inv")
            && err.contains("does not have"),
        "{err}"
    );
    // A preset of MXFP4 experts, which llama-quantize refuses to requantize.
    let out = tempfile::tempdir().unwrap();
    let err = import_to(
        &data().join("gpt-oss-mxfp4"),
        &out.path().join("q.gguf"),
        Target::parse("q4_k_m").unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("mxfp4") && err.contains("Q4_K_M"), "{err}");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
    // MXFP4 blocks without their scales.
    let tmp = copy_fixture("gpt-oss-mxfp4");
    let dir = tmp.path().join("gpt-oss-mxfp4");
    keep_tensors(&dir.join("model.safetensors"), |n| {
        !n.ends_with("layers.0.mlp.experts.down_proj_scales")
    });
    let err = import_error(&dir).to_string();
    assert!(
        err.contains("down_proj_blocks") && err.contains("without their scales"),
        "{err}"
    );
}
