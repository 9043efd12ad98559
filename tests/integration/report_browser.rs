//! `gguf report`'s pages in a real browser: headless Chromium (Debian's
//! `chromium-headless-shell`, which `scripts/test.sh` installs when it can)
//! loads the page of the bundled sample, of a split model, of a
//! hostile-metadata file and of a comparison, driven over the DevTools
//! protocol by `tests/browser/report_page.py`. Each must load with no
//! console error and no network request, draw non-empty SVG charts, run no
//! script (the hostile file's stays text), follow the dark colour scheme
//! and fit a phone's width.
//!
//! Without the browser the test says it was skipped; with
//! `GGUF_REQUIRE_BROWSER=1` (CI) it fails instead. `GGUF_CHROMIUM` names
//! another binary.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::report::{hostile_model, report, split_model, HOSTILE, SAMPLE};

/// The browser's binary, from `GGUF_CHROMIUM` or the PATH.
fn chromium() -> Option<PathBuf> {
    let name =
        std::env::var_os("GGUF_CHROMIUM").unwrap_or_else(|| "chromium-headless-shell".into());
    let name = PathBuf::from(name);
    if name.components().count() > 1 {
        return name.is_file().then_some(name);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(&name))
        .find(|p| p.is_file())
}

/// What the browser saw loading `page`.
fn load(browser: &Path, page: &Path) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/report_page.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg("--chromium")
        .arg(browser)
        .arg(page)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// The checks every page passes; returns the number of charts drawn.
#[track_caller]
fn assert_clean(name: &str, seen: &Value) -> usize {
    assert_eq!(seen["console"], serde_json::json!([]), "{name}: console");
    assert_eq!(seen["requests"], serde_json::json!([]), "{name}: requests");
    assert_eq!(seen["scripts"], 0, "{name}: a script element");
    assert_eq!(seen["pwned"], false, "{name}: an injected script ran");
    assert_eq!(seen["phone_overflow"], 0, "{name}: wider than a phone");
    let phone_chart = seen["phone_chart_width"].as_f64().unwrap();
    assert!(
        phone_chart >= 800.0,
        "{name}: charts shrink to {phone_chart} px on a phone"
    );
    assert_ne!(
        seen["dark_background"], seen["light_background"],
        "{name}: no dark scheme"
    );
    let charts = seen["svgs"].as_array().expect("svgs");
    for c in charts {
        let (w, h) = (c["width"].as_f64().unwrap(), c["height"].as_f64().unwrap());
        assert!(w > 100.0 && h > 50.0, "{name}: an empty chart: {c}");
        assert!(
            c["shapes"].as_u64().unwrap() > 0,
            "{name}: nothing drawn: {c}"
        );
    }
    charts.len()
}

#[test]
fn pages_render_cleanly_in_headless_chromium() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("GGUF_REQUIRE_BROWSER").is_none(),
            "GGUF_REQUIRE_BROWSER is set but chromium-headless-shell is not installed"
        );
        println!(
            "skipped: report_browser: chromium-headless-shell not found (apt-get install \
             chromium-headless-shell, or set GGUF_CHROMIUM)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    let sample = d.join("sample.html");
    report(Path::new(SAMPLE), &sample, &[]);
    let seen = load(&browser, &sample);
    // Tensor map, bits per layer, memory.
    assert_eq!(assert_clean("sample", &seen), 3, "{seen}");
    assert_eq!(seen["title"], "tiny-llama sample · GGUF report");

    let first = split_model(d);
    let split = d.join("split.html");
    report(&first, &split, &[]);
    assert_eq!(assert_clean("split", &load(&browser, &split)), 3);

    let hostile = d.join("hostile.html");
    report(&hostile_model(d), &hostile, &[]);
    let seen = load(&browser, &hostile);
    assert_clean("hostile", &seen);
    // The markup is shown as the text it is.
    let shown = HOSTILE.replace('\u{1b}', "\\u{1b}");
    assert_eq!(seen["h1"], shown.as_str());
    assert_eq!(seen["title"], format!("{shown} · GGUF report").as_str());

    let compared = d.join("compare.html");
    report(&first, &compared, &["--compare", SAMPLE]);
    // Plus the comparison's bars and memory curves.
    assert_eq!(assert_clean("compare", &load(&browser, &compared)), 5);
}
