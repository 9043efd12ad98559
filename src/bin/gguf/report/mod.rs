//! `gguf report MODEL [-o FILE.html] [--compare OTHER]`: one
//! self-contained HTML page (inline CSS and SVG, no script, no request)
//! that shows a model at a glance, from its header alone: the summary and
//! metadata, a tensor map, bits per weight per layer, memory against
//! context length; with `--compare`, two models side by side.
//!
//! The page lives in the CLI, not the library: it is presentation, and a
//! library user (default features off) compiles none of it. Its figures
//! come from the library (`facts.rs`): `summary::ModelSummary`,
//! `estimate::Estimate` and `estimate::fit`, the same as `gguf inspect`
//! and `gguf estimate` print.

mod charts;
mod compare;
mod facts;
mod html;
mod sections;
mod svg;

use std::io::Write;
use std::path::{Path, PathBuf};

use facts::Facts;

#[derive(clap::Args)]
pub struct Args {
    /// The model: a path (any shard of a split model), ollama:NAME[:TAG],
    /// or a URL (http(s)://, hf://, ms://, ollama://, s3://, gs://, az://),
    /// of which only the header is read.
    model: PathBuf,
    #[command(flatten)]
    source: crate::open::SourceArgs,
    /// The page to write; `-` for stdout. Default: the model's file name
    /// with `.html`, in the current directory.
    #[arg(short, long, value_name = "FILE.html")]
    output: Option<PathBuf>,
    /// Another model (any source) to show beside it: per-tensor type and
    /// size differences, both models' bits per layer and memory curves.
    #[arg(long, value_name = "OTHER")]
    compare: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let model = crate::open::open_model(&args.model, &args.source)?;
    let facts = Facts::of(&model, crate::open::shown(&args.model));
    let mut inputs = crate::open::local_files(&model);
    let other = match &args.compare {
        Some(path) => {
            let m = crate::open::open_model(path, &args.source)?;
            inputs.extend(crate::open::local_files(&m));
            Some(Facts::of(&m, crate::open::shown(path)))
        }
        None => None,
    };
    let page = render(&facts, other.as_ref());
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(&args.model));
    if out.as_os_str() == "-" {
        return crate::print_raw(&page);
    }
    // `-o model.gguf` would replace a model with a web page.
    if out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
    {
        return Err(crate::usage_error(
            "report",
            format!(
                "refusing to write the page to {}: a .gguf name (give -o FILE.html)",
                crate::open::shown(&out)
            ),
        ));
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    crate::open::guard_outputs(&[out.as_path()], &inputs)?;
    // Atomic: an existing page is replaced only by a complete one, and an
    // interrupted run leaves no temporary file (`Command::writes`).
    gguf::write::replace_file(&out, |f| Ok(f.write_all(page.as_bytes())?))?;
    crate::print(&format!(
        "wrote {}: {} bytes",
        crate::open::shown(&out),
        page.len()
    ))
}

/// The page for `facts`, and with `other` the comparison.
fn render(facts: &Facts, other: Option<&Facts>) -> String {
    let mut list = vec![
        sections::summary(facts),
        sections::tensor_map(facts),
        sections::layer_bits(facts),
        sections::memory(facts),
    ];
    if let Some(b) = other {
        list.push(compare::section(facts, b));
    }
    list.push(sections::metadata(facts));
    let subtitle = match &facts.summary {
        Ok(m) => format!(
            "{} · {} parameters · {} · {:.2} bits per weight · {}",
            m.architecture.as_deref().unwrap_or("unknown architecture"),
            gguf::summary::ModelSummary::format_count(m.parameters),
            m.quantization,
            m.bits_per_weight,
            facts.origin
        ),
        Err(_) => facts.origin.clone(),
    };
    html::page(facts.title(), &subtitle, &list)
}

/// `model.gguf` -> `model.html`; a URL's last path segment likewise;
/// `ollama:gemma3:270m` -> `gemma3-270m.html`.
fn default_output(model: &Path) -> PathBuf {
    let text = model.to_string_lossy();
    let path_part = text.split(['?', '#']).next().unwrap_or("");
    let last = path_part
        .rsplit(['/', '\\'])
        .find(|s| !s.is_empty())
        .unwrap_or("model");
    let last = last.strip_prefix("ollama:").unwrap_or(last);
    let stem = last.strip_suffix(".gguf").unwrap_or(last).replace(':', "-");
    PathBuf::from(format!("{stem}.html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_page_is_named_after_the_model() {
        assert_eq!(
            default_output(Path::new("dir/tiny-llama.gguf")),
            PathBuf::from("tiny-llama.html")
        );
        assert_eq!(
            default_output(Path::new("hf://org/repo/m-Q4_K_M.gguf?download=1")),
            PathBuf::from("m-Q4_K_M.html")
        );
        assert_eq!(
            default_output(Path::new("ollama:gemma3:270m")),
            PathBuf::from("gemma3-270m.html")
        );
    }
}
