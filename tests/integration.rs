//! One integration-test binary, fast to link; each module covers one area.

mod integration {
    pub mod accept;
    pub mod cli;
    pub mod cli_edit;
    pub mod cli_rewrite;
    pub mod cli_tensor;
    pub mod edit;
    pub mod edit_crash;
    pub mod edit_fixtures;
    pub mod edit_interop;
    pub mod gguf_py;
    pub mod hostile;
    pub mod interop_read;
    pub mod memory;
    pub mod remote;
    pub mod round_trip;
    pub mod tensor_api;
    pub mod truncation;
    pub mod util;
    pub mod write;
}
