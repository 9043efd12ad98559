//! llama.cpp's own tokenizer tests (`test-tokenizer-0`): vocab-only GGUF
//! files with inputs (`.gguf.inp`, cases separated by
//! `\n__ggml_vocab_test__\n`) and the ids llama.cpp gives them (`.gguf.out`,
//! one line per case, no special tokens added or parsed).
//!
//! The files ship with the llama.cpp that llama-cpp-python 0.3.36 vendors
//! (`vendor/llama.cpp/models/` of its sdist, 80 MB): opt-in with
//! `GGUF_LLAMA_VOCABS` naming that directory. Small goldens of our own
//! (`tests/data/tokenizer/`) run always.

use std::path::{Path, PathBuf};

use gguf::tokenizer::Tokenizer;
use gguf::GgufFile;

/// The cases of one vocabulary: (input, expected ids).
pub fn read_cases(inp: &Path, out: &Path) -> Vec<(String, Vec<u32>)> {
    let raw = std::fs::read_to_string(inp).unwrap();
    let expected = std::fs::read_to_string(out).unwrap();
    let sep = "\n__ggml_vocab_test__\n";
    let mut inputs = Vec::new();
    let mut pos = 0;
    while pos < raw.len() {
        match raw[pos..].find(sep) {
            Some(i) => {
                inputs.push(raw[pos..pos + i].to_owned());
                pos += i + sep.len();
            }
            None => {
                inputs.push(raw[pos..].to_owned());
                break;
            }
        }
    }
    let outputs: Vec<Vec<u32>> = expected
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(
        inputs.len(),
        outputs.len(),
        "{}: inputs and outputs differ in count",
        inp.display()
    );
    inputs.into_iter().zip(outputs).collect()
}

/// Runs every case of `vocab` (a `.gguf` with `.inp` / `.out` beside it);
/// returns (equal, total) and prints each difference.
pub fn run_vocab(vocab: &Path) -> (usize, usize) {
    let inp = PathBuf::from(format!("{}.inp", vocab.display()));
    let out = PathBuf::from(format!("{}.out", vocab.display()));
    let cases = read_cases(&inp, &out);
    let file = GgufFile::open(vocab).unwrap();
    let tok = match Tokenizer::from_model(&file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: not built: {e}", vocab.display());
            return (0, cases.len());
        }
    };
    let mut equal = 0;
    for (text, want) in &cases {
        let got = match tok.encode(text, false, false) {
            Ok(ids) => ids,
            Err(e) => {
                eprintln!("{}: {text:?}: {e}", vocab.display());
                continue;
            }
        };
        if &got == want {
            equal += 1;
        } else {
            eprintln!(
                "{}: {text:?}\n  want {want:?}\n  got  {got:?}",
                vocab.display()
            );
        }
    }
    (equal, cases.len())
}

/// Every vocabulary of llama.cpp's test set gives llama.cpp's ids (opt-in).
#[test]
fn llama_cpp_vocab_tests() {
    let Ok(dir) = std::env::var("GGUF_LLAMA_VOCABS") else {
        eprintln!(
            "skipped: set GGUF_LLAMA_VOCABS to llama.cpp's models/ directory (ggml-vocab-*.gguf)"
        );
        return;
    };
    let mut vocabs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("ggml-vocab-")
                && name.ends_with(".gguf")
                && Path::new(&format!("{}.out", p.display())).exists()
        })
        .collect();
    vocabs.sort();
    assert!(
        !vocabs.is_empty(),
        "no ggml-vocab-*.gguf with .out files in {dir}"
    );
    let mut failed = Vec::new();
    for v in &vocabs {
        let (equal, total) = run_vocab(v);
        let name = v.file_name().unwrap().to_string_lossy().into_owned();
        eprintln!("{name}: {equal}/{total}");
        if equal != total {
            failed.push(name);
        }
    }
    assert!(
        failed.is_empty(),
        "vocabularies with differences: {failed:?}"
    );
}

/// The committed goldens (`tests/data/tokenizer/`, made by
/// `tests/oracles/tokenizer_goldens.py` with llama.cpp's llama-tokenize):
/// small vocabularies cut from llama.cpp's test set, one per code path,
/// each with llama.cpp's ids for its test inputs and adversarial text, with
/// no special tokens and with them added (the model's add_bos rule) and
/// parsed.
#[test]
fn committed_goldens_match_llama_cpp() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tokenizer");
    let mut goldens: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    goldens.sort();
    assert!(goldens.len() >= 6, "goldens missing in {}", dir.display());
    let mut failures = Vec::new();
    for g in &goldens {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(g).unwrap()).unwrap();
        let vocab = dir.join(doc["vocab"].as_str().unwrap());
        let file = GgufFile::open(&vocab).unwrap();
        let tok = Tokenizer::from_model(&file).unwrap();
        let cases = doc["cases"].as_array().unwrap();
        let mut equal = 0;
        for case in cases {
            let text = case["text"].as_str().unwrap();
            let ids = |key: &str| -> Vec<u32> {
                case[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap() as u32)
                    .collect()
            };
            let plain = tok.encode(text, false, false).unwrap();
            let special = tok.encode(text, tok.flags().add_bos, true).unwrap();
            if plain == ids("plain") && special == ids("special") {
                equal += 1;
            } else {
                failures.push(format!(
                    "{}: {text:?}\n  want {:?} / {:?}\n  got  {plain:?} / {special:?}",
                    vocab.display(),
                    ids("plain"),
                    ids("special")
                ));
            }
        }
        eprintln!(
            "{}: {equal}/{}",
            g.file_name().unwrap().to_string_lossy(),
            cases.len()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
