//! Differential tests against llama.cpp itself, through llama-cpp-python
//! 0.3.36 (`Llama(path, vocab_only=True)` and its C functions,
//! `tests/oracles/llama_tokenizer.py`). Opt-in: `GGUF_LLAMA_TOOLS` names
//! the llama tools directory, whose `venv/bin/python` has llama-cpp-python
//! (or `GGUF_LLAMA_PYTHON` names such an interpreter); the models come from
//! `GGUF_LLAMA_VOCABS` (llama.cpp's `models/` directory) and
//! `GGUF_GEMMA_MODEL`, plus the committed Unigram vocabulary.
//!
//! For each vocabulary and each text (random and adversarial: every
//! script, emoji with joiners, control characters, runs of spaces and
//! newlines, code, special-token lookalikes): the ids with special tokens
//! neither added nor parsed, parsed only, added only, and both; the bytes
//! of `llama_detokenize` for the plain ids, and for the added-and-parsed
//! ids with special tokens removed and written out; and every token's
//! piece (`llama_token_to_piece`, special tokens written out).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gguf::tokenizer::Tokenizer;
use gguf::write::Builder;
use gguf::GgufFile;

use super::tokenize_cli::random_text;
use super::util::Rng;

/// The interpreter with llama-cpp-python, if the comparison is asked for.
pub(super) fn oracle_python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GGUF_LLAMA_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let tools = PathBuf::from(std::env::var_os("GGUF_LLAMA_TOOLS")?);
    let python = tools.join("venv/bin/python");
    python.exists().then_some(python)
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// llama.cpp's answers for `texts` with `model`.
pub(super) fn ask(
    python: &Path,
    model: &Path,
    texts: &[String],
    pieces: bool,
) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracles/llama_tokenizer.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let req = serde_json::json!({"model": model, "texts": texts, "pieces": pieces});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "llama_tokenizer.py on {}: {}",
        model.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Text that has broken tokenizers: each alone, plus random mixes of them.
const ADVERSARIAL: &[&str] = &[
    "",
    " ",
    "  ",
    "\n",
    "\n\n\n\n",
    "\r\n\r\n",
    "\t\t\t",
    " \n \n ",
    "\u{a0}\u{3000}\u{2009}\u{85}\u{2028}",
    "\u{0}\u{1}\u{2}\u{1b}[0m\u{7f}\u{9f}",
    "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}",
    "\u{1F44D}\u{1F3FD}\u{2764}\u{FE0F}\u{1F1FA}\u{1F1F8}\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
    "e\u{301}\u{301}\u{301} a\u{308} \u{915}\u{94D}\u{937}\u{93F} \u{E01}\u{E49}\u{E33}",
    "Ελληνικά Русский עברית العربية हिन्दी ไทย 日本語 中文 한국어 ქართული አማርኛ ᏣᎳᎩ",
    "汉字和かなとカタカナと한글1234567890１２３",
    "1 12 123 1234 12345 123456 1234567 12345678 3.14159 1,000,000 ١٢٣ ๑๒๓",
    "fn main() {\n    let x = vec![1, 2, 3];\n    println!(\"{x:?}\");\n}\n",
    "def f(x):\n\treturn x ** 2  # comment\n\n\n",
    "<s></s><unk><pad><mask>[CLS][SEP][MASK][UNK][PAD]<|endoftext|><|im_start|><|im_end|>",
    "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "<s <s> s> <</s>> <|endoftext <|endoftext|",
    "HELLO'S it's I'M we'RE they've I'D I'LL 'tis ''quoted''",
    "camelCaseWords XMLHttpRequest snake_case SCREAMING_CASE kebab-case",
    "\u{2581}\u{2581}x \u{2581} already\u{2581}escaped",
    "\u{FFFD}\u{FEFF}\u{200B}\u{200C}\u{200D}\u{2060}",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛 \u{10FFFD}\u{E000}\u{F8FF}",
    "Ｆｕｌｌｗｉｄｔｈ ｶﾀｶﾅ ﬁ ﬂ ① ™ ½",
    // Assigned by Unicode 16.0, after llama.cpp's table: unassigned to it.
    "Unicode 16: \u{13460}x\u{1CC00}\u{A7CB}\u{A7DC}\u{897}\u{10D50}\u{10D70}<\u{16D40}>",
];

