//! Random strings into the expression parser: it returns a ufunc or an
//! error, never panics, whatever the input (a bounded, always-on companion
//! of the cargo-fuzz target in `fuzz/`).

use lazyfuse_core::Ufunc;
use proptest::prelude::*;

fn tokens() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "a", "b", "x1", "(", ")", ",", "+", "-", "*", "/", "//", "%", "**", "<", "<=", "==", "!=",
        ">", ">=", "&", "|", "~", "sqrt", "where", "minimum", "exp", "1", "2.5", "1e3", ".5", "1e",
        "True", " ", "$", "é",
    ]);
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn token_soup_never_panics(text in tokens()) {
        let _ = Ufunc::parse("f", &text, &["a", "b"]);
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,60}") {
        let _ = Ufunc::parse("f", &text, &["a"]);
    }
}
