//! Interop with gguf-py 0.19 (tests/oracles): its files round trip through
//! our Builder byte for byte, the same content in the same order gives the
//! same bytes as its GGUFWriter, and its GGUFReader reads what we write.
//!
//! Python or gguf-py missing is a test failure, never a skip: CI installs
//! them from tests/oracles/requirements.txt.

use std::ffi::OsStr;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use gguf::{
    format::{OwnedArray, OwnedValue},
    write::{Builder, TensorData, WriteMode, WriteOptions},
};
use gguf::{Endian, GgmlType, Gguf, GgufFile};

use super::util::{ctx, every_value, python, rich, tensor_set, Content, Mode, Src};

/// Files written by gguf-py's GGUFWriter, generated once per test run, and
/// their description (tests/oracles/write_with_gguf_py.py).
fn gguf_py_cases() -> &'static (PathBuf, Vec<Json>) {
    static CASES: OnceLock<(PathBuf, Vec<Json>)> = OnceLock::new();
    CASES.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
        // Directories of earlier runs whose process is gone.
        for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("gguf-py-written-")
                && !Path::new("/proc").join(pid).exists()
                && Path::new("/proc/self").exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let dir = root.join(format!("gguf-py-written-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        python("write_with_gguf_py.py", &[dir.as_os_str()]);
        let cases: Vec<Json> =
            serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
        assert!(cases.len() >= 7, "expected every case, got {}", cases.len());
        (dir, cases)
    })
}

fn case_path(case: &Json) -> PathBuf {
    gguf_py_cases().0.join(case["file"].as_str().unwrap())
}

fn case_named(name: &str) -> &'static Json {
    gguf_py_cases()
        .1
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no case {name}"))
}

fn json_scalar(ty: &str, v: &Json) -> OwnedValue {
    let int = || v.as_i64().unwrap_or_else(|| panic!("{ty}: {v}"));
    match ty {
        "u8" => OwnedValue::U8(int() as u8),
        "i8" => OwnedValue::I8(int() as i8),
        "u16" => OwnedValue::U16(int() as u16),
        "i16" => OwnedValue::I16(int() as i16),
        "u32" => OwnedValue::U32(int() as u32),
        "i32" => OwnedValue::I32(int() as i32),
        "u64" => OwnedValue::U64(v.as_u64().unwrap()),
        "i64" => OwnedValue::I64(int()),
        // Values chosen exactly representable in f32.
        "f32" => OwnedValue::F32(v.as_f64().unwrap() as f32),
        "f64" => OwnedValue::F64(v.as_f64().unwrap()),
        "bool" => OwnedValue::Bool(v.as_bool().unwrap()),
        "string" => OwnedValue::String(v.as_str().unwrap().into()),
        other => panic!("unexpected type {other}"),
    }
}

