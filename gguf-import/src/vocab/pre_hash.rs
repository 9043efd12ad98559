//! Naming a BPE pre-tokenizer the converter's way. llama.cpp cannot read a
//! `tokenizer.json`'s pre-tokenizer, so its converter recognises known
//! tokenizers instead: it encodes a fixed text (`chktxt.txt`, with the
//! special tokens the tokenizer adds) and looks the sha256 of the ids,
//! printed as a Python list, up in its list of known hashes
//! (`pre_hashes.tsv`, facts copied from the llama.cpp the converter comes
//! from). The name found goes to `tokenizer.ggml.pre`.

use sha2::{Digest, Sha256};
use tokenizers::Tokenizer;

use crate::error::{Result, VocabError};

/// The converter's `chktxt`, byte for byte.
pub(super) const CHECK_TEXT: &str = include_str!("chktxt.txt");

const KNOWN: &str = include_str!("pre_hashes.tsv");

/// The known (hash, name) pairs in the converter's order.
fn known() -> impl Iterator<Item = (&'static str, &'static str)> {
    KNOWN
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let mut cols = l.split('\t');
            Some((cols.next()?, cols.next()?))
        })
}

/// The converter's name for a hash; where it lists one twice, the later
/// name (its tests are a chain of `if`s).
pub(super) fn name_for(hash: &str) -> Option<&'static str> {
    known().filter(|(h, _)| *h == hash).map(|(_, n)| n).last()
}

/// A name given with `--pre-tokenizer`: one of the converter's names, or
/// `default` (llama.cpp's generic splitting).
pub(super) fn check_name(name: &str) -> Result<()> {
    if name == "default" || known().any(|(_, n)| n == name) {
        Ok(())
    } else {
        Err(VocabError::UnknownPreTokenizerName { name: name.into() }.into())
    }
}

/// The converter's `chkhsh`: the ids `tokenizer` gives for the check text
/// with its special tokens added, as Python prints the list, hashed.
pub(super) fn check_hash(tokenizer: &Tokenizer) -> std::result::Result<String, String> {
    let encoding = tokenizer
        .encode(CHECK_TEXT, true)
        .map_err(|e| format!("cannot encode llama.cpp's check text: {e}"))?;
    Ok(hash_ids(encoding.get_ids()))
}

/// sha256 of `str(ids)` in Python: `[1, 2, 3]`.
pub(super) fn hash_ids(ids: &[u32]) -> String {
    let listed: Vec<String> = ids.iter().map(u32::to_string).collect();
    let text = format!("[{}]", listed.join(", "));
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
