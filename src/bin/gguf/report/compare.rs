//! `--compare OTHER`: two models side by side: their summaries, their
//! bits per layer, their memory curves (f16 cache) and every tensor whose
//! type or size differs.

use std::collections::HashMap;
use std::fmt::Write;

use gguf::summary::ModelSummary;

use super::charts::{self, Line};
use super::facts::{Cell, Facts, DEVICE_GIB};
use super::html::{bytes, esc, left_out, Section};
use super::sections::{curves, layer_bars, marks};

/// Most rows of the tensor difference table.
const MAX_ROWS: usize = 2000;

pub fn section(a: &Facts, b: &Facts) -> Section {
    let mut body = String::new();
    let _ = write!(
        body,
        "<p class=\"caption\">A: {} · B: {}</p>",
        esc(&a.origin),
        esc(&b.origin)
    );
    body.push_str(&summaries(a, b));
    body.push_str(&bits(a, b));
    body.push_str(&memory(a, b));
    body.push_str(&tensors(a, b));
    Section {
        id: "compare",
        heading: "Comparison".into(),
        body,
    }
}

fn summaries(a: &Facts, b: &Facts) -> String {
    type Row = (&'static str, fn(&ModelSummary) -> String);
    let rows: [Row; 7] = [
        ("Name", |m| m.name.clone().unwrap_or_default()),
        ("Architecture", |m| {
            m.architecture.clone().unwrap_or_default()
        }),
        ("Parameters", |m| ModelSummary::format_count(m.parameters)),
        ("Bits per weight", |m| format!("{:.2}", m.bits_per_weight)),
        ("Quantization", |m| m.quantization.clone()),
        ("Tensor data", |m| bytes(m.tensor_bytes)),
        ("Context length", |m| {
            m.context_length.map(|c| c.to_string()).unwrap_or_default()
        }),
    ];
    let mut s = String::from(
        "<div class=\"scroll\"><table class=\"facts\"><tr><th></th><th>A</th><th>B</th></tr>\n",
    );
    let cell = |f: &Facts, get: fn(&ModelSummary) -> String| match &f.summary {
        Ok(m) => esc(&get(m)),
        Err(_) => "–".to_owned(),
    };
    for (label, get) in rows {
        let _ = writeln!(
            s,
            "<tr><th>{label}</th><td>{}</td><td>{}</td></tr>",
            cell(a, get),
            cell(b, get)
        );
    }
    let _ = writeln!(
        s,
        "<tr><th>File size</th><td>{}</td><td>{}</td></tr>",
        bytes(a.total_len),
        bytes(b.total_len)
    );
    s.push_str("</table></div>");
    s
}

fn bits(a: &Facts, b: &Facts) -> String {
    if a.layers.is_empty() && b.layers.is_empty() {
        return left_out(
            "bits per weight per layer",
            "neither model has blk.N layers",
        );
    }
    let longer = if a.layers.len() >= b.layers.len() {
        a
    } else {
        b
    };
    let labels: Vec<String> = longer.layers.iter().map(|l| l.index.to_string()).collect();
    let series = [layer_bars("A", a), layer_bars("B", b)];
    format!(
        "<h3>Bits per weight per layer</h3><p class=\"caption\">Per layer, A's bar then B's (lighter).</p>{}",
        charts::bar_chart(&labels, &series, "bits per weight", None)
    )
}

fn memory(a: &Facts, b: &Facts) -> String {
    let mut lines: Vec<Line> = Vec::new();
    let mut marked = Vec::new();
    let mut notes = String::new();
    for (f, prefix, dashed, colour) in [(a, "A ", false, "#4e79a7"), (b, "B ", true, "#e15759")] {
        match &f.memory {
            Ok(m) => {
                // The f16 cache only: two models' three curves each would
                // hide each other.
                lines.extend(curves(m, prefix, dashed).into_iter().take(1).map(|mut l| {
                    l.colour = colour;
                    l
                }));
                marked.extend(
                    marks(m, prefix)
                        .into_iter()
                        .filter(|mk| mk.2.contains("KV f16")),
                );
            }
            Err(e) => notes.push_str(&left_out(&format!("{prefix}memory"), e)),
        }
    }
    if lines.is_empty() {
        return notes;
    }
    format!(
        "<h3>Memory against context length (f16 KV cache)</h3>{}{}{notes}",
        charts::line_legend(&lines),
        charts::memory_chart(&lines, &DEVICE_GIB, &marked)
    )
}

/// Every tensor of a model: outside the layers, then layer by layer.
fn all_cells(f: &Facts) -> Vec<&Cell> {
    f.others
        .iter()
        .chain(f.layers.iter().flat_map(|l| l.cells.iter()))
        .collect()
}

fn tensors(a: &Facts, b: &Facts) -> String {
    let (ta, tb) = (all_cells(a), all_cells(b));
    let in_b: HashMap<&str, &Cell> = tb.iter().map(|c| (c.name.as_str(), *c)).collect();
    let in_a: HashMap<&str, &Cell> = ta.iter().map(|c| (c.name.as_str(), *c)).collect();
    let mut rows = Vec::new();
    let mut same = 0usize;
    for c in &ta {
        match in_b.get(c.name.as_str()) {
            Some(o) if o.ty == c.ty && o.bytes == c.bytes => same += 1,
            other => rows.push((c.name.as_str(), Some(*c), other.copied())),
        }
    }
    for c in &tb {
        if !in_a.contains_key(c.name.as_str()) {
            rows.push((c.name.as_str(), None, Some(*c)));
        }
    }
    let mut s = format!(
        "<h3>Tensors</h3><p class=\"caption\">{} tensors differ in type or size or exist in one model only; {same} are the same.</p>",
        rows.len()
    );
    if rows.is_empty() {
        return s;
    }
    s.push_str("<div class=\"scroll\"><table class=\"diff\"><tr><th>tensor</th><th>A type</th><th>B type</th><th class=\"num\">A size</th><th class=\"num\">B size</th><th class=\"num\">B − A</th></tr>\n");
    let side = |c: Option<&Cell>| match c {
        Some(c) => (c.ty.to_string(), bytes(c.bytes), c.bytes as i128),
        None => ("–".to_owned(), "–".to_owned(), 0),
    };
    for (name, ca, cb) in rows.iter().take(MAX_ROWS) {
        let (ty_a, size_a, na) = side(*ca);
        let (ty_b, size_b, nb) = side(*cb);
        let delta = nb - na;
        let sign = if delta < 0 { "−" } else { "+" };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{ty_a}</td><td>{ty_b}</td><td class=\"num\">{size_a}</td><td class=\"num\">{size_b}</td><td class=\"num\">{sign}{}</td></tr>",
            esc(name),
            bytes(delta.unsigned_abs() as u64)
        );
    }
    s.push_str("</table></div>");
    if rows.len() > MAX_ROWS {
        let _ = write!(
            s,
            "<p class=\"caption\">and {} more rows.</p>",
            rows.len() - MAX_ROWS
        );
    }
    s
}
