//! What `gguf check` says of a model's chat templates: whether llama.cpp's engine can parse
//! and render each, what it uses that llama.cpp's engine lacks, and what reaches for more
//! than the conversation (the patterns of the known template exploits). The whole source is
//! scanned whatever its size: a scanner that reads only the first part of a template is
//! bypassed by padding.

use gguf_core::Gguf;
use serde_json::json;

use crate::conversation::Conversation;
use crate::error::Error;
use crate::options::RenderOptions;
use crate::template::ChatTemplate;

/// Which kind of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FindingKind {
    /// The template does not parse.
    Parse,
    /// A plain conversation (a user turn; user, assistant, user) does not render.
    Render,
    /// A statement llama.cpp's engine does not have (`include`, `import`, `extends`, ...).
    Unsupported,
    /// Text that reaches for Python's object internals or the host (`__class__`,
    /// `__globals__`, `cycler.__init__`, `.popen(`, ...), as the known exploits do.
    Escape,
}

/// One thing found in a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The template: `default` or the `NAME` of `tokenizer.chat_template.NAME`.
    pub template: String,
    /// What kind of finding.
    pub kind: FindingKind,
    /// 1-based line and column in the template source, when known.
    pub line: Option<usize>,
    /// 1-based column (in characters).
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "chat template {}", self.template)?;
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, " (line {l}, column {c})")?,
            (Some(l), None) => write!(f, " (line {l})")?,
            _ => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// The statements llama.cpp's engine parses (`common/jinja/parser.cpp`), with their `end`
/// forms and the branches of `if`/`for`.
const STATEMENTS: &[&str] = &[
    "set",
    "endset",
    "if",
    "elif",
    "else",
    "endif",
    "for",
    "endfor",
    "macro",
    "endmacro",
    "call",
    "endcall",
    "filter",
    "endfilter",
    "break",
    "continue",
    "generation",
    "endgeneration",
];

/// Names that only an attempt to leave the template's data uses. Dunder names are matched in
/// general (`__` + letters + `__`); these are the rest.
const HOST_NAMES: &[&str] = &[
    ".popen(",
    ".system(",
    "._module",
    "subprocess",
    "__import__",
    "eval(",
    "exec(",
    "cycler.",
    "joiner.",
    "lipsum.",
    "self._",
];

/// Every finding for every template of `model` (none when it has no template).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut b = gguf_core::write::Builder::new();
/// b.set("tokenizer.chat_template", "{{ ().__class__.__base__ }}{% include 'x' %}")?;
/// let model = b.preview()?;
/// let found = gguf_chat::check_templates(&model);
/// assert!(found.iter().any(|f| f.kind == gguf_chat::FindingKind::Escape));
/// assert!(found.iter().any(|f| f.kind == gguf_chat::FindingKind::Unsupported));
/// # Ok(()) }
/// ```
pub fn check_templates(model: &impl Gguf) -> Vec<Finding> {
    let mut out = Vec::new();
    for name in ChatTemplate::names(model) {
        let key = (name != "default").then_some(name.as_str());
        let full_key = match key {
            Some(n) => format!("tokenizer.chat_template.{n}"),
            None => "tokenizer.chat_template".to_owned(),
        };
        let Some(source) = model
            .value(&full_key)
            .and_then(|v| v.as_str().map(str::to_owned))
        else {
            out.push(finding(
                &name,
                FindingKind::Parse,
                None,
                format!("{full_key} is not a string"),
            ));
            continue;
        };
        out.extend(scan(&name, &source));
        // A model without a vocabulary still has its template checked.
        let template = match ChatTemplate::from_model(model, key) {
            Err(Error::Tokenizer(_)) | Err(Error::Gguf(_)) => ChatTemplate::new(&source, "", ""),
            other => other,
        };
        match template {
            Err(e) => out.push(from_error(&name, FindingKind::Parse, e)),
            Ok(t) => out.extend(render_plain(&name, &t)),
        }
    }
    out
}

/// The findings of the text alone: unsupported statements and reaches outside the data.
fn scan(name: &str, source: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let bytes = source.as_bytes();
    let mut i = 0;
    while let Some(found) = source[i..].find("{%") {
        let start = i + found + 2;
        let rest = source[start..].trim_start_matches(['-', '+']).trim_start();
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !word.is_empty() && !STATEMENTS.contains(&word.as_str()) {
            let (line, column) = position(source, i + found);
            out.push(finding(
                name,
                FindingKind::Unsupported,
                Some((line, column)),
                format!("`{{% {word} %}}`: llama.cpp's template engine has no `{word}` statement"),
            ));
        }
        i = start;
    }
    // `__name__`, written out or built from escapes (`\x5f\x5f`).
    let mut k = 0;
    while k + 4 < bytes.len() {
        if bytes[k] == b'_' && bytes[k + 1] == b'_' && bytes[k + 2].is_ascii_alphabetic() {
            let end = (k + 2..bytes.len())
                .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_'))
                .unwrap_or(bytes.len());
            let word = &source[k..end];
            if word.len() > 4 && word.ends_with("__") {
                out.push(escape(name, source, k, &format!("`{word}`")));
            }
            k = end.max(k + 1);
            continue;
        }
        k += 1;
    }
    for needle in ["\\x5f", "\\u005f", "\\137"] {
        for (at, _) in source.match_indices(needle) {
            out.push(escape(
                name,
                source,
                at,
                &format!("an escaped underscore (`{needle}`)"),
            ));
        }
    }
    for needle in HOST_NAMES {
        for (at, _) in source.match_indices(needle) {
            out.push(escape(name, source, at, &format!("`{needle}`")));
        }
    }
    out
}

