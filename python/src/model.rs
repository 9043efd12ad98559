//! `gguf_rs.open(source)`: a whole model (one file or every shard of a
//! split one) through the library's door, `Model::open`.

use gguf::{Gguf, Model};
use gguf_llama::estimate::Estimate;
use gguf_llama::summary::ModelSummary;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::buffer::F32Buffer;
use crate::summary::{estimate_dict, fit_dict, settings, summary_dict, EstimateArgs};
use crate::{llama_to_py, to_py, to_python};

/// A model opened by the library: metadata and tensors across its shards.
#[pyclass(frozen, module = "gguf_rs._native", name = "Model")]
pub(crate) struct PyModel {
    model: Model<'static>,
}

impl PyModel {
    fn tensor(&self, py: Python<'_>, name: &str) -> PyResult<gguf::Tensor<'_>> {
        self.model.tensor(name).map_err(|e| to_py(py, e))
    }
}

#[pymethods]
impl PyModel {
    /// Opens `source` as the library does: a path (any shard of a split
    /// model opens the whole set), or a string that is a URL or an Ollama
    /// entry when its scheme says so (this crate builds gguf-core with
    /// remote reading).
    #[new]
    fn new(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PyModel {
            model: crate::model_quantize::open_source(py, source)?,
        })
    }

    /// Every metadata entry (the split keys of a split model hidden), in
    /// file order, as Python values.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (key, value) in self.model.metadata() {
            dict.set_item(key, to_python(py, &value)?)?;
        }
        Ok(dict)
    }

    /// `(key, type name)` of every metadata entry, in file order.
    fn value_types(&self) -> Vec<(String, &'static str)> {
        self.model
            .metadata()
            .map(|(k, v)| (k.to_owned(), v.value_type().name()))
            .collect()
    }

    /// `(name, type id, dims in ggml order)` of every tensor, in model order.
    fn tensors(&self) -> Vec<(String, u32, Vec<u64>)> {
        self.model
            .tensors()
            .map(|t| (t.name().to_owned(), t.ggml_type().id(), t.shape().to_vec()))
            .collect()
    }

    /// The library's `ModelSummary::of`: architecture, parameters, bits
    /// per weight, quantization label, tensor types, hyper-parameters.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = ModelSummary::of(&self.model).map_err(|e| llama_to_py(py, e))?;
        summary_dict(py, &s)
    }

    /// The library's `Estimate::of` at llama.cpp's settings (its defaults
    /// where None): what `gguf estimate --json` prints, as a dict; with
    /// `fit` (a budget in bytes), also the library's `fit` under `"fit"`,
    /// as `gguf estimate --json --fit` prints it.
    #[pyo3(signature = (
        context=None, batch=None, ubatch=None, parallel=None, flash_attn=None,
        cache_type_k=None, cache_type_v=None, swa_full=false, kv_unified=false,
        n_gpu_layers=None, tensor_split=None, no_kv_offload=false, no_mmap=false, fit=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn estimate<'py>(
        &self,
        py: Python<'py>,
        context: Option<u32>,
        batch: Option<u32>,
        ubatch: Option<u32>,
        parallel: Option<u32>,
        flash_attn: Option<&str>,
        cache_type_k: Option<&str>,
        cache_type_v: Option<&str>,
        swa_full: bool,
        kv_unified: bool,
        n_gpu_layers: Option<i32>,
        tensor_split: Option<Vec<f32>>,
        no_kv_offload: bool,
        no_mmap: bool,
        fit: Option<u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s = settings(&EstimateArgs {
            context,
            batch,
            ubatch,
            parallel,
            flash_attn,
            cache_type_k,
            cache_type_v,
            swa_full,
            kv_unified,
            n_gpu_layers,
            tensor_split,
            no_kv_offload,
            no_mmap,
        })?;
        let model = &self.model;
        let e = py
            .detach(|| Estimate::of(model, &s))
            .map_err(|e| llama_to_py(py, e))?;
        let d = estimate_dict(py, &e)?;
        if let Some(budget) = fit {
            let (f, smallest) = py
                .detach(|| -> gguf_llama::Result<_> {
                    let f = gguf_llama::estimate::fit(model, &s, budget)?;
                    // When nothing fits, what the smallest context needs.
                    let smallest = match f.max_ctx {
                        Some(_) => None,
                        None => Some(Estimate::of(model, &s.clone().n_ctx(256))?),
                    };
                    Ok((f, smallest))
                })
                .map_err(|e| llama_to_py(py, e))?;
            d.set_item("fit", fit_dict(py, &f, &s, smallest.as_ref())?)?;
        }
        Ok(d)
    }

    /// The model's tokenizer, built from its `tokenizer.*` metadata.
    fn tokenizer(&self, py: Python<'_>) -> PyResult<crate::tokenizer::PyTokenizer> {
        let model = &self.model;
        let tok = py
            .detach(|| gguf_tokenizer::Tokenizer::from_model(model))
            .map_err(|e| crate::tokenizer_to_py(py, e))?;
        Ok(crate::tokenizer::PyTokenizer { tok })
    }

    /// A conversation (llama-server's request body, as JSON text) rendered
    /// with the model's template (or `template` by name, or
    /// `template_source`): `(prompt, input byte ranges, token ids)`.
    #[pyo3(signature = (request, add_generation_prompt=true, enable_thinking=None, template=None, template_source=None, extra=None))]
    #[allow(clippy::too_many_arguments)]
    fn chat(
        &self,
        py: Python<'_>,
        request: &str,
        add_generation_prompt: bool,
        enable_thinking: Option<bool>,
        template: Option<&str>,
        template_source: Option<&str>,
        extra: Option<&str>,
    ) -> PyResult<crate::chat::Prompt> {
        crate::chat::render(
            py,
            &self.model,
            request,
            add_generation_prompt,
            enable_thinking,
            template,
            template_source,
            extra,
        )
    }

    /// The names of the model's chat templates.
    fn chat_templates(&self) -> Vec<String> {
        crate::chat::names(&self.model)
    }

    /// Number of files the model spans.
    fn shard_count(&self) -> usize {
        self.model.shards().len()
    }

    /// The stored bytes of tensor `name` (GIL released while reading).
    fn tensor_bytes<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let tensor = self.tensor(py, name)?;
        let bytes = py.detach(|| tensor.read()).map_err(|e| to_py(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Tensor `name` decoded to f32 on every core with the GIL released,
    /// for numpy to take without copying.
    fn tensor_f32(&self, py: Python<'_>, name: &str) -> PyResult<F32Buffer> {
        let tensor = self.tensor(py, name)?;
        let values = py.detach(|| tensor.to_f32()).map_err(|e| to_py(py, e))?;
        Ok(F32Buffer::new(values))
    }
}
