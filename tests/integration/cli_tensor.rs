//! `gguf tensor` and `gguf convert`, run as child processes.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use gguf::write::{Builder, OwnedValue};
use gguf::{tensor, Endian, GgmlType, Gguf, GgufFile};

use super::tensor_api::{encode, multi_type_file, randoms};

use super::util::gguf;

#[track_caller]
fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "gguf failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The value of `key:` in a summary, if present.
fn field<'s>(summary: &'s str, key: &str) -> Option<&'s str> {
    summary.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

fn num(summary: &str, key: &str) -> f64 {
    field(summary, key)
        .unwrap_or_else(|| panic!("no {key} in {summary}"))
        .parse()
        .unwrap()
}

/// min, max, mean, population std and NaN count, computed here in two passes.
fn stats(v: &[f32]) -> (f64, f64, f64, f64, usize) {
    let finite: Vec<f64> = v
        .iter()
        .filter(|x| !x.is_nan())
        .map(|&x| x.into())
        .collect();
    let n = finite.len() as f64;
    let mean = finite.iter().sum::<f64>() / n;
    let var = finite.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max, mean, var.sqrt(), v.len() - finite.len())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-6)
}

#[test]
fn summary_matches_statistics_of_to_f32() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    // The multi-type file plus a tensor with NaNs.
    let base = multi_type_file();
    let file = GgufFile::open(&base).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    let mut x = randoms(11, 64);
    x[3] = f32::NAN;
    x[40] = f32::NAN;
    b.add_tensor_quantized("nans", GgmlType::F32, &[16, 4], x)
        .unwrap();
    b.write_to_path(&path).unwrap();

    let file = GgufFile::open(&path).unwrap();
    for t in file.tensors() {
        let out = gguf(&[OsStr::new("tensor"), path.as_os_str(), OsStr::new(t.name())]);
        let s = ok(&out);
        assert_eq!(field(&s, "name"), Some(t.name()), "{s}");
        assert_eq!(field(&s, "type"), Some(t.ggml_type().to_string().as_str()));
        assert_eq!(
            field(&s, "shape"),
            Some(format!("{:?}", t.shape()).as_str())
        );
        assert_eq!(num(&s, "elements") as u64, t.element_count());
        assert_eq!(num(&s, "bytes") as u64, t.byte_size().unwrap());
        let v = t.to_f32().unwrap();
        let (min, max, mean, std, nans) = stats(&v);
        if v.len() == nans {
            assert_eq!(field(&s, "min"), None, "{s}");
            continue;
        }
        assert_eq!(num(&s, "min"), min, "{}: {s}", t.name());
        assert_eq!(num(&s, "max"), max, "{}: {s}", t.name());
        assert!(
            close(num(&s, "mean"), mean),
            "{}: mean {mean}, {s}",
            t.name()
        );
        assert!(close(num(&s, "std"), std), "{}: std {std}, {s}", t.name());
        match nans {
            0 => assert_eq!(field(&s, "nan"), None, "{s}"),
            n => assert_eq!(num(&s, "nan") as usize, n, "{s}"),
        }
    }
    assert_eq!(
        num(
            &ok(&gguf(&[
                OsStr::new("tensor"),
                path.as_os_str(),
                OsStr::new("nans")
            ])),
            "nan"
        ),
        2.0
    );
}

#[test]
fn missing_or_undecodable_tensors_fail_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    let mut r = super::util::raw();
    r.header(1, 0);
    r.tensor_info("strange", &[32, 2], 1000, 0);
    r.pad(32);
    r.bytes(&[0u8; 64]);
    std::fs::write(&path, &r.buf).unwrap();
    for name in ["absent", "strange"] {
        for extra in [&[][..], &["--npy", "x.npy"][..]] {
            let mut args = vec![OsStr::new("tensor"), path.as_os_str(), OsStr::new(name)];
            let npy = dir.path().join("x.npy");
            if !extra.is_empty() {
                args.extend([OsStr::new("--npy"), npy.as_os_str()]);
            }
            let out = gguf(&args);
            assert!(!out.status.success(), "{name} {extra:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(name), "{name}: {err}");
            assert!(out.stdout.is_empty());
            assert!(!npy.exists(), "a partial .npy was left behind");
        }
    }
}

