//! The special functions of the unary table (`erf`, `erfc`, `gamma`,
//! `lgamma`) for f32 and f64, from musl's libm.

/// The special functions of the unary table's float column, from musl's
/// libm (Rust's standard library has them only as unstable methods).
pub(super) trait Special: Copy {
    fn erf_of(self) -> Self;
    fn erfc_of(self) -> Self;
    fn gamma_of(self) -> Self;
    fn lgamma_of(self) -> Self;
}

impl Special for f32 {
    fn erf_of(self) -> f32 {
        libm::erff(self)
    }
    fn erfc_of(self) -> f32 {
        libm::erfcf(self)
    }
    fn gamma_of(self) -> f32 {
        libm::tgammaf(self)
    }
    fn lgamma_of(self) -> f32 {
        libm::lgammaf(self)
    }
}

impl Special for f64 {
    fn erf_of(self) -> f64 {
        libm::erf(self)
    }
    fn erfc_of(self) -> f64 {
        libm::erfc(self)
    }
    fn gamma_of(self) -> f64 {
        libm::tgamma(self)
    }
    fn lgamma_of(self) -> f64 {
        libm::lgamma(self)
    }
}

pub(super) fn erf<T: Special>(x: T) -> T {
    x.erf_of()
}

pub(super) fn erfc<T: Special>(x: T) -> T {
    x.erfc_of()
}

pub(super) fn gamma<T: Special>(x: T) -> T {
    x.gamma_of()
}

pub(super) fn lgamma<T: Special>(x: T) -> T {
    x.lgamma_of()
}
