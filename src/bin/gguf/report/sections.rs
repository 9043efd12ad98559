//! The sections of one model's page, each from [`Facts`].

use std::fmt::Write;

use gguf::summary::ModelSummary;

use super::charts::{self, Bars, Line};
use super::facts::{cache_name, Facts, Memory, DEVICE_GIB};
use super::html::{bytes, esc, facts_table, left_out, Section};
use super::svg;

/// Colours of the memory curves, per cache type (f16, q8_0, q4_0).
pub const CURVE_COLOURS: [&str; 3] = ["#4e79a7", "#3f8f3a", "#f28e2b"];

pub fn summary(f: &Facts) -> Section {
    let mut rows: Vec<(&str, String)> = Vec::new();
    let opt = |v: &Option<String>| v.as_deref().map_or_else(|| "–".to_owned(), esc);
    let mut body = String::new();
    match &f.summary {
        Ok(m) => {
            rows.push(("Name", opt(&m.name)));
            rows.push(("Architecture", opt(&m.architecture)));
            if m.model_type.is_some() {
                rows.push(("Type", opt(&m.model_type)));
            }
            rows.push((
                "Parameters",
                format!(
                    "{} ({})",
                    ModelSummary::format_count(m.parameters),
                    m.parameters
                ),
            ));
            rows.push(("Bits per weight", format!("{:.2}", m.bits_per_weight)));
            rows.push(("Quantization", esc(&m.quantization)));
            let types: Vec<String> = m
                .tensor_types
                .iter()
                .map(|(t, k)| format!("{t} ×{k}"))
                .collect();
            rows.push(("Tensor types", types.join(", ")));
            let num = |v: Option<u32>| v.map_or_else(|| "–".to_owned(), |v| v.to_string());
            rows.push(("Context length", num(m.context_length)));
            rows.push(("Layers", num(m.block_count)));
            rows.push(("Embedding width", num(m.embedding_length)));
            if let Some(h) = &m.params.head_count {
                let kv = m
                    .params
                    .head_count_kv
                    .as_ref()
                    .map_or_else(|| h.to_string(), ToString::to_string);
                rows.push(("Attention heads (KV)", format!("{h} ({kv})")));
            }
            if let Some(e) = m.params.expert_count {
                rows.push(("Experts", e.to_string()));
            }
            let vocab = match (&m.vocab_size, &m.tokenizer_model) {
                (Some(v), Some(t)) => format!("{v} tokens ({})", esc(t)),
                (Some(v), None) => format!("{v} tokens"),
                (None, Some(t)) => esc(t),
                (None, None) => "–".to_owned(),
            };
            rows.push(("Vocabulary", vocab));
            rows.push(("Tensor data", bytes(m.tensor_bytes)));
        }
        Err(e) => body.push_str(&left_out("the model summary", e)),
    }
    rows.push((
        "File size",
        format!("{} ({} bytes)", bytes(f.total_len), f.total_len),
    ));
    rows.push(("Source", esc(&f.origin)));
    if f.shards.len() > 1 {
        let mut list = format!("{} shards<br>", f.shards.len());
        for (name, tensors, len) in &f.shards {
            let _ = write!(
                list,
                "{} · {tensors} tensors · {}<br>",
                esc(name),
                bytes(*len)
            );
        }
        rows.push(("Shards", list));
    } else {
        rows.push(("Shards", "1 file".to_owned()));
    }
    body.insert_str(0, &facts_table(&rows));
    Section {
        id: "summary",
        heading: "Summary".into(),
        body,
    }
}