/// Loads `npy` with NumPy and returns (dtype, shape, the values as
/// little-endian bytes of that dtype).
fn numpy_load(npy: &Path) -> (String, Vec<u64>, Vec<u8>) {
    let script = "import sys, json, numpy\n\
                  a = numpy.load(sys.argv[1])\n\
                  print(json.dumps({'dtype': a.dtype.str, 'shape': list(a.shape), \
                  'hex': a.astype(a.dtype.newbyteorder('<')).tobytes().hex()}))";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(npy)
        .output()
        .expect("python3 with numpy (tests/oracles/requirements.txt)");
    assert!(
        out.status.success(),
        "numpy.load failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hex = v["hex"].as_str().unwrap();
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let shape = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    (v["dtype"].as_str().unwrap().to_owned(), shape, bytes)
}

#[test]
fn npy_export_reads_back_in_numpy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, multi_type_file()).unwrap();
    let file = GgufFile::open(&path).unwrap();
    for t in file.tensors() {
        let npy = dir.path().join(format!("{}.npy", t.name()));
        let out = gguf(&[
            OsStr::new("tensor"),
            path.as_os_str(),
            OsStr::new(t.name()),
            OsStr::new("--npy"),
            npy.as_os_str(),
        ]);
        ok(&out);
        let (dtype, shape, bytes) = numpy_load(&npy);
        // F16 keeps its type; BF16 and quantized types become float32.
        let f16 = t.ggml_type() == GgmlType::F16;
        assert_eq!(dtype, if f16 { "<f2" } else { "<f4" }, "{}", t.name());
        let reversed: Vec<u64> = t.shape().iter().rev().copied().collect();
        assert_eq!(shape, reversed, "{}", t.name());
        let want: Vec<u8> = if f16 {
            t.data().unwrap().to_vec()
        } else {
            t.to_f32()
                .unwrap()
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect()
        };
        assert!(bytes == want, "values of {}", t.name());
        // The header is padded so the data starts 64-byte aligned.
        let raw = std::fs::read(&npy).unwrap();
        assert_eq!((raw.len() - want.len()) % 64, 0, "{}", t.name());
    }
}

/// name, type, shape, NumPy dtype, data, little-endian bytes.
type NpyCase = (
    &'static str,
    GgmlType,
    Vec<u64>,
    &'static str,
    gguf::write::TensorData<'static>,
    Vec<u8>,
);

#[test]
fn npy_keeps_integer_and_float_types_exactly_in_either_byte_order() {
    use gguf::write::TensorData;
    let dir = tempfile::tempdir().unwrap();
    let f16: Vec<half::f16> = [1.5f32, -0.25, 65504.0, 1e-7]
        .map(half::f16::from_f32)
        .to_vec();
    let cases: Vec<NpyCase> = vec![
        {
            let v = vec![-128i8, -1, 0, 1, 127];
            let b = v.iter().map(|&x| x as u8).collect::<Vec<_>>();
            ("i8", GgmlType::I8, vec![5], "|i1", TensorData::from(v), b)
        },
        {
            let v = vec![-32768i16, -2, 0, 3, 1000, 32767];
            let b = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            (
                "i16",
                GgmlType::I16,
                vec![3, 2],
                "<i2",
                TensorData::from(v),
                b,
            )
        },
        {
            let v = vec![517605183i32, i32::MIN, -1, i32::MAX];
            let b = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            ("i32", GgmlType::I32, vec![4], "<i4", TensorData::from(v), b)
        },
        {
            let v = vec![(1i64 << 53) + 1, i64::MIN];
            let b = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            ("i64", GgmlType::I64, vec![2], "<i8", TensorData::from(v), b)
        },
        {
            let v = vec![0.1f64, 1e300, -0.0];
            let b = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            ("f64", GgmlType::F64, vec![3], "<f8", TensorData::from(v), b)
        },
        {
            let b = f16.iter().flat_map(|x| x.to_le_bytes()).collect();
            (
                "f16",
                GgmlType::F16,
                vec![2, 2],
                "<f2",
                TensorData::from(f16),
                b,
            )
        },
        {
            let v = vec![0.1f32, -3.4e38];
            let b = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            ("f32", GgmlType::F32, vec![2], "<f4", TensorData::from(v), b)
        },
    ];
    let mut builders = [Builder::new(), Builder::new()];
    builders[1].endian(Endian::Big);
    let mut expected = Vec::new();
    for (name, ty, shape, dtype, data, bytes) in cases {
        let copy = match &data {
            TensorData::Native { bytes, elem_size } => TensorData::Native {
                bytes: bytes.clone(),
                elem_size: *elem_size,
            },
            _ => unreachable!(),
        };
        builders[0].add_tensor(name, ty, &shape, data).unwrap();
        builders[1].add_tensor(name, ty, &shape, copy).unwrap();
        expected.push((name, shape, dtype, bytes));
    }
    for (b, order) in builders.iter_mut().zip(["le", "be"]) {
        let path = dir.path().join(format!("{order}.gguf"));
        b.write_to_path(&path).unwrap();
        for (name, shape, dtype, bytes) in &expected {
            let npy = dir.path().join(format!("{order}-{name}.npy"));
            let out = ok(&gguf(&[
                OsStr::new("tensor"),
                path.as_os_str(),
                OsStr::new(name),
                OsStr::new("--npy"),
                npy.as_os_str(),
            ]));
            let (got_dtype, got_shape, got) = numpy_load(&npy);
            assert_eq!(got_dtype, *dtype, "{order} {name}");
            let reversed: Vec<u64> = shape.iter().rev().copied().collect();
            assert_eq!(got_shape, reversed, "{order} {name}");
            assert_eq!(got, *bytes, "{order} {name}: values");
            let n: u64 = shape.iter().product();
            assert!(out.contains(&format!(" {n} ")), "{order} {name}: {out}");
        }
        // The summary reads integers exactly too.
        let s = ok(&gguf(&[
            OsStr::new("tensor"),
            path.as_os_str(),
            OsStr::new("i32"),
        ]));
        assert_eq!(field(&s, "max"), Some("2147483647"), "{order}: {s}");
        assert_eq!(field(&s, "min"), Some("-2147483648"), "{order}: {s}");
        let s = ok(&gguf(&[
            OsStr::new("tensor"),
            path.as_os_str(),
            OsStr::new("i64"),
        ]));
        assert_eq!(
            field(&s, "min"),
            Some("-9223372036854775808"),
            "{order}: {s}"
        );
        assert_eq!(field(&s, "max"), Some("9007199254740993"), "{order}: {s}");
    }
}

