//! The `lf_*` entry points.

use std::ffi::{c_char, c_int, c_void};

use lazyfuse::core::half::{bf16, f16};
use lazyfuse::core::{BinaryOp, ReduceOp, UnaryOp};
use lazyfuse::{Array, Context, DType, HostBuffer, Operand, Scalar, Ufunc};

use crate::guard::{
    borrow, bytes_mut, give, give_string, guard, guard_free, last_error, slice, slice_mut, string,
    take_back, take_back_string, write, Failure,
};
use crate::{dtype_code, dtype_from_code, lf_array, lf_context, lf_dtype, lf_status, lf_ufunc};

/// Creates a context. `backend` is NULL or "auto" (CUDA if usable, else the
/// CPU), "cpu", "sim", "cuda" or "reference". On success `*out` owns the
/// context: free it with `lf_context_free`.
///
/// # Safety
/// `backend` is NULL or a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_context_new(
    backend: *const c_char,
    out: *mut *mut lf_context,
) -> lf_status {
    guard("lf_context_new", || {
        let name = if backend.is_null() {
            "auto"
        } else {
            string(backend, "backend")?
        };
        let context = Context::builder().backend(name).build()?;
        give(out, lf_context { context })
    })
}

/// Frees a context (NULL does nothing). Arrays made from it stay valid.
///
/// # Safety
/// `cx` is NULL or a context from `lf_context_new` not freed before.
#[no_mangle]
pub unsafe extern "C" fn lf_context_free(cx: *mut lf_context) {
    guard_free(|| take_back(cx));
}

/// Creates an array of `dtype` and `shape` (`ndim` extents, row-major) from
/// a copy of `data` (`prod(shape) * sizeof(element)` bytes; bools are bytes
/// 0 or 1). `*out` owns the array: free it with `lf_array_free`. `data` may
/// be reused or freed as soon as the call returns.
///
/// # Safety
/// `cx` is a live context; `shape` points to `ndim` values (or `ndim` is 0);
/// `data` points to the bytes described; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_array_from_data(
    cx: *mut lf_context,
    dtype: lf_dtype,
    shape: *const usize,
    ndim: usize,
    data: *const c_void,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_array_from_data", || {
        let cx = borrow(cx, "the context")?;
        let dtype = dtype_from_code(dtype).ok_or_else(|| {
            Failure::invalid(format!("unknown dtype code {dtype} (expected 0..=12)"))
        })?;
        let shape = slice(shape, ndim, "shape")?;
        let count = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()))
            .ok_or_else(|| Failure::invalid(format!("shape {shape:?} is too large")))?;
        let bytes = slice(data.cast::<u8>(), count, "data")?;
        let buffer = HostBuffer::from_bytes(dtype, bytes)?;
        let array = cx.context.from_buffer(buffer, shape)?;
        give(out, lf_array { array })
    })
}

/// Frees an array handle (NULL does nothing). Arrays built from it stay valid.
///
/// # Safety
/// `a` is NULL or an array from this library not freed before.
#[no_mangle]
pub unsafe extern "C" fn lf_array_free(a: *mut lf_array) {
    guard_free(|| take_back(a));
}

fn arrays<'a>(args: *const *const lf_array, nargs: usize) -> Result<Vec<&'a Array>, Failure> {
    slice(args, nargs, "args")?
        .iter()
        .enumerate()
        .map(|(i, &a)| borrow(a, &format!("args[{i}]")).map(|a| &a.array))
        .collect()
}

fn arity(op: &str, nargs: usize, expected: usize) -> Result<(), Failure> {
    if nargs == expected {
        Ok(())
    } else {
        Err(Failure::invalid(format!(
            "'{op}' takes {expected} arguments (got {nargs})"
        )))
    }
}