fn json_array(elem: &str, v: &Json) -> OwnedArray {
    let items = v.as_array().unwrap();
    let scalars = || items.iter().map(|x| json_scalar(elem, x));
    macro_rules! collect {
        ($variant:ident) => {
            OwnedArray::$variant(
                scalars()
                    .map(|s| match s {
                        OwnedValue::$variant(x) => x,
                        _ => unreachable!(),
                    })
                    .collect(),
            )
        };
    }
    match elem {
        "u8" => collect!(U8),
        "i8" => collect!(I8),
        "u16" => collect!(U16),
        "i16" => collect!(I16),
        "u32" => collect!(U32),
        "i32" => collect!(I32),
        "u64" => collect!(U64),
        "i64" => collect!(I64),
        "f32" => collect!(F32),
        "f64" => collect!(F64),
        "bool" => collect!(Bool),
        "string" => collect!(String),
        "array" => OwnedArray::Array(
            items
                .iter()
                .map(|inner| json_array(inner["element_type"].as_str().unwrap(), &inner["value"]))
                .collect(),
        ),
        other => panic!("unexpected element type {other}"),
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Builds what a case describes with our Builder, in the same order.
fn build_case(case: &Json) -> Vec<u8> {
    let mut b = Builder::new();
    if case["endian"] == "big" {
        b.endian(Endian::Big);
    }
    for kv in case["kvs"].as_array().unwrap() {
        let key = kv["key"].as_str().unwrap();
        let value = match kv["type"].as_str().unwrap() {
            "array" => OwnedValue::Array(json_array(
                kv["element_type"].as_str().unwrap(),
                &kv["value"],
            )),
            ty => json_scalar(ty, &kv["value"]),
        };
        b.set(key, value).unwrap();
    }
    for t in case["tensors"].as_array().unwrap() {
        let ty = GgmlType::from_id(t["type"].as_u64().unwrap() as u32);
        let shape: Vec<u64> = t["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        let le = hex(t["data_le"].as_str().unwrap());
        let name = t["name"].as_str().unwrap();
        let data = if ty.is_plain() {
            // Numbers in this machine's order; the builder swaps them for
            // a big-endian file.
            let size = ty.type_size().unwrap() as usize;
            let mut native = le;
            if Endian::NATIVE == Endian::Big {
                native.chunks_exact_mut(size).for_each(<[u8]>::reverse);
            }
            TensorData::Native {
                bytes: native.into(),
                elem_size: size,
            }
        } else {
            TensorData::from(le)
        };
        b.add_tensor(name, ty, &shape, data).unwrap();
    }
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    out
}

#[test]
fn same_content_in_the_same_order_gives_gguf_py_bytes() {
    // Empty strings and arrays are not in these files: stock GGUFWriter
    // drops them (ORACLES.md). Big-endian cases hold plain tensor types
    // only: GGUFWriter(endianess=BIG) leaves quantized f16 scales
    // little-endian, unlike our rule (ARCHITECTURE.md, "Format facts").
    let (_, cases) = gguf_py_cases();
    for case in cases {
        let theirs = std::fs::read(case_path(case)).unwrap();
        let ours = build_case(case);
        if ours != theirs {
            let at = ours.iter().zip(&theirs).position(|(a, b)| a != b);
            panic!(
                "{}: our bytes differ from GGUFWriter's (first difference at {at:?}, lengths {} vs {})",
                case["name"],
                ours.len(),
                theirs.len()
            );
        }
    }
}

#[test]
fn gguf_py_files_round_trip_byte_for_byte_in_every_mode() {
    let (_, cases) = gguf_py_cases();
    for case in cases {
        let path = case_path(case);
        let input = std::fs::read(&path).unwrap();
        let file = GgufFile::open(&path).unwrap();
        assert_eq!(
            file.tensor_count(),
            case["tensors"].as_array().unwrap().len()
        );

        let mut single = Vec::new();
        Builder::from_file(&file)
            .unwrap()
            .write(&mut single)
            .unwrap();
        let mut reserved = Cursor::new(Vec::new());
        Builder::from_file(&file)
            .unwrap()
            .write_with(&mut reserved, WriteOptions::new().mode(WriteMode::Reserve))
            .unwrap();
        let mut meta_first = Vec::new();
        Builder::from_file(&file)
            .unwrap()
            .write_metadata_first(&mut meta_first)
            .unwrap()
            .finish()
            .unwrap();
        for (mode, out) in [
            ("single", &single),
            ("reserve", reserved.get_ref()),
            ("meta-first", &meta_first),
        ] {
            assert!(
                *out == input,
                "{} ({mode}): round trip differs ({} vs {} bytes)",
                case["name"],
                out.len(),
                input.len()
            );
        }
    }
}

fn convert(input: &[u8], endian: Endian) -> Vec<u8> {
    let file = GgufFile::open(input).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    b.endian(endian);
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    out
}

#[test]
fn byte_order_conversion_matches_gguf_py_and_round_trips() {
    let le = std::fs::read(case_path(case_named("le_plain"))).unwrap();
    let be = std::fs::read(case_path(case_named("be_all"))).unwrap();
    assert_ne!(le, be);
    let to_be = convert(&le, Endian::Big);
    assert!(to_be == be, "LE -> BE differs from GGUFWriter's BE file");
    assert!(convert(&to_be, Endian::Little) == le, "LE -> BE -> LE");
    assert!(convert(&be, Endian::Little) == le, "BE -> LE differs");

    // Quantized data changes byte order field by field (byte-equal with
    // gguf_convert_endian.py: tests/integration/endian.rs) and round-trips.
    let q = std::fs::read(case_path(case_named("le_all"))).unwrap();
    let q_be = convert(&q, Endian::Big);
    assert!(
        convert(&q_be, Endian::Little) == q,
        "quantized LE -> BE -> LE"
    );
}

// ---- GGUFReader reads what we write ----

fn leaf_count(a: &OwnedArray) -> usize {
    match a {
        OwnedArray::Array(v) => v.iter().map(leaf_count).sum(),
        other => other.len(),
    }
}

fn owned_to_json(v: &OwnedValue) -> Json {
    match v {
        OwnedValue::U8(x) => (*x).into(),
        OwnedValue::I8(x) => (*x).into(),
        OwnedValue::U16(x) => (*x).into(),
        OwnedValue::I16(x) => (*x).into(),
        OwnedValue::U32(x) => (*x).into(),
        OwnedValue::I32(x) => (*x).into(),
        OwnedValue::U64(x) => (*x).into(),
        OwnedValue::I64(x) => (*x).into(),
        OwnedValue::F32(x) => f64::from(*x).into(),
        OwnedValue::F64(x) => (*x).into(),
        OwnedValue::Bool(x) => (*x).into(),
        OwnedValue::String(s) => s.as_str().into(),
        OwnedValue::Array(a) => array_to_json(a),
    }
}

fn array_to_json(a: &OwnedArray) -> Json {
    fn all<T: Clone + Into<OwnedValue>>(v: &[T]) -> Json {
        Json::Array(v.iter().map(|x| owned_to_json(&x.clone().into())).collect())
    }
    match a {
        OwnedArray::U8(v) => all(v),
        OwnedArray::I8(v) => all(v),
        OwnedArray::U16(v) => all(v),
        OwnedArray::I16(v) => all(v),
        OwnedArray::U32(v) => all(v),
        OwnedArray::I32(v) => all(v),
        OwnedArray::U64(v) => all(v),
        OwnedArray::I64(v) => all(v),
        OwnedArray::F32(v) => all(v),
        OwnedArray::F64(v) => all(v),
        OwnedArray::Bool(v) => all(v),
        OwnedArray::String(v) => all(v),
        OwnedArray::Array(_) => unreachable!("nested arrays are compared by leaf count"),
    }
}

/// Checks GGUFReader's view of a file (one entry of read_with_gguf_py.py's
/// output) against the content we built.
fn check_reader_view(what: &str, content: &Content, bytes: &[u8], view: &Json) {
    assert_eq!(view["version"], content.ctx.version, "{what}");
    assert_eq!(view["endian"], content.ctx.endian.to_string(), "{what}");
    assert_eq!(view["alignment"], content.alignment, "{what}");
    let ours = GgufFile::open(bytes).unwrap();
    assert_eq!(view["data_offset"], ours.data_offset(), "{what}");

    let kvs = view["kvs"].as_array().unwrap();
    let expected = content.expected_kvs();
    let keys: Vec<&str> = kvs.iter().map(|k| k["key"].as_str().unwrap()).collect();
    let expected_keys: Vec<&str> = expected.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, expected_keys, "{what}: keys");
    for (kv, (key, value)) in kvs.iter().zip(&expected) {
        let what = format!("{what}: {key}");
        assert_eq!(kv["type"], value.value_type().name(), "{what}");
        match value {
            OwnedValue::Array(a) if a.is_empty() => {
                // GGUFReader loses the element type of an empty array
                // (ORACLES.md): only the emptiness is compared.
                assert_eq!(kv["leaf_count"], 0, "{what}");
                assert_eq!(kv["value"], serde_json::json!([]), "{what}");
            }
            OwnedValue::Array(a @ OwnedArray::Array(_)) => {
                // GGUFReader flattens nested arrays and garbles mixed inner
                // types (ORACLES.md): compare the number of leaves.
                assert_eq!(kv["leaf_count"], leaf_count(a), "{what}");
            }
            OwnedValue::Array(a) => {
                assert_eq!(kv["element_type"], a.element_type().name(), "{what}");
                assert_eq!(kv["leaf_count"], a.len(), "{what}");
                assert_eq!(kv["value"], array_to_json(a), "{what}");
            }
            scalar => assert_eq!(kv["value"], owned_to_json(scalar), "{what}"),
        }
    }

    let tensors = view["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), content.tensors.len(), "{what}");
    for (t, spec) in tensors.iter().zip(&content.tensors) {
        let what = format!("{what}: tensor {}", spec.name);
        assert_eq!(t["name"], spec.name.as_str(), "{what}");
        assert_eq!(t["type"], spec.ty.id(), "{what}");
        assert_eq!(t["shape"], serde_json::json!(spec.shape), "{what}");
        let data = spec.file_bytes(content.ctx.endian);
        assert_eq!(t["n_bytes"], data.len(), "{what}");
        assert_eq!(t["data_len"], data.len(), "{what}");
        let sha: String = Sha256::digest(&data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(t["sha256"], sha, "{what}");
    }
}

#[test]
fn gguf_py_reads_what_every_mode_writes() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // GGUFReader reads versions 2 and 3 only.
    let configs = [
        ("v3-le-32", rich(ctx(3, Endian::Little), 32)),
        ("v3-le-64", rich(ctx(3, Endian::Little), 64)),
        ("v3-le-1", rich(ctx(3, Endian::Little), 1)),
        ("v3-le-4096", rich(ctx(3, Endian::Little), 4096)),
        ("v2-le-32", rich(ctx(2, Endian::Little), 32)),
        ("v3-be-32", rich(ctx(3, Endian::Big), 32)),
        ("v3-be-128", rich(ctx(3, Endian::Big), 128)),
    ];
    let modes = [
        (Mode::Single, Src::Native),
        (Mode::MetaFirstManual, Src::Deferred),
        (Mode::Reserved, Src::Fn),
    ];
    let mut files = Vec::new();
    for (name, content) in &configs {
        for (mode, src) in modes {
            let bytes = content.write(mode, src);
            let path = dir.path().join(format!("{name}-{mode:?}.gguf"));
            std::fs::write(&path, &bytes).unwrap();
            files.push((path, content, bytes));
        }
    }
    let args: Vec<&OsStr> = files.iter().map(|(p, _, _)| p.as_os_str()).collect();
    let out = python("read_with_gguf_py.py", &args);
    let views: Vec<Json> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(views.len(), files.len());
    for ((path, content, bytes), view) in files.iter().zip(&views) {
        let what = path.file_name().unwrap().to_string_lossy();
        check_reader_view(&what, content, bytes, view);
    }
}

#[test]
fn every_value_and_tensor_set_cover_every_type() {
    // Guards the fixtures above: if a type is dropped from them, the
    // interop tests silently stop covering it.
    let mut types: Vec<&str> = every_value()
        .iter()
        .map(|(_, v)| v.value_type().name())
        .collect();
    types.sort_unstable();
    types.dedup();
    assert_eq!(types.len(), 13, "{types:?}");
    let plain: Vec<GgmlType> = tensor_set(false).iter().map(|t| t.ty).collect();
    for ty in GgmlType::ALL.iter().filter(|t| t.is_plain()) {
        assert!(plain.contains(ty), "{ty} missing from tensor_set");
    }
}