/// name, type, shape, little-endian bytes.
pub type Spec = (String, GgmlType, Vec<u64>, Vec<u8>);

/// A llama-like file: F32 and F16 weight matrices, 1-D norms, a bias, a
/// weight whose rows are not whole Q8_0 blocks, a tokenizer and a file type.
fn llama_like(path: &Path) -> Vec<Spec> {
    let specs: Vec<(&str, GgmlType, Vec<u64>)> = vec![
        ("token_embd.weight", GgmlType::F32, vec![64, 10]),
        ("blk.0.attn_norm.weight", GgmlType::F32, vec![64]),
        ("blk.0.attn_q.weight", GgmlType::F32, vec![64, 64]),
        ("blk.0.attn_q.bias", GgmlType::F32, vec![64]),
        ("blk.0.ffn_up.weight", GgmlType::F16, vec![64, 96]),
        ("blk.0.odd.weight", GgmlType::F32, vec![48, 4]),
        ("blk.0.col.weight", GgmlType::F32, vec![64, 1]),
        ("output_norm.weight", GgmlType::F32, vec![64]),
        ("output.weight", GgmlType::BF16, vec![64, 10]),
    ];
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.file_type", 0u32).unwrap();
    b.set("llama.context_length", 128u32).unwrap();
    b.set("tokenizer.ggml.model", "llama").unwrap();
    b.set("tokenizer.ggml.tokens", vec!["<s>", "</s>", "▁a", "b"])
        .unwrap();
    b.set("tokenizer.ggml.scores", vec![0.0f32, 0.0, -1.5, -2.0])
        .unwrap();
    b.set("tokenizer.ggml.token_type", vec![3i32, 3, 1, 1])
        .unwrap();
    let mut tensors = Vec::new();
    for (i, (name, ty, shape)) in specs.into_iter().enumerate() {
        let n = shape.iter().product::<u64>() as usize;
        let bytes = encode(ty, &randoms(100 + i as u64, n), &shape);
        b.add_tensor(name, ty, &shape, bytes.clone()).unwrap();
        tensors.push((name.to_owned(), ty, shape, bytes));
    }
    b.write_to_path(path).unwrap();
    tensors
}

