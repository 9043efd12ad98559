//! `gguf quantize` and the library run under it
//! (`gguf::quantize::quantize_model`): the output's tensor types are the
//! plan's, its bytes the codec's, with importance weights per expert; every
//! refusal comes before any file exists; failed runs leave nothing;
//! `--keep-split` writes the input's shards; `--dry-run` writes nothing.

use std::path::{Path, PathBuf};
use std::process::Output;

use gguf::llama::Error;
use gguf::quantize::{
    self, plan, Imatrix, ImatrixEntry, ImatrixFormat, QuantizeJob, QuantizeOptions,
};
use gguf::write::{Builder, SplitOptions};
use gguf::{codec, Endian, GgmlType as T, Gguf, Model};

use super::tensor_api::{encode, randoms};
use super::util::gguf;

/// A llama- or Qwen2-shaped model of two blocks with rows of `width`
/// (F16 weights, F32 norms; Qwen2 adds attention biases), tied output
/// unless `untied`.
fn model(arch: &str, width: u64, untied: bool) -> Builder<'static> {
    let (ff, vocab, kv) = (2 * width, 64, width / 2);
    let mut b = Builder::new();
    b.set("general.architecture", arch).unwrap();
    b.set("general.name", "test model").unwrap();
    b.set(format!("{arch}.block_count"), 2u32).unwrap();
    b.set(format!("{arch}.embedding_length"), width as u32)
        .unwrap();
    b.set(format!("{arch}.attention.head_count"), 4u32).unwrap();
    b.set(format!("{arch}.attention.head_count_kv"), 2u32)
        .unwrap();
    b.set("general.file_type", 1u32).unwrap();
    let mut tensors: Vec<(String, T, Vec<u64>)> = vec![
        ("token_embd.weight".into(), T::F16, vec![width, vocab]),
        ("output_norm.weight".into(), T::F32, vec![width]),
    ];
    if untied {
        tensors.push(("output.weight".into(), T::F16, vec![width, vocab]));
    }
    for i in 0..2 {
        let blk = |n: &str| format!("blk.{i}.{n}");
        tensors.extend([
            (blk("attn_norm.weight"), T::F32, vec![width]),
            (blk("attn_q.weight"), T::F16, vec![width, width]),
            (blk("attn_k.weight"), T::F16, vec![width, kv]),
            (blk("attn_v.weight"), T::F16, vec![width, kv]),
            (blk("attn_output.weight"), T::F16, vec![width, width]),
            (blk("ffn_norm.weight"), T::F32, vec![width]),
            (blk("ffn_gate.weight"), T::F16, vec![width, ff]),
            (blk("ffn_up.weight"), T::F16, vec![width, ff]),
            (blk("ffn_down.weight"), T::F16, vec![ff, width]),
        ]);
        if arch == "qwen2" {
            tensors.push((blk("attn_q.bias"), T::F32, vec![width]));
            tensors.push((blk("attn_k.bias"), T::F32, vec![kv]));
        }
    }
    for (seed, (name, ty, shape)) in tensors.into_iter().enumerate() {
        let n = shape.iter().product::<u64>() as usize;
        let data = encode(ty, &randoms(seed as u64 + 1, n), &shape);
        b.add_tensor(name, ty, &shape, data).unwrap();
    }
    b
}

fn write_model(dir: &Path, name: &str, b: &mut Builder<'_>) -> PathBuf {
    let path = dir.join(name);
    b.write_to_path(&path).unwrap();
    path
}

fn job(preset: &str) -> QuantizeJob<'static> {
    QuantizeJob::new(QuantizeOptions::new(preset).unwrap())
}

/// Every file name in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// An importance matrix for `model`: an entry for every tensor of a block
/// whose name ends in `weight` and has two or three dimensions, positive
/// values (llama-imatrix records no token embeddings).
fn imatrix_for(model: &impl Gguf) -> Imatrix {
    let entries = model
        .tensors()
        .filter(|t| {
            t.name().starts_with("blk.") && t.name().ends_with("weight") && t.shape().len() >= 2
        })
        .enumerate()
        .map(|(i, t)| {
            let per = t.shape()[0] as usize;
            let experts = t.shape().get(2).copied().unwrap_or(1) as usize;
            let sums = randoms(100 + i as u64, per * experts)
                .into_iter()
                .map(|v| v * v * 8.0 + 0.01)
                .collect();
            ImatrixEntry {
                name: t.name().to_owned(),
                sums,
                counts: vec![8.0; experts],
            }
        })
        .collect();
    Imatrix {
        format: ImatrixFormat::Gguf,
        entries,
        datasets: vec!["fixed.txt".into()],
        chunk_count: 1,
        chunk_size: Some(512),
    }
}

