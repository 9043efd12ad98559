//! `gguf tensor` and `gguf convert`, run as child processes.
