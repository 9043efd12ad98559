//! What stops an in-place edit.

/// Editing a file in place (`edit::Editor`) cannot go on safely.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// Another process holds the file's edit lock.
    #[error("{path}: another editor is committing to this file (advisory lock held)")]
    Locked {
        /// The file.
        path: std::path::PathBuf,
    },
    /// The file changed on disk between `Editor::open` and `commit`.
    #[error("{path}: the file changed on disk since it was opened for editing; reopen and redo the edit")]
    ConcurrentModification {
        /// The file.
        path: std::path::PathBuf,
    },
    /// A journal beside the file is damaged in a way recovery cannot judge safe.
    #[error("{path}: edit journal is invalid: {reason}")]
    BadJournal {
        /// The journal file.
        path: std::path::PathBuf,
        /// Why.
        reason: String,
    },
}

impl EditError {
    /// The file or journal the error names (see
    /// [`Error::path`](super::Error::path)).
    pub(crate) fn path(&self) -> &std::path::Path {
        match self {
            EditError::Locked { path }
            | EditError::ConcurrentModification { path }
            | EditError::BadJournal { path, .. } => path,
        }
    }
}
