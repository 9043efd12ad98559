//! The byte progress bar of the commands that write whole files, and the
//! one way those commands write.

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

/// A progress bar on stderr when it is a terminal; nothing when piped.
pub struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    pub fn new() -> Self {
        Bar(std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        }))
    }

    /// Reports `done` of `total` bytes (the writer's progress callback).
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
