use super::*;

/// A legacy file as llama-imatrix's `save_imatrix_legacy` writes it.
fn dat(entries: &[(&str, i32, &[f32])], trailer: Option<(i32, &str)>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend((entries.len() as i32).to_le_bytes());
    for (name, ncall, vals) in entries {
        out.extend((name.len() as i32).to_le_bytes());
        out.extend(name.as_bytes());
        out.extend(ncall.to_le_bytes());
        out.extend((vals.len() as i32).to_le_bytes());
        for v in *vals {
            out.extend(v.to_le_bytes());
        }
    }
    if let Some((chunks, dataset)) = trailer {
        out.extend(chunks.to_le_bytes());
        out.extend((dataset.len() as i32).to_le_bytes());
        out.extend(dataset.as_bytes());
    }
    out
}

/// A GGUF file laid out as llama-imatrix's `save_imatrix` writes it:
/// entries sorted by name, `[ne0]`/`[1]` shapes for one matrix and
/// `[ne0, n]`/`[1, n]` for `n` experts.
fn gguf(entries: &[(&str, &[f32], &[f32])], datasets: &[&str], chunks: u32) -> Vec<u8> {
    let mut b = Builder::new();
    b.set("general.type", "imatrix").unwrap();
    b.set("imatrix.datasets", datasets.to_vec()).unwrap();
    b.set("imatrix.chunk_count", chunks).unwrap();
    b.set("imatrix.chunk_size", 512u32).unwrap();
    for (name, sums, counts) in entries {
        let n = counts.len() as u64;
        let per = sums.len() as u64 / n;
        let (s, c) = if n == 1 {
            (vec![per], vec![1])
        } else {
            (vec![per, n], vec![1, n])
        };
        let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        b.add_tensor(format!("{name}.in_sum2"), GgmlType::F32, &s, bytes(sums))
            .unwrap();
        b.add_tensor(format!("{name}.counts"), GgmlType::F32, &c, bytes(counts))
            .unwrap();
    }
    b.to_vec().unwrap()
}

fn model(tensors: &[(&str, &[u64])]) -> Vec<u8> {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    for (name, shape) in tensors {
        let n: u64 = shape.iter().product();
        b.add_tensor(*name, GgmlType::F32, shape, vec![0u8; n as usize * 4])
            .unwrap();
    }
    b.to_vec().unwrap()
}

#[test]
fn legacy_files_read_with_and_without_their_trailer() {
    let bytes = dat(
        &[("a.weight", 4, &[8.0, 2.0]), ("b.weight", 0, &[3.0])],
        Some((10, "wiki.train.raw")),
    );
    let m = Imatrix::parse(&bytes).unwrap();
    assert_eq!(m.format, ImatrixFormat::Dat);
    assert_eq!(m.entries.len(), 2);
    assert_eq!(m.chunk_count, 10);
    assert_eq!(m.datasets, ["wiki.train.raw"]);
    assert_eq!(m.weights(&m.entries[0]), [2.0, 0.5]);
    // ncall 0: the values as they are.
    assert_eq!(m.weights(&m.entries[1]), [3.0]);
    // Writing gives the same bytes.
    assert_eq!(m.to_bytes().unwrap(), bytes);

    let bare = dat(&[("a.weight", 1, &[1.0])], None);
    let m = Imatrix::parse(&bare).unwrap();
    assert_eq!((m.chunk_count, m.datasets.len()), (0, 0));
    // A name with a NUL ends there, as llama.cpp reads it.
    let m = Imatrix::parse(&dat(&[("a\0junk", 1, &[1.0])], None)).unwrap();
    assert_eq!(m.entries[0].name, "a");
    // A repeated name: the last one counts.
    let m = Imatrix::parse(&dat(&[("a", 1, &[1.0]), ("a", 1, &[5.0])], None)).unwrap();
    assert_eq!(m.entry("a").unwrap().sums, [5.0]);
}

#[test]
fn broken_legacy_files_are_errors_that_say_where() {
    let good = dat(&[("a.weight", 1, &[1.0, 2.0])], None);
    // Every cut inside the entries is an error (never a panic).
    for cut in 0..good.len() {
        let err = Imatrix::parse(&good[..cut]).unwrap_err();
        assert!(
            err.to_string().starts_with("importance matrix:"),
            "{cut}: {err}"
        );
    }
    let err = Imatrix::parse(&dat(&[], None)).unwrap_err();
    assert!(err.to_string().contains("0 entries"), "{err}");
    let err = Imatrix::parse(&dat(&[("a", 1, &[])], None)).unwrap_err();
    assert!(err.to_string().contains("0 values"), "{err}");
    // Counts far beyond the file: an error, not an allocation.
    let mut huge = Vec::new();
    huge.extend(i32::MAX.to_le_bytes());
    huge.extend(1i32.to_le_bytes());
    huge.extend(b"a");
    huge.extend(1i32.to_le_bytes());
    huge.extend(i32::MAX.to_le_bytes());
    let err = Imatrix::parse(&huge).unwrap_err();
    assert!(
        err.to_string()
            .contains("offset 17 while reading the values of \"a\""),
        "{err}"
    );
    let mut neg = Vec::new();
    neg.extend(1i32.to_le_bytes());
    neg.extend((-5i32).to_le_bytes());
    let err = Imatrix::parse(&neg).unwrap_err();
    assert!(err.to_string().contains("name length -5"), "{err}");
}

