//! Larger than memory (issue 37): `gguf import` (f16 and a preset),
//! `quantize`, `split` and `merge` of a generated 420 MiB mixture-of-experts
//! model, each run in a memory cgroup limited to 160 MiB plus its largest
//! tensor (a 32 MiB stack of 16 experts), succeed and write the bytes an
//! unconstrained run writes. Without swap the anonymous memory cannot pass
//! the limit, and page cache beyond it is reclaimed (written first, when
//! dirty), so a process that held the model, or kept what it mapped or
//! wrote, would be killed. benches/larger_than_memory.sh is the same at
//! 40 GB under 2 GiB.
//!
//! Needs a memory cgroup this process can create (root, cgroup v1's
//! memory controller or a cgroup v2 hierarchy with it); otherwise it prints
//! `skipped: ...` and returns.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;
const HIDDEN: u64 = 1024;
const FFN: u64 = 1024;
const EXPERTS: u64 = 16;
const LAYERS: u64 = 4;
const VOCAB: u64 = 4096;
/// The largest tensor: a stacked F16 expert tensor.
const LARGEST: u64 = HIDDEN * FFN * EXPERTS * 2;
const LIMIT: u64 = 160 * MIB + LARGEST;

/// A memory cgroup of `LIMIT` to run a child in, removed on drop.
struct Cgroup {
    dir: PathBuf,
    v2: bool,
}

impl Cgroup {
    fn new(label: &str) -> Result<Cgroup, String> {
        let name = format!("gguf-test-{}-{label}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v2 = Path::new("/sys/fs/cgroup");
        let (dir, v2) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(&name), false)
        } else if std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        {
            (v2.join(&name), true)
        } else {
            return Err(
                "no memory cgroup controller (cgroup v1 memory or v2 with memory enabled)".into(),
            );
        };
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot create the cgroup {}: {e}", dir.display()))?;
        let cg = Cgroup { dir, v2 };
        let (limit, swap) = if v2 {
            ("memory.max", "memory.swap.max")
        } else {
            ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")
        };
        std::fs::write(cg.dir.join(limit), LIMIT.to_string())
            .map_err(|e| format!("cannot set {limit}: {e}"))?;
        // No swap either, where it is accounted (absent without swap).
        let _ = std::fs::write(
            cg.dir.join(swap),
            if v2 { "0".into() } else { LIMIT.to_string() },
        );
        Ok(cg)
    }

    /// Runs the gguf binary with `args` in the cgroup; panics unless it
    /// succeeds without an OOM kill. Returns the cgroup's peak.
    fn run(&self, args: &[&std::ffi::OsStr]) -> u64 {
        let out = Command::new("sh")
            .arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.dir)
            .arg(env!("CARGO_BIN_EXE_gguf"))
            .args(args)
            .output()
            .expect("run sh");
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        let events = read(if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        });
        let oom = events
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .unwrap_or("0");
        assert!(
            out.status.success() && oom.trim() == "0",
            "gguf {args:?} under a {} MiB memory limit: {} (oom_kill {oom}), stderr: {}",
            LIMIT / MIB,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        read(if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        })
        .trim()
        .parse()
        .unwrap_or(0)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A 1 MiB block of bf16 values (small, varied, all finite), rotated by
/// `k` so that tensors differ.
fn block(k: u64) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ k;
    let mut v = Vec::with_capacity(MIB as usize);
    for _ in 0..MIB / 2 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.1;
        v.extend_from_slice(&((f.to_bits() >> 16) as u16).to_le_bytes());
    }
    v
}

