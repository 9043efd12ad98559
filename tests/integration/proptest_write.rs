//! Property tests: random metadata (every value type, nested arrays,
//! unicode keys) and random tensor sets (types, shapes, alignments 1..=4096,
//! both byte orders, v1-v3) written by the Builder in each write mode read
//! back equal, with identical bytes across modes; and the Editor, after a
//! random sequence of edits, holds what a Builder-made file with the same
//! final content holds.
//!
//! Few cases by default, to keep the suite fast; `PROPTEST_CASES=N` runs N.

use std::io::Cursor;

use gguf::edit::Editor;
use gguf::write::{Builder, OwnedArray, OwnedValue, WriteMode, WriteOptions, SLACK_KEY};
use gguf::{Ctx, Endian, GgmlType, Gguf, GgufFile, Value};
use proptest::prelude::*;

fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Writes `b` in `mode` to memory: the one place this file calls the
/// builder's write entry points.
fn write_in(b: &mut Builder<'_>, mode: Mode) -> Vec<u8> {
    match mode {
        Mode::Single => {
            let mut out = Vec::new();
            b.write(&mut out).unwrap();
            out
        }
        Mode::MetadataFirst => b
            .write_metadata_first(Vec::new())
            .unwrap()
            .finish()
            .unwrap(),
        Mode::Reserve => {
            let mut out = Cursor::new(Vec::new());
            b.write_with(&mut out, WriteOptions::new().mode(WriteMode::Reserve))
                .unwrap();
            out.into_inner()
        }
    }
}

/// The three write modes: single pass, the metadata-first handle, and
/// reserve then fill.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Single,
    MetadataFirst,
    Reserve,
}

const MODES: [Mode; 3] = [Mode::Single, Mode::MetadataFirst, Mode::Reserve];

// ---- strategies ----

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..max).prop_map(String::from_iter)
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        text(12).prop_filter("keys are not empty", |k| !k.is_empty()),
        prop::collection::vec(prop::char::range('a', 'z'), 1..8)
            .prop_map(|s| format!("general.{}", String::from_iter(s))),
    ]
    .prop_filter("reserved keys", |k| {
        k != "general.alignment" && k != SLACK_KEY
    })
}

fn array(depth: u32) -> BoxedStrategy<OwnedArray> {
    use prop::collection::vec;
    let n = 0..6usize;
    let leaf = prop_oneof![
        vec(any::<u8>(), n.clone()).prop_map(OwnedArray::U8),
        vec(any::<i8>(), n.clone()).prop_map(OwnedArray::I8),
        vec(any::<u16>(), n.clone()).prop_map(OwnedArray::U16),
        vec(any::<i16>(), n.clone()).prop_map(OwnedArray::I16),
        vec(any::<u32>(), n.clone()).prop_map(OwnedArray::U32),
        vec(any::<i32>(), n.clone()).prop_map(OwnedArray::I32),
        vec(any::<u32>().prop_map(f32::from_bits), n.clone()).prop_map(OwnedArray::F32),
        vec(any::<bool>(), n.clone()).prop_map(OwnedArray::Bool),
        vec(text(8), n.clone()).prop_map(OwnedArray::String),
        vec(any::<u64>(), n.clone()).prop_map(OwnedArray::U64),
        vec(any::<i64>(), n.clone()).prop_map(OwnedArray::I64),
        vec(any::<u64>().prop_map(f64::from_bits), n.clone()).prop_map(OwnedArray::F64),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![4 => leaf, 1 => vec(array(depth - 1), 0..4).prop_map(OwnedArray::Array)].boxed()
}

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<u8>().prop_map(OwnedValue::U8),
        any::<i8>().prop_map(OwnedValue::I8),
        any::<u16>().prop_map(OwnedValue::U16),
        any::<i16>().prop_map(OwnedValue::I16),
        any::<u32>().prop_map(OwnedValue::U32),
        any::<i32>().prop_map(OwnedValue::I32),
        any::<u32>().prop_map(|b| OwnedValue::F32(f32::from_bits(b))),
        any::<bool>().prop_map(OwnedValue::Bool),
        text(40).prop_map(OwnedValue::String),
        array(2).prop_map(OwnedValue::Array),
        any::<u64>().prop_map(OwnedValue::U64),
        any::<i64>().prop_map(OwnedValue::I64),
        any::<u64>().prop_map(|b| OwnedValue::F64(f64::from_bits(b))),
    ]
}

/// Types of the random tensors: plain ones and a few block types.
const TYPES: &[GgmlType] = &[
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::F64,
    GgmlType::I8,
    GgmlType::I16,
    GgmlType::I32,
    GgmlType::I64,
    GgmlType::Q4_0,
    GgmlType::Q8_0,
    GgmlType::Q4_K,
    GgmlType::IQ4_NL,
    GgmlType::MXFP4,
];