fn texts(cases: usize) -> Vec<String> {
    let mut out: Vec<String> = ADVERSARIAL.iter().map(|s| s.to_string()).collect();
    let mut long = String::new();
    for s in ADVERSARIAL {
        long.push_str(s);
    }
    out.push(long);
    out.push(" ".repeat(300));
    out.push("\n".repeat(100));
    out.push("a".repeat(1000));
    let mut rng = Rng(0x000A_11CE);
    for i in 0..cases {
        let mut t = random_text(&mut rng, 1 + (i * 7) % 80);
        if i % 3 == 0 {
            t.push_str(ADVERSARIAL[rng.below(ADVERSARIAL.len() as u64) as usize]);
        }
        out.push(t);
    }
    out
}

/// Counts of equal answers for one vocabulary.
#[derive(Default)]
struct Tally {
    ids: (usize, usize),
    decoded: (usize, usize),
    pieces: (usize, usize),
    failures: Vec<String>,
}

fn check(tok: &Tokenizer, texts: &[String], answer: &serde_json::Value, name: &str) -> Tally {
    let mut t = Tally::default();
    let ids = |v: &serde_json::Value| -> Vec<u32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect()
    };
    for (text, case) in texts.iter().zip(answer["cases"].as_array().unwrap()) {
        for (key, add, parse) in [
            ("plain", false, false),
            ("parsed", false, true),
            ("added", true, false),
            ("both", true, true),
        ] {
            let ours = tok.encode(text, add, parse).unwrap();
            let theirs = ids(&case[key]);
            t.ids.1 += 1;
            if ours == theirs {
                t.ids.0 += 1;
            } else {
                t.failures.push(format!(
                    "{name} {key}: {text:?}\n  llama {theirs:?}\n  ours  {ours:?}"
                ));
            }
        }
        for (key, ids_key, remove, unparse) in [
            ("decoded", "plain", false, false),
            ("decoded_both", "both", true, true),
        ] {
            let ours = tok.decode(&ids(&case[ids_key]), remove, unparse).unwrap();
            let theirs = unhex(case[key].as_str().unwrap());
            t.decoded.1 += 1;
            if ours == theirs {
                t.decoded.0 += 1;
            } else {
                t.failures.push(format!(
                    "{name} {key}: {text:?}\n  llama {:?}\n  ours  {:?}",
                    String::from_utf8_lossy(&theirs),
                    String::from_utf8_lossy(&ours)
                ));
            }
        }
    }
    if let Some(pieces) = answer.get("pieces").and_then(|p| p.as_array()) {
        for (id, hex) in pieces.iter().enumerate() {
            let ours = tok.token_to_piece(id as u32, true).unwrap();
            let theirs = unhex(hex.as_str().unwrap());
            t.pieces.1 += 1;
            if *ours == theirs[..] {
                t.pieces.0 += 1;
            } else {
                t.failures.push(format!(
                    "{name} piece {id}: llama {:?} ours {:?}",
                    String::from_utf8_lossy(&theirs),
                    String::from_utf8_lossy(&ours)
                ));
            }
        }
    }
    t
}

