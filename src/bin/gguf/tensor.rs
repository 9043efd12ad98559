//! `gguf tensor FILE NAME [--npy OUT]`: a tensor's summary, or its values
//! as a NumPy `.npy` file.

use std::io::Write;
use std::path::PathBuf;

use gguf::Tensor;

#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file: a path, or a URL or object-store path (only the
    /// header and this tensor's bytes are fetched).
    file: PathBuf,
    /// The tensor's name.
    name: String,
    /// Write the dequantized values to this `.npy` file (float32, shape in
    /// NumPy order: the reverse of ggml's) instead of printing a summary.
    #[arg(long, value_name = "OUT")]
    npy: Option<PathBuf>,
    /// For a remote file, print to stderr how it was fetched.
    #[arg(long, short)]
    verbose: bool,
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let file = crate::open::open_model(&args.file, Some(&args.name), args.verbose)?;
    let t = file
        .tensor(&args.name)
        .map_err(|e| format!("{}: {e}", args.file.display()))?;
    match &args.npy {
        Some(out) => {
            write_npy(&t, out).map_err(|e| format!("{}: {e}", out.display()))?;
            crate::print(&format!(
                "{}: {} float32 values, shape {:?}",
                out.display(),
                t.element_count(),
                numpy_shape(&t)
            ))
        }
        None => crate::print(&summary(&t)?),
    }
}

/// Running statistics over the non-NaN values, in f64 (Welford's update,
/// stable over billions of values).
#[derive(Default)]
struct Stats {
    count: u64,
    nan: u64,
    min: f64,
    max: f64,
    mean: f64,
    m2: f64,
}

impl Stats {
    fn add(&mut self, x: f32) {
        if x.is_nan() {
            self.nan += 1;
            return;
        }
        let x = f64::from(x);
        if self.count == 0 {
            self.min = x;
            self.max = x;
        }
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        self.count += 1;
        let d = x - self.mean;
        self.mean += d / self.count as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Population standard deviation (NumPy's default, `ddof=0`).
    fn std(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        (self.m2 / self.count as f64).sqrt()
    }
}

fn summary(t: &Tensor<'_>) -> Result<String, Box<dyn std::error::Error>> {
    use std::fmt::Write;
    let mut stats = Stats::default();
    t.for_each_row(|_, row| row.iter().for_each(|&x| stats.add(x)))?;
    let mut s = String::new();
    let _ = writeln!(s, "name:     {}", t.name());
    let _ = writeln!(s, "type:     {}", t.ggml_type());
    let _ = writeln!(s, "shape:    {:?}", t.shape());
    let _ = writeln!(s, "elements: {}", t.element_count());
    let _ = writeln!(s, "bytes:    {}", t.byte_size()?);
    if stats.count > 0 {
        let _ = writeln!(s, "min:      {}", stats.min);
        let _ = writeln!(s, "max:      {}", stats.max);
        let _ = writeln!(s, "mean:     {}", stats.mean);
        let _ = writeln!(s, "std:      {}", stats.std());
    }
    if stats.nan > 0 {
        let _ = writeln!(s, "nan:      {}", stats.nan);
    }
    Ok(s.trim_end().to_owned())
}

fn numpy_shape(t: &Tensor<'_>) -> Vec<u64> {
    t.shape().iter().rev().copied().collect()
}

/// The `.npy` v1.0 header for little-endian float32 values of `shape`:
/// magic, version, header length, then a Python dict literal padded with
/// spaces and a newline to a multiple of 64 bytes.
fn npy_header(shape: &[u64]) -> Vec<u8> {
    let dims = match shape {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {dims}, }}");
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    // At most 4 dimensions: the dict is far below 64 KiB.
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

/// Streams the tensor into `out` one row at a time.
fn write_npy(t: &Tensor<'_>, out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut rows = t.rows()?;
    let mut w = std::io::BufWriter::new(std::fs::File::create(out)?);
    let result = (|| -> Result<(), Box<dyn std::error::Error>> {
        w.write_all(&npy_header(&numpy_shape(t)))?;
        // Sized by the first row: a tensor of no elements may declare a
        // huge row length.
        let mut bytes = Vec::new();
        while let Some(row) = rows.next_row() {
            bytes.clear();
            bytes.extend(row?.iter().flat_map(|x| x.to_le_bytes()));
            w.write_all(&bytes)?;
        }
        w.flush()?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(out);
    }
    result
}
