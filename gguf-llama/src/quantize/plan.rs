//! The type of every tensor llama-quantize writes, in its order: what
//! `--dry-run` prints.

use regex::bytes::{Regex, RegexBuilder};

use crate::error::Result;
use crate::error::{Error, QuantizeError};
use crate::summary::{arch_key, key, str_of, u32_of, ArchParams};
use gguf_core::GgmlType;
use gguf_core::Gguf;

use super::preset::{parse_preset, Ftype, Preset};
use super::pure::fallback;
use super::rules::{
    allows_quantization, block_number, is_70b, is_token_embd, mixture_type, Category, Counters,
    MixtureOptions, ModelFacts,
};

/// The ggml type named `name`, any case, as llama-quantize's
/// `parse_ggml_type` reads `--output-tensor-type` and friends.
///
/// ```
/// use gguf_llama::quantize::parse_ggml_type;
/// use gguf_core::GgmlType;
/// assert_eq!(parse_ggml_type("q6_k").unwrap(), GgmlType::Q6_K);
/// assert!(parse_ggml_type("q7_k").is_err());
/// ```
pub fn parse_ggml_type(name: &str) -> Result<GgmlType> {
    GgmlType::ALL
        .iter()
        .copied()
        .find(|t| t.name().is_some_and(|n| n.eq_ignore_ascii_case(name)))
        .ok_or_else(|| {
            Error::Quantize(QuantizeError::UnknownType {
                name: name.to_owned(),
            })
        })
}

/// One `--tensor-type NAME=TYPE`: a regular expression searched in tensor
/// names (lower-cased, as llama-quantize stores it) and the type for the
/// tensors it matches. The first matching override wins.
#[derive(Clone, Debug)]
pub struct TensorTypeOverride {
    pattern: String,
    regex: Regex,
    ty: GgmlType,
}

impl TensorTypeOverride {
    /// Reads `NAME=TYPE` as llama-quantize's `parse_tensor_type` does.
    ///
    /// ```
    /// use gguf_llama::quantize::TensorTypeOverride;
    /// use gguf_core::GgmlType;
    /// let o = TensorTypeOverride::parse("ATTN_Q=q8_0").unwrap();
    /// assert_eq!((o.pattern(), o.ty()), ("attn_q", GgmlType::Q8_0));
    /// assert!(o.matches("blk.0.attn_q.weight"));
    /// assert!(TensorTypeOverride::parse("attn_q").is_err());
    /// assert!(TensorTypeOverride::parse("attn_q=").is_err());
    /// assert!(TensorTypeOverride::parse("(=q8_0").is_err());
    /// ```
    pub fn parse(arg: &str) -> Result<TensorTypeOverride> {
        let bad = |reason: String| {
            Error::Quantize(QuantizeError::TensorType {
                arg: arg.to_owned(),
                reason,
            })
        };
        let (name, ty) = arg
            .split_once('=')
            .ok_or_else(|| bad("expected NAME=TYPE".into()))?;
        if name.is_empty() {
            return Err(bad("missing tensor name".into()));
        }
        if ty.is_empty() {
            return Err(bad("missing quantization type".into()));
        }
        let ty = parse_ggml_type(ty).map_err(|e| bad(e.to_string()))?;
        Self::new(&name.to_ascii_lowercase(), ty).map_err(|e| bad(e.to_string()))
    }

    /// An override of tensors matching `pattern` (a regular expression,
    /// ASCII classes as in C++'s `std::regex`) to `ty`.
    pub fn new(pattern: &str, ty: GgmlType) -> Result<TensorTypeOverride> {
        let regex = RegexBuilder::new(pattern)
            .unicode(false)
            .build()
            .map_err(|e| {
                Error::Quantize(QuantizeError::TensorType {
                    arg: pattern.to_owned(),
                    reason: format!("not a regular expression: {e}"),
                })
            })?;
        Ok(TensorTypeOverride {
            pattern: pattern.to_owned(),
            regex,
            ty,
        })
    }

    /// The pattern, as given (lower-cased by [`parse`](Self::parse)).
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The type of the tensors it matches.
    pub fn ty(&self) -> GgmlType {
        self.ty
    }

