//! `gguf set`, `gguf rm`, `gguf mv`, `gguf rename-tensor`: metadata edits,
//! in place when they fit.

use std::path::PathBuf;

use gguf::edit::{Commit, ModelEditor};
use gguf::format::{OwnedArray, OwnedValue};
use gguf::{Gguf, Value, ValueType};

type CliResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

#[derive(clap::Args)]
pub struct SetArgs {
    /// The GGUF file to edit.
    file: PathBuf,
    /// The metadata key.
    key: String,
    /// The value: text for scalars and strings, a JSON array for arrays.
    /// Omit it with --from-file. Numbers must fit the type (1e40 is no
    /// f32); inf and nan are stored only when spelled so. A value that
    /// starts with '-' and is not a number goes after `--`.
    #[arg(required_unless_present = "from_file", allow_negative_numbers = true)]
    value: Option<String>,
    /// Value type: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool string, or
    /// an array type such as [u32] or [string]. gguf-py's spellings work
    /// too: uint32, float32, ... (any case) and str, int (i32), float
    /// (f32). Taken from the existing key when it is present (another
    /// type then needs --force); required for a new key.
    #[arg(long = "type", value_name = "T", value_parser = parse_type)]
    ty: Option<CliType>,
    /// Read the value from a file, as a string (for long strings such as a
    /// chat template); the file's text is taken verbatim.
    #[arg(long, value_name = "PATH", conflicts_with = "value")]
    from_file: Option<PathBuf>,
    /// Allow changing the type of an existing key (readers that expect
    /// the old type will fail on the new one).
    #[arg(long)]
    force: bool,
    /// Show what would happen without writing.
    #[arg(long)]
    dry_run: bool,
    /// When the file has to be rewritten, reserve no header slack (by
    /// default 4 KiB, the entry gguf_rs.metadata_slack, so the next edit is
    /// in place), and let a header that shrinks move the data.
    #[arg(long)]
    no_slack: bool,
}

#[derive(clap::Args)]
pub struct RmArgs {
    /// The GGUF file to edit.
    file: PathBuf,
    /// The key to remove.
    key: String,
    /// Show what would happen without writing.
    #[arg(long)]
    dry_run: bool,
    /// When the file has to be rewritten, reserve no header slack (by
    /// default 4 KiB, the entry gguf_rs.metadata_slack, so the next edit is
    /// in place), and let a header that shrinks move the data.
    #[arg(long)]
    no_slack: bool,
}

#[derive(clap::Args)]
pub struct MvArgs {
    /// The GGUF file to edit.
    file: PathBuf,
    /// Current name.
    old: String,
    /// New name.
    new: String,
    /// Show what would happen without writing.
    #[arg(long)]
    dry_run: bool,
    /// When the file has to be rewritten, reserve no header slack (by
    /// default 4 KiB, the entry gguf_rs.metadata_slack, so the next edit is
    /// in place), and let a header that shrinks move the data.
    #[arg(long)]
    no_slack: bool,
}

/// A value type as given on the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
enum CliType {
    Scalar(ValueType),
    Array(ValueType),
}

impl std::fmt::Display for CliType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliType::Scalar(t) => write!(f, "{t}"),
            CliType::Array(t) => write!(f, "[{t}]"),
        }
    }
}

/// The type of a stored value as `--type` spells it (`[array]` for a
/// nested array).
fn stored_type(v: &Value<'_>) -> CliType {
    match v {
        Value::Array(a) => CliType::Array(a.element_type()),
        other => CliType::Scalar(other.value_type()),
    }
}

fn parse_type(s: &str) -> Result<CliType, String> {
    let inner = s.strip_prefix('[').and_then(|r| r.strip_suffix(']'));
    let (name, array) = match inner {
        Some(inner) => (inner, true),
        None => (s, false),
    };
    let ty = ValueType::from_name(alias(name))
        .filter(|t| *t != ValueType::Array)
        .ok_or_else(|| {
            format!(
                "unknown type {s:?} (use u8..u64, i8..i64, f32, f64, bool, string, \
                 gguf-py's names such as uint32 or float32, or [T] for arrays)"
            )
        })?;
    Ok(if array {
        CliType::Array(ty)
    } else {
        CliType::Scalar(ty)
    })
}

/// gguf-py's spellings of value types: `GGUFValueType` names (any case)
/// and the Python types its writer maps (`str`, `int` -> i32, `float` ->
/// f32), as `gguf_set_metadata`/`gguf_new_metadata` users type them.
fn alias(name: &str) -> &str {
    match name.to_ascii_lowercase().as_str() {
        "str" => "string",
        "int" | "int32" => "i32",
        "float" | "float32" => "f32",
        "float64" | "double" => "f64",
        "uint8" => "u8",
        "int8" => "i8",
        "uint16" => "u16",
        "int16" => "i16",
        "uint32" => "u32",
        "uint64" => "u64",
        "int64" => "i64",
        "bool" => "bool",
        "string" => "string",
        _ => name,
    }
}

