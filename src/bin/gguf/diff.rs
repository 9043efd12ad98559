//! `gguf diff A B [--values] [--json]`: what differs between two files.
//!
//! Exit status as diff(1): 0 when the files hold the same header fields,
//! metadata and tensors, 1 when anything differs, 2 on error.

use std::path::PathBuf;

use gguf::{ArrayView, Endian, Gguf, Tensor, Value};
use rayon::prelude::*;
use serde_json::{json, Value as Json};

use crate::json;
use crate::text::escape;

#[derive(clap::Args)]
pub struct Args {
    /// The first model: a path (any shard of a split model stands for the
    /// whole model), ollama:NAME[:TAG] or a URL.
    a: PathBuf,
    /// The second model, as the first.
    b: PathBuf,
    /// For tensors in both files with the same shape, compare the
    /// dequantized values: max abs difference, RMSE and cosine similarity
    /// of those whose values differ.
    #[arg(long)]
    values: bool,
    /// With --values, list every tensor compared, equal ones included.
    #[arg(long, requires = "values")]
    all: bool,
    /// Print the differences as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

pub fn run(args: Args) -> crate::CliResult {
    match diff(&args) {
        Ok(true) => Ok(()),
        Ok(false) => Err(crate::Exit(1).into()),
        Err(e) => {
            crate::message(&format!(
                "gguf: {}",
                crate::open::redact_urls_in(&e.to_string())
            ));
            Err(crate::Exit(2).into())
        }
    }
}

/// Same value, floats compared by bits (so NaN equals itself and -0 does
/// not equal +0: the bytes differ).
fn same(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            x.element_type() == y.element_type() && x.len() == y.len() && first_diff(x, y).is_none()
        }
        _ => a == b,
    }
}

/// Index of the first element that differs, up to the shorter length.
fn first_diff(a: &ArrayView<'_>, b: &ArrayView<'_>) -> Option<u64> {
    a.iter()
        .zip(b.iter())
        .position(|(x, y)| !same(&x, &y))
        .map(|i| i as u64)
}

/// How one key's value changed.
fn describe_change(a: &Value<'_>, b: &Value<'_>) -> (String, Json) {
    let mut j = json!({
        "a": json::entry("", a),
        "b": json::entry("", b),
    });
    for side in ["a", "b"] {
        if let Some(o) = j[side].as_object_mut() {
            o.remove("key");
        }
    }
    let text = match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            let at = first_diff(x, y);
            if let Some(o) = j.as_object_mut() {
                o.insert("first_difference".into(), json!(at));
            }
            let at = match at {
                Some(i) => format!("first difference at index {i}"),
                None => format!("equal up to index {}", x.len().min(y.len())),
            };
            // Value's Display of an array is `[type; len]`.
            format!("{a} -> {b}, {at}")
        }
        _ => format!("{} -> {}", json::short(a, 5), json::short(b, 5)),
    };
    (text, j)
}

/// Value statistics of two tensors of equal shape.
#[derive(Default)]
struct Stats {
    max_abs: f64,
    sq: f64,
    dot: f64,
    na: f64,
    nb: f64,
    n: u64,
}

impl Stats {
    fn add(&mut self, a: &[f32], b: &[f32]) {
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = (f64::from(x), f64::from(y));
            let d = (x - y).abs();
            // NaN differences count as the largest.
            if d.is_nan() || d > self.max_abs {
                self.max_abs = if d.is_nan() {
                    f64::NAN
                } else {
                    d.max(self.max_abs)
                };
            }
            self.sq += d * d;
            self.dot += x * y;
            self.na += x * x;
            self.nb += y * y;
        }
        self.n += a.len() as u64;
    }

    /// Whether every pair of values was equal (a NaN never is).
    fn same_values(&self) -> bool {
        self.max_abs == 0.0
    }

    fn rmse(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            (self.sq / self.n as f64).sqrt()
        }
    }

    /// 1 for two all-zero tensors (identical), 0 when only one is zero.
    fn cosine(&self) -> f64 {
        if self.na == 0.0 && self.nb == 0.0 {
            1.0
        } else if self.na == 0.0 || self.nb == 0.0 {
            0.0
        } else {
            self.dot / (self.na.sqrt() * self.nb.sqrt())
        }
    }
}

fn value_stats(a: &Tensor<'_>, b: &Tensor<'_>) -> gguf::Result<Stats> {
    let mut ra = a.rows()?;
    let mut rb = b.rows()?;
    let mut s = Stats::default();
    while let (Some(x), Some(y)) = (ra.next_row(), rb.next_row()) {
        s.add(x?, y?);
    }
    Ok(s)
}

fn float(v: f64) -> Json {
    serde_json::Number::from_f64(v)
        .map(Json::Number)
        .unwrap_or_else(|| Json::String(v.to_string()))
}

