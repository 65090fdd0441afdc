//! The CUDA prelude's `lf_philox`, `lf_philox_word` and `lf_philox_pair`
//! against Random123's known answers and core's `philox::bits`, `word` and
//! `pair`, compiled by the host's C compiler (the prelude's
//! integer code is plain C; no GPU runs it here). Skips, saying so, where
//! there is no C compiler.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use lazyfuse_core::philox;
use lazyfuse_device::cuda::prelude;

/// The text of the prelude's generator: `lf_philox_block`, then
/// `lf_philox`, `lf_philox_pair` and `lf_philox_word`, which call it.
fn lf_philox() -> String {
    let text = prelude();
    let start = text
        .find("struct lf_philox_words")
        .expect("lf_philox_block in the prelude");
    let last = start
        + text[start..]
            .find("LF_D unsigned long long lf_philox_word")
            .expect("lf_philox_word after it");
    let end = last
        + text[last..]
            .find("\n}\n")
            .expect("the end of lf_philox_word")
        + 3;
    text[start..end].to_string()
}

#[test]
fn the_prelude_philox_computes_what_core_computes() {
    let dir = env!("CARGO_TARGET_TMPDIR");
    let counters: [(u64, u64); 5] = [
        (0, 0),
        (u64::MAX, u64::MAX),
        (1, 42),
        (123_456_789, 0x9E37_79B9_7F4A_7C15),
        (1 << 63, 7),
    ];
    let calls: String = ["lf_philox", "lf_philox_word", "lf_philox_pair"]
        .iter()
        .flat_map(|f| {
            counters
                .iter()
                .map(move |(c, k)| format!("    printf(\"%llu\\n\", {f}({c}ull, {k}ull));\n"))
        })
        .collect();
    // C names a struct type by its tag: the typedef C++ has implicitly.
    let source = format!(
        "#include <stdio.h>\n#define LF_D static\n\
         typedef struct lf_philox_words lf_philox_words;\n\
         static unsigned int __umulhi(unsigned int a, unsigned int b) {{ \
         return (unsigned int)(((unsigned long long)a * b) >> 32); }}\n{}\n\
         int main(void) {{\n{calls}    return 0;\n}}\n",
        lf_philox()
    );
    let c_file = format!("{dir}/philox.c");
    let binary = format!("{dir}/philox");
    std::fs::write(&c_file, source).unwrap();
    let compiled = Command::new("cc")
        .args([&c_file, "-O1", "-o", &binary])
        .status();
    match compiled {
        Ok(status) if status.success() => {}
        other => {
            eprintln!(
                "SKIPPED the_prelude_philox_computes_what_core_computes: no C compiler ({other:?})"
            );
            return;
        }
    }
    let output = Command::new(&binary).output().unwrap();
    let got: Vec<u64> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let want: Vec<u64> = (counters.iter().map(|&(c, k)| philox::bits(c, k)))
        .chain(counters.iter().map(|&(c, k)| philox::word(c, k)))
        .chain(counters.iter().map(|&(c, k)| philox::pair(c, k)))
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[0], 0xe169_c58d_6627_e8d5, "Random123's all-zero vector");
}
