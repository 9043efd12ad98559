//! The charts, as inline SVG: the tensor map, bar charts and line charts.
//! Text in them is escaped with [`esc`]; colours are fixed per ggml type
//! and read on light and dark backgrounds alike (axes and labels take the
//! page's colours from its style sheet).

use std::fmt::Write;

use gguf::GgmlType;

use super::facts::{Cell, Layer};
use super::html::{bytes, esc};

/// Width of every chart's coordinate system (it scales to the page).
const WIDTH: f64 = 960.0;
/// Left margin for labels.
const LEFT: f64 = 64.0;
/// Height of one tensor-map row.
const ROW: f64 = 12.0;
/// A non-layer tensor wider than this many rows is cut (and says so).
const MAX_ROWS: f64 = 8.0;

/// The colour of a ggml type: families share a hue, darker for more bits.
pub fn colour(ty: GgmlType) -> &'static str {
    const OTHERS: [&str; 6] = [
        "#9c755f", "#bab0ac", "#86bcb6", "#d4a6c8", "#b6992d", "#79706e",
    ];
    match ty.name().unwrap_or("") {
        "F32" | "F64" => "#7f8896",
        "F16" => "#4e79a7",
        "BF16" => "#6b9ac4",
        "Q8_0" | "Q8_1" | "Q8_K" => "#3f8f3a",
        "Q6_K" => "#8cc97d",
        "Q5_K" | "Q5_0" | "Q5_1" => "#e0b92e",
        "Q4_K" => "#f28e2b",
        "Q4_0" | "Q4_1" => "#f5b26b",
        "Q3_K" => "#e15759",
        "Q2_K" => "#b07aa1",
        "IQ4_XS" | "IQ4_NL" => "#ff9da7",
        "IQ3_XXS" | "IQ3_S" => "#d37295",
        "IQ2_XXS" | "IQ2_XS" | "IQ2_S" | "IQ1_S" | "IQ1_M" => "#a05195",
        "MXFP4" | "NVFP4" => "#499894",
        "TQ1_0" | "TQ2_0" | "Q1_0" | "Q2_0" => "#8a6dbf",
        _ => OTHERS[ty.id() as usize % OTHERS.len()],
    }
}

/// Bits per weight of a type's blocks (`None` for an unknown type).
pub fn type_bits(ty: GgmlType) -> Option<f64> {
    Some(ty.type_size()? as f64 * 8.0 / ty.block_size()? as f64)
}

/// A number for SVG coordinates.
fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

fn cell_rect(s: &mut String, c: &Cell, x: f64, y: f64, w: f64, h: f64) {
    // A hair of background between neighbours, unless that would hide
    // the cell.
    let shown = if w > 1.5 { w - 0.5 } else { w };
    let _ = write!(
        s,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} · {} · {}</title></rect>",
        n(x),
        n(y),
        n(shown.max(0.1)),
        n(h),
        colour(c.ty),
        esc(&c.name),
        c.ty,
        bytes(c.bytes)
    );
}

