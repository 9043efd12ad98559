//! The page's frame: escaping, the document around the sections, its
//! style sheet (light and dark schemes, print, narrow screens: a chart
//! keeps a legible width and scrolls sideways in its box).
//!
//! Everything shown from a file (names, keys, values, tensor names) goes
//! through [`esc`]: the page holds no script, and its Content Security
//! Policy forbids scripts and every request, so a `<script>` in
//! `general.name` stays text even if an escape were ever missed.

use std::fmt::Write;

/// `text` safe inside HTML text and quoted attributes: `& < > " '` as
/// character references, and control characters but line feeds and tabs
/// shown as Rust escapes (`\u{1b}`), as the terminal output shows them.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.extend(c.escape_debug()),
            c => out.push(c),
        }
    }
    out
}

/// Bytes with a binary unit and two decimals (`1.50 GiB`).
pub fn bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{v:.2} {}", units[unit])
    }
}

/// A section of the page: its anchor, heading and body.
pub struct Section {
    pub id: &'static str,
    pub heading: String,
    pub body: String,
}

/// The whole document.
pub fn page(title: &str, subtitle: &str, sections: &[Section]) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <meta name=\"generator\" content=\"gguf report {}\">\n\
         <title>{} · GGUF report</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header>\n\
         <h1>{}</h1>\n<p class=\"sub\">{}</p>\n<nav>",
        env!("CARGO_PKG_VERSION"),
        esc(title),
        esc(title),
        esc(subtitle)
    );
    for sec in sections {
        let _ = write!(s, "<a href=\"#{}\">{}</a> ", sec.id, esc(&sec.heading));
    }
    s.push_str("</nav>\n</header>\n<main>\n");
    for sec in sections {
        let _ = write!(
            s,
            "<section id=\"{}\">\n<h2>{}</h2>\n{}\n</section>\n",
            sec.id,
            esc(&sec.heading),
            sec.body
        );
    }
    let _ = write!(
        s,
        "</main>\n<footer>Made by <code>gguf report</code> {} from the model's header alone.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    s
}

/// A two-column table of (label, value) rows, values already HTML.
pub fn facts_table(rows: &[(&str, String)]) -> String {
    let mut s = String::from("<table class=\"facts\">\n");
    for (label, value) in rows {
        let _ = writeln!(s, "<tr><th>{}</th><td>{value}</td></tr>", esc(label));
    }
    s.push_str("</table>");
    s
}

/// A note on what a section could not draw, and why.
pub fn left_out(what: &str, why: &str) -> String {
    format!(
        "<p class=\"left-out\">Left out: {} ({})</p>",
        esc(what),
        esc(why)
    )
}

const CSS: &str = r#"
:root{--bg:#fff;--fg:#1b1f24;--muted:#5a6270;--line:#d5d9e0;--panel:#f5f7fa;--accent:#2f6fdb;--warn:#a15c00;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#15181d;--fg:#e4e7ec;--muted:#9aa3b0;--line:#343a44;--panel:#1e232a;--accent:#7aa7ff;--warn:#f0b35a}}
body{background:var(--bg);color:var(--fg);margin:0 auto;max-width:1200px;padding:0 16px 32px;line-height:1.45}
header{border-bottom:1px solid var(--line);padding:12px 0}
h1{font-size:1.6rem;margin:.3em 0;overflow-wrap:anywhere}
h2{font-size:1.25rem;margin:1.6em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:4px}
.sub{color:var(--muted);margin:0;overflow-wrap:anywhere}
nav a{color:var(--accent);margin-right:.8em;text-decoration:none;white-space:nowrap}
section{break-inside:auto}
table{border-collapse:collapse;font-size:.9rem;max-width:100%}
th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere}
table.facts th{color:var(--muted);font-weight:600;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}
table.meta td:first-child,table.diff td:first-child{font-family:ui-monospace,monospace;white-space:nowrap}
table.meta td{font-family:ui-monospace,monospace;font-size:.85rem}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
pre{background:var(--panel);padding:8px;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.82rem;max-height:28em}
details summary{cursor:pointer;color:var(--accent)}
svg{display:block;width:100%;height:auto}
.chart-box{overflow-x:auto;max-width:100%}
svg text{fill:var(--fg);font-size:11px;font-family:system-ui,sans-serif}
svg .axis{stroke:var(--muted);stroke-width:1}
svg .grid{stroke:var(--line);stroke-width:1}
svg .device{stroke:var(--warn);stroke-width:1;stroke-dasharray:5 4}
svg text.device{fill:var(--warn)}
svg .avg{stroke:var(--fg);stroke-width:1.5;stroke-dasharray:2 3}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;margin:8px 0;font-size:.85rem}
.legend span.sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px;border:1px solid var(--line)}
.caption{color:var(--muted);font-size:.88rem;margin:.4em 0}
.left-out{color:var(--warn)}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:16px}
footer{color:var(--muted);font-size:.8rem;margin-top:32px;border-top:1px solid var(--line);padding-top:8px}
@media (max-width:640px){body{padding:0 8px 24px}svg.chart{min-width:860px}.pair{grid-template-columns:1fr}h1{font-size:1.25rem}table{font-size:.8rem}}
@media print{nav{display:none}body{max-width:none}pre{max-height:none}section{break-before:auto}svg{break-inside:avoid}}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_controls_are_escaped() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(esc("a\u{1b}[2Jb\nc\u{9b}"), "a\\u{1b}[2Jb\nc\\u{9b}");
    }

    #[test]
    fn bytes_take_a_binary_unit() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(bytes(3 << 30), "3.00 GiB");
    }
}
