//! `gguf tensor FILE NAME [--npy OUT]`: a tensor's summary, or its values
//! as a NumPy `.npy` file.

use std::io::Write;
use std::path::PathBuf;

use gguf::{Endian, GgmlType, Gguf, Tensor};

#[derive(clap::Args)]
pub struct Args {
    /// The model: a path (any shard of a split model), ollama:NAME[:TAG],
    /// or a URL (http(s)://, hf://, ms://, ollama://, s3://, gs://, az://)
    /// of which only the header and this tensor's bytes are fetched.
    file: PathBuf,
    /// The tensor's name.
    name: String,
    /// Write the values to this `.npy` file (little-endian, shape in NumPy
    /// order: the reverse of ggml's) instead of printing a summary. F32,
    /// F16, F64, I8, I16, I32 and I64 keep their type (float32, float16,
    /// float64, int8, ...); BF16 becomes float32 (NumPy has no bfloat16,
    /// and every BF16 value is exact in float32); quantized types become
    /// their dequantized float32 values.
    #[arg(long, value_name = "OUT")]
    npy: Option<PathBuf>,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

impl Args {
    /// True when the command writes a file (`--npy`).
    pub fn writes(&self) -> bool {
        self.npy.is_some()
    }
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let file = crate::open::open_model(&args.file, &args.source)?;
    if let Some(out) = &args.npy {
        // Before the tensor is read: writing over the model would destroy
        // what is being read.
        let inputs = crate::open::local_files(&file);
        let inputs: Vec<&std::path::Path> = inputs.iter().map(PathBuf::as_path).collect();
        crate::open::guard_outputs(&[out.as_path()], &inputs)?;
    }
    let t = file
        .tensor(&args.name)
        .map_err(|e| format!("{}: {e}", crate::open::shown(&args.file)))?;
    // A remote tensor's data is fetched once, here, with one range read.
    let before = crate::open::report_tensor_fetch(&file, &args.name, None);
    let t = Held::new(t)?;
    if args.source.verbose {
        crate::open::report_tensor_fetch(&file, &args.name, before);
    }
    let t = &t;
    match &args.npy {
        Some(out) => {
            write_npy(t, out).map_err(|e| format!("{}: {e}", out.display()))?;
            crate::print(&format!(
                "{}: {} {} values of {} {}, shape {:?}",
                out.display(),
                t.element_count(),
                NpyType::of(t.ggml_type()).name,
                t.ggml_type(),
                crate::text::escape(t.name()),
                numpy_shape(t)
            ))
        }
        None => crate::print(&summary(t)?),
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
    fn add(&mut self, x: f64) {
        if x.is_nan() {
            self.nan += 1;
            return;
        }
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

/// A tensor with its data read once (borrowed from the map when local,
/// one range read when remote).
struct Held<'t> {
    tensor: Tensor<'t>,
    data: std::borrow::Cow<'t, [u8]>,
}

impl<'t> Held<'t> {
    fn new(tensor: Tensor<'t>) -> Result<Self, Box<dyn std::error::Error>> {
        let data = tensor.read()?;
        Ok(Held { tensor, data })
    }

    fn row_len(&self) -> usize {
        self.tensor.shape().first().map_or(1, |&n| n as usize)
    }

    /// A codec error naming this tensor, as the library's decoders say it.
    fn codec_error(&self, e: gguf::Error) -> gguf::Error {
        gguf::Error::Codec(gguf::error::CodecError::TensorCodec {
            tensor: self.tensor.name().into(),
            source: Box::new(e),
        })
    }

    /// Calls `f` with each row of values decoded to f32, in file order,
    /// one row in memory at a time.
    fn for_each_row(&self, mut f: impl FnMut(&[f32])) -> Result<(), Box<dyn std::error::Error>> {
        let row_len = self.row_len().max(1);
        let n_rows = usize::try_from(self.tensor.element_count())? / row_len;
        if n_rows == 0 {
            return Ok(());
        }
        let mut buf = vec![0f32; row_len];
        for row in self.data.chunks_exact(self.data.len() / n_rows) {
            gguf::codec::dequantize(self.ggml_type(), self.file_endian(), row, &mut buf)
                .map_err(|e| self.codec_error(e))?;
            f(&buf);
        }
        Ok(())
    }
}

impl<'t> std::ops::Deref for Held<'t> {
    type Target = Tensor<'t>;
    fn deref(&self) -> &Tensor<'t> {
        &self.tensor
    }
}

fn summary(t: &Held<'_>) -> Result<String, Box<dyn std::error::Error>> {
    use std::fmt::Write;
    let mut stats = Stats::default();
    // Integer min/max exactly: an i64 may not fit an f64.
    let mut int_range: Option<(i64, i64)> = None;
    match NpyType::of(t.ggml_type()).kept {
        // Integers and F64 from their own values: through f32, an I32
        // 517605183 would read 517605184.
        Some(size) if !matches!(t.ggml_type(), GgmlType::F32 | GgmlType::F16) => {
            for e in t.data.chunks_exact(size) {
                match plain_value(t.ggml_type(), t.file_endian(), e) {
                    Plain::Int(i) => {
                        let (lo, hi) = int_range.get_or_insert((i, i));
                        (*lo, *hi) = ((*lo).min(i), (*hi).max(i));
                        stats.add(i as f64);
                    }
                    Plain::Float(x) => stats.add(x),
                }
            }
        }
        _ => t.for_each_row(|row| row.iter().for_each(|&x| stats.add(f64::from(x))))?,
    }
    let mut s = String::new();
    let _ = writeln!(s, "name:     {}", crate::text::escape(t.name()));
    let _ = writeln!(s, "type:     {}", t.ggml_type());
    let _ = writeln!(s, "shape:    {:?}", t.shape());
    let _ = writeln!(s, "elements: {}", t.element_count());
    let _ = writeln!(s, "bytes:    {}", t.byte_size()?);
    if let Some((lo, hi)) = int_range {
        let _ = writeln!(s, "min:      {lo}");
        let _ = writeln!(s, "max:      {hi}");
    } else if stats.count > 0 {
        let _ = writeln!(s, "min:      {}", stats.min);
        let _ = writeln!(s, "max:      {}", stats.max);
    }
    if stats.count > 0 {
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

/// What `--npy` writes for a tensor type.
struct NpyType {
    /// NumPy's `descr`: always little-endian.
    descr: &'static str,
    /// NumPy's name of the type, for the report.
    name: &'static str,
    /// `Some(element size)` when the tensor's own numbers are written (in
    /// little-endian order); `None` when its values are decoded to float32.
    kept: Option<usize>,
}

impl NpyType {
    fn of(ty: GgmlType) -> NpyType {
        let (descr, name, size) = match ty {
            GgmlType::F32 => ("<f4", "float32", 4),
            GgmlType::F16 => ("<f2", "float16", 2),
            GgmlType::F64 => ("<f8", "float64", 8),
            GgmlType::I8 => ("|i1", "int8", 1),
            GgmlType::I16 => ("<i2", "int16", 2),
            GgmlType::I32 => ("<i4", "int32", 4),
            GgmlType::I64 => ("<i8", "int64", 8),
            _ => {
                return NpyType {
                    descr: "<f4",
                    name: "float32",
                    kept: None,
                }
            }
        };
        NpyType {
            descr,
            name,
            kept: Some(size),
        }
    }
}

/// An element of F64 or an integer type.
enum Plain {
    Int(i64),
    Float(f64),
}

/// One F64 or integer element, stored in `endian` order.
fn plain_value(ty: GgmlType, endian: Endian, bytes: &[u8]) -> Plain {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    if endian == Endian::Big {
        b[..n].reverse();
    }
    let le = |k: usize| -> [u8; 8] {
        // Sign-extended to 8 bytes for integers.
        let fill = if b[k - 1] & 0x80 != 0 { 0xff } else { 0 };
        let mut w = [fill; 8];
        w[..k].copy_from_slice(&b[..k]);
        w
    };
    match ty {
        GgmlType::F64 => Plain::Float(f64::from_le_bytes(b)),
        GgmlType::I8 | GgmlType::I16 | GgmlType::I32 | GgmlType::I64 => {
            Plain::Int(i64::from_le_bytes(le(n)))
        }
        _ => Plain::Float(f64::NAN),
    }
}

/// The `.npy` v1.0 header for little-endian values of `descr` and `shape`:
/// magic, version, header length, then a Python dict literal padded with
/// spaces and a newline to a multiple of 64 bytes.
fn npy_header(descr: &str, shape: &[u64]) -> Vec<u8> {
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
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    // At most 4 dimensions: the dict is far below 64 KiB.
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

/// Streams the tensor into `out`: its own numbers a chunk at a time, or
/// its decoded values one row at a time.
fn write_npy(t: &Held<'_>, out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let npy = NpyType::of(t.ggml_type());
    // Checked before creating `out`: an undecodable tensor leaves nothing.
    if npy.kept.is_none() {
        // No decoder: refused before `out` is created, as the library
        // words it.
        gguf::codec::dequantize(t.ggml_type(), t.file_endian(), &[], &mut [])
            .map_err(|e| t.codec_error(e))?;
    }
    let data = &t.data;
    // Atomic, as every write of this tool: an existing file is replaced
    // only by a complete one, and an error leaves nothing.
    // A decoding error, kept whole (the writer's closure returns the
    // library's error type).
    let mut decode_error = None;
    let written = gguf::write::replace_file(out, |file| {
        let mut w = std::io::BufWriter::new(file);
        w.write_all(&npy_header(npy.descr, &numpy_shape(t)))?;
        // Sized by the first row or chunk: a tensor of no elements may
        // declare a huge row length.
        let mut bytes = Vec::new();
        if let Some(size) = npy.kept {
            const CHUNK: usize = 1 << 20;
            let swap = size > 1 && t.file_endian() == Endian::Big;
            for chunk in data.chunks(CHUNK - CHUNK % size) {
                bytes.clear();
                bytes.extend_from_slice(chunk);
                if swap {
                    bytes.chunks_exact_mut(size).for_each(<[u8]>::reverse);
                }
                w.write_all(&bytes)?;
            }
        }
        if npy.kept.is_none() {
            let mut failed = Ok(());
            let decoded = t.for_each_row(|row| {
                bytes.clear();
                bytes.extend(row.iter().flat_map(|x| x.to_le_bytes()));
                if failed.is_ok() {
                    failed = w.write_all(&bytes);
                }
            });
            if let Err(e) = decoded {
                let io = std::io::Error::other(e.to_string());
                decode_error = Some(e);
                return Err(io.into());
            }
            failed?;
        }
        w.flush()?;
        Ok(())
    });
    match (written, decode_error) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(e.into()),
    }
}
