//! `gguf_rs.quantize(input, output, preset, ...)`: a model quantized to a
//! llama-quantize preset by the library's `quantize_model`, with the
//! flags `gguf quantize` takes (llama-quantize's), or `dry_run`'s plan.

use std::path::{Path, PathBuf};

use gguf::Model;
use gguf_llama::quantize::{
    self, keys::KvOverride, parse_ggml_type, QuantizeJob, QuantizeOptions, QuantizeReport,
    TensorTypeOverride,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::imatrix::PyImatrix;
use crate::{llama_to_py, progress, to_py};

/// Opens a model source as `gguf_rs.open` does: a path, or a string
/// that is a URL or an Ollama entry.
pub(crate) fn open_source(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Model<'static>> {
    if let Ok(text) = source.extract::<String>() {
        py.detach(|| Model::open(text.as_str()))
    } else {
        let path: PathBuf = source.extract()?;
        py.detach(|| Model::open(path))
    }
    .map_err(|e| to_py(py, e))
}

/// An importance matrix given as a `gguf_rs.Imatrix` or a path, with the
/// path to record (`quantize.imatrix.file`) and the file that must not be
/// the output.
pub(crate) fn matrix_arg(
    py: Python<'_>,
    arg: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<(quantize::Imatrix, String, Option<PathBuf>)>> {
    let Some(arg) = arg else { return Ok(None) };
    if let Ok(m) = arg.cast::<PyImatrix>() {
        let m = m.get();
        let path = (!m.path.is_empty()).then(|| PathBuf::from(&m.path));
        return Ok(Some((m.matrix.clone(), m.path.clone(), path)));
    }
    let path: PathBuf = arg.extract()?;
    let matrix = py
        .detach(|| quantize::Imatrix::read(&path))
        .map_err(|e| llama_to_py(py, e))?;
    Ok(Some((
        matrix,
        path.to_string_lossy().into_owned(),
        Some(path),
    )))
}

fn ggml_type(py: Python<'_>, name: Option<&str>) -> PyResult<Option<gguf::GgmlType>> {
    name.map(|n| parse_ggml_type(n).map_err(|e| llama_to_py(py, e)))
        .transpose()
}

/// The report as a dict (shapes in numpy order, rows last, as
/// `gguf_rs.Tensor.shape`).
pub(crate) fn report_dict<'py>(
    py: Python<'py>,
    r: &QuantizeReport,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let tensors = PyList::empty(py);
    for t in &r.tensors {
        let td = PyDict::new(py);
        td.set_item("name", &t.name)?;
        td.set_item("shape", t.shape.iter().rev().copied().collect::<Vec<u64>>())?;
        td.set_item("source_type", t.source.to_string())?;
        td.set_item("type", t.target.to_string())?;
        td.set_item("input_bytes", t.input_bytes)?;
        td.set_item("output_bytes", t.output_bytes)?;
        td.set_item("fell_back", t.fell_back)?;
        td.set_item("imatrix", t.imatrix)?;
        td.set_item("file", t.file)?;
        tensors.append(td)?;
    }
    d.set_item("tensors", tensors)?;
    d.set_item("file_type", r.file_type)?;
    d.set_item(
        "files",
        r.files.iter().map(|p| p.as_os_str()).collect::<Vec<_>>(),
    )?;
    d.set_item("file_bytes", r.file_bytes)?;
    d.set_item("input_bytes", r.input_bytes())?;
    d.set_item("output_bytes", r.output_bytes())?;
    d.set_item("input_bpw", r.input_bpw())?;
    d.set_item("output_bpw", r.output_bpw())?;
    d.set_item("needs_imatrix", r.needs_imatrix)?;
    d.set_item("requantized", r.requantized)?;
    d.set_item("elapsed", r.elapsed.as_secs_f64())?;
    Ok(d)
}

/// The library's quantization (or its plan, with `dry_run`); the flags
/// are `gguf quantize`'s long flags. Returns the report.
#[pyfunction]
#[pyo3(signature = (
    input, output, preset, *, threads=0, imatrix=None, include_weights=vec![],
    exclude_weights=vec![], output_tensor_type=None, token_embedding_type=None,
    tensor_type=vec![], leave_output_tensor=false, pure=false, allow_requantize=false,
    keep_split=false, override_kv=vec![], prune_layers=vec![], dry_run=false, progress=None
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn quantize_model<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    output: Option<PathBuf>,
    preset: &str,
    threads: usize,
    imatrix: Option<&Bound<'py, PyAny>>,
    include_weights: Vec<String>,
    exclude_weights: Vec<String>,
    output_tensor_type: Option<&str>,
    token_embedding_type: Option<&str>,
    tensor_type: Vec<String>,
    leave_output_tensor: bool,
    pure: bool,
    allow_requantize: bool,
    keep_split: bool,
    override_kv: Vec<String>,
    prune_layers: Vec<u32>,
    dry_run: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let lerr = |e| llama_to_py(py, e);
    let mut options = QuantizeOptions::new(preset).map_err(lerr)?;
    options.pure = pure;
    options.leave_output_tensor = leave_output_tensor;
    options.output_tensor_type = ggml_type(py, output_tensor_type)?;
    options.token_embedding_type = ggml_type(py, token_embedding_type)?;
    options.tensor_types = tensor_type
        .iter()
        .map(|t| TensorTypeOverride::parse(t))
        .collect::<Result<_, _>>()
        .map_err(lerr)?;
    options.keep_split = keep_split;
    options.prune_layers = prune_layers;
    let kv_overrides = override_kv
        .iter()
        .map(|a| KvOverride::parse(a))
        .collect::<Result<Vec<_>, _>>()
        .map_err(lerr)?;
    let output = match (output, dry_run) {
        (Some(o), _) => Some(o),
        (None, true) => None,
        (None, false) => {
            return Err(PyValueError::new_err(
                "quantize needs an output path (None only with dry_run=True)",
            ))
        }
    };
    let matrix = matrix_arg(py, imatrix)?;
    let others: Vec<&Path> = matrix.iter().filter_map(|m| m.2.as_deref()).collect();
    if let Some(out) = &output
        && !dry_run
    {
        gguf::write::check_not_inputs(&[out.as_path()], &others).map_err(|e| to_py(py, e))?;
    }
    let selected = match &matrix {
        Some((m, _, _)) => Some(m.select(&include_weights, &exclude_weights).map_err(lerr)?),
        None => None,
    };
    let model = open_source(py, input)?;
    let mut job = QuantizeJob::new(options);
    job.imatrix = selected.as_ref();
    job.imatrix_file = matrix.as_ref().map(|m| m.1.clone()).unwrap_or_default();
    job.allow_requantize = allow_requantize;
    job.kv_overrides = kv_overrides;
    job.threads = threads.min(quantize::max_threads());
    let report = match output.filter(|_| !dry_run) {
        None => py
            .detach(|| quantize::dry_run(&model, &job))
            .map_err(lerr)?,
        Some(out) => {
            let count = if keep_split { model.shards().len() } else { 1 };
            let outputs = quantize::output_files(&out, count, keep_split);
            let outputs: Vec<&Path> = outputs.iter().map(PathBuf::as_path).collect();
            let files: Vec<PathBuf> = model
                .shards()
                .iter()
                .filter_map(|s| s.origin().path().map(Path::to_owned))
                .collect();
            let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
            gguf::write::check_replacing_model(&outputs, &files, &others)
                .and_then(|()| {
                    outputs
                        .iter()
                        .try_for_each(|o| gguf::write::check_output(o))
                })
                .map_err(|e| to_py(py, e))?;
            progress::run(py, progress, |p| {
                quantize::quantize_model(&model, &out, &job, |done, total| {
                    p.report("quantize", done, total)
                })
            })?
            .map_err(lerr)?
        }
    };
    report_dict(py, &report)
}

/// The most threads a quantization uses (4 per core).
#[pyfunction]
pub(crate) fn max_threads() -> usize {
    quantize::max_threads()
}
