//! `gguf_rs.import_hf(dir, output, ...)`: a Hugging Face checkpoint to the
//! GGUF llama.cpp's converter writes, by the library's `import_model`,
//! with the flags `gguf import` takes.

use std::path::PathBuf;

use gguf::write::SplitOptions;
use gguf_import::{ImportOptions, ImportReport, Stage, Target};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::model_quantize::matrix_arg;
use crate::{import_to_py, progress, to_py};

fn report_dict<'py>(py: Python<'py>, r: &ImportReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("hf_architecture", &r.hf_architecture)?;
    d.set_item("architecture", &r.architecture)?;
    d.set_item(
        "files",
        r.files.iter().map(|p| p.as_os_str()).collect::<Vec<_>>(),
    )?;
    d.set_item("metadata", r.metadata)?;
    d.set_item("tensors", r.tensors)?;
    d.set_item("parameters", r.parameters)?;
    d.set_item("bytes", r.bytes)?;
    d.set_item("elapsed", r.elapsed.as_secs_f64())?;
    d.set_item("notes", &r.notes)?;
    Ok(d)
}

/// The library's import of the checkpoint in `dir`; the arguments are
/// `gguf import`'s long flags (`type` its `--type`, sizes in bytes).
/// Returns the report.
#[pyfunction]
#[pyo3(signature = (
    dir, output, *, r#type="f16", imatrix=None, pre_tokenizer=None, split_max_size=None,
    split_max_tensors=None, threads=0, lora_base=None, mmproj=false, progress=None
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn import_hf<'py>(
    py: Python<'py>,
    dir: PathBuf,
    output: PathBuf,
    r#type: &str,
    imatrix: Option<&Bound<'py, PyAny>>,
    pre_tokenizer: Option<String>,
    split_max_size: Option<u64>,
    split_max_tensors: Option<usize>,
    threads: usize,
    lora_base: Option<PathBuf>,
    mmproj: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let usage = |m: &str| PyErr::new::<pyo3::exceptions::PyValueError, _>(m.to_owned());
    let target = Target::parse(r#type).map_err(|e| import_to_py(py, e))?;
    let preset = matches!(target, Target::Preset(_));
    if imatrix.is_some() && !preset {
        return Err(usage(
            "imatrix needs a quantization preset (type=\"q4_k_m\", ...)",
        ));
    }
    if mmproj && preset {
        return Err(usage(
            "mmproj writes f32, f16, bf16 or q8_0 (type), as the converter writes a vision projector",
        ));
    }
    if mmproj && lora_base.is_some() {
        return Err(usage("mmproj and lora_base cannot be combined"));
    }
    if split_max_size == Some(0) || split_max_tensors == Some(0) {
        return Err(usage(
            "split_max_size and split_max_tensors must be above 0",
        ));
    }
    // Before the importance matrix is read, as the CLI checks.
    if let Some(m) = imatrix
        && let Ok(path) = m.extract::<PathBuf>()
    {
        gguf::write::check_not_inputs(&[output.as_path()], &[path.as_path()])
            .map_err(|e| to_py(py, e))?;
    }
    let matrix = matrix_arg(py, imatrix)?;
    let mut options = ImportOptions::new(target);
    options.pre_tokenizer = pre_tokenizer;
    options.lora_base = lora_base;
    options.mmproj = mmproj;
    options.imatrix = matrix.as_ref().map(|m| &m.0);
    options.imatrix_file = matrix.as_ref().map(|m| m.1.clone()).unwrap_or_default();
    options.threads = threads.min(gguf_llama::quantize::max_threads());
    if split_max_size.is_some() || split_max_tensors.is_some() {
        options.split = Some(
            SplitOptions::default()
                .max_size(split_max_size.unwrap_or(0))
                .max_tensors(split_max_tensors.unwrap_or(0)),
        );
    }
    let report = progress::run(py, progress, |p| {
        gguf_import::import_model(&dir, &output, &options, |stage, done, total| {
            let stage = match stage {
                Stage::Convert => "convert",
                Stage::Quantize => "quantize",
                _ => "work",
            };
            p.report(stage, done, total)
        })
    })?
    .map_err(|e| import_to_py(py, e))?;
    report_dict(py, &report)
}

/// `(config.json architecture, GGUF architecture, mixture of experts,
/// has a vision projector)` of every architecture the import knows.
#[pyfunction]
pub(crate) fn import_architectures() -> Vec<(&'static str, &'static str, bool, bool)> {
    gguf_import::architectures()
        .flat_map(|a| {
            a.hf_names
                .iter()
                .map(move |n| (*n, a.gguf, a.experts, gguf_import::has_projector(n)))
        })
        .collect()
}
