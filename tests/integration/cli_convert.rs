//! `gguf convert` says what it did: it refuses to write a copy when no
//! tensor would change, labels `general.file_type` only when every weight
//! matrix became the asked type, and names the valid types when given a
//! name it cannot use.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use gguf::write::Builder;
use gguf::{GgmlType, Gguf, GgufFile};

use super::cli_tensor::{convert, quantized_model};
use super::tensor_api::{encode, randoms};
use super::util::stdout;

fn stderr_of_failure(out: &Output, code: i32) -> String {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// A Q4_K_M-labelled model whose weight matrices are all quantized (one
/// already Q8_0) and a norm: nothing a Q8_0 conversion without
/// `--allow-requantize` would touch.
fn all_quantized(path: &Path) {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.file_type", 15u32).unwrap();
    for (i, (name, ty, shape)) in [
        ("token_embd.weight", GgmlType::Q8_0, vec![256u64, 4]),
        ("blk.0.attn_norm.weight", GgmlType::F32, vec![256]),
        ("blk.0.attn_q.weight", GgmlType::Q4_K, vec![256, 4]),
        ("blk.0.ffn_down.weight", GgmlType::Q6_K, vec![256, 2]),
    ]
    .into_iter()
    .enumerate()
    {
        let n = shape.iter().product::<u64>() as usize;
        b.add_tensor(name, ty, &shape, encode(ty, &randoms(i as u64, n), &shape))
            .unwrap();
    }
    b.write_to_path(path).unwrap();
}

#[test]
fn convert_that_would_change_nothing_writes_nothing_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    all_quantized(&input);
    let before = std::fs::read(&input).unwrap();

    let output = dir.path().join("out.gguf");
    let err = stderr_of_failure(&convert(&input, &output, "Q8_0", &[]), 1);
    assert!(err.contains("nothing to convert to Q8_0"), "{err}");
    assert!(err.contains("was not written"), "{err}");
    // What was left alone, and why, with the way out.
    assert!(err.contains("kept 1 (1 Q8_0): already Q8_0"), "{err}");
    assert!(err.contains("kept 1 (1 F32): not weight matrices"), "{err}");
    assert!(
        err.contains("kept 2 (1 Q4_K, 1 Q6_K): already quantized (pass --allow-requantize"),
        "{err}"
    );
    assert!(!output.exists(), "a copy of the input was written");

    // In place: the input stays as it was, file type included.
    let err = stderr_of_failure(&convert(&input, &input, "Q8_0", &[]), 1);
    assert!(err.contains("nothing to convert"), "{err}");
    assert!(std::fs::read(&input).unwrap() == before, "input changed");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "in.gguf")
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");

    // With --allow-requantize there is work, and the label follows it.
    let summary = stdout(&convert(&input, &output, "Q8_0", &["--allow-requantize"]));
    assert!(
        summary.contains("2 of 4 tensors converted to Q8_0"),
        "{summary}"
    );
    assert!(
        summary.contains("general.file_type 15 (Q4_K_M) -> 7 (Q8_0)"),
        "{summary}"
    );
    let f = GgufFile::open(&output).unwrap();
    assert_eq!(f.get::<u32>("general.file_type").unwrap(), 7);
}

#[test]
fn convert_keeps_the_file_type_when_weights_keep_other_types() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    // Q4_K_M-labelled; one F16 matrix converts, three quantized ones stay.
    quantized_model(&input);
    let kept = dir.path().join("kept.gguf");
    let summary = stdout(&convert(&input, &kept, "Q8_0", &[]));
    assert!(
        summary.contains("1 of 7 tensors converted to Q8_0"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "general.file_type left as it was (15 (Q4_K_M)): 3 weight matrices kept their types"
        ),
        "{summary}"
    );
    let f = GgufFile::open(&kept).unwrap();
    assert_eq!(f.get::<u32>("general.file_type").unwrap(), 15);
    // So inspect still calls it what most of its weights are.
    let inspect = stdout(&super::util::gguf(&[
        OsStr::new("inspect"),
        kept.as_os_str(),
    ]));
    assert!(inspect.contains("Q4_K - Medium"), "{inspect}");

    // Every weight matrix converted: labelled with the target.
    for (ty, extra, ft, note) in [
        (
            "Q8_0",
            &["--allow-requantize"][..],
            7,
            "15 (Q4_K_M) -> 7 (Q8_0)",
        ),
        ("F16", &[][..], 1, "15 (Q4_K_M) -> 1 (F16)"),
    ] {
        let out = dir.path().join(format!("{ty}.gguf"));
        let summary = stdout(&convert(&input, &out, ty, extra));
        assert!(summary.contains(note), "{ty}: {summary}");
        let f = GgufFile::open(&out).unwrap();
        assert_eq!(f.get::<u32>("general.file_type").unwrap(), ft, "{ty}");
    }
}

#[test]
fn a_type_convert_cannot_make_is_a_usage_error_naming_the_valid_types() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    all_quantized(&input);
    let output = dir.path().join("out.gguf");
    for (ty, why) in [
        ("Q4_K_M", "is a llama-quantize preset"),
        ("q4_k_s", "is a llama-quantize preset"),
        ("Q9_9", "unknown ggml type"),
        ("IQ2_XXS", "IQ2_XXS needs an importance matrix"),
        ("iq2_s", "IQ2_S needs an importance matrix"),
        ("IQ3_XXS", "llama-quantize refuses it without one"),
        ("I32", "no quantizer for I32"),
    ] {
        let err = stderr_of_failure(&convert(&input, &output, ty, &[]), 2);
        assert!(err.contains(why), "{ty}: {err}");
        assert!(
            err.contains("valid types: F32, F16, Q4_0")
                && err.contains("Q4_K")
                && err.contains("Q8_0"),
            "{ty}: {err}"
        );
        assert!(!output.exists());
    }
}
