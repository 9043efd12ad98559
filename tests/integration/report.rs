//! `gguf report`: the page's content as a user gets it (every section, text
//! escaped, the vocabulary summarised, what it leaves out said), for the
//! bundled sample, a split model, a hostile-metadata file and a comparison.
//! The same pages in a real browser: `report_browser.rs`.

use std::path::{Path, PathBuf};

use gguf::write::{Builder, SplitOptions};
use gguf::GgmlType;

use super::remote::Server;
use super::util::gguf;

pub const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

/// Markup a hostile file puts wherever text is shown: it tries to close
/// the title, run a script, set an element the browser test looks for,
/// break out of an attribute and run an event handler.
pub const HOSTILE: &str = "</title><script>window.__gguf_pwned=1</script><img id=\"gguf-pwned\" \
                           src=x onerror=\"window.__gguf_pwned=2\"><svg onload='window.__gguf_pwned=3'>\
                           \" onmouseover=\"window.__gguf_pwned=4\u{1b}[2J";

/// Runs `gguf report` with `args`, which must succeed; returns the page
/// written to `out`.
#[track_caller]
pub fn report(model: &Path, out: &Path, args: &[&str]) -> String {
    let mut all = vec![
        "report".as_ref(),
        model.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ];
    all.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
    let res = gguf(&all);
    assert!(
        res.status.success(),
        "gguf report failed: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    let said = String::from_utf8_lossy(&res.stdout);
    assert!(said.starts_with("wrote "), "{said}");
    std::fs::read_to_string(out).unwrap()
}

/// A llama-shaped model of `layers` layers whose tensors are of `ty`.
fn llama(name: &str, layers: u32, ty: GgmlType) -> Builder<'static> {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.name", name).unwrap();
    for (key, v) in [
        ("context_length", 4096u32),
        ("embedding_length", 64),
        ("block_count", layers),
        ("feed_forward_length", 128),
        ("attention.head_count", 2),
        ("attention.head_count_kv", 2),
    ] {
        b.set(format!("llama.{key}"), v).unwrap();
    }
    b.set("llama.attention.layer_norm_rms_epsilon", 1e-5f32)
        .unwrap();
    let tensor = |b: &mut Builder<'static>, name: String, ty: GgmlType, shape: &[u64]| {
        let n = gguf::format::tensor_nbytes(ty, shape).unwrap();
        b.add_tensor(name, ty, shape, vec![0u8; n as usize])
            .unwrap();
    };
    tensor(&mut b, "token_embd.weight".into(), ty, &[64, 32]);
    for l in 0..layers {
        tensor(
            &mut b,
            format!("blk.{l}.attn_norm.weight"),
            GgmlType::F32,
            &[64, 1],
        );
        for t in ["attn_q", "attn_k", "attn_v", "attn_output"] {
            tensor(&mut b, format!("blk.{l}.{t}.weight"), ty, &[64, 64]);
        }
        tensor(
            &mut b,
            format!("blk.{l}.ffn_norm.weight"),
            GgmlType::F32,
            &[64, 1],
        );
        tensor(&mut b, format!("blk.{l}.ffn_up.weight"), ty, &[64, 128]);
        tensor(&mut b, format!("blk.{l}.ffn_gate.weight"), ty, &[64, 128]);
        tensor(&mut b, format!("blk.{l}.ffn_down.weight"), ty, &[128, 64]);
    }
    tensor(&mut b, "output_norm.weight".into(), GgmlType::F32, &[64, 1]);
    tensor(&mut b, "output.weight".into(), ty, &[64, 32]);
    b
}

/// A 4-layer model split into 3 shards; returns the first shard.
pub fn split_model(dir: &Path) -> PathBuf {
    let mut b = llama("split model", 4, GgmlType::Q8_0);
    b.write_split(
        dir.join("split.gguf"),
        &SplitOptions::default().max_tensors(14),
    )
    .unwrap();
    let first = dir.join("split-00001-of-00003.gguf");
    assert!(first.exists(), "expected 3 shards in {}", dir.display());
    first
}

/// A model whose name, metadata (a key and a value) and a tensor name
/// carry [`HOSTILE`].
pub fn hostile_model(dir: &Path) -> PathBuf {
    let mut b = llama(HOSTILE, 2, GgmlType::F16);
    b.set("general.description", HOSTILE).unwrap();
    b.set(format!("x.{HOSTILE}"), 1u32).unwrap();
    b.add_tensor("blk.0.<b>bold</b>", GgmlType::F32, &[4], vec![0u8; 16])
        .unwrap();
    let path = dir.join("hostile.gguf");
    b.write_to_path(&path).unwrap();
    path
}

