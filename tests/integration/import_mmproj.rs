//! Vision-language checkpoints (issue 34, vision projectors): `gguf import`
//! of `tests/data/import/{gemma3-vl,qwen2-vl,qwen2.5-vl,qwen3-vl}/` against
//! what llama.cpp's converter wrote from them, the text model
//! (`<name>.<type>.gguf`) and, with `--mmproj`, the projector
//! (`mmproj-<name>.<type>.gguf`), for f16, bf16 and q8_0: metadata keys in
//! order with their types and values, tensors with their names, types,
//! shapes and bytes, then the whole files byte for byte. Then what `gguf
//! check` and `gguf inspect` say of a projector file, and the refusals.

use std::path::{Path, PathBuf};

use gguf::import::{import_model, Error, ImportError, ImportOptions, OutType, Target};
use gguf::llama_load::{Coverage, LoadReport};
use gguf::{Gguf, GgufFile};

use super::import::{copy_fixture, differences};
use super::util::{gguf, stdout};

/// The vision-language fixtures and the pre-tokenizer their BPE hash was
/// registered under (see the fixtures' README).
const FIXTURES: [(&str, Option<&str>); 4] = [
    ("gemma3-vl", None),
    ("qwen2-vl", Some("qwen2")),
    ("qwen2.5-vl", Some("qwen2")),
    ("qwen3-vl", Some("qwen2")),
];

const TYPES: [(OutType, &str); 3] = [
    (OutType::F16, "f16"),
    (OutType::BF16, "bf16"),
    (OutType::Q8_0, "q8_0"),
];

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/import")
}

/// Imports fixture `name` (its projector with `mmproj`) as `ty` and
/// compares it with the converter's `file`; the differences, or none.
fn compare(name: &str, pre: Option<&str>, ty: OutType, file: &str, mmproj: bool) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(file);
    let mut options = ImportOptions::new(Target::Float(ty));
    options.pre_tokenizer = pre.map(str::to_owned);
    options.mmproj = mmproj;
    let report = match import_model(data().join(name), &out, &options, |_, _, _| {}) {
        Ok(r) => r,
        Err(e) => return vec![format!("{file}: the import failed: {e}")],
    };
    let theirs_bytes = std::fs::read(data().join(file)).unwrap();
    let ours_bytes = std::fs::read(&out).unwrap();
    let theirs = GgufFile::open(&theirs_bytes[..]).unwrap();
    let ours = GgufFile::open(&ours_bytes[..]).unwrap();
    let mut diffs: Vec<String> = differences(&theirs, &ours, true)
        .into_iter()
        .map(|d| format!("{file}: {d}"))
        .collect();
    if report.tensors != theirs.tensor_count() {
        diffs.push(format!(
            "{file}: the report counts {} tensors, the file has {}",
            report.tensors,
            theirs.tensor_count()
        ));
    }
    if diffs.is_empty() && theirs_bytes != ours_bytes {
        diffs.push(format!("{file}: same content but not the same bytes"));
    }
    let architecture = if mmproj { "clip" } else { &report.architecture };
    if report.architecture != architecture {
        diffs.push(format!("{file}: reported as {}", report.architecture));
    }
    diffs
}