    /// True when the pattern occurs in `name` (a search, not a full match).
    pub fn matches(&self, name: &str) -> bool {
        self.regex.is_match(name.as_bytes())
    }
}

/// llama-quantize's options that decide tensor types.
#[derive(Clone, Debug)]
pub struct QuantizeOptions {
    /// The preset (`TYPE` argument).
    pub preset: &'static Preset,
    /// `--pure`: no mixture, every weight matrix to the default type.
    pub pure: bool,
    /// `--leave-output-tensor`.
    pub leave_output_tensor: bool,
    /// `--output-tensor-type`.
    pub output_tensor_type: Option<GgmlType>,
    /// `--token-embedding-type`.
    pub token_embedding_type: Option<GgmlType>,
    /// `--tensor-type` / `--tensor-type-file`, in order given.
    pub tensor_types: Vec<TensorTypeOverride>,
    /// An importance matrix is given (`--imatrix`, after
    /// `--include-weights`/`--exclude-weights` left at least one entry).
    pub has_imatrix: bool,
    /// `--keep-split`: the tensors stay in their shards, in file order.
    pub keep_split: bool,
    /// `--prune-layers`: blocks left out; the later ones are renumbered.
    pub prune_layers: Vec<u32>,
}

impl QuantizeOptions {
    /// The options for preset `name` (see [`parse_preset`]), all flags off.
    ///
    /// ```
    /// let o = gguf_llama::quantize::QuantizeOptions::new("Q4_K_M").unwrap();
    /// assert_eq!(o.preset.ftype.id(), 15);
    /// assert!(gguf_llama::quantize::QuantizeOptions::new("Q4_K_Z").is_err());
    /// ```
    pub fn new(name: &str) -> Result<QuantizeOptions> {
        let preset = parse_preset(name).ok_or_else(|| {
            Error::Quantize(QuantizeError::UnknownPreset {
                name: name.to_owned(),
            })
        })?;
        Ok(QuantizeOptions {
            preset,
            pure: false,
            leave_output_tensor: false,
            output_tensor_type: None,
            token_embedding_type: None,
            tensor_types: Vec::new(),
            has_imatrix: false,
            keep_split: false,
            prune_layers: Vec::new(),
        })
    }
}

/// One tensor of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedTensor {
    /// Its name in the output (its block renumbered by `--prune-layers`).
    pub name: String,
    /// Its name in the input (where its data and its importance matrix
    /// entry are found).
    pub input_name: String,
    /// The shard of the input that holds it (0 but for a split model).
    pub shard: usize,
    /// Its shape, innermost first.
    pub shape: Vec<u64>,
    /// Its type in the input.
    pub source: GgmlType,
    /// Its type in the output (`source` when left as it is).
    pub target: GgmlType,
    /// Its role in the mixture rules.
    pub category: Category,
    /// llama-quantize may change its type (`tensor_allows_quantization`).
    pub quantizable: bool,
    /// Its target type cannot be made without an importance matrix
    /// (`tensor_requires_imatrix`).
    pub requires_imatrix: bool,
    /// Its rows are not whole blocks of the type the rules chose: the
    /// target is llama-quantize's fallback.
    pub fell_back: bool,
}

/// Every tensor's target type, in llama-quantize's output order, and the
/// output's `general.file_type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The tensors, in output order: those outside blocks first, then by
    /// block number; by name (bytewise) within each.
    pub tensors: Vec<PlannedTensor>,
    /// The value of `general.file_type` in the output.
    pub file_type: u32,
    /// With `--prune-layers`, the new `{arch}.block_count` (written last).
    pub block_count: Option<u32>,
}

impl Plan {
    /// Tensors whose target needs an importance matrix (what
    /// llama-quantize refuses without one).
    pub fn needing_imatrix(&self) -> impl Iterator<Item = &PlannedTensor> {
        self.tensors
            .iter()
            .filter(|t| t.quantizable && t.requires_imatrix)
    }

    /// How many tensors got a fallback type.
    pub fn fallback_count(&self) -> usize {
        self.tensors.iter().filter(|t| t.fell_back).count()
    }
}

