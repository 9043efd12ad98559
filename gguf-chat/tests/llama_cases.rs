//! llama.cpp's own chat-template cases, as data (`tests/data/chat/`, see its README): the
//! engine cases of test-jinja.cpp, the prompts of test-chat-template.cpp, and
//! test-chat-template's output for each of llama.cpp's 71 real templates on our
//! conversations. Each known difference is listed below with its reason.

use std::path::{Path, PathBuf};

use gguf_chat::{ChatTemplate, Conversation, Error, RenderOptions};
use serde_json::Value as Json;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/chat")
}

fn load(name: &str) -> Json {
    let p = data().join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
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
            Ok(g) if g == want => equal += 1,
            other => {
                if !ENGINE_EXCEPTIONS.iter().any(|(n, _)| *n == name) {
                    failures.push(format!("{name}: template {:?}\n  want {want:?}\n  got  {other:?}", c["template"]));
                }
            }
        }
    }
    println!("engine cases: {equal}/{} equal ({} listed exceptions)", cases.len(), ENGINE_EXCEPTIONS.len());
    assert!(failures.is_empty(), "{} unexpected differences:\n{}", failures.len(), failures.join("\n"));
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
            other => failures.push(format!("{name}:\n  want {want:?}\n  got  {:?}", other.map(|r| r.text))),
        }
    }
    println!("chat-template cases: {equal}/{} equal", cases.len());
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
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
                (stem, serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap())
            })
            .collect()
    };
    let mut dir: Vec<_> = std::fs::read_dir(data().join("goldens")).unwrap().map(|e| e.unwrap().path()).collect();
    dir.sort();
    let (mut total, mut equal) = (0, 0);
    let mut failures = Vec::new();
    for path in dir {
        let g: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let tname = g["template"].as_str().unwrap();
        let source = std::fs::read_to_string(data().join("templates").join(tname)).unwrap();
        let tmpl = ChatTemplate::new(&source, g["bos_token"].as_str().unwrap(), g["eos_token"].as_str().unwrap());
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
            } else if !GOLDEN_EXCEPTIONS.iter().any(|(t, c, _)| *t == tname && *c == cname) {
                failures.push(format!(
                    "{tname} × {cname}:\n  want {:?}\n  got  {:?}",
                    case.get("expected").or(case.get("error")),
                    got.map(|r| r.text)
                ));
            }
        }
        println!("{tname}: {t_eq}/{t_n}");
    }
    println!("real templates: {equal}/{total} prompts equal ({} listed exceptions)", GOLDEN_EXCEPTIONS.len());
    assert!(failures.is_empty(), "{} unexpected differences:\n{}", failures.len(), failures.join("\n\n"));
}