/// The tensor map: the tensors outside the layers first (in file order,
/// flowing along rows), then one row per layer, one cell per tensor; the
/// area of a cell is proportional to its bytes everywhere (the largest
/// layer fills one row). Returns the SVG and whether a tensor was cut.
pub fn tensor_map(layers: &[Layer], others: &[Cell]) -> (String, bool) {
    let width = WIDTH - LEFT;
    let unit = layers
        .iter()
        .map(Layer::bytes)
        .max()
        .filter(|&b| b > 0)
        .or_else(|| others.iter().map(|c| c.bytes).max())
        .unwrap_or(1)
        .max(1) as f64;
    let scale = width / unit;
    let mut body = String::new();
    let mut y = 4.0;
    let mut cut = false;
    if !others.is_empty() {
        let _ = write!(
            body,
            "<text x=\"0\" y=\"{}\">other</text>",
            n(y + ROW - 2.0)
        );
        let mut x = 0.0;
        for c in others {
            let w = c.bytes as f64 * scale;
            if w <= width {
                if x + w > width + 0.01 {
                    x = 0.0;
                    y += ROW + 2.0;
                }
                cell_rect(&mut body, c, LEFT + x, y, w, ROW);
                x += w;
            } else {
                if x > 0.0 {
                    y += ROW + 2.0;
                }
                let rows = w / width;
                let h = ROW * rows.min(MAX_ROWS);
                cut |= rows > MAX_ROWS;
                cell_rect(&mut body, c, LEFT, y, width, h);
                if h >= ROW {
                    let more = if rows > MAX_ROWS {
                        " (cut: not to scale)"
                    } else {
                        ""
                    };
                    let _ = write!(
                        body,
                        "<text x=\"{}\" y=\"{}\">{} · {} · {}{more}</text>",
                        n(LEFT + 4.0),
                        n(y + ROW - 2.0),
                        esc(&c.name),
                        c.ty,
                        bytes(c.bytes)
                    );
                }
                y += h + 2.0;
                x = 0.0;
            }
        }
        y += ROW + 8.0;
    }
    let label_every = (layers.len() / 40).max(1);
    for (i, layer) in layers.iter().enumerate() {
        if i % label_every == 0 {
            let _ = write!(
                body,
                "<text x=\"0\" y=\"{}\">blk.{}</text>",
                n(y + ROW - 2.0),
                layer.index
            );
        }
        let mut x = LEFT;
        for c in &layer.cells {
            let w = c.bytes as f64 * scale;
            cell_rect(&mut body, c, x, y, w, ROW);
            x += w;
        }
        y += ROW + 2.0;
    }
    let height = y + 4.0;
    let svg = format!(
        "<div class=\"chart-box\"><svg class=\"chart tensor-map\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"tensor map\">{body}</svg></div>",
        n(WIDTH),
        n(height)
    );
    (svg, cut)
}

/// A legend of the types present: colour, bits per weight, bytes and
/// share of the model.
pub fn type_legend(cells: &[&Cell]) -> String {
    let mut by_type: Vec<(GgmlType, u64, usize)> = Vec::new();
    for c in cells {
        match by_type.iter_mut().find(|(t, _, _)| *t == c.ty) {
            Some((_, b, k)) => {
                *b += c.bytes;
                *k += 1;
            }
            None => by_type.push((c.ty, c.bytes, 1)),
        }
    }
    by_type.sort_by_key(|&(_, b, _)| std::cmp::Reverse(b));
    let total: u64 = by_type.iter().map(|t| t.1).sum::<u64>().max(1);
    let mut s = String::from("<div class=\"legend\">");
    for (ty, b, k) in by_type {
        let bits = type_bits(ty).map_or_else(|| "?".to_owned(), |v| format!("{v:.2}"));
        let _ = write!(
            s,
            "<span><span class=\"sw\" style=\"background:{}\"></span>{ty} · {bits} bpw · {k} tensor{} · {} ({:.1}%)</span>",
            colour(ty),
            if k == 1 { "" } else { "s" },
            bytes(b),
            b as f64 * 100.0 / total as f64
        );
    }
    s.push_str("</div>");
    s
}

