//! The model card: `README.md`'s YAML front matter, read as gguf-py's
//! `Metadata.load_model_card` reads it.
//!
//! The front matter is the lines after a first line `---`, up to the next
//! line `---` (Python's line boundaries). Before parsing, the converter
//! quotes list items `- no` (YAML 1.1 would read Norway's code as false)
//! and turns tabs into two spaces; so does this module. A README without
//! front matter, or whose front matter is not a mapping, gives no card (the
//! converter logs the latter and goes on; we return a note). Front matter
//! that is not valid YAML is an error naming README.md, as the converter
//! stops there too.
//!
//! Known difference: PyYAML resolves plain scalars by YAML 1.1 (`yes`,
//! `on`, `off` are booleans, `0777` octal), yaml-rust2 by YAML 1.2's core
//! schema; a card whose metadata values are such words reads them as
//! strings here.

use std::path::Path;

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::{Yaml, YamlLoader};

use crate::error::Result;

use super::config::config_error;

/// A model card's front matter, or why there is none worth reading.
#[derive(Debug, Default)]
pub(crate) struct Card {
    /// The front matter's top-level mapping (empty when there is none).
    pub map: Map<String, Value>,
    /// Set when a card exists but was ignored, as the converter ignores it.
    pub note: Option<String>,
}

/// Reads `dir/README.md`'s front matter.
pub(crate) fn read(dir: &Path) -> Result<Card> {
    let file = dir.join("README.md");
    // A FIFO or device is not taken for no card: reading it is refused.
    if std::fs::metadata(&file).is_err() {
        return Ok(Card::default());
    }
    let bytes = gguf_core::read::read_capped(&file, gguf_core::read::MAX_TEXT_INPUT)?;
    let text = String::from_utf8(bytes)
        .map_err(|e| config_error(&file, format!("not UTF-8 ({e}), as the converter requires")))?;
    let Some(yaml) = front_matter(&text) else {
        return Ok(Card::default());
    };
    parse(&file, &yaml)
}

/// Python's `str.splitlines()`: the line boundaries it knows, `\r\n` as one.
fn py_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let boundary = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !boundary {
            continue;
        }
        lines.push(&text[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r'
            && let Some(&(j, '\n')) = chars.peek()
        {
            chars.next();
            end = j + 1;
        }
        start = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The YAML text the converter parses, or `None` without front matter.
fn front_matter(text: &str) -> Option<String> {
    let lines = py_lines(text);
    if lines.first() != Some(&"---") {
        return None;
    }
    let body: Vec<&str> = lines[1..]
        .iter()
        .take_while(|l| **l != "---")
        .copied()
        .collect();
    let yaml = body.join("\n") + "\n";
    Some(yaml.replace("- no\n", "- \"no\"\n").replace('\t', "  "))
}

fn parse(file: &Path, yaml: &str) -> Result<Card> {
    let bad = |e: yaml_rust2::ScanError| {
        // The marker counts lines from the front matter's first line,
        // which is README.md's second.
        config_error(
            file,
            format!(
                "its YAML front matter is malformed at line {} column {}: {}",
                e.marker().line() + 1,
                e.marker().col() + 1,
                e.info()
            ),
        )
    };
    // yaml-rust2's loader copies an alias's whole node, so a few lines of
    // nested aliases would expand without bound: refuse them first.
    let mut parser = Parser::new_from_str(yaml);
    loop {
        match parser.next_token().map_err(bad)? {
            (Event::StreamEnd, _) => break,
            (Event::Alias(_), mark) => {
                return Err(config_error(
                    file,
                    format!(
                        "its YAML front matter uses an alias (line {}), which the importer does not expand",
                        mark.line() + 1
                    ),
                ))
            }
            _ => {}
        }
    }
    let docs = YamlLoader::load_from_str(yaml).map_err(bad)?;
    if docs.len() > 1 {
        return Err(config_error(
            file,
            "its YAML front matter holds more than one document".to_owned(),
        ));
    }
    match docs.into_iter().next().map(to_json) {
        Some(Value::Object(map)) => Ok(Card { map, note: None }),
        other => Ok(Card {
            map: Map::new(),
            note: Some(format!(
                "README.md's front matter is {}, not a mapping: ignored, as the converter ignores it",
                kind(other.as_ref().unwrap_or(&Value::Null))
            )),
        }),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The parsed YAML as JSON values; mapping keys that are not strings are
/// dropped (the converter looks up string keys only).
fn to_json(y: Yaml) -> Value {
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or(Value::String(s), Value::Number),
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::String(s) => Value::String(s),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(a) => Value::Array(a.into_iter().map(to_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.into_iter()
                .filter_map(|(k, v)| match k {
                    Yaml::String(k) => Some((k, to_json(v))),
                    _ => None,
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(text: &str) -> Result<Card> {
        match front_matter(text) {
            Some(y) => parse(Path::new("README.md"), &y),
            None => Ok(Card::default()),
        }
    }

    #[test]
    fn front_matter_is_read_up_to_the_second_rule() {
        let c = card("---\r\nlicense: mit\r\nlanguage:\n- no\n---\nlicense: other\n").unwrap();
        assert_eq!(c.map["license"], "mit");
        // The Norway fix: `- no` stays a string.
        assert_eq!(c.map["language"], serde_json::json!(["no"]));
        assert!(card("# title\n---\nlicense: mit\n---\n")
            .unwrap()
            .map
            .is_empty());
    }

    #[test]
    fn malformed_front_matter_names_the_line() {
        let e = card("---\nlicense: mit\ntags: [a, b\n---\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("README.md"), "{msg}");
        assert!(msg.contains("malformed"), "{msg}");
    }

    #[test]
    fn aliases_are_refused_not_expanded() {
        let e = card("---\na: &a [x, x]\nb: [*a, *a]\n---\n").unwrap_err();
        assert!(e.to_string().contains("alias"), "{e}");
    }

    #[test]
    fn a_front_matter_that_is_not_a_mapping_is_ignored_with_a_note() {
        let c = card("---\n- a\n- b\n---\n").unwrap();
        assert!(c.map.is_empty());
        assert!(c.note.unwrap().contains("a list"));
    }
}
