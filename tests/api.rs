//! The public Rust API of the contract (shared/design/API.md): every name
//! compiles and behaves as specified, on every available backend.

mod common;

use common::{assert_close, backends};
use lazyfuse::{Array, Context, DType, Error, Expr, Reducer, Result, Stats, Ufunc};

fn assert_traits<
    T: Clone + std::fmt::Debug + Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe,
>() {
}

#[test]
fn type_level_promises() {
    assert_traits::<Context>();
    assert_traits::<Array>();
    assert_traits::<Ufunc>();
    assert_traits::<Reducer>();
    fn copy<T: Copy>() {}
    copy::<Expr>();
    copy::<Stats>();
    let _ = Stats::default();
    fn error<E: std::error::Error + std::fmt::Display + std::fmt::Debug>() {}
    error::<Error>();
}

#[test]
fn contexts_and_backend_names() -> Result<()> {
    assert_eq!(Context::cpu().backend_name(), "cpu");
    assert_eq!(Context::sim().backend_name(), "sim");
    let cx = Context::new();
    assert!(["cpu", "sim", "cuda"].contains(&cx.backend_name()));
    let cx = Context::builder()
        .backend("cpu")
        .fusion(false)
        .threads(2)
        .build()?;
    assert_eq!(cx.backend_name(), "cpu");
    assert!(!cx.options().fusion);
    assert_eq!(cx.options().threads, 2);
    let err = Context::builder().backend("tpu").build().unwrap_err();
    assert!(err.to_string().contains("unknown backend 'tpu'"), "{err}");
    match Context::cuda(0) {
        Ok(cx) => assert_eq!(cx.backend_name(), "cuda"),
        Err(e) => assert!(matches!(e, Error::BackendUnavailable { .. }), "{e}"),
    }
    Ok(())
}