#[test]
fn gguf_files_read_per_expert() {
    let bytes = gguf(
        &[
            (
                "blk.0.ffn_up_exps.weight",
                &[4.0, 8.0, 5.0, 5.0],
                &[4.0, 0.0],
            ),
            ("blk.0.attn_q.weight", &[6.0, 3.0], &[3.0]),
        ],
        &["a.txt", "b.txt"],
        7,
    );
    let m = Imatrix::parse(&bytes).unwrap();
    assert_eq!(m.format, ImatrixFormat::Gguf);
    assert_eq!(m.datasets, ["a.txt", "b.txt"]);
    assert_eq!((m.chunk_count, m.chunk_size), (7, Some(512)));
    // Sorted by name, as llama.cpp's map keeps them.
    assert_eq!(m.entries[0].name, "blk.0.attn_q.weight");
    assert_eq!(m.weights(&m.entries[0]), [2.0, 1.0]);
    // The second expert saw nothing: 1.
    let up = m.entry("blk.0.ffn_up_exps.weight").unwrap();
    assert_eq!(m.weights(up), [1.0, 2.0, 1.0, 1.0]);
}

#[test]
fn gguf_files_whose_entries_do_not_pair_are_refused_by_name() {
    let mut b = Builder::new();
    b.add_tensor("w.in_sum2", GgmlType::F32, &[2], vec![0u8; 8])
        .unwrap();
    let err = Imatrix::parse(&b.to_vec().unwrap()).unwrap_err();
    assert!(
        err.to_string()
            .contains("mismatched sums and counts for \"w\""),
        "{err}"
    );

    let mut b = Builder::new();
    b.add_tensor("w.in_sum2", GgmlType::F16, &[2], vec![0u8; 4])
        .unwrap();
    b.add_tensor("w.counts", GgmlType::F32, &[1], vec![0u8; 4])
        .unwrap();
    let err = Imatrix::parse(&b.to_vec().unwrap()).unwrap_err();
    assert!(err.to_string().contains("\"w.in_sum2\" is F16"), "{err}");

    let mut b = Builder::new();
    b.add_tensor("w.in_sum2", GgmlType::F32, &[3], vec![0u8; 12])
        .unwrap();
    b.add_tensor("w.counts", GgmlType::F32, &[1, 2], vec![0u8; 8])
        .unwrap();
    let err = Imatrix::parse(&b.to_vec().unwrap()).unwrap_err();
    assert!(
        err.to_string().contains("not a whole number of rows"),
        "{err}"
    );

    let err = Imatrix::parse(&Builder::new().to_vec().unwrap()).unwrap_err();
    assert!(err.to_string().contains("no tensors"), "{err}");
}

#[test]
fn written_gguf_is_laid_out_as_llama_imatrix_writes_it() {
    let bytes = gguf(
        &[
            ("blk.0.attn_q.weight", &[6.0, 3.0], &[3.0]),
            (
                "blk.0.ffn_up_exps.weight",
                &[4.0, 8.0, 5.0, 5.0],
                &[4.0, 0.0],
            ),
        ],
        &["a.txt"],
        7,
    );
    let m = Imatrix::parse(&bytes).unwrap();
    assert_eq!(m.to_bytes().unwrap(), bytes);
}

#[test]
fn validation_names_the_tensor() {
    let model = model(&[
        ("token_embd.weight", &[4, 10]),
        ("blk.0.attn_q.weight", &[2, 4]),
        ("blk.0.ffn_up_exps.weight", &[2, 4, 2]),
    ]);
    let model = GgufFile::open(&model).unwrap();
    let ok = Imatrix::parse(&gguf(
        &[
            ("blk.0.attn_q.weight", &[6.0, 3.0], &[3.0]),
            (
                "blk.0.ffn_up_exps.weight",
                &[4.0, 8.0, 5.0, 5.0],
                &[4.0, 0.0],
            ),
            // The embeddings' size is not checked, as llama-quantize.
            ("token_embd.weight", &[1.0], &[1.0]),
        ],
        &[],
        1,
    ))
    .unwrap();
    ok.validate(&model).unwrap();

    let other = Imatrix::parse(&dat(&[("blk.0.attn_k.weight", 1, &[1.0, 1.0])], None)).unwrap();
    let err = other.validate(&model).unwrap_err();
    assert!(err.to_string().contains("\"blk.0.attn_k.weight\""), "{err}");
    assert!(err.to_string().contains("no such tensor"), "{err}");

    let wrong =
        Imatrix::parse(&dat(&[("blk.0.attn_q.weight", 1, &[1.0, 1.0, 1.0])], None)).unwrap();
    let err = wrong.validate(&model).unwrap_err();
    assert!(err.to_string().contains("3 values"), "{err}");
    assert!(err.to_string().contains("needs 2"), "{err}");

    let nan = Imatrix::parse(&dat(&[("blk.0.attn_q.weight", 1, &[1.0, f32::NAN])], None)).unwrap();
    let err = nan.validate(&model).unwrap_err();
    assert!(err.to_string().contains("non-finite"), "{err}");
}