/// Every fixture and type, text model or projector; prints the tally.
fn compare_all(mmproj: bool) {
    let mut diffs = Vec::new();
    let mut identical = 0;
    for (name, pre) in FIXTURES {
        for (ty, suffix) in TYPES {
            let file = if mmproj {
                format!("mmproj-{name}.{suffix}.gguf")
            } else {
                format!("{name}.{suffix}.gguf")
            };
            let d = compare(name, pre, ty, &file, mmproj);
            if d.is_empty() {
                identical += 1;
            }
            diffs.extend(d);
        }
    }
    println!(
        "{} imports identical to the converter's: {identical} of {}",
        if mmproj { "projector" } else { "text" },
        FIXTURES.len() * TYPES.len()
    );
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[test]
fn vision_language_text_imports_equal_the_converters() {
    compare_all(false);
}

#[test]
fn projector_imports_equal_the_converters() {
    compare_all(true);
}

/// The `rope.dimension_sections` of the Qwen-VL text models, and
/// Qwen3-VL's DeepStack layer count, as the converter wrote them.
#[test]
fn qwen_vl_text_models_carry_their_rope_sections() {
    for (name, arch) in [("qwen2-vl", "qwen2vl"), ("qwen3-vl", "qwen3vl")] {
        let bytes = std::fs::read(data().join(format!("{name}.f16.gguf"))).unwrap();
        let file = GgufFile::open(&bytes[..]).unwrap();
        let sections = file
            .get_array(&format!("{arch}.rope.dimension_sections"))
            .unwrap();
        assert_eq!(sections.len(), 4, "{name}");
    }
    let bytes = std::fs::read(data().join("qwen3-vl.f16.gguf")).unwrap();
    let file = GgufFile::open(&bytes[..]).unwrap();
    assert_eq!(file.get::<u32>("qwen3vl.n_deepstack_layers").unwrap(), 1);
}

/// `--mmproj` for an architecture without a projector: a usage error
/// (exit status 2) naming the architecture; the library's error says the
/// same. A preset is refused too: the converter writes projectors as f32,
/// f16, bf16 or q8_0 only.
#[test]
fn mmproj_of_an_architecture_without_a_projector_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.gguf");
    let cli = gguf(&[
        "import".as_ref(),
        data().join("qwen3").as_os_str(),
        out.as_os_str(),
        "--mmproj".as_ref(),
    ]);
    assert_eq!(cli.status.code(), Some(2), "{cli:?}");
    let err = String::from_utf8_lossy(&cli.stderr);
    assert!(
        err.contains("Qwen3ForCausalLM") && err.contains("no vision projector"),
        "{err}"
    );
    assert!(err.contains("Usage: gguf import"), "{err}");
    assert!(!out.exists());

    let mut options = ImportOptions::new(Target::Float(OutType::F16));
    options.mmproj = true;
    let e = import_model(data().join("qwen3"), &out, &options, |_, _, _| {}).unwrap_err();
    match &e {
        Error::Import(ImportError::NoProjector { arch, .. }) => {
            assert_eq!(arch, "Qwen3ForCausalLM")
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("config.json"), "{e}");

    let preset = gguf(&[
        "import".as_ref(),
        data().join("qwen2.5-vl").as_os_str(),
        out.as_os_str(),
        "--mmproj".as_ref(),
        "--type".as_ref(),
        "q4_k_m".as_ref(),
    ]);
    assert_eq!(preset.status.code(), Some(2), "{preset:?}");
    assert!(
        String::from_utf8_lossy(&preset.stderr).contains("--mmproj writes f32, f16, bf16 or q8_0")
    );
    options.target = Target::parse("q4_k_m").unwrap();
    let e = import_model(data().join("qwen2.5-vl"), &out, &options, |_, _, _| {}).unwrap_err();
    assert!(
        matches!(e, Error::Import(ImportError::ProjectorType { .. })),
        "{e}"
    );
    assert!(!out.exists());
}

/// A Qwen2-VL config of two vision blocks over a checkpoint of three:
/// gguf-py's tensor map holds the block numbers below the config's count
/// only (the merger's `mlp.{bid}` too, which is why the fixture has three),
/// so the converter cannot map `visual.blocks.2.*`; the import refuses it
/// too, naming the file and the tensor.
#[test]
fn vision_tensors_past_the_block_count_are_refused_as_the_converter_refuses_them() {
    let dir = copy_fixture("qwen2-vl");
    let ckpt = dir.path().join("qwen2-vl");
    let config = ckpt.join("config.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    json["vision_config"]["depth"] = 2.into();
    std::fs::write(&config, serde_json::to_vec(&json).unwrap()).unwrap();
    let mut options = ImportOptions::new(Target::Float(OutType::F16));
    options.mmproj = true;
    let out = dir.path().join("out.gguf");
    let e = import_model(&ckpt, &out, &options, |_, _, _| {}).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("model.safetensors") && text.contains("\"visual.blocks.2."),
        "{text}"
    );
    assert!(!out.exists());
}

/// `gguf check` on a projector: valid, not a model llama.cpp's loader
/// reads but libmtmd's, exit status 0; `--json` keeps its shape (`ok`
/// true, `loadable` false, the note saying who loads it).
#[test]
fn check_says_a_projector_is_libmtmds() {
    let file = data().join("mmproj-qwen2.5-vl.f16.gguf");
    let out = gguf(&["check".as_ref(), file.as_os_str()]);
    let text = stdout(&out);
    assert!(text.contains(": ok (valid GGUF"), "{text}");
    for part in [
        "a vision projector",
        "\"qwen2.5vl_merger\"",
        "Qwen2.5-VL",
        "libmtmd",
        "not with its model loader",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert!(!text.contains("not loadable"), "{text}");

    let out = gguf(&["check".as_ref(), file.as_os_str(), "--json".as_ref()]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["loadable"], false);
    assert_eq!(doc["problems"], serde_json::json!([]));
    assert!(
        doc["notes"][0].as_str().unwrap().contains("libmtmd"),
        "{doc}"
    );

    let bytes = std::fs::read(&file).unwrap();
    let report = LoadReport::of(&GgufFile::open(&bytes[..]).unwrap());
    assert!(
        matches!(report.coverage, Coverage::Projector { .. }),
        "{report:?}"
    );
}

/// A projector type libmtmd does not know: its one problem, exit status 1.
#[test]
fn check_refuses_a_projector_type_libmtmd_does_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mmproj.gguf");
    std::fs::copy(data().join("mmproj-gemma3-vl.f16.gguf"), &file).unwrap();
    let set = gguf(&[
        "set".as_ref(),
        file.as_os_str(),
        "clip.projector_type".as_ref(),
        "gemma9".as_ref(),
    ]);
    stdout(&set);
    let out = gguf(&["check".as_ref(), file.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"gemma9\" is not a projector type libmtmd knows"),
        "{text}"
    );
    assert!(text.contains("libmtmd"), "{text}");
}

/// `gguf inspect`'s summary of a projector: what it is (projector type,
/// model family), image and patch size, embedding; `--json` the same
/// under `summary.projector`.
#[test]
fn inspect_summarises_a_projector() {
    let file = data().join("mmproj-qwen3-vl.q8_0.gguf");
    let text = stdout(&gguf(&[
        "inspect".as_ref(),
        file.as_os_str(),
        "--no-tensors".as_ref(),
    ]));
    let mut lines = text.lines();
    let first = lines.next().unwrap();
    assert!(
        first.contains("a vision projector")
            && first.contains("\"qwen3vl_merger\"")
            && first.contains("Qwen3-VL"),
        "{first}"
    );
    let second = lines.next().unwrap();
    for part in [
        "image 64x64 px",
        "patch 16 px",
        "embedding 32",
        "2 blocks",
        "projects to 64",
        "libmtmd",
    ] {
        assert!(second.contains(part), "{part}: {second}");
    }

    let doc: serde_json::Value = serde_json::from_str(&stdout(&gguf(&[
        "inspect".as_ref(),
        file.as_os_str(),
        "--json".as_ref(),
        "--no-tensors".as_ref(),
    ])))
    .unwrap();
    let p = &doc["summary"]["projector"];
    assert_eq!(p["projector_type"], "qwen3vl_merger");
    assert_eq!(p["family"], "Qwen3-VL");
    assert_eq!(p["image_size"], 64);
    assert_eq!(p["patch_size"], 16);
    assert_eq!(p["embedding_length"], 32);
    assert_eq!(p["projection_dim"], 64);
    // A text model has no projector entry.
    let doc: serde_json::Value = serde_json::from_str(&stdout(&gguf(&[
        "inspect".as_ref(),
        data().join("qwen3-vl.f16.gguf").as_os_str(),
        "--json".as_ref(),
        "--no-tensors".as_ref(),
    ])))
    .unwrap();
    assert!(doc["summary"].get("projector").is_none());
}

/// `gguf import --mmproj` says what it wrote, and `--list` which
/// architectures have a projector.
#[test]
fn the_command_writes_a_projector_and_lists_who_has_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mmproj.gguf");
    let text = stdout(&gguf(&[
        "import".as_ref(),
        data().join("gemma3-vl").as_os_str(),
        out.as_os_str(),
        "--mmproj".as_ref(),
        "-t".as_ref(),
        "q8_0".as_ref(),
    ]));
    assert!(
        text.contains("vision projector") && text.contains("Q8_0"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(data().join("mmproj-gemma3-vl.q8_0.gguf")).unwrap()
    );
    let list = stdout(&gguf(&["import", "--list"]));
    for name in [
        "Gemma3ForConditionalGeneration",
        "Qwen2VLForConditionalGeneration",
        "Qwen2_5_VLForConditionalGeneration",
        "Qwen3VLForConditionalGeneration",
    ] {
        let line = list.lines().find(|l| l.starts_with(name)).unwrap();
        assert!(line.contains("--mmproj"), "{line}");
    }
    let line = list
        .lines()
        .find(|l| l.starts_with("Gemma3ForCausalLM"))
        .unwrap();
    assert!(!line.contains("--mmproj"), "{line}");
}

/// Edits `file` (JSON) of a copy of fixture `name` and imports its
/// projector: the error.
fn projector_error(name: &str, file: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let dir = copy_fixture(name);
    let ckpt = dir.path().join(name);
    let path = ckpt.join(file);
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut json);
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    let mut options = ImportOptions::new(Target::Float(OutType::F16));
    options.mmproj = true;
    let out = dir.path().join("out.gguf");
    let e = import_model(&ckpt, &out, &options, |_, _, _| {}).unwrap_err();
    assert!(!out.exists());
    e.to_string()
}

