//! E3 by hand with glibc's vectorised math library (libmvec, AVX2 variants,
//! at most 4 ulp): the reference the issue sets for the compute-bound case.
//! Loaded at run time, so the harness still builds and runs where there is
//! no libmvec (then the scalar hand loop is the only reference).

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    // A vector argument goes in a ymm register, as libmvec's vector ABI
    // expects, when the caller runs with AVX enabled: every caller here is
    // a `#[target_feature(enable = "avx2,fma")]` function.
    #[allow(improper_ctypes_definitions)]
    type F32x8 = unsafe extern "C" fn(__m256) -> __m256;
    #[allow(improper_ctypes_definitions)]
    type F64x4 = unsafe extern "C" fn(__m256d) -> __m256d;

    /// libmvec's `sin`, `cos`, `exp`, `tanh`, 8 floats or 4 doubles at a time.
    pub struct Mvec {
        _library: libloading::Library,
        f32: [F32x8; 4],
        f64: [F64x4; 4],
    }

    const F32_NAMES: [&[u8]; 4] = [
        b"_ZGVdN8v_sinf\0",
        b"_ZGVdN8v_cosf\0",
        b"_ZGVdN8v_expf\0",
        b"_ZGVdN8v_tanhf\0",
    ];
    const F64_NAMES: [&[u8]; 4] = [
        b"_ZGVdN4v_sin\0",
        b"_ZGVdN4v_cos\0",
        b"_ZGVdN4v_exp\0",
        b"_ZGVdN4v_tanh\0",
    ];

    /// The library, when present and the CPU runs its AVX2 code.
    pub fn get() -> Option<&'static Mvec> {
        static MVEC: OnceLock<Option<Mvec>> = OnceLock::new();
        MVEC.get_or_init(|| {
            if !is_x86_feature_detected!("avx2") || !is_x86_feature_detected!("fma") {
                return None;
            }
            // SAFETY: loading libmvec runs no initialisation code of note (it
            // is part of glibc), and each symbol is declared with the vector
            // function ABI glibc documents for its `_ZGVdN` (AVX2) names.
            unsafe {
                let library = libloading::Library::new("libmvec.so.1").ok()?;
                let mut f32: [Option<F32x8>; 4] = [None; 4];
                for (slot, name) in f32.iter_mut().zip(F32_NAMES) {
                    *slot = Some(*library.get::<F32x8>(name).ok()?);
                }
                let mut f64: [Option<F64x4>; 4] = [None; 4];
                for (slot, name) in f64.iter_mut().zip(F64_NAMES) {
                    *slot = Some(*library.get::<F64x4>(name).ok()?);
                }
                Some(Mvec {
                    f32: f32.map(Option::unwrap),
                    f64: f64.map(Option::unwrap),
                    _library: library,
                })
            }
        })
        .as_ref()
    }

    impl Mvec {
        /// E3 over `out.len()` elements (a multiple of 8 is vectorised, the
        /// rest is left to the caller).
        pub fn e3_f32(&self, a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) -> usize {
            // SAFETY: `get` checked that the CPU runs AVX2 and FMA.
            unsafe { self.e3_f32_avx2(a, b, c, out) }
        }

        #[target_feature(enable = "avx2,fma")]
        unsafe fn e3_f32_avx2(&self, a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) -> usize {
            let [sin, cos, exp, tanh] = self.f32;
            let n = out.len().min(a.len()).min(b.len()).min(c.len()) / 8 * 8;
            let (k15, k2, k05) = (
                _mm256_set1_ps(1.5),
                _mm256_set1_ps(2.0),
                _mm256_set1_ps(0.5),
            );
            for i in (0..n).step_by(8) {
                // SAFETY: `i + 8 <= n` elements of every slice; libmvec
                // functions are pure.
                unsafe {
                    let x = _mm256_loadu_ps(a.as_ptr().add(i));
                    let y = _mm256_loadu_ps(b.as_ptr().add(i));
                    let z = _mm256_loadu_ps(c.as_ptr().add(i));
                    let rational = _mm256_mul_ps(
                        _mm256_div_ps(
                            _mm256_sub_ps(_mm256_mul_ps(_mm256_add_ps(x, k15), y), z),
                            _mm256_add_ps(x, k2),
                        ),
                        k05,
                    );
                    let trig = _mm256_mul_ps(sin(x), cos(y));
                    let e = exp(_mm256_sub_ps(_mm256_setzero_ps(), z));
                    let t = tanh(_mm256_mul_ps(x, y));
                    let v = _mm256_add_ps(_mm256_sub_ps(_mm256_add_ps(rational, trig), e), t);
                    _mm256_storeu_ps(out.as_mut_ptr().add(i), v);
                }
            }
            n
        }

        /// E3 over `out.len()` doubles (a multiple of 4 is vectorised).
        pub fn e3_f64(&self, a: &[f64], b: &[f64], c: &[f64], out: &mut [f64]) -> usize {
            // SAFETY: `get` checked that the CPU runs AVX2 and FMA.
            unsafe { self.e3_f64_avx2(a, b, c, out) }
        }

        #[target_feature(enable = "avx2,fma")]
        unsafe fn e3_f64_avx2(&self, a: &[f64], b: &[f64], c: &[f64], out: &mut [f64]) -> usize {
            let [sin, cos, exp, tanh] = self.f64;
            let n = out.len().min(a.len()).min(b.len()).min(c.len()) / 4 * 4;
            let (k15, k2, k05) = (
                _mm256_set1_pd(1.5),
                _mm256_set1_pd(2.0),
                _mm256_set1_pd(0.5),
            );
            for i in (0..n).step_by(4) {
                // SAFETY: as in `e3_f32_avx2`, with 4 lanes.
                unsafe {
                    let x = _mm256_loadu_pd(a.as_ptr().add(i));
                    let y = _mm256_loadu_pd(b.as_ptr().add(i));
                    let z = _mm256_loadu_pd(c.as_ptr().add(i));
                    let rational = _mm256_mul_pd(
                        _mm256_div_pd(
                            _mm256_sub_pd(_mm256_mul_pd(_mm256_add_pd(x, k15), y), z),
                            _mm256_add_pd(x, k2),
                        ),
                        k05,
                    );
                    let trig = _mm256_mul_pd(sin(x), cos(y));
                    let e = exp(_mm256_sub_pd(_mm256_setzero_pd(), z));
                    let t = tanh(_mm256_mul_pd(x, y));
                    let v = _mm256_add_pd(_mm256_sub_pd(_mm256_add_pd(rational, trig), e), t);
                    _mm256_storeu_pd(out.as_mut_ptr().add(i), v);
                }
            }
            n
        }
    }
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
        pub fn e3_f32(&self, _: &[f32], _: &[f32], _: &[f32], _: &mut [f32]) -> usize {
            0
        }
        pub fn e3_f64(&self, _: &[f64], _: &[f64], _: &[f64], _: &mut [f64]) -> usize {
            0
        }
    }
}

pub use imp::get;