fn same_weights(a: &Imatrix, b: &Imatrix) -> bool {
    a.entries.len() == b.entries.len()
        && a.entries.iter().zip(&b.entries).all(|(x, y)| {
            x.name == y.name
                && a.weights(x)
                    .iter()
                    .zip(b.weights(y))
                    .all(|(p, q)| p.to_bits() == q.to_bits())
        })
}

#[test]
fn legacy_to_gguf_and_back_is_lossless() {
    let bytes = dat(
        &[
            ("a.weight", 3, &[0.1, 7.3, 1e-3]),
            ("b.weight", 12, &[123.456, 0.0]),
        ],
        Some((12, "data.txt")),
    );
    let m = Imatrix::parse(&bytes).unwrap();
    assert!(m.converts_losslessly(ImatrixFormat::Gguf, 512));
    let g = m.to_gguf(512);
    assert_eq!(g.entries[0].counts, [1536.0]);
    assert!(same_weights(&m, &g));
    let g = Imatrix::parse(&g.to_bytes().unwrap()).unwrap();
    assert_eq!(g.to_dat().to_bytes().unwrap(), bytes);
}

#[test]
fn gguf_to_legacy_and_back_is_lossless_for_whole_chunks() {
    let bytes = gguf(
        &[("a.weight", &[0.1, 7.3, 1e-3], &[1536.0])],
        &["data.txt"],
        3,
    );
    let m = Imatrix::parse(&bytes).unwrap();
    assert!(m.converts_losslessly(ImatrixFormat::Dat, 512));
    let d = m.to_dat();
    assert_eq!(d.entries[0].counts, [3.0]);
    assert!(same_weights(&m, &d));
    let d = Imatrix::parse(&d.to_bytes().unwrap()).unwrap();
    assert_eq!(d.to_gguf(512).to_bytes().unwrap(), bytes);
}

#[test]
fn experts_with_different_counts_convert_as_llama_imatrix_does() {
    let m = Imatrix::parse(&gguf(
        &[(
            "e.weight",
            &[3.0, 6.0, 1.0, 1.0, 9.0, 9.0],
            &[700.0, 0.0, 1024.0],
        )],
        &["x", "y"],
        2,
    ))
    .unwrap();
    assert!(!m.converts_losslessly(ImatrixFormat::Dat, 512));
    let d = m.to_dat();
    // ncall: the largest count in chunks, rounded up.
    assert_eq!(d.entries[0].counts, [2.0]);
    // The mean times ncall; an expert with no data stores 1 * ncall.
    let want = [
        3.0 / 700.0 * 2.0,
        6.0 / 700.0 * 2.0,
        2.0,
        2.0,
        9.0 / 1024.0 * 2.0,
        9.0 / 1024.0 * 2.0,
    ];
    for (got, want) in d.entries[0].sums.iter().zip(want) {
        assert_eq!(*got, want as f32);
    }
    // Only the last dataset fits the legacy format.
    assert_eq!(d.datasets, ["y"]);
}

#[test]
fn selection_and_record_follow_llama_quantize() {
    let m = Imatrix::parse(&gguf(
        &[
            ("blk.0.attn_q.weight", &[1.0], &[1.0]),
            ("blk.0.attn_v.weight", &[1.0], &[1.0]),
            ("blk.0.ffn_up.weight", &[1.0], &[1.0]),
        ],
        &["first.txt", "second.txt"],
        9,
    ))
    .unwrap();
    let inc = m.select(&["attn_q".into(), "ffn".into()], &[]).unwrap();
    let names: Vec<&str> = inc.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["blk.0.attn_q.weight", "blk.0.ffn_up.weight"]);
    let r = inc.record("imatrix.gguf").unwrap();
    assert_eq!(r.entries, 2);
    assert_eq!(r.chunks, 9);
    assert_eq!(r.dataset.as_deref(), Some("first.txt"));
    let none = m.select(&[], &["blk".into()]).unwrap();
    assert!(none.record("x").is_none());
}

