//! The quantization policy against llama-quantize's recorded answers, in
//! every test run (no llama.cpp needed): for every case of
//! `quantize_cases` on every test model, our `plan` gives the tensor names,
//! types and size that `llama-quantize --dry-run` gave
//! (`tests/data/quantize/dry-run/`, written by `quantize_oracle`); and
//! `gguf quantize` writes the bytes llama-quantize wrote (their sha256 in
//! `tests/data/quantize/outputs.sha256`).

use gguf::GgufFile;

use super::quantize_cases::{
    byte_cases, bytes_golden_path, cases, differences, golden_path, our_dry_run,
    parse_bytes_golden, parse_golden, sha256_hex,
};
use super::quantize_models::MODELS;
use super::quantize_oracle::quantize_with;

#[test]
fn plan_matches_llama_quantize_dry_run_goldens() {
    let cases = cases();
    let mut problems = Vec::new();
    let mut checked = 0;
    for spec in MODELS {
        let path = golden_path(spec.name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let golden = parse_golden(&text);
        let bytes = spec.bytes();
        let model = GgufFile::open(&bytes).unwrap();
        for case in &cases {
            let Some(theirs) = golden.get(&case.key()) else {
                problems.push(format!("{}: {}: not in the golden", spec.name, case.key()));
                continue;
            };
            let ours = our_dry_run(&model, case);
            for d in differences(&ours, theirs) {
                problems.push(format!("{}: {}: {d}", spec.name, case.key()));
            }
            checked += 1;
        }
    }
    assert!(
        problems.is_empty(),
        "{} differences with llama-quantize's recorded dry runs:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert_eq!(checked, cases.len() * MODELS.len());
}

/// The byte cases checked in every run: all of them on the smallest model,
/// a few on the larger ones (the opt-in `quantize_oracle` runs them all).
fn checked_in_every_run(model: &str, key: &str) -> bool {
    model == "llama-160"
        || [
            "Q4_K_M imatrix",
            "IQ2_XS imatrix",
            "IQ4_XS imatrix",
            "Q3_K_S imatrix --tensor-type attn_v=q8_0 --tensor-type ffn_down=iq4_nl",
            "Q6_K",
            "Q4_0 imatrix",
        ]
        .contains(&key)
}

#[test]
fn gguf_quantize_output_has_llama_quantize_bytes() {
    let recorded = parse_bytes_golden(&std::fs::read_to_string(bytes_golden_path()).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let ours = std::path::Path::new(env!("CARGO_BIN_EXE_gguf"));
    let (mut problems, mut checked) = (Vec::new(), 0);
    for spec in MODELS {
        let model = spec.write_to(dir.path());
        let imatrix = format!("imatrix/{}.gguf", spec.name);
        for case in byte_cases() {
            let key = case.key();
            if !checked_in_every_run(spec.name, &key) {
                continue;
            }
            let expected = recorded
                .get(&(spec.name.to_owned(), key.clone()))
                .unwrap_or_else(|| panic!("{} {key}: not recorded", spec.name));
            let out = dir.path().join("out.gguf");
            let got = quantize_with(ours, &["quantize"], &model, &imatrix, &case, &out)
                .map_or_else(|_| "error".to_owned(), |b| sha256_hex(&b));
            if &got != expected {
                problems.push(format!(
                    "{} {key}: sha256 {got}, llama-quantize's {expected}",
                    spec.name
                ));
            }
            checked += 1;
        }
    }
    assert!(
        problems.is_empty(),
        "gguf quantize's output is not llama-quantize's (run quantize_oracle with GGUF_LLAMA_TOOLS for details):\n{}",
        problems.join("\n")
    );
    assert!(checked >= 100, "{checked} cases checked");
}
