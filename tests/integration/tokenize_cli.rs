//! `gguf tokenize`: llama-tokenize's flags and output, on the committed
//! golden vocabularies; and, opt-in, llama-tokenize itself on random text
//! with the bundled Gemma 3 model and llama.cpp's test vocabularies.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gguf::tokenizer::Tokenizer;
use gguf::GgufFile;

use super::util::{gguf, stdout, Rng};

fn golden(name: &str) -> String {
    format!(
        "{}/tests/data/tokenizer/{name}.gguf",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn ids_listing_and_count() {
    let model = golden("llama-spm");
    let tok = Tokenizer::from_model(&GgufFile::open(&model).unwrap()).unwrap();
    let want = tok.encode("Hello world", true, true).unwrap();
    assert_eq!(want[0], 1, "BOS first: the model adds it");

    let ids = stdout(&gguf(&["tokenize", &model, "-p", "Hello world", "--ids"]));
    let list: Vec<String> = want.iter().map(u32::to_string).collect();
    assert_eq!(ids, format!("[{}]\n", list.join(", ")));

    let listing = stdout(&gguf(&[
        "tokenize",
        &model,
        "-p",
        "Hello world",
        "--show-count",
    ]));
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), want.len() + 1);
    assert_eq!(lines[0], "     1 -> '<s>'");
    assert_eq!(
        *lines.last().unwrap(),
        format!("Total number of tokens: {}", want.len())
    );

    // --no-bos: no special tokens at all; -m as llama-tokenize takes it.
    let plain = tok.encode("Hello world", false, true).unwrap();
    let ids = stdout(&gguf(&[
        "tokenize",
        "-m",
        &model,
        "-p",
        "Hello world",
        "--ids",
        "--no-bos",
    ]));
    let list: Vec<String> = plain.iter().map(u32::to_string).collect();
    assert_eq!(ids, format!("[{}]\n", list.join(", ")));
}