/// What the projector needs from the config and the preprocessor, refused
/// by name when it is missing or does not fit the tensors.
#[test]
fn projector_inputs_that_do_not_fit_are_errors_naming_file_and_key() {
    let e = projector_error("qwen3-vl", "config.json", |j| {
        j["vision_config"]["depth"] = 3.into()
    });
    assert!(
        e.contains("config.json")
            && e.contains("vision_config.depth is 3")
            && e.contains("2 vision block"),
        "{e}"
    );
    let e = projector_error("qwen3-vl", "config.json", |j| {
        j.as_object_mut().unwrap().remove("vision_config");
    });
    assert!(
        e.contains("config.json") && e.contains("\"vision_config\""),
        "{e}"
    );
    let e = projector_error("qwen3-vl", "preprocessor_config.json", |j| {
        j.as_object_mut().unwrap().remove("image_mean");
    });
    assert!(
        e.contains("preprocessor_config.json") && e.contains("image_mean"),
        "{e}"
    );
    let e = projector_error("qwen2.5-vl", "config.json", |j| {
        j["vision_config"]["fullatt_block_indexes"] = serde_json::json!([1, 2]);
    });
    assert!(
        e.contains("config.json") && e.contains("fullatt_block_indexes"),
        "{e}"
    );
    let e = projector_error("qwen3-vl", "config.json", |j| {
        j["vision_config"]["deepstack_visual_indexes"] = serde_json::json!([5]);
    });
    assert!(e.contains("deepstack_merger_list.0"), "{e}");
    let e = projector_error("qwen2.5-vl", "config.json", |j| {
        j["model_type"] = "qwen9_vl".into();
    });
    assert!(e.contains("model_type \"qwen9_vl\""), "{e}");
}