/// The bytes `codec::quantize_rows_into` gives tensor `name` of `input`
/// converted to `ty` with `weights` (one row per expert).
fn expected_bytes(input: &impl Gguf, name: &str, ty: T, weights: Option<&[f32]>) -> Vec<u8> {
    let t = input.tensor(name).unwrap();
    let x = codec::dequantize_to_vec(t.ggml_type(), Endian::Little, t.data().unwrap()).unwrap();
    let row = t.shape()[0] as usize;
    let rows_per_expert = t.shape()[1] as usize;
    let q = codec::quantize(ty, &x[..row], &[row as u64]).unwrap();
    let out_row = q.len();
    let mut out = vec![0u8; x.len() / row * out_row];
    for (e, (src, dst)) in x
        .chunks(row * rows_per_expert)
        .zip(out.chunks_mut(out_row * rows_per_expert))
        .enumerate()
    {
        let w = weights.map(|w| &w[e * row..(e + 1) * row]);
        codec::quantize_rows_into(ty, src, row, w, dst).unwrap();
    }
    out
}

#[test]
fn output_types_and_metadata_are_the_plan_s_for_every_shape() {
    let dir = tempfile::tempdir().unwrap();
    for (arch, width, untied) in [
        ("llama", 256, false),
        ("qwen2", 288, true),
        ("llama", 320, true),
    ] {
        let input = write_model(dir.path(), "in.gguf", &mut model(arch, width, untied));
        let model = Model::open(&input).unwrap();
        for preset in [
            "Q4_K_M", "Q8_0", "Q5_K_S", "Q3_K_L", "IQ4_XS", "F16", "COPY",
        ] {
            let out = dir.path().join(format!("{arch}-{width}-{preset}.gguf"));
            let job = job(preset);
            let report = quantize::quantize_model(&model, &out, &job, |_, _| {}).unwrap();
            let plan = plan(&model, &job.options).unwrap();
            let q = Model::open(&out).unwrap();
            let got: Vec<(&str, T)> = q.tensors().map(|t| (t.name(), t.ggml_type())).collect();
            let want: Vec<(&str, T)> = plan
                .tensors
                .iter()
                .map(|t| (t.name.as_str(), t.target))
                .collect();
            assert_eq!(got, want, "{arch} {width} {preset}");
            let keys: Vec<&str> = q.metadata().map(|(k, _)| k).collect();
            let meta = quantize::keys::output_metadata(&model, &plan, &[], None);
            let want_keys: Vec<&str> = meta.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, want_keys, "{preset}");
            assert_eq!(q.get::<u32>("general.file_type").unwrap(), plan.file_type);
            assert_eq!(
                report.output_bytes(),
                q.tensors().map(|t| t.byte_size().unwrap()).sum::<u64>()
            );
            assert_eq!(report.file_bytes, std::fs::metadata(&out).unwrap().len());
        }
        // Rows of 288 and 320 are not whole K blocks: fallbacks happened.
        let p = plan(&model, &QuantizeOptions::new("Q4_K_M").unwrap()).unwrap();
        assert_eq!(p.fallback_count() > 0, width % 256 != 0, "{width}");
    }
}

#[test]
fn quantized_bytes_equal_the_codec_s_and_copies_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut model("llama", 256, true));
    let model = Model::open(&input).unwrap();
    let out = dir.path().join("q.gguf");
    quantize::quantize_model(&model, &out, &job("Q4_K_M"), |_, _| {}).unwrap();
    let q = Model::open(&out).unwrap();
    let t = q.tensor("blk.0.attn_q.weight").unwrap();
    assert_eq!(t.ggml_type(), T::Q4_K);
    assert_eq!(
        t.data().unwrap(),
        expected_bytes(&model, "blk.0.attn_q.weight", T::Q4_K, None)
    );
    // A norm keeps its bytes.
    assert_eq!(
        q.tensor("blk.1.ffn_norm.weight").unwrap().data().unwrap(),
        model
            .tensor("blk.1.ffn_norm.weight")
            .unwrap()
            .data()
            .unwrap()
    );
}