fn existing_type(v: &Value<'_>) -> CliResult<CliType> {
    Ok(match v {
        Value::Array(a) if a.element_type() == ValueType::Array => {
            return Err("editing nested arrays from the command line is not supported".into())
        }
        Value::Array(a) => CliType::Array(a.element_type()),
        other => CliType::Scalar(other.value_type()),
    })
}

/// The smallest and largest value of an integer type.
fn int_range(ty: ValueType) -> (i128, i128) {
    match ty {
        ValueType::U8 => (0, u8::MAX.into()),
        ValueType::I8 => (i8::MIN.into(), i8::MAX.into()),
        ValueType::U16 => (0, u16::MAX.into()),
        ValueType::I16 => (i16::MIN.into(), i16::MAX.into()),
        ValueType::U32 => (0, u32::MAX.into()),
        ValueType::I32 => (i32::MIN.into(), i32::MAX.into()),
        ValueType::U64 => (0, u64::MAX.into()),
        _ => (i64::MIN.into(), i64::MAX.into()),
    }
}

/// An integer of `ty`; a number outside its range says the range.
fn parse_int<T: TryFrom<i128>>(ty: ValueType, text: &str) -> CliResult<T> {
    let n: i128 = text
        .trim()
        .parse()
        .map_err(|e| format!("{text:?} is not a valid {ty}: {e}"))?;
    T::try_from(n).map_err(|_| {
        let (lo, hi) = int_range(ty);
        format!("{text:?} is out of range for {ty} ({lo} to {hi})").into()
    })
}

/// A float of `ty` (F32 or F64). Infinity and NaN are stored only when
/// spelled out (`inf`, `-inf`, `nan`); a number too large for the type is
/// an error rather than infinity, and a non-zero number too small for it
/// an error rather than zero.
fn parse_float(ty: ValueType, text: &str) -> CliResult<f64> {
    let t = text.trim();
    let v: f64 = t
        .parse()
        .map_err(|e| format!("{text:?} is not a valid {ty}: {e}"))?;
    if !v.is_finite() && !t.chars().any(|c| c.is_ascii_digit()) {
        return Ok(v); // inf, -infinity, NaN: asked for by name
    }
    // The largest finite and the smallest non-zero magnitudes.
    let (max_text, min_text) = match ty {
        ValueType::F32 => (
            format!("{:e}", f32::MAX),
            format!("{:e}", f32::from_bits(1)),
        ),
        _ => (
            format!("{:e}", f64::MAX),
            format!("{:e}", f64::from_bits(1)),
        ),
    };
    // Rounded to the type: a number a little above the largest finite
    // one still rounds to it; one that rounds to infinity overflowed.
    let stored = if ty == ValueType::F32 {
        f64::from(v as f32)
    } else {
        v
    };
    if !stored.is_finite() {
        return Err(format!(
            "{text:?} is out of range for {ty} (largest finite magnitude {max_text})"
        )
        .into());
    }
    // A mantissa with a non-zero digit that ends up as zero underflowed.
    let mantissa = t.split(['e', 'E']).next().unwrap_or(t);
    if stored == 0.0 && mantissa.chars().any(|c| ('1'..='9').contains(&c)) {
        return Err(format!(
            "{text:?} is too small for {ty}: it would be stored as 0 (smallest magnitude {min_text})"
        )
        .into());
    }
    Ok(v)
}

fn parse_scalar(ty: ValueType, text: &str) -> CliResult<OwnedValue> {
    let t = text.trim();
    let bad = |e: &dyn std::fmt::Display| -> Box<dyn std::error::Error> {
        format!("{text:?} is not a valid {ty}: {e}").into()
    };
    Ok(match ty {
        ValueType::U8 => OwnedValue::U8(parse_int(ty, text)?),
        ValueType::I8 => OwnedValue::I8(parse_int(ty, text)?),
        ValueType::U16 => OwnedValue::U16(parse_int(ty, text)?),
        ValueType::I16 => OwnedValue::I16(parse_int(ty, text)?),
        ValueType::U32 => OwnedValue::U32(parse_int(ty, text)?),
        ValueType::I32 => OwnedValue::I32(parse_int(ty, text)?),
        ValueType::U64 => OwnedValue::U64(parse_int(ty, text)?),
        ValueType::I64 => OwnedValue::I64(parse_int(ty, text)?),
        ValueType::F32 => OwnedValue::F32(parse_float(ty, text)? as f32),
        ValueType::F64 => OwnedValue::F64(parse_float(ty, text)?),
        ValueType::Bool => OwnedValue::Bool(match t {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => return Err(bad(&"expected true, false, 1 or 0")),
        }),
        // Strings are taken verbatim, whitespace included.
        ValueType::String => OwnedValue::String(text.to_owned()),
        ValueType::Array => return Err("nested arrays are not supported here".into()),
    })
}

