//! Metadata edits through `edit::Editor` on a parsed input saved to tmpfs.
//!
//! Input: one byte `n`, then `n` bytes that choose the edits, then the
//! GGUF file. The edits (set a key to a value of random type and size,
//! remove a key, rename a key or a tensor) are queued and committed; the
//! file re-opened holds exactly the expected metadata, the same tensor
//! infos and data (under their new names), and no journal is left.
#![no_main]

use gguf_core::edit::{journal_path, Editor};
use gguf_core::write::{OwnedArray, OwnedValue, SLACK_KEY};
use gguf_core::Gguf;
use gguf_core::GgufFile;
use gguf_fuzz::{summary, Bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes(data);
    let n = input.u8() as usize;
    let mut ops = Bytes(input.take(n));
    let file_bytes = input.0;
    let Ok(file) = GgufFile::open(file_bytes) else {
        return;
    };
    let before = summary(&file, false);
    let mut kvs: Vec<(String, Vec<u8>)> = before.kvs.clone();
    let mut tensors: Vec<(String, Vec<u8>)> = file
        .tensors()
        .map(|t| {
            (
                t.name().to_owned(),
                t.data().map(<[u8]>::to_vec).unwrap_or_default(),
            )
        })
        .collect();

    let dir = tempfile::Builder::new()
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("temp dir");
    let path = dir.path().join("f.gguf");
    std::fs::write(&path, file_bytes).expect("write input");
    let Ok(mut ed) = Editor::open(&path) else {
        return;
    };
    let mut queued = 0;
    while !ops.0.is_empty() && queued < 8 {
        let op = ops.u8();
        let ok = match op % 4 {
            0 => {
                let key = key(&mut ops, &kvs);
                let value = value(&mut ops, 0);
                if key == SLACK_KEY {
                    continue;
                }
                let ok = ed.set(key.clone(), value.clone()).is_ok();
                if ok {
                    let c = canon_owned(&value);
                    match kvs.iter_mut().find(|(k, _)| *k == key) {
                        Some(kv) => kv.1 = c,
                        None => kvs.push((key, c)),
                    }
                }
                ok
            }
            1 if !kvs.is_empty() => {
                let i = ops.u8() as usize % kvs.len();
                let ok = ed.remove(kvs[i].0.clone()).is_ok();
                if ok {
                    kvs.remove(i);
                }
                ok
            }
            2 if !kvs.is_empty() => {
                let i = ops.u8() as usize % kvs.len();
                let new = key(&mut ops, &[]);
                if new == SLACK_KEY || kvs[i].0 == SLACK_KEY {
                    continue;
                }
                let ok = ed.rename_key(kvs[i].0.clone(), new.clone()).is_ok();
                if ok {
                    kvs[i].0 = new;
                }
                ok
            }
            3 if !tensors.is_empty() => {
                let i = ops.u8() as usize % tensors.len();
                let new = key(&mut ops, &[]);
                let ok = ed.rename_tensor(tensors[i].0.clone(), new.clone()).is_ok();
                if ok {
                    tensors[i].0 = new;
                }
                ok
            }
            _ => false,
        };
        queued += ok as usize;
    }
    if ed.commit().is_err() {
        // A refused commit (a value the writer cannot encode, say) must
        // leave the file as it was.
        assert!(std::fs::read(&path).expect("read back") == file_bytes);
        assert!(
            !journal_path(&path).exists(),
            "journal left after a failed commit"
        );
        return;
    }
    assert!(!journal_path(&path).exists(), "journal left after commit");
    let after = GgufFile::open(&path).expect("edited file opens");
    let got = summary(&after, false);
    let no_slack = |kvs: &[(String, Vec<u8>)]| {
        kvs.iter()
            .filter(|(k, _)| k != SLACK_KEY)
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        no_slack(&got.kvs),
        no_slack(&kvs),
        "metadata after the edit"
    );
    assert_eq!(got.tensors.len(), tensors.len());
    for ((name, bytes), (info, old)) in tensors.iter().zip(got.tensors.iter().zip(&before.tensors))
    {
        assert_eq!(&info.name, name);
        assert_eq!((info.type_id, &info.shape), (old.type_id, &old.shape));
        let t = after.tensor(name).expect("renamed tensor present");
        assert!(
            t.data().map(<[u8]>::to_vec).unwrap_or_default() == *bytes,
            "data of {name} changed"
        );
    }
});

/// An existing key (by index) or a new one made of fuzz bytes.
fn key(ops: &mut Bytes<'_>, kvs: &[(String, Vec<u8>)]) -> String {
    let b = ops.u8();
    if b & 1 == 1 && !kvs.is_empty() {
        return kvs[(b >> 1) as usize % kvs.len()].0.clone();
    }
    let len = (b >> 1) as usize % 24;
    String::from_utf8_lossy(ops.take(len)).into_owned()
}