/// Round tick values from 0 to at least `max`: 4 to 6 steps of 1, 2 or 5
/// times a power of ten.
fn ticks(max: f64) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) {
        return vec![0.0, 1.0];
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| max / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let count = (max / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

/// One series of a bar chart: a value and a colour per bar, and a name
/// for its tooltips.
pub struct Bars {
    pub name: String,
    pub values: Vec<f64>,
    pub colours: Vec<&'static str>,
    pub tips: Vec<String>,
}

/// A bar chart with one group per label (bars of each series side by
/// side), a value axis from 0, and an optional dotted reference line.
pub fn bar_chart(
    labels: &[String],
    series: &[Bars],
    unit: &str,
    reference: Option<(f64, &str)>,
) -> String {
    let (height, top, bottom) = (240.0, 10.0, 24.0);
    let plot_w = WIDTH - LEFT - 8.0;
    let plot_h = height - top - bottom;
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .chain(reference.map(|r| r.0))
        .fold(0.0, f64::max);
    let ticks = ticks(max);
    let ymax = *ticks.last().unwrap_or(&1.0);
    let step = ticks.get(1).copied().unwrap_or(1.0);
    let y = |v: f64| top + plot_h * (1.0 - v / ymax);
    let mut s = String::new();
    for t in &ticks {
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(LEFT),
            n(LEFT + plot_w),
            n(y(*t)),
            n(y(*t)),
            n(LEFT - 6.0),
            n(y(*t) + 4.0),
            fmt_tick(*t, step)
        );
    }
    let _ = write!(
        s,
        "<text x=\"4\" y=\"{}\" transform=\"rotate(-90 4 {})\" text-anchor=\"middle\" dominant-baseline=\"hanging\">{}</text>",
        n(top + plot_h / 2.0),
        n(top + plot_h / 2.0),
        esc(unit)
    );
    let groups = labels.len().max(1) as f64;
    let gw = plot_w / groups;
    let bw = gw * 0.8 / series.len().max(1) as f64;
    let label_every = (labels.len() as f64 / 32.0).ceil().max(1.0) as usize;
    for (i, label) in labels.iter().enumerate() {
        let gx = LEFT + gw * i as f64 + gw * 0.1;
        for (k, sr) in series.iter().enumerate() {
            let Some(&v) = sr.values.get(i) else { continue };
            let colour = sr.colours.get(i).copied().unwrap_or("#4e79a7");
            let tip = sr.tips.get(i).map_or("", String::as_str);
            let _ = write!(
                s,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{colour}\"{}><title>{}{}</title></rect>",
                n(gx + bw * k as f64),
                n(y(v)),
                n(bw.max(0.5)),
                n((y(0.0) - y(v)).max(0.0)),
                if k > 0 { " opacity=\"0.65\"" } else { "" },
                if series.len() > 1 { format!("{}: ", esc(&sr.name)) } else { String::new() },
                esc(tip)
            );
        }
        if i % label_every == 0 {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                n(LEFT + gw * (i as f64 + 0.5)),
                n(height - 8.0),
                esc(label)
            );
        }
    }
    if let Some((v, name)) = reference {
        let _ = write!(
            s,
            "<line class=\"avg\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"><title>{}</title></line>",
            n(LEFT),
            n(LEFT + plot_w),
            n(y(v)),
            n(y(v)),
            esc(name)
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>",
        n(LEFT),
        n(LEFT + plot_w),
        n(y(0.0)),
        n(y(0.0))
    );
    format!(
        "<div class=\"chart-box\"><svg class=\"chart bars\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">{s}</svg></div>",
        n(WIDTH),
        n(height),
        esc(unit)
    )
}

/// A tick value with as many decimals as its step needs (0.2, not
/// 0.6000000001).
fn fmt_tick(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    format!("{v:.decimals$}")
}

/// One curve of a line chart: (x, y) points.
pub struct Line {
    pub name: String,
    pub colour: &'static str,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// A context length as llama.cpp users write it: 512, 4K, 128K, 1M.
pub fn ctx_label(c: f64) -> String {
    let c = c as u64;
    if c >= 1 << 20 && c.is_multiple_of(1 << 20) {
        format!("{}M", c >> 20)
    } else if c >= 1024 && c.is_multiple_of(1024) {
        format!("{}K", c >> 10)
    } else {
        c.to_string()
    }
}

/// Memory (GiB) against context length on a log2 axis, with dashed
/// horizontal lines at the device sizes within the range and a dot where
/// a curve reaches one (`marks`: x, y, tooltip).
pub fn memory_chart(lines: &[Line], devices_gib: &[u64], marks: &[(f64, f64, String)]) -> String {
    let (height, top, bottom, right) = (300.0, 12.0, 36.0, 70.0);
    let plot_w = WIDTH - LEFT - right;
    let plot_h = height - top - bottom;
    let xs: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .filter(|x| *x > 0.0)
        .collect();
    let xmin = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let xmax = xs.iter().copied().fold(0.0, f64::max);
    let (lo, hi) = if xs.is_empty() {
        (0.0, 1.0)
    } else if xmax > xmin {
        (xmin.log2(), xmax.log2())
    } else {
        (xmin.log2() - 1.0, xmin.log2() + 1.0)
    };
    let ymax_data = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let ticks = ticks(ymax_data * 1.05);
    let ymax = *ticks.last().unwrap_or(&1.0);
    let step = ticks.get(1).copied().unwrap_or(1.0);
    let x = |v: f64| LEFT + plot_w * ((v.max(1.0).log2() - lo) / (hi - lo));
    let y = |v: f64| top + plot_h * (1.0 - v / ymax);
    let mut s = String::new();
    for t in &ticks {
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(LEFT),
            n(LEFT + plot_w),
            n(y(*t)),
            n(y(*t)),
            n(LEFT - 6.0),
            n(y(*t) + 4.0),
            fmt_tick(*t, step)
        );
    }
    let _ = write!(
        s,
        "<text x=\"4\" y=\"{}\" transform=\"rotate(-90 4 {})\" text-anchor=\"middle\" dominant-baseline=\"hanging\">GiB</text>",
        n(top + plot_h / 2.0),
        n(top + plot_h / 2.0)
    );
    // x ticks at the sampled contexts (powers of two and the training
    // context), thinned so labels do not overlap.
    let mut xt: Vec<f64> = xs.clone();
    xt.sort_by(f64::total_cmp);
    xt.dedup();
    let every = (xt.len() / 12).max(1);
    for (i, c) in xt.iter().enumerate() {
        if i % every != 0 && i + 1 != xt.len() {
            continue;
        }
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            n(x(*c)),
            n(x(*c)),
            n(top),
            n(top + plot_h),
            n(x(*c)),
            n(top + plot_h + 14.0),
            ctx_label(*c)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">context length (tokens, log scale)</text>",
        n(LEFT + plot_w / 2.0),
        n(height - 4.0)
    );
    for &gib in devices_gib {
        let v = gib as f64;
        if v > ymax {
            continue;
        }
        let _ = write!(
            s,
            "<line class=\"device\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text class=\"device\" x=\"{}\" y=\"{}\">{gib} GB</text>",
            n(LEFT),
            n(LEFT + plot_w),
            n(y(v)),
            n(y(v)),
            n(LEFT + plot_w + 4.0),
            n(y(v) + 4.0)
        );
    }
    for l in lines {
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|&(px, py)| format!("{},{}", n(x(px)), n(y(py))))
            .collect();
        let dash = if l.dashed {
            " stroke-dasharray=\"7 4\""
        } else {
            ""
        };
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\"{dash} points=\"{}\"><title>{}</title></polyline>",
            l.colour,
            pts.join(" "),
            esc(&l.name)
        );
        for &(px, py) in &l.points {
            let _ = write!(
                s,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"><title>{} · -c {} · {:.2} GiB</title></circle>",
                n(x(px)),
                n(y(py)),
                l.colour,
                esc(&l.name),
                px as u64,
                py
            );
        }
    }
    for (mx, my, tip) in marks {
        if *my <= ymax {
            let _ = write!(
                s,
                "<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"none\" stroke-width=\"2\" class=\"device\" stroke=\"currentColor\"><title>{}</title></circle>",
                n(x(*mx)),
                n(y(*my)),
                esc(tip)
            );
        }
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>",
        n(LEFT),
        n(LEFT + plot_w),
        n(y(0.0)),
        n(y(0.0))
    );
    format!(
        "<div class=\"chart-box\"><svg class=\"chart memory\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"memory against context length\">{s}</svg></div>",
        n(WIDTH),
        n(height)
    )
}

