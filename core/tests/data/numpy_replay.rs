//! Replays the NumPy 2.x case table (`numpy_cases.json`, made by
//! `gen_numpy_cases.py`) through the Array API on a session: shared by
//! core's test (the reference evaluator) and the facade's (every backend).
//! Exactly-rounded operations must match bit for bit (NaN matches NaN, and
//! the sign of zero counts); the others within 4 ulp.

use lazyfuse_core::{
    with_dtype, Array, BinaryOp, DType, Element, Operand, Scalar, Session, UnaryOp, Wide,
};
use serde_json::Value;

/// The table: beside this file, from core's manifest or the workspace root's.
fn table_text() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        "tests/data/numpy_cases.json",
        "core/tests/data/numpy_cases.json",
    ]
    .iter()
    .map(|p| root.join(p))
    .find_map(|p| std::fs::read_to_string(p).ok())
    .expect("numpy_cases.json beside numpy_replay.rs")
}

fn wide(text: &str) -> Wide {
    match text.parse::<i128>() {
        Ok(v) => Wide::Int(v),
        Err(_) => Wide::Float(text.parse::<f64>().expect("float in case table")),
    }
}

fn array(cx: &Session, desc: &Value) -> Array {
    let dtype: DType = desc["dtype"].as_str().unwrap().parse().unwrap();
    let shape: Vec<usize> = desc["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let values: Vec<Wide> = desc["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| wide(v.as_str().unwrap()))
        .collect();
    let buffer =
        with_dtype!(dtype, T => T::into_buffer(values.iter().map(|&w| T::from_wide(w)).collect()));
    cx.from_buffer(buffer, &shape).unwrap()
}

fn operand(cx: &Session, desc: &Value) -> Operand {
    match desc.get("scalar").and_then(Value::as_str) {
        Some(kind) => {
            let text = desc["value"].as_str().unwrap();
            Operand::Scalar(match kind {
                "bool" => Scalar::Bool(text == "1"),
                "int" => Scalar::Int(text.parse().unwrap()),
                _ => Scalar::Float(text.parse().unwrap()),
            })
        }
        None => Operand::Array(array(cx, desc)),
    }
}

fn read(a: &Array) -> lazyfuse_core::Result<Vec<Wide>> {
    with_dtype!(a.dtype(), T => a.to_vec::<T>().map(|v| v.into_iter().map(Element::to_wide).collect()))
}

fn ulps(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 2.0f64.powi(-10),
        DType::BF16 => 2.0f64.powi(-7),
        DType::F32 => 2.0f64.powi(-23),
        _ => 2.0f64.powi(-52),
    }
}

fn same(got: Wide, want: Wide, exact: bool, dtype: DType) -> bool {
    match (got, want) {
        (Wide::Int(g), Wide::Int(w)) => g == w,
        (g, w) => {
            let (g, w) = (g.as_f64(), w.as_f64());
            if g.is_nan() || w.is_nan() {
                return g.is_nan() && w.is_nan();
            }
            if exact || g == w {
                return g.to_bits() == w.to_bits() || (g == w && !exact);
            }
            let tolerance = 4.0 * ulps(dtype) * w.abs().max(f64::MIN_POSITIVE);
            (g - w).abs() <= tolerance
        }
    }
}

