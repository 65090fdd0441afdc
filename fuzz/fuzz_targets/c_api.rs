//! Fuzzes random operation sequences through the C API: every call returns
//! a status, never crashes, and handles are freed exactly once.
//! `cargo fuzz run c_api -- -max_total_time=60` (see fuzz/README.md).
#![no_main]

use std::ffi::CString;
use std::ptr::{null, null_mut};

use lazyfuse_ffi::*;
use libfuzzer_sys::fuzz_target;

const OPS: [&str; 14] = [
    "add", "sub", "mul", "div", "pow", "maximum", "lt", "where", "sqrt", "exp", "neg", "abs", "logical_not", "bogus",
];
const REDUCTIONS: [&str; 6] = ["sum", "prod", "min", "max", "mean", "median"];

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.iter().copied();
    let mut next = move || bytes.next().unwrap_or(0);
    unsafe {
        let mut cx = null_mut();
        let backend = CString::new(if next() % 2 == 0 { "cpu" } else { "sim" }).unwrap();
        if lf_context_new(backend.as_ptr(), &mut cx) != LF_OK {
            return;
        }
        let mut arrays: Vec<*mut lf_array> = Vec::new();
        for _ in 0..(next() % 24) {
            let choice = next();
            let pick = |i: u8, arrays: &Vec<*mut lf_array>| -> *const lf_array {
                if arrays.is_empty() || i == 255 { null() } else { arrays[i as usize % arrays.len()] }
            };
            let mut out = null_mut();
            match choice % 4 {
                0 => {
                    let dims = [1 + next() as usize % 4, 1 + next() as usize % 3];
                    let ndim = 1 + next() as usize % 2;
                    // Enough bytes for the largest shape (4 × 3) of the widest dtype (8 bytes).
                    let data: Vec<f64> = (0..12).map(|i| i as f64 - next() as f64 / 16.0).collect();
                    let dtype = (next() % 14) as lf_dtype;
                    let raw: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).map(|b| b & 1).collect();
                    lf_array_from_data(cx, dtype, dims.as_ptr(), ndim, raw.as_ptr().cast(), &mut out);
                }
                1 => {
                    let op = CString::new(OPS[next() as usize % OPS.len()]).unwrap();
                    let args = [pick(next(), &arrays), pick(next(), &arrays), pick(next(), &arrays)];
                    lf_apply(op.as_ptr(), args.as_ptr(), next() as usize % 4, &mut out);
                }
                2 => {
                    let op = CString::new(REDUCTIONS[next() as usize % REDUCTIONS.len()]).unwrap();
                    lf_reduce(op.as_ptr(), pick(next(), &arrays), next() as i8 as i32 % 3, next() % 2 == 0, &mut out);
                }
                _ => {
                    let a = pick(next(), &arrays);
                    let mut buf = vec![0u8; next() as usize];
                    lf_array_read(a, buf.as_mut_ptr().cast(), buf.len());
                }
            }
            if !out.is_null() {
                arrays.push(out);
            }
        }
        for a in arrays {
            lf_array_free(a);
        }
        lf_context_free(cx);
    }
});
