//! Bar charts and line charts as inline SVG (bits per weight per layer,
//! memory against context length), in the tensor map's coordinate width.

use std::fmt::Write;

use super::html::esc;
use super::svg::{n, LEFT, WIDTH};

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
    let y = |v: f64| top + plot_h * (1.0 - v / ymax);
    let mut s = String::new();
    y_axis(&mut s, &ticks, top, plot_h, plot_w, unit);
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

/// The y axis of a chart whose plot area starts at `top`, `plot_h` high
/// and `plot_w` wide, scaled to the last of `ticks`: a grid line and a
/// label per tick, and `unit` written up the left side.
fn y_axis(s: &mut String, ticks: &[f64], top: f64, plot_h: f64, plot_w: f64, unit: &str) {
    let ymax = *ticks.last().unwrap_or(&1.0);
    let step = ticks.get(1).copied().unwrap_or(1.0);
    let y = |v: f64| top + plot_h * (1.0 - v / ymax);
    for &t in ticks {
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(LEFT),
            n(LEFT + plot_w),
            n(y(t)),
            n(y(t)),
            n(LEFT - 6.0),
            n(y(t) + 4.0),
            fmt_tick(t, step)
        );
    }
    let _ = write!(
        s,
        "<text x=\"4\" y=\"{}\" transform=\"rotate(-90 4 {})\" text-anchor=\"middle\" dominant-baseline=\"hanging\">{}</text>",
        n(top + plot_h / 2.0),
        n(top + plot_h / 2.0),
        esc(unit)
    );
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
    let x = |v: f64| LEFT + plot_w * ((v.max(1.0).log2() - lo) / (hi - lo));
    let y = |v: f64| top + plot_h * (1.0 - v / ymax);
    let mut s = String::new();
    y_axis(&mut s, &ticks, top, plot_h, plot_w, "GiB");
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
}