fn build(cx: &Session, case: &Value) -> Array {
    let op = case["op"].as_str().unwrap();
    let args = case["args"].as_array().unwrap();
    match case["kind"].as_str().unwrap() {
        "binary" => {
            let op = BinaryOp::from_name(op).unwrap_or_else(|| panic!("unknown op {op}"));
            match (operand(cx, &args[0]), operand(cx, &args[1])) {
                (Operand::Array(a), rhs) => a.apply_binary(op, rhs),
                (lhs, Operand::Array(b)) => left_scalar(op, lhs, &b),
                _ => unreachable!("the table has no scalar-scalar cases"),
            }
        }
        "unary" if op == "nan_to_num" => array(cx, &args[0]).nan_to_num(),
        "unary" => array(cx, &args[0])
            .apply_unary(UnaryOp::from_name(op).unwrap_or_else(|| panic!("unknown op {op}"))),
        "clip" => array(cx, &args[0]).clip(operand(cx, &args[1]), operand(cx, &args[2])),
        "isclose" => {
            let tolerance = |key: &str| args[2][key].as_str().unwrap().parse::<f64>().unwrap();
            array(cx, &args[0]).isclose(operand(cx, &args[1]), tolerance("rtol"), tolerance("atol"))
        }
        "astype" => array(cx, &args[0]).astype(op.parse().unwrap()),
        "create" => {
            let p = &args[0];
            let dtype: DType = p["dtype"].as_str().unwrap().parse().unwrap();
            let number = |key: &str| p[key].as_str().unwrap().parse::<f64>().unwrap();
            match op {
                "linspace" => cx.linspace(
                    number("start"),
                    number("stop"),
                    p["num"].as_u64().unwrap() as usize,
                    dtype,
                ),
                "eye" => cx.eye(p["n"].as_u64().unwrap() as usize, dtype),
                other => panic!("unknown constructor {other}"),
            }
        }
        "where" => array(cx, &args[0]).where_(operand(cx, &args[1]), operand(cx, &args[2])),
        "reduce" if op.ends_with("_axes") => {
            let a = array(cx, &args[0]);
            let axes: Vec<isize> = args[1]["axes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap() as isize)
                .collect();
            let keepdims = args[1]["keepdims"].as_bool().unwrap();
            match op {
                "sum_axes" => a.sum_axes(&axes, keepdims),
                "prod_axes" => a.prod_axes(&axes, keepdims),
                "min_axes" => a.min_axes(&axes, keepdims),
                "max_axes" => a.max_axes(&axes, keepdims),
                "mean_axes" => a.mean_axes(&axes, keepdims),
                "any_axes" => a.any_axes(&axes, keepdims),
                "all_axes" => a.all_axes(&axes, keepdims),
                other => panic!("unknown reduction {other}"),
            }
        }
        "reduce" => {
            let a = array(cx, &args[0]);
            let ddof = args[1]["ddof"].as_u64().unwrap_or(0) as usize;
            match (op, args[1]["axis"].as_i64()) {
                ("cumsum", Some(x)) => a.cumsum(x),
                ("cumprod", Some(x)) => a.cumprod(x),
                ("argmax", None) => a.argmax(),
                ("argmin", None) => a.argmin(),
                ("argmax", Some(x)) => a.argmax_axis(x),
                ("argmin", Some(x)) => a.argmin_axis(x),
                ("any", None) => a.any(),
                ("all", None) => a.all(),
                ("any", Some(x)) => a.any_axis(x),
                ("all", Some(x)) => a.all_axis(x),
                ("count_nonzero", None) => a.count_nonzero(),
                ("var", None) => a.var(ddof),
                ("std", None) => a.std(ddof),
                ("var", Some(x)) => a.var_axis(x, ddof),
                ("std", Some(x)) => a.std_axis(x, ddof),
                ("nansum", None) => a.nansum(),
                ("nanmean", None) => a.nanmean(),
                ("nanmin", None) => a.nanmin(),
                ("nanmax", None) => a.nanmax(),
                ("sum", None) => a.sum(),
                ("prod", None) => a.prod(),
                ("min", None) => a.min(),
                ("max", None) => a.max(),
                ("mean", None) => a.mean(),
                ("sum", Some(x)) => a.sum_axis(x),
                ("prod", Some(x)) => a.prod_axis(x),
                ("min", Some(x)) => a.min_axis(x),
                ("max", Some(x)) => a.max_axis(x),
                ("mean", Some(x)) => a.mean_axis(x),
                other => panic!("unknown reduction {other:?}"),
            }
        }
        other => panic!("unknown case kind {other}"),
    }
}

/// `s op b`: through the public operators where they exist (i64 on the left), else the builder.
fn left_scalar(op: BinaryOp, lhs: Operand, b: &Array) -> Array {
    match (op, &lhs) {
        (BinaryOp::Add, Operand::Scalar(Scalar::Int(v))) => *v as i64 + b,
        (BinaryOp::Sub, Operand::Scalar(Scalar::Int(v))) => *v as i64 - b,
        (BinaryOp::Mul, Operand::Scalar(Scalar::Int(v))) => *v as i64 * b,
        (BinaryOp::Div, Operand::Scalar(Scalar::Int(v))) => *v as i64 / b,
        (BinaryOp::Rem, Operand::Scalar(Scalar::Int(v))) => *v as i64 % b,
        _ => b.apply_binary_reversed(op, lhs),
    }
}

/// Runs every case on `cx`: the number of cases, and one line per case
/// that differs from NumPy (in the table's order). The cases are spread over
/// the machine's cores: a device backend compiles a kernel for most of them,
/// and its compiler runs as well in parallel.
pub fn replay(cx: &Session) -> (usize, Vec<String>) {
    let text = table_text();
    let table: Value = serde_json::from_str(&text).unwrap();
    let cases = table["cases"].as_array().unwrap();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut failures: Vec<(usize, String)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..cases.len())
                        .step_by(threads)
                        .filter_map(|i| check(cx, &cases[i]).map(|failure| (i, failure)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    failures.sort_by_key(|(i, _)| *i);
    (
        cases.len(),
        failures.into_iter().map(|(_, failure)| failure).collect(),
    )
}

/// Runs one case on `cx`: how it differs from NumPy, if it does.
fn check(cx: &Session, case: &Value) -> Option<String> {
    let result = build(cx, case);
    let out = &case["out"];
    let label = format!(
        "{} {} {}",
        case["kind"].as_str().unwrap(),
        case["op"].as_str().unwrap(),
        serde_json::to_string(&case["args"]).unwrap()
    );
    if out.get("error").is_some() {
        return result.check().is_ok().then(|| {
            format!(
                "{label}: NumPy raises {}, we built {:?}",
                out["error"], result
            )
        });
    }
    let want_dtype: DType = out["dtype"].as_str().unwrap().parse().unwrap();
    let want_shape: Vec<usize> = out["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let want: Vec<Wide> = out["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| wide(v.as_str().unwrap()))
        .collect();
    match read(&result) {
        Err(e) => Some(format!("{label}: error {e}")),
        Ok(_) if result.dtype() != want_dtype || result.shape() != want_shape.as_slice() => {
            Some(format!(
                "{label}: got {}{:?}, NumPy {}{:?}",
                result.dtype(),
                result.shape(),
                want_dtype,
                want_shape
            ))
        }
        Ok(got) => (!got
            .iter()
            .zip(&want)
            .all(|(g, w)| same(*g, *w, case["exact"].as_bool().unwrap(), want_dtype)))
        .then(|| format!("{label}: got {got:?}, NumPy {want:?}")),
    }
}
