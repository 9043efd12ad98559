"""Model.summary() and Model.estimate(): the library's ModelSummary and
Estimate, checked against gguf-py's view of the same file and against
their own arithmetic."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import gguf
import pytest
from conftest import REPO, SAMPLE

import gguf_rs


def test_summary_agrees_with_gguf_py() -> None:
    summary = gguf_rs.open(SAMPLE).summary()
    theirs = gguf.GGUFReader(SAMPLE)
    assert summary["architecture"] == "llama"
    assert summary["name"] == theirs.fields["general.name"].contents()
    assert summary["parameters"] == sum(int(t.n_elements) for t in theirs.tensors)
    assert summary["tensor_bytes"] == sum(int(t.n_bytes) for t in theirs.tensors)
    assert summary["bits_per_weight"] == pytest.approx(summary["tensor_bytes"] * 8 / summary["parameters"])
    counts = Counter(t.tensor_type.name for t in theirs.tensors)
    assert summary["tensor_types"] == dict(counts)
    # Most common type first, as the library orders them.
    assert list(summary["tensor_types"].values()) == sorted(counts.values(), reverse=True)
    assert summary["file_type"] == theirs.fields["general.file_type"].contents()
    assert summary["file_type_guessed"] is False
    assert summary["quantization"] == "Q8_0"
    assert summary["context_length"] == theirs.fields["llama.context_length"].contents()
    assert summary["vocab_size"] == len(theirs.fields["tokenizer.ggml.tokens"].data)
    assert summary["parameters_text"] == "112.06 K"


def test_estimate_adds_up_and_follows_the_settings() -> None:
    model = gguf_rs.open(SAMPLE)
    est = model.estimate()
    parts = ("weights_bytes", "kv_cache_bytes", "output_buffer_bytes", "compute_buffer_bytes")
    assert est["total_bytes"] == sum(est[p] for p in parts)
    assert est["total_bytes"] == sum(d["total_bytes"] for d in est["devices"])
    assert [d["device"] for d in est["devices"]] == ["CPU"]
    assert est["parameters"] == model.summary()["parameters"]
    assert est["weights_bytes"] == model.summary()["tensor_bytes"]
    # No context given: the training context, as llama.cpp takes it.
    assert est["context"]["n_ctx"] == est["context"]["n_ctx_train"] == 256
    assert est["kv_cache_bytes"] == sum(c["bytes"] for c in est["caches"])
    # Twice the cells, twice the (f16) cache; beyond the training context.
    bigger = model.estimate(512)
    assert bigger["context"]["n_ctx"] == 512
    assert bigger["kv_cache_bytes"] == 2 * est["kv_cache_bytes"]
    assert bigger["context"]["exceeds_training_context"] is True
    # An f32 cache is twice an f16 one.
    f32 = model.estimate(cache_type_k="f32", cache_type_v="f32")
    assert f32["kv_cache_bytes"] == 2 * est["kv_cache_bytes"]
    assert model.estimate(parallel=2)["context"]["n_seq_max"] == 2
    assert model.estimate(flash_attn="off")["context"]["flash_attn"] is False


def test_estimate_refuses_what_llama_cpp_refuses() -> None:
    model = gguf_rs.open(SAMPLE)
    # The sample's heads are 16 wide: q8_0's 32-element blocks do not divide them.
    with pytest.raises(gguf_rs.GGUFError, match="does not divide the head width 16"):
        model.estimate(cache_type_k="q8_0")
    with pytest.raises(gguf_rs.GGUFError, match="does not take \"q4_k\" as a cache type"):
        model.estimate(cache_type_v="q4_k")
    with pytest.raises(gguf_rs.GGUFError, match="expected 'on', 'off' or 'auto'"):
        model.estimate(flash_attn="yes")


def gguf_binary() -> Path | None:
    """The `gguf` command the Rust suite built (scripts/test.sh runs this
    after it), or $GGUF_BIN."""
    import os

    candidates = [os.environ.get("GGUF_BIN")]
    target = os.environ.get("CARGO_TARGET_DIR")
    candidates += [str(Path(target) / "debug" / "gguf")] if target else []
    candidates += [str(REPO / "target" / "debug" / "gguf")]
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c)
    return None


# Each case: Model.estimate's keyword arguments and the same settings as
# `gguf estimate` flags.
CLI_CASES = [
    ({}, []),
    ({"context": 512, "swa_full": True, "kv_unified": True, "parallel": 2}, ["-c", "512", "--swa-full", "-kvu", "-np", "2"]),
    ({"context": 256, "no_kv_offload": True, "no_mmap": True}, ["-c", "256", "-nkvo", "--no-mmap"]),
    ({"context": 256, "tensor_split": [3, 1], "n_gpu_layers": 2}, ["-c", "256", "-ts", "3,1", "-ngl", "2"]),
    ({"fit": 1 << 20}, ["--fit", "1048576B"]),
    ({"fit": 1 << 30, "tensor_split": [1, 1]}, ["--fit", "1G", "-ts", "1,1"]),
]


@pytest.mark.parametrize(("kwargs", "flags"), CLI_CASES)
def test_estimate_takes_every_option_the_cli_has(kwargs: dict, flags: list[str]) -> None:
    """The same dict `gguf estimate --json` prints for the same settings."""
    binary = gguf_binary()
    if binary is None:
        pytest.skip("no gguf binary (cargo build, or set GGUF_BIN) to compare estimate() with")
    import json
    import subprocess

    cli = json.loads(subprocess.run([str(binary), "estimate", str(SAMPLE), "--json", *flags], check=True, capture_output=True, text=True).stdout)
    assert gguf_rs.open(SAMPLE).estimate(**kwargs) == cli


def test_estimate_fit_follows_the_budget() -> None:
    model = gguf_rs.open(SAMPLE)
    roomy = model.estimate(fit=1 << 30)["fit"]
    assert roomy["max_ctx"] and roomy["budget_per_device"] == ["CPU"]
    tight = model.estimate(fit=1024)["fit"]
    assert tight["max_ctx"] is None and tight["min_ctx_bytes"] > 1024
    assert [d["device"] for d in model.estimate(256, tensor_split=[1, 1])["devices"]] == ["CPU", "GPU0", "GPU1"]
    per_gpu = model.estimate(fit=1 << 30, tensor_split=[1, 1])["fit"]
    assert per_gpu["budget_per_device"] == ["GPU0", "GPU1"] and per_gpu["host_ram_checked"] is False
    assert per_gpu["max_gpu_layers"] == per_gpu["layer_slots"]