/// Applies an element-wise operation by its NumPy name ("add", "sqrt",
/// "arctan2", "where", "clip", "isclose" (rtol 1e-5, atol 1e-8),
/// "nan_to_num", ...; also "sub", "mul", "div", "pow", "neg", "abs", "eq",
/// "lt"...) to `nargs` arrays with broadcasting. Lazy: errors of shapes and dtypes
/// are reported here. `*out` owns the result.
///
/// # Safety
/// `op` is a NUL-terminated string; `args` points to `nargs` live arrays;
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_apply(
    op: *const c_char,
    args: *const *const lf_array,
    nargs: usize,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_apply", || {
        let op = string(op, "op")?;
        let args = arrays(args, nargs)?;
        let result = if op == "where" {
            arity(op, nargs, 3)?;
            args[0].where_(args[1], args[2])
        } else if op == "clip" {
            arity(op, nargs, 3)?;
            args[0].clip(args[1], args[2])
        } else if op == "isclose" {
            arity(op, nargs, 2)?;
            args[0].isclose(args[1], 1e-5, 1e-8)
        } else if op == "nan_to_num" {
            arity(op, nargs, 1)?;
            args[0].nan_to_num()
        } else if let Some(u) = UnaryOp::lookup(op) {
            arity(op, nargs, 1)?;
            args[0].apply_unary(u)
        } else if let Some(b) = BinaryOp::lookup(op) {
            arity(op, nargs, 2)?;
            args[0].apply_binary(b, Operand::from(args[1]))
        } else {
            return Err(Failure::invalid(format!(
                "unknown operation '{op}' (expected a NumPy ufunc name such as add, multiply, sqrt, \
                 arctan2, or where, clip, isclose, nan_to_num)"
            )));
        };
        result.check()?;
        give(out, lf_array { array: result })
    })
}

/// `a op scalar` for a binary operation (see `lf_apply`). The scalar is weak
/// (NumPy 2): it takes the array's type; an integral value with an integer
/// or bool array acts as an integer.
///
/// # Safety
/// `op` is a NUL-terminated string; `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_apply_scalar(
    op: *const c_char,
    a: *const lf_array,
    scalar: f64,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_apply_scalar", || {
        let name = string(op, "op")?;
        let a = &borrow(a, "the array")?.array;
        let op = BinaryOp::lookup(name).ok_or_else(|| {
            Failure::invalid(format!(
                "unknown binary operation '{name}' (expected e.g. add, mul, pow, lt)"
            ))
        })?;
        let integral = scalar.fract() == 0.0 && scalar.abs() < 9.0e15;
        let scalar = if integral && !a.dtype().is_float() {
            Scalar::Int(scalar as i128)
        } else {
            Scalar::Float(scalar)
        };
        let result = a.apply_binary(op, Operand::Scalar(scalar));
        result.check()?;
        give(out, lf_array { array: result })
    })
}

/// Makes a ufunc from an expression string over `nargs` named arguments,
/// e.g. `"sqrt(b*b - 4*a*c)"` with names {"a", "b", "c"}. Parse errors name
/// the column. `*out` owns the ufunc: free it with `lf_ufunc_free`.
///
/// # Safety
/// `expr` is a NUL-terminated string; `arg_names` points to `nargs` such
/// strings; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_ufunc_from_expr(
    expr: *const c_char,
    arg_names: *const *const c_char,
    nargs: usize,
    out: *mut *mut lf_ufunc,
) -> lf_status {
    guard("lf_ufunc_from_expr", || {
        let text = string(expr, "expr")?;
        let names = slice(arg_names, nargs, "arg_names")?
            .iter()
            .enumerate()
            .map(|(i, &p)| string(p, &format!("arg_names[{i}]")))
            .collect::<Result<Vec<&str>, Failure>>()?;
        let ufunc = Ufunc::parse("expr", text, &names)?;
        give(out, lf_ufunc { ufunc })
    })
}

/// Applies a ufunc to `nargs` arrays (lazy). `*out` owns the result.
///
/// # Safety
/// `f` is a live ufunc; `args` points to `nargs` live arrays; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_ufunc_call(
    f: *const lf_ufunc,
    args: *const *const lf_array,
    nargs: usize,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_ufunc_call", || {
        let f = &borrow(f, "the ufunc")?.ufunc;
        let args = arrays(args, nargs)?;
        let result = f.call(&args);
        result.check()?;
        give(out, lf_array { array: result })
    })
}

/// Frees a ufunc (NULL does nothing).
///
/// # Safety
/// `f` is NULL or a ufunc from `lf_ufunc_from_expr` not freed before.
#[no_mangle]
pub unsafe extern "C" fn lf_ufunc_free(f: *mut lf_ufunc) {
    guard_free(|| take_back(f));
}

