//! Reproducers of what fuzzing found, each a small hand-made file, checked
//! through the library and through the `gguf` tool (`inspect`, `tensor`,
//! `rewrite`, `convert`).

use gguf::error::{FormatError, LookupError};
use std::path::Path;
use std::process::Output;

use gguf::{Error, GgmlType, Gguf, GgufFile};

use super::util::{accept, gguf, raw, reject, Raw};

/// A v3 file with one tensor info and no metadata, padded to 32.
fn one_tensor(name: &str, dims: &[u64], ty: GgmlType, offset: u64) -> Raw {
    let mut r = raw();
    r.header(1, 0).tensor_info(name, dims, ty.id(), offset);
    r.pad(32);
    r
}

/// Runs `gguf` on `bytes` saved as a file: every subcommand that reads
/// tensors must end with a status and never crash (a panic exits 101, an
/// abort dies by a signal).
fn cli_survives(bytes: &[u8], tensor: &str) -> Vec<Output> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    std::fs::write(&input, bytes).unwrap();
    let npy = dir.path().join("t.npy");
    let out = dir.path().join("out.gguf");
    let conv = dir.path().join("conv.gguf");
    let (input, npy, out, conv) = (
        input.as_os_str(),
        npy.as_os_str(),
        out.as_os_str(),
        conv.as_os_str(),
    );
    let tensor = std::ffi::OsStr::new(tensor);
    let arg = std::ffi::OsStr::new;
    let runs = vec![
        gguf(&[arg("inspect"), input]),
        gguf(&[arg("tensor"), input, tensor]),
        gguf(&[arg("tensor"), input, tensor, arg("--npy"), npy]),
        gguf(&[arg("rewrite"), input, out]),
        gguf(&[arg("convert"), input, conv, arg("--type"), arg("Q8_0")]),
    ];
    for o in &runs {
        assert!(
            o.status.code().is_some_and(|c| c == 0 || c == 1),
            "gguf crashed ({:?}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    }
    runs
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "gguf failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn quantized_tensor_without_dimensions_is_rejected() {
    // n_dims 0: one element, which is not a whole Q4_0 block.
    let r = one_tensor("q", &[], GgmlType::Q4_0, 0);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::RowNotBlockMultiple { tensor, row: 1, block: 32, .. }) if tensor == "q"),
        "{e:?}"
    );
    let o = cli_survives(&r.buf, "q");
    assert!(String::from_utf8_lossy(&o[0].stderr).contains("block"));
    // A plain type without dimensions is a scalar.
    let mut r = raw();
    r.header(1, 0).tensor_info("s", &[], GgmlType::F32.id(), 0);
    r.pad(32).f32(2.5);
    let f = accept(&r.buf);
    let t = f.tensor("s").unwrap();
    assert_eq!((t.element_count(), t.to_f32().unwrap()), (1, vec![2.5]));
    assert_eq!(
        t.rows().unwrap().collect::<Result<Vec<_>, _>>().unwrap(),
        [vec![2.5]]
    );
}

#[test]
fn empty_tensor_offset_past_the_end_is_rejected() {
    for offset in [u64::MAX - 31, 1 << 62, 64] {
        let r = one_tensor("e", &[0, 4], GgmlType::F32, offset);
        let e = reject(&r.buf);
        assert!(
            matches!(&e, Error::Format(FormatError::TensorOutOfBounds { tensor, end, .. }) if tensor == "e" && *end >= 32),
            "{offset}: {e:?}"
        );
        cli_survives(&r.buf, "e");
    }
}

#[test]
fn empty_tensor_at_the_end_of_the_file_is_accepted() {
    // The offset just past the data: where a writer puts an empty tensor
    // that comes last.
    let mut r = raw();
    r.header(2, 0)
        .tensor_info("w", &[8], GgmlType::F32.id(), 0)
        .tensor_info("e", &[0], GgmlType::Q8_0.id(), 32);
    r.pad(32).bytes(&[0; 32]);
    let f = accept(&r.buf);
    let t = f.tensor("e").unwrap();
    assert_eq!(t.file_offset(), f.file_len());
    assert!(t.data().unwrap().is_empty());
    // No padding after the infos: the data section starts past the end,
    // and an empty tensor at its start is still accepted.
    let mut r = raw();
    r.header(1, 0)
        .tensor_info("e", &[0, 3], GgmlType::F16.id(), 0);
    let f = accept(&r.buf);
    let t = f.tensor("e").unwrap();
    assert!(t.data().unwrap().is_empty());
    assert_eq!(t.rows().unwrap().len(), 0);
}

