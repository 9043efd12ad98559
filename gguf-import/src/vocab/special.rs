//! gguf-py's `SpecialVocab`: the special token ids, whether BOS/EOS/SEP are
//! added, the BPE merges and the chat template, gathered from
//! `tokenizer.json`, `tokenizer_config.json`, the chat template files and
//! `config.json`, with the same precedence (the first source to set an id
//! keeps it) and the same guesses from the post-processor.
//!
//! Values from `tokenizer_config.json` are kept as JSON and compared as
//! Python compares them (a `{"content": ...}` token is not equal to a
//! string), because the converter's decisions depend on it.

use serde_json::{Map, Value};

use super::files::{bad, Dir};
use super::keys::Keys;
use crate::error::Result;
use gguf_core::format::{OwnedArray, OwnedValue};

/// A chat template: one string, or named templates (`default` among them
/// when there is one).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ChatTemplate {
    One(String),
    Named(Vec<(String, String)>),
}

#[derive(Debug, Default)]
pub(super) struct SpecialVocab {
    /// Token ids by type, in the order they were set.
    ids: Vec<(String, u32)>,
    /// `add_{type}_token`, in the order they were set.
    add: Vec<(String, bool)>,
    merges: Vec<String>,
    chat_template: Option<ChatTemplate>,
    lowercase: Option<bool>,
    strip_accents: Option<bool>,
    types: Vec<String>,
    n_vocab: Option<usize>,
}

const DEFAULT_TYPES: [&str; 7] = ["bos", "eos", "unk", "sep", "pad", "cls", "mask"];

/// Python's truth value of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `x.get('SpecialToken', {}).get('id')` of a template piece.
fn piece_id<'v>(piece: &'v Value, kind: &str) -> &'v Value {
    piece
        .get(kind)
        .and_then(|p| p.get("id"))
        .unwrap_or(&Value::Null)
}

impl SpecialVocab {
    /// `SpecialVocab(dir, load_merges, n_vocab=n_vocab)`; `tokenizer_json`
    /// is `tokenizer.json` when the caller has parsed it already.
    pub(super) fn load(
        dir: &Dir,
        tokenizer_json: Option<&Value>,
        load_merges: bool,
        n_vocab: Option<usize>,
    ) -> Result<SpecialVocab> {
        let mut sv = SpecialVocab {
            types: DEFAULT_TYPES.iter().map(|t| t.to_string()).collect(),
            n_vocab,
            ..SpecialVocab::default()
        };
        let parsed;
        let tokenizer_json = match tokenizer_json {
            Some(j) => Some(j),
            None => {
                parsed = dir.json("tokenizer.json")?;
                parsed.as_ref()
            }
        };
        sv.read_tokenizer_json(dir, tokenizer_json, load_merges)?;
        sv.read_config_json(dir)?;
        if load_merges && sv.merges.is_empty() {
            sv.merges_txt(dir)?;
        }
        Ok(sv)
    }