fn parse_array(elem: ValueType, text: &str) -> CliResult<OwnedValue> {
    let json: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("array value must be a JSON array: {e}"))?;
    let items = json.as_array().ok_or("array value must be a JSON array")?;
    let scalars = items
        .iter()
        .map(|item| match (elem, item) {
            (ValueType::String, serde_json::Value::String(s)) => Ok(OwnedValue::String(s.clone())),
            (ValueType::String, other) => Err(format!("{other} is not a string").into()),
            (_, serde_json::Value::String(_)) => {
                Err(format!("{item} is not a valid {elem}").into())
            }
            (_, other) => parse_scalar(elem, &other.to_string()),
        })
        .collect::<CliResult<Vec<_>>>()?;
    macro_rules! collect {
        ($variant:ident) => {
            OwnedArray::$variant(
                scalars
                    .into_iter()
                    .filter_map(|v| {
                        if let OwnedValue::$variant(x) = v {
                            Some(x)
                        } else {
                            None
                        }
                    })
                    .collect(),
            )
        };
    }
    let array = match elem {
        ValueType::U8 => collect!(U8),
        ValueType::I8 => collect!(I8),
        ValueType::U16 => collect!(U16),
        ValueType::I16 => collect!(I16),
        ValueType::U32 => collect!(U32),
        ValueType::I32 => collect!(I32),
        ValueType::U64 => collect!(U64),
        ValueType::I64 => collect!(I64),
        ValueType::F32 => collect!(F32),
        ValueType::F64 => collect!(F64),
        ValueType::Bool => collect!(Bool),
        ValueType::String => collect!(String),
        ValueType::Array => return Err("nested arrays are not supported here".into()),
    };
    Ok(OwnedValue::Array(array))
}

/// The file's header size and slack entry before the edit, to say why it
/// is rewritten and what happened to its slack.
#[derive(Clone, Copy)]
struct Before {
    header: u64,
    slack: u64,
}

fn report(path: &std::path::Path, before: &Before, commit: Commit, dry_run: bool) -> CliResult {
    let verb = if dry_run { "would be" } else { "was" };
    let path = path.display();
    let text = match commit {
        Commit::InPlace {
            header_bytes,
            slack_bytes,
        } if before.slack == 0 && slack_bytes > 0 => format!(
            "{path}: edit {verb} made in place ({header_bytes} header bytes, tensor data \
             untouched); the room the header freed {} kept as {slack_bytes} bytes of header slack \
             for later edits",
            if dry_run { "would be" } else { "is" }
        ),
        Commit::InPlace { header_bytes, .. } => format!(
            "{path}: edit {verb} made in place ({header_bytes} header bytes, tensor data untouched)"
        ),
        Commit::Rewritten {
            file_bytes,
            header_bytes,
            slack_bytes,
        } => {
            let why = if header_bytes < before.header {
                format!(
                    "the header shrank from {} to {header_bytes} bytes, more than alignment \
                     padding absorbs, so the tensor data moved",
                    before.header
                )
            } else {
                "the new header does not fit in place".to_owned()
            };
            let slack = match slack_bytes {
                0 => String::new(),
                k => format!(
                    "; {} {k} bytes of header slack so the next edit is in place",
                    if dry_run { "would reserve" } else { "reserved" }
                ),
            };
            format!("{path}: file {verb} rewritten ({file_bytes} bytes): {why}{slack}")
        }
    };
    crate::print(&text)
}

/// Commits (or plans) the edit of every file of the model that changes:
/// the first shard for metadata, the tensor's shard for a rename.
fn finish(mut ed: ModelEditor, dry_run: bool, no_slack: bool) -> CliResult {
    if no_slack {
        ed.reserve_on_rewrite(0)?;
    }
    // Header sizes and slack before the edit, to say why a file is
    // rewritten and whether its slack is new.
    let befores: Vec<(std::path::PathBuf, Before)> = ed
        .paths()
        .iter()
        .filter_map(|p| {
            let f = gguf::GgufFile::open(p).ok()?;
            let slack = f
                .value(gguf::write::SLACK_KEY)
                .and_then(|v| v.as_array().map(|a| a.len() as u64))
                .unwrap_or(0);
            Some((
                p.clone(),
                Before {
                    header: f.data_offset(),
                    slack,
                },
            ))
        })
        .collect();
    let done = if dry_run { ed.plan()? } else { ed.commit()? };
    for (path, commit) in done {
        let before = befores.iter().find(|(p, _)| *p == path).map_or(
            Before {
                header: 0,
                slack: 0,
            },
            |(_, b)| *b,
        );
        report(&path, &before, commit, dry_run)?;
    }
    Ok(())
}

