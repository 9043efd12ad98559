//! A caller using an API out of order.

/// The library was called in a way its documentation rules out: the
/// caller's mistake, not the file's or the operating system's.
///
/// ```
/// use gguf_core::error::UsageError;
/// use gguf_core::read::{HeaderParser, ReadOptions};
/// use gguf_core::Error;
///
/// let mut parser = HeaderParser::new(&ReadOptions::default());
/// // No step asked for bytes yet.
/// let err = parser.push(vec![0; 8], 8).unwrap_err();
/// assert!(matches!(err, Error::Usage(UsageError::NotAsked { .. })));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// A parser or handle was used again after it finished.
    #[error("{method} called after it finished")]
    Finished {
        /// The method called, as `Type::method`.
        method: &'static str,
    },
    /// Data was given that no earlier call asked for.
    #[error("{method} called without a pending read")]
    NotAsked {
        /// The method called, as `Type::method`.
        method: &'static str,
    },
}