/// The key of llama.cpp's `weight_name_comparer`: block number (-1 outside
/// blocks), then name.
fn order_key(name: &str) -> (i64, &[u8]) {
    (block_number(name).unwrap_or(-1), name.as_bytes())
}

/// A tensor of the input, as the plan walks it.
struct Source {
    name: String,
    input_name: String,
    shard: usize,
    offset: u64,
    shape: Vec<u64>,
    ty: GgmlType,
}

/// llama-quantize's `remap_layer` over tensors in its order: the tensors
/// of pruned blocks leave, blocks before the first pruned one keep their
/// number, later ones are renumbered in turn. Returns the new block count
/// (`None` when nothing is pruned).
fn prune(order: &mut Vec<Source>, pruned: &[u32]) -> Option<u32> {
    let mut pruned: Vec<i64> = pruned.iter().map(|&b| i64::from(b)).collect();
    pruned.sort_unstable();
    pruned.dedup();
    let first = *pruned.first()?;
    let mut mapped: Vec<(i64, Option<i64>)> = Vec::new();
    let mut next: i64 = 0;
    order.retain_mut(|t| {
        let Some((_, _, blk)) = block_digits(&t.name) else {
            return true;
        };
        let to = match mapped.iter().find(|m| m.0 == blk) {
            Some(m) => m.1,
            None => {
                let to = if pruned.contains(&blk) {
                    None
                } else if blk < first {
                    next = blk + 1;
                    Some(blk)
                } else {
                    next += 1;
                    Some(next - 1)
                };
                mapped.push((blk, to));
                to
            }
        };
        match to {
            None => false,
            Some(n) => {
                t.name = renumber(&t.name, n);
                true
            }
        }
    });
    Some(next as u32)
}

/// The first `blk.N.` in `name`, as llama-quantize's `blk\.(\d+)\.` search
/// finds it: the byte range of `N` and its value.
fn block_digits(name: &str) -> Option<(usize, usize, i64)> {
    let mut from = 0;
    while let Some(i) = name[from..].find("blk.") {
        let start = from + i + 4;
        let len = name[start..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(name.len() - start);
        if len > 0
            && name[start + len..].starts_with('.')
            && let Ok(n) = name[start..start + len].parse()
        {
            return Some((start, start + len, n));
        }
        from += i + 1;
    }
    None
}

/// `name` with its block number replaced by `n`.
fn renumber(name: &str, n: i64) -> String {
    match block_digits(name) {
        Some((start, end, _)) => format!("{}{n}{}", &name[..start], &name[end..]),
        None => name.to_owned(),
    }
}

/// What the rules need of `model`.
pub fn model_facts(model: &impl Gguf) -> Result<ModelFacts> {
    let missing = |reason: String| Error::Quantize(QuantizeError::Model { reason });
    let arch = str_of(model, "general.architecture")
        .ok_or_else(|| missing("the model has no string general.architecture".into()))?
        .to_owned();
    let hp = ArchParams::as_llama_cpp_reads(model, &arch);
    let n_layer = hp.block_count.filter(|&n| n > 0).ok_or_else(|| {
        missing(format!(
            "the model has no u32 {} above 0",
            arch_key(key::block_count, &arch)
        ))
    })?;
    let n_head = hp.n_head0();
    let n_head_kv = hp.n_head_kv0();
    let n_expert = hp.expert_count.unwrap_or(0);
    Ok(ModelFacts {
        is_70b: is_70b(&arch, n_layer, n_head, n_head_kv),
        arch,
        n_layer,
        n_head,
        n_head_kv,
        n_expert,
    })
}

/// The file type llama.cpp's loader guesses for a file without
/// `general.file_type`: the type of the most tensors (the first to reach
/// that count, in `order`), with the guessed flag (1024).
fn guessed_file_type(order: &[GgmlType]) -> u32 {
    use GgmlType as T;
    let mut counts: Vec<(GgmlType, usize)> = Vec::new();
    let (mut best, mut best_n) = (T::F32, 0);
    for ty in order {
        let n = match counts.iter_mut().find(|(t, _)| t == ty) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                counts.push((*ty, 1));
                1
            }
        };
        if n > best_n {
            best_n = n;
            best = *ty;
        }
    }
    let ftype = match best {
        T::Q3_K => 12,
        T::Q4_K => 15,
        T::Q5_K => 17,
        T::NVFP4 => 39,
        other => FTYPE_OF_TYPE
            .iter()
            .find(|(t, _)| *t == other)
            .map_or(0, |&(_, f)| f.id()),
    };
    ftype | 1024
}

