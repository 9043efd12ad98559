//! Converts tensors between types: re-encodes a model's 2-D weights to
//! Q8_0 (what `gguf convert --type Q8_0` does), adds a tensor quantized
//! from `f32`s, and measures the error each encoding introduces.
//!
//! ```sh
//! cargo run --example requantize                 # the bundled sample
//! cargo run --example requantize -- model.gguf   # any model (output in a temp dir)
//! ```

use gguf::write::Builder;
use gguf::{tensor, GgmlType, Gguf, GgufFile};

fn main() -> gguf::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf").into());
    let file = GgufFile::open(&path)?;
    let target = GgmlType::Q8_0;
    // Values for a new tensor; the builder borrows them until it writes.
    let values: Vec<f32> = (0..256 * 4).map(|i| (i as f32 * 0.01).sin()).collect();

    // Re-encode every 2-D float weight whose rows are whole Q8_0 blocks;
    // norms and other 1-D tensors stay as they are. The data is decoded and
    // quantized a chunk of rows at a time when the file is written.
    let mut b = Builder::from_file(&file)?;
    let mut converted = Vec::new();
    for t in file.tensors() {
        let float = matches!(
            t.ggml_type(),
            GgmlType::F32 | GgmlType::F16 | GgmlType::BF16
        );
        let block = target.block_size().unwrap_or(1);
        if float && t.shape().len() == 2 && t.shape()[0] % block == 0 {
            b.requantize_tensor(t.name(), target)?;
            converted.push(t.name().to_string());
        }
    }

    // A new tensor quantized from f32 values, here to Q4_K (rows of 256).
    b.add_tensor_quantized("extra.weight", GgmlType::Q4_K, &[256, 4], &values[..])?;
    b.set("general.file_type", 7u32)?; // llama.cpp's MOSTLY_Q8_0

    let mut out = Vec::new();
    b.write(&mut out)?;
    let new = GgufFile::open(&out)?;
    println!(
        "{} bytes -> {} bytes, {} tensors re-encoded to {target}",
        std::fs::metadata(&path)?.len(),
        out.len(),
        converted.len()
    );
    for name in converted.iter().take(4) {
        let (before, after) = (file.tensor(name)?, new.tensor(name)?);
        println!(
            "  {name:24} {} -> {}: max abs error {:.5}",
            before.ggml_type(),
            after.ggml_type(),
            max_abs_diff(&before.to_f32()?, &after.to_f32()?)
        );
    }

    // The same encoders work on plain slices.
    for ty in [
        GgmlType::Q8_0,
        GgmlType::Q6_K,
        GgmlType::Q4_K,
        GgmlType::Q2_K,
    ] {
        let q = tensor::quantize(ty, &values, &[256, 4])?;
        let mut back = vec![0f32; values.len()];
        tensor::dequantize(ty, gguf::Endian::Little, &q, &mut back)?;
        println!(
            "  {:6} {:5} bytes for {} values, max abs error {:.5}",
            ty.to_string(),
            q.len(),
            values.len(),
            max_abs_diff(&values, &back)
        );
    }
    let extra = new.tensor("extra.weight")?;
    assert_eq!(
        extra.data()?,
        tensor::quantize(GgmlType::Q4_K, &values, &[256, 4])?
    );
    Ok(())
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}
