//! The llama-quantize runs the comparisons cover (preset x importance
//! matrix or not x the flags that change tensor types), our
//! `QuantizeOptions` for each, and the golden files that record
//! llama-quantize's answer (`tests/data/quantize/dry-run/MODEL.txt`).
//!
//! A golden file lists each distinct tensor name list and type list once:
//! ```text
//! names N0 token_embd.weight output.weight ...
//! types T0 N0 Q6_K F32 ...
//! case Q4_K_M imatrix --pure = T0 1234567
//! ```
//! `case` lines give the llama-quantize arguments (preset, `imatrix` when
//! an importance matrix is given, flags), the type list and the size in
//! bytes of the tensor data `--dry-run` computes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gguf::quantize::{parse_ggml_type, plan, QuantizeOptions, TensorTypeOverride, PRESETS};
use gguf::{GgmlType, Gguf};

/// One llama-quantize run.
#[derive(Clone, Debug)]
pub struct Case {
    pub preset: &'static str,
    pub imatrix: bool,
    /// llama-quantize's flags, as given on its command line.
    pub flags: Vec<&'static str>,
}

impl Case {
    /// The golden file's key: preset, `imatrix`, flags.
    pub fn key(&self) -> String {
        let mut parts = vec![self.preset];
        if self.imatrix {
            parts.push("imatrix");
        }
        parts.extend(&self.flags);
        parts.join(" ")
    }

    /// Our options for this run.
    pub fn options(&self) -> QuantizeOptions {
        let mut o = QuantizeOptions::new(self.preset).unwrap();
        o.has_imatrix = self.imatrix;
        let mut it = self.flags.iter();
        while let Some(flag) = it.next() {
            let mut arg = || *it.next().unwrap();
            match *flag {
                "--pure" => o.pure = true,
                "--leave-output-tensor" => o.leave_output_tensor = true,
                "--output-tensor-type" => {
                    o.output_tensor_type = Some(parse_ggml_type(arg()).unwrap())
                }
                "--token-embedding-type" => {
                    o.token_embedding_type = Some(parse_ggml_type(arg()).unwrap())
                }
                "--tensor-type" => o
                    .tensor_types
                    .push(TensorTypeOverride::parse(arg()).unwrap()),
                "--prune-layers" => {
                    o.prune_layers = arg().split(',').map(|n| n.parse().unwrap()).collect()
                }
                other => panic!("no case uses {other}"),
            }
        }
        o
    }
}

/// Every case: each preset with and without an importance matrix, plain,
/// `--pure` and `--leave-output-tensor`; then the type flags with a few
/// presets.
pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for p in PRESETS {
        for imatrix in [false, true] {
            for flags in [vec![], vec!["--pure"], vec!["--leave-output-tensor"]] {
                v.push(Case {
                    preset: p.name,
                    imatrix,
                    flags,
                });
            }
        }
    }
    let flag_sets: &[&[&str]] = &[
        &["--output-tensor-type", "q8_0"],
        &["--token-embedding-type", "q4_0"],
        &[
            "--output-tensor-type",
            "q4_1",
            "--token-embedding-type",
            "iq4_nl",
        ],
        &["--pure", "--output-tensor-type", "q8_0"],
        &["--leave-output-tensor", "--token-embedding-type", "q8_0"],
        &[
            "--tensor-type",
            "attn_v=q8_0",
            "--tensor-type",
            "ffn_down=q5_0",
        ],
        &["--tensor-type", "ATTN_V=q4_k"],
        &[
            "--tensor-type",
            "blk\\.[02]\\.ffn_(up|gate)=iq4_nl",
            "--tensor-type",
            "output=q4_1",
        ],
        &[
            "--tensor-type",
            "token_embd=q8_0",
            "--token-embedding-type",
            "q5_1",
        ],
        &["--prune-layers", "1"],
        &["--prune-layers", "0,2"],
    ];
    for preset in ["Q4_K_M", "Q3_K_S", "IQ2_XS", "IQ4_XS", "Q8_0"] {
        for imatrix in [false, true] {
            for flags in flag_sets {
                v.push(Case {
                    preset,
                    imatrix,
                    flags: flags.to_vec(),
                });
            }
        }
    }
    v
}

