//! Arbitrary shard sets opened as one model with `Model::open`.
//!
//! Input (see `gguf_fuzz::shard_set`): a control byte, then up to four
//! files separated by `#gguf-shard#`. The control byte:
//! - bits 0-1: which file is opened (modulo the number of files);
//! - bits 2-3: the names: `m-0000k-of-0000n.gguf` for n files (0, 1), names
//!   that claim one file more than there are, so the last is missing (2),
//!   or the opened file named `m.gguf` (3);
//! - bit 4: structured: the first file is a model, written again as
//!   `1 + bits 5-6` shards by the builder with split keys chosen by the
//!   second file's bytes (right, absent, off by a little, of the wrong
//!   type, or arbitrary), bit 7 giving the first shard no tensor.
//!
//! Opening must never panic, hang or allocate beyond the files; a model
//! that opens is read whole (metadata, every tensor by position and by
//! name, data, `to_f32` of small tensors) and checked against its split
//! keys: `split.count` files, `split.tensors.count` tensors, each shard's
//! `split.no` its position, lookups agreeing with the iteration order.
#![no_main]

use std::path::Path;

use gguf_core::format::ALIGNMENT_KEY;
use gguf_core::model::{is_split_key, Model, SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT};
use gguf_core::naming::{parse_shard_name, shard_file_name};
use gguf_core::write::{Builder, OwnedValue};
use gguf_core::Gguf;
use gguf_core::GgufFile;
use gguf_fuzz::{canon_value, shard_set, Bytes, MAX_SHARDS};
use libfuzzer_sys::fuzz_target;

/// Tensors up to this many elements are decoded.
const DECODE_LIMIT: u64 = 1 << 10;

fuzz_target!(init: gguf_fuzz::split_seeds::write_if_asked(), |data: &[u8]| {
    let (control, files) = shard_set(data);
    let files = if control & 0x10 != 0 {
        match structured(control, &files) {
            Some(f) => f,
            None => return,
        }
    } else {
        files.iter().map(|f| f.to_vec()).collect()
    };
    let n = files.len() as u32;
    let opened = (control & 3) as usize % files.len();
    let named_count = if (control >> 2) & 3 == 2 { n + 1 } else { n };

    let dir = tempfile::Builder::new()
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("temp dir");
    let mut open_path = None;
    for (k, bytes) in files.iter().enumerate() {
        let name = if k == opened && (control >> 2) & 3 == 3 {
            "m.gguf".to_owned()
        } else {
            shard_file_name("m", k as u32 + 1, named_count)
        };
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write shard");
        if k == opened {
            open_path = Some(path);
        }
    }
    let Some(path) = open_path else { return };
    if let Ok(model) = Model::open(&path) {
        check(&model, &path);
    }
});

/// Every invariant of an opened model; reads everything it offers.
fn check(model: &Model<'_>, opened: &Path) {
    let shards = model.shards();
    assert!(!shards.is_empty());
    assert_eq!(shards.len(), model.shard_count());
    assert!(shards.iter().any(|s| s.origin().path() == Some(opened)));
    let total: u64 = shards.iter().map(|s| s.file().file_len()).sum();
    assert_eq!(model.total_len(), total);
    let _ = format!("{model:?}");

    // Split keys: reported by split(), never as metadata.
    if model.is_split() {
        let info = model.split().expect("a split model has split keys");
        assert_eq!(usize::from(info.count), shards.len());
        assert_eq!(
            info.tensors_count.map(i64::from),
            Some(model.tensor_count() as i64),
            "split.tensors.count is not the tensor total"
        );
        for (k, s) in shards.iter().enumerate() {
            assert_eq!(s.file().get::<u16>(SPLIT_NO).ok(), Some(k as u16));
            assert_eq!(
                s.file().get::<u16>(SPLIT_COUNT).ok(),
                Some(shards.len() as u16)
            );
            let name = s
                .origin()
                .path()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                .unwrap_or("");
            let (_, no) = parse_shard_name(name).expect("shards have shard names");
            assert_eq!((no.index, no.count), (k as u32 + 1, shards.len() as u32));
        }
    } else {
        assert!(model.split().is_none_or(|s| s.count <= 1));
    }
    for key in [SPLIT_NO, SPLIT_COUNT, SPLIT_TENSORS_COUNT] {
        assert!(model.value(key).is_none() && !model.contains_key(key));
        assert!(model.get::<u16>(key).is_err());
    }

    // Metadata: the first file's without the split keys.
    let mut kvs = 0;
    for (key, value) in model.metadata() {
        assert!(!is_split_key(key));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        canon_value(&value, &mut a);
        canon_value(&model.value(key).expect("listed key present"), &mut b);
        assert_eq!(a, b, "metadata() and value() disagree on {key:?}");
        let _ = model.get_str(key);
        let _ = model.get::<u32>(key);
        let _ = model.get_strings(key).map(|it| it.count());
        let _ = model.get_array_of::<i32>(key).map(|it| it.count());
        kvs += 1;
    }
    assert_eq!(kvs, model.kv_count());
    assert_eq!(model.keys().count(), kvs);

    // Tensors: iteration order, position, name and shard agree.
    let mut count = 0;
    for (i, (shard, t)) in model.tensors_with_shard().enumerate() {
        let by_name = model.tensor(t.name()).expect("listed tensor found by name");
        let at = model.tensor_at(i).expect("listed tensor found by position");
        for other in [&by_name, &at] {
            assert_eq!(other.name(), t.name());
            assert_eq!(other.shape(), t.shape());
            assert_eq!(other.ggml_type(), t.ggml_type());
            assert_eq!(other.offset(), t.offset());
        }
        assert_eq!(model.tensor_shard(t.name()), Some(shard));
        let file = shards[shard].file();
        assert!(t.file_offset() <= file.file_len().max(file.data_offset()));
        if let (Ok(d), Ok(n)) = (t.data(), t.byte_size()) {
            assert_eq!(d.len() as u64, n);
        }
        if t.element_count() <= DECODE_LIMIT {
            if let Ok(v) = t.to_f32() {
                assert_eq!(v.len() as u64, t.element_count());
            }
        }
        count += 1;
    }
    assert_eq!(count, model.tensor_count());
    assert_eq!(model.tensors().count(), count);
    assert!(model.tensor_at(count).is_none());
}