pub fn set(args: SetArgs) -> CliResult {
    // Everything the command line says is checked before the file is
    // opened for writing: the type (by clap), then the value.
    let text = match (&args.value, &args.from_file) {
        (_, Some(p)) => std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
        (Some(v), None) => v.clone(),
        (None, None) => return Err("a value or --from-file is required".into()),
    };
    let string = CliType::Scalar(ValueType::String);
    let given = match (args.ty, &args.from_file) {
        // A file's text is a string: a number or an array from a file
        // would be parsed from text the user never sees.
        (Some(t), Some(_)) if t != string => {
            return Err(crate::usage_error(
                "set",
                format!(
                    "--from-file sets a string value, but --type is {t}; give the value on the \
                 command line instead"
                ),
            ))
        }
        (None, Some(_)) => Some(string),
        (given, _) => given,
    };
    let path = args.file.display();
    crate::open::require_local(&args.file, "set")?;
    // Opening errors name the file (the shard) themselves.
    let mut ed = ModelEditor::open(&args.file)?;
    let metadata = ed.metadata_file().map_err(|e| format!("{path}: {e}"))?;
    // A value that does not fit the key is a usage error, as a bad option
    // value is; its message names the file and the key.
    let usage = |e: Box<dyn std::error::Error>| crate::Usage(format!("{path}: {}: {e}", args.key));
    let existing = metadata.value(&args.key);
    let ty = match (given, &existing) {
        (Some(t), Some(v)) => {
            let old = stored_type(v);
            if t != old && !args.force {
                let how = if args.from_file.is_some() {
                    "--from-file (a string value)".to_owned()
                } else {
                    format!("--type {t}")
                };
                return Err(format!(
                    "{path}: {:?} is {old}; {how} would change its type (readers that expect \
                     {old} would fail): pass --force to change it{}",
                    args.key,
                    if args.from_file.is_some() {
                        ""
                    } else {
                        ", or leave out --type to keep it"
                    }
                )
                .into());
            }
            t
        }
        (Some(t), None) => t,
        (None, Some(v)) => existing_type(v).map_err(|e| format!("{path}: {e}"))?,
        (None, None) => {
            return Err(
                usage("no such key yet: give the new key's type with --type".into()).into(),
            );
        }
    };
    let value = match ty {
        CliType::Scalar(t) => parse_scalar(t, &text),
        CliType::Array(t) => parse_array(t, &text),
    }
    .map_err(usage)?;
    let type_change = existing
        .as_ref()
        .map(stored_type)
        .filter(|&old| old != ty)
        .map(|old| {
            let verb = if args.dry_run {
                "would change"
            } else {
                "changed"
            };
            format!(
                "{path}: {:?} {verb} type from {old} to {ty} (--force)",
                args.key
            )
        });
    ed.set(args.key, value)
        .map_err(|e| format!("{path}: {e}"))?;
    finish(ed, args.dry_run, args.no_slack).map_err(|e| format!("{path}: {e}"))?;
    match type_change {
        Some(line) => crate::print(&line),
        None => Ok(()),
    }
}

/// Runs an edit of `path`; its errors name the file.
fn edit_file(
    command: &str,
    path: &std::path::Path,
    (dry_run, no_slack): (bool, bool),
    edit: impl FnOnce(&mut ModelEditor) -> gguf::Result<()>,
) -> CliResult {
    crate::open::require_local(path, command)?;
    let named = |e: gguf::Error| format!("{}: {e}", path.display());
    let mut ed = ModelEditor::open(path)?;
    edit(&mut ed).map_err(named)?;
    finish(ed, dry_run, no_slack).map_err(|e| format!("{}: {e}", path.display()).into())
}

pub fn rm(args: RmArgs) -> CliResult {
    edit_file("rm", &args.file, (args.dry_run, args.no_slack), |ed| {
        ed.remove(args.key).map(drop)
    })
}

pub fn mv(args: MvArgs) -> CliResult {
    edit_file("mv", &args.file, (args.dry_run, args.no_slack), |ed| {
        ed.rename_key(args.old, args.new).map(drop)
    })
}

pub fn rename_tensor(args: MvArgs) -> CliResult {
    edit_file(
        "rename-tensor",
        &args.file,
        (args.dry_run, args.no_slack),
        |ed| match ed.rename_tensor(args.old.clone(), args.new) {
            Err(gguf::Error::Build(gguf::error::BuildError::TensorExists { tensor })) => {
                Err(gguf::Error::Build(gguf::error::BuildError::InvalidTensor {
                    tensor: args.old,
                    reason: format!(
                    "cannot rename it to {tensor:?}: the model already has a tensor of that name"
                ),
                }))
            }
            other => other.map(drop),
        },
    )
}