#[test]
fn sources_and_demand() -> Result<()> {
    for cx in backends() {
        let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
        assert_eq!(a.shape(), &[3]);
        assert_eq!(a.dtype(), DType::F32);
        assert_eq!((a.ndim(), a.len(), a.is_empty()), (1, 3, false));
        let b = cx.from_vec(vec![0.5f32; 6], &[2, 3])?;
        let c = (&b * &a + 1.0).sqrt();
        assert_eq!(c.shape(), &[2, 3]);
        let v = c.to_vec::<f32>()?;
        assert_eq!(v[..3], [1.5f32.sqrt(), 2.0f32.sqrt(), 2.5f32.sqrt()]);
        let mut buf = vec![0f32; 6];
        c.read_into(&mut buf)?;
        assert_eq!(buf, v);
        assert_eq!(cx.zeros(&[2, 3], DType::F32).to_vec::<f32>()?, vec![0.0; 6]);
        assert_eq!(cx.ones(&[2], DType::I32).to_vec::<i32>()?, vec![1, 1]);
        assert_eq!(
            cx.full(&[2], 7.0, DType::F64).to_vec::<f64>()?,
            vec![7.0, 7.0]
        );
        assert_eq!(cx.full(&[1], u64::MAX, DType::U64).item::<u64>()?, u64::MAX);
        assert_eq!(cx.full(&[1], i64::MIN, DType::I64).item::<i64>()?, i64::MIN);
        assert_eq!(
            cx.arange(0.0, 10.0, 2.5, DType::F32).to_vec::<f32>()?,
            vec![0.0, 2.5, 5.0, 7.5]
        );
        assert_eq!(
            cx.arange(5.0, 0.0, -2.0, DType::I16).to_vec::<i16>()?,
            vec![5, 3, 1]
        );
        assert!(cx.arange(0.0, -1.0, 1.0, DType::F32).is_empty());
        let s: f32 = a.sum().item::<f32>()?;
        assert_eq!(s, 6.0);
        c.eval()?;
        cx.eval(&[&c, &a.sum()])?;
        let d_a = a.to_device()?;
        assert_eq!(d_a.to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
        assert_eq!(
            d_a.is_on_device(),
            cx.backend_name() != "cpu" && d_a.is_on_device()
        );
    }
    Ok(())
}

#[test]
fn operators_and_methods_with_scalars() -> Result<()> {
    for cx in backends() {
        let a = cx.from_slice(&[1.0f32, 2.0, 4.0]);
        let b = cx.from_slice(&[2.0f32, 2.0, 2.0]);
        let by_ops = (&a * &b + 1.0).sqrt();
        let by_methods = a.mul(&b).add(1.0).sqrt();
        assert_eq!(by_ops.to_vec::<f32>()?, by_methods.to_vec::<f32>()?);
        assert_eq!((4.0 * &a).to_vec::<f32>()?, vec![4.0, 8.0, 16.0]);
        assert_eq!((4.0 * &a).dtype(), DType::F32, "a weak scalar keeps f32");
        assert_eq!((2 * &a).dtype(), DType::F32);
        assert_eq!((&a - 1u8).dtype(), DType::F32);
        assert_eq!(
            (a.clone() + b.clone()).to_vec::<f32>()?,
            vec![3.0, 4.0, 6.0]
        );
        assert_eq!((-&a).to_vec::<f32>()?, vec![-1.0, -2.0, -4.0]);
        assert_eq!((&a / 2.0).to_vec::<f32>()?, vec![0.5, 1.0, 2.0]);
        assert_eq!((&a % 3.0).to_vec::<f32>()?, vec![1.0, 2.0, 1.0]);
        assert_eq!((10.0 - &a).to_vec::<f32>()?, vec![9.0, 8.0, 6.0]);
        let i = cx.from_slice(&[7i32, -7, 7, 0]);
        let j = cx.from_slice(&[2i32, 2, 0, 0]);
        assert_eq!(
            i.div(&j).dtype(),
            DType::F64,
            "true division of ints is f64"
        );
        assert_eq!(i.floor_div(&j).to_vec::<i32>()?, vec![3, -4, 0, 0]);
        assert_eq!(i.rem(&j).to_vec::<i32>()?, vec![1, 1, 0, 0]);
        assert_eq!(i.pow(2).to_vec::<i32>()?, vec![49, 49, 49, 0]);
        assert_eq!(i.abs().to_vec::<i32>()?, vec![7, 7, 7, 0]);
        let x = cx.from_slice(&[0.5f64, -1.5, 2.5]);
        for (name, arr, want) in [
            (
                "exp",
                x.exp(),
                [0.5f64.exp(), (-1.5f64).exp(), 2.5f64.exp()],
            ),
            (
                "log",
                x.abs().log(),
                [0.5f64.ln(), 1.5f64.ln(), 2.5f64.ln()],
            ),
            (
                "sin",
                x.sin(),
                [0.5f64.sin(), (-1.5f64).sin(), 2.5f64.sin()],
            ),
            (
                "cos",
                x.cos(),
                [0.5f64.cos(), (-1.5f64).cos(), 2.5f64.cos()],
            ),
            (
                "tan",
                x.tan(),
                [0.5f64.tan(), (-1.5f64).tan(), 2.5f64.tan()],
            ),
            (
                "tanh",
                x.tanh(),
                [0.5f64.tanh(), (-1.5f64).tanh(), 2.5f64.tanh()],
            ),
            ("floor", x.floor(), [0.0, -2.0, 2.0]),
            ("ceil", x.ceil(), [1.0, -1.0, 3.0]),
            ("round", x.round(), [0.0, -2.0, 2.0]),
        ] {
            assert_close(&arr.to_vec::<f64>()?, &want, 1e-15);
            assert_eq!(arr.dtype(), DType::F64, "{name}");
        }
        let m = x.minimum(0.0).maximum(-1.0);
        assert_eq!(m.to_vec::<f64>()?, vec![0.0, -1.0, 0.0]);
        let cmp = [
            x.eq(2.5),
            x.ne(2.5),
            x.lt(0.0),
            x.le(0.5),
            x.gt(0.0),
            x.ge(2.5),
        ];
        let got: Vec<Vec<bool>> = cmp
            .iter()
            .map(|c| c.to_vec::<bool>())
            .collect::<Result<_>>()?;
        assert_eq!(
            got,
            vec![
                vec![false, false, true],
                vec![true, true, false],
                vec![false, true, false],
                vec![true, true, false],
                vec![true, false, true],
                vec![false, false, true]
            ]
        );
        let p = x.gt(0.0);
        let q = x.lt(2.0);
        assert_eq!(
            p.logical_and(&q).to_vec::<bool>()?,
            vec![true, false, false]
        );
        assert_eq!(p.logical_or(&q).to_vec::<bool>()?, vec![true, true, true]);
        assert_eq!(p.logical_not().to_vec::<bool>()?, vec![false, true, false]);
        assert_eq!(p.where_(&x, 0.0).to_vec::<f64>()?, vec![0.5, 0.0, 2.5]);
        assert_eq!(Array::where_(&p, 1, -1).to_vec::<i64>()?, vec![1, -1, 1]);
        assert_eq!(x.astype(DType::I32).to_vec::<i32>()?, vec![0, -1, 2]);
    }
    Ok(())
}

#[test]
fn views() -> Result<()> {
    for cx in backends() {
        let m = cx.from_vec((0..6).map(|v| v as f32).collect(), &[2, 3])?;
        assert_eq!(
            m.reshape(&[3, 2]).to_vec::<f32>()?,
            vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        );
        assert_eq!(m.transpose().shape(), &[3, 2]);
        assert_eq!(
            m.transpose().to_vec::<f32>()?,
            vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
        );
        assert_eq!(
            m.permute(&[1, 0]).to_vec::<f32>()?,
            m.transpose().to_vec::<f32>()?
        );
        let row = cx.from_slice(&[1.0f32, 2.0, 3.0]);
        assert_eq!(
            row.broadcast_to(&[2, 3]).to_vec::<f32>()?,
            vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
        );
        // Views compose with element-wise work and reductions.
        let t = (&m.transpose() + &row.reshape(&[3, 1])).sum_axis(1);
        assert_eq!(t.to_vec::<f32>()?, vec![5.0, 9.0, 13.0]);
    }
    Ok(())
}

#[test]
fn slices_follow_python() -> Result<()> {
    for cx in backends() {
        let x = cx.arange(0.0, 10.0, 1.0, DType::I32);
        type Case = (Option<isize>, Option<isize>, isize, Vec<i32>);
        let cases: [Case; 8] = [
            (Some(1), Some(5), 2, vec![1, 3]),
            (None, None, -1, (0..10).rev().collect()),
            (Some(-3), None, 1, vec![7, 8, 9]),
            (Some(8), Some(2), -3, vec![8, 5]),
            (Some(5), Some(5), 1, vec![]),
            (Some(-100), Some(100), 4, vec![0, 4, 8]),
            (Some(100), None, -4, vec![9, 5, 1]),
            (None, Some(-100), -1, (0..10).rev().collect()),
        ];
        for (start, stop, step, want) in cases {
            assert_eq!(
                x.slice_axis(0, start, stop, step).to_vec::<i32>()?,
                want,
                "{}: [{start:?}:{stop:?}:{step}]",
                cx.backend_name()
            );
        }
        assert!(x.slice_axis(0, None, None, 0).check().is_err());
        assert!(x.slice_axis(1, None, None, 1).check().is_err());
        let m = cx.from_vec((0..12).map(|v| v as f64).collect(), &[3, 4])?;
        // m[::-1, 1::2] + 100, and its sum along axis 0: views fused into one kernel each.
        let v = m
            .slice_axis(0, None, None, -1)
            .slice_axis(1, Some(1), None, 2);
        assert_eq!(v.shape(), &[3, 2]);
        assert_eq!(
            (&v + 100.0).to_vec::<f64>()?,
            vec![109.0, 111.0, 105.0, 107.0, 101.0, 103.0]
        );
        assert_eq!(v.sum_axis(0).to_vec::<f64>()?, vec![15.0, 21.0]);
        assert_eq!(
            v.transpose().reshape(&[6]).to_vec::<f64>()?,
            vec![9.0, 5.0, 1.0, 11.0, 7.0, 3.0]
        );
    }
    Ok(())
}

#[test]
fn reductions() -> Result<()> {
    for cx in backends() {
        let m = cx.from_vec(vec![1.0f32, 5.0, 3.0, 4.0, 2.0, 6.0], &[2, 3])?;
        assert_eq!(m.sum().item::<f32>()?, 21.0);
        assert_eq!(m.prod().item::<f32>()?, 720.0);
        assert_eq!(m.min().item::<f32>()?, 1.0);
        assert_eq!(m.max().item::<f32>()?, 6.0);
        assert_eq!(m.mean().item::<f32>()?, 3.5);
        assert_eq!(m.sum().shape(), &[] as &[usize]);
        assert_eq!(m.sum_axis(0).to_vec::<f32>()?, vec![5.0, 7.0, 9.0]);
        assert_eq!(m.prod_axis(1).to_vec::<f32>()?, vec![15.0, 48.0]);
        assert_eq!(m.min_axis(0).to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
        assert_eq!(m.max_axis(-1).to_vec::<f32>()?, vec![5.0, 6.0]);
        assert_eq!(m.mean_axis(0).to_vec::<f32>()?, vec![2.5, 3.5, 4.5]);
        // The axis may be any integer type.
        assert_eq!(
            m.sum_axis(1i32).to_vec::<f32>()?,
            m.sum_axis(1usize).to_vec::<f32>()?
        );
        assert_eq!(
            m.sum_axis(-1isize).to_vec::<f32>()?,
            m.sum_axis(1i64).to_vec::<f32>()?
        );
        // NaN propagates through min/max.
        let n = cx.from_slice(&[1.0f64, f64::NAN, 3.0]);
        assert!(n.max().item::<f64>()?.is_nan());
        assert!(n.min().item::<f64>()?.is_nan());
        assert!(n.maximum(2.0).to_vec::<f64>()?[1].is_nan());
        // Integer means are f64; small integer sums promote like NumPy.
        let i = cx.from_slice(&[1i8, 2, 4]);
        assert_eq!(i.mean().dtype(), DType::F64);
        assert_eq!(i.sum().dtype(), DType::I64);
        assert_eq!(cx.from_slice(&[true, true, false]).sum().item::<i64>()?, 2);
        assert_eq!(cx.from_slice(&[200u8, 100]).sum().item::<u64>()?, 300);
    }
    Ok(())
}

#[test]
fn empty_reductions() -> Result<()> {
    for cx in backends() {
        let e = cx.zeros(&[0, 3], DType::F32);
        assert_eq!(e.sum_axis(0).to_vec::<f32>()?, vec![0.0; 3]);
        assert_eq!(e.prod_axis(0).to_vec::<f32>()?, vec![1.0; 3]);
        assert_eq!(e.sum().item::<f32>()?, 0.0);
        assert!(e.sum_axis(1).to_vec::<f32>()?.is_empty());
        let err = e.min().check().unwrap_err();
        assert!(
            err.to_string()
                .contains("zero-size array to reduction operation min"),
            "{err}"
        );
        assert!(e.max_axis(0).check().is_err());
        assert!(
            e.max_axis(1).check().is_ok(),
            "reducing a non-empty axis of an empty array is fine"
        );
    }
    Ok(())
}

#[test]
fn user_ufuncs_with_signatures() -> Result<()> {
    for cx in backends() {
        let disc = Ufunc::new("discriminant", |[a, b, c]: [Expr; 3]| {
            (b * b - 4.0 * a * c).sqrt()
        })
        .with_signatures(&["f32(f32,f32,f32)", "f64(f64,f64,f64)"])?;
        let a = cx.from_slice(&[1.0f32, 1.0]);
        let b = cx.from_slice(&[5.0f32, 4.0]);
        let c = cx.from_slice(&[2.0f32, 3.0]);
        let d = disc.call(&[&a, &b, &c]);
        assert_eq!(d.dtype(), DType::F32);
        assert_eq!(d.to_vec::<f32>()?, vec![17f32.sqrt(), 2.0]);
        // First match wins with safe casting: i16 casts safely to f32.
        let ai = cx.from_slice(&[1i16, 1]);
        assert_eq!(disc.call(&[&ai, &b, &c]).dtype(), DType::F32);
        // f64 arguments skip the f32 signature.
        let a64 = cx.from_slice(&[1.0f64, 1.0]);
        assert_eq!(disc.call(&[&a64, &b, &c]).dtype(), DType::F64);
        // NumPy counts i64 → f64 as safe, so the f64 signature takes it.
        let i64s = cx.from_slice(&[1i64, 1]);
        assert_eq!(disc.call(&[&i64s, &b, &c]).dtype(), DType::F64);
        // f64 does not cast safely to f32: no signature of an f32-only ufunc matches.
        let disc32 = disc.with_signatures(&["f32(f32,f32,f32)"])?;
        let err = disc32.call(&[&a64, &b, &c]).check().unwrap_err();
        assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
        assert!(err.to_string().contains("no signature matches"), "{err}");
        // Without signatures: NumPy promotion of the traced body.
        let poly = Ufunc::new("poly", |[x]: [Expr; 1]| x * x + 2 * x + 1);
        let xi = cx.from_slice(&[1i32, 2]);
        assert_eq!(poly.call(&[&xi]).to_vec::<i32>()?, vec![4, 9]);
        let clamp = Ufunc::new("clamp", |[x, lo]: [Expr; 2]| Expr::select(x.lt(lo), lo, x));
        let lo = cx.from_slice(&[0.0f64]);
        assert_eq!(
            clamp
                .call(&[&cx.from_slice(&[-1.0f64, 3.0]), &lo])
                .to_vec::<f64>()?,
            vec![0.0, 3.0]
        );
        let cast = Ufunc::new("to_int", |[x]: [Expr; 1]| x.floor().astype(DType::I8));
        assert_eq!(
            cast.call(&[&cx.from_slice(&[2.7f32])]).to_vec::<i8>()?,
            vec![2]
        );
    }
    Ok(())
}

#[test]
fn user_reducers() -> Result<()> {
    for cx in backends() {
        let x = cx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
        let sum = Reducer::new("sum", |a: Expr, b: Expr| a + b, 0.0);
        assert_eq!(sum.reduce(&(&x * &x)).item::<f32>()?, 30.0);
        let m = cx.from_vec(vec![1i32, 7, 3, 4, 5, 6], &[2, 3])?;
        let max = Reducer::new("max", |a: Expr, b: Expr| a.maximum(b), i32::MIN);
        assert_eq!(max.reduce_axis(&m, 0).to_vec::<i32>()?, vec![4, 7, 6]);
        assert_eq!(max.reduce_axis(&m, -1).to_vec::<i32>()?, vec![7, 6]);
        assert_eq!(max.reduce(&m).item::<i32>()?, 7);
        // Several axes in one reduction: axes 0 and 2 of a (2, 3, 2).
        let cube = cx.from_vec((0..12).collect::<Vec<i32>>(), &[2, 3, 2])?;
        let over = max.reduce_axes(&cube, &[2, 0]);
        assert_eq!(over.shape(), &[3]);
        assert_eq!(over.to_vec::<i32>()?, vec![7, 9, 11]);
        assert_eq!(max.reduce_axes(&cube, &[-1, 0, 1]).item::<i32>()?, 11);
        assert!(
            max.reduce_axes(&cube, &[0, -3]).check().is_err(),
            "axis 0 twice"
        );
        assert!(
            max.reduce_axes(&cube, &[3]).check().is_err(),
            "out of range"
        );
        let empty = cx.zeros(&[0], DType::F32);
        assert_eq!(
            sum.reduce(&empty).item::<f32>()?,
            0.0,
            "the identity of an empty reduction"
        );
        let h = cx.from_slice(&[lazyfuse::half::f16::from_f32(1.5); 3]);
        assert_eq!(sum.reduce(&h).item::<lazyfuse::half::f16>()?.to_f32(), 4.5);
    }
    Ok(())
}

#[test]
fn like_constructors_take_shape_and_dtype_and_allocate_nothing_until_read() -> Result<()> {
    for cx in common::backends() {
        let a = cx.from_vec(vec![1i16, 2, 3, 4, 5, 6], &[2, 3])?;
        let name = cx.backend_name();
        for (made, want) in [
            (cx.empty_like(&a), 0i16),
            (cx.zeros_like(&a), 0),
            (cx.ones_like(&a), 1),
            (cx.full_like(&a, 7.9), 7),
        ] {
            assert_eq!(
                (made.shape(), made.dtype()),
                (&[2usize, 3][..], DType::I16),
                "{name}"
            );
            assert_eq!(made.to_vec::<i16>()?, vec![want; 6], "{name}");
        }
        let e = cx.empty(&[4], DType::F32);
        cx.reset_stats();
        assert_eq!((&e + 1.0f32).to_vec::<f32>()?, vec![1.0; 4], "{name}");
        assert_eq!(
            cx.stats().h2d_copies,
            0,
            "{name}: generated where it is read"
        );
        let bad = cx.full(&[2], 1.5, DType::F32).astype(DType::Bool) - true;
        assert!(
            cx.zeros_like(&bad).check().is_err(),
            "{name}: the error of `like` is kept"
        );
    }
    Ok(())
}

#[test]
fn view_reads_each_elements_bits_as_another_dtype_on_every_backend() {
    let values = [1.5f32, -0.0, f32::INFINITY, -2.75, f32::NAN];
    let halves = [1.5f32, -0.0, 65504.0];
    for cx in common::backends() {
        let name = cx.backend_name();
        let a = cx.from_slice(&values);
        // Fused with work on both sides: (a * 1) viewed as i32, then + 0.
        let bits = ((&a * 1.0f32).view(DType::I32) + 0i32)
            .to_vec::<i32>()
            .unwrap();
        let want: Vec<i32> = values.iter().map(|v| v.to_bits() as i32).collect();
        assert_eq!(bits[..4], want[..4], "{name}");
        assert_eq!(bits[4] & 0x7f80_0000, 0x7f80_0000, "{name}: NaN bits");
        let back = cx
            .from_slice(&want)
            .view(DType::F32)
            .to_vec::<f32>()
            .unwrap();
        assert!(
            back[..4]
                .iter()
                .zip(&values)
                .all(|(p, q)| p.to_bits() == q.to_bits()),
            "{name}"
        );
        let h = cx.from_slice(&halves).astype(DType::F16).view(DType::U16);
        let want_h: Vec<u16> = halves
            .iter()
            .map(|&v| lazyfuse::half::f16::from_f32(v).to_bits())
            .collect();
        assert_eq!(h.to_vec::<u16>().unwrap(), want_h, "{name}");
        let err = a.view(DType::F64).check().unwrap_err().to_string();
        assert!(err.contains("view") && err.contains("same size"), "{err}");
    }
}

/// `x[region] = value` in plain Rust, row-major, for the tests below.
fn assigned_by_hand(
    mut target: Vec<f64>,
    shape: &[usize],
    region: &[lazyfuse::Region],
    value: impl Fn(&[usize]) -> f64,
) -> Vec<f64> {
    let total: usize = region.iter().map(|r| r.len).product();
    for flat in 0..total {
        let (mut rest, mut at, mut j) = (flat, 0usize, vec![0; region.len()]);
        for d in (0..region.len()).rev() {
            j[d] = rest % region[d].len;
            rest /= region[d].len;
        }
        for (d, r) in region.iter().enumerate() {
            at = at * shape[d] + (r.start + j[d] as i64 * r.step) as usize;
        }
        target[at] = value(&j);
    }
    target
}

#[test]
fn assign_region_writes_slices_with_steps_of_either_sign_and_broadcasts() -> Result<()> {
    use lazyfuse::{assign_region, Region};
    let shape = [4usize, 5];
    let base: Vec<f64> = (0..20).map(f64::from).collect();
    let cases: [(Vec<Region>, Vec<usize>); 4] = [
        // x[1:3, ::2] = value of shape (2, 3)
        (
            vec![
                Region {
                    start: 1,
                    step: 1,
                    len: 2,
                },
                Region {
                    start: 0,
                    step: 2,
                    len: 3,
                },
            ],
            vec![2, 3],
        ),
        // x[::-1, 4] = value of shape (4, 1), broadcast along nothing
        (
            vec![
                Region {
                    start: 3,
                    step: -1,
                    len: 4,
                },
                Region {
                    start: 4,
                    step: 1,
                    len: 1,
                },
            ],
            vec![4, 1],
        ),
        // x[2, 1:4] = value of shape (3,), one row
        (
            vec![
                Region {
                    start: 2,
                    step: 1,
                    len: 1,
                },
                Region {
                    start: 1,
                    step: 1,
                    len: 3,
                },
            ],
            vec![3],
        ),
        // x[:, 3:0:-2] = value of shape (1, 2), broadcast down the rows
        (
            vec![
                Region {
                    start: 0,
                    step: 1,
                    len: 4,
                },
                Region {
                    start: 3,
                    step: -2,
                    len: 2,
                },
            ],
            vec![1, 2],
        ),
    ];
    for cx in backends() {
        for (region, value_shape) in &cases {
            let n: usize = value_shape.iter().product();
            let values: Vec<f64> = (0..n).map(|i| 100.0 + i as f64).collect();
            let x = cx.from_vec(base.clone(), &shape)?;
            let value = cx.from_vec(values.clone(), value_shape)?;
            let written = assign_region(&x, region, &value)?;
            // The value is broadcast from the right: its axes are the region's last.
            let aligned: Vec<usize> = std::iter::repeat_n(1, 2 - value_shape.len())
                .chain(value_shape.iter().copied())
                .collect();
            let want = assigned_by_hand(base.clone(), &shape, region, |j| {
                let (r, c) = (j[0] % aligned[0], j[1] % aligned[1]);
                values[r * aligned[1] + c]
            });
            assert_eq!(
                written.to_vec::<f64>()?,
                want,
                "{} {region:?}",
                cx.backend_name()
            );
            assert_eq!(
                x.to_vec::<f64>()?,
                base,
                "the target's own value is unchanged"
            );
        }
    }
    Ok(())
}

#[test]
fn assign_region_casts_rebinds_and_refuses_bad_regions() -> Result<()> {
    use lazyfuse::{assign_region, Region};
    let cx = Context::sim();
    let x = cx.from_vec(vec![0i32; 6], &[6])?;
    // A float value cast to the target's dtype, as NumPy's assignment casts.
    let written = assign_region(
        &x,
        &[Region {
            start: 1,
            step: 1,
            len: 2,
        }],
        &cx.from_slice(&[2.7f64, -1.2]),
    )?;
    x.assign(&written)?;
    assert_eq!(x.to_vec::<i32>()?, [0, 2, -1, 0, 0, 0]);
    // The whole array: the value itself, no kernel.
    let whole = assign_region(
        &x,
        &[Region {
            start: 0,
            step: 1,
            len: 6,
        }],
        &cx.from_slice(&[5i32]),
    )?;
    assert_eq!(whole.to_vec::<i32>()?, [5; 6]);
    // An empty region leaves the array as it is.
    let none = assign_region(
        &x,
        &[Region {
            start: 0,
            step: 1,
            len: 0,
        }],
        &cx.from_slice(&[9i32]),
    )?;
    assert_eq!(none.to_vec::<i32>()?, [0, 2, -1, 0, 0, 0]);

    let outside = assign_region(
        &x,
        &[Region {
            start: 4,
            step: 1,
            len: 3,
        }],
        &cx.from_slice(&[1i32]),
    );
    let text = outside.unwrap_err().to_string();
    assert!(
        text.contains("assign_region")
            && text.contains("3 indices from 4")
            && text.contains("(6,)"),
        "{text}"
    );
    let rank = assign_region(&x, &[], &cx.from_slice(&[1i32]))
        .unwrap_err()
        .to_string();
    assert!(
        rank.contains("a region of 0 axes for an array of shape (6,)"),
        "{rank}"
    );
    let step = assign_region(
        &x,
        &[Region {
            start: 0,
            step: 0,
            len: 2,
        }],
        &cx.from_slice(&[1i32]),
    );
    assert!(step
        .unwrap_err()
        .to_string()
        .contains("a step other than 0"));
    let wide = assign_region(
        &x,
        &[Region {
            start: 0,
            step: 1,
            len: 2,
        }],
        &cx.from_slice(&[1i32, 2, 3]),
    );
    assert!(matches!(wide, Err(Error::ShapeMismatch { .. })), "{wide:?}");
    let other = Context::cpu().from_slice(&[1i32]);
    assert!(assign_region(
        &x,
        &[Region {
            start: 0,
            step: 1,
            len: 1
        }],
        &other
    )
    .is_err());
    Ok(())
}

/// `host_value` hands out the computed value itself (shared, not copied),
/// and nothing before it is computed; a kernel never writes it in place
/// while it is shared.
#[test]
fn host_value_is_the_kept_value_shared() -> Result<()> {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0]);
    let y = &a * 2.0;
    assert!(y.host_value().is_none(), "not computed yet");
    y.eval()?;
    let kept = y.host_value().expect("computed on the host");
    assert_eq!(kept.as_slice::<f32>(), Some(&[2.0f32, 4.0, 6.0][..]));
    let again = y.host_value().expect("still kept");
    assert!(std::sync::Arc::ptr_eq(&kept, &again));
    // Work reading it (which could write a dying input in place) leaves it.
    let z = (&y + 1.0).exp();
    z.eval()?;
    drop(y);
    assert_eq!(kept.as_slice::<f32>(), Some(&[2.0f32, 4.0, 6.0][..]));
    Ok(())
}

/// `Stats::host_copy_bytes` counts the copies at the host boundary and
/// nothing else: a borrowed slice taken in and a kept value read out are
/// copies; an owned `Vec` and a value computed straight into the caller's
/// memory are not.
#[test]
fn host_copies_at_the_boundary_are_counted() -> Result<()> {
    let cx = Context::cpu();
    let copied = || cx.stats().host_copy_bytes;
    let a = cx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
    assert_eq!(copied(), 16, "a borrowed slice is copied");
    let b = cx.from_vec(vec![1.0f64; 8], &[8])?;
    assert_eq!(copied(), 16, "an owned Vec is taken as it is");
    let mut out = [0.0f32; 4];
    (&a * 2.0).read_into(&mut out)?;
    assert_eq!(copied(), 16, "computed straight into `out`");
    let kept = &a + 1.0;
    kept.eval()?;
    kept.read_into(&mut out)?;
    assert_eq!(copied(), 32, "a kept value read out is copied");
    assert_eq!(b.to_vec::<f64>()?.len(), 8);
    assert_eq!(copied(), 32 + 64);
    Ok(())
}
