//! `gguf estimate` as a user runs it: flags llama.cpp refuses are usage
//! errors, `--fit` needs a unit and says which device, budget and context
//! each answer is for, and a context past the training context warns.

use std::process::Output;

use super::util::{gguf, stdout};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

fn estimate(args: &[&str]) -> Output {
    let mut all = vec!["estimate", SAMPLE];
    all.extend_from_slice(args);
    gguf(&all)
}

#[track_caller]
fn usage_error(out: &Output) -> String {
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    err
}

#[test]
fn fit_needs_a_unit() {
    // 8 could be 8 GiB or 8 bytes: refused, with both spellings offered.
    let err = usage_error(&estimate(&["--fit", "8"]));
    assert!(
        err.contains("\"8\" has no unit") && err.contains("8G for 8 GiB") && err.contains("8B"),
        "{err}"
    );
    for bad in ["8X", "G", "-1G", "1e400G", ""] {
        usage_error(&estimate(&["--fit", bad]));
    }
    for (good, bytes) in [
        ("8G", 8u64 << 30),
        ("1.5gib", 3 << 29),
        ("512M", 512 << 20),
        ("100B", 100),
    ] {
        let doc: serde_json::Value =
            serde_json::from_str(&stdout(&estimate(&["--fit", good, "--json"]))).unwrap();
        assert_eq!(doc["fit"]["budget_bytes"], bytes, "{good}");
    }
}

#[test]
fn cache_types_llama_cpp_refuses_are_usage_errors() {
    for (flag, ty) in [
        ("-ctk", "iq2_xs"),
        ("-ctk", "q4_k"),
        ("-ctv", "q8_1"),
        ("-ctv", "nonsense"),
    ] {
        let err = usage_error(&estimate(&[flag, ty, "-fa", "on"]));
        assert!(
            err.contains(&format!("does not take {ty:?} as a cache type"))
                && err.contains("f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1"),
            "{flag} {ty}: {err}"
        );
    }
    // llama.cpp's names, in any case.
    stdout(&estimate(&["-ctk", "f32", "-ctv", "BF16", "-fa", "on"]));
}

#[test]
fn fit_answers_say_which_device_budget_and_context_they_are_for() {
    // CPU only: the budget is host RAM, and the sample's whole training
    // context (256) fits in 1 GiB, with room to spare.
    let text = stdout(&estimate(&["--fit", "1G"]));
    assert!(
        text.contains("devices: CPU only (no -ts given, so no GPU is assumed)"),
        "{text}"
    );
    assert!(
        text.contains("fit in 1.00 GiB of host RAM (CPU only"),
        "{text}"
    );
    assert!(
        text.contains(
            "largest context     256: the model's training context, where the search stops"
        ),
        "{text}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&estimate(&["--fit", "1G", "--json"]))).unwrap();
    let fit = &doc["fit"];
    assert_eq!(fit["budget_per_device"], serde_json::json!(["CPU"]));
    assert_eq!(fit["host_ram_checked"], true);
    assert_eq!(fit["max_ctx_capped_by_training_context"], true);
    assert_eq!(fit["max_gpu_layers"], serde_json::Value::Null);

    // Two GPUs: per GPU, host RAM unchecked; each answer names its -ngl or -c.
    let text = stdout(&estimate(&["-ts", "1,1", "-c", "256", "--fit", "1M"]));
    assert!(
        text.contains("fit in 1.00 MiB per GPU (GPU0, GPU1; host RAM not checked)"),
        "{text}"
    );
    assert!(
        text.contains("largest context     256 with -ngl -1 (all 3 layer slots on the GPUs)"),
        "{text}"
    );
    assert!(
        text.contains("most GPU layers     -ngl 3 of 3 layer slots, at -c 256"),
        "{text}"
    );
    // Nothing fits: what the smallest context needs, and where.
    let text = stdout(&estimate(&["-ts", "1", "--fit", "1K"]));
    assert!(
        text.contains("none fits with -ngl -1") && text.contains("-c 256 already needs"),
        "{text}"
    );
}

#[test]
fn a_context_past_the_training_context_warns() {
    let out = estimate(&["-c", "1000"]);
    stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: 1024 cells per sequence exceed the model's training context of 256"),
        "{err}"
    );
    let out = estimate(&["-c", "1000", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["context"]["exceeds_training_context"], true);
    assert_eq!(doc["context"]["n_ctx_train"], 256);
    // At the training context: no warning.
    let out = estimate(&["-c", "256"]);
    stdout(&out);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
