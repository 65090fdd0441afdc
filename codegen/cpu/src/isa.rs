//! Which instruction sets the CPU runs, asked once: every module that picks
//! a loop by instruction set asks here (and none asks another such module).

/// True when the CPU runs AVX-512F instructions (asked once); false under
/// `LAZYFUSE_NO_AVX2`, which forces the portable loops.
#[cfg(target_arch = "x86_64")]
pub fn has_avx512() -> bool {
    static AVX512: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX512.get_or_init(|| has_avx2() && std::arch::is_x86_feature_detected!("avx512f"))
}

/// True when the CPU runs AVX2 instructions (asked once).
/// `LAZYFUSE_NO_AVX2=1` forces the portable loops (the test suite runs both).
#[cfg(target_arch = "x86_64")]
pub fn has_avx2() -> bool {
    static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX2.get_or_init(|| {
        std::env::var_os("LAZYFUSE_NO_AVX2").is_none()
            && std::arch::is_x86_feature_detected!("avx2")
    })
}