/// Returns whether the files are equal; prints the differences.
fn diff(args: &Args) -> crate::CliResult<bool> {
    let fa = crate::open(&args.a, &args.source)?;
    let fb = crate::open(&args.b, &args.source)?;
    let mut lines: Vec<String> = Vec::new();
    let mut doc = json!({
        "a": crate::open::shown(&args.a),
        "b": crate::open::shown(&args.b),
    });

    // Header fields.
    let mut header = Vec::new();
    let fields = [
        (
            "version",
            fa.ctx().version.to_string(),
            fb.ctx().version.to_string(),
        ),
        (
            "endian",
            fa.ctx().endian.to_string(),
            fb.ctx().endian.to_string(),
        ),
        (
            "alignment",
            fa.metadata_file().alignment().to_string(),
            fb.metadata_file().alignment().to_string(),
        ),
    ];
    for (field, x, y) in fields {
        if x != y {
            lines.push(format!("header: {field} {x} -> {y}"));
            header.push(json!({"field": field, "a": x, "b": y}));
        }
    }

    // Metadata.
    let (mut added, mut removed, mut changed) = (Vec::new(), Vec::new(), Vec::new());
    for (key, va) in fa.metadata() {
        match fb.value(key) {
            None => {
                lines.push(format!(
                    "metadata - {}: {}",
                    escape(key),
                    json::short(&va, 5)
                ));
                removed.push(json::entry(key, &va));
            }
            Some(vb) if !same(&va, &vb) => {
                let (text, mut j) = describe_change(&va, &vb);
                lines.push(format!("metadata ~ {}: {text}", escape(key)));
                if let Some(o) = j.as_object_mut() {
                    o.insert("key".into(), json!(key));
                }
                changed.push(j);
            }
            Some(_) => {}
        }
    }
    for (key, vb) in fb.metadata() {
        if !fa.contains_key(key) {
            lines.push(format!(
                "metadata + {}: {}",
                escape(key),
                json::short(&vb, 5)
            ));
            added.push(json::entry(key, &vb));
        }
    }
    doc["header"] = json!(header);
    doc["metadata"] = json!({"added": added, "removed": removed, "changed": changed});

    // Tensors.
    let (mut t_added, mut t_removed, mut t_changed) = (Vec::new(), Vec::new(), Vec::new());
    let mut both = Vec::new();
    for ta in fa.tensors() {
        let Ok(tb) = fb.tensor(ta.name()) else {
            lines.push(format!(
                "tensor - {} {} {:?}",
                escape(ta.name()),
                ta.ggml_type(),
                ta.shape()
            ));
            t_removed.push(json!(ta.name()));
            continue;
        };
        let mut what = Vec::new();
        let mut j = json!({"name": ta.name()});
        if ta.ggml_type() != tb.ggml_type() {
            what.push(format!("type {} -> {}", ta.ggml_type(), tb.ggml_type()));
            j["type"] = json!([ta.ggml_type().to_string(), tb.ggml_type().to_string()]);
        }
        if ta.shape() != tb.shape() {
            what.push(format!("shape {:?} -> {:?}", ta.shape(), tb.shape()));
            j["shape"] = json!([ta.shape(), tb.shape()]);
        }
        if what.is_empty() && !same_data(&ta, &tb)? {
            what.push("data differ".into());
            j["data"] = json!(true);
        }
        if !what.is_empty() {
            lines.push(format!(
                "tensor ~ {}: {}",
                escape(ta.name()),
                what.join(", ")
            ));
            t_changed.push(j);
        }
        if ta.shape() == tb.shape() {
            both.push((ta, tb));
        }
    }
    for tb in fb.tensors() {
        if fa.tensor(tb.name()).is_err() {
            lines.push(format!(
                "tensor + {} {} {:?}",
                escape(tb.name()),
                tb.ggml_type(),
                tb.shape()
            ));
            t_added.push(json!(tb.name()));
        }
    }
    let equal = header.is_empty()
        && added.is_empty()
        && removed.is_empty()
        && changed.is_empty()
        && t_added.is_empty()
        && t_removed.is_empty()
        && t_changed.is_empty();
    doc["tensors"] = json!({"added": t_added, "removed": t_removed, "changed": t_changed});

    if args.values {
        // One tensor pair per task, streamed row by row: memory stays at a
        // few rows per thread whatever the tensor sizes.
        let stats: Vec<_> = both
            .par_iter()
            .map(|(ta, tb)| value_stats(ta, tb).map_err(|e| format!("tensor {:?}: {e}", ta.name())))
            .collect::<Result<_, _>>()?;
        let mut values = Vec::new();
        for ((ta, _), s) in both.iter().zip(&stats) {
            if !args.all && s.same_values() {
                continue;
            }
            lines.push(format!(
                "values {}: max_abs_diff {:.4e}, rmse {:.4e}, cosine {:.9}",
                escape(ta.name()),
                s.max_abs,
                s.rmse(),
                s.cosine()
            ));
            values.push(json!({
                "name": ta.name(),
                "max_abs_diff": float(s.max_abs),
                "rmse": float(s.rmse()),
                "cosine": float(s.cosine()),
            }));
        }
        doc["values"] = json!(values);
    }
    doc["equal"] = json!(equal);

    if args.json {
        crate::print_json(&serde_json::to_string_pretty(&doc)?)?;
    } else if lines.is_empty() {
        crate::print(&format!(
            "{} and {} hold the same header fields, metadata and tensors{}",
            crate::open::shown(&args.a),
            crate::open::shown(&args.b),
            if args.values { " (and values)" } else { "" }
        ))?;
    } else {
        crate::print(&lines.join("\n"))?;
    }
    Ok(equal)
}

/// Whether two tensors of equal type and shape hold the same data. Files
/// of different byte orders are compared in little-endian order, so a
/// byte-order conversion is not a change.
fn same_data(a: &Tensor<'_>, b: &Tensor<'_>) -> crate::CliResult<bool> {
    let (da, db) = (a.read()?, b.read()?);
    if a.file_endian() == b.file_endian() {
        return Ok(da == db);
    }
    let ty = a.ggml_type();
    let la = gguf::tensor::with_byte_order(ty, &da, a.file_endian(), Endian::Little)?;
    let lb = gguf::tensor::with_byte_order(ty, &db, b.file_endian(), Endian::Little)?;
    Ok(la == lb)
}
