//! The NumPy 2.x case table (`tests/data/numpy_cases.json`) on the
//! reference evaluator (the facade's `tests/numpy_cases.rs` replays it on
//! every backend).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use lazyfuse_core::{Options, ReferenceEngine, Session};

#[path = "data/numpy_replay.rs"]
mod numpy_replay;

#[test]
fn numpy_case_table() {
    let cx = Session::new(Arc::new(ReferenceEngine::new()), Options::default());
    let (cases, failures) = numpy_replay::replay(&cx);
    assert!(
        failures.is_empty(),
        "{} of {cases} cases differ from NumPy:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
