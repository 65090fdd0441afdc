//! Bad input gets an `Error` naming the operation, shapes and dtypes, never a
//! panic; an invalid node poisons only the expressions that use it.

mod common;

use common::backends;
use lazyfuse::{Context, DType, Error, Expr, Reducer, Ufunc};

fn message(e: &Error) -> String {
    e.to_string()
}

#[test]
fn non_broadcastable_shapes() {
    let cx = Context::cpu();
    let a = cx.zeros(&[2, 3], DType::F32);
    let b = cx.zeros(&[4], DType::F32);
    let c = &a + &b;
    let err = c.check().unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err:?}");
    let text = message(&err);
    assert!(text.starts_with("add:"), "{text}");
    assert!(text.contains("(2, 3) (4,)"), "{text}");
    assert!(c.to_vec::<f32>().is_err());
    assert!(c.sum().item::<f32>().is_err(), "poison propagates to users");
    // Valid siblings still work.
    assert_eq!((&a * 2.0).sum().item::<f32>().unwrap(), 0.0);
}

#[test]
fn wrong_element_type_on_demand() {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1.0f32, 2.0]);
    let err = a.to_vec::<f64>().unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }));
    assert!(
        message(&err).contains("to_vec: the array has dtype f32 (shape (2,)) but a Vec of f64"),
        "{err}"
    );
    assert!(a.read_into(&mut [0i32; 2]).is_err());
    let err = a.read_into(&mut [0f32; 3]).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    assert!(a.sum().item::<f64>().is_err());
}

#[test]
fn item_of_a_non_scalar() {
    let cx = Context::cpu();
    let err = cx.zeros(&[2, 2], DType::F32).item::<f32>().unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }));
    assert!(
        message(&err).contains("item: can only convert an array of size 1"),
        "{err}"
    );
    assert_eq!(cx.ones(&[1, 1], DType::F32).item::<f32>().unwrap(), 1.0);
}

#[test]
fn axis_out_of_range() {
    let cx = Context::cpu();
    let a = cx.zeros(&[2, 3], DType::F32);
    for bad in [a.sum_axis(2), a.max_axis(-3), a.mean_axis(usize::MAX)] {
        let err = bad.check().unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
        assert!(message(&err).contains("out of"), "{err}");
    }
}

#[test]
fn views_with_bad_shapes() {
    let cx = Context::cpu();
    let a = cx.zeros(&[2, 3], DType::F32);
    let err = a.reshape(&[4]).check().unwrap_err();
    assert!(
        message(&err)
            .contains("cannot reshape an array of shape (2, 3) (6 elements) into shape (4,)"),
        "{err}"
    );
    assert!(a.permute(&[0, 0]).check().is_err());
    assert!(a.permute(&[0]).check().is_err());
    assert!(a.broadcast_to(&[3, 3]).check().is_err());
    assert!(a.broadcast_to(&[3]).check().is_err());
    assert!(cx.from_vec(vec![1.0f32; 5], &[2, 3]).is_err());
}

#[test]
fn sizes_that_overflow() {
    let cx = Context::cpu();
    let err = cx.zeros(&[usize::MAX, 2], DType::F32).check().unwrap_err();
    assert!(message(&err).contains("too large"), "{err}");
    let a = cx.zeros(&[1 << 40, 1], DType::F64);
    let b = cx.zeros(&[1 << 40], DType::F64);
    assert!(
        (&a + &b).check().is_err(),
        "the broadcast shape's byte size overflows"
    );
    assert!(cx.arange(0.0, 1.0, 0.0, DType::F32).check().is_err());
}

#[test]
fn ufunc_arity_and_signature_mismatch() {
    let cx = Context::cpu();
    let f = Ufunc::new("f", |[a, b]: [Expr; 2]| a + b);
    let x = cx.from_slice(&[1.0f32]);
    let err = f.call(&[&x]).check().unwrap_err();
    assert!(
        message(&err).contains("ufunc 'f': takes 2 arguments (got 1)"),
        "{err}"
    );
    assert!(f.call(&[]).check().is_err());
    assert!(f.with_signatures(&["f32(f32)"]).is_err(), "signature arity");
    assert!(f.with_signatures(&["f32(f32,"]).is_err(), "unparsable");
    assert!(
        f.with_signatures(&["q8(f32,f32)"]).is_err(),
        "unknown dtype"
    );
    let g = f.with_signatures(&["i32(i32,i32)"]).unwrap();
    let err = g.call(&[&x, &x]).check().unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }));
    assert!(message(&err).contains("f32(1,), f32(1,)"), "{err}");
    // A type error inside the body names the ufunc.
    let h = Ufunc::new("h", |[a, b]: [Expr; 2]| a - b);
    let t = cx.from_slice(&[true]);
    let err = h.call(&[&t, &t]).check().unwrap_err();
    assert!(message(&err).contains("ufunc 'h'"), "{err}");
    assert!(message(&err).contains("subtract"), "{err}");
}

#[test]
fn reducers_on_unsupported_dtypes() {
    let cx = Context::cpu();
    let half_identity = Reducer::new("r", |a: Expr, b: Expr| a + b, 0.5);
    let ints = cx.from_slice(&[1i32, 2]);
    let err = half_identity.reduce(&ints).check().unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }));
    assert!(message(&err).contains("reducer 'r'"), "{err}");
    let negative = Reducer::new("n", |a: Expr, b: Expr| a + b, -1);
    assert!(negative.reduce(&cx.from_slice(&[1u8])).check().is_err());
    let sub = Reducer::new("sub", |a: Expr, b: Expr| a - b, false);
    assert!(
        sub.reduce(&cx.from_slice(&[true])).check().is_err(),
        "bool subtract"
    );
    let div = Reducer::new("div", |a: Expr, b: Expr| a / b, 1);
    let err = div.reduce(&ints).check().unwrap_err();
    assert!(
        message(&err).contains("gives f64 for two i32 operands"),
        "{err}"
    );
    assert!(half_identity
        .reduce_axis(&cx.from_slice(&[1.0f32]), 1)
        .check()
        .is_err());
}

#[test]
fn bad_scalars_and_dtypes() {
    let cx = Context::cpu();
    let a = cx.from_slice(&[1i8]);
    let err = (&a + 300).check().unwrap_err();
    assert!(
        message(&err).contains("300 is out of bounds for i8"),
        "{err}"
    );
    assert!((&cx.from_slice(&[1u8]) - (-1)).check().is_err());
    // Comparisons with out-of-range integers are answered, as NumPy 2 does.
    assert_eq!(a.lt(1000).to_vec::<bool>().unwrap(), vec![true]);
    let t = cx.from_slice(&[true]);
    assert!((-&t).check().is_err());
    assert!(t.sign().check().is_err());
    assert!(cx.full(&[1], 300, DType::I8).check().is_err());
}

#[test]
fn arrays_of_different_contexts() {
    let a = Context::cpu().from_slice(&[1.0f32]);
    let b = Context::cpu().from_slice(&[1.0f32]);
    let err = (&a + &b).check().unwrap_err();
    assert!(message(&err).contains("different contexts"), "{err}");
    assert!(Context::cpu().eval(&[&a]).is_err());
}

#[test]
fn nothing_panics_on_any_backend() {
    for cx in backends() {
        let a = cx.zeros(&[0], DType::F32);
        let _ = a.min().item::<f32>();
        let _ = a.reshape(&[1]).to_vec::<f32>();
        let _ = a.transpose().sum().item::<f32>();
        let _ = cx.zeros(&[3], DType::Bool).sub(true).to_vec::<bool>();
    }
}