pub fn metadata(f: &Facts) -> Section {
    let mut body = format!(
        "<p class=\"caption\">{} entries (split keys hidden; long values folded; arrays show their first elements).</p><div class=\"scroll\"><table class=\"meta\">\n<tr><th>key</th><th>type</th><th>value</th></tr>\n",
        f.metadata.len()
    );
    for row in &f.metadata {
        let value = match &row.long {
            Some(long) if row.key == "tokenizer.chat_template" => format!(
                "<details><summary>chat template ({} characters)</summary><pre>{}</pre></details>",
                long.chars().count(),
                esc(long)
            ),
            Some(long) => format!(
                "<details><summary>{}</summary><pre>{}</pre></details>",
                esc(&row.short),
                esc(long)
            ),
            None => esc(&row.short),
        };
        let _ = writeln!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{value}</td></tr>",
            esc(&row.key),
            esc(&row.ty)
        );
    }
    body.push_str("</table></div>");
    Section {
        id: "metadata",
        heading: "Metadata".into(),
        body,
    }
}

pub fn tensor_map(f: &Facts) -> Section {
    let mut body = String::new();
    if f.layers.is_empty() && f.others.is_empty() {
        body.push_str(&left_out("the tensor map", "the model has no tensors"));
    } else {
        let (map, cut) = svg::tensor_map(&f.layers, &f.others);
        let all: Vec<_> = f
            .others
            .iter()
            .chain(f.layers.iter().flat_map(|l| l.cells.iter()))
            .collect();
        body.push_str(&svg::type_legend(&all));
        let _ = write!(
            body,
            "<p class=\"caption\">One row per layer, one cell per tensor in file order; a cell's area is its bytes, its colour its ggml type (hover for name and size). The tensors outside the layers ({}) come first, at the same scale{}.</p>{map}",
            f.others.len(),
            if cut {
                "; a tensor taller than 8 rows is cut and says so"
            } else {
                ""
            }
        );
    }
    Section {
        id: "tensors",
        heading: "Tensor map".into(),
        body,
    }
}

/// Bars of bits per weight, one per layer (colour: the type holding most
/// of the layer's bytes); the whole model's average dotted.
pub fn layer_bits(f: &Facts) -> Section {
    let mut body = String::new();
    if f.layers.is_empty() {
        body.push_str(&left_out(
            "bits per weight per layer",
            "the model has no blk.N layers",
        ));
    } else {
        let labels: Vec<String> = f.layers.iter().map(|l| l.index.to_string()).collect();
        let series = [layer_bars("bits per weight", f)];
        let avg = f.summary.as_ref().ok().map(|m| m.bits_per_weight);
        let chart = charts::bar_chart(
            &labels,
            &series,
            "bits per weight",
            avg.map(|v| (v, "whole model")),
        );
        let _ = write!(
            body,
            "<p class=\"caption\">Bits per weight of each layer (its bytes × 8 / its elements), coloured by the type holding most of its bytes; the dotted line is the whole model's {}. A mixed preset (<code>_M</code>, <code>_S</code>) shows as uneven bars.</p>{chart}",
            avg.map_or_else(|| "average".to_owned(), |v| format!("{v:.2}"))
        );
    }
    Section {
        id: "bits",
        heading: "Bits per weight per layer".into(),
        body,
    }
}

pub fn layer_bars(name: &str, f: &Facts) -> Bars {
    Bars {
        name: name.to_owned(),
        values: f.layers.iter().map(|l| l.bits_per_weight()).collect(),
        colours: f
            .layers
            .iter()
            .map(|l| svg::colour(l.main_type()))
            .collect(),
        tips: f
            .layers
            .iter()
            .map(|l| {
                format!(
                    "blk.{}: {:.2} bits per weight, {}, mostly {}",
                    l.index,
                    l.bits_per_weight(),
                    bytes(l.bytes()),
                    l.main_type()
                )
            })
            .collect(),
    }
}

/// The memory curves of one model: one line per cache type.
pub fn curves(m: &Memory, prefix: &str, dashed: bool) -> Vec<Line> {
    m.curves
        .iter()
        .enumerate()
        .map(|(i, c)| Line {
            name: format!("{prefix}KV {}", cache_name(c.cache_type)),
            colour: CURVE_COLOURS[i % CURVE_COLOURS.len()],
            dashed,
            points: c
                .points
                .iter()
                .map(|&(x, b)| (f64::from(x), b as f64 / f64::from(1u32 << 30)))
                .collect(),
        })
        .collect()
}

