//! Unit tests of the tokenizer import.