    fn read_tokenizer_json(
        &mut self,
        dir: &Dir,
        tokenizer: Option<&Value>,
        load_merges: bool,
    ) -> Result<()> {
        let tj_path = dir.path("tokenizer.json");
        let mut added_tokens: &[Value] = &[];
        if let Some(tokenizer) = tokenizer {
            if load_merges {
                self.merges = merges(tokenizer).map_err(|r| bad(&tj_path, r))?;
            }
            if let Some(norm) = tokenizer.get("normalizer").filter(|n| truthy(n)) {
                self.parse_normalizer(norm);
            }
            if let Some(list) = tokenizer.get("added_tokens").and_then(Value::as_array) {
                added_tokens = list;
            }
        }
        let mut tc: Option<Map<String, Value>> =
            dir.tokenizer_config()?.and_then(|v| v.as_object().cloned());
        let tc_truthy =
            |tc: &Option<Map<String, Value>>| tc.as_ref().is_some_and(|m| !m.is_empty());
        if let Some(tokenizer) = tokenizer.filter(|t| truthy(t)) {
            let get = |tc: &Option<Map<String, Value>>, k: &str| {
                tc.as_ref()
                    .and_then(|m| m.get(k))
                    .cloned()
                    .unwrap_or(Value::Null)
            };
            let mut bos = get(&tc, "bos_token");
            let mut cls = get(&tc, "cls_token");
            let mut eos = get(&tc, "eos_token");
            let mut sep = get(&tc, "sep_token");
            let set = |tc: &mut Option<Map<String, Value>>, k: &str, v: &Value| {
                if let Some(m) = tc.as_mut() {
                    m.insert(k.into(), v.clone());
                }
            };
            if !truthy(&bos) && truthy(&cls) && tc_truthy(&tc) {
                bos = cls.clone();
                set(&mut tc, "bos_token", &bos);
            }
            if !truthy(&eos) && truthy(&sep) && tc_truthy(&tc) {
                eos = sep.clone();
                set(&mut tc, "eos_token", &eos);
            }
            if let Some(post) = tokenizer.get("post_processor").filter(|p| truthy(p)) {
                let processors: Vec<&Value> = match post.get("processors") {
                    Some(Value::Array(list)) => list.iter().collect(),
                    _ => vec![post],
                };
                for processor in processors {
                    match processor.get("type").and_then(Value::as_str) {
                        Some("ByteLevel") => {
                            self.add_default("bos", false);
                            self.add_default("eos", false);
                        }
                        Some("RobertaProcessing") => {
                            self.set_add("bos", true);
                            self.set_add("eos", true);
                            self.set_add("sep", true);
                            if !truthy(&cls) && tc_truthy(&tc) {
                                cls = first_of(processor.get("cls"), &bos);
                                set(&mut tc, "cls_token", &cls);
                            }
                            if !truthy(&sep) && tc_truthy(&tc) {
                                sep = first_of(processor.get("sep"), &eos);
                                set(&mut tc, "sep_token", &sep);
                            }
                        }
                        Some("TemplateProcessing") => {
                            let empty = Vec::new();
                            let single = processor
                                .get("single")
                                .and_then(Value::as_array)
                                .unwrap_or(&empty);
                            let pair = processor
                                .get("pair")
                                .and_then(Value::as_array)
                                .unwrap_or(&empty);
                            let mut first = Value::Null;
                            let mut last = Value::Null;
                            if single.len() > 1 {
                                first = piece_id(&single[0], "SpecialToken").clone();
                                if truthy(&first) {
                                    if !tc_truthy(&tc) {
                                        bos = first.clone();
                                    } else if first != bos && first != cls {
                                        if !truthy(&bos) {
                                            bos = first.clone();
                                            set(&mut tc, "bos_token", &bos);
                                        }
                                        if !truthy(&cls) {
                                            cls = first.clone();
                                            set(&mut tc, "cls_token", &cls);
                                        }
                                    }
                                    self.set_add("bos", first == bos || first == cls);
                                }
                                last = piece_id(&single[single.len() - 1], "SpecialToken").clone();
                                if truthy(&last) {
                                    if !tc_truthy(&tc) {
                                        eos = last.clone();
                                    } else if last != eos {
                                        // The old EOS becomes EOT (or EOM).
                                        if !self.types.iter().any(|t| t == "eot") {
                                            self.types.push("eot".into());
                                            set(&mut tc, "eot_token", &eos);
                                        } else if !self.types.iter().any(|t| t == "eom") {
                                            self.types.push("eom".into());
                                            set(&mut tc, "eom_token", &eos);
                                        }
                                        eos = last.clone();
                                        set(&mut tc, "eos_token", &eos);
                                    }
                                    self.set_add("eos", last == eos);
                                }
                            }
                            if !pair.is_empty() {
                                let start = usize::from(
                                    truthy(&first) && *piece_id(&pair[0], "SpecialToken") == first,
                                );
                                let stop_trim = usize::from(
                                    truthy(&last)
                                        && *piece_id(&pair[pair.len() - 1], "SpecialToken") == last,
                                );
                                let end = pair.len().saturating_sub(stop_trim);
                                let inner = if start < end {
                                    &pair[start..end]
                                } else {
                                    &[][..]
                                };
                                if !inner.is_empty() {
                                    let a = piece_id(&inner[0], "Sequence");
                                    let b = piece_id(&inner[inner.len() - 1], "Sequence");
                                    let middle = if inner.len() >= 2 {
                                        &inner[1..inner.len() - 1]
                                    } else {
                                        &[][..]
                                    };
                                    if a == "A" && b == "B" && !middle.is_empty() {
                                        let mut add_sep = false;
                                        let entry = piece_id(&middle[0], "SpecialToken");
                                        if truthy(entry)
                                            && (*entry == sep || *entry == eos)
                                            && !truthy(&last)
                                        {
                                            add_sep = true;
                                        }
                                        if middle.len() == 2 {
                                            let entry = piece_id(&middle[1], "SpecialToken");
                                            if truthy(entry) && (*entry == sep || *entry == eos) {
                                                add_sep = true;
                                            }
                                        }
                                        self.set_add("sep", add_sep);
                                        if add_sep && !truthy(&sep) && tc_truthy(&tc) {
                                            set(&mut tc, "sep_token", &eos);
                                        }
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let Some(tc) = tc.filter(|m| !m.is_empty()) else {
            return Ok(());
        };
        let tc_path = dir.path("tokenizer_config.json");
        let alt = chat_template_files(dir)?;
        let template = match tc.get("chat_template") {
            Some(v) => v.clone(),
            None => alt.unwrap_or(Value::Null),
        };
        self.chat_template =
            chat_template(&template).map_err(|r| bad(&tc_path, format!("chat_template: {r}")))?;
        for typ in self.types.clone() {
            if let Some(Value::Bool(add)) = tc.get(&format!("add_{typ}_token")) {
                self.add_default(&typ, *add);
            }
            let content = match tc.get(&format!("{typ}_token")) {
                Some(Value::String(s)) => s.as_str(),
                Some(Value::Object(o)) => match o.get("content") {
                    Some(Value::String(s)) => s.as_str(),
                    _ => continue,
                },
                _ => continue,
            };
            let id = added_tokens
                .iter()
                .find(|t| t.get("content").and_then(Value::as_str) == Some(content))
                .and_then(|t| t.get("id"));
            if let Some(id) = id {
                self.set_id(&typ, id)
                    .map_err(|r| bad(&tj_path, format!("added token {content:?}: {r}")))?;
            }
        }
        Ok(())
    }

    fn read_config_json(&mut self, dir: &Dir) -> Result<()> {
        let config = dir.config();
        if !config.is_object() {
            return Ok(());
        }
        let path = dir.path("config.json");
        for typ in self.types.clone() {
            let key = format!("{typ}_token_id");
            let mut id = config.get(&key).filter(|v| !v.is_null());
            if id.is_none() {
                id = config.get("text_config").and_then(|t| t.get(&key));
            }
            if let Some(id) = id {
                self.set_id(&typ, id)
                    .map_err(|r| bad(&path, format!("{key}: {r}")))?;
            }
        }
        Ok(())
    }

    /// `_set_special_token`: only integers count, the first setting wins,
    /// ids at or past `n_vocab` are skipped.
    fn set_id(&mut self, typ: &str, id: &Value) -> std::result::Result<(), String> {
        let Value::Number(n) = id else { return Ok(()) };
        if n.is_f64() {
            return Ok(());
        }
        let id = match n.as_u64() {
            Some(id) => id,
            None => return Err(format!("invalid id {n} for special token type {typ}")),
        };
        let id = u32::try_from(id).map_err(|_| format!("id {id} does not fit in 32 bits"))?;
        if self.n_vocab.is_some_and(|n| id as usize >= n) {
            return Ok(());
        }
        if !self.ids.iter().any(|(t, _)| t == typ) {
            self.ids.push((typ.into(), id));
        }
        Ok(())
    }

    /// `_set_special_token` with an id known to be valid: kept only when
    /// the type has none yet.
    pub(super) fn set_default_id(&mut self, typ: &str, id: u32) {
        if !self.ids.iter().any(|(t, _)| t == typ) {
            self.ids.push((typ.into(), id));
        }
    }

    fn set_add(&mut self, typ: &str, value: bool) {
        match self.add.iter_mut().find(|(t, _)| t == typ) {
            Some((_, v)) => *v = value,
            None => self.add.push((typ.into(), value)),
        }
    }

    fn add_default(&mut self, typ: &str, value: bool) {
        if !self.add.iter().any(|(t, _)| t == typ) {
            self.add.push((typ.into(), value));
        }
    }

    fn parse_normalizer(&mut self, normalizer: &Value) {
        match normalizer.get("type").and_then(Value::as_str) {
            Some("Lowercase") => self.lowercase = Some(true),
            Some("StripAccents") => self.strip_accents = Some(true),
            Some("BertNormalizer") => {
                if let Some(v) = normalizer.get("lowercase") {
                    self.lowercase = v.as_bool();
                }
                if let Some(v) = normalizer.get("strip_accents") {
                    self.strip_accents = v.as_bool();
                }
            }
            Some("Sequence") => {
                if let Some(list) = normalizer.get("normalizers").and_then(Value::as_array) {
                    for n in list {
                        self.parse_normalizer(n);
                    }
                }
            }
            _ => {}
        }
    }

    /// `merges.txt`: one `a b` pair a line, an optional `#` header line,
    /// malformed lines skipped as the converter skips them.
    fn merges_txt(&mut self, dir: &Dir) -> Result<()> {
        if !dir.has("merges.txt") {
            return Ok(());
        }
        let text = dir.read_text("merges.txt")?;
        let mut lines = text.lines().peekable();
        if lines.peek().is_some_and(|l| l.trim().starts_with('#')) {
            lines.next();
        }
        self.merges = lines
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .filter_map(|l| {
                let parts: Vec<&str> = l.split_whitespace().collect();
                (parts.len() == 2).then(|| format!("{} {}", parts[0], parts[1]))
            })
            .collect();
        Ok(())
    }

    /// `add_to_gguf`.
    pub(super) fn add_to(self, keys: &mut Keys) {
        keys.set_strings("tokenizer.ggml.merges", self.merges);
        for (typ, id) in self.ids {
            let key = match typ.as_str() {
                "bos" => "bos_token_id",
                "eos" => "eos_token_id",
                "unk" => "unknown_token_id",
                "sep" => "seperator_token_id",
                "pad" => "padding_token_id",
                "mask" => "mask_token_id",
                "eot" => "eot_token_id",
                "eom" => "eom_token_id",
                _ => continue, // no writer method (cls): skipped
            };
            keys.set(&format!("tokenizer.ggml.{key}"), id);
        }
        for (typ, add) in self.add {
            if matches!(typ.as_str(), "bos" | "eos" | "sep") {
                keys.set(&format!("tokenizer.ggml.add_{typ}_token"), add);
            }
        }
        match self.chat_template {
            Some(ChatTemplate::One(t)) => keys.set("tokenizer.chat_template", t.as_str()),
            Some(ChatTemplate::Named(list)) => {
                let mut default = None;
                let mut names: Vec<String> = Vec::new();
                for (name, template) in list {
                    if name == "default" {
                        default = Some(template);
                    } else {
                        keys.set(
                            &format!("tokenizer.chat_template.{name}"),
                            template.as_str(),
                        );
                        if !names.contains(&name) {
                            names.push(name);
                        }
                    }
                }
                keys.set(
                    "tokenizer.chat_templates",
                    OwnedValue::Array(OwnedArray::String(names)),
                );
                if let Some(t) = default {
                    keys.set("tokenizer.chat_template", t.as_str());
                }
            }
            None => {}
        }
        if let Some(v) = self.lowercase {
            keys.set("tokenizer.ggml.normalizer.lowercase", v);
        }
        if let Some(v) = self.strip_accents {
            keys.set("tokenizer.ggml.normalizer.strip_accents", v);
        }
    }
}

/// `processor.get(key, [fallback])[0]`.
fn first_of(list: Option<&Value>, fallback: &Value) -> Value {
    match list {
        Some(Value::Array(a)) => a.first().cloned().unwrap_or(Value::Null),
        Some(other) => other.get(0).cloned().unwrap_or(Value::Null),
        None => fallback.clone(),
    }
}

/// `tokenizer.json`'s merges as the converter writes them: `"a b"`; the
/// list form of `transformers` 4.45+ joined with a space, spaces inside a
/// part written as U+0120.
fn merges(tokenizer: &Value) -> std::result::Result<Vec<String>, String> {
    let Some(Value::Array(list)) = tokenizer.get("model").and_then(|m| m.get("merges")) else {
        return Ok(Vec::new());
    };
    let Some(first) = list.first() else {
        return Ok(Vec::new());
    };
    if first.is_string() {
        return list
            .iter()
            .enumerate()
            .map(|(i, m)| {
                m.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("model.merges[{i}] is not a string"))
            })
            .collect();
    }
    let is_pair = |v: &Value| {
        v.as_array()
            .is_some_and(|p| p.len() == 2 && p[0].is_string())
    };
    if !is_pair(first) {
        return Err("model.merges: unknown merges format".into());
    }
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let pair = m.as_array().filter(|p| p.len() == 2);
            let parts: Option<Vec<String>> = pair.and_then(|p| {
                p.iter()
                    .map(|s| s.as_str().map(|s| s.replace(' ', "\u{120}")))
                    .collect()
            });
            parts
                .map(|p| p.join(" "))
                .ok_or_else(|| format!("model.merges[{i}] is not a pair of strings"))
        })
        .collect()
}

/// `chat_template.jinja` (with `additional_chat_templates/*.jinja`, named
/// by file stem, in name order), else `chat_template.json`'s
/// `chat_template`.
fn chat_template_files(dir: &Dir) -> Result<Option<Value>> {
    if dir.has("chat_template.jinja") {
        let main = dir.read_text("chat_template.jinja")?;
        let extra_dir = dir.path("additional_chat_templates");
        let mut extra = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&extra_dir) {
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "jinja") {
                    extra.push(path);
                }
            }
        }
        if extra.is_empty() {
            return Ok(Some(Value::String(main)));
        }
        extra.sort();
        let mut list = vec![serde_json::json!({"name": "default", "template": main})];
        for path in extra {
            let text = gguf_core::read::read_text_capped(&path, gguf_core::read::MAX_TEXT_INPUT)?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            list.push(serde_json::json!({"name": stem, "template": text}));
        }
        return Ok(Some(Value::Array(list)));
    }
    Ok(dir
        .json("chat_template.json")?
        .and_then(|v| v.get("chat_template").cloned()))
}

/// A `chat_template` value: a string, a list of `{name, template}`, or
/// nothing; other types are ignored, as the converter ignores them.
fn chat_template(v: &Value) -> std::result::Result<Option<ChatTemplate>, String> {
    match v {
        Value::String(s) => Ok(Some(ChatTemplate::One(s.clone()))),
        Value::Array(list) => {
            let mut named = Vec::new();
            for (i, choice) in list.iter().enumerate() {
                let name: String = choice
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                let template = match choice.get("template") {
                    None | Some(Value::Null) => continue,
                    Some(Value::String(t)) => t.clone(),
                    Some(_) => return Err(format!("[{i}].template is not a string")),
                };
                if !name.is_empty() {
                    named.push((name, template));
                }
            }
            Ok(Some(ChatTemplate::Named(named)))
        }
        _ => Ok(None),
    }
}