/// Where each curve reaches a device size below the training context.
pub fn marks(m: &Memory, prefix: &str) -> Vec<(f64, f64, String)> {
    let mut out = Vec::new();
    for c in &m.curves {
        for &(gib, max) in &c.fits {
            if let Some(ctx) = max.filter(|&x| x < m.n_ctx_train) {
                out.push((
                    f64::from(ctx),
                    gib as f64,
                    format!(
                        "{prefix}KV {}: -c {ctx} is the largest context within {gib} GiB",
                        cache_name(c.cache_type)
                    ),
                ));
            }
        }
    }
    out
}

/// The table of largest contexts per device size and cache type.
pub fn fit_table(m: &Memory) -> String {
    let mut s = String::from("<div class=\"scroll\"><table class=\"fit\"><tr><th>device</th>");
    for c in &m.curves {
        let _ = write!(
            s,
            "<th class=\"num\">-ctk/-ctv {}</th>",
            cache_name(c.cache_type)
        );
    }
    s.push_str("</tr>\n");
    for (i, gib) in DEVICE_GIB.iter().enumerate() {
        let _ = write!(s, "<tr><td>{gib} GiB</td>");
        for c in &m.curves {
            let cell = match c.fits.get(i).and_then(|f| f.1) {
                Some(x) if x >= m.n_ctx_train => format!("{x} (all)"),
                Some(x) => x.to_string(),
                None => "none".to_owned(),
            };
            let _ = write!(s, "<td class=\"num\">{cell}</td>");
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table></div>");
    s
}

pub fn memory(f: &Facts) -> Section {
    let mut body = String::new();
    match &f.memory {
        Err(e) => body.push_str(&left_out("memory against context length", e)),
        Ok(m) => {
            if m.curves.is_empty() {
                body.push_str(&left_out(
                    "memory against context length",
                    &m.left_out.join("; "),
                ));
            } else {
                let lines = curves(m, "", false);
                let top = lines
                    .iter()
                    .flat_map(|l| l.points.iter().map(|p| p.1))
                    .fold(0.0, f64::max);
                let below = DEVICE_GIB
                    .iter()
                    .filter(|&&g| (g as f64) > top * 1.05)
                    .count();
                let _ = write!(
                    body,
                    "<p class=\"caption\">Weights + KV cache + output + compute buffers, as <code>gguf estimate -c N -ctk T -ctv T</code> gives them (llama.cpp's defaults otherwise: CPU only, one sequence, flash attention auto), {}. Dashed lines: device sizes{}.</p>{}{}",
                    if m.n_ctx_train > 512 {
                        format!("from 512 tokens to the training context ({})", m.n_ctx_train)
                    } else {
                        format!("at the training context ({}), below 512 tokens", m.n_ctx_train)
                    },
                    if below == DEVICE_GIB.len() {
                        format!("; every curve stays below {} GiB", DEVICE_GIB[0])
                    } else if below > 0 {
                        "; sizes above the chart are left out".to_owned()
                    } else {
                        String::new()
                    },
                    charts::line_legend(&lines),
                    charts::memory_chart(&lines, &DEVICE_GIB, &marks(m, ""))
                );
                for why in &m.left_out {
                    body.push_str(&left_out("a curve", why));
                }
                body.push_str("<p class=\"caption\">Largest context (<code>gguf estimate --fit SIZE</code>) per device size and cache type:</p>");
                body.push_str(&fit_table(m));
            }
            let _ = write!(
                body,
                "<p class=\"caption\"><code>gguf estimate</code> at its defaults (the training context):</p><pre>{}</pre>",
                esc(&m.estimate_text)
            );
        }
    }
    Section {
        id: "memory",
        heading: "Memory against context length".into(),
        body,
    }
}
