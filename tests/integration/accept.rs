//! Valid files the reader must accept.