/// An HTML legend for the lines of a chart.
pub fn line_legend(lines: &[Line]) -> String {
    let mut s = String::from("<div class=\"legend\">");
    for l in lines {
        let _ = write!(
            s,
            "<span><span class=\"sw\" style=\"background:{}\"></span>{}{}</span>",
            l.colour,
            esc(&l.name),
            if l.dashed { " (dashed)" } else { "" }
        );
    }
    s.push_str("</div>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(4.7), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(ticks(17.0), vec![0.0, 5.0, 10.0, 15.0, 20.0]);
        assert_eq!(ticks(0.0), vec![0.0, 1.0]);
        let t = ticks(0.93);
        assert_eq!(fmt_tick(t[3], t[1]), "0.6");
        assert_eq!(fmt_tick(15.0, 5.0), "15");
    }

    #[test]
    fn context_labels_read_as_llama_cpp_users_write_them() {
        assert_eq!(ctx_label(512.0), "512");
        assert_eq!(ctx_label(32768.0), "32K");
        assert_eq!(ctx_label(1048576.0), "1M");
        assert_eq!(ctx_label(40960.0), "40K");
        assert_eq!(ctx_label(1000.0), "1000");
    }

    #[test]
    fn a_tensor_name_in_the_map_is_escaped() {
        let layer = Layer {
            index: 0,
            cells: vec![Cell {
                name: "blk.0.<script>".into(),
                ty: GgmlType::F32,
                bytes: 16,
                elements: 4,
            }],
        };
        let (svg, cut) = tensor_map(&[layer], &[]);
        assert!(svg.contains("blk.0.&lt;script&gt;"), "{svg}");
        assert!(!svg.contains("<script"));
        assert!(!cut);
    }
}