#[test]
fn hand_built_matrices_without_counts_do_not_panic() {
    let m = Imatrix {
        format: ImatrixFormat::Gguf,
        entries: vec![ImatrixEntry {
            name: "w".into(),
            sums: vec![2.0, 3.0],
            counts: vec![],
        }],
        datasets: vec![],
        chunk_count: 0,
        chunk_size: None,
    };
    // No count: no token seen, as llama-quantize treats a zero count.
    assert_eq!(m.weights(&m.entries[0]), [1.0, 1.0]);
    let d = m.to_dat();
    assert_eq!(d.entries[0].counts, [0.0]);
    let _ = m.to_bytes();
}

/// llama-imatrix's GGUF holds each entry as two tensors; the reader finds
/// each name once and orders entries by name, whatever the tensor order,
/// in one pass over the tensors (a search of the names seen so far made
/// 20,000 entries take seconds and 120,000 minutes).
#[test]
fn gguf_entries_are_found_once_each_in_name_order() {
    const N: usize = 20_000;
    let mut b = Builder::new();
    b.set("general.type", "imatrix").unwrap();
    // Reverse order, counts before sums: neither order nor pairing helps.
    for i in (0..N).rev() {
        let name = format!("blk.{i}.ffn_down.weight");
        b.add_tensor(
            format!("{name}.counts"),
            GgmlType::F32,
            &[1],
            2.0f32.to_le_bytes().to_vec(),
        )
        .unwrap();
        b.add_tensor(
            format!("{name}.in_sum2"),
            GgmlType::F32,
            &[1],
            (i as f32).to_le_bytes().to_vec(),
        )
        .unwrap();
    }
    let m = Imatrix::parse(&b.to_vec().unwrap()).unwrap();
    assert_eq!(m.entries.len(), N);
    let mut names: Vec<String> = (0..N).map(|i| format!("blk.{i}.ffn_down.weight")).collect();
    names.sort();
    assert!(m.entries.iter().map(|e| &e.name).eq(names.iter()));
    let index = m.by_name();
    assert_eq!(index.len(), N);
    assert_eq!(index["blk.12345.ffn_down.weight"].sums, [12345.0]);
    assert_eq!(m.weights(index["blk.7.ffn_down.weight"]), [3.5]);
}

/// A legacy file may repeat a name; llama.cpp keeps the last, and so do
/// both lookups.
#[test]
fn a_repeated_legacy_name_resolves_to_its_last_entry() {
    let m = Imatrix::parse(&dat(
        &[("a", 1, &[1.0]), ("b", 1, &[2.0]), ("a", 1, &[3.0])],
        None,
    ))
    .unwrap();
    assert_eq!(m.entries.len(), 3);
    assert_eq!(m.entry("a").unwrap().sums, [3.0]);
    assert_eq!(m.by_name()["a"].sums, [3.0]);
    assert_eq!(m.by_name().len(), 2);
}

/// Weights near `f32::MAX` are finite but overflow the weighted
/// quantizers (NaN block scales): refused before anything is written,
/// naming the entry and the column, as are negative ones.
#[test]
fn weights_the_quantizers_cannot_compute_with_are_refused_by_entry() {
    let model = model(&[("blk.0.attn_q.weight", &[4, 2])]);
    let model = GgufFile::open(&model).unwrap();
    let refused = |values: &[f32]| {
        let m = Imatrix::parse(&dat(&[("blk.0.attn_q.weight", 1, values)], None)).unwrap();
        m.validate(&model).map_err(|e| e.to_string())
    };
    let err = refused(&[1.0, 3e38, 1.0, 1.0]).unwrap_err();
    assert!(err.contains("\"blk.0.attn_q.weight\""), "{err}");
    assert!(err.contains("3e38") && err.contains("column 1"), "{err}");
    assert!(err.contains("too large"), "{err}");
    let err = refused(&[1.0, 1.0, -2.0, 1.0]).unwrap_err();
    assert!(err.contains("-2e0") && err.contains("negative"), "{err}");
    let err = refused(&[f32::INFINITY, 1.0, 1.0, 1.0]).unwrap_err();
    assert!(err.contains("non-finite"), "{err}");
    // The bound itself passes, the next float above it does not.
    refused(&[Imatrix::MAX_WEIGHT, 0.0, 1.0, 1e-30]).unwrap();
    let above = f32::from_bits(Imatrix::MAX_WEIGHT.to_bits() + 1);
    assert!(refused(&[1.0, 1.0, 1.0, above]).is_err());
    // GGUF sums are divided by the count first: large sums over many
    // tokens are fine.
    let g = Imatrix::parse(&gguf(
        &[("blk.0.attn_q.weight", &[4e18, 1.0, 1.0, 1.0], &[1e4])],
        &[],
        1,
    ))
    .unwrap();
    g.validate(&model).unwrap();
}
