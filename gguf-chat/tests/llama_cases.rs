//! llama.cpp's own chat-template cases, as data (`tests/data/chat/`, see its README): the
//! engine cases of test-jinja.cpp, the prompts of test-chat-template.cpp, and
//! test-chat-template's output for each of llama.cpp's 70 real templates on our
//! conversations. Each known difference is listed below with its reason.

use std::path::{Path, PathBuf};

use gguf_chat::{ChatTemplate, Conversation, Error, RenderOptions};
use serde_json::Value as Json;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/chat")
}

fn load(name: &str) -> Json {
    let p = data().join(name);
    serde_json::from_str(
        &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

fn opts_on(date: &str) -> RenderOptions {
    let mut it = date.split('-').map(|p| p.parse::<i64>().unwrap());
    let (y, m, d) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    RenderOptions::new().on_day(y, m as u32, d as u32)
}

/// Engine cases llama.cpp's engine renders differently from ours, with the reason.
const ENGINE_EXCEPTIONS: &[(&str, &str)] = &[];

#[test]
fn engine_cases() {
    let cases = load("jinja_cases.json");
    let cases = cases.as_array().unwrap();
    let mut equal = 0;
    let mut failures = Vec::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let got = ChatTemplate::new(c["template"].as_str().unwrap(), "", "")
            .and_then(|t| t.render_vars(c["vars"].as_object().unwrap(), &RenderOptions::new()));
        let want = c["expected"].as_str().unwrap();
        match got {
            Ok(g) if g == want => {
                equal += 1;
                if ENGINE_EXCEPTIONS.iter().any(|(n, _)| *n == name) {
                    failures.push(format!("{name} is listed as a difference but is equal now"));
                }
            }
            other => {
                if !ENGINE_EXCEPTIONS.iter().any(|(n, _)| *n == name) {
                    failures.push(format!(
                        "{name}: template {:?}\n  want {want:?}\n  got  {other:?}",
                        c["template"]
                    ));
                }
            }
        }
    }
    println!(
        "engine cases: {equal}/{} equal ({} listed exceptions)",
        cases.len(),
        ENGINE_EXCEPTIONS.len()
    );
    assert!(
        failures.is_empty(),
        "{} unexpected differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn conversation_of(messages: &Json) -> Conversation {
    Conversation::from_json(messages).unwrap()
}

#[test]
fn chat_template_cases() {
    let cases = load("chat_template_cases.json");
    let cases = cases.as_array().unwrap();
    let mut equal = 0;
    let mut failures = Vec::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let conv = conversation_of(&c["messages"]);
        let got = ChatTemplate::new(
            c["template"].as_str().unwrap(),
            c["bos_token"].as_str().unwrap(),
            c["eos_token"].as_str().unwrap(),
        )
        .and_then(|t| t.render(&conv, &RenderOptions::new()));
        let want = c["expected"].as_str().unwrap();
        match got {
            Ok(g) if g.text == want => equal += 1,
            other => failures.push(format!(
                "{name}:\n  want {want:?}\n  got  {:?}",
                other.map(|r| r.text)
            )),
        }
    }
    println!("chat-template cases: {equal}/{} equal", cases.len());
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// (template, conversation) pairs where our prompt differs from llama.cpp's, with the reason.
const GOLDEN_EXCEPTIONS: &[(&str, &str, &str)] = &[];

#[test]
fn real_templates() {
    let convs: Vec<(String, Json)> = {
        let mut v: Vec<_> = std::fs::read_dir(data().join("conversations"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v.into_iter()
            .map(|p| {
                let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
                (
                    stem,
                    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap(),
                )
            })
            .collect()
    };
    let mut dir: Vec<_> = std::fs::read_dir(data().join("goldens"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dir.sort();
    let (mut total, mut equal) = (0, 0);
    let mut failures = Vec::new();
    for path in dir {
        let g: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let tname = g["template"].as_str().unwrap();
        let source = std::fs::read_to_string(data().join("templates").join(tname)).unwrap();
        let tmpl = ChatTemplate::new(
            &source,
            g["bos_token"].as_str().unwrap(),
            g["eos_token"].as_str().unwrap(),
        );
        let opts = opts_on(g["date"].as_str().unwrap());
        let (mut t_eq, mut t_n) = (0, 0);
        for case in g["cases"].as_array().unwrap() {
            let cname = case["conversation"].as_str().unwrap();
            let conv = conversation_of(&convs.iter().find(|(n, _)| n == cname).unwrap().1);
            total += 1;
            t_n += 1;
            let got = match &tmpl {
                Ok(t) => t.render(&conv, &opts),
                Err(e) => Err(Error::Model(e.to_string())),
            };
            let ok = match (&got, case.get("expected")) {
                (Ok(r), Some(want)) => r.text == want.as_str().unwrap(),
                (Err(Error::Raised { .. }), None) => true,
                _ => false,
            };
            if ok {
                equal += 1;
                t_eq += 1;
                if GOLDEN_EXCEPTIONS
                    .iter()
                    .any(|(t, c, _)| *t == tname && *c == cname)
                {
                    failures.push(format!(
                        "{tname} × {cname} is listed as a difference but is equal now"
                    ));
                }
            } else if !GOLDEN_EXCEPTIONS
                .iter()
                .any(|(t, c, _)| *t == tname && *c == cname)
            {
                failures.push(format!(
                    "{tname} × {cname}:\n  want {:?}\n  got  {:?}",
                    case.get("expected").or(case.get("error")),
                    got.map(|r| r.text)
                ));
            }
        }
        println!("{tname}: {t_eq}/{t_n}");
    }
    println!(
        "real templates: {equal}/{total} prompts equal ({} listed exceptions)",
        GOLDEN_EXCEPTIONS.len()
    );
    assert!(
        failures.is_empty(),
        "{} unexpected differences:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// test-chat.cpp's generation prompts: the prompt of a system and a user message ends with the
/// template's generation prompt, which is what the prompt with it adds to the prompt without it
/// (llama.cpp's `common_chat_template_generation_prompt`).
#[test]
fn generation_prompts() {
    let cases = load("generation_prompt_cases.json");
    let cases = cases.as_array().unwrap();
    let mut equal = 0;
    let mut failures = Vec::new();
    for c in cases {
        let name = c["template"].as_str().unwrap();
        let source = std::fs::read_to_string(data().join("templates").join(name)).unwrap();
        let t = ChatTemplate::new(&source, "<s>", "</s>").unwrap();
        let conv = conversation_of(&c["messages"]);
        let mut without = RenderOptions::new();
        without.add_generation_prompt = false;
        let with = t.render(&conv, &RenderOptions::new()).unwrap().text;
        let without = t.render(&conv, &without).unwrap().text;
        let mut common = with
            .bytes()
            .zip(without.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        while !with.is_char_boundary(common) {
            common -= 1;
        }
        let want = c["generation_prompt"].as_str().unwrap();
        if with.ends_with(want) && &with[common..] == want {
            equal += 1;
        } else {
            failures.push(format!(
                "{name}: want {want:?}, prompt ends {:?}",
                &with[with.len().saturating_sub(60)..]
            ));
        }
    }
    println!("generation prompts: {equal}/{} equal", cases.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// On every real template, the user's special-token lookalikes (the `unicode` conversation)
/// are inside the prompt's input ranges wherever the prompt holds them, and no input range
/// covers template text that the same prompt holds outside the user's message.
#[test]
fn user_special_tokens_are_marked_on_every_template() {
    let conv: Json = load("conversations/unicode.json");
    let evil = conv["messages"][2]["content"].as_str().unwrap().to_string();
    let conv = conversation_of(&conv);
    let mut dir: Vec<_> = std::fs::read_dir(data().join("templates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dir.sort();
    let (mut checked, mut missed) = (0, Vec::new());
    for p in dir {
        let Ok(t) = ChatTemplate::new(&std::fs::read_to_string(&p).unwrap(), "<s>", "</s>") else {
            continue;
        };
        let Ok(r) = t.render(&conv, &RenderOptions::new()) else {
            continue;
        };
        let mut probes = vec![evil.as_str(), evil.trim()];
        probes.dedup();
        for probe in probes {
            for (at, _) in r.text.match_indices(probe) {
                checked += 1;
                let covered = r
                    .input_ranges()
                    .iter()
                    .any(|x| x.start <= at && at + probe.len() <= x.end);
                if !covered {
                    missed.push(p.file_name().unwrap().to_string_lossy().into_owned());
                }
            }
        }
    }
    println!(
        "special-token lookalikes marked: {}/{checked}",
        checked - missed.len()
    );
    assert!(missed.is_empty(), "unmarked in {missed:?}");
}
