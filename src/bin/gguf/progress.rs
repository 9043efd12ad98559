//! The progress bar of the commands that write whole files (bytes, or
//! work for quantize), and the one way those commands write.

use std::io::IsTerminal;
use std::path::Path;

use gguf::write::{Builder, Layout, WriteMode, WriteOptions};

/// Writes `b` to `path` atomically in `mode`, drawing a progress bar on a
/// terminal; errors name the path.
pub fn write_to_path(
    b: &mut Builder<'_>,
    path: &Path,
    mode: WriteMode,
) -> Result<Layout, Box<dyn std::error::Error>> {
    let bar = Bar::new();
    let opts = WriteOptions::new()
        .mode(mode)
        .progress(|done, total| bar.update(done, total));
    Ok(b.write_to_path_with(path, opts)
        .map_err(|e| format!("{}: {e}", path.display()))?)
}

/// The template of a bar of work.
const WORK: &str = "{bar:40} {percent:>3}% eta {eta}";

/// A progress bar on stderr when it is a terminal; nothing when piped.
pub struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    /// A bar of bytes written (a write whose time goes into its bytes).
    pub fn new() -> Self {
        Self::with_template("{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}")
    }

    /// A bar of work done, in the units of the library's quantize
    /// progress (not bytes: shown as a share and an ETA).
    pub fn work() -> Self {
        Self::with_template(WORK)
    }

    /// From now on, shows work as [`Bar::work`] does.
    pub fn show_work(&self) {
        if let (Some(bar), Ok(style)) = (&self.0, indicatif::ProgressStyle::with_template(WORK)) {
            bar.set_style(style);
        }
    }

    fn with_template(template: &str) -> Self {
        Bar(std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        }))
    }

    /// Reports `done` of `total` (bytes, or work for [`Bar::work`]).
    pub fn update(&self, done: u64, total: u64) {
        if let Some(bar) = &self.0 {
            bar.set_length(total);
            bar.set_position(done);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