/// A value of a type and size chosen by the fuzz bytes.
fn value(ops: &mut Bytes<'_>, depth: u32) -> OwnedValue {
    let t = ops.u8();
    let len = if t & 0x80 != 0 {
        ops.u64_of(2) as usize
    } else {
        ops.u8() as usize
    };
    match t % 13 {
        0 => OwnedValue::U8(ops.u8()),
        1 => OwnedValue::I8(ops.u8() as i8),
        2 => OwnedValue::U16(ops.u64_of(2) as u16),
        3 => OwnedValue::I16(ops.u64_of(2) as i16),
        4 => OwnedValue::U32(ops.u64_of(4) as u32),
        5 => OwnedValue::I32(ops.u64_of(4) as i32),
        6 => OwnedValue::F32(f32::from_bits(ops.u64_of(4) as u32)),
        7 => OwnedValue::Bool(ops.u8() & 1 == 1),
        8 => OwnedValue::String(text(ops, len)),
        9 => OwnedValue::Array(array(ops, len, depth)),
        10 => OwnedValue::U64(ops.u64_of(8)),
        11 => OwnedValue::I64(ops.u64_of(8) as i64),
        _ => OwnedValue::F64(f64::from_bits(ops.u64_of(8))),
    }
}

/// `len` characters: the fuzz bytes mapped to text (repeated when they
/// run out, so large values cost few input bytes).
fn text(ops: &mut Bytes<'_>, len: usize) -> String {
    let seed = String::from_utf8_lossy(ops.take(len.min(16))).into_owned();
    if seed.is_empty() {
        return "x".repeat(len);
    }
    seed.chars().cycle().take(len).collect()
}

fn array(ops: &mut Bytes<'_>, len: usize, depth: u32) -> OwnedArray {
    let t = ops.u8();
    let fill = ops.u8();
    match t % 13 {
        0 => OwnedArray::U8(vec![fill; len]),
        1 => OwnedArray::I8(vec![fill as i8; len]),
        2 => OwnedArray::U16((0..len).map(|i| i as u16 ^ fill as u16).collect()),
        3 => OwnedArray::I16(vec![-(fill as i16); len]),
        4 => OwnedArray::U32((0..len as u32).collect()),
        5 => OwnedArray::I32(vec![fill as i32 - 128; len]),
        6 => OwnedArray::F32(vec![f32::from_bits(u32::from(fill) * 0x0101_0101); len]),
        7 => OwnedArray::Bool((0..len).map(|i| i % 3 == 0).collect()),
        8 => OwnedArray::String((0..len.min(64)).map(|i| text(ops, i)).collect()),
        9 if depth < 2 => OwnedArray::Array(
            (0..len.min(8))
                .map(|_| match value(ops, depth + 1) {
                    OwnedValue::Array(a) => a,
                    _ => OwnedArray::U8(vec![fill]),
                })
                .collect(),
        ),
        10 => OwnedArray::U64(vec![u64::from(fill) << 56; len]),
        11 => OwnedArray::I64(vec![i64::MIN + i64::from(fill); len]),
        _ => OwnedArray::F64(vec![
            f64::from_bits(u64::from(fill) * 0x0101_0101_0101_0101);
            len
        ]),
    }
}

/// The canonical form `gguf_fuzz::canon_value` gives the same value read back.
fn canon_owned(v: &OwnedValue) -> Vec<u8> {
    let mut out = Vec::new();
    owned(v, &mut out);
    out
}

fn owned(v: &OwnedValue, out: &mut Vec<u8>) {
    out.push(v.value_type() as u8);
    match v {
        OwnedValue::U8(x) => out.push(*x),
        OwnedValue::I8(x) => out.push(*x as u8),
        OwnedValue::U16(x) => out.extend(x.to_le_bytes()),
        OwnedValue::I16(x) => out.extend(x.to_le_bytes()),
        OwnedValue::U32(x) => out.extend(x.to_le_bytes()),
        OwnedValue::I32(x) => out.extend(x.to_le_bytes()),
        OwnedValue::F32(x) => out.extend(x.to_bits().to_le_bytes()),
        OwnedValue::Bool(x) => out.push(*x as u8),
        OwnedValue::String(s) => {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        }
        OwnedValue::U64(x) => out.extend(x.to_le_bytes()),
        OwnedValue::I64(x) => out.extend(x.to_le_bytes()),
        OwnedValue::F64(x) => out.extend(x.to_bits().to_le_bytes()),
        OwnedValue::Array(a) => {
            out.push(a.element_type() as u8);
            out.extend((a.len() as u64).to_le_bytes());
            macro_rules! each {
                ($v:expr, $variant:ident) => {
                    for x in $v {
                        owned(&OwnedValue::$variant(x.clone()), out);
                    }
                };
            }
            match a {
                OwnedArray::U8(v) => each!(v, U8),
                OwnedArray::I8(v) => each!(v, I8),
                OwnedArray::U16(v) => each!(v, U16),
                OwnedArray::I16(v) => each!(v, I16),
                OwnedArray::U32(v) => each!(v, U32),
                OwnedArray::I32(v) => each!(v, I32),
                OwnedArray::F32(v) => each!(v, F32),
                OwnedArray::Bool(v) => each!(v, Bool),
                OwnedArray::String(v) => each!(v, String),
                OwnedArray::Array(v) => each!(v, Array),
                OwnedArray::U64(v) => each!(v, U64),
                OwnedArray::I64(v) => each!(v, I64),
                OwnedArray::F64(v) => each!(v, F64),
            }
        }
    }
}
