//! E3 by hand with glibc's vectorised math library (libmvec, at most 4 ulp):
//! the reference the issue sets for the compute-bound case. Its AVX-512
//! variants (16 floats or 8 doubles a call) where the CPU runs them, else
//! its AVX2 ones. Loaded at run time, so the harness still builds and runs
//! where there is no libmvec (then the scalar hand loop is the only
//! reference).

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    // A vector argument goes in a ymm (zmm) register, as libmvec's vector
    // ABI expects, when the caller runs with AVX (AVX-512F) enabled: every
    // caller here is a function compiled for that instruction set.
    #[allow(improper_ctypes_definitions)]
    type F32x8 = unsafe extern "C" fn(__m256) -> __m256;
    #[allow(improper_ctypes_definitions)]
    type F64x4 = unsafe extern "C" fn(__m256d) -> __m256d;
    #[allow(improper_ctypes_definitions)]
    type F32x16 = unsafe extern "C" fn(__m512) -> __m512;
    #[allow(improper_ctypes_definitions)]
    type F64x8 = unsafe extern "C" fn(__m512d) -> __m512d;

    /// libmvec's `sin`, `cos`, `exp`, `tanh` of one vector width.
    enum Functions {
        /// `_ZGVd`: AVX2, 8 floats or 4 doubles.
        Avx2([F32x8; 4], [F64x4; 4]),
        /// `_ZGVe`: AVX-512, 16 floats or 8 doubles.
        Avx512([F32x16; 4], [F64x8; 4]),
    }

    /// The library and the widest functions this CPU runs.
    pub struct Mvec {
        _library: libloading::Library,
        functions: Functions,
    }

    const NAMES: [&str; 4] = ["sin", "cos", "exp", "tanh"];

    /// Looks up `_ZGV<isa>N<lanes>v_<name><suffix>` for the four functions.
    ///
    /// # Safety
    /// `F` must be the function type of those symbols.
    unsafe fn lookup<F: Copy>(
        library: &libloading::Library,
        prefix: &str,
        suffix: &str,
    ) -> Option<[F; 4]> {
        let mut found = Vec::with_capacity(4);
        for name in NAMES {
            let symbol = format!("{prefix}_{name}{suffix}\0");
            // SAFETY: the caller's contract.
            found.push(unsafe { *library.get::<F>(symbol.as_bytes()).ok()? });
        }
        found.try_into().ok()
    }

    /// The library, when present and the CPU runs its AVX2 code.
    pub fn get() -> Option<&'static Mvec> {
        static MVEC: OnceLock<Option<Mvec>> = OnceLock::new();
        MVEC.get_or_init(|| {
            if !is_x86_feature_detected!("avx2") || !is_x86_feature_detected!("fma") {
                return None;
            }
            // SAFETY: loading libmvec runs no initialisation code of note (it
            // is part of glibc), and each symbol is declared with the vector
            // function ABI glibc documents for its `_ZGVd` (AVX2) and `_ZGVe`
            // (AVX-512) names.
            unsafe {
                let library = libloading::Library::new("libmvec.so.1").ok()?;
                let avx512 =
                    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512dq");
                let wide = match avx512 {
                    true => lookup::<F32x16>(&library, "_ZGVeN16v", "f")
                        .zip(lookup::<F64x8>(&library, "_ZGVeN8v", "")),
                    false => None,
                };
                let functions = match wide {
                    Some((f32, f64)) => Functions::Avx512(f32, f64),
                    None => Functions::Avx2(
                        lookup(&library, "_ZGVdN8v", "f")?,
                        lookup(&library, "_ZGVdN4v", "")?,
                    ),
                };
                Some(Mvec {
                    functions,
                    _library: library,
                })
            }
        })
        .as_ref()
    }

    /// E3 over the leading multiple of `$lanes` elements of `$out` with the
    /// functions `$f` and the intrinsics of one vector type; how many.
    macro_rules! e3 {
        ($f:expr, $lanes:literal, $a:ident, $b:ident, $c:ident, $out:ident,
         $load:ident, $store:ident, $set1:ident, $zero:ident,
         $add:ident, $sub:ident, $mul:ident, $div:ident) => {{
            let [sin, cos, exp, tanh] = $f;
            let n = $out.len().min($a.len()).min($b.len()).min($c.len()) / $lanes * $lanes;
            let (k15, k2, k05) = ($set1(1.5), $set1(2.0), $set1(0.5));
            for i in (0..n).step_by($lanes) {
                // SAFETY: `i + lanes <= n` elements of every slice; libmvec
                // functions are pure.
                unsafe {
                    let x = $load($a.as_ptr().add(i));
                    let y = $load($b.as_ptr().add(i));
                    let z = $load($c.as_ptr().add(i));
                    let rational = $mul($div($sub($mul($add(x, k15), y), z), $add(x, k2)), k05);
                    let trig = $mul(sin(x), cos(y));
                    let e = exp($sub($zero(), z));
                    let t = tanh($mul(x, y));
                    $store(
                        $out.as_mut_ptr().add(i),
                        $add($sub($add(rational, trig), e), t),
                    );
                }
            }
            n
        }};
    }

    impl Mvec {
        /// The instruction set of the functions used: `AVX-512` or `AVX2`.
        pub fn instruction_set(&self) -> &'static str {
            match self.functions {
                Functions::Avx2(..) => "AVX2",
                Functions::Avx512(..) => "AVX-512",
            }
        }

        /// E3 over `out.len()` elements (a multiple of the vector width is
        /// vectorised, the rest is left to the caller).
        pub fn e3_f32(&self, a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) -> usize {
            match &self.functions {
                // SAFETY: `get` checked that the CPU runs AVX2 and FMA.
                Functions::Avx2(f, _) => unsafe { e3_f32_avx2(f, a, b, c, out) },
                // SAFETY: `get` checked that the CPU runs AVX-512F and DQ.
                Functions::Avx512(f, _) => unsafe { e3_f32_avx512(f, a, b, c, out) },
            }
        }

        /// E3 over `out.len()` doubles (a multiple of the vector width is
        /// vectorised).
        pub fn e3_f64(&self, a: &[f64], b: &[f64], c: &[f64], out: &mut [f64]) -> usize {
            match &self.functions {
                // SAFETY: as in `e3_f32`.
                Functions::Avx2(_, f) => unsafe { e3_f64_avx2(f, a, b, c, out) },
                // SAFETY: as in `e3_f32`.
                Functions::Avx512(_, f) => unsafe { e3_f64_avx512(f, a, b, c, out) },
            }
        }
    }

    /// `unsafe fn $name(functions, a, b, c, out) -> usize`: E3 with the
    /// functions of one libmvec width, compiled for `$features` (the
    /// intrinsics of that vector type, in `e3!`'s order).
    macro_rules! e3_fn {
        ($name:ident, $features:literal, $f:ty, $t:ty, $lanes:literal, $($intrinsic:ident),+) => {
            #[target_feature(enable = $features)]
            pub(super) unsafe fn $name(f: &[$f; 4], a: &[$t], b: &[$t], c: &[$t], out: &mut [$t]) -> usize {
                e3!(*f, $lanes, a, b, c, out, $($intrinsic),+)
            }
        };
    }

    #[rustfmt::skip]
    mod variants {
        use super::*;
        e3_fn!(e3_f32_avx2, "avx2,fma", F32x8, f32, 8, _mm256_loadu_ps, _mm256_storeu_ps,
            _mm256_set1_ps, _mm256_setzero_ps, _mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps, _mm256_div_ps);
        e3_fn!(e3_f64_avx2, "avx2,fma", F64x4, f64, 4, _mm256_loadu_pd, _mm256_storeu_pd,
            _mm256_set1_pd, _mm256_setzero_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, _mm256_div_pd);
        e3_fn!(e3_f32_avx512, "avx512f,avx512dq", F32x16, f32, 16, _mm512_loadu_ps, _mm512_storeu_ps,
            _mm512_set1_ps, _mm512_setzero_ps, _mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps, _mm512_div_ps);
        e3_fn!(e3_f64_avx512, "avx512f,avx512dq", F64x8, f64, 8, _mm512_loadu_pd, _mm512_storeu_pd,
            _mm512_set1_pd, _mm512_setzero_pd, _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, _mm512_div_pd);
    }
    use variants::*;
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    /// No libmvec here.
    pub struct Mvec;

    /// Never available off x86_64.
    pub fn get() -> Option<&'static Mvec> {
        None
    }

    impl Mvec {
        pub fn instruction_set(&self) -> &'static str {
            "none"
        }
        pub fn e3_f32(&self, _: &[f32], _: &[f32], _: &[f32], _: &mut [f32]) -> usize {
            0
        }
        pub fn e3_f64(&self, _: &[f64], _: &[f64], _: &[f64], _: &mut [f64]) -> usize {
            0
        }
    }
}

pub use imp::get;
