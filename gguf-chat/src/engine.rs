//! The engine as llama.cpp's: minijinja configured like llama.cpp's `common/jinja/`
//! (trim_blocks, lstrip_blocks), and what llama.cpp has that minijinja lacks or does
//! differently: `raise_exception`, `strftime_now`, `tojson`'s spacing, Python's string and
//! dict methods, the text of `None`, booleans, floats, lists and objects.

use minijinja::budget;
use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Environment, Error as MjError, ErrorKind, State, UndefinedBehavior};

use crate::options::{strftime, Limits};

use crate::values::{ensure_ascii, items, plain_text, to_json, JsonStyle};

/// The prefix `raise_exception` gives its error's detail, so that a render tells a template's
/// own refusal from an engine error.
pub(crate) const RAISED: &str = "\u{0}raise_exception\u{0}";

/// An environment for one template: no loader (nothing to include, import or extend), no
/// auto-escaping, the limits set.
pub(crate) fn environment(limits: &Limits, now: i64) -> Environment<'static> {
    // minijinja's built-in filters, tests and globals (`builtins`), then ours over them.
    let mut env = Environment::new();
    // `debug()` would print the whole context; the context is only the documented data, but a
    // prompt has no use for it.
    env.add_function("debug", || Value::from(""));
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .expect("the default delimiters are valid"),
    );
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_formatter(|out, _state, value| {
        out.write_str(&plain_text(value))
            .map_err(|_| MjError::new(ErrorKind::WriteFailure, "output"))
    });
    env.set_unknown_method_callback(method);
    env.set_method_value_callback(|value, name| llama_builtin(value.kind(), name));
    env.add_function(
        "raise_exception",
        |msg: Option<Value>| -> Result<Value, MjError> {
            let text = msg.map(|m| plain_text(&m)).unwrap_or_default();
            Err(MjError::new(
                ErrorKind::InvalidOperation,
                format!("{RAISED}{text}"),
            ))
        },
    );
    env.add_function(
        "strftime_now",
        move |fmt: String| -> Result<Value, MjError> { Ok(Value::from(strftime(&fmt, now))) },
    );
    env.add_filter("tojson", tojson);
    env.add_filter("string", |v: Value| Value::from(plain_text(&v)));
    env.add_filter("truncate", truncate);
    env.add_filter("indent", indent);
    env.add_filter("wordcount", |v: Value| {
        Value::from(plain_text(&v).split_whitespace().count())
    });
    env.add_test("escaped", |v: Value| v.is_safe());
    env.add_test("callable", |v: Value| {
        matches!(v.kind(), ValueKind::Plain) && v.as_object().is_some()
    });
    env.add_function("dict", dict);
    env.add_filter("safe", |v: Value| Value::from_safe_string(plain_text(&v)));
    env
}

/// What a list slot costs of the formatting budget when a method makes a list of pieces.
const LIST_SLOT_BYTES: usize = 32;

/// Runs one render within `limits`' formatting budget ([`budget`]): a budget spent by the
/// render's last instruction, which the engine itself has no next instruction to see, is
/// reported here.
pub(crate) fn bounded<T>(
    limits: &Limits,
    render: impl FnOnce() -> Result<T, MjError>,
) -> Result<T, MjError> {
    budget::with_budget(limits.format_bytes, || {
        // minijinja reports what goes wrong as errors; a panic inside it (an allocation size
        // overflowing) is turned into one too, never let through to the caller.
        let out =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(render)).map_err(|_| {
                MjError::new(
                    ErrorKind::InvalidOperation,
                    "the engine failed (a value grew past what can be allocated)",
                )
            })??;
        budget::check()?;
        Ok(out)
    })
}

/// A filter's argument given by keyword `name` or as its `i`-th positional argument (after
/// the value filtered), as Python's calls take them.
fn arg(kwargs: &Kwargs, args: &[Value], name: &str, i: usize) -> Result<Option<Value>, MjError> {
    Ok(kwargs
        .get::<Option<Value>>(name)?
        .or_else(|| args.get(i).cloned()))
}

