//! Edits metadata in place: renames a model and replaces its chat
//! template without rewriting the tensor data, then reads the result back.
//!
//! ```sh
//! cargo run --example edit_metadata                # edits a copy of the bundled sample
//! cargo run --example edit_metadata -- model.gguf  # edits that file itself
//! ```
//!
//! An edit is written in place when the new header fits where the old one
//! was (a journal makes it crash-safe), else the file is rewritten
//! atomically. `Builder::reserve_metadata` leaves room for later edits.

use gguf::edit::{Commit, Editor};
use gguf::Gguf;
use gguf::GgufFile;

fn main() -> gguf::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = match std::env::args().nth(1) {
        Some(path) => path.into(),
        None => {
            let copy = dir.path().join("tiny-llama.gguf");
            let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");
            std::fs::copy(sample, &copy)?;
            copy
        }
    };

    // A short change: the header usually still fits before the tensor data.
    let mut ed = Editor::open(&path)?;
    ed.set("general.name", "tiny-llama (edited)")?;
    report("rename", ed.plan()?, ed.commit()?);

    // A long one: a chat template of a few kilobytes needs a rewrite,
    // which reserves header slack (4 KiB by default) for the next edit.
    let template =
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}".repeat(40);
    let mut ed = Editor::open(&path)?;
    ed.set("tokenizer.chat_template", template.as_str())?;
    report("chat template", ed.plan()?, ed.commit()?);

    // So a further change of the template lands in place.
    let template = format!("{template}{{# tweaked #}}");
    let mut ed = Editor::open(&path)?;
    ed.set("tokenizer.chat_template", template.as_str())?;
    report("tweaked template", ed.plan()?, ed.commit()?);

    let file = GgufFile::open(&path)?;
    assert_eq!(file.get_str("general.name")?, "tiny-llama (edited)");
    assert_eq!(file.get_str("tokenizer.chat_template")?, template);
    println!(
        "{}: name {:?}, template of {} bytes, {} tensors intact",
        path.display(),
        file.get_str("general.name")?,
        template.len(),
        file.tensor_count()
    );
    Ok(())
}

fn report(what: &str, planned: Commit, done: Commit) {
    assert_eq!(planned, done, "plan() predicts what commit() does");
    match done {
        Commit::InPlace { header_bytes, .. } => {
            println!("{what}: in place, {header_bytes} header bytes written")
        }
        Commit::Rewritten {
            file_bytes,
            slack_bytes,
            ..
        } => {
            println!("{what}: rewritten, {file_bytes} bytes, {slack_bytes} bytes of slack reserved")
        }
    }
}
