//! Fuzz target: the line splitter gives the same lines however the bytes are cut into blocks.
//! The first two bytes choose the block size and the line limit; the rest is the file.

#![no_main]

#[path = "../../tests/robustness/harness.rs"]
#[allow(dead_code)]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&[block, limit], bytes)) = data.split_first_chunk::<2>() else { return };
    let block = usize::from(block % 64) + 1;
    let max_line_bytes = if limit < 128 { usize::from(limit) } else { 1 << 20 };
    assert_eq!(
        harness::split(bytes, bytes.len().max(1), max_line_bytes),
        harness::split(bytes, block, max_line_bytes),
        "blocks of {block}, limit {max_line_bytes}"
    );
});
