//! The hyper-parameters and shapes checked against the checkpoint's
//! tensors before anything is built from them.

use std::collections::BTreeSet;

use crate::error::Result;

use crate::arch::{Architecture, Cut, Mapped};
use crate::checkpoint::SourceTensor;
use crate::config::{config_error, Config};

use super::names::{map_source, plain_name, BLOCK_COUNT};
use super::piece::tensor_error;

/// The first of `keys` that `config` sets, to name in an error.
fn key_of<'k>(config: &Config, keys: &[&'k str]) -> &'k str {
    keys.iter()
        .copied()
        .find(|k| config.hparams.get(*k).is_some_and(|v| !v.is_null()))
        .unwrap_or(keys[0])
}

/// `config.json`'s value for `key` as the tokenizer part reads it
/// (`text_config`'s over the top level's, without `transformers`'
/// defaults).
fn raw_u64(config: &Config, key: &str) -> Option<u64> {
    let text = config.raw.get("text_config").and_then(|t| t.get(key));
    text.filter(|v| !v.is_null())
        .or_else(|| config.raw.get(key).filter(|v| !v.is_null()))
        .and_then(serde_json::Value::as_u64)
}

/// Layer numbers as ranges (`0-3, 5`), at most a few of them.
fn ranges(layers: &BTreeSet<u32>) -> String {
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for &n in layers {
        match spans.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(n) => *end = n,
            _ => spans.push((n, n)),
        }
    }
    const SHOWN: usize = 8;
    let mut parts: Vec<String> = spans
        .iter()
        .take(SHOWN)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if spans.len() > SHOWN {
        parts.push("...".into());
    }
    parts.join(", ")
}