fn n_cases() -> usize {
    std::env::var("GGUF_TOKENIZE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

fn report(results: &[(String, Tally)]) {
    let mut failures = Vec::new();
    for (name, t) in results {
        eprintln!(
            "{name}: ids {}/{}, decoded {}/{}, pieces {}/{}",
            t.ids.0, t.ids.1, t.decoded.0, t.decoded.1, t.pieces.0, t.pieces.1
        );
        failures.extend(t.failures.iter().take(5).cloned());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `.gguf` files of `dir` (llama.cpp's `models/`: its `ggml-vocab-*.gguf`), in name order.
pub(super) fn vocab_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gguf"))
        .collect();
    v.sort();
    v
}

/// Every vocabulary of llama.cpp's test set, Gemma 3 and the committed
/// Unigram vocabulary against llama.cpp (opt-in, see the module docs;
/// `GGUF_TOKENIZE_CASES` random texts each, 200 by default).
#[test]
fn every_vocab_matches_llama_cpp() {
    let Some(python) = oracle_python() else {
        eprintln!("skipped: set GGUF_LLAMA_TOOLS (with venv/bin/python holding llama-cpp-python) to compare with llama.cpp");
        return;
    };
    let mut models: Vec<PathBuf> =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tokenizer/ugm.gguf")];
    if let Some(m) = std::env::var_os("GGUF_GEMMA_MODEL") {
        models.push(m.into());
    }
    if let Ok(dir) = std::env::var("GGUF_LLAMA_VOCABS") {
        models.extend(vocab_files(Path::new(&dir)));
    }
    if let Ok(filter) = std::env::var("GGUF_ORACLE_FILTER") {
        models.retain(|m| {
            let m = m.display().to_string();
            filter.split(',').any(|f| m.contains(f))
        });
    }
    let texts = texts(n_cases());
    let mut results = Vec::new();
    for model in &models {
        let name = model.file_name().unwrap().to_string_lossy().into_owned();
        let tok = match Tokenizer::from_model(&GgufFile::open(model).unwrap()) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{name}: not compared: {e}");
                continue;
            }
        };
        let answer = ask(&python, model, &texts, true);
        results.push((name.clone(), check(&tok, &texts, &answer, &name)));
    }
    report(&results);
}

/// The pre-tokenizer names llama.cpp's loader accepts, read from its
/// source next to its `models/` directory.
fn llama_cpp_pre_names(models_dir: &Path) -> Vec<String> {
    let src = std::fs::read_to_string(models_dir.join("../src/llama-vocab.cpp")).unwrap();
    let mut names: Vec<String> = src
        .match_indices("tokenizer_pre == \"")
        .map(|(i, m)| {
            let rest = &src[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Pre-tokenizers llama.cpp splits with code of its own (hand-written
/// scanners, empty-match lookaheads), proved on llama.cpp's Llama 3
/// vocabulary rewritten by our Builder with each name (opt-in as above,
/// with `GGUF_LLAMA_VOCABS`); `GGUF_PRE_NAMES=all` runs every name
/// llama.cpp's loader accepts.
#[test]
fn pre_tokenizers_match_llama_cpp() {
    let (Some(python), Ok(dir)) = (oracle_python(), std::env::var("GGUF_LLAMA_VOCABS")) else {
        eprintln!("skipped: set GGUF_LLAMA_TOOLS and GGUF_LLAMA_VOCABS to compare pre-tokenizers with llama.cpp");
        return;
    };
    let dir = PathBuf::from(dir);
    let names: Vec<String> = match std::env::var("GGUF_PRE_NAMES").as_deref() {
        Ok("all") => llama_cpp_pre_names(&dir),
        Ok(list) => list.split(',').map(str::to_owned).collect(),
        Err(_) => ["superbpe", "kimi-k2", "afmoe", "tiny_aya", "cohere2moe"]
            .map(String::from)
            .to_vec(),
    };
    let base = dir.join("ggml-vocab-llama-bpe.gguf");
    let source = GgufFile::open(&base).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut texts = texts(n_cases() / 2);
    // What these pre-tokenizers single out: digit runs, Han next to other
    // letters, contractions after letters.
    texts.extend(
        [
            "1 22 333 4444 55555 666666 7777777 abc123456def 12a345",
            "中文English混合テキスト中文's 漢字123漢字",
            "x1234567y 00000000000 9,999,999.99",
            "Kimi's 月之暗面 isn't WE'LL 日本's",
        ]
        .map(String::from),
    );
    let mut results = Vec::new();
    for name in &names {
        if name == "whitespace" {
            // llama.cpp aborts (GGML_ASSERT in its merge lookup) when this
            // pre-tokenizer's words, which keep their spaces, meet a
            // byte-level vocabulary's merges: nothing to compare with.
            eprintln!("{name}: skipped: llama.cpp asserts on it with a byte-level vocabulary");
            continue;
        }
        let path = tmp.path().join(format!("{name}.gguf"));
        let mut b = Builder::from_file(&source).unwrap();
        b.set("tokenizer.ggml.pre", name.as_str()).unwrap();
        b.write_to_path(&path).unwrap();
        let tok = match Tokenizer::from_model(&GgufFile::open(&path).unwrap()) {
            Ok(t) => t,
            Err(e) => {
                results.push((
                    name.clone(),
                    Tally {
                        failures: vec![format!("{name}: not built: {e}")],
                        ..Tally::default()
                    },
                ));
                continue;
            }
        };
        assert_eq!(
            tok.pre_name(),
            Some(name.as_str()),
            "the rewrite kept the name"
        );
        let answer = ask(&python, &path, &texts, false);
        results.push((name.clone(), check(&tok, &texts, &answer, name)));
        std::fs::remove_file(&path).unwrap();
    }
    report(&results);
}
