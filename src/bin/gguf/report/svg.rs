//! The tensor map as inline SVG, the colours of the ggml types and their
//! legend (the bar and line charts: `charts.rs`). Text in the SVG is
//! escaped with [`esc`]; colours are fixed per ggml type and read on
//! light and dark backgrounds alike (axes and labels take the page's
//! colours from its style sheet).

use std::fmt::Write;

use gguf::GgmlType;

use super::facts::{Cell, Layer};
use super::html::{bytes, esc};

/// Width of every chart's coordinate system (it scales to the page).
pub const WIDTH: f64 = 960.0;
/// Left margin for labels.
pub const LEFT: f64 = 64.0;
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
pub fn n(v: f64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