#[test]
fn stdin_ids_is_one_line_and_empty_is_brackets() {
    let model = golden("gpt-2");
    let run = |input: &[u8]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gguf"))
            .args(["tokenize", &model, "--stdin", "--ids"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        stdout(&child.wait_with_output().unwrap())
    };
    assert_eq!(run(b""), "[]\n");
    let out = run(b"line one\nline two\n");
    assert_eq!(out.lines().count(), 1);
    assert!(out.starts_with('[') && out.ends_with("]\n"));
}

#[test]
fn escapes_special_parsing_and_json() {
    let model = golden("llama-bpe");
    let tok = Tokenizer::from_model(&GgufFile::open(&model).unwrap()).unwrap();
    let bos = tok.specials().bos.unwrap();
    let bos_text = tok.token(bos).unwrap().text.clone();
    let text = format!("{bos_text}a\\nb");

    // Escapes processed (default) and the BOS text parsed as the BOS id.
    let out = stdout(&gguf(&[
        "tokenize", &model, "-p", &text, "--ids", "--no-bos",
    ]));
    let want = tok.encode(&format!("{bos_text}a\nb"), false, true).unwrap();
    assert_eq!(want[0], bos);
    let list: Vec<String> = want.iter().map(u32::to_string).collect();
    assert_eq!(out, format!("[{}]\n", list.join(", ")));

    // --no-parse-special --no-escape: the text as it is, BOS text as text.
    let out = stdout(&gguf(&[
        "tokenize",
        &model,
        "-p",
        &text,
        "--ids",
        "--no-bos",
        "--no-parse-special",
        "--no-escape",
    ]));
    let want = tok.encode(&text, false, false).unwrap();
    assert_ne!(want[0], bos);
    let list: Vec<String> = want.iter().map(u32::to_string).collect();
    assert_eq!(out, format!("[{}]\n", list.join(", ")));

    let json = stdout(&gguf(&["tokenize", &model, "-p", "Hello world", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ids = tok
        .encode("Hello world", tok.flags().add_bos, true)
        .unwrap();
    assert_eq!(doc["count"], ids.len());
    assert_eq!(doc["ids"], serde_json::json!(ids));
    assert_eq!(doc["vocab_type"], "BPE");
    assert_eq!(doc["pre"], "llama-bpe");
    let pieces: Vec<&str> = doc["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(pieces[0], bos_text);
    assert_eq!(pieces[1..].concat(), "Hello world");
}

#[test]
fn unsupported_vocabulary_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rwkv.gguf");
    let mut b = gguf::write::Builder::new();
    b.set("general.architecture", "rwkv6").unwrap();
    b.set("tokenizer.ggml.model", "rwkv").unwrap();
    b.write_to_path(&path).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gguf"))
        .arg("tokenize")
        .arg(&path)
        .args(["-p", "x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tokenizer model \"rwkv\" is not supported"),
        "{err}"
    );
}

/// Random text from every script, emoji with joiners, controls, runs of
/// spaces and newlines, code and special-token lookalikes.
pub fn random_text(rng: &mut Rng, pieces: usize) -> String {
    const SNIPPETS: &[&str] = &[
        "Hello",
        " world",
        "'s",
        "'LL",
        " I'm",
        "\n",
        "\n\n",
        "   ",
        "\t",
        "\r\n",
        "  \n ",
        "123",
        "4567890",
        "3.14",
        "_",
        "->",
        "==",
        "{}",
        "();",
        "fn main()",
        "<s>",
        "</s>",
        "<|endoftext|>",
        "<start_of_turn>",
        "<end_of_turn>",
        "<bos>",
        "<|im_start|>",
        "<unk>",
        "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}",
        "\u{1F44D}\u{1F3FD}",
        "\u{2764}\u{FE0F}",
        "\u{1F1EB}\u{1F1F7}",
        "\u{1}",
        "\u{1b}[0m",
        "\u{7f}",
        "\u{a0}",
        "\u{3000}",
        "\u{85}",
        "\u{2028}",
        "\u{200B}",
        "e\u{301}",
        "Ελληνικά",
        "Русский",
        "עברית",
        "العربية",
        "हिन्दी",
        "ไทย",
        "日本語",
        "中文",
        "한국어",
        "ქართული",
        "Ünïcödé",
        "ß",
        "ǅ",
        "\u{2581}",
        "\u{FFFD}",
        "𝔘𝔫𝔦",
        "\u{10FFFD}",
        "\u{E000}",
    ];
    let mut s = String::new();
    for _ in 0..pieces {
        match rng.below(4) {
            0 => {
                // A random code point from a random plane region.
                let c = loop {
                    let cpt = match rng.below(3) {
                        0 => 0x20 + rng.below(0x60) as u32,
                        1 => rng.below(0x3000) as u32,
                        _ => rng.below(0x30000) as u32,
                    };
                    if let Some(c) = char::from_u32(cpt).filter(|&c| c != '\0') {
                        break c;
                    }
                };
                s.push(c);
            }
            _ => s.push_str(SNIPPETS[rng.below(SNIPPETS.len() as u64) as usize]),
        }
    }
    s
}

fn llama_tokenize_bin() -> Option<PathBuf> {
    let tools = PathBuf::from(std::env::var_os("GGUF_LLAMA_TOOLS")?);
    [
        tools.join("bin/llama-tokenize"),
        tools.join("llama-tokenize"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

/// llama-tokenize's ids for `text` (read from a file, no escapes).
fn llama_ids(bin: &Path, model: &str, text: &str, special: bool) -> Vec<u32> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, text).unwrap();
    let mut cmd = Command::new(bin);
    cmd.args(["-m", model, "--ids", "--no-escape", "--log-disable", "-f"])
        .arg(&input);
    if !special {
        cmd.args(["--no-bos", "--no-parse-special"]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let line = stdout.lines().rfind(|l| l.starts_with('[')).unwrap();
    serde_json::from_str(line).unwrap()
}

/// Opt-in (`GGUF_LLAMA_TOOLS`, and `GGUF_GEMMA_MODEL` and/or
/// `GGUF_LLAMA_VOCABS`): random text (fixed seed) tokenized by us and by
/// llama-tokenize, with and without special tokens added and parsed.
#[test]
fn random_text_matches_llama_tokenize() {
    let Some(bin) = llama_tokenize_bin() else {
        eprintln!(
            "skipped: set GGUF_LLAMA_TOOLS (with bin/llama-tokenize) to compare with llama.cpp"
        );
        return;
    };
    let mut models: Vec<String> = std::env::var("GGUF_GEMMA_MODEL").ok().into_iter().collect();
    if let Ok(dir) = std::env::var("GGUF_LLAMA_VOCABS") {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "gguf"))
            .map(|p| p.display().to_string())
            .collect();
        v.sort();
        models.extend(v);
    }
    if models.is_empty() {
        eprintln!("skipped: set GGUF_GEMMA_MODEL or GGUF_LLAMA_VOCABS to name models to compare");
        return;
    }
    let cases: u64 = std::env::var("GGUF_TOKENIZE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let mut failures = Vec::new();
    for model in &models {
        let tok = match Tokenizer::from_model(&GgufFile::open(model).unwrap()) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{model}: not compared: {e}");
                continue;
            }
        };
        let mut rng = Rng(0x70C0 + cases);
        let mut equal = 0;
        for i in 0..cases {
            let text = random_text(&mut rng, 1 + (i as usize * 7) % 60);
            for special in [false, true] {
                let ours = tok
                    .encode(&text, special && tok.flags().add_bos, special)
                    .unwrap();
                let theirs = llama_ids(&bin, model, &text, special);
                if ours == theirs {
                    equal += 1;
                } else {
                    failures.push(format!(
                        "{model} special={special}: {text:?}\n  llama {theirs:?}\n  ours  {ours:?}"
                    ));
                }
            }
        }
        eprintln!("{model}: {equal}/{}", cases * 2);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `gguf check` warns when a GPT-2 vocabulary names no pre-tokenizer, and
/// says which; not when it names one.
#[test]
fn check_warns_about_a_missing_pre_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..50_256).map(|i| format!("t{i}")).collect();
    let mut tokens: Vec<&str> = names.iter().map(String::as_str).collect();
    tokens.push("<|endoftext|>");
    let write = |pre: Option<&str>, name: &str| {
        let path = dir.path().join(name);
        let mut b = gguf::write::Builder::new();
        b.set("general.architecture", "gpt2").unwrap();
        b.set("tokenizer.ggml.model", "gpt2").unwrap();
        if let Some(p) = pre {
            b.set("tokenizer.ggml.pre", p).unwrap();
        }
        b.set(
            "tokenizer.ggml.tokens",
            gguf::format::OwnedValue::from(tokens.clone()),
        )
        .unwrap();
        b.write_to_path(&path).unwrap();
        path
    };
    let json = |path: &Path| -> serde_json::Value {
        let out = Command::new(env!("CARGO_BIN_EXE_gguf"))
            .arg("check")
            .arg(path)
            .arg("--json")
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    for (pre, name) in [(None, "none.gguf"), (Some("default"), "default.gguf")] {
        let doc = json(&write(pre, name));
        let warning = doc["warnings"][0].as_str().unwrap_or_default().to_owned();
        assert!(warning.contains("tokenizer.ggml.pre gpt-2"), "{doc}");
        let text = Command::new(env!("CARGO_BIN_EXE_gguf"))
            .arg("check")
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&text.stdout).contains("warning: tokenizer.ggml.pre"));
    }
    let doc = json(&write(Some("gpt-2"), "named.gguf"));
    assert_eq!(doc["warnings"], serde_json::json!([]), "{doc}");
}