/// What a dry run gives: every tensor's output name and type, in order,
/// and the size of the tensor data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DryRun {
    pub tensors: Vec<(String, GgmlType)>,
    pub size: u64,
}

/// Bytes of a tensor of `shape` (innermost first) in type `ty`.
pub fn tensor_bytes(shape: &[u64], ty: GgmlType) -> u64 {
    let rows: u64 = shape.iter().skip(1).product();
    let row = shape[0] / ty.block_size().unwrap() * ty.type_size().unwrap();
    rows * row
}

/// Our plan for `case` on `model`, as a dry run (`Err` with our message
/// where we refuse).
pub fn our_dry_run(model: &impl Gguf, case: &Case) -> Result<DryRun, String> {
    let p = plan(model, &case.options()).map_err(|e| e.to_string())?;
    Ok(DryRun {
        size: p
            .tensors
            .iter()
            .map(|t| tensor_bytes(&t.shape, t.target))
            .sum(),
        tensors: p.tensors.into_iter().map(|t| (t.name, t.target)).collect(),
    })
}

/// Where the golden file of model `name` lives.
pub fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/quantize/dry-run"
    ))
    .join(format!("{name}.txt"))
}

fn type_name(t: GgmlType) -> String {
    t.name().unwrap_or("?").to_ascii_uppercase()
}

/// The golden text for `runs` (case key -> dry run, or `Err` where
/// llama-quantize refuses), in case order. A type list close to an earlier
/// one of the same names is written as that one's changes (`from T3
/// 4=Q6_K`), so that the file stays small.
pub fn format_golden(header: &str, runs: &[(String, Result<DryRun, String>)]) -> String {
    let mut out = String::new();
    for line in header.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    let mut names: Vec<Vec<&str>> = Vec::new();
    let mut types: Vec<(usize, Vec<GgmlType>)> = Vec::new();
    for (key, run) in runs {
        let Ok(run) = run else {
            out.push_str(&format!("case {key} = error\n"));
            continue;
        };
        let n: Vec<&str> = run.tensors.iter().map(|t| t.0.as_str()).collect();
        let ni = match names.iter().position(|x| *x == n) {
            Some(i) => i,
            None => {
                out.push_str(&format!("names N{} {}\n", names.len(), n.join(" ")));
                names.push(n);
                names.len() - 1
            }
        };
        let t: Vec<GgmlType> = run.tensors.iter().map(|t| t.1).collect();
        let ti = match types.iter().position(|x| *x == (ni, t.clone())) {
            Some(i) => i,
            None => {
                let changes = |base: &[GgmlType]| -> Vec<String> {
                    base.iter()
                        .zip(&t)
                        .enumerate()
                        .filter(|(_, (a, b))| a != b)
                        .map(|(i, (_, b))| format!("{i}={}", type_name(*b)))
                        .collect()
                };
                let closest = types
                    .iter()
                    .enumerate()
                    .filter(|(_, (n, _))| *n == ni)
                    .map(|(i, (_, base))| (changes(base), i))
                    .min_by_key(|(c, _)| c.len());
                let body = match closest {
                    Some((c, i)) if c.len() < t.len() / 2 => format!("from T{i} {}", c.join(" ")),
                    _ => t
                        .iter()
                        .map(|&t| type_name(t))
                        .collect::<Vec<_>>()
                        .join(" "),
                };
                out.push_str(&format!(
                    "types T{} N{ni} {}\n",
                    types.len(),
                    body.trim_end()
                ));
                types.push((ni, t));
                types.len() - 1
            }
        };
        out.push_str(&format!("case {key} = T{ti} {}\n", run.size));
    }
    out
}