#[test]
fn the_imatrix_row_of_each_expert_weights_its_rows_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = model("llama", 256, true);
    b.set("llama.expert_count", 3u32).unwrap();
    b.set("llama.expert_used_count", 1u32).unwrap();
    let shape = [256u64, 4, 3];
    let x = randoms(77, 256 * 4 * 3);
    b.add_tensor(
        "blk.0.ffn_up_exps.weight",
        T::F16,
        &shape,
        encode(T::F16, &x, &shape),
    )
    .unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut b);
    let model = Model::open(&input).unwrap();
    let m = imatrix_for(&model);
    let mut outs = Vec::new();
    for threads in [1, 3] {
        let out = dir.path().join(format!("q{threads}.gguf"));
        let mut job = job("IQ4_XS");
        job.imatrix = Some(&m);
        job.imatrix_file = "m.gguf".into();
        job.threads = threads;
        let report = quantize::quantize_model(&model, &out, &job, |_, _| {}).unwrap();
        assert!(report.tensors.iter().any(|t| t.imatrix));
        outs.push(std::fs::read(&out).unwrap());
    }
    assert_eq!(outs[0], outs[1], "the thread count changed the output");
    let q = Model::open(dir.path().join("q1.gguf")).unwrap();
    let name = "blk.0.ffn_up_exps.weight";
    let t = q.tensor(name).unwrap();
    let weights = m.weights(m.entry(name).unwrap());
    assert_eq!(
        t.data().unwrap(),
        expected_bytes(&model, name, t.ggml_type(), Some(&weights))
    );
    // Not the same as without weights: the matrix was used.
    assert_ne!(
        t.data().unwrap(),
        expected_bytes(&model, name, t.ggml_type(), None)
    );
    assert_eq!(q.get_str("quantize.imatrix.file").unwrap(), "m.gguf");
    assert_eq!(
        q.get::<u32>("quantize.imatrix.entries_count").unwrap(),
        m.entries.len() as u32
    );
}

/// Runs `job` on the model at `input` into `dir/out.gguf`, expecting an
/// error, and checks nothing was created in `dir`.
fn refused(dir: &Path, input: &Path, job: &QuantizeJob<'_>) -> Error {
    let before = names(dir);
    let model = Model::open(input).unwrap();
    let out = dir.join("out.gguf");
    let err = quantize::quantize_model(&model, &out, job, |_, _| {}).unwrap_err();
    assert_eq!(names(dir), before, "a file appeared: {err}");
    err
}

#[test]
fn every_refusal_comes_before_any_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut model("llama", 256, true));

    // A type that needs an importance matrix, without one.
    let err = refused(dir.path(), &input, &job("IQ2_XXS"));
    let text = err.to_string();
    assert!(text.contains("requires an importance matrix"), "{text}");
    assert!(text.contains("IQ2_XXS"), "{text}");

    // An importance matrix for another model.
    let model = Model::open(&input).unwrap();
    let mut other = imatrix_for(&model);
    other.entries[1].name = "blk.7.attn_q.weight".into();
    let mut j = job("IQ2_XXS");
    j.imatrix = Some(&other);
    let text = refused(dir.path(), &input, &j).to_string();
    assert!(text.contains("blk.7.attn_q.weight"), "{text}");

    // An importance matrix whose sizes do not fit.
    let mut short = imatrix_for(&model);
    let at = short
        .entries
        .iter()
        .position(|e| e.name == "blk.1.ffn_down.weight")
        .unwrap();
    short.entries[at].sums.truncate(100);
    let mut j = job("Q4_K_M");
    j.imatrix = Some(&short);
    let text = refused(dir.path(), &input, &j).to_string();
    assert!(text.contains("blk.1.ffn_down.weight"), "{text}");

    // An entry missing for a tensor that needs one.
    let mut partial = imatrix_for(&model);
    partial.entries.retain(|e| e.name != "blk.0.ffn_up.weight");
    let mut j = job("IQ2_XXS");
    j.options.pure = true;
    j.options.output_tensor_type = Some(T::Q8_0);
    j.options.token_embedding_type = Some(T::Q8_0);
    j.imatrix = Some(&partial);
    let text = refused(dir.path(), &input, &j).to_string();
    assert!(text.contains("blk.0.ffn_up.weight"), "{text}");

    // An input already quantized, without --allow-requantize.
    let q8 = dir.path().join("q8.gguf");
    quantize::quantize_model(&model, &q8, &job("Q8_0"), |_, _| {}).unwrap();
    let text = refused(dir.path(), &q8, &job("Q4_K_M")).to_string();
    assert!(text.contains("already quantized (Q8_0)"), "{text}");
    assert!(text.contains("--allow-requantize"), "{text}");
    // ...which it then does.
    let mut j = job("Q4_K_M");
    j.allow_requantize = true;
    let out = dir.path().join("requantized.gguf");
    quantize::quantize_model(&Model::open(&q8).unwrap(), &out, &j, |_, _| {}).unwrap();
    assert_eq!(
        Model::open(&out)
            .unwrap()
            .tensor("blk.0.attn_q.weight")
            .unwrap()
            .ggml_type(),
        T::Q4_K
    );
}

