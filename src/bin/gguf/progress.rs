//! The byte progress bar of the commands that write whole files.

use std::io::IsTerminal;

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
