//! One integration-test binary, fast to link; each module covers one area.

mod integration {
    pub mod accept;
    pub mod cli;
    pub mod cli_edit;
    pub mod edit;
    pub mod edit_crash;
    pub mod edit_fixtures;
    pub mod edit_interop;
    pub mod hostile;
    pub mod interop_read;
    pub mod truncation;
    pub mod util;
}