/// `mrope_section` is written for the architectures llama.cpp reads
/// sections for, refused by name for any other and when it is not a list.
#[test]
fn mrope_sections_are_refused_where_llama_cpp_reads_none() {
    let text_error = |name: &str, sections: serde_json::Value| {
        let dir = copy_fixture(name);
        let ckpt = dir.path().join(name);
        let path = ckpt.join("config.json");
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let scaling = serde_json::json!({"rope_type": "default", "mrope_section": sections});
        match json.get_mut("text_config") {
            Some(t) => t["rope_scaling"] = scaling,
            None => json["rope_scaling"] = scaling,
        }
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
        let mut options = ImportOptions::new(Target::Float(OutType::F16));
        options.pre_tokenizer = Some("qwen2".into());
        let out = dir.path().join("out.gguf");
        import_model(&ckpt, &out, &options, |_, _, _| {})
            .unwrap_err()
            .to_string()
    };
    let e = text_error("qwen3", serde_json::json!([2, 3, 3]));
    assert!(
        e.contains("config.json") && e.contains("mrope_section") && e.contains("qwen3"),
        "{e}"
    );
    let e = text_error("qwen2-vl", serde_json::json!("2,3,3"));
    assert!(e.contains("mrope_section is \"2,3,3\""), "{e}");
}