#[test]
fn convert_q8_0_quantizes_weights_and_keeps_everything_else() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let output = dir.path().join("out.gguf");
    let tensors = llama_like(&input);
    let out = gguf(&[
        OsStr::new("convert"),
        input.as_os_str(),
        output.as_os_str(),
        OsStr::new("--type"),
        OsStr::new("Q8_0"),
    ]);
    let summary = ok(&out);
    assert!(summary.contains("4 of 9 tensors"), "{summary}");
    // The odd weight's rows are not whole Q8_0 blocks: F16, as
    // llama-quantize falls back.
    assert!(
        summary.contains(
            "1 converted to F16 instead: rows not a whole number of Q8_0 blocks of 32 \
             (llama-quantize's fallback): blk.0.odd.weight"
        ),
        "{summary}"
    );
    // On a pipe: no progress bar, and nothing to warn about.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{err}");

    let src = GgufFile::open(&input).unwrap();
    let conv = GgufFile::open(&output).unwrap();
    // Metadata: same keys, order, types and values, except the file type.
    let a: Vec<(String, OwnedValue)> = src
        .metadata()
        .map(|(k, v)| (k.to_owned(), OwnedValue::from_value(&v)))
        .collect();
    let b: Vec<(String, OwnedValue)> = conv
        .metadata()
        .map(|(k, v)| (k.to_owned(), OwnedValue::from_value(&v)))
        .collect();
    assert_eq!(a.len(), b.len());
    for ((ka, va), (kb, vb)) in a.iter().zip(&b) {
        assert_eq!(ka, kb);
        if ka == "general.file_type" {
            assert_eq!(*vb, OwnedValue::U32(7), "LLAMA_FTYPE_MOSTLY_Q8_0");
        } else {
            assert_eq!(va, vb, "{ka}");
        }
    }
    // Tensors: weights with >= 2 effective dims and whole blocks become
    // Q8_0 equal to tensor::quantize of the original values; the rest
    // keep their type and bytes.
    let converted = [
        "token_embd.weight",
        "blk.0.attn_q.weight",
        "blk.0.ffn_up.weight",
        "output.weight",
    ];
    let mut n_converted = 0;
    for (name, ty, shape, bytes) in &tensors {
        let t = conv.tensor(name).unwrap();
        assert_eq!(t.shape(), &shape[..], "{name}");
        let to = if name == "blk.0.odd.weight" {
            Some(GgmlType::F16)
        } else if converted.contains(&name.as_str()) {
            n_converted += 1;
            Some(GgmlType::Q8_0)
        } else {
            None
        };
        if let Some(to) = to {
            assert_eq!(t.ggml_type(), to, "{name}");
            let values = tensor::dequantize_to_vec(*ty, Endian::Little, bytes).unwrap();
            let want = tensor::quantize(to, &values, shape).unwrap();
            assert!(t.data().unwrap() == want, "{name}");
        } else {
            assert_eq!(t.ggml_type(), *ty, "{name}");
            assert_eq!(t.data().unwrap(), &bytes[..], "{name}");
        }
    }
    assert_eq!(n_converted, 4);
    assert_eq!(
        conv.tensors().map(|t| t.name()).collect::<Vec<_>>(),
        src.tensors().map(|t| t.name()).collect::<Vec<_>>()
    );

    // gguf-py reads the result with the same tensor types.
    let script = "import sys, json\n\
                  from gguf import GGUFReader\n\
                  r = GGUFReader(sys.argv[1])\n\
                  print(json.dumps({t.name: [t.tensor_type.name, int(t.n_elements)] for t in r.tensors}))";
    let py = Command::new("python3")
        .args(["-c", script])
        .arg(&output)
        .output()
        .expect("python3 with gguf-py");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    for t in conv.tensors() {
        assert_eq!(
            v[t.name()][0].as_str(),
            Some(t.ggml_type().to_string().as_str()),
            "{}",
            t.name()
        );
        assert_eq!(v[t.name()][1].as_u64(), Some(t.element_count()));
    }
}