/// The reductions `lf_reduce` takes by name besides the core's built-in
/// ones (`ReduceOp`) and their scans, over all axes or one.
const COMPOSED_REDUCTIONS: [&str; 7] = ["mean", "argmax", "argmin", "any", "all", "var", "std"];

/// Reduces `a` with "sum", "prod", "min", "max" or "mean": over all axes
/// when `all_axes`, else over `axis` (negative counts from the end). The
/// scans "cumsum", "cumprod", "cummax" and "cummin" keep the axis (over
/// all axes: of the flattened array). `*out` owns the result.
///
/// # Safety
/// `op` is a NUL-terminated string; `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_reduce(
    op: *const c_char,
    a: *const lf_array,
    axis: c_int,
    all_axes: bool,
    out: *mut *mut lf_array,
) -> lf_status {
    guard("lf_reduce", || {
        let op = string(op, "op")?;
        let a = &borrow(a, "the array")?.array;
        // The built-in reductions and their scans by the core's table
        // (`reduce_table!`); the rest are composed reductions by name.
        if let Some(builtin) = ReduceOp::from_name(op) {
            let result = match all_axes {
                true => a.apply_reduce(builtin),
                false => a.apply_reduce_axis(builtin, axis),
            };
            result.check()?;
            return give(out, lf_array { array: result });
        }
        if let Some(builtin) = ReduceOp::from_scan_name(op) {
            let result = match all_axes {
                true => a.reshape(&[a.len()]).apply_scan(builtin, 0),
                false => a.apply_scan(builtin, axis),
            };
            result.check()?;
            return give(out, lf_array { array: result });
        }
        let result = match (op, all_axes) {
            ("mean", true) => a.mean(),
            ("mean", false) => a.mean_axis(axis),
            ("argmax", true) => a.argmax(),
            ("argmin", true) => a.argmin(),
            ("argmax", false) => a.argmax_axis(axis),
            ("argmin", false) => a.argmin_axis(axis),
            ("any", true) => a.any(),
            ("all", true) => a.all(),
            ("any", false) => a.any_axis(axis),
            ("all", false) => a.all_axis(axis),
            ("var", true) => a.var(0),
            ("std", true) => a.std(0),
            ("var", false) => a.var_axis(axis, 0),
            ("std", false) => a.std_axis(axis, 0),
            ("count_nonzero", true) => a.count_nonzero(),
            ("nansum", true) => a.nansum(),
            ("nanmean", true) => a.nanmean(),
            ("nanmin", true) => a.nanmin(),
            ("nanmax", true) => a.nanmax(),
            _ => {
                let builtins = ReduceOp::ALL.iter().map(|op| op.name());
                let scans = ReduceOp::ALL.iter().map(|op| op.scan_name());
                let names: Vec<&str> = builtins.chain(COMPOSED_REDUCTIONS).chain(scans).collect();
                return Err(Failure::invalid(format!(
                    "unknown reduction '{op}' (expected {}, or over all axes count_nonzero, \
                     nansum, nanmean, nanmin, nanmax)",
                    names.join(", ")
                )));
            }
        };
        result.check()?;
        give(out, lf_array { array: result })
    })
}

/// Writes the number of dimensions to `*out`.
///
/// # Safety
/// `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_array_ndim(a: *const lf_array, out: *mut usize) -> lf_status {
    guard("lf_array_ndim", || {
        write(out, borrow(a, "the array")?.array.ndim(), "out")
    })
}

/// Writes the extents to `shape_out[0..ndim]`; `LF_ERROR_BUFFER_TOO_SMALL`
/// when `capacity < ndim`.
///
/// # Safety
/// `a` is a live array; `shape_out` is valid for `capacity` writes.
#[no_mangle]
pub unsafe extern "C" fn lf_array_shape(
    a: *const lf_array,
    shape_out: *mut usize,
    capacity: usize,
) -> lf_status {
    guard("lf_array_shape", || {
        let shape = borrow(a, "the array")?.array.shape();
        if capacity < shape.len() {
            return Err(Failure::too_small(format!(
                "capacity {capacity} is less than the {} dimensions",
                shape.len()
            )));
        }
        slice_mut(shape_out, shape.len(), "shape_out")?.copy_from_slice(shape);
        Ok(())
    })
}