#[test]
fn the_sample_s_page_has_every_section_and_no_script() {
    let dir = tempfile::tempdir().unwrap();
    let page = report(Path::new(SAMPLE), &dir.path().join("p.html"), &[]);
    for id in ["summary", "tensors", "bits", "memory", "metadata"] {
        assert!(page.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    for chart in ["tensor-map", "bars", "memory"] {
        assert!(
            page.contains(&format!("<svg class=\"chart {chart}\"")),
            "{chart}"
        );
    }
    // Self-contained: no script, nothing fetched, and a policy saying so.
    assert!(!page.to_ascii_lowercase().contains("<script"));
    assert!(!page.contains("src="), "nothing to load");
    assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    assert!(
        page.contains("<title>tiny-llama sample · GGUF report</title>"),
        "{page:.300}"
    );
    // The chat template, as text.
    assert!(
        page.contains("<summary>chat template (77 characters)</summary><pre>{% for m in messages %}&lt;s&gt;{{ m[&#39;role&#39;] }}"),
        "{page}"
    );
    // The estimate's own figures, as `gguf estimate` prints them.
    let est = gguf(&["estimate", SAMPLE]);
    let est = String::from_utf8(est.stdout).unwrap();
    let total = est.lines().find(|l| l.contains("total")).unwrap().trim();
    assert!(page.contains(total), "{total:?} not in the page");
}

#[test]
fn hostile_text_is_escaped_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let model = hostile_model(dir.path());
    let page = report(&model, &dir.path().join("h.html"), &[]);
    let lower = page.to_ascii_lowercase();
    for raw in ["<script", "<img", "<svg onload", "\u{1b}"] {
        assert!(!lower.contains(raw), "{raw:?} reached the page raw");
    }
    assert!(
        page.contains("<title>&lt;/title&gt;&lt;script&gt;"),
        "the title holds the name as text"
    );
    assert!(!page.contains("<b>bold</b>"));
    assert!(page.contains("&lt;script&gt;window.__gguf_pwned=1&lt;/script&gt;"));
    assert!(page.contains("blk.0.&lt;b&gt;bold&lt;/b&gt;"));
    assert!(page.contains("onmouseover=&quot;"));
    assert!(
        page.contains("\\u{1b}[2J"),
        "control characters shown escaped"
    );
}

#[test]
fn a_split_model_reads_whole_from_any_shard() {
    let dir = tempfile::tempdir().unwrap();
    let first = split_model(dir.path());
    let third = dir.path().join("split-00003-of-00003.gguf");
    let a = report(&first, &dir.path().join("a.html"), &[]);
    let b = report(&third, &dir.path().join("b.html"), &[]);
    assert!(a.contains("3 shards<br>"), "{a}");
    // Every layer of the whole model, whichever shard was named.
    for page in [&a, &b] {
        assert!(page.contains(">blk.3</text>"));
        assert!(page.contains("split-00002-of-00003.gguf"));
    }
}

#[test]
fn compare_shows_the_tensors_that_differ() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.gguf");
    let b = dir.path().join("b.gguf");
    llama("A", 2, GgmlType::F16).write_to_path(&a).unwrap();
    let mut other = llama("B", 2, GgmlType::Q8_0);
    other
        .add_tensor("extra.weight", GgmlType::F32, &[4], vec![0u8; 16])
        .unwrap();
    other.write_to_path(&b).unwrap();
    let page = report(
        &a,
        &dir.path().join("c.html"),
        &["--compare", b.to_str().unwrap()],
    );
    assert!(page.contains("<section id=\"compare\">"));
    // 2 x 7 weight matrices + embeddings + output changed type, one new.
    assert!(
        page.contains(
            "17 tensors differ in type or size or exist in one model only; 5 are the same."
        ),
        "{page}"
    );
    assert!(page.contains("<td>extra.weight</td><td>–</td><td>F32</td>"));
    assert!(page.contains("<td>blk.1.ffn_down.weight</td><td>F16</td><td>Q8_0</td>"));
    assert!(page.contains("A KV f16") && page.contains("B KV f16"));
}

#[test]
fn what_cannot_be_drawn_is_left_out_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.gguf");
    let mut b = Builder::new();
    b.set("general.architecture", "no-such-arch").unwrap();
    b.add_tensor("weights", GgmlType::F32, &[8], vec![0u8; 32])
        .unwrap();
    b.write_to_path(&path).unwrap();
    let page = report(&path, &dir.path().join("o.html"), &[]);
    assert!(page.contains("Left out: bits per weight per layer (the model has no blk.N layers)"));
    assert!(
        page.contains("Left out: memory against context length ("),
        "{page}"
    );
    // What can be drawn still is.
    assert!(page.contains("<svg class=\"chart tensor-map\""));
}

#[test]
fn a_large_vocabulary_is_summarised() {
    // Gemma 3's 262,144 tokens: the page stays far under 2 MB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vocab.gguf");
    let mut b = llama("big vocabulary", 1, GgmlType::F16);
    let tokens: Vec<String> = (0..262_144).map(|i| format!("▁token{i}")).collect();
    b.set("tokenizer.ggml.model", "llama").unwrap();
    b.set("tokenizer.ggml.tokens", tokens).unwrap();
    b.set("tokenizer.ggml.scores", vec![0f32; 262_144]).unwrap();
    b.write_to_path(&path).unwrap();
    let page = report(&path, &dir.path().join("v.html"), &[]);
    assert!(page.len() < 200_000, "{} bytes", page.len());
    assert!(page.contains("array of string (262144)"));
    assert!(page.contains("▁token199") && !page.contains("▁token200,"));
}

#[test]
fn dash_writes_the_page_to_stdout() {
    let out = gguf(&["report", SAMPLE, "-o", "-"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
}

#[test]
fn a_remote_model_s_page_is_the_local_one_from_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(SAMPLE);
    let server = Server::http(sample.parent().unwrap());
    let url = server.url("tiny-llama.gguf");
    let local = report(sample, &dir.path().join("l.html"), &[]);
    server.take_stats();
    let remote = report(Path::new(&url), &dir.path().join("r.html"), &[]);
    let (requests, _) = server.take_stats();
    assert!(
        requests <= 3,
        "{requests} requests: the header alone is read"
    );
    assert_eq!(
        remote.replace(&url, "MODEL"),
        local.replace(SAMPLE, "MODEL")
    );
}

#[test]
fn a_gguf_name_is_never_replaced_by_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.gguf");
    std::fs::copy(SAMPLE, &model).unwrap();
    let os = std::ffi::OsStr::new;
    let out = gguf(&[os("report"), model.as_os_str(), os("-o"), model.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to write the page to"));
    assert_eq!(
        std::fs::read(&model).unwrap(),
        std::fs::read(SAMPLE).unwrap()
    );
}