/// `indent(width=4, first=false, blank=false)` as llama.cpp's engine has it: the width a number
/// of spaces or the indent text itself, a trailing newline kept (and indented with `blank`),
/// and, as there, the first line counted as "first" until something has been written.
fn indent(v: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, MjError> {
    let width = arg(&kwargs, &args, "width", 0)?;
    let first = arg(&kwargs, &args, "first", 1)?.is_some_and(|v| v.is_true());
    let blank = arg(&kwargs, &args, "blank", 2)?.is_some_and(|v| v.is_true());
    kwargs.assert_all_used()?;
    let Some(input) = v.as_str() else {
        return Err(MjError::new(
            ErrorKind::InvalidOperation,
            "indent() first argument must be a string",
        ));
    };
    let pad = match (
        width.as_ref().and_then(Value::as_str),
        width.as_ref().and_then(Value::as_i64),
    ) {
        (Some(text), _) => text.to_string(),
        (None, Some(n)) => {
            budget::charge(n.max(0) as usize)?;
            " ".repeat(n.max(0) as usize)
        }
        _ => "    ".to_string(),
    };
    let lines: Vec<&str> = match input.strip_suffix('\n') {
        Some(body) => body.split('\n').collect(),
        None if input.is_empty() => Vec::new(),
        None => input.split('\n').collect(),
    };
    budget::charge(
        input
            .len()
            .saturating_add((lines.len() + 1).saturating_mul(pad.len())),
    )?;
    let mut out = String::new();
    for line in lines {
        let at_start = out.is_empty();
        if !at_start {
            out.push('\n');
        }
        let padded = if at_start {
            first
        } else {
            !line.is_empty() || blank
        };
        if padded {
            out.push_str(&pad);
        }
        out.push_str(line);
    }
    if input.ends_with('\n') {
        out.push('\n');
        if blank {
            out.push_str(&pad);
        }
    }
    Ok(Value::from(out))
}

/// `dict(pairs, **kwargs)`: a list of key/value pairs and keyword items.
fn dict(args: Rest<Value>, kwargs: Kwargs) -> Result<Value, MjError> {
    let mut pairs: Vec<(Value, Value)> = Vec::new();
    let mut put = |k: Value, v: Value| match pairs.iter_mut().find(|(pk, _)| *pk == k) {
        Some(slot) => slot.1 = v,
        None => pairs.push((k, v)),
    };
    if let Some(first) = args.first() {
        if first.kind() == ValueKind::Map {
            for k in first.try_iter()? {
                let v = first.get_item(&k)?;
                put(k, v);
            }
        } else if !first.is_none() && !first.is_undefined() {
            for pair in first.try_iter()? {
                let kv: Vec<Value> = pair.try_iter()?.collect();
                let [k, v] = <[Value; 2]>::try_from(kv).map_err(|_| {
                    MjError::new(
                        ErrorKind::InvalidOperation,
                        "dict(): each item must be a pair",
                    )
                })?;
                put(k, v);
            }
        }
    }
    for k in kwargs.args() {
        let v: Value = kwargs.get(k)?;
        put(Value::from(k), v);
    }
    Ok(Value::from_pairs(pairs))
}

/// `truncate(length=255, killwords=false, end='...', leeway=5)` as Jinja's.
fn truncate(v: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, MjError> {
    if v.is_undefined() || v.is_none() {
        return Ok(Value::from(""));
    }
    let s = plain_text(&v);
    let len = kwargs
        .get::<Option<usize>>("length")?
        .or_else(|| args.first().and_then(Value::as_usize))
        .unwrap_or(255);
    let killwords = kwargs
        .get::<Option<bool>>("killwords")?
        .or_else(|| args.get(1).map(Value::is_true))
        .unwrap_or(false);
    let end = kwargs
        .get::<Option<String>>("end")?
        .or_else(|| args.get(2).map(plain_text))
        .unwrap_or_else(|| "...".into());
    let leeway = kwargs.get::<Option<usize>>("leeway")?.unwrap_or(5);
    let n = s.chars().count();
    if n <= len + leeway {
        return Ok(Value::from(s));
    }
    let keep = len.saturating_sub(end.chars().count());
    let cut: String = s.chars().take(keep).collect();
    let cut = if killwords {
        cut
    } else {
        match cut.rfind(' ') {
            Some(i) => cut[..i].to_string(),
            None => cut,
        }
    };
    Ok(Value::from(cut + &end))
}

/// For the capability probe: `string` of a list or object as JSON rather than Python's
/// `repr`, so that the probe tells a value written whole by `string` (which llama.cpp counts
/// as reading every item) from one written by `+`, `~` or `{{ }}` (which it does not).
pub(crate) fn probe_string(v: Value) -> Value {
    match v.kind() {
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => {
            Value::from(json_text(&v, None, None))
        }
        _ => Value::from(plain_text(&v)),
    }
}

fn json_text(v: &Value, indent: Option<usize>, seps: Option<(String, String)>) -> String {
    let (item, key) = seps.unwrap_or_else(|| {
        (
            if indent.is_some() { "," } else { ", " }.to_string(),
            ": ".to_string(),
        )
    });
    let mut s = String::new();
    to_json(
        &mut s,
        v,
        &JsonStyle {
            indent,
            item_sep: &item,
            key_sep: &key,
        },
        0,
    );
    s
}

/// `tojson(value, ensure_ascii=false, indent=None, separators=None, sort_keys=false)`, laid out
/// as llama.cpp's engine does (Python's `json.dumps` spacing, not minijinja's compact form,
/// and no HTML escaping).
fn tojson(v: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, MjError> {
    let ascii = arg(&kwargs, &args, "ensure_ascii", 0)?.is_some_and(|v| v.is_true());
    let indent = arg(&kwargs, &args, "indent", 1)?;
    let indent = indent.and_then(|i| i.as_i64()).map(|i| i.max(0) as usize);
    let seps = arg(&kwargs, &args, "separators", 2)?;
    let seps = seps.and_then(|s| {
        let items: Vec<Value> = s.try_iter().ok()?.collect();
        Some((
            items.first().map(plain_text).unwrap_or_default(),
            items.get(1).map(plain_text).unwrap_or_else(|| ": ".into()),
        ))
    });
    let sort = arg(&kwargs, &args, "sort_keys", 3)?.is_some_and(|v| v.is_true());
    kwargs.assert_all_used()?;
    let v = if sort { sorted_keys(&v) } else { v };
    let s = json_text(&v, indent, seps);
    budget::check()?;
    Ok(Value::from(if ascii {
        budget::charge(s.len().saturating_mul(5))?;
        ensure_ascii(&s)
    } else {
        s
    }))
}

/// Objects with their keys in order, all the way down.
fn sorted_keys(v: &Value) -> Value {
    match v.kind() {
        ValueKind::Map => {
            let mut keys: Vec<Value> = v.try_iter().map(|i| i.collect()).unwrap_or_default();
            keys.sort_by_key(plain_text);
            Value::from_pairs(keys.into_iter().map(|k| {
                let item = sorted_keys(&v.get_item(&k).unwrap_or_default());
                (k, item)
            }))
        }
        ValueKind::Seq => Value::from(
            v.try_iter()
                .map(|i| i.map(|x| sorted_keys(&x)).collect::<Vec<_>>())
                .unwrap_or_default(),
        ),
        _ => v.clone(),
    }
}

fn arg_str(args: &[Value], i: usize) -> Option<String> {
    args.get(i)
        .filter(|v| !v.is_none() && !v.is_undefined())
        .map(plain_text)
}

fn strip_by(s: &str, chars: Option<&str>, left: bool, right: bool) -> String {
    let pred = |c: char| match chars {
        Some(set) => set.contains(c),
        None => c.is_whitespace(),
    };
    let mut t = s;
    if left {
        t = t.trim_start_matches(pred);
    }
    if right {
        t = t.trim_end_matches(pred);
    }
    t.to_string()
}

fn split(s: &str, sep: Option<&str>, max: Option<i64>, from_right: bool) -> Result<Value, MjError> {
    let max = max.filter(|m| *m >= 0).map(|m| m as usize);
    // Every piece is a list slot: a long string split at every character is a long list.
    let pieces = match sep {
        Some(sep) if !sep.is_empty() => s.matches(sep).count(),
        _ => s.split_whitespace().count(),
    };
    budget::charge(
        s.len()
            .saturating_add(pieces.saturating_mul(LIST_SLOT_BYTES)),
    )?;
    let parts: Vec<String> = match sep {
        Some("") => {
            return Err(MjError::new(ErrorKind::InvalidOperation, "empty separator"));
        }
        Some(sep) => match (max, from_right) {
            (Some(m), false) => s.splitn(m + 1, sep).map(String::from).collect(),
            (Some(m), true) => {
                let mut v: Vec<String> = s.rsplitn(m + 1, sep).map(String::from).collect();
                v.reverse();
                v
            }
            (None, _) => s.split(sep).map(String::from).collect(),
        },
        None => s.split_whitespace().map(String::from).collect(),
    };
    Ok(Value::from(parts))
}

fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        if prev_cased {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        prev_cased = c.is_alphabetic();
    }
    out
}

fn py_capitalize(s: &str) -> String {
    let mut it = s.chars();
    match it.next() {
        Some(f) => f
            .to_uppercase()
            .chain(it.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// `str.format` with positional `{}` / `{0}` and named `{name}` fields.
fn py_format(s: &str, args: &[Value]) -> Result<String, MjError> {
    // Keyword arguments arrive as a last value of their own.
    let (named, args) = match args.split_last() {
        Some((last, rest)) if last.is_kwargs() => (Some(last), rest),
        _ => (None, args),
    };
    let mut out = String::new();
    let mut auto = 0usize;
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '{' if it.peek() == Some(&'{') => {
                it.next();
                out.push('{');
            }
            '}' if it.peek() == Some(&'}') => {
                it.next();
                out.push('}');
            }
            '{' => {
                let mut field = String::new();
                for d in it.by_ref() {
                    if d == '}' {
                        break;
                    }
                    field.push(d);
                }
                let v = if field.is_empty() || field.bytes().all(|b| b.is_ascii_digit()) {
                    let idx = if field.is_empty() {
                        auto += 1;
                        auto - 1
                    } else {
                        field.parse::<usize>().map_err(|_| {
                            MjError::new(ErrorKind::InvalidOperation, "str.format: bad field")
                        })?
                    };
                    args.get(idx).cloned().ok_or_else(|| {
                        MjError::new(ErrorKind::InvalidOperation, "str.format: too few arguments")
                    })?
                } else {
                    named
                        .and_then(|k| k.get_attr(&field).ok())
                        .filter(|v| !v.is_undefined())
                        .ok_or_else(|| {
                            MjError::new(
                                ErrorKind::InvalidOperation,
                                format!("str.format: no argument named {field}"),
                            )
                        })?
                };
                let text = plain_text(&v);
                budget::charge(text.len())?;
                out.push_str(&text);
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Python's methods on strings, dicts and lists, as llama.cpp's engine has them.
/// Whether llama.cpp's engine has the built-in `name` for a value of this kind. There filters
/// and methods are one table per type: `s.length()` is `s|length`, and `''.strip`, read without
/// a call, is a value (a method bound to the string), as is `{}.keys`, before any item so named.
fn llama_builtin(kind: ValueKind, name: &str) -> bool {
    let names: &[&str] = match kind {
        ValueKind::Number | ValueKind::Bool => {
            &["default", "abs", "int", "float", "safe", "string", "tojson"]
        }
        ValueKind::String => &[
            "default",
            "upper",
            "lower",
            "strip",
            "rstrip",
            "lstrip",
            "title",
            "capitalize",
            "length",
            "startswith",
            "endswith",
            "split",
            "rsplit",
            "replace",
            "format",
            "int",
            "float",
            "string",
            "slice",
            "safe",
            "tojson",
            "indent",
            "join",
        ],
        ValueKind::Seq => &[
            "default",
            "list",
            "first",
            "last",
            "length",
            "slice",
            "selectattr",
            "select",
            "rejectattr",
            "reject",
            "join",
            "string",
            "tojson",
            "map",
            "append",
            "pop",
            "sort",
            "reverse",
            "min",
            "max",
            "unique",
        ],
        ValueKind::Map => &[
            "get", "keys", "values", "items", "tojson", "string", "length", "dictsort", "join",
        ],
        ValueKind::None => &[
            "default",
            "tojson",
            "string",
            "safe",
            "items",
            "map",
            "reject",
            "rejectattr",
            "select",
            "selectattr",
            "unique",
        ],
        ValueKind::Undefined => &[
            "default",
            "capitalize",
            "first",
            "items",
            "join",
            "last",
            "length",
            "list",
            "lower",
            "map",
            "max",
            "min",
            "reject",
            "rejectattr",
            "replace",
            "reverse",
            "safe",
            "select",
            "selectattr",
            "sort",
            "string",
            "strip",
            "sum",
            "title",
            "truncate",
            "unique",
            "upper",
            "wordcount",
        ],
        _ => &[],
    };
    names.contains(&name)
}

fn method(state: &mut State, value: &Value, name: &str, args: &[Value]) -> Result<Value, MjError> {
    match python_method(value, name, args) {
        // What llama.cpp has as a built-in of the value but Python has not as a method
        // (`s.length()`, `list.first()`) is the filter of that name.
        Err(e) if e.kind() == ErrorKind::UnknownMethod && llama_builtin(value.kind(), name) => {
            let mut all = Vec::with_capacity(args.len() + 1);
            all.push(value.clone());
            all.extend_from_slice(args);
            state.apply_filter(name, &all).map_err(|f| {
                if f.kind() == ErrorKind::UnknownFilter {
                    e
                } else {
                    f
                }
            })
        }
        other => other,
    }
}

fn python_method(value: &Value, name: &str, args: &[Value]) -> Result<Value, MjError> {
    let unknown = || {
        MjError::new(
            ErrorKind::UnknownMethod,
            format!("{} has no method named {name}", value.kind()),
        )
    };
    match value.kind() {
        ValueKind::String => {
            let s = value.as_str().unwrap_or("");
            let a0 = arg_str(args, 0);
            Ok(match name {
                "strip" => Value::from(strip_by(s, a0.as_deref(), true, true)),
                "lstrip" => Value::from(strip_by(s, a0.as_deref(), true, false)),
                "rstrip" => Value::from(strip_by(s, a0.as_deref(), false, true)),
                "upper" => Value::from(s.to_uppercase()),
                "lower" => Value::from(s.to_lowercase()),
                "title" => Value::from(py_title(s)),
                "capitalize" => Value::from(py_capitalize(s)),
                "split" | "rsplit" => split(
                    s,
                    a0.as_deref(),
                    args.get(1).and_then(Value::as_i64),
                    name == "rsplit",
                )?,
                "splitlines" => {
                    budget::charge(s.len().saturating_add(s.lines().count() * LIST_SLOT_BYTES))?;
                    Value::from(s.lines().map(String::from).collect::<Vec<_>>())
                }
                "startswith" | "endswith" => {
                    let test = |p: &str| {
                        if name == "startswith" {
                            s.starts_with(p)
                        } else {
                            s.ends_with(p)
                        }
                    };
                    let hit = match args.first() {
                        Some(v) if v.kind() == ValueKind::Seq => v
                            .try_iter()
                            .map(|mut i| i.any(|p| test(&plain_text(&p))))
                            .unwrap_or(false),
                        Some(v) => test(&plain_text(v)),
                        None => return Err(unknown()),
                    };
                    Value::from(hit)
                }
                "replace" => {
                    let (Some(old), Some(new)) = (a0, arg_str(args, 1)) else {
                        return Err(unknown());
                    };
                    // What the result can grow to is paid before it is made.
                    let hits = if old.is_empty() {
                        s.chars().count() + 1
                    } else {
                        s.matches(old.as_str()).count()
                    };
                    budget::charge(s.len().saturating_add(hits.saturating_mul(new.len())))?;
                    match args.get(2).and_then(Value::as_i64) {
                        Some(n) if n >= 0 => Value::from(s.replacen(&old, &new, n as usize)),
                        _ => Value::from(s.replace(&old, &new)),
                    }
                }
                "find" | "index" | "rfind" => {
                    let Some(sub) = a0 else { return Err(unknown()) };
                    let at = if name == "rfind" {
                        s.rfind(&sub)
                    } else {
                        s.find(&sub)
                    };
                    match at {
                        Some(b) => Value::from(s[..b].chars().count() as i64),
                        None if name == "index" => {
                            return Err(MjError::new(
                                ErrorKind::InvalidOperation,
                                "substring not found",
                            ));
                        }
                        None => Value::from(-1),
                    }
                }
                "count" => {
                    let Some(sub) = a0 else { return Err(unknown()) };
                    Value::from(if sub.is_empty() {
                        s.chars().count() + 1
                    } else {
                        s.matches(&sub).count()
                    })
                }
                "join" => {
                    let mut out = String::new();
                    for (i, v) in items(args.first().ok_or_else(unknown)?).iter().enumerate() {
                        let text = plain_text(v);
                        budget::charge(text.len().saturating_add(s.len()))?;
                        if i > 0 {
                            out.push_str(s);
                        }
                        out.push_str(&text);
                    }
                    budget::check()?;
                    Value::from(out)
                }
                "format" => Value::from(py_format(s, args)?),
                "isdigit" => Value::from(!s.is_empty() && s.chars().all(|c| c.is_ascii_digit())),
                "isalpha" => Value::from(!s.is_empty() && s.chars().all(char::is_alphabetic)),
                "isspace" => Value::from(!s.is_empty() && s.chars().all(char::is_whitespace)),
                "isupper" => Value::from(
                    s.chars().any(char::is_uppercase) && !s.chars().any(char::is_lowercase),
                ),
                "islower" => Value::from(
                    s.chars().any(char::is_lowercase) && !s.chars().any(char::is_uppercase),
                ),
                _ => return Err(unknown()),
            })
        }
        ValueKind::Map => match name {
            "items" => {
                let keys = items(value);
                budget::check()?;
                Ok(Value::from(
                    keys.into_iter()
                        .map(|k| {
                            let v = value.get_item(&k).unwrap_or_default();
                            Value::from(vec![k, v])
                        })
                        .collect::<Vec<_>>(),
                ))
            }
            "keys" => Ok(Value::from(items(value))),
            "values" => Ok(Value::from(
                items(value)
                    .iter()
                    .map(|k| value.get_item(k).unwrap_or_default())
                    .collect::<Vec<_>>(),
            )),
            "get" => {
                let key = args.first().ok_or_else(unknown)?;
                let v = value.get_item(key).unwrap_or_default();
                Ok(if v.is_undefined() {
                    args.get(1).cloned().unwrap_or(Value::from(()))
                } else {
                    v
                })
            }
            _ => Err(unknown()),
        },
        _ => Err(unknown()),
    }
}
