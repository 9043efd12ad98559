//! One integration-test binary, fast to link; each module covers one area.

mod integration {
    pub mod accept;
    pub mod cli;
    pub mod cli_check;
    pub mod cli_diff;
    pub mod cli_edit;
    pub mod cli_get;
    pub mod cli_hash;
    pub mod cli_rewrite;
    pub mod cli_rough_edges;
    pub mod cli_split;
    pub mod cli_tensor;
    pub mod edit;
    pub mod edit_crash;
    pub mod edit_fixtures;
    pub mod edit_interop;
    pub mod endian;
    pub mod estimate;
    pub mod fuzz_regressions;
    pub mod gguf_py;
    pub mod hostile;
    pub mod interop_read;
    pub mod llama_tools;
    pub mod memory;
    pub mod open;
    pub mod proptest_write;
    pub mod remote;
    pub mod round_trip;
    pub mod sources;
    pub mod split;
    pub mod tensor_api;
    pub mod truncation;
    pub mod util;
    pub mod write;
}
