//! The codecs' AVX2 search kernels against the portable searches they
//! replace (`gguf_core::testing::lane_searches_agree`).
//!
//! Input: a mode byte (bit 7: floats as raw bit patterns, NaN and
//! infinities included, else finite values of every magnitude), then a
//! run of cases, each a selector byte (which search: a lattice's
//! neighbour search, `make_qkx2_quants` with each caller's parameters,
//! `make_qx_quants`, `make_qp_quants`, the IQ4 scale search, or a whole
//! row of a quantized type with and without importance weights) and the
//! bytes its inputs are drawn from. Each case runs both ways and must give
//! the same result (the same bits; any NaN for a NaN). Where the CPU lacks
//! AVX2 there is nothing to compare and the target passes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = gguf_core::testing::lane_searches_agree(data) {
        panic!("{e}");
    }
});
