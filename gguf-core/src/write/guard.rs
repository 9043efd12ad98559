//! What a write refuses about its output paths before it starts: an
//! output that is not a regular file ([`check_output`]), and an output that
//! is one of the files the write reads ([`check_not_inputs`],
//! [`check_replacing_model`]). Every command that writes calls them before
//! reading its inputs' data, so nothing is read, converted or written for a
//! write that would replace `/dev/null` or destroy its own input.

use std::path::Path;

use crate::error::{BuildError, Error, Result};
use crate::read::file_kind;

/// Refuses an existing `path` that is not a regular file, or a symlink to
/// one, with [`BuildError::OutputNotRegular`] naming it and what it is: a
/// write renames a new file over its output, which would replace a device
/// (`/dev/null` as root), a FIFO or a socket with a regular file. A path
/// that does not exist, a regular file and a symlink to a regular file
/// (replaced by the new file, the file it pointed to left as it was) are
/// accepted. A directory is refused here rather than by a failed rename
/// after the whole write.
///
/// ```
/// # #[cfg(unix)] {
/// let err = gguf_core::write::check_output("/dev/null".as_ref()).unwrap_err();
/// assert!(err.to_string().starts_with("/dev/null: the output is a character device, not a regular file"));
/// # }
/// assert!(gguf_core::write::check_output("no/such/file.gguf".as_ref()).is_ok());
/// ```
pub fn check_output(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        // Nothing there, or a dangling link (the rename replaces the link):
        // nothing is lost. A path that cannot be examined fails at the
        // write, naming it.
        return Ok(());
    };
    if meta.is_file() {
        return Ok(());
    }
    Err(Error::Build(BuildError::OutputNotRegular {
        path: path.to_owned(),
        kind: file_kind(&meta.file_type()),
    }))
}

/// What tells two paths apart as files: device and inode where the OS has
/// them (hard links and symlinks are the same file), the canonical path
/// elsewhere. `None` for a path that does not exist.
#[derive(PartialEq, Eq, Clone, Debug)]
struct Identity(
    #[cfg(unix)] (u64, u64),
    #[cfg(not(unix))] std::path::PathBuf,
);

fn identity(path: &Path) -> Option<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        Some(Identity((meta.dev(), meta.ino())))
    }
    #[cfg(not(unix))]
    {
        std::fs::canonicalize(path).ok().map(Identity)
    }
}

fn is_input(output: &Path, input: &Path, reason: String) -> Error {
    Error::Build(BuildError::OutputIsInput {
        output: output.to_owned(),
        input: input.to_owned(),
        reason,
    })
}

/// Refuses, with [`BuildError::OutputIsInput`] naming both, any of
/// `outputs` (a file, or every shard of a split output) that is the same
/// file as one of `inputs`: the same device and inode (a hard link, a
/// symlink, another spelling of the path). Outputs that do not exist yet
/// cannot be inputs.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let weights = dir.path().join("model.safetensors");
/// std::fs::write(&weights, b"weights")?;
/// let spelled = dir.path().join(".").join("model.safetensors");
/// let err = gguf_core::write::check_not_inputs(&[spelled.as_path()], &[weights.as_path()]).unwrap_err();
/// assert!(err.to_string().contains("which this command reads"));
/// let out = dir.path().join("model.gguf");
/// assert!(gguf_core::write::check_not_inputs(&[out.as_path()], &[weights.as_path()]).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_not_inputs(outputs: &[&Path], inputs: &[&Path]) -> Result<()> {
    let inputs: Vec<(&Path, Identity)> = inputs
        .iter()
        .filter_map(|&p| identity(p).map(|id| (p, id)))
        .collect();
    for &output in outputs {
        let Some(id) = identity(output) else { continue };
        if let Some((input, _)) = inputs.iter().find(|(_, i)| *i == id) {
            return Err(is_input(output, input, String::new()));
        }
    }
    Ok(())
}