#[test]
fn empty_tensor_rows_are_bounded() {
    // A huge row length (no buffer of 4 TiB), and other dimensions whose
    // product overflows or is astronomically large (no 10^19 empty rows).
    let shapes: [&[u64]; 5] = [
        &[1 << 40, 0],
        &[0, 5, 1 << 62],
        &[0, 3, 1 << 62],
        &[0, 1 << 62],
        &[1 << 62, 0, 1 << 62, 2],
    ];
    for shape in shapes {
        for ty in [GgmlType::F32, GgmlType::Q8_0, GgmlType::Q4_K] {
            let r = one_tensor("e.weight", shape, ty, 0);
            let f = GgufFile::open(&r.buf).unwrap_or_else(|e| panic!("{shape:?} {ty}: {e}"));
            let t = f.tensor("e.weight").unwrap();
            assert_eq!(t.element_count(), 0);
            let rows = t.rows().unwrap();
            assert_eq!(
                rows.len(),
                0,
                "{shape:?}: a tensor of no elements has no rows"
            );
            assert_eq!(rows.row_len() as u64, shape[0]);
            assert_eq!(rows.count(), 0);
            let mut calls = 0;
            t.for_each_row(|_, _| calls += 1).unwrap();
            assert_eq!(calls, 0);
            assert!(t.to_f32().unwrap().is_empty());
            assert!(t.to_f16().unwrap().is_empty());

            let o = cli_survives(&r.buf, "e.weight");
            let summary = ok(&o[1]);
            assert!(summary.contains("elements: 0"), "{summary}");
            ok(&o[2]);
            ok(&o[3]);
            // convert: done, or refused because nothing would change (a
            // 1-D or already-Q8_0 tensor), which it says.
            let err = String::from_utf8_lossy(&o[4].stderr);
            assert!(
                o[4].status.success() || err.contains("nothing to convert to Q8_0"),
                "{shape:?} {ty}: {err}"
            );
        }
    }
}

#[test]
fn empty_tensors_survive_rewrite_and_convert() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let mut r = raw();
    r.header(3, 0)
        .tensor_info("a.weight", &[1 << 40, 0], GgmlType::F32.id(), 0)
        .tensor_info("b.weight", &[64, 2], GgmlType::F32.id(), 0)
        .tensor_info("c.weight", &[0, 3, 1 << 61], GgmlType::F16.id(), 512);
    r.pad(32).bytes(&[0; 512]);
    std::fs::write(&input, &r.buf).unwrap();
    let out = dir.path().join("out.gguf");
    ok(&gguf(&[
        std::ffi::OsStr::new("rewrite"),
        input.as_os_str(),
        out.as_os_str(),
    ]));
    assert!(std::fs::read(&out).unwrap() == r.buf);
    let conv = dir.path().join("conv.gguf");
    ok(&gguf(&[
        std::ffi::OsStr::new("convert"),
        input.as_os_str(),
        conv.as_os_str(),
        std::ffi::OsStr::new("--type"),
        std::ffi::OsStr::new("Q8_0"),
    ]));
    let f = GgufFile::open(&conv).unwrap();
    assert_eq!(f.tensor("b.weight").unwrap().ggml_type(), GgmlType::Q8_0);
    for name in ["a.weight", "c.weight"] {
        let t = f.tensor(name).unwrap();
        assert_eq!((t.element_count(), t.data().unwrap().len()), (0, 0));
    }
    let npy = dir.path().join("a.npy");
    ok(&gguf(&[
        std::ffi::OsStr::new("tensor"),
        input.as_os_str(),
        std::ffi::OsStr::new("a.weight"),
        std::ffi::OsStr::new("--npy"),
        npy.as_os_str(),
    ]));
    assert!(Path::new(&npy).exists());
}

