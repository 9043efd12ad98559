//! `general.*`: what gguf-py's `Metadata.load` finds about the model, and
//! the order `set_gguf_meta_model` writes it in.
//!
//! Sources, in the converter's order of precedence: the model card's front
//! matter (`README.md`, [`super::card`]: name, author, license, tags,
//! languages, base models, datasets...), `config.json`'s `_name_or_path`
//! (when it looks like a Hub id), then the directory's name, each split
//! into name components by gguf-py's heuristics ([`id_components`]); the
//! sampling settings of `generation_config.json`. The size label comes
//! from the parameter count when no name gave one. Not read: a metadata
//! override file (the converter's `--metadata`).

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::error::Result;
use gguf_core::format::{OwnedArray, OwnedValue};
use gguf_core::naming::{parameter_counts, size_label_of};

use super::card;
use super::config::config_error;
use super::hparams::Keys;

/// The name components gguf-py's `get_model_id_components` finds in a
/// model id (`org/Name-7B-Instruct-v0.1`).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Components {
    pub full_name: Option<String>,
    pub org: Option<String>,
    pub basename: Option<String>,
    pub finetune: Option<String>,
    pub version: Option<String>,
    pub size_label: Option<String>,
}

/// gguf-py's name patterns, compiled once. Each is a constant that
/// compiles (`every_pattern_compiles`); were one not to, it would match
/// nothing rather than panic.
struct Patterns {
    /// A version word in `id_to_title`.
    title_version: Option<Regex>,
    version: Option<Regex>,
    quant_type: Option<Regex>,
    size: Option<Regex>,
    finetune: Option<Regex>,
    hub_url: Option<Regex>,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let re = |pattern: &str| Regex::new(pattern).ok();
        Patterns {
            title_version: re(r"^(v\d+(?:\.\d+)*|\d.*)$"),
            version: re(r"(?i)^(v|iter)?\d+([.]\d+)*$"),
            quant_type: re(r"(?i)^(i?q\d(_\w)*|b?fp?(16|32))$"),
            size: re(r"(?i)^(([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl)$"),
            finetune: re(r"(?i)^(chat|instruct|vision|lora)$"),
            hub_url: re(r"^https?://huggingface.co/([^/]+/[^/]+)$"),
        }
    })
}

fn is_match(pattern: &Option<Regex>, text: &str) -> bool {
    pattern.as_ref().is_some_and(|r| r.is_match(text))
}

/// Python's `str.islower()`: some cased character, none upper case.
fn py_islower(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if c.is_uppercase() {
            return false;
        }
        if c.is_lowercase() {
            cased = true;
        }
    }
    cased
}

/// Python's `str.title()`: a cased character after an uncased one is
/// upper case, any other cased character lower case.
fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        let cased = c.is_uppercase() || c.is_lowercase();
        if cased {
            if prev_cased {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
        } else {
            out.push(c);
        }
        prev_cased = cased;
    }
    out
}

