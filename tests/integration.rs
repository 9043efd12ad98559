//! One integration-test binary, fast to link; each module covers one area.

mod integration {
    pub mod accept;
    pub mod cli;
    pub mod hostile;
    pub mod interop_read;
    pub mod truncation;
    pub mod util;
}
