//! How a kernel's `print` writes its values, in one place for the CUDA
//! printer (`printf` with a format string) and the simulator (which
//! formats the same way on the host): integers in decimal, floats as C's
//! `%f` (six decimals; `inf`, `nan`), bools as `True`/`False`, as Numba's
//! CUDA `print` does. Each thread writes one line.

use lazyfuse_core::{DType, Element, HostBuffer};

use crate::ir::{Expr, PrintPiece};

/// How a value of a dtype reaches `printf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spec {
    /// `%lld` of the value cast to `long long`.
    Signed,
    /// `%llu` of the value cast to `unsigned long long`.
    Unsigned,
    /// `%f` of the value cast to `double`.
    Float,
    /// `%s` of `"True"` or `"False"`.
    Bool,
}

fn spec(dtype: DType) -> Spec {
    match dtype {
        DType::Bool => Spec::Bool,
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => Spec::Signed,
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => Spec::Unsigned,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 => Spec::Float,
    }
}

/// The C string literal of `text` for a format string (`%` doubled).
fn c_literal(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '%' => out.push_str("%%"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii_graphic() || c == ' ' => out.push(c),
            c => {
                let mut bytes = [0u8; 4];
                for b in c.encode_utf8(&mut bytes).bytes() {
                    // An octal escape cannot swallow the next character.
                    out.push_str(&format!("\\{b:03o}"));
                }
            }
        }
    }
    out
}

/// The format string (a C literal) and the arguments (each after a
/// comma) of the `printf` that prints `pieces` and a newline; `expr`
/// prints an expression.
pub fn cuda_call(pieces: &[PrintPiece], mut expr: impl FnMut(&Expr) -> String) -> (String, String) {
    let (mut format, mut args) = (String::new(), String::new());
    for piece in pieces {
        match piece {
            PrintPiece::Text(text) => format.push_str(&c_literal(text)),
            PrintPiece::Value(e, dtype) => {
                let value = expr(e);
                let (conversion, arg) = match (spec(*dtype), dtype) {
                    (Spec::Signed, _) => ("%lld", format!("(long long)({value})")),
                    (Spec::Unsigned, _) => ("%llu", format!("(unsigned long long)({value})")),
                    (Spec::Float, DType::F16) => ("%f", format!("(double)__half2float({value})")),
                    (Spec::Float, DType::BF16) => {
                        ("%f", format!("(double)__bfloat162float({value})"))
                    }
                    (Spec::Float, _) => ("%f", format!("(double)({value})")),
                    (Spec::Bool, _) => ("%s", format!("({value}) ? \"True\" : \"False\"")),
                };
                format.push_str(conversion);
                args.push_str(", ");
                args.push_str(&arg);
            }
        }
    }
    (format!("\"{format}\\n\""), args)
}

/// Element `i` of a buffer (its only one when it holds one) as `printf`
/// writes it.
pub fn host_value(buffer: &HostBuffer, i: usize) -> String {
    let i = if buffer.len() == 1 { 0 } else { i };
    let wide = buffer.cast(DType::F64);
    let float = <f64 as Element>::slice_of(&wide).map_or(0.0, |v| v[i]);
    match spec(buffer.dtype()) {
        Spec::Bool => if float != 0.0 { "True" } else { "False" }.to_string(),
        Spec::Signed => integer(buffer, i, DType::I64),
        Spec::Unsigned => integer(buffer, i, DType::U64),
        Spec::Float if float.is_nan() => "nan".to_string(),
        Spec::Float if float.is_infinite() => if float > 0.0 { "inf" } else { "-inf" }.to_string(),
        Spec::Float => format!("{float:.6}"),
    }
}

fn integer(buffer: &HostBuffer, i: usize, wide: DType) -> String {
    let cast = buffer.cast(wide);
    match wide {
        DType::U64 => <u64 as Element>::slice_of(&cast).map_or(String::new(), |v| v[i].to_string()),
        _ => <i64 as Element>::slice_of(&cast).map_or(String::new(), |v| v[i].to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_core::Literal;

    #[test]
    fn the_format_string_escapes_text_and_converts_each_dtype() {
        let pieces = vec![
            PrintPiece::Text("100% \"x\" ".into()),
            PrintPiece::Value(Expr::Const(Literal::of(3i32)), DType::I32),
            PrintPiece::Text(" ".into()),
            PrintPiece::Value(Expr::Const(Literal::of(true)), DType::Bool),
            PrintPiece::Value(Expr::Const(Literal::of(7u8)), DType::U8),
            PrintPiece::Value(Expr::Const(Literal::of(0.5f32)), DType::F32),
        ];
        let (format, args) = cuda_call(&pieces, |_| "v".to_string());
        assert_eq!(format, "\"100%% \\\"x\\\" %lld %s%llu%f\\n\"");
        assert_eq!(
            args,
            ", (long long)(v), (v) ? \"True\" : \"False\", (unsigned long long)(v), (double)(v)"
        );
    }

    #[test]
    fn the_host_writes_values_as_printf_does() {
        let floats = HostBuffer::F32(vec![34.75, f32::NAN, f32::NEG_INFINITY]);
        let written: Vec<String> = (0..3).map(|i| host_value(&floats, i)).collect();
        assert_eq!(written, ["34.750000", "nan", "-inf"]);
        assert_eq!(
            host_value(&HostBuffer::U64(vec![u64::MAX]), 0),
            u64::MAX.to_string()
        );
        assert_eq!(host_value(&HostBuffer::I8(vec![-5, 6]), 1), "6");
        assert_eq!(host_value(&HostBuffer::Bool(vec![false, true]), 1), "True");
    }
}
