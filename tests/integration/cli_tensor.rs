//! `gguf tensor` and `gguf convert`, run as child processes.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use gguf::write::{Builder, OwnedValue};
use gguf::{tensor, Endian, GgmlType, GgufFile};

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
    let file = GgufFile::from_bytes(&base).unwrap();
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

/// Loads `npy` with NumPy and returns (dtype, shape, little-endian bytes hex).
fn numpy_load(npy: &Path) -> (String, Vec<u64>, Vec<u8>) {
    let script = "import sys, json, numpy\n\
                  a = numpy.load(sys.argv[1])\n\
                  print(json.dumps({'dtype': a.dtype.str, 'shape': list(a.shape), \
                  'hex': a.astype('<f4').tobytes().hex()}))";
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
        assert_eq!(dtype, "<f4", "{}", t.name());
        let reversed: Vec<u64> = t.shape().iter().rev().copied().collect();
        assert_eq!(shape, reversed, "{}", t.name());
        let want: Vec<u8> = t
            .to_f32()
            .unwrap()
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert!(bytes == want, "values of {}", t.name());
        // The header is padded so the data starts 64-byte aligned.
        let raw = std::fs::read(&npy).unwrap();
        assert_eq!((raw.len() - want.len()) % 64, 0, "{}", t.name());
    }
}

/// name, type, shape, little-endian bytes.
type Spec = (String, GgmlType, Vec<u64>, Vec<u8>);

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
    assert!(out.stderr.is_empty(), "progress drawn on a pipe");

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
        if converted.contains(&name.as_str()) {
            n_converted += 1;
            assert_eq!(t.ggml_type(), GgmlType::Q8_0, "{name}");
            let values = tensor::dequantize_to_vec(*ty, Endian::Little, bytes).unwrap();
            let want = tensor::quantize(GgmlType::Q8_0, &values, shape).unwrap();
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
        // Q4_K needs rows of 256: the 64-wide weights stay as they are.
        let block = want.block_size().unwrap();
        let expect = if 64 % block == 0 { want } else { GgmlType::F32 };
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