#[derive(Debug, Clone)]
struct TensorCase {
    name: String,
    ty: GgmlType,
    shape: Vec<u64>,
    data: Vec<u8>,
}

fn tensor() -> impl Strategy<Value = TensorCase> {
    (
        text(10),
        prop::sample::select(TYPES),
        prop::collection::vec(0u64..4, 0..4),
        1u64..3,
        any::<u64>(),
    )
        .prop_map(|(name, ty, rest, blocks, seed)| {
            let bs = ty.block_size().unwrap();
            let mut shape = vec![blocks * bs];
            shape.extend(rest);
            let nbytes = gguf::format::tensor_nbytes(ty, &shape).unwrap() as usize;
            let mut s = seed | 1;
            let data = (0..nbytes)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    s as u8
                })
                .collect();
            TensorCase {
                name: format!("t{name}"),
                ty,
                shape,
                data,
            }
        })
}

#[derive(Debug, Clone)]
struct FileCase {
    ctx: Ctx,
    alignment: u32,
    kvs: Vec<(String, OwnedValue)>,
    tensors: Vec<TensorCase>,
}

fn file_case() -> impl Strategy<Value = FileCase> {
    (
        1u32..=3,
        any::<bool>(),
        0u32..=12,
        prop::collection::vec((key(), value()), 0..8),
        prop::collection::vec(tensor(), 0..5),
    )
        .prop_map(|(version, big, align_log, kvs, tensors)| {
            let mut seen = std::collections::HashSet::new();
            let kvs = kvs
                .into_iter()
                .filter(|(k, _)| seen.insert(k.clone()))
                .collect();
            let mut seen = std::collections::HashSet::new();
            let tensors = tensors
                .into_iter()
                .filter(|t| seen.insert(t.name.clone()))
                .collect();
            FileCase {
                ctx: Ctx {
                    version,
                    // Version 1 predates big-endian files.
                    endian: if big && version > 1 {
                        Endian::Big
                    } else {
                        Endian::Little
                    },
                },
                alignment: 1 << align_log,
                kvs,
                tensors,
            }
        })
}

impl FileCase {
    fn builder(&self) -> Builder<'_> {
        let mut b = Builder::new();
        b.version(self.ctx.version).unwrap();
        b.endian(self.ctx.endian);
        b.alignment(self.alignment).unwrap();
        for (k, v) in &self.kvs {
            b.set(k.as_str(), v.clone()).unwrap();
        }
        for t in &self.tensors {
            b.add_tensor(t.name.as_str(), t.ty, &t.shape, &t.data[..])
                .unwrap();
        }
        b
    }
}

// ---- comparison, bit for bit ----

fn canon(v: &Value<'_>, out: &mut Vec<u8>) {
    out.push(v.value_type() as u8);
    match *v {
        Value::Array(a) => {
            out.push(a.element_type() as u8);
            out.extend(a.len().to_le_bytes());
            for e in a.iter() {
                canon(&e, out);
            }
        }
        Value::String(s) => {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        }
        Value::F32(x) => out.extend(x.to_bits().to_le_bytes()),
        Value::F64(x) => out.extend(x.to_bits().to_le_bytes()),
        _ => out.extend(format!("{v:?}").bytes()),
    }
}

fn canon_owned(v: &OwnedValue) -> Vec<u8> {
    // Through the writer and reader of a one-key file: the reader's view of
    // a value is what `canon` compares.
    let mut b = Builder::new();
    b.set("k", v.clone()).unwrap();
    let bytes = write_in(&mut b, Mode::Single);
    let f = GgufFile::open(&bytes).unwrap();
    let mut out = Vec::new();
    canon(&f.value("k").unwrap(), &mut out);
    out
}

type Kvs = Vec<(String, Vec<u8>)>;
type Tensors = Vec<(String, GgmlType, Vec<u64>, Vec<u8>)>;