/// Writes a Qwen3-MoE checkpoint (one safetensors file per layer, one
/// tensor per expert) with the qwen2-bias fixture's tokenizer.
fn checkpoint(dir: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/import/qwen2-bias");
    for f in [
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.json",
        "merges.txt",
    ] {
        std::fs::copy(fixture.join(f), dir.join(f)).unwrap();
    }
    let (heads, kv_heads, head_dim) = (8u64, 2u64, 128u64);
    let mut shards: Vec<Vec<(String, Vec<u64>)>> = vec![vec![(
        "model.embed_tokens.weight".into(),
        vec![VOCAB, HIDDEN],
    )]];
    for i in 0..LAYERS {
        let p = format!("model.layers.{i}");
        let mut v = vec![
            (
                format!("{p}.self_attn.q_proj.weight"),
                vec![heads * head_dim, HIDDEN],
            ),
            (
                format!("{p}.self_attn.k_proj.weight"),
                vec![kv_heads * head_dim, HIDDEN],
            ),
            (
                format!("{p}.self_attn.v_proj.weight"),
                vec![kv_heads * head_dim, HIDDEN],
            ),
            (
                format!("{p}.self_attn.o_proj.weight"),
                vec![HIDDEN, heads * head_dim],
            ),
            (format!("{p}.self_attn.q_norm.weight"), vec![head_dim]),
            (format!("{p}.self_attn.k_norm.weight"), vec![head_dim]),
            (format!("{p}.mlp.gate.weight"), vec![EXPERTS, HIDDEN]),
            (format!("{p}.input_layernorm.weight"), vec![HIDDEN]),
            (format!("{p}.post_attention_layernorm.weight"), vec![HIDDEN]),
        ];
        for e in 0..EXPERTS {
            for m in ["gate_proj", "up_proj"] {
                v.push((format!("{p}.mlp.experts.{e}.{m}.weight"), vec![FFN, HIDDEN]));
            }
            v.push((
                format!("{p}.mlp.experts.{e}.down_proj.weight"),
                vec![HIDDEN, FFN],
            ));
        }
        shards.push(v);
    }
    shards.push(vec![
        ("model.norm.weight".into(), vec![HIDDEN]),
        ("lm_head.weight".into(), vec![VOCAB, HIDDEN]),
    ]);
    let n = shards.len();
    let mut weight_map = Vec::new();
    for (s, tensors) in shards.iter().enumerate() {
        let fname = format!("model-{:05}-of-{n:05}.safetensors", s + 1);
        let mut header = String::from(r#"{"__metadata__":{"format":"pt"}"#);
        let mut at = 0u64;
        for (name, shape) in tensors {
            let bytes = shape.iter().product::<u64>() * 2;
            let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
            header += &format!(
                r#","{name}":{{"dtype":"BF16","shape":[{}],"data_offsets":[{at},{}]}}"#,
                dims.join(","),
                at + bytes
            );
            at += bytes;
            weight_map.push(format!(r#""{name}":"{fname}""#));
        }
        header += "}";
        while header.len() % 8 != 0 {
            header.push(' ');
        }
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(&fname)).unwrap());
        f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
        f.write_all(header.as_bytes()).unwrap();
        for (k, (name, shape)) in tensors.iter().enumerate() {
            let bytes = shape.iter().product::<u64>() * 2;
            if name.ends_with("norm.weight") {
                // Norms near one, as trained ones are.
                let one = (1.0f32.to_bits() >> 16) as u16;
                for _ in 0..bytes / 2 {
                    f.write_all(&one.to_le_bytes()).unwrap();
                }
                continue;
            }
            let b = block(s as u64 * 1000 + k as u64);
            let mut left = bytes;
            while left > 0 {
                let n = left.min(MIB);
                f.write_all(&b[..n as usize]).unwrap();
                left -= n;
            }
        }
        f.into_inner().unwrap().sync_all().unwrap();
    }
    std::fs::write(
        dir.join("model.safetensors.index.json"),
        format!(
            r#"{{"metadata":{{}},"weight_map":{{{}}}}}"#,
            weight_map.join(",")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("config.json"),
        format!(
            r#"{{"architectures":["Qwen3MoeForCausalLM"],"attention_bias":false,"head_dim":{head_dim},
"hidden_act":"silu","hidden_size":{HIDDEN},"intermediate_size":{},"max_position_embeddings":4096,
"model_type":"qwen3_moe","moe_intermediate_size":{FFN},"norm_topk_prob":true,
"num_attention_heads":{heads},"num_experts":{EXPERTS},"num_experts_per_tok":4,
"num_hidden_layers":{LAYERS},"num_key_value_heads":{kv_heads},"rms_norm_eps":1e-06,
"rope_theta":1000000.0,"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":{VOCAB}}}"#,
            4 * HIDDEN
        ),
    )
    .unwrap();
}