/// Reads a golden file back: case key -> dry run (`Err` where
/// llama-quantize refused).
pub fn parse_golden(text: &str) -> BTreeMap<String, Result<DryRun, String>> {
    let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut types: BTreeMap<String, (String, Vec<GgmlType>)> = BTreeMap::new();
    let mut cases = BTreeMap::new();
    let ty = |w: &str| GgmlType::from_name(w).unwrap_or_else(|| panic!("type {w}"));
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut words = line.split(' ');
        match words.next() {
            Some("names") => {
                let id = words.next().unwrap().to_owned();
                names.insert(id, words.map(str::to_owned).collect());
            }
            Some("types") => {
                let id = words.next().unwrap().to_owned();
                let n = words.next().unwrap().to_owned();
                let words: Vec<&str> = words.collect();
                let t = if words.first() == Some(&"from") {
                    let mut t = types[words[1]].1.clone();
                    for w in &words[2..] {
                        let (i, name) = w.split_once('=').unwrap();
                        t[i.parse::<usize>().unwrap()] = ty(name);
                    }
                    t
                } else {
                    words.iter().map(|w| ty(w)).collect()
                };
                types.insert(id, (n, t));
            }
            Some("case") => {
                let rest = line.strip_prefix("case ").unwrap();
                let (key, value) = rest.rsplit_once(" = ").unwrap();
                if value == "error" {
                    cases.insert(key.to_owned(), Err("refused".to_owned()));
                    continue;
                }
                let (ti, size) = value.split_once(' ').unwrap();
                let (ni, t) = &types[ti];
                let n = &names[ni];
                assert_eq!(n.len(), t.len(), "{key}");
                cases.insert(
                    key.to_owned(),
                    Ok(DryRun {
                        tensors: n.iter().cloned().zip(t.iter().copied()).collect(),
                        size: size.parse().unwrap(),
                    }),
                );
            }
            _ => panic!("golden line {line:?}"),
        }
    }
    cases
}

/// The differences between two dry runs, one line each (empty when equal
/// or when both refused).
pub fn differences(ours: &Result<DryRun, String>, theirs: &Result<DryRun, String>) -> Vec<String> {
    let (ours, theirs) = match (ours, theirs) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(_), Err(_)) => return Vec::new(),
        (Ok(_), Err(e)) => return vec![format!("llama-quantize refuses ({e}), we do not")],
        (Err(e), Ok(_)) => return vec![format!("we refuse ({e}), llama-quantize does not")],
    };
    let mut d = Vec::new();
    let a: Vec<&str> = ours.tensors.iter().map(|t| t.0.as_str()).collect();
    let b: Vec<&str> = theirs.tensors.iter().map(|t| t.0.as_str()).collect();
    if a != b {
        d.push(format!("tensor order: ours {a:?}, llama-quantize {b:?}"));
        return d;
    }
    for ((name, x), (_, y)) in ours.tensors.iter().zip(&theirs.tensors) {
        if x != y {
            d.push(format!("{name}: ours {x}, llama-quantize {y}"));
        }
    }
    if ours.size != theirs.size {
        d.push(format!(
            "size: ours {}, llama-quantize {}",
            ours.size, theirs.size
        ));
    }
    d
}

/// The runs whose output files are compared byte for byte: every preset
/// with and without an importance matrix, and the type flags with a few.
pub fn byte_cases() -> Vec<Case> {
    let mut v = Vec::new();
    for p in PRESETS {
        for imatrix in [false, true] {
            v.push(Case {
                preset: p.name,
                imatrix,
                flags: vec![],
            });
        }
    }
    let extra: &[(&str, &[&str])] = &[
        ("Q4_K", &["--pure"]),
        ("Q6_K", &["--leave-output-tensor"]),
        (
            "Q4_K_M",
            &[
                "--output-tensor-type",
                "q8_0",
                "--token-embedding-type",
                "q4_0",
            ],
        ),
        (
            "Q3_K_S",
            &[
                "--tensor-type",
                "attn_v=q8_0",
                "--tensor-type",
                "ffn_down=iq4_nl",
            ],
        ),
        ("Q4_K_M", &["--prune-layers", "1"]),
        ("IQ4_XS", &["--prune-layers", "0,2"]),
    ];
    for (preset, flags) in extra {
        for imatrix in [false, true] {
            v.push(Case {
                preset,
                imatrix,
                flags: flags.to_vec(),
            });
        }
    }
    v
}