/// The guess of [`guessed_file_type`] for types named after a file type.
const FTYPE_OF_TYPE: &[(GgmlType, Ftype)] = {
    use Ftype as F;
    use GgmlType as T;
    &[
        (T::F32, F::F32),
        (T::F16, F::F16),
        (T::BF16, F::BF16),
        (T::Q4_0, F::Q4_0),
        (T::Q4_1, F::Q4_1),
        (T::Q5_0, F::Q5_0),
        (T::Q5_1, F::Q5_1),
        (T::Q8_0, F::Q8_0),
        (T::Q2_K, F::Q2_K),
        (T::Q6_K, F::Q6_K),
        (T::TQ1_0, F::TQ1_0),
        (T::TQ2_0, F::TQ2_0),
        (T::IQ2_XXS, F::IQ2_XXS),
        (T::IQ2_XS, F::IQ2_XS),
        (T::IQ2_S, F::IQ2_S),
        (T::IQ3_XXS, F::IQ3_XXS),
        (T::IQ1_S, F::IQ1_S),
        (T::IQ1_M, F::IQ1_M),
        (T::IQ4_NL, F::IQ4_NL),
        (T::IQ4_XS, F::IQ4_XS),
        (T::IQ3_S, F::IQ3_S),
        (T::Q1_0, F::Q1_0),
        (T::Q2_0, F::Q2_0),
    ]
};

/// Whether a tensor of type `ty` cannot be made without an importance
/// matrix in a file of type `ftype` (`tensor_requires_imatrix`): the IQ1,
/// IQ2 and IQ3_XXS types, and Q2_K in a Q2_K_S file; never the output or
/// token embeddings.
pub fn requires_imatrix(name: &str, ty: GgmlType, ftype: Ftype) -> bool {
    if is_token_embd(name) || name == "output.weight" {
        return false;
    }
    super::type_requires_imatrix(ty) || (ty == GgmlType::Q2_K && ftype == Ftype::Q2_K_S)
}

