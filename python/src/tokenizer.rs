//! `Model.tokenizer()`: the model's tokenizer as llama.cpp runs it (the
//! library's `gguf_tokenizer::Tokenizer`): text to ids and back.

use gguf_tokenizer::Tokenizer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::tokenizer_to_py;

/// A model's tokenizer, built from its `tokenizer.*` metadata.
#[pyclass(frozen, module = "gguf_rs._native", name = "Tokenizer")]
pub(crate) struct PyTokenizer {
    pub(crate) tok: Tokenizer,
}

#[pymethods]
impl PyTokenizer {
    /// Token ids of `text`, as `llama_tokenize(vocab, text, add_special,
    /// parse_special)` gives them (GIL released).
    #[pyo3(signature = (text, add_special=true, parse_special=false))]
    fn encode(
        &self,
        py: Python<'_>,
        text: &str,
        add_special: bool,
        parse_special: bool,
    ) -> PyResult<Vec<u32>> {
        py.detach(|| self.tok.encode(text, add_special, parse_special))
            .map_err(|e| tokenizer_to_py(py, e))
    }

    /// The bytes of `ids`, as `llama_detokenize` writes them.
    #[pyo3(signature = (ids, remove_special=false, unparse_special=false))]
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<u32>,
        remove_special: bool,
        unparse_special: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .detach(|| self.tok.decode(&ids, remove_special, unparse_special))
            .map_err(|e| tokenizer_to_py(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The bytes token `id` stands for (`llama_token_to_piece`); control
    /// and unknown tokens are empty unless `special`.
    #[pyo3(signature = (id, special=false))]
    fn token_to_piece<'py>(
        &self,
        py: Python<'py>,
        id: u32,
        special: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let piece = self
            .tok
            .token_to_piece(id, special)
            .map_err(|e| tokenizer_to_py(py, e))?;
        Ok(PyBytes::new(py, &piece))
    }

    /// The stored text of token `id`, or None past the vocabulary.
    fn token_text(&self, id: u32) -> Option<&str> {
        self.tok.token(id).map(|t| t.text.as_str())
    }

    /// The score of token `id`, or None.
    fn token_score(&self, id: u32) -> Option<f32> {
        self.tok.token(id).map(|t| t.score)
    }

    /// The attribute bits of token `id` (llama.cpp's `LLAMA_TOKEN_ATTR_*`),
    /// or None.
    fn token_attr(&self, id: u32) -> Option<u32> {
        self.tok.token(id).map(|t| t.attr.0)
    }

    /// The id of a token's exact text, or None.
    fn token_id(&self, text: &str) -> Option<u32> {
        self.tok.token_id(text)
    }

    /// `SPM`, `BPE`, `WPM` or `UGM`.
    #[getter]
    fn vocab_type(&self) -> &'static str {
        self.tok.vocab_type().name()
    }

    /// `tokenizer.ggml.model`.
    #[getter]
    fn model(&self) -> &str {
        self.tok.model_name()
    }

    /// The pre-tokenizer of a byte-level vocabulary, else None.
    #[getter]
    fn pre(&self) -> Option<&str> {
        self.tok.pre_name()
    }

    fn __len__(&self) -> usize {
        self.tok.n_tokens()
    }

    /// The special token ids llama.cpp tracks (None where the model has none).
    fn specials<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.tok.specials();
        let d = PyDict::new(py);
        for (name, id) in [
            ("bos", s.bos),
            ("eos", s.eos),
            ("eot", s.eot),
            ("eom", s.eom),
            ("unk", s.unk),
            ("sep", s.sep),
            ("pad", s.pad),
            ("mask", s.mask),
            ("fim_pre", s.fim_pre),
            ("fim_suf", s.fim_suf),
            ("fim_mid", s.fim_mid),
            ("fim_pad", s.fim_pad),
            ("fim_rep", s.fim_rep),
            ("fim_sep", s.fim_sep),
        ] {
            d.set_item(name, id)?;
        }
        Ok(d)
    }

    /// The flags llama.cpp derived for the vocabulary.
    fn flags<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = self.tok.flags();
        let d = PyDict::new(py);
        d.set_item("add_space_prefix", f.add_space_prefix)?;
        d.set_item("add_bos", f.add_bos)?;
        d.set_item("add_eos", f.add_eos)?;
        d.set_item("add_sep", f.add_sep)?;
        d.set_item("ignore_merges", f.ignore_merges)?;
        d.set_item("clean_spaces", f.clean_spaces)?;
        d.set_item("remove_extra_whitespaces", f.remove_extra_whitespaces)?;
        d.set_item("escape_whitespaces", f.escape_whitespaces)?;
        Ok(d)
    }
}