/// Where the sha256 of llama-quantize's outputs are recorded.
pub fn bytes_golden_path() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/quantize/outputs.sha256"
    ))
}

/// Reads the recorded outputs: `MODEL CASE-KEY = SHA256` (or `= error`
/// where llama-quantize refused) -> that hash.
pub fn parse_bytes_golden(text: &str) -> BTreeMap<(String, String), String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (left, hash) = l.rsplit_once(" = ").unwrap();
            let (model, key) = left.split_once(' ').unwrap();
            ((model.to_owned(), key.to_owned()), hash.to_owned())
        })
        .collect()
}

/// Hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How two quantized files differ, one line per difference: metadata
/// (in order, with types), tensor order, types and shapes, and for each
/// tensor whose data differ the first differing block.
pub fn file_differences(ours: &[u8], theirs: &[u8]) -> Vec<String> {
    use gguf::format::OwnedValue;
    use gguf::GgufFile;
    let mut d = Vec::new();
    let (o, l) = match (GgufFile::open(ours), GgufFile::open(theirs)) {
        (Ok(o), Ok(l)) => (o, l),
        (a, b) => {
            return vec![format!(
                "cannot open: ours {:?}, llama-quantize {:?}",
                a.err(),
                b.err()
            )]
        }
    };
    let entries = |f: &GgufFile<'_>| -> Vec<String> {
        f.metadata()
            .map(|(k, v)| format!("{k} = {:?}", OwnedValue::from_value(&v)))
            .collect()
    };
    let (mo, ml) = (entries(&o), entries(&l));
    if mo != ml {
        let at = mo
            .iter()
            .zip(&ml)
            .position(|(a, b)| a != b)
            .unwrap_or(mo.len().min(ml.len()));
        let show = |v: &[String]| {
            v.get(at)
                .map_or("(end)".to_owned(), |s| s.chars().take(120).collect())
        };
        d.push(format!(
            "metadata differs at entry {at}: ours {}, llama-quantize {}",
            show(&mo),
            show(&ml)
        ));
    }
    let names =
        |f: &GgufFile<'_>| -> Vec<String> { f.tensors().map(|t| t.name().to_owned()).collect() };
    if names(&o) != names(&l) {
        d.push(format!(
            "tensor order: ours {:?}, llama-quantize {:?}",
            names(&o),
            names(&l)
        ));
        return d;
    }
    for (a, b) in o.tensors().zip(l.tensors()) {
        if (a.ggml_type(), a.shape()) != (b.ggml_type(), b.shape()) {
            d.push(format!(
                "{}: ours {} {:?}, llama-quantize {} {:?}",
                a.name(),
                a.ggml_type(),
                a.shape(),
                b.ggml_type(),
                b.shape()
            ));
            continue;
        }
        let (x, y) = (a.data().unwrap(), b.data().unwrap());
        if let Some(i) = x.iter().zip(y).position(|(p, q)| p != q) {
            let ty = a.ggml_type();
            let block_bytes = ty.type_size().unwrap_or(1) as usize;
            let block = i / block_bytes;
            let row_bytes = (a.shape()[0] / ty.block_size().unwrap_or(1)) as usize * block_bytes;
            let differing = x
                .chunks(block_bytes)
                .zip(y.chunks(block_bytes))
                .filter(|(p, q)| p != q)
                .count();
            d.push(format!(
                "{}: {ty} data differ from byte {i} (row {}, block {block}; {differing} of {} blocks differ): ours {:02x?}, llama-quantize {:02x?}",
                a.name(),
                i / row_bytes.max(1),
                x.len() / block_bytes,
                &x[block * block_bytes..x.len().min((block + 1) * block_bytes)],
                &y[block * block_bytes..y.len().min((block + 1) * block_bytes)],
            ));
        }
    }
    if d.is_empty() && ours != theirs {
        d.push("same metadata and tensors, yet the files differ (layout or padding)".into());
    }
    d
}