/// Metadata (without the alignment and slack keys) and tensors of a file.
fn content(f: &GgufFile<'_>) -> (Kvs, Tensors) {
    let kvs = f
        .metadata()
        .filter(|(k, _)| *k != "general.alignment" && *k != SLACK_KEY)
        .map(|(k, v)| {
            let mut c = Vec::new();
            canon(&v, &mut c);
            (k.to_owned(), c)
        })
        .collect();
    let tensors = f
        .tensors()
        .map(|t| {
            (
                t.name().to_owned(),
                t.ggml_type(),
                t.shape().to_vec(),
                t.data().unwrap().to_vec(),
            )
        })
        .collect();
    (kvs, tensors)
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn builder_output_reads_back_equal_in_every_mode(case in file_case()) {
        let outputs: Vec<Vec<u8>> = MODES.iter().map(|&m| write_in(&mut case.builder(), m)).collect();
        prop_assert!(outputs[1] == outputs[0], "metadata-first bytes differ");
        prop_assert!(outputs[2] == outputs[0], "reserve bytes differ");
        let f = GgufFile::open(&outputs[0]).unwrap();
        prop_assert_eq!(f.ctx(), case.ctx);
        prop_assert_eq!(f.alignment(), u64::from(case.alignment));
        let (kvs, tensors) = content(&f);
        let want: Kvs = case.kvs.iter().map(|(k, v)| (k.clone(), canon_owned(v))).collect();
        prop_assert_eq!(kvs, want);
        let want: Tensors = case
            .tensors
            .iter()
            .map(|t| (t.name.clone(), t.ty, t.shape.clone(), t.data.clone()))
            .collect();
        prop_assert_eq!(tensors, want);
        // from_reader sees the same header.
        let r = GgufFile::open(gguf::read::Source::reader(Cursor::new(outputs[0].to_vec()))).unwrap();
        prop_assert_eq!(r.header_len(), f.header_len());
        prop_assert_eq!(r.tensor_count(), f.tensor_count());
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Set(usize, String, OwnedValue),
    Remove(usize),
    RenameKey(usize, String),
    RenameTensor(usize, String),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), key(), value()).prop_map(|(i, k, v)| Edit::Set(i, k, v)),
        any::<usize>().prop_map(Edit::Remove),
        (any::<usize>(), key()).prop_map(|(i, k)| Edit::RenameKey(i, k)),
        (any::<usize>(), text(10)).prop_map(|(i, n)| Edit::RenameTensor(i, format!("r{n}"))),
    ]
}

proptest! {
    #![proptest_config(config(12))]

    #[test]
    fn editor_ends_equal_to_a_builder_made_file(
        case in file_case(),
        edits in prop::collection::vec(edit(), 1..6),
        commit_each in any::<bool>(),
    ) {
        // The editor works on little-endian v3 files as llama.cpp writes
        // them; other contexts are covered by the builder property.
        let case = FileCase { ctx: Ctx::default(), ..case };
        let bytes = write_in(&mut case.builder(), Mode::Single);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, &bytes).unwrap();

        // The same edits on a builder made from the original file.
        let original = GgufFile::open(&bytes).unwrap();
        let mut expected = Builder::from_file(&original).unwrap();
        let mut ed = Editor::open(&path).unwrap();
        for e in &edits {
            let keys: Vec<String> = expected
                .keys()
                .filter(|k| *k != "general.alignment" && *k != SLACK_KEY)
                .map(str::to_owned)
                .collect();
            let names: Vec<String> = expected.tensor_names().map(str::to_owned).collect();
            let pick = |i: usize, v: &[String]| (!v.is_empty()).then(|| v[i % v.len()].clone());
            let applied = match e {
                Edit::Set(i, k, v) => {
                    // An existing key half of the time.
                    let k = if i % 2 == 0 { pick(*i / 2, &keys).unwrap_or(k.clone()) } else { k.clone() };
                    let a = ed.set(k.clone(), v.clone()).is_ok();
                    let b = expected.set(k.clone(), v.clone()).is_ok();
                    prop_assert_eq!(a, b, "editor and builder disagree on setting {:?}", k);
                    true
                }
                Edit::Remove(i) => match pick(*i, &keys) {
                    Some(k) => ed.remove(k.clone()).is_ok() && expected.remove(&k).is_ok(),
                    None => true,
                },
                Edit::RenameKey(i, new) => match pick(*i, &keys) {
                    Some(k) => {
                        let a = ed.rename_key(k.clone(), new.clone()).is_ok();
                        let b = expected.rename_key(&k, new.clone()).is_ok();
                        prop_assert_eq!(a, b, "editor and builder disagree on renaming {:?}", k);
                        true
                    }
                    None => true,
                },
                Edit::RenameTensor(i, new) => match pick(*i, &names) {
                    Some(n) => {
                        let a = ed.rename_tensor(n.clone(), new.clone()).is_ok();
                        let b = expected.rename_tensor(&n, new.clone()).is_ok();
                        prop_assert_eq!(a, b, "editor and builder disagree on renaming {:?}", n);
                        true
                    }
                    None => true,
                },
            };
            prop_assert!(applied, "edit {:?} refused", e);
            if commit_each {
                ed.commit().unwrap();
                ed = Editor::open(&path).unwrap();
            }
        }
        ed.commit().unwrap();
        prop_assert!(!gguf::edit::journal_path(&path).exists());
        let want_bytes = write_in(&mut expected, Mode::Single);
        let want = GgufFile::open(&want_bytes).unwrap();
        let got = GgufFile::open(&path).unwrap();
        prop_assert_eq!(content(&got), content(&want));
        prop_assert_eq!(got.alignment(), want.alignment());
    }
}