/// The type llama-quantize gives every tensor of `model` under `opts`, in
/// the order it writes them (`llama_tensor_get_type` over its sorted
/// weights), and the output's `general.file_type`. Errors name the tensor
/// or key at fault; refusing quantized inputs or a missing importance
/// matrix is the caller's (see [`Plan::needing_imatrix`]).
///
/// ```
/// # fn main() -> gguf_llama::Result<()> {
/// use gguf_llama::quantize::{plan, QuantizeOptions};
/// use gguf_core::{GgmlType as T, GgufFile};
/// let mut b = gguf_core::write::Builder::new();
/// b.set("general.architecture", "llama")?.set("llama.block_count", 1u32)?;
/// b.add_tensor("token_embd.weight", T::F16, &[256, 8], vec![0u8; 4096])?;
/// b.add_tensor("blk.0.attn_v.weight", T::F16, &[256, 256], vec![0u8; 131072])?;
/// b.add_tensor("blk.0.attn_norm.weight", T::F32, &[256], vec![0u8; 1024])?;
/// let bytes = b.to_vec()?;
/// let p = plan(&GgufFile::open(&bytes)?, &QuantizeOptions::new("Q4_K_M")?)?;
/// let types: Vec<_> = p.tensors.iter().map(|t| (t.name.as_str(), t.target)).collect();
/// assert_eq!(types, [
///     ("token_embd.weight", T::Q6_K), // tied: the output's rule
///     ("blk.0.attn_norm.weight", T::F32),
///     ("blk.0.attn_v.weight", T::Q6_K),
/// ]);
/// assert_eq!(p.file_type, 15);
/// # Ok(()) }
/// ```
pub fn plan(model: &impl Gguf, opts: &QuantizeOptions) -> Result<Plan> {
    let facts = model_facts(model)?;
    let mut order: Vec<Source> = model
        .tensors_with_shard()
        .map(|(shard, t)| Source {
            name: t.name().to_owned(),
            input_name: t.name().to_owned(),
            shard,
            offset: t.file_offset(),
            shape: t.shape().to_vec(),
            ty: t.ggml_type(),
        })
        .collect();
    order.sort_by(|a, b| order_key(&a.name).cmp(&order_key(&b.name)));
    let block_count = prune(&mut order, &opts.prune_layers);
    if opts.keep_split {
        // Stable: llama-quantize sorts its name-ordered list by shard and offset.
        order.sort_by_key(|t| (t.shard, t.offset));
    }

    let preset = opts.preset;
    let copy = preset.is_copy();
    let ftype = preset.ftype;
    let default = ftype.default_type();
    let file_type = if copy {
        u32_of(model, "general.file_type")
            .unwrap_or_else(|| guessed_file_type(&order.iter().map(|t| t.ty).collect::<Vec<_>>()))
    } else {
        ftype.id()
    };

    let mut counters = Counters {
        n_attention_wv: order
            .iter()
            .filter(|t| Category::of(&t.name).is_attn_v())
            .count() as u32,
        n_layers: facts.n_layer,
        ..Counters::default()
    };
    let mixture = MixtureOptions {
        ftype,
        output_tensor_type: opts.output_tensor_type,
        token_embedding_type: opts.token_embedding_type,
        has_imatrix: opts.has_imatrix,
        tied_embeddings: !order.iter().any(|t| t.name == "output.weight"),
    };

    let mut tensors = Vec::with_capacity(order.len());
    for t in order {
        let Source {
            name,
            input_name,
            shard,
            shape,
            ty: source,
            ..
        } = t;
        let category = Category::of(&name);
        let quantizable =
            !copy && allows_quantization(&name, &shape, &facts.arch, !opts.leave_output_tensor);
        let (target, fell_back) = if quantizable {
            target_type(
                &name,
                &shape,
                category,
                default,
                opts,
                &facts,
                &mixture,
                &mut counters,
            )?
        } else {
            (source, false)
        };
        tensors.push(PlannedTensor {
            requires_imatrix: requires_imatrix(&name, target, ftype),
            name,
            input_name,
            shard,
            shape,
            source,
            target,
            category,
            quantizable,
            fell_back,
        });
    }
    Ok(Plan {
        tensors,
        file_type,
        block_count,
    })
}

/// `llama_tensor_get_type` for a tensor llama-quantize may quantize: the
/// type, and whether it is a fallback.
#[allow(clippy::too_many_arguments)]
fn target_type(
    name: &str,
    shape: &[u64],
    category: Category,
    default: GgmlType,
    opts: &QuantizeOptions,
    facts: &ModelFacts,
    mixture: &MixtureOptions,
    counters: &mut Counters,
) -> Result<(GgmlType, bool)> {
    if let Some(t) = opts.token_embedding_type {
        // per_layer_token_embd follows it unless a --tensor-type names it.
        let named = name == "per_layer_token_embd.weight"
            && opts.tensor_types.iter().any(|o| o.matches(name));
        if category == Category::TokenEmbd && !named {
            return Ok((t, false));
        }
    }
    if let Some(t) = opts.output_tensor_type
        && category == Category::Output
    {
        return Ok((t, false));
    }
    if default.is_plain() {
        return Ok((default, false));
    }
    let manual = opts.tensor_types.iter().find(|o| o.matches(name));
    let chosen = match manual {
        Some(o) => o.ty(),
        None if opts.pure => default,
        None => mixture_type(name, shape, category, default, facts, mixture, counters)
            .map_err(|reason| Error::Quantize(QuantizeError::Model { reason }))?,
    };
    let row = shape.first().copied().unwrap_or(1);
    let to = fallback(chosen, row).ok_or_else(|| {
        Error::Quantize(QuantizeError::NoFallback {
            tensor: name.to_owned(),
            row,
            ty: chosen,
        })
    })?;
    let whole = chosen.block_size().is_some_and(|b| row.is_multiple_of(b));
    Ok((to, !whole))
}
