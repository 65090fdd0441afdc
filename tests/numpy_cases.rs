//! The NumPy 2.x case table (`core/tests/data/numpy_cases.json`) on every
//! backend: each element-wise operation, cast, `where` and reduction of the
//! table, on every dtype, with NaN, infinities, empty and broadcast
//! operands, gives NumPy's dtype, shape and values (bit for bit where NumPy
//! rounds exactly, within 4 ulp otherwise).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../core/tests/data/numpy_replay.rs"]
mod numpy_replay;

#[test]
fn the_numpy_case_table_holds_on_every_backend() {
    let mut report = Vec::new();
    for cx in common::backends() {
        let (cases, failures) = numpy_replay::replay(&cx);
        if !failures.is_empty() {
            report.push(format!(
                "{} ({:?}): {} of {cases} cases differ from NumPy:\n{}",
                cx.backend_name(),
                cx.options(),
                failures.len(),
                failures.join("\n")
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n\n"));
}