#[test]
fn the_cli_refuses_unknown_presets_and_patterns_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut model("llama", 256, true));
    let out = dir.path().join("out.gguf");
    let run = |extra: &[&str], ty: &str| {
        let mut args = vec!["quantize".to_owned()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend([
            input.display().to_string(),
            out.display().to_string(),
            ty.to_owned(),
        ]);
        gguf(&args)
    };
    let failed = |o: Output| {
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = failed(run(&[], "Q4_K_Z"));
    assert!(
        err.contains("invalid quantization type \"Q4_K_Z\""),
        "{err}"
    );
    assert!(err.contains("Q4_K_M"), "the list of types: {err}");
    let err = failed(run(&["--tensor-type", "(=q8_0"], "Q4_K_M"));
    assert!(err.contains("not a regular expression"), "{err}");
    let err = failed(run(&["--tensor-type", "attn_q=q9_0"], "Q4_K_M"));
    assert!(err.contains("q9_0"), "{err}");
    let err = failed(run(&["--override-kv", "a=u8:1"], "Q4_K_M"));
    assert!(err.contains("int, float, bool or str"), "{err}");
    let err = failed(run(&[], "IQ1_S"));
    assert!(err.contains("requires an importance matrix"), "{err}");
    assert_eq!(names(dir.path()), ["in.gguf"]);
}

#[test]
fn keep_split_writes_the_input_s_shards_and_a_failed_rename_leaves_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = model("llama", 256, false);
    let shards = b
        .write_split(
            dir.path().join("in.gguf"),
            &SplitOptions::default()
                .max_tensors(12)
                .metadata_only_first(true),
        )
        .unwrap();
    assert_eq!(shards.len(), 3);
    let model = Model::open(&shards[0].path).unwrap();
    let mut j = job("Q4_K_M");
    j.options.keep_split = true;
    let report =
        quantize::quantize_model(&model, dir.path().join("q.gguf"), &j, |_, _| {}).unwrap();
    let want: Vec<PathBuf> = (1..=3)
        .map(|k| dir.path().join(format!("q-{k:05}-of-00003.gguf")))
        .collect();
    assert_eq!(report.files, want);
    // Each output shard holds the tensors of the input shard, in file order.
    for (k, (shard, out)) in shards.iter().zip(&want).enumerate() {
        let inp = gguf::GgufFile::open(&shard.path).unwrap();
        let q = gguf::GgufFile::open(out).unwrap();
        let a: Vec<&str> = inp.tensors().map(|t| t.name()).collect();
        let b: Vec<&str> = q.tensors().map(|t| t.name()).collect();
        assert_eq!(a, b, "shard {k}");
        assert_eq!(q.get::<u16>("split.no").unwrap(), k as u16);
        let keys: Vec<&str> = q.metadata().map(|(k, _)| k).collect();
        assert_eq!(
            &keys[keys.len() - 3..],
            ["split.no", "split.count", "split.tensors.count"]
        );
        if k > 0 {
            assert_eq!(keys.len(), 3, "only the split keys after the first shard");
        } else {
            assert!(b.is_empty(), "the metadata-only first shard stays so");
            assert!(keys.contains(&"general.file_type"));
        }
    }
    // The shards open as one model, typed as planned.
    let q = Model::open(&want[1]).unwrap();
    let plan = plan(&model, &j.options).unwrap();
    for t in &plan.tensors {
        assert_eq!(
            q.tensor(&t.name).unwrap().ggml_type(),
            t.target,
            "{}",
            t.name
        );
    }

    // A directory where the last shard goes: the rename fails, and none of
    // the shards stays.
    std::fs::create_dir(dir.path().join("r-00003-of-00003.gguf")).unwrap();
    let before = names(dir.path());
    let err =
        quantize::quantize_model(&model, dir.path().join("r.gguf"), &j, |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("r-00003-of-00003.gguf"), "{err}");
    assert_eq!(names(dir.path()), before);
}