#[test]
fn convert_sets_the_file_type_of_each_target_and_refuses_what_it_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    llama_like(&input);
    let run = |ty: &str, out: &Path| {
        gguf(&[
            OsStr::new("convert"),
            input.as_os_str(),
            out.as_os_str(),
            OsStr::new("--type"),
            OsStr::new(ty),
        ])
    };
    // gguf-py's LlamaFileType names the numbers llama.cpp uses.
    let py = Command::new("python3")
        .args([
            "-c",
            "import json, gguf; print(json.dumps({m.name: m.value for m in gguf.LlamaFileType}))",
        ])
        .output()
        .expect("python3 with gguf-py");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let ftypes: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    for (ty, ftype) in [
        ("F16", "MOSTLY_F16"),
        ("bf16", "MOSTLY_BF16"),
        ("Q4_0", "MOSTLY_Q4_0"),
        ("Q4_K", "MOSTLY_Q4_K_M"),
        ("Q6_K", "MOSTLY_Q6_K"),
        ("IQ4_NL", "MOSTLY_IQ4_NL"),
    ] {
        let out_path = dir.path().join(format!("{ty}.gguf"));
        ok(&run(ty, &out_path));
        let f = GgufFile::open(&out_path).unwrap();
        assert_eq!(
            u64::from(f.get::<u32>("general.file_type").unwrap()),
            ftypes[ftype].as_u64().unwrap(),
            "{ty}"
        );
        let want = GgmlType::from_name(ty).unwrap();
        let q = f.tensor("blk.0.attn_q.weight").unwrap();
        // K-quants need rows of 256: the 64-wide weights fall back as
        // llama-quantize's do.
        let expect = match want {
            GgmlType::Q4_K => GgmlType::Q5_0,
            GgmlType::Q6_K => GgmlType::Q8_0,
            other => other,
        };
        assert_eq!(q.ggml_type(), expect, "{ty}");
    }
    // Refused: an unknown type, a type without a quantizer.
    for ty in ["Q9_9", "IQ2_XXS"] {
        let out = run(ty, &dir.path().join("x.gguf"));
        assert!(!out.status.success(), "{ty}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(ty), "{ty}");
    }
    let be = dir.path().join("be.gguf");
    let out = gguf(&[
        OsStr::new("rewrite"),
        input.as_os_str(),
        be.as_os_str(),
        OsStr::new("--endian"),
        OsStr::new("big"),
    ]);
    ok(&out);
    let out = gguf(&[
        OsStr::new("convert"),
        be.as_os_str(),
        dir.path().join("y.gguf").as_os_str(),
        OsStr::new("--type"),
        OsStr::new("Q8_0"),
    ]);
    // Big-endian output of a quantized type: blocks quantized, then swapped.
    ok(&out);
    let y = GgufFile::open(dir.path().join("y.gguf")).unwrap();
    assert_eq!(y.endian(), Endian::Big);
    assert!(y.tensors().any(|t| t.ggml_type() == GgmlType::Q8_0));
    // Big-endian to F16 works: plain types are swapped.
    let out = gguf(&[
        OsStr::new("convert"),
        be.as_os_str(),
        dir.path().join("z.gguf").as_os_str(),
        OsStr::new("--type"),
        OsStr::new("F16"),
    ]);
    ok(&out);
    let z = GgufFile::open(dir.path().join("z.gguf")).unwrap();
    let le16 = GgufFile::open(dir.path().join("F16.gguf")).unwrap();
    assert_eq!(z.endian(), Endian::Big);
    for t in le16.tensors() {
        let u = z.tensor(t.name()).unwrap();
        assert_eq!(u.ggml_type(), t.ggml_type(), "{}", t.name());
        assert_eq!(
            u.to_f32()
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>(),
            t.to_f32()
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>(),
            "{}",
            t.name()
        );
    }
}

/// A model whose weights are already quantized (rows of 256: whole blocks
/// of every type), plus an F16 matrix, a norm and an integer tensor.
pub fn quantized_model(path: &Path) -> Vec<Spec> {
    let specs: Vec<(&str, GgmlType, Vec<u64>)> = vec![
        ("token_embd.weight", GgmlType::Q8_0, vec![256, 6]),
        ("blk.0.attn_norm.weight", GgmlType::F32, vec![256]),
        ("blk.0.attn_q.weight", GgmlType::Q4_K, vec![256, 4]),
        ("blk.0.attn_v.weight", GgmlType::Q6_K, vec![256, 4]),
        ("blk.0.ffn_up.weight", GgmlType::Q5_0, vec![256, 3]),
        ("blk.0.ffn_down.weight", GgmlType::F16, vec![256, 2]),
        ("blk.0.pos.weight", GgmlType::I32, vec![4, 4]),
    ];
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.file_type", 15u32).unwrap();
    let mut tensors = Vec::new();
    for (i, (name, ty, shape)) in specs.into_iter().enumerate() {
        let n = shape.iter().product::<u64>() as usize;
        let bytes = if ty == GgmlType::I32 {
            (0..n as i32)
                .flat_map(|v| (v * 7919 - 50).to_le_bytes())
                .collect()
        } else {
            encode(ty, &randoms(300 + i as u64, n), &shape)
        };
        b.add_tensor(name, ty, &shape, bytes.clone()).unwrap();
        tensors.push((name.to_owned(), ty, shape, bytes));
    }
    b.write_to_path(path).unwrap();
    tensors
}