/// Found by the `reader_agree` fuzz target: a header-only file
/// (`from_reader`) answered `Ok(&[])` for an empty tensor's data, unlike
/// every other tensor of such a file. Data it does not hold is
/// `DataNotLoaded`, empty or not; a whole file gives the empty slice.
#[test]
fn header_only_file_holds_no_data_even_for_empty_tensors() {
    let mut b = gguf::write::Builder::new();
    b.add_tensor("empty", GgmlType::F32, &[0], Vec::<u8>::new())
        .unwrap();
    b.add_tensor("one", GgmlType::F32, &[1], vec![0u8; 4])
        .unwrap();
    let bytes = b.to_vec().unwrap();
    let whole = GgufFile::open(&bytes).unwrap();
    assert_eq!(whole.tensor("empty").unwrap().data().unwrap(), &[] as &[u8]);
    let header =
        GgufFile::open(gguf::Source::reader(std::io::Cursor::new(bytes.to_vec()))).unwrap();
    for name in ["empty", "one"] {
        assert!(
            matches!(
                header.tensor(name).unwrap().data(),
                Err(Error::Lookup(LookupError::DataNotLoaded { .. }))
            ),
            "{name}"
        );
    }
}

/// A `Write + Seek` that keeps nothing: it remembers how far the writer
/// got and the largest single write.
#[derive(Default)]
struct Measure {
    pos: u64,
    end: u64,
    largest: usize,
}

impl std::io::Write for Measure {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pos += buf.len() as u64;
        self.end = self.end.max(self.pos);
        self.largest = self.largest.max(buf.len());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for Measure {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.pos = match to {
            std::io::SeekFrom::Start(p) => Some(p),
            std::io::SeekFrom::End(d) => self.end.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        }
        .ok_or(std::io::ErrorKind::InvalidInput)?;
        Ok(self.pos)
    }
}

impl gguf::write::Output for Measure {}

/// Seen as a 1.5 GB peak in a long `round_trip` run: a 57-byte file with
/// no tensors and `general.alignment` = 2^30 is legal, and written back it
/// is padded to 1 GiB (as gguf-py pads it). That padding used to be built
/// in memory with the header (2.1 GB resident for `gguf rewrite`); it is
/// now written from a small buffer, in every write mode.
#[test]
fn header_padding_is_never_held_in_memory() {
    let mut b = gguf::write::Builder::new();
    b.alignment(1 << 31).unwrap();
    let expected = 1u64 << 31;
    let mut single = Measure::default();
    b.write(&mut single).unwrap();
    let mut first = Measure::default();
    b.write_metadata_first(&mut first)
        .unwrap()
        .finish()
        .unwrap();
    let mut reserve = Measure::default();
    let opts = gguf::write::WriteOptions::new().mode(gguf::write::WriteMode::Reserve);
    b.write_with(&mut reserve, opts).unwrap();
    for (mode, m) in [
        ("single", single),
        ("metadata-first", first),
        ("reserve", reserve),
    ] {
        assert_eq!(m.end, expected, "{mode}");
        assert!(
            m.largest <= 1 << 20,
            "{mode}: one write of {} bytes",
            m.largest
        );
    }

    // Through the tool: the 57-byte file rewritten is 1 GiB, and reads
    // back with the same metadata.
    let mut r = raw();
    r.header(0, 1).str("general.alignment").u32(4).u32(1 << 30);
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in.gguf"), dir.path().join("out.gguf"));
    std::fs::write(&input, &r.buf).unwrap();
    ok(&gguf(&[
        "rewrite".as_ref(),
        input.as_os_str(),
        output.as_os_str(),
    ]));
    assert_eq!(std::fs::metadata(&output).unwrap().len(), 1 << 30);
    let back = GgufFile::open(&output).unwrap();
    assert_eq!(back.alignment(), 1 << 30);
    assert_eq!(back.header_len(), r.buf.len() as u64);
}