/// The structured input: the first file written again as shards by the
/// builder, with split keys chosen by the second file's bytes.
fn structured(control: u8, files: &[&[u8]]) -> Option<Vec<Vec<u8>>> {
    let file = GgufFile::open(files[0]).ok()?;
    let mut keys = Bytes(files.get(1).copied().unwrap_or_default());
    let n = 1 + usize::from(control >> 5 & 3);
    debug_assert!(n <= MAX_SHARDS);
    let total = file.tensor_count();
    let empty_first = control & 0x80 != 0 && n > 1;
    // Shard k holds tensors [start(k), start(k + 1)).
    let start = |k: usize| match (empty_first, k) {
        (_, k) if k >= n => total,
        (true, 0) => 0,
        (true, k) => (k - 1) * total / (n - 1),
        (false, k) => k * total / n,
    };
    let names: Vec<String> = file.tensors().map(|t| t.name().to_owned()).collect();
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let mut b = Builder::from_file(&file).ok()?;
        for key in [SPLIT_NO, SPLIT_COUNT, SPLIT_TENSORS_COUNT] {
            let _ = b.remove(key);
        }
        if k > 0 {
            let other: Vec<String> = b
                .keys()
                .filter(|key| *key != ALIGNMENT_KEY)
                .map(str::to_owned)
                .collect();
            for key in other {
                b.remove(&key).ok()?;
            }
        }
        for (i, name) in names.iter().enumerate() {
            if !(start(k)..start(k + 1)).contains(&i) {
                b.remove_tensor(name).ok()?;
            }
        }
        let right = [
            (SPLIT_NO, k as i64, OwnedValue::U16(k as u16)),
            (SPLIT_COUNT, n as i64, OwnedValue::U16(n as u16)),
            (
                SPLIT_TENSORS_COUNT,
                total as i64,
                OwnedValue::I32(total as i32),
            ),
        ];
        for (key, num, value) in right {
            let d = keys.u8();
            let value = match d % 8 {
                0..=3 => value,
                4 => continue,
                // Off by a little, same type.
                5 => {
                    let v = num + i64::from(d >> 3) - 16;
                    match value {
                        OwnedValue::U16(_) => OwnedValue::U16(v as u16),
                        _ => OwnedValue::I32(v as i32),
                    }
                }
                // The right number in the wrong type.
                6 => match d >> 3 & 3 {
                    0 => OwnedValue::U32(num as u32),
                    1 => OwnedValue::I64(num),
                    2 => OwnedValue::U8(num as u8),
                    _ => OwnedValue::String(num.to_string()),
                },
                _ => match value {
                    OwnedValue::U16(_) => OwnedValue::U16(keys.u64_of(2) as u16),
                    _ => OwnedValue::I32(keys.u64_of(4) as i32),
                },
            };
            b.set(key, value).ok()?;
        }
        out.push(b.to_vec().ok()?);
    }
    Some(out)
}
