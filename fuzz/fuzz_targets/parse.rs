//! Fuzzes `Ufunc::parse`: any input must give a ufunc or an error, never a
//! panic. Run a bounded session with
//! `cargo fuzz run parse -- -max_total_time=60` (see fuzz/README.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = lazyfuse_core::Ufunc::parse("fuzz", text, &["a", "b", "c"]);
    }
});