/// Writes the dtype code to `*out`.
///
/// # Safety
/// `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_array_dtype(a: *const lf_array, out: *mut lf_dtype) -> lf_status {
    guard("lf_array_dtype", || {
        write(
            out,
            dtype_code(borrow(a, "the array")?.array.dtype()),
            "out",
        )
    })
}

/// Demands the array into `dst` (row-major): computed straight into it
/// when `dst` is aligned for the element type (no intermediate copy; bool
/// arrays, and unaligned destinations, are computed, then copied);
/// `LF_ERROR_BUFFER_TOO_SMALL` when `dst_bytes` is less than
/// `prod(shape) * sizeof(element)`. The value is kept for later demands.
///
/// # Safety
/// `a` is a live array; `dst` is valid for `dst_bytes` writes.
#[no_mangle]
pub unsafe extern "C" fn lf_array_read(
    a: *const lf_array,
    dst: *mut c_void,
    dst_bytes: usize,
) -> lf_status {
    guard("lf_array_read", || {
        let array = &borrow(a, "the array")?.array;
        let needed = array.len() * array.dtype().size();
        if dst_bytes < needed {
            return Err(Failure::too_small(format!(
                "the destination holds {dst_bytes} bytes but the result needs {needed}"
            )));
        }
        read_bytes_into(array, bytes_mut(dst, needed, "dst")?)
    })
}

/// Computes the `n` arrays of `arrays` in one program (work they share
/// runs once: Black–Scholes' call and put are one kernel) and keeps their
/// values, so that `lf_array_read` of each copies it out. All must belong
/// to one context.
///
/// # Safety
/// `arrays` points to `n` live arrays.
#[no_mangle]
pub unsafe extern "C" fn lf_eval(arrays_: *const *const lf_array, n: usize) -> lf_status {
    guard("lf_eval", || {
        let arrays = arrays(arrays_, n)?;
        let Some(first) = arrays.first() else {
            return Ok(());
        };
        Ok(first.session().eval(&arrays)?)
    })
}

/// Computes `array` into `dst` (exactly its bytes): through a typed view
/// of `dst` where its alignment allows one, else by a copy.
fn read_bytes_into(array: &Array, dst: &mut [u8]) -> Result<(), Failure> {
    macro_rules! typed {
        ($t:ty) => {
            if let Ok(values) = bytemuck::try_cast_slice_mut::<u8, $t>(dst) {
                return Ok(array.read_into::<$t>(values)?);
            }
        };
    }
    match array.dtype() {
        DType::F16 => typed!(f16),
        DType::BF16 => typed!(bf16),
        DType::F32 => typed!(f32),
        DType::F64 => typed!(f64),
        DType::I8 => typed!(i8),
        DType::I16 => typed!(i16),
        DType::I32 => typed!(i32),
        DType::I64 => typed!(i64),
        DType::U8 => typed!(u8),
        DType::U16 => typed!(u16),
        DType::U32 => typed!(u32),
        DType::U64 => typed!(u64),
        // Bytes are not bools (a byte of 2 is no bool): copied.
        DType::Bool => {}
    }
    let host = array.to_host()?;
    dst.copy_from_slice(host.as_bytes());
    Ok(())
}

/// Writes a description of how the array would be computed (graph, fused
/// kernels, planned copies) to `*out`; free it with `lf_string_free`.
///
/// # Safety
/// `a` is a live array; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn lf_array_explain(a: *const lf_array, out: *mut *mut c_char) -> lf_status {
    guard("lf_array_explain", || {
        give_string(out, &borrow(a, "the array")?.array.explain())
    })
}

/// Frees a string returned by lazyfuse (NULL does nothing).
///
/// # Safety
/// `s` is NULL or a string from `lf_array_explain` not freed before.
#[no_mangle]
pub unsafe extern "C" fn lf_string_free(s: *mut c_char) {
    guard_free(|| take_back_string(s));
}

/// The message of the last failed call on this thread ("" after a
/// success). Valid until the next lazyfuse call on this thread.
#[no_mangle]
pub extern "C" fn lf_last_error_message() -> *const c_char {
    last_error()
}
