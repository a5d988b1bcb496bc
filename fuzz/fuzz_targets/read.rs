//! Fuzz target: any bytes read as a file of every format (rupu's envelope with `data`, reeval's
//! flat lines, reeval's raw parts): the inference pass, then every table's line reader and row
//! decoder. Nothing may panic, every batch must build, every row's line must be in the file.
//! The first two bytes choose the block size and the line limit; the rest is the file.

#![no_main]

#[path = "../../tests/robustness/harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&[block, limit], bytes)) = data.split_first_chunk::<2>() else { return };
    let block = usize::from(block % 64) + 1;
    let max_line_bytes = if limit < 64 { usize::from(limit) * 8 } else { 1 << 20 };
    harness::check(bytes, block, max_line_bytes);
});