/// [`check_not_inputs`] for a write that turns a model into another
/// version of itself (`rewrite`, `convert`, `quantize`): the outputs may
/// replace the model's own files (`model`, every file of a split model)
/// when they are exactly those files, as the model is read whole into the
/// temporary files before any rename, and the renames replace every file
/// of it at once. An output that replaces only some of the model's files
/// (a merged file over one shard) is refused, as is any output that is one
/// of `others` (an importance matrix, a compared model).
pub fn check_replacing_model(outputs: &[&Path], model: &[&Path], others: &[&Path]) -> Result<()> {
    check_not_inputs(outputs, others)?;
    let model_ids: Vec<(&Path, Identity)> = model
        .iter()
        .filter_map(|&p| identity(p).map(|id| (p, id)))
        .collect();
    let output_ids: Vec<(&Path, Option<Identity>)> =
        outputs.iter().map(|&p| (p, identity(p))).collect();
    let overlap = output_ids.iter().find_map(|(out, id)| {
        let id = id.as_ref()?;
        model_ids
            .iter()
            .find(|(_, m)| m == id)
            .map(|(input, _)| (*out, *input))
    });
    let Some((output, input)) = overlap else {
        return Ok(());
    };
    let whole = output_ids.len() == model_ids.len()
        && output_ids.iter().all(|(_, id)| {
            id.as_ref()
                .is_some_and(|id| model_ids.iter().any(|(_, m)| m == id))
        })
        && model_ids
            .iter()
            .all(|(_, m)| output_ids.iter().any(|(_, id)| id.as_ref() == Some(m)));
    if whole {
        return Ok(());
    }
    let reason = format!(
        " (one of the model's {} file(s); its output replaces the model only when it is every \
         file of it, here {} file(s))",
        model_ids.len(),
        output_ids.len()
    );
    Err(is_input(output, input, reason))
}

/// True when `candidate` is named as a shard of the split output `output`
/// would be (`NAME-00001-of-00003.gguf` for `NAME.gguf`, in the same
/// directory), or is `output` itself.
pub fn may_be_shard_of(output: &Path, candidate: &Path) -> bool {
    let same_dir = |a: &Path, b: &Path| {
        let dir = |p: &Path| match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => std::path::PathBuf::from("."),
        };
        match (std::fs::canonicalize(dir(a)), std::fs::canonicalize(dir(b))) {
            (Ok(x), Ok(y)) => x == y,
            _ => dir(a) == dir(b),
        }
    };
    let (Some(out), Some(name)) = (output.file_name(), candidate.file_name()) else {
        return false;
    };
    let (Some(out), Some(name)) = (out.to_str(), name.to_str()) else {
        return false;
    };
    let stem = out.strip_suffix(".gguf").unwrap_or(out);
    let shard = crate::naming::parse_shard_name(name).is_some_and(|(s, _)| s == stem);
    (shard || name == out) && same_dir(output, candidate)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::testing::mkfifo;

    #[test]
    fn a_fifo_or_a_link_to_one_is_refused_as_output() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out.gguf");
        mkfifo(&fifo);
        let link = dir.path().join("link.gguf");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for path in [&fifo, &link] {
            let err = check_output(path).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!(
                    "{}: the output is a FIFO, not a regular file",
                    path.display()
                )),
                "{err}"
            );
        }
        let err = check_output(dir.path()).unwrap_err().to_string();
        assert!(err.contains("the output is a directory"), "{err}");
        let file = dir.path().join("m.gguf");
        std::fs::write(&file, b"x").unwrap();
        let to_file = dir.path().join("to-file.gguf");
        std::os::unix::fs::symlink(&file, &to_file).unwrap();
        check_output(&file).unwrap();
        check_output(&to_file).unwrap();
        check_output(&dir.path().join("new.gguf")).unwrap();
    }

    #[test]
    fn a_model_may_be_replaced_whole_but_not_in_part() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        for n in [
            "a.gguf",
            "m-00001-of-00002.gguf",
            "m-00002-of-00002.gguf",
            "imatrix.gguf",
        ] {
            std::fs::write(p(n), n).unwrap();
        }
        let (a, s1, s2, im) = (
            p("a.gguf"),
            p("m-00001-of-00002.gguf"),
            p("m-00002-of-00002.gguf"),
            p("imatrix.gguf"),
        );
        check_replacing_model(&[&a], &[&a], &[&im]).unwrap();
        check_replacing_model(&[&s1, &s2], &[&s2, &s1], &[]).unwrap();
        let err = check_replacing_model(&[&s1], &[&s1, &s2], &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("one of the model's 2 file(s)"), "{err}");
        let err = check_replacing_model(&[&im], &[&a], &[&im])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: the output is the input itself, which this command reads: give another output path",
                im.display()
            )
        );
        let hard = p("hard.gguf");
        std::fs::hard_link(&im, &hard).unwrap();
        assert!(check_not_inputs(&[&hard], &[&im]).is_err());
    }

    #[test]
    fn shard_names_of_an_output() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.gguf");
        assert!(may_be_shard_of(
            &out,
            &dir.path().join("m-00001-of-00003.gguf")
        ));
        assert!(may_be_shard_of(&out, &dir.path().join("./m.gguf")));
        assert!(!may_be_shard_of(&out, &dir.path().join("m-1-of-3.gguf")));
        assert!(!may_be_shard_of(
            &out,
            &dir.path().join("n-00001-of-00003.gguf")
        ));
    }
}
