//! One integration-test binary, fast to link; each module covers one area.

mod integration {
    pub mod cli;
    pub mod cli_rewrite;
    pub mod gguf_py;
    pub mod memory;
    pub mod round_trip;
    pub mod util;
    pub mod write;
}