pub fn convert(input: &Path, output: &Path, ty: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        OsStr::new("convert"),
        input.as_os_str(),
        output.as_os_str(),
        OsStr::new("--type"),
        OsStr::new(ty),
    ];
    args.extend(extra.iter().map(OsStr::new));
    gguf(&args)
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks gguf-py's GGUFReader reads each file with the tensors, bytes and
/// values we read (tests/oracles/values_with_gguf_py.py); values of the
/// `only` tensors (comma-separated) when given.
fn assert_gguf_py_reads(paths: &[&Path], only: Option<&str>) {
    let mut args: Vec<&OsStr> = Vec::new();
    if let Some(only) = only {
        args.extend([OsStr::new("--tensors"), OsStr::new(only)]);
    }
    args.extend(paths.iter().map(|p| p.as_os_str()));
    let out = super::util::python("values_with_gguf_py.py", &args);
    let views: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(views.len(), paths.len());
    for (path, view) in paths.iter().zip(&views) {
        let file = GgufFile::open(*path).unwrap();
        assert_eq!(
            view.as_object().unwrap().len(),
            file.tensor_count(),
            "{}",
            path.display()
        );
        for t in file.tensors() {
            let what = format!("{}: {}", path.display(), t.name());
            let v = &view[t.name()];
            assert_eq!(
                v["type"].as_u64(),
                Some(u64::from(t.ggml_type().id())),
                "{what}"
            );
            assert_eq!(v["shape"], serde_json::json!(t.shape()), "{what}");
            assert_eq!(
                v["sha256"].as_str(),
                Some(sha256_hex(t.data().unwrap()).as_str()),
                "{what}"
            );
            let Some(hex) = v["values"].as_str() else {
                // Quantized blocks of a big-endian file, or not asked for:
                // bytes compared above.
                assert!(
                    file.endian() == Endian::Big || only.is_some(),
                    "{what}: no values"
                );
                continue;
            };
            let theirs: Vec<f64> = (0..hex.len())
                .step_by(16)
                .map(|i| {
                    f64::from_bits(
                        u64::from_str_radix(&hex[i..i + 16], 16)
                            .unwrap()
                            .swap_bytes(),
                    )
                })
                .collect();
            let ours: Vec<f64> = match t.ggml_type() {
                GgmlType::I32 => t
                    .data()
                    .unwrap()
                    .chunks_exact(4)
                    .map(|c| {
                        let b = c.try_into().unwrap();
                        f64::from(match file.endian() {
                            Endian::Little => i32::from_le_bytes(b),
                            Endian::Big => i32::from_be_bytes(b),
                        })
                    })
                    .collect(),
                _ => t.to_f32().unwrap().into_iter().map(f64::from).collect(),
            };
            assert_eq!(theirs.len(), ours.len(), "{what}");
            for (i, (a, b)) in theirs.iter().zip(&ours).enumerate() {
                assert!(
                    a.to_bits() == b.to_bits() || (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                    "{what}[{i}]: gguf-py {a}, ours {b}"
                );
            }
        }
    }
}

#[test]
fn convert_keeps_quantized_weights_unless_allowed_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let tensors = quantized_model(&input);
    let quantized = [
        "blk.0.attn_q.weight",
        "blk.0.attn_v.weight",
        "blk.0.ffn_up.weight",
    ];

    // Without --allow-requantize: the F16 matrix only, and a warning naming
    // the quantized weights kept.
    let kept = dir.path().join("kept.gguf");
    let out = convert(&input, &kept, "Q8_0", &[]);
    let summary = ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        summary.contains("1 of 7 tensors converted to Q8_0"),
        "{summary}"
    );
    assert!(
        summary.contains("kept 3 (1 Q4_K, 1 Q5_0, 1 Q6_K): already quantized"),
        "{summary}"
    );
    assert!(
        summary.contains("kept 1 (1 Q8_0): already Q8_0"),
        "{summary}"
    );
    assert!(
        summary.contains("kept 2 (1 F32, 1 I32): not weight matrices"),
        "{summary}"
    );
    assert!(
        err.contains("warning: 3 weight tensors NOT converted"),
        "{err}"
    );
    assert!(err.contains("--allow-requantize"), "{err}");
    for name in quantized {
        assert!(err.contains(name), "{name} not named: {err}");
    }

    // With it: every weight matrix not already Q8_0, decoded and encoded.
    let requant = dir.path().join("requant.gguf");
    let out = convert(&input, &requant, "Q8_0", &["--allow-requantize"]);
    let summary = ok(&out);
    assert!(
        summary.contains("4 of 7 tensors converted to Q8_0"),
        "{summary}"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A float target converts quantized weights without the flag.
    let f16 = dir.path().join("f16.gguf");
    let out = convert(&input, &f16, "F16", &[]);
    let summary = ok(&out);
    assert!(
        summary.contains("4 of 7 tensors converted to F16"),
        "{summary}"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let kept_f = GgufFile::open(&kept).unwrap();
    let requant_f = GgufFile::open(&requant).unwrap();
    let f16_f = GgufFile::open(&f16).unwrap();
    for (name, ty, shape, bytes) in &tensors {
        let values = || tensor::dequantize_to_vec(*ty, Endian::Little, bytes).unwrap();
        let matrix = shape.len() == 2 && *ty != GgmlType::I32;
        // kept.gguf: only the F16 matrix changed.
        let t = kept_f.tensor(name).unwrap();
        if *ty == GgmlType::F16 {
            assert_eq!(t.ggml_type(), GgmlType::Q8_0, "{name}");
        } else {
            assert_eq!(
                (t.ggml_type(), t.data().unwrap()),
                (*ty, &bytes[..]),
                "{name}"
            );
        }
        // requant.gguf: every matrix is Q8_0 of the decoded values.
        let t = requant_f.tensor(name).unwrap();
        if matrix && *ty != GgmlType::Q8_0 {
            let want = tensor::quantize(GgmlType::Q8_0, &values(), shape).unwrap();
            assert_eq!(t.ggml_type(), GgmlType::Q8_0, "{name}");
            assert!(t.data().unwrap() == want, "{name}");
        } else {
            assert_eq!(
                (t.ggml_type(), t.data().unwrap()),
                (*ty, &bytes[..]),
                "{name}"
            );
        }
        // f16.gguf: every matrix is F16 of the decoded values.
        let t = f16_f.tensor(name).unwrap();
        if matrix {
            assert_eq!(t.ggml_type(), GgmlType::F16, "{name}");
            let want: Vec<f32> = values()
                .iter()
                .map(|&x| half::f16::from_f32(x).to_f32())
                .collect();
            assert_eq!(t.to_f32().unwrap(), want, "{name}");
        } else {
            assert_eq!(
                (t.ggml_type(), t.data().unwrap()),
                (*ty, &bytes[..]),
                "{name}"
            );
        }
    }
}

#[test]
fn gguf_py_reads_every_output_of_convert_and_rewrite_endian() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.gguf");
    llama_like(&plain);
    let quant = dir.path().join("quant.gguf");
    quantized_model(&quant);
    let mut outputs = vec![plain.clone(), quant.clone()];
    for (src, ty, extra) in [
        (&plain, "Q8_0", &[][..]),
        (&plain, "Q4_0", &[][..]),
        (&plain, "BF16", &[][..]),
        (&quant, "Q8_0", &["--allow-requantize"][..]),
        (&quant, "Q6_K", &["--allow-requantize"][..]),
        (&quant, "F16", &[][..]),
        (&quant, "F32", &[][..]),
    ] {
        let out = dir.path().join(format!(
            "{}-{ty}.gguf",
            src.file_stem().unwrap().to_string_lossy()
        ));
        ok(&convert(src, &out, ty, extra));
        outputs.push(out);
    }
    for src in outputs.clone() {
        let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
        let be = dir.path().join(format!("{stem}-be.gguf"));
        let le = dir.path().join(format!("{stem}-be-le.gguf"));
        ok(&gguf(&[
            OsStr::new("rewrite"),
            src.as_os_str(),
            be.as_os_str(),
            OsStr::new("--endian"),
            OsStr::new("big"),
        ]));
        ok(&gguf(&[
            OsStr::new("rewrite"),
            be.as_os_str(),
            le.as_os_str(),
            OsStr::new("--endian"),
            OsStr::new("little"),
        ]));
        assert!(
            std::fs::read(&le).unwrap() == std::fs::read(&src).unwrap(),
            "{stem}: little -> big -> little"
        );
        outputs.push(be);
    }
    let paths: Vec<&Path> = outputs.iter().map(|p| p.as_path()).collect();
    assert_gguf_py_reads(&paths, None);
}

