//! Byte-order conversion of every sized type: `gguf rewrite --endian` and
//! the Builder, against gguf-py's `gguf_convert_endian.py`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use gguf::write::{Builder, OwnedValue};
use gguf::{Endian, GgmlType, Gguf, GgufFile};

use super::util::{ctx, Content, Mode, Src, TensorSpec};

fn gguf(args: &[&std::ffi::OsStr]) {
    let out = super::util::gguf(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn rewrite(input: &Path, output: &Path, endian: &str) {
    gguf(&[
        "rewrite".as_ref(),
        input.as_os_str(),
        output.as_os_str(),
        "--endian".as_ref(),
        endian.as_ref(),
    ]);
}

/// gguf-py's converter, in place (it asks for "YES" on stdin).
fn convert_endian_py(path: &Path, order: &str) {
    let mut child = Command::new("python3")
        .args(["-m", "gguf.scripts.gguf_convert_endian"])
        .arg(path)
        .arg(order)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run python3: install tests/oracles/requirements.txt");
    child.stdin.take().unwrap().write_all(b"YES\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "gguf_convert_endian.py failed (gguf-py missing? run `python3 -m pip install -r tests/oracles/requirements.txt`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn file_of(tensors: Vec<TensorSpec>) -> Vec<u8> {
    Content {
        ctx: ctx(3, Endian::Little),
        alignment: 32,
        kvs: vec![
            (
                "general.architecture".into(),
                OwnedValue::String("llama".into()),
            ),
            ("llama.block_count".into(), OwnedValue::U32(1)),
            ("x.f32".into(), OwnedValue::F32(1.5)),
        ],
        tensors,
    }
    .write(Mode::Single, Src::Bytes)
}

/// Bytes of `ty` with finite scales: quantized from a ramp where a
/// quantizer exists, else noise.
fn spec(ty: GgmlType, seed: u64) -> TensorSpec {
    let bs = ty.block_size().unwrap();
    let shape = [bs * 2, 2];
    let mut t = TensorSpec::new(&format!("t.{}", ty), ty, &shape, seed);
    if gguf::tensor::can_quantize(ty) && !ty.is_plain() {
        let n = (bs * 4) as usize;
        let x: Vec<f32> = (0..n)
            .map(|i| ((i as f32 + seed as f32) * 0.37).sin())
            .collect();
        t.le = gguf::tensor::quantize(ty, &x, &shape).unwrap();
    }
    t
}

#[test]
fn rewrite_endian_equals_gguf_convert_endian_for_its_types() {
    let dir = tempfile::tempdir().unwrap();
    let types = [
        GgmlType::Q4_0,
        GgmlType::Q8_0,
        GgmlType::Q4_K,
        GgmlType::Q6_K,
        GgmlType::F16,
        GgmlType::F32,
        GgmlType::BF16,
    ];
    let tensors = types
        .iter()
        .enumerate()
        .map(|(i, &t)| spec(t, i as u64))
        .collect();
    let le = dir.path().join("le.gguf");
    std::fs::write(&le, file_of(tensors)).unwrap();

    let theirs = dir.path().join("theirs.gguf");
    std::fs::copy(&le, &theirs).unwrap();
    convert_endian_py(&theirs, "big");
    let ours = dir.path().join("ours.gguf");
    rewrite(&le, &ours, "big");
    assert!(
        std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(),
        "gguf rewrite --endian big differs from gguf_convert_endian.py big"
    );

    // And back: both give the original little-endian bytes.
    convert_endian_py(&theirs, "little");
    let back = dir.path().join("back.gguf");
    rewrite(&ours, &back, "little");
    let original = std::fs::read(&le).unwrap();
    assert!(
        std::fs::read(&theirs).unwrap() == original,
        "gguf-py round trip"
    );
    assert!(std::fs::read(&back).unwrap() == original, "our round trip");
}

fn same_values(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

#[test]
fn every_sized_type_round_trips_and_decodes_alike_big_endian() {
    let dir = tempfile::tempdir().unwrap();
    let tensors: Vec<_> = GgmlType::ALL
        .iter()
        .filter(|t| t.type_size().is_some())
        .enumerate()
        .map(|(i, &t)| spec(t, 100 + i as u64))
        .collect();
    assert!(tensors.len() > 30, "every sized type");
    let le = dir.path().join("le.gguf");
    std::fs::write(&le, file_of(tensors)).unwrap();
    let be = dir.path().join("be.gguf");
    let back = dir.path().join("back.gguf");
    rewrite(&le, &be, "big");
    rewrite(&be, &back, "little");
    assert!(
        std::fs::read(&back).unwrap() == std::fs::read(&le).unwrap(),
        "little -> big -> little changed the bytes"
    );
    let fl = GgufFile::open(&le).unwrap();
    let fb = GgufFile::open(&be).unwrap();
    assert_eq!(fb.endian(), Endian::Big);
    for tl in fl.tensors() {
        let tb = fb.tensor(tl.name()).unwrap();
        if tl.ggml_type().type_size().unwrap() > 1 && tl.ggml_type() != GgmlType::MXFP4 {
            // Something was swapped where the type has multi-byte fields.
            if tl.ggml_type() != GgmlType::IQ1_M && tl.ggml_type() != GgmlType::NVFP4 {
                assert_ne!(tl.data().unwrap(), tb.data().unwrap(), "{}", tl.name());
            }
        }
        if gguf::tensor::can_dequantize(tl.ggml_type()) {
            let (a, b) = (tl.to_f32().unwrap(), tb.to_f32().unwrap());
            assert!(
                same_values(&a, &b),
                "{}: big-endian values differ",
                tl.name()
            );
        }
    }
}

#[test]
fn builder_quantizes_to_big_endian_blocks() {
    let x: Vec<f32> = (0..512).map(|i| (i as f32 * 0.1).cos()).collect();
    let mut files = Vec::new();
    for endian in [Endian::Little, Endian::Big] {
        let mut b = Builder::new();
        b.endian(endian);
        for ty in [
            GgmlType::Q4_K,
            GgmlType::Q8_0,
            GgmlType::IQ4_NL,
            GgmlType::Q8_K,
        ] {
            b.add_tensor_quantized(format!("{ty}"), ty, &[256, 2], &x[..])
                .unwrap();
        }
        let mut out = Vec::new();
        b.write(&mut out).unwrap();
        files.push(out);
    }
    let (fl, fb) = (
        GgufFile::open(&files[0]).unwrap(),
        GgufFile::open(&files[1]).unwrap(),
    );
    for tl in fl.tensors() {
        let tb = fb.tensor(tl.name()).unwrap();
        let swapped = gguf::tensor::with_byte_order(
            tl.ggml_type(),
            tl.data().unwrap(),
            Endian::Little,
            Endian::Big,
        )
        .unwrap();
        assert_eq!(&swapped[..], tb.data().unwrap(), "{}", tl.name());
        assert!(same_values(&tl.to_f32().unwrap(), &tb.to_f32().unwrap()));
    }
}