fn escape(name: &str, source: &str, at: usize, what: &str) -> Finding {
    finding(
        name,
        FindingKind::Escape,
        Some(position(source, at)),
        format!(
            "{what} reaches for more than the conversation (Python object internals or the host, \
             as template exploits do); llama.cpp's engine and ours have no such attribute"
        ),
    )
}

/// 1-based line and column (in characters) of byte `at`.
fn position(source: &str, at: usize) -> (usize, usize) {
    let before = &source[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Renders two plain conversations: a template that cannot render them cannot serve a chat.
fn render_plain(name: &str, t: &ChatTemplate) -> Option<Finding> {
    let conversations = [
        json!([{"role": "user", "content": "Hello"}]),
        json!([
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "user", "content": "Tell me a joke."}
        ]),
    ];
    let options = RenderOptions::new();
    for c in &conversations {
        let conv = Conversation::from_json(c).ok()?;
        if let Err(e) = t.render(&conv, &options) {
            let turns = c.as_array().map_or(0, Vec::len);
            let mut f = from_error(name, FindingKind::Render, e);
            f.message = format!(
                "a plain conversation of {turns} turn(s) does not render: {}",
                f.message
            );
            return Some(f);
        }
    }
    None
}

fn from_error(name: &str, kind: FindingKind, e: Error) -> Finding {
    let (line, column) = match &e {
        Error::Template { line, column, .. } => (*line, *column),
        Error::Raised { line, .. } => (*line, None),
        _ => (None, None),
    };
    let message = match e {
        Error::Template { message, .. } => message,
        Error::Raised { message, .. } => format!("it raised: {message}"),
        other => other.to_string(),
    };
    Finding {
        template: name.to_owned(),
        kind,
        line,
        column,
        message,
    }
}

fn finding(name: &str, kind: FindingKind, at: Option<(usize, usize)>, message: String) -> Finding {
    Finding {
        template: name.to_owned(),
        kind,
        line: at.map(|a| a.0),
        column: at.map(|a| a.1),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_exploit_is_found_wherever_it_hides() {
        let exploit =
            "{% for x in ().__class__.__base__.__subclasses__() %}{% if 'warning' in x.__name__ %}\
            {{ x()._module.__builtins__['__import__']('os').popen('id') }}{% endif %}{% endfor %}";
        // Padded past what a scanner of the first part reads.
        let source = format!("{}\n{exploit}", " ".repeat(1 << 20));
        let found = scan("default", &source);
        let escapes: Vec<_> = found
            .iter()
            .filter(|f| f.kind == FindingKind::Escape)
            .collect();
        assert!(escapes.iter().any(|f| f.message.contains("__class__")));
        assert!(escapes.iter().any(|f| f.message.contains(".popen(")));
        assert!(escapes.iter().all(|f| f.line == Some(2)), "{escapes:?}");
        let hidden = scan("default", r#"{{ ()|attr('\x5f\x5fclass\x5f\x5f') }}"#);
        assert!(
            hidden
                .iter()
                .any(|f| f.message.contains("escaped underscore")),
            "{hidden:?}"
        );
    }

    #[test]
    fn statements_llama_cpp_lacks_are_named_and_its_own_are_not() {
        let found = scan("default", "{%- if x %}{% for y in z %}{% endfor %}{% endif %}\n{% include 'a' %}{%- extends 'b' %}");
        let names: Vec<_> = found
            .iter()
            .map(|f| (f.line, f.column, f.message.clone()))
            .collect();
        assert_eq!(found.len(), 2, "{names:?}");
        assert_eq!(found[0].line, Some(2));
        assert_eq!(found[0].column, Some(1));
        assert!(found[0].message.contains("`include`"));
        assert!(found[1].message.contains("`extends`"));
    }

    #[test]
    fn ordinary_templates_have_no_findings() {
        let t = "{% for m in messages %}{{ m.role }}: {{ m.content | trim }}\n{% endfor %}\
                 {% if add_generation_prompt %}assistant:{% endif %}";
        assert!(scan("default", t).is_empty());
        let t = ChatTemplate::new(t, "", "").unwrap();
        assert!(render_plain("default", &t).is_none());
        let refusing = ChatTemplate::new("{{ raise_exception('no') }}", "", "").unwrap();
        let f = render_plain("default", &refusing).unwrap();
        assert_eq!(f.kind, FindingKind::Render);
        assert!(f.message.contains("it raised: no"), "{}", f.message);
    }
}