/// Opt-in (`GGUF_TEST_GEMMA=/path/to/gemma-3-270m-q4_k_m.gguf`): a real
/// Q4_K_M model converted to Q8_0, without and with --allow-requantize.
#[test]
fn real_q4_k_m_model_converts_to_q8_0_only_when_allowed() {
    let Some(model) = std::env::var_os("GGUF_TEST_GEMMA") else {
        eprintln!("skipped: set GGUF_TEST_GEMMA to a Gemma 3 270M Q4_K_M .gguf to run");
        return;
    };
    let model = Path::new(&model);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let src = GgufFile::open(model).unwrap();
    let n = src.tensor_count();
    let quantized = src
        .tensors()
        .filter(|t| !t.ggml_type().is_plain() && t.ggml_type() != GgmlType::Q8_0)
        .count();
    assert!(quantized > 0, "not a quantized model");

    // Without the flag nothing would change: refused, nothing written.
    let kept = dir.path().join("kept.gguf");
    let out = convert(model, &kept, "Q8_0", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to convert to Q8_0"), "{err}");
    assert!(
        err.contains(&format!("kept {quantized} (")) && err.contains("--allow-requantize"),
        "{err}"
    );
    assert!(!kept.exists());

    let q8 = dir.path().join("q8.gguf");
    let summary = ok(&convert(model, &q8, "Q8_0", &["--allow-requantize"]));
    assert!(
        summary.contains(&format!("{quantized} of {n} tensors")),
        "{summary}"
    );
    let out = GgufFile::open(&q8).unwrap();
    for t in src.tensors() {
        let u = out.tensor(t.name()).unwrap();
        if t.ggml_type().is_plain() {
            assert_eq!(u.data().unwrap(), t.data().unwrap(), "{}", t.name());
        } else {
            assert_eq!(u.ggml_type(), GgmlType::Q8_0, "{}", t.name());
        }
    }
    assert_gguf_py_reads(
        &[&q8],
        Some("blk.0.attn_q.weight,blk.0.ffn_down.weight,output_norm.weight"),
    );
}

/// Rows that are not a whole number of the target's blocks fall back per
/// tensor as llama-quantize's do (Q4_K → Q5_0, and F16 when not even a
/// block of 32 divides the row); matrices llama-quantize never quantizes
/// (an MoE router here) are kept without a warning.
#[test]
fn convert_falls_back_per_tensor_as_llama_quantize_does() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    let shapes: [(&str, [u64; 2]); 4] = [
        ("blk.0.ffn_down.weight", [256, 4]),
        ("blk.0.attn_q.weight", [64, 4]),
        ("blk.0.attn_k.weight", [48, 4]),
        ("blk.0.ffn_gate_inp.weight", [256, 4]),
    ];
    for (name, shape) in shapes {
        let bytes: Vec<u8> = (0..shape[0] * shape[1])
            .flat_map(|i| (i as f32 / 7.0).to_le_bytes())
            .collect();
        b.add_tensor(name, GgmlType::F32, &shape, bytes).unwrap();
    }
    b.write_to_path(&input).unwrap();
    let output = dir.path().join("out.gguf");
    let out = convert(&input, &output, "Q4_K", &[]);
    let summary = ok(&out);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "1 of 4 tensors converted to Q4_K",
        "1 converted to F16 instead: rows not a whole number of Q4_K blocks of 256",
        "1 converted to Q5_0 instead: rows not a whole number of Q4_K blocks of 256",
        "kept 1 (1 F32): matrices llama-quantize leaves as they are",
    ] {
        assert!(summary.contains(line), "{line:?} missing:\n{summary}");
    }
    let file = GgufFile::open(&output).unwrap();
    let types: Vec<(String, GgmlType)> = file
        .tensors()
        .map(|t| (t.name().to_owned(), t.ggml_type()))
        .collect();
    let expected = [
        ("blk.0.ffn_down.weight", GgmlType::Q4_K),
        ("blk.0.attn_q.weight", GgmlType::Q5_0),
        ("blk.0.attn_k.weight", GgmlType::F16),
        ("blk.0.ffn_gate_inp.weight", GgmlType::F32),
    ];
    assert_eq!(types, expected.map(|(n, t)| (n.to_owned(), t)).to_vec());
}