/// Checks the hyper-parameters that size what the import computes or
/// builds before it reaches the tensors (the block count, Llama 3's RoPE
/// factors from the head dimension, the tokenizer's padding to
/// `vocab_size`) against the checkpoint's tensors, so that a value far
/// beyond them is refused by name instead of being computed with: every
/// block below the block count has tensors (llama.cpp's loader would stop
/// at the first missing one; the converter writes the count it is given),
/// the token embedding is there and not empty, `hidden_size` is its width,
/// `vocab_size` is not above its rows, and the heads times the head
/// dimension are the rows of every attention query weight. The shapes are
/// checked whole later ([`plan`]).
pub(crate) fn check_hparams(
    arch: &Architecture,
    config: &Config,
    sources: &[SourceTensor<'_>],
) -> Result<()> {
    let file = &config.file;
    let blocks = config.require_u32(BLOCK_COUNT)?;
    let gguf_blocks = arch.block_count(config)?;
    let mut layers = BTreeSet::new();
    let mut embedding = None;
    let mut queries = Vec::new();
    for source in sources {
        let Some(name) = plain_name(arch, source, gguf_blocks)? else {
            if let Some((Mapped::Expert { block, .. } | Mapped::Split { block, .. }, _)) =
                map_source(arch, source, gguf_blocks)?
            {
                layers.insert(block);
            }
            continue;
        };
        if name == "token_embd.weight" {
            embedding = Some(source);
        }
        let block = name
            .strip_prefix("blk.")
            .and_then(|rest| rest.split_once('.'))
            .and_then(|(n, local)| Some((n.parse::<u32>().ok()?, local)));
        if let Some((n, local)) = block {
            layers.insert(n);
            if local == "attn_q.weight" {
                queries.push(source);
            }
        }
    }
    if (layers.range(..blocks).count() as u64) < u64::from(blocks) {
        let found = if layers.is_empty() {
            "no block tensors".to_owned()
        } else {
            format!("tensors of {} block(s): {}", layers.len(), ranges(&layers))
        };
        return Err(config_error(
            file,
            format!(
                "{:?} is {blocks}, but the checkpoint has {found} (llama.cpp cannot load a \
                 model with a block missing)",
                key_of(config, BLOCK_COUNT)
            ),
        ));
    }

    let embd_name = arch
        .globals
        .iter()
        .find(|r| r.gguf == "token_embd")
        .map_or("the token embedding", |r| r.hf);
    let Some(embd) = embedding else {
        return Err(config_error(
            file,
            format!(
                "the checkpoint has no token embedding ({embd_name}.weight), which llama.cpp \
                 needs and vocab_size and hidden_size are checked against"
            ),
        ));
    };
    let (rows, width) = match embd.shape[..] {
        [rows, width] if rows > 0 && width > 0 => (rows, width),
        _ => {
            return Err(tensor_error(
                embd,
                format!(
                    "shape {:?}: a token embedding is a matrix of one row per token",
                    embd.shape
                ),
            ))
        }
    };
    let embd_desc = format!(
        "the token embedding {:?} ({}) of shape {:?}",
        embd.name,
        embd.file.display(),
        embd.shape
    );
    let hidden_keys = ["hidden_size", "n_embd", "dim"];
    if let Some(hidden) = config.find_u32(&hidden_keys)?
        && u64::from(hidden) != width
    {
        return Err(config_error(
            file,
            format!(
                "{:?} is {hidden}, but {embd_desc} is {width} wide",
                key_of(config, &hidden_keys)
            ),
        ));
    }
    // The tokenizer part pads the vocabulary to these counts.
    for key in ["vocab_size", "vocab_size_per_layer_input"] {
        if let Some(n) = raw_u64(config, key).filter(|&n| n > rows) {
            return Err(config_error(
                file,
                format!(
                    "{key:?} is {n}, but {embd_desc} has {rows} rows (one per token): tokens \
                     past them would have no embedding"
                ),
            ));
        }
    }

    let heads = config.find_u32(&["num_attention_heads"])?;
    let (head_dim, how) = match config.find_u32(&["head_dim"])? {
        Some(d) => (Some(u64::from(d)), format!("\"head_dim\" is {d}")),
        None => match (config.find_u32(&hidden_keys)?, heads) {
            (Some(h), Some(n)) if n > 0 => (
                Some(u64::from(h / n)),
                format!(
                    "the head dimension is {} (hidden_size {h} / num_attention_heads {n})",
                    h / n
                ),
            ),
            _ => (None, String::new()),
        },
    };
    let (Some(heads), Some(head_dim)) = (heads, head_dim) else {
        return Ok(());
    };
    if arch.splits.iter().any(|s| s.cut == Cut::MlaKvB) {
        // Latent attention: the queries are not heads x head_dim rows.
        return Ok(());
    }
    // A gated query (Qwen3-Next) holds a gate row for every query row.
    let gate = if arch.gated_query { 2 } else { 1 };
    let want = u64::from(heads) * head_dim * gate;
    // The width too: a query of no columns could claim any row count.
    if let Some(q) = queries.iter().find(|q| q.shape[..] != [want, width]) {
        return Err(config_error(
            file,
            format!(
                "{how} and \"num_attention_heads\" {heads}: a query weight of shape \
                 [{want}, {width}], but {:?} ({}) has shape {:?}",
                q.name,
                q.file.display(),
                q.shape
            ),
        ));
    }
    if queries.is_empty() && arch.blocks.iter().any(|r| r.gguf == "attn_q") {
        return Err(config_error(
            file,
            format!(
                "{how}, but the checkpoint has no attention query weight to check it against \
                 (llama.cpp needs one in every block)"
            ),
        ));
    }
    Ok(())
}

/// The shape the architecture's config implies for a tensor, checked when
/// there is one (numpy order: outermost first). The converter checks none
/// and writes a file llama.cpp then refuses; an error naming the tensor is
/// more use.
pub(super) fn check_shape(
    arch: &Architecture,
    config: &Config,
    source: &SourceTensor<'_>,
    name: &str,
    np_shape: &[u64],
    vocab_rows: Option<u64>,
) -> Result<()> {
    let get = |k: &[&str]| -> Result<Option<u64>> { Ok(config.find_u32(k)?.map(u64::from)) };
    let hidden = get(&["hidden_size", "n_embd", "dim"])?;
    let ff = get(&["intermediate_size"])?;
    let heads = get(&["num_attention_heads"])?;
    let kv_heads = get(&["num_key_value_heads"])?.or(heads);
    let head_dim = match get(&["head_dim"])? {
        Some(d) => Some(d),
        None => match (hidden, heads) {
            (Some(h), Some(n)) if n > 0 => Some(h / n),
            _ => None,
        },
    };
    let vocab = get(&["vocab_size"])?;
    let mul = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a * b);
    let mla = arch.splits.iter().any(|s| s.cut == Cut::MlaKvB);
    let local = name.split_once('.').map_or(name, |(first, rest)| {
        if first == "blk" {
            rest.split_once('.').map_or(rest, |(_, r)| r)
        } else {
            name
        }
    });
    let embd_rows = if arch.gguf == "gemma3" {
        vocab_rows.map_or(vocab, |v| vocab.map(|n| n.min(v)))
    } else {
        vocab
    };
    let expected: Option<Vec<Option<u64>>> = match local {
        "token_embd.weight" => Some(vec![embd_rows, hidden]),
        "output.weight" => Some(vec![vocab, hidden]),
        "output_norm.weight"
        | "attn_norm.weight"
        | "ffn_norm.weight"
        | "post_attention_norm.weight"
        | "post_ffw_norm.weight" => Some(vec![hidden]),
        // Per head (Qwen3, Gemma 3) or over all heads (OLMo 2).
        "attn_q_norm.weight" if np_shape != [mul(heads, head_dim).unwrap_or(0)] => {
            Some(vec![head_dim])
        }
        "attn_k_norm.weight" if np_shape != [mul(kv_heads, head_dim).unwrap_or(0)] => {
            Some(vec![head_dim])
        }
        "attn_q.weight" if mla => None,
        "attn_q.weight" if arch.gated_query => {
            Some(vec![mul(heads, head_dim).map(|n| 2 * n), hidden])
        }
        "attn_q.weight" => Some(vec![mul(heads, head_dim), hidden]),
        "attn_k.weight" | "attn_v.weight" => Some(vec![mul(kv_heads, head_dim), hidden]),
        // Latent attention's output reads heads x v_head_dim values.
        "attn_output.weight" if mla => Some(vec![hidden, mul(heads, get(&["v_head_dim"])?)]),
        "attn_output.weight" => Some(vec![hidden, mul(heads, head_dim)]),
        "attn_q.bias" => Some(vec![mul(heads, head_dim)]),
        "attn_k.bias" | "attn_v.bias" => Some(vec![mul(kv_heads, head_dim)]),
        // phi3 keeps the gate and up projections fused in ffn_up.
        "ffn_up.weight" if arch.blocks.iter().any(|r| r.hf == "mlp.gate_up_proj") => {
            Some(vec![ff.map(|f| 2 * f), hidden])
        }
        "ffn_gate.weight" | "ffn_up.weight" => Some(vec![ff, hidden]),
        "ffn_down.weight" => Some(vec![hidden, ff]),
        _ => None,
    };
    let Some(expected) = expected else {
        return Ok(());
    };
    let fits = expected.len() == np_shape.len()
        && expected
            .iter()
            .zip(np_shape)
            .all(|(e, &d)| e.is_none_or(|e| e == d));
    if fits {
        return Ok(());
    }
    let want: Vec<String> = expected
        .iter()
        .map(|e| e.map_or("?".into(), |e| e.to_string()))
        .collect();
    Err(tensor_error(
        source,
        format!(
            "shape {:?} does not fit config.json (expected [{}] for {name})",
            source.shape,
            want.join(", ")
        ),
    ))
}