#[test]
fn dry_run_lists_every_tensor_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = model("llama", 256, true);
    // A name with an escape sequence: shown escaped.
    b.add_tensor("blk.1.\u{1b}[31mevil.weight", T::F32, &[4], vec![0u8; 16])
        .unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut b);
    let o = gguf(&["quantize", "--dry-run", input.to_str().unwrap(), "IQ2_XS"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(!out.contains('\u{1b}'), "{out}");
    assert!(out.contains("\\u{1b}[31mevil"), "{out}");
    assert!(out.contains("blk.0.ffn_down.weight"), "{out}");
    assert!(out.contains("nothing written"), "{out}");
    assert!(out.contains("quant size"), "{out}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("will require an importance matrix"), "{err}");
    assert_eq!(names(dir.path()), ["in.gguf"]);
}

#[test]
fn the_cli_writes_what_the_library_writes_in_both_argument_forms() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut model("qwen2", 256, true));
    let out = dir.path().join("cli.gguf");
    let o = gguf(&[
        "quantize",
        "--override-kv",
        "general.name=str:renamed",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "q5_k_m",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = String::from_utf8(o.stdout).unwrap();
    assert!(summary.contains("model size"), "{summary}");
    assert!(summary.contains("BPW"), "{summary}");
    let model = Model::open(&input).unwrap();
    let lib = dir.path().join("lib.gguf");
    let mut j = job("Q5_K_M");
    j.kv_overrides = vec![quantize::keys::KvOverride::parse("general.name=str:renamed").unwrap()];
    quantize::quantize_model(&model, &lib, &j, |_, _| {}).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&lib).unwrap());

    // INPUT TYPE: the output is ggml-model-TYPE.gguf beside the input.
    let o = gguf(&["quantize", input.to_str().unwrap(), "17"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let named = Model::open(dir.path().join("ggml-model-Q5_K.gguf")).unwrap();
    assert_eq!(named.get::<u32>("general.file_type").unwrap(), 17);
    assert_eq!(named.get_str("general.name").unwrap(), "test model");
    let lib = Model::open(&lib).unwrap();
    for t in lib.tensors() {
        assert_eq!(
            named.tensor(t.name()).unwrap().data().unwrap(),
            t.data().unwrap()
        );
    }
}

#[test]
fn convert_and_quantize_pure_choose_the_same_types() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = model("llama", 288, false);
    b.add_tensor(
        "blk.0.ffn_gate_inp.weight",
        T::F32,
        &[288, 4],
        vec![0u8; 288 * 16],
    )
    .unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut b);
    let converted = dir.path().join("c.gguf");
    let o = gguf(&[
        "convert",
        input.to_str().unwrap(),
        converted.to_str().unwrap(),
        "--type",
        "Q6_K",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let model = Model::open(&input).unwrap();
    let mut opts = QuantizeOptions::new("Q6_K").unwrap();
    opts.pure = true;
    let p = plan(&model, &opts).unwrap();
    let c = Model::open(&converted).unwrap();
    for t in &p.tensors {
        assert_eq!(
            c.tensor(&t.name).unwrap().ggml_type(),
            t.target,
            "{}",
            t.name
        );
    }
}

#[test]
fn prune_layers_from_the_cli_renumbers_the_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut model("llama", 256, true));
    let out = dir.path().join("pruned.gguf");
    let o = gguf(&[
        "quantize",
        "--prune-layers",
        "0",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "Q8_0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let q = Model::open(&out).unwrap();
    assert_eq!(q.get::<u32>("llama.block_count").unwrap(), 1);
    assert!(q.tensor("blk.1.attn_q.weight").is_err());
    // The old block 1 is block 0 now.
    let model = Model::open(&input).unwrap();
    let old = model.tensor("blk.1.ffn_norm.weight").unwrap();
    assert_eq!(
        q.tensor("blk.0.ffn_norm.weight").unwrap().data().unwrap(),
        old.data().unwrap()
    );
    let bad = gguf(&[
        "quantize",
        "--prune-layers",
        "0,x",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "Q8_0",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("invalid layer id"));
}

#[test]
fn tensor_types_from_flags_and_files_apply_in_command_line_order() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut model("llama", 256, true));
    let file = dir.path().join("types.txt");
    std::fs::write(&file, "attn_q=q8_0\n").unwrap();
    let (i, f) = (input.to_str().unwrap(), file.to_str().unwrap());
    let type_of = |args: &[&str]| {
        let out = dir.path().join("out.gguf");
        let mut all = vec!["quantize"];
        all.extend_from_slice(args);
        all.extend([i, out.to_str().unwrap(), "Q4_K_M"]);
        let o = gguf(&all);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let q = Model::open(&out).unwrap();

        q.tensor("blk.0.attn_q.weight").unwrap().ggml_type()
    };
    // The first pattern that matches wins.
    assert_eq!(
        type_of(&["--tensor-type-file", f, "--tensor-type", "attn=q4_0"]),
        T::Q8_0
    );
    assert_eq!(
        type_of(&["--tensor-type", "attn=q4_0", "--tensor-type-file", f]),
        T::Q4_0
    );
}

/// Importance weights near `f32::MAX` are finite, so they used to pass and
/// give NaN block scales in every tensor they weighted, exit 0: refused
/// before any file exists, naming the entry, by the library and the CLI.
#[test]
fn overflowing_importance_weights_are_refused_naming_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut model("llama", 256, true));
    let model = Model::open(&input).unwrap();
    let mut m = imatrix_for(&model);
    let at = m
        .entries
        .iter()
        .position(|e| e.name == "blk.1.ffn_up.weight")
        .unwrap();
    m.entries[at].sums.iter_mut().for_each(|s| *s = 3e38);
    m.entries[at].counts = vec![1.0];
    let mut j = job("Q4_K_M");
    j.imatrix = Some(&m);
    let text = refused(dir.path(), &input, &j).to_string();
    assert!(
        text.contains("\"blk.1.ffn_up.weight\"") && text.contains("3e38"),
        "{text}"
    );

    let imatrix = dir.path().join("big.imatrix.gguf");
    m.write(&imatrix).unwrap();
    let out = dir.path().join("q.gguf");
    let o = gguf(&[
        "quantize".as_ref(),
        "--imatrix".as_ref(),
        imatrix.as_os_str(),
        input.as_os_str(),
        out.as_os_str(),
        "Q4_K_M".as_ref(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("blk.1.ffn_up.weight") && err.contains("too large"),
        "{err}"
    );
    assert!(!out.exists());
}

/// Weights within the bound still overflow on huge values in the tensor
/// itself (1e30 in an F32 input): the block scales of every tensor
/// quantized with weights are checked, and one that came out NaN fails
/// the run naming the tensor, with nothing written.
#[test]
fn non_finite_block_scales_from_weighted_quantizing_are_refused_naming_the_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<f32> = (0..1024)
        .map(|i| if i % 2 == 0 { 1e30 } else { -1e30 })
        .collect();
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("llama.block_count", 1u32).unwrap();
    b.add_tensor_typed("blk.0.ffn_up.weight", &[256, 4], &x[..])
        .unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut b);
    let m = Imatrix {
        format: ImatrixFormat::Gguf,
        entries: vec![ImatrixEntry {
            name: "blk.0.ffn_up.weight".into(),
            sums: vec![1.0; 256],
            counts: vec![1.0],
        }],
        datasets: vec![],
        chunk_count: 1,
        chunk_size: Some(512),
    };
    let mut j = job("Q4_K_M");
    j.imatrix = Some(&m);
    let text = refused(dir.path(), &input, &j).to_string();
    assert!(
        text.contains("\"blk.0.ffn_up.weight\"") && text.contains("non-finite scale"),
        "{text}"
    );
}

/// A THREADS far above the cores used to build a pool of that many
/// threads: it is lowered to `max_threads()` with a warning naming the
/// file and the count used, and the output is the same bytes.
#[test]
fn a_thread_count_above_four_per_core_is_lowered_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_model(dir.path(), "in.gguf", &mut model("llama", 256, true));
    let run = |out: &Path, threads: &str| {
        let o = gguf(&[
            "quantize".as_ref(),
            input.as_os_str(),
            out.as_os_str(),
            "Q8_0".as_ref(),
            threads.as_ref(),
        ]);
        assert!(o.status.success(), "{o:?}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let (many, one) = (dir.path().join("many.gguf"), dir.path().join("one.gguf"));
    let err = run(&many, "100000");
    let max = quantize::max_threads();
    assert!(
        err.contains("in.gguf: warning: THREADS 100000")
            && err.contains(&format!("quantizing on {max} threads")),
        "{err}"
    );
    let quiet = run(&one, &max.to_string());
    assert!(!quiet.contains("warning"), "{quiet}");
    assert_eq!(std::fs::read(&many).unwrap(), std::fs::read(&one).unwrap());
}