/// Drops `files`' clean pages from the page cache, so the limited child
/// reads them into its own cgroup (`dd`'s `nocache` is `posix_fadvise`).
fn uncache(files: &[PathBuf]) {
    for f in files {
        let _ = Command::new("dd")
            .arg(format!("if={}", f.display()))
            .args(["iflag=nocache", "count=0", "status=none"])
            .status();
    }
}

fn gguf_ok(args: &[&std::ffi::OsStr]) {
    let out = Command::new(env!("CARGO_BIN_EXE_gguf"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gguf {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn files_in(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn import_quantize_split_and_merge_run_in_a_memory_limit_far_below_the_model() {
    if let Err(why) = Cgroup::new("probe") {
        eprintln!("skipped: {why}");
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (ckpt, d) = (tmp.path().join("ckpt"), tmp.path());
    std::fs::create_dir(&ckpt).unwrap();
    checkpoint(&ckpt);
    let o = |s: &str| d.join(s).into_os_string();
    let a = |s: &'static str| std::ffi::OsString::from(s);
    let run = |label: &str, args: &[std::ffi::OsString], inputs: &[PathBuf]| {
        uncache(inputs);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_os_str()).collect();
        let peak = Cgroup::new(label).unwrap().run(&args);
        eprintln!(
            "{label}: cgroup peak {} MiB (limit {} MiB, page cache included)",
            peak / MIB,
            LIMIT / MIB
        );
    };
    let ckpt_files = files_in(&ckpt, "model-");
    let import = |out: &str, ty: &'static str| {
        vec![
            a("import"),
            ckpt.clone().into_os_string(),
            o(out),
            a("--type"),
            a(ty),
            a("--pre-tokenizer"),
            a("qwen2"),
        ]
    };

    // The references, unconstrained.
    gguf_ok(
        &import("f16.gguf", "f16")
            .iter()
            .map(|s| s.as_os_str())
            .collect::<Vec<_>>(),
    );
    gguf_ok(
        &import("q4.gguf", "q4_0")
            .iter()
            .map(|s| s.as_os_str())
            .collect::<Vec<_>>(),
    );
    let f16 = d.join("f16.gguf");
    let size = std::fs::metadata(&f16).unwrap().len();
    assert!(
        size > 2 * LIMIT,
        "the model ({} MiB) is not far above the limit",
        size / MIB
    );
    let same = |x: &str, y: &Path| {
        let (x, y) = (std::fs::read(d.join(x)).unwrap(), std::fs::read(y).unwrap());
        x == y
    };

    run(
        "import --type f16",
        &import("f16-limited.gguf", "f16"),
        &ckpt_files,
    );
    assert!(same("f16-limited.gguf", &f16), "import f16: bytes differ");
    std::fs::remove_file(d.join("f16-limited.gguf")).unwrap();
    run(
        "import --type q4_0",
        &import("q4-limited.gguf", "q4_0"),
        &ckpt_files,
    );
    assert!(
        same("q4-limited.gguf", &d.join("q4.gguf")),
        "import q4_0: bytes differ"
    );
    std::fs::remove_file(d.join("q4-limited.gguf")).unwrap();
    // A preset import is the F16 import quantized: the same bytes.
    let quantize = [a("quantize"), o("f16.gguf"), o("quantized.gguf"), a("Q4_0")];
    run("quantize Q4_0", &quantize, std::slice::from_ref(&f16));
    assert!(
        same("quantized.gguf", &d.join("q4.gguf")),
        "quantize: bytes differ"
    );
    let split = [
        a("split"),
        a("--max-size"),
        a("100M"),
        o("f16.gguf"),
        o("shard"),
    ];
    run("split", &split, std::slice::from_ref(&f16));
    let shards = files_in(d, "shard-");
    assert!(shards.len() > 3, "{shards:?}");
    let merge = [
        a("merge"),
        shards[0].clone().into_os_string(),
        o("merged.gguf"),
    ];
    run("merge", &merge, &shards);
    assert!(
        same("merged.gguf", &f16),
        "split then merge: bytes differ from the model"
    );
}
