//! The quantization policy against llama-quantize's recorded answers, in
//! every test run (no llama.cpp needed): for every case of
//! `quantize_cases` on every test model, our `plan` gives the tensor names,
//! types and size that `llama-quantize --dry-run` gave
//! (`tests/data/quantize/dry-run/`, written by `quantize_oracle`).

use gguf::GgufFile;

use super::quantize_cases::{cases, differences, golden_path, our_dry_run, parse_golden};
use super::quantize_models::MODELS;

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
