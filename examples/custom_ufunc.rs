//! A user ufunc with several Numba-style signatures: each call uses the
//! first signature all its arguments cast to safely (NumPy's safe casting),
//! so the order of the signatures matters; a dtype no signature accepts is
//! an error reported lazily. The same function from a string with
//! `Ufunc::parse`, and what a parse error looks like.
//!
//! Run: `cargo run --release --example custom_ufunc`

use lazyfuse::{Context, DType, Error, Expr, Result, Ufunc};

/// An error (not a panic) when a claim of the example does not hold.
fn ensure(ok: bool, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::internal("custom_ufunc example", what))
    }
}

fn main() -> Result<()> {
    let cx = Context::new();

    // @vectorize(['float32(float32, float32)', 'int64(int64, int64)',
    //             'float64(float64, float64)'])
    // def sumsq(x, y): return x*x + 3*y
    let sumsq = Ufunc::new("sumsq", |[x, y]: [Expr; 2]| x * x + 3 * y).with_signatures(&[
        "f32(f32,f32)",
        "i64(i64,i64)",
        "f64(f64,f64)",
    ])?;
    let xs = [1i64, -2, 3, 40_000];
    let ys = [5i64, 6, -7, 8];
    let want: Vec<i64> = xs.iter().zip(&ys).map(|(x, y)| x * x + 3 * y).collect();

    // f32 → "f32(f32,f32)".
    let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
    let y32: Vec<f32> = ys.iter().map(|&v| v as f32).collect();
    let r = sumsq.call(&[&cx.from_slice(&x32), &cx.from_slice(&y32)]);
    let got = r.to_vec::<f32>()?;
    println!("f32 args -> {}: {got:?}", r.dtype());
    ensure(r.dtype() == DType::F32, "f32 uses the first signature")?;
    ensure(
        got.iter().zip(&want).all(|(g, w)| *g == *w as f32),
        "f32 values",
    )?;

    // i32 does not cast safely to f32 (NumPy: i32 + f32 -> f64) but does to
    // i64: the second signature.
    let x_i32: Vec<i32> = xs.iter().map(|&v| v as i32).collect();
    let y_i32: Vec<i32> = ys.iter().map(|&v| v as i32).collect();
    let r = sumsq.call(&[&cx.from_slice(&x_i32), &cx.from_slice(&y_i32)]);
    let got = r.to_vec::<i64>()?;
    println!("i32 args -> {}: {got:?}", r.dtype());
    ensure(
        r.dtype() == DType::I64 && got == want,
        "i32 dispatches to i64",
    )?;

    // u64 casts safely to neither f32 nor i64, only to f64: the third.
    let x_u64: Vec<u64> = xs.iter().map(|&v| v.unsigned_abs()).collect();
    let y_u64: Vec<u64> = ys.iter().map(|&v| v.unsigned_abs()).collect();
    let r = sumsq.call(&[&cx.from_slice(&x_u64), &cx.from_slice(&y_u64)]);
    let got = r.to_vec::<f64>()?;
    println!("u64 args -> {}: {got:?}", r.dtype());
    let want_u64: Vec<f64> = x_u64
        .iter()
        .zip(&y_u64)
        .map(|(x, y)| (x * x + 3 * y) as f64)
        .collect();
    ensure(
        r.dtype() == DType::F64 && got == want_u64,
        "u64 dispatches to f64",
    )?;

    // The same signatures in another order change the dispatch: i32 now
    // matches f64 first (i32 casts safely to f64).
    let reordered = sumsq.with_signatures(&["f64(f64,f64)", "i64(i64,i64)"])?;
    let r = reordered.call(&[&cx.from_slice(&x_i32), &cx.from_slice(&y_i32)]);
    println!("i32 args, f64 signature first -> {}", r.dtype());
    ensure(r.dtype() == DType::F64, "first match wins")?;

    // No signature accepts f64 here: the call still returns an array (lazy);
    // check() or any demand reports why.
    let narrow = sumsq.with_signatures(&["f32(f32,f32)", "i64(i64,i64)"])?;
    let x64 = cx.from_slice(&[1.0f64, 2.0]);
    let bad = narrow.call(&[&x64, &x64]);
    match bad.check() {
        Err(e @ Error::DTypeMismatch { .. }) => {
            println!("f64 args, no f64 signature -> error: {e}")
        }
        Err(other) => return Err(other),
        Ok(()) => ensure(false, "f64 arguments should match no signature")?,
    }
    ensure(bad.to_vec::<f32>().is_err(), "the demand reports it too")?;

    // Ufunc::parse: the same function from a string (as the C API's
    // lf_ufunc_from_expr), with the same signatures.
    let parsed =
        Ufunc::parse("sumsq", "x*x + 3*y", &["x", "y"])?.with_signatures(&["f32(f32,f32)"])?;
    let r = parsed.call(&[&cx.from_slice(&x32), &cx.from_slice(&y32)]);
    let got = r.to_vec::<f32>()?;
    println!("parsed \"x*x + 3*y\" on f32: {got:?}");
    ensure(
        got.iter().zip(&want).all(|(g, w)| *g == *w as f32),
        "parsed ufunc values",
    )?;
    match Ufunc::parse("broken", "x*x + ", &["x"]) {
        Err(e) => println!("parse error: {e}"),
        Ok(_) => ensure(false, "\"x*x + \" should not parse")?,
    }
    Ok(())
}