/// gguf-py's `Metadata.id_to_title`: words title-cased unless they are
/// acronyms or versions.
pub(crate) fn id_to_title(s: &str) -> String {
    let version = &patterns().title_version;
    s.trim()
        .replace('-', " ")
        .split_whitespace()
        .map(|w| {
            if py_islower(w) && !is_match(version, w) {
                py_title(w)
            } else {
                w.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// gguf-py's `Metadata.get_model_id_components`.
pub(crate) fn id_components(model_id: &str, total_params: i128) -> Components {
    if model_id.contains(' ') {
        return Components {
            full_name: Some(model_id.to_owned()),
            ..Components::default()
        };
    }
    let (mut org, full) = match model_id.split_once('/') {
        Some((o, f)) => (Some(o.to_owned()), f.to_owned()),
        None => (None, model_id.to_owned()),
    };
    if org.as_deref().is_some_and(|o| o.starts_with('.')) {
        org = None;
    }
    let mut parts: Vec<String> = full
        .split('-')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    #[derive(Default, Clone)]
    struct Tags {
        basename: bool,
        size_label: bool,
        finetune: bool,
        version: bool,
        ty: bool,
    }
    impl Tags {
        fn is_empty(&self) -> bool {
            !(self.basename || self.size_label || self.finetune || self.version || self.ty)
        }
        fn count(&self) -> usize {
            [
                self.basename,
                self.size_label,
                self.finetune,
                self.version,
                self.ty,
            ]
            .iter()
            .filter(|b| **b)
            .count()
        }
    }
    let mut tags = vec![Tags::default(); parts.len()];
    let p = patterns();
    for i in 0..parts.len() {
        let part = parts[i].clone();
        if is_match(&p.version, &part) {
            tags[i].version = true;
        } else if is_match(&p.quant_type, &part) {
            tags[i].ty = true;
            parts[i] = part.to_uppercase();
        } else if i > 0 && is_match(&p.size, &part) {
            let mut p: Vec<char> = part.replace('_', ".").chars().collect();
            // bloom-7b1 notation: 7b1 -> 7.1b
            if p.last().is_some_and(|c| c.is_ascii_digit()) && p.len() >= 2 {
                let last = p[p.len() - 1];
                let before = p[p.len() - 2];
                p.truncate(p.len() - 2);
                p.push('.');
                p.push(last);
                p.push(before);
            }
            if p.len() > 1 && p[p.len() - 2].is_ascii_digit() {
                let last = p[p.len() - 1];
                if "kmbt".contains(last) {
                    let n = p.len() - 1;
                    p[n] = last.to_ascii_uppercase();
                }
            }
            let mut part: String = p.iter().collect();
            if total_params != 0 {
                let (num, suffix) =
                    part.split_at(part.len() - p.last().map_or(0, |c| c.len_utf8()));
                let scale = " KMBT".find(suffix);
                let label = num.parse::<f64>().ok().map(|n| {
                    // " KMBT".find gives -1 for another suffix in Python.
                    let e = scale.map_or(-1, |s| s as i32);
                    n * 1000f64.powi(e)
                });
                if let Some(label) = label {
                    let total = total_params as f64;
                    let abs_total = total_params.abs();
                    let tiny = total_params < 0 && label < (abs_total / 8) as f64;
                    let far =
                        total_params > 0 && (label - total).abs() > (7 * total_params / 8) as f64;
                    if tiny || far {
                        tags[i].finetune = true;
                        let mut chars: Vec<char> = part.chars().collect();
                        if let Some(c) = chars.last_mut() {
                            *c = c.to_ascii_lowercase();
                        }
                        part = chars.into_iter().collect();
                    }
                }
            }
            if tags[i].is_empty() {
                tags[i].size_label = true;
            }
            parts[i] = part;
        } else if i > 0 && is_match(&p.finetune, &part) {
            if total_params < 0 && part.eq_ignore_ascii_case("lora") {
                tags[i].ty = true;
            } else {
                tags[i].finetune = true;
            }
        }
    }
    // Word sizes ("small") give way to a number-based one.
    let numeric_size = parts
        .iter()
        .zip(&tags)
        .any(|(p, t)| t.size_label && p.chars().any(|c| c.is_ascii_digit()));
    if numeric_size {
        for (p, t) in parts.iter().zip(tags.iter_mut()) {
            if t.size_label && p.chars().all(char::is_alphabetic) {
                t.size_label = false;
            }
        }
    }
    let mut at_start = true;
    for (p, t) in parts.iter().zip(tags.iter_mut()) {
        let alpha_start = p.chars().next().is_some_and(char::is_alphabetic);
        if at_start && ((t.is_empty() && alpha_start) || t.version) {
            t.basename = true;
        } else {
            at_start = false;
            if t.is_empty() {
                t.finetune = true;
            }
        }
    }
    for t in tags.iter_mut().rev() {
        if t.basename && t.count() > 1 {
            t.basename = false;
        } else {
            break;
        }
    }
    let join = |pick: &dyn Fn(&Tags) -> bool| {
        let v: Vec<&str> = parts
            .iter()
            .zip(&tags)
            .filter(|(_, t)| pick(t))
            .map(|(p, _)| p.as_str())
            .collect();
        (!v.is_empty()).then(|| v.join("-"))
    };
    let mut basename = join(&|t| t.basename);
    let mut sizes: Vec<&str> = Vec::new();
    for (p, t) in parts.iter().zip(&tags) {
        if t.size_label && !sizes.contains(&p.as_str()) {
            sizes.push(p);
        }
    }
    let size_label = (!sizes.is_empty()).then(|| sizes.join("-"));
    let finetune = join(&|t| t.finetune);
    let version = join(&|t| t.version && !t.basename);
    if size_label.is_none() && finetune.is_none() && version.is_none() {
        basename = None;
    }
    Components {
        full_name: Some(full),
        org,
        basename,
        finetune,
        version,
        size_label,
    }
}

/// What `Metadata.load` finds, for the keys the importer writes. A field
/// set to `Some("")` was given but is not written (gguf-py drops empty
/// strings), and still keeps later sources from filling it.
#[derive(Debug, Default)]
pub(crate) struct General {
    pub name: Option<String>,
    pub author: Option<String>,
    pub organization: Option<String>,
    pub basename: Option<String>,
    pub finetune: Option<String>,
    pub version: Option<String>,
    pub description: Option<String>,
    pub size_label: Option<String>,
    pub license: Option<String>,
    pub license_name: Option<String>,
    pub license_link: Option<String>,
    pub source_url: Option<String>,
    pub source_doi: Option<String>,
    pub source_uuid: Option<String>,
    pub source_repo_url: Option<String>,
    pub base_models: Option<Vec<Source>>,
    pub datasets: Option<Vec<Source>>,
    pub tags: Option<Vec<String>>,
    pub languages: Option<Vec<String>>,
}

/// A base model or data set: the fields gguf-py writes for one, in its order
/// (name, author, version, organization, description, url, doi, uuid,
/// repo_url).
pub(crate) type Source = Vec<(&'static str, String)>;

const SOURCE_FIELDS: [&str; 9] = [
    "name",
    "author",
    "version",
    "organization",
    "description",
    "url",
    "doi",
    "uuid",
    "repo_url",
];

impl General {
    fn fill(&mut self, c: Components) {
        if self.name.is_none() {
            self.name = c.full_name.as_deref().map(id_to_title);
        }
        if self.organization.is_none() {
            self.organization = c.org.as_deref().map(id_to_title);
        }
        self.basename = self.basename.take().or(c.basename);
        self.finetune = self.finetune.take().or(c.finetune);
        self.version = self.version.take().or(c.version);
        self.size_label = self.size_label.take().or(c.size_label);
    }
}

/// A card value where gguf-py expects a string: a string, nothing (null),
/// or a value Python finds false (skipped when written, as `add_string`
/// skips it); any other value makes the converter fail when it writes it.
fn card_string(file: &Path, key: &str, v: &Value) -> Result<Option<String>> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Bool(false) => Ok(Some(String::new())),
        Value::Number(n) if n.as_f64() == Some(0.0) => Ok(Some(String::new())),
        Value::Array(a) if a.is_empty() => Ok(Some(String::new())),
        Value::Object(o) if o.is_empty() => Ok(Some(String::new())),
        other => Err(config_error(
            file,
            format!("model card field {key:?} is {other}, not a string"),
        )),
    }
}

/// gguf-py's `use_model_card_metadata` over `names`: the first name present
/// with a non-null value.
fn card_first(file: &Path, card: &Map<String, Value>, names: &[&str]) -> Result<Option<String>> {
    for name in names {
        if let Some(v) = card.get(*name)
            && let Some(s) = card_string(file, name, v)?
        {
            return Ok(Some(s));
        }
    }
    Ok(None)
}

/// gguf-py's `use_array_model_card_metadata` over `names`: each present one
/// appends its string or list of strings (a value of another type leaves an
/// empty list, which is not written).
fn card_list(
    file: &Path,
    card: &Map<String, Value>,
    names: &[&str],
) -> Result<Option<Vec<String>>> {
    let mut out: Option<Vec<String>> = None;
    for name in names {
        let Some(v) = card.get(*name).filter(|v| !v.is_null()) else {
            continue;
        };
        let list = out.get_or_insert_with(Vec::new);
        match v {
            Value::String(s) => list.push(s.clone()),
            Value::Array(items) => {
                for item in items {
                    let Value::String(s) = item else {
                        return Err(config_error(
                            file,
                            format!("model card field {name:?} holds {item}, not a string"),
                        ));
                    };
                    list.push(s.clone());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// gguf-py's reading of `base_model` / `datasets`: each entry a Hub id
/// (`org/name`), a URL, or a mapping of the fields themselves.
fn card_sources(
    file: &Path,
    card: &Map<String, Value>,
    names: &[&str],
    total_params: i128,
) -> Result<Option<Vec<Source>>> {
    // `card.get(a, card.get(b, ...))`: the first name present wins, even
    // when its value is null.
    let Some(value) = names.iter().find_map(|n| card.get(*n)) else {
        return Ok(None);
    };
    let entries: Vec<&Value> = match value {
        Value::String(_) => vec![value],
        Value::Array(a) => a.iter().collect(),
        _ => Vec::new(),
    };
    let hub_url = &patterns().hub_url;
    let mut sources = Vec::with_capacity(entries.len());
    for entry in entries {
        let mut fields: Vec<(&'static str, String)> = Vec::new();
        let from_id = |id: &str, with_repo_url: bool, fields: &mut Vec<(&'static str, String)>| {
            let c = id_components(id, total_params);
            if let Some(n) = &c.full_name {
                fields.push(("name", id_to_title(n)));
            }
            if let Some(o) = &c.org {
                fields.push(("organization", id_to_title(o)));
            }
            if let Some(v) = c.version {
                fields.push(("version", v));
            }
            if with_repo_url && let (Some(o), Some(n)) = (&c.org, &c.full_name) {
                fields.push(("repo_url", format!("https://huggingface.co/{o}/{n}")));
            }
        };
        match entry {
            Value::String(id) => {
                if ["http://", "https://", "ssh://"]
                    .iter()
                    .any(|p| id.starts_with(p))
                {
                    fields.push(("repo_url", id.clone()));
                    if id.contains("huggingface.co")
                        && let Some(m) = hub_url
                            .as_ref()
                            .and_then(|r| r.captures(id))
                            .and_then(|c| c.get(1))
                    {
                        from_id(m.as_str(), false, &mut fields);
                    }
                } else {
                    from_id(id, true, &mut fields);
                }
            }
            Value::Object(map) => {
                for field in SOURCE_FIELDS {
                    if let Some(v) = map.get(field)
                        && let Some(s) = card_string(file, field, v)?
                    {
                        fields.push((field, s));
                    }
                }
            }
            // gguf-py logs "not in a known format" and keeps an empty entry.
            _ => {}
        }
        fields.sort_by_key(|(f, _)| SOURCE_FIELDS.iter().position(|x| x == f));
        sources.push(fields);
    }
    Ok(Some(sources))
}

impl General {
    /// What `apply_metadata_heuristic` takes from the model card.
    fn from_card(file: &Path, card: &Map<String, Value>, total_params: i128) -> Result<Self> {
        let first = |names: &[&str]| card_first(file, card, names);
        Ok(General {
            name: first(&["name", "model_name"])?,
            author: first(&["author", "model_author", "model_creator"])?,
            version: first(&["version", "model_version"])?,
            organization: first(&["organization", "model_organization"])?,
            description: first(&["description", "model_description"])?,
            finetune: first(&["finetune", "model_finetune"])?,
            basename: first(&["basename", "model_basename", "model_type"])?,
            size_label: first(&["size_label", "model_size_label"])?,
            source_url: first(&["url", "model_url"])?,
            source_doi: first(&["doi", "model_doi"])?,
            source_uuid: first(&["uuid", "model_uuid"])?,
            source_repo_url: first(&["repo_url", "model_repo_url"])?,
            base_models: card_sources(
                file,
                card,
                &["base_model", "base_models", "base_model_sources"],
                total_params,
            )?,
            datasets: card_sources(
                file,
                card,
                &["datasets", "dataset", "dataset_sources"],
                total_params,
            )?,
            license: match card.get("license") {
                // A list of licences is written joined by commas.
                Some(Value::Array(items)) => Some(
                    items
                        .iter()
                        .map(|i| {
                            i.as_str().map(str::to_owned).ok_or_else(|| {
                                config_error(
                                    file,
                                    format!("model card license {i} is not a string"),
                                )
                            })
                        })
                        .collect::<Result<Vec<_>>>()?
                        .join(","),
                ),
                Some(v) => card_string(file, "license", v)?,
                None => None,
            },
            license_name: first(&["license_name"])?,
            license_link: first(&["license_link"])?,
            tags: card_list(file, card, &["tags", "pipeline_tag"])?,
            languages: card_list(file, card, &["languages", "language"])?,
        })
    }
}

/// What a file is (`general.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A model.
    Model,
    /// A LoRA adapter (`adapter.type` `lora` follows).
    LoraAdapter,
    /// A vision projector (`mmproj`; its `general.*` keys are a model's).
    Projector,
}

/// Writes `general.type`, the sampling settings, `general.name` and the
/// other name keys, in the converter's order. `tensors` are the output
/// tensors' names and shapes (ggml order), for the parameter count.
/// Returns a note when README.md's front matter was there but ignored.
pub(crate) fn write(
    dir: &Path,
    raw_config: &Value,
    tensors: &[(&str, &[u64])],
    kind: Kind,
    keys: &mut Keys,
) -> Result<Option<String>> {
    let (total, shared, expert, expert_count) = parameter_counts(tensors.iter().copied());
    let card = card::read(dir)?;
    let mut g = General::from_card(&dir.join("README.md"), &card.map, total)?;
    if let Some(id) = raw_config.get("_name_or_path").and_then(Value::as_str)
        && id.matches('/').count() <= 1
    {
        g.fill(id_components(id, total));
    }
    // The directory's own name, as the converter sees it (a trailing
    // slash or `.` resolved).
    let dir_name = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    g.fill(id_components(&dir_name, total));
    if g.name.is_none() {
        g.name = Some(dir_name);
    }
    if g.size_label.is_none() && total > 0 {
        g.size_label = Some(size_label_of(total, shared, expert, expert_count));
    }

    match kind {
        Kind::Model => keys.set("general.type", "model"),
        Kind::LoraAdapter => {
            keys.set("general.type", "adapter");
            keys.set("adapter.type", "lora");
        }
        Kind::Projector => keys.set("general.type", "mmproj"),
    }
    sampling(dir, keys)?;
    let string = |keys: &mut Keys, key: &str, v: &Option<String>| {
        // gguf-py's add_string drops empty strings.
        if let Some(v) = v.as_ref().filter(|v| !v.is_empty()) {
            keys.set(key, v.as_str());
        }
    };
    string(keys, "general.name", &g.name);
    string(keys, "general.author", &g.author);
    string(keys, "general.version", &g.version);
    string(keys, "general.organization", &g.organization);
    string(keys, "general.finetune", &g.finetune);
    string(keys, "general.basename", &g.basename);
    string(keys, "general.description", &g.description);
    string(keys, "general.size_label", &g.size_label);
    string(keys, "general.license", &g.license);
    string(keys, "general.license.name", &g.license_name);
    string(keys, "general.license.link", &g.license_link);
    string(keys, "general.source.url", &g.source_url);
    string(keys, "general.source.doi", &g.source_doi);
    string(keys, "general.source.uuid", &g.source_uuid);
    string(keys, "general.source.repo_url", &g.source_repo_url);
    for (group, sources) in [("base_model", &g.base_models), ("dataset", &g.datasets)] {
        let Some(sources) = sources else { continue };
        keys.set(format!("general.{group}.count"), sources.len() as u32);
        for (i, fields) in sources.iter().enumerate() {
            for (field, value) in fields {
                string(
                    keys,
                    &format!("general.{group}.{i}.{field}"),
                    &Some(value.clone()),
                );
            }
        }
    }
    for (key, list) in [
        ("general.tags", &g.tags),
        ("general.languages", &g.languages),
    ] {
        // gguf-py's add_array drops empty lists.
        if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
            keys.set(key, OwnedValue::Array(OwnedArray::String(list.clone())));
        }
    }
    Ok(card.note)
}

/// `general.sampling.*` from `generation_config.json` (ignored when it is
/// missing or malformed, as the converter ignores it).
fn sampling(dir: &Path, keys: &mut Keys) -> Result<()> {
    let file = dir.join("generation_config.json");
    let text = match gguf_core::read::read_capped(&file, gguf_core::read::MAX_TEXT_INPUT) {
        Ok(text) => text,
        // Not a regular file, or too large: refused, naming it.
        Err(e @ gguf_core::Error::Source(_)) => return Err(e.into()),
        Err(_) => return Ok(()),
    };
    let Ok(Value::Object(generation)) = serde_json::from_slice::<Value>(&text) else {
        return Ok(());
    };
    enum Kind {
        Str,
        I32,
        F32,
    }
    let fields: [(&str, &[&str], Kind); 12] = [
        ("sequence", &["sequence"], Kind::Str),
        ("top_k", &["top_k"], Kind::I32),
        ("top_p", &["top_p"], Kind::F32),
        ("min_p", &["min_p"], Kind::F32),
        ("xtc_probability", &["xtc_probability"], Kind::F32),
        ("xtc_threshold", &["xtc_threshold"], Kind::F32),
        ("temp", &["temperature"], Kind::F32),
        ("penalty_last_n", &["penalty_last_n"], Kind::I32),
        (
            "penalty_repeat",
            &["penalty_repeat", "repetition_penalty"],
            Kind::F32,
        ),
        ("mirostat", &["mirostat"], Kind::I32),
        ("mirostat_tau", &["mirostat_tau"], Kind::F32),
        ("mirostat_eta", &["mirostat_eta"], Kind::F32),
    ];
    for (suffix, names, kind) in fields {
        // `gen.get(a, gen.get(b, None))`: the first name present wins,
        // even when its value is null.
        let Some(v) = names.iter().find_map(|n| generation.get(*n)) else {
            continue;
        };
        if v.is_null() {
            continue;
        }
        let key = format!("general.sampling.{suffix}");
        let bad = |want: &str| config_error(&file, format!("{:?} is {v}, not {want}", names[0]));
        match kind {
            Kind::Str => {
                let s = v.as_str().ok_or_else(|| bad("a string"))?;
                if !s.is_empty() {
                    keys.set(key, s);
                }
            }
            Kind::I32 => {
                let n = v
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| bad("a 32-bit integer"))?;
                keys.set(key, n);
            }
            Kind::F32 => {
                let f = v.as_f64().ok_or_else(|| bad("a number"))?;
                keys.set(key, f as f32);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(id: &str, total: i128) -> [Option<String>; 4] {
        let c = id_components(id, total);
        [c.basename, c.size_label, c.finetune, c.version]
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_owned())
    }

    #[test]
    fn components_follow_gguf_py() {
        // Cases from gguf-py's tests/test_metadata.py.
        assert_eq!(
            parts("Mixtral-8x7B-Instruct-v0.1", 0),
            [s("Mixtral"), s("8x7B"), s("Instruct"), s("v0.1")]
        );
        assert_eq!(
            parts("Meta-Llama-3-8B", 0),
            [s("Meta-Llama-3"), s("8B"), None, None]
        );
        assert_eq!(parts("llama-bpe", 1000), [None, None, None, None]);
        assert_eq!(
            parts("Qwen2.5-0.5B-Instruct", 0),
            [s("Qwen2.5"), s("0.5B"), s("Instruct"), None]
        );
        // A size far from the parameter count is a context length.
        assert_eq!(
            parts("hermes-2-pro-llama-3-8b-32k", 8_000_000_000),
            [s("hermes-2-pro-llama-3"), s("8B"), s("32k"), None]
        );
        assert_eq!(
            parts("bloom-7b1-petals", 0),
            [s("bloom"), s("7.1B"), s("petals"), None]
        );
    }

    #[test]
    fn every_pattern_compiles() {
        let p = patterns();
        for (name, pattern) in [
            ("title_version", &p.title_version),
            ("version", &p.version),
            ("quant_type", &p.quant_type),
            ("size", &p.size),
            ("finetune", &p.finetune),
            ("hub_url", &p.hub_url),
        ] {
            assert!(pattern.is_some(), "{name} does not compile");
        }
    }

    #[test]
    fn titles_follow_python() {
        assert_eq!(id_to_title("llama-bpe"), "Llama Bpe");
        assert_eq!(id_to_title("qwen2-bias"), "Qwen2 Bias");
        assert_eq!(
            id_to_title("Mixtral-8x7B-Instruct-v0.1"),
            "Mixtral 8x7B Instruct v0.1"
        );
        assert_eq!(id_to_title("gemma3"), "Gemma3");
        assert_eq!(id_to_title("mistral-swa"), "Mistral Swa");
        // A version is the whole word: `v1x` is a word Python title-cases.
        assert_eq!(id_to_title("model-v1x-v2.0-3b"), "Model V1X v2.0 3b");
    }
}
