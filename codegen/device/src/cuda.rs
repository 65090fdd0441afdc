//! The CUDA C printer: a [`DeviceProgram`] as one NVRTC translation unit.
//!
//! The output is stable (the same program prints the same text) and meant to
//! be read: registers are `v<N>` declared where first set, every element
//! operation is a call of the prelude's `lf_<op>` overload for its type (so
//! its semantics live in one place), index arithmetic is plain C.

use std::fmt::Write;

use lazyfuse_core::{BinaryOp, DType, Literal, UnaryClass, UnaryOp, Wide};

use super::ir::{AtomicTarget, DeviceKernel, DeviceProgram, Expr, ParamKind, Stmt, WarpOp};

const PRELUDE: &str = include_str!("prelude.cuh");

/// The C type of an element.
pub fn c_type(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 => "__half",
        DType::BF16 => "__nv_bfloat16",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I8 => "signed char",
        DType::I16 => "short",
        DType::I32 => "int",
        DType::I64 => "long long",
        DType::U8 => "unsigned char",
        DType::U16 => "unsigned short",
        DType::U32 => "unsigned int",
        DType::U64 => "unsigned long long",
        DType::Bool => "bool",
    }
}

/// The CUDA vector type of `width` elements of `dtype` (16 bytes) and its fields.
fn vector_type(dtype: DType, width: usize) -> (&'static str, &'static [&'static str]) {
    const XYZW: &[&str] = &["x", "y", "z", "w"];
    let name = match (dtype, width) {
        (DType::F32, 4) => "float4",
        (DType::I32, 4) => "int4",
        (DType::U32, 4) => "uint4",
        (DType::F64, 2) => "double2",
        (DType::I64, 2) => "longlong2",
        (DType::U64, 2) => "ulonglong2",
        _ => "unsupported_vector",
    };
    (name, &XYZW[..width.min(4)])
}

/// The prelude: the value semantics of every element operation.
pub fn prelude() -> String {
    let mut text = PRELUDE.to_string();
    for (half, to_float, from_float, bits) in [
        ("__half", "__half2float", "__float2half_rn", "half"),
        (
            "__nv_bfloat16",
            "__bfloat162float",
            "__float2bfloat16_rn",
            "bfloat16",
        ),
    ] {
        // Operations of floats only: not `logical_not` (bool) or `invert` (integers).
        for op in UnaryOp::ALL
            .iter()
            .filter(|op| !matches!(op.class(), UnaryClass::Logical | UnaryClass::Bitwise))
        {
            let name = op.name();
            let _ = if op.is_predicate() {
                writeln!(
                    text,
                    "LF_D bool lf_{name}({half} a) {{ return lf_{name}({to_float}(a)); }}"
                )
            } else {
                writeln!(
                    text,
                    "LF_D {half} lf_{name}({half} a) {{ return {from_float}(lf_{name}({to_float}(a))); }}"
                )
            };
        }
        for op in BinaryOp::ALL
            .iter()
            .filter(|op| !op.is_logical() && !op.is_bitwise() && !op.is_integer_only())
        {
            let name = op.name();
            let (a, b) = (format!("{to_float}(a)"), format!("{to_float}(b)"));
            let _ = match op {
                _ if op.is_comparison() => writeln!(
                    text,
                    "LF_D bool lf_{name}({half} a, {half} b) {{ return lf_{name}({a}, {b}); }}"
                ),
                // NumPy's half minimum/maximum keep the first of two equal values.
                BinaryOp::Minimum | BinaryOp::Maximum => {
                    let keep = if *op == BinaryOp::Minimum { "<=" } else { ">=" };
                    writeln!(
                        text,
                        "LF_D {half} lf_{name}({half} a, {half} b) {{ return (isnan({a}) || {a} {keep} {b}) ? a : b; }}"
                    )
                }
                // One step of the bits, as NumPy's half nextafter (`a` of equal values).
                BinaryOp::Nextafter => writeln!(
                    text,
                    "LF_D {half} lf_{name}({half} a, {half} b) {{ \
                     if (isnan({a}) || isnan({b})) return {from_float}({a} + {b}); \
                     if ({a} == {b}) return a; \
                     return __ushort_as_{bits}(lf_half_step(__{bits}_as_ushort(a), __{bits}_as_ushort(b))); }}"
                ),
                _ => writeln!(
                    text,
                    "LF_D {half} lf_{name}({half} a, {half} b) {{ return {from_float}(lf_{name}({a}, {b})); }}"
                ),
            };
        }
    }
    text
}

/// The complete translation unit: the prelude, then every kernel.
pub fn print(program: &DeviceProgram) -> String {
    prelude() + &print_kernels(program)
}

/// The program's kernels alone (they need the [`prelude`] before them).
pub fn print_kernels(program: &DeviceProgram) -> String {
    let mut text = String::new();
    for kernel in &program.kernels {
        text.push('\n');
        print_kernel(&mut text, kernel);
    }
    text
}

/// Threads each multiprocessor should keep resident for a generated
/// kernel: half of what an sm_80 or sm_90 multiprocessor holds, which lets
/// ptxas use up to 64 registers per thread. Without a minimum, ptxas for
/// sm_90 (NVRTC 12.9) caps f64 transcendental kernels at 40 registers and
/// spills (an `exp` of f64 stored 28 bytes); with it they take 56 and spill
/// nothing, while sm_80 is unchanged.
const RESIDENT_THREADS: u32 = 1024;

/// Inputs past which a kernel asks for one resident block only: the
/// compiler issues every input's load early to hide its latency, so a body
/// of a hundred loads (an unrolled reduction: k-means' centroids) keeps a
/// hundred values live; ptxas for sm_90 then spills kilobytes under a
/// 64-register cap, and nothing with the whole register file. Past half
/// a quarter as many (pairwise distances: 16), it gets 128 registers.
const MANY_INPUTS: usize = 32;

/// The second argument of `__launch_bounds__` for `kernel`.
pub fn min_blocks_per_multiprocessor(kernel: &DeviceKernel) -> u32 {
    let inputs = kernel
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Input(_)))
        .count();
    let threads = match inputs {
        i if i > MANY_INPUTS => kernel.block,
        i if i > MANY_INPUTS / 4 => RESIDENT_THREADS / 2,
        _ => RESIDENT_THREADS,
    };
    (threads / kernel.block.max(1)).max(1)
}

/// Appends one kernel's CUDA C to `text` (it needs the [`prelude`] before it).
pub fn print_kernel(text: &mut String, kernel: &DeviceKernel) {
    let params: Vec<String> = kernel
        .params
        .iter()
        .map(|p| match p.kind {
            ParamKind::Input(d) => format!("const {}* __restrict__ {}", c_type(d), p.name),
            ParamKind::Output(d) => format!("{}* __restrict__ {}", c_type(d), p.name),
            ParamKind::Scalar(d) => format!("{} {}", c_type(d), p.name),
        })
        .collect();
    let bounds = if kernel.block > 0 {
        format!(
            "__launch_bounds__({}, {}) ",
            kernel.block,
            min_blocks_per_multiprocessor(kernel)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        text,
        "extern \"C\" __global__ void {bounds}{}(\n    {})\n{{",
        kernel.name,
        params.join(",\n    ")
    );
    for shared in &kernel.shared {
        let _ = writeln!(
            text,
            "    {}{} {}[{}];",
            if shared.local { "" } else { "__shared__ " },
            c_type(shared.dtype),
            shared.name,
            shared.len
        );
    }
    let printer = Printer { kernel };
    printer.block(text, &kernel.body, 1);
    text.push_str("}\n");
}

struct Printer<'k> {
    kernel: &'k DeviceKernel,
}

impl Printer<'_> {
    fn block(&self, text: &mut String, stmts: &[Stmt], depth: usize) {
        for stmt in stmts {
            self.stmt(text, stmt, depth);
        }
    }

    fn var_dtype(&self, v: Option<super::ir::Var>) -> DType {
        v.and_then(|v| self.kernel.vars.get(v.index()).copied())
            .unwrap_or(DType::I64)
    }

    fn var_type(&self, v: super::ir::Var) -> &'static str {
        c_type(self.var_dtype(Some(v)))
    }

    fn stmt(&self, text: &mut String, stmt: &Stmt, depth: usize) {
        let pad = "    ".repeat(depth);
        match stmt {
            Stmt::Let(v, e) => {
                let _ = writeln!(text, "{pad}{} {v} = {};", self.var_type(*v), self.expr(e));
            }
            Stmt::Assign(v, e) => {
                let _ = writeln!(text, "{pad}{v} = {};", self.expr(e));
            }
            Stmt::Store {
                param,
                index,
                value,
            } => self.assign_element(text, &pad, self.param(*param), index, value),
            Stmt::StoreShared {
                array,
                index,
                value,
            } => self.assign_element(text, &pad, self.shared(*array), index, value),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let _ = writeln!(text, "{pad}if ({}) {{", self.bare(cond));
                self.block(text, then, depth + 1);
                if !otherwise.is_empty() {
                    let _ = writeln!(text, "{pad}}} else {{");
                    self.block(text, otherwise, depth + 1);
                }
                let _ = writeln!(text, "{pad}}}");
            }
            Stmt::For {
                var,
                start,
                end,
                step,
                body,
            } => {
                let _ = writeln!(
                    text,
                    "{pad}for ({} {var} = {}; {var} < {}; {var} += {}) {{",
                    self.var_type(*var),
                    self.bare(start),
                    self.bare(end),
                    self.bare(step)
                );
                self.block(text, body, depth + 1);
                let _ = writeln!(text, "{pad}}}");
            }
            Stmt::LoadVector { param, index, dst } => {
                let (vector, fields) = vector_type(self.var_dtype(dst.first().copied()), dst.len());
                let first = dst.first().map_or_else(String::new, |v| v.to_string());
                let _ = writeln!(
                    text,
                    "{pad}const {vector} t{first} = reinterpret_cast<const {vector}*>({})[{}];",
                    self.param(*param),
                    self.bare(index)
                );
                for (v, field) in dst.iter().zip(fields) {
                    let _ = writeln!(text, "{pad}{} {v} = t{first}.{field};", self.var_type(*v));
                }
            }
            Stmt::StoreVector {
                param,
                index,
                values,
            } => {
                let dtype = self
                    .kernel
                    .params
                    .get(*param as usize)
                    .map_or(DType::F32, |p| match p.kind {
                        ParamKind::Input(d) | ParamKind::Output(d) | ParamKind::Scalar(d) => d,
                    });
                let (vector, _) = vector_type(dtype, values.len());
                let values: Vec<String> = values.iter().map(|v| self.expr(v)).collect();
                let _ = writeln!(
                    text,
                    "{pad}reinterpret_cast<{vector}*>({})[{}] = make_{vector}({});",
                    self.param(*param),
                    self.bare(index),
                    values.join(", ")
                );
            }
            Stmt::While { cond, body } => {
                let _ = writeln!(text, "{pad}while ({}) {{", self.bare(cond));
                self.block(text, body, depth + 1);
                let _ = writeln!(text, "{pad}}}");
            }
            Stmt::Atomic {
                op,
                target,
                index,
                value,
                compare,
                old,
            } => {
                let memory = match target {
                    AtomicTarget::Global(p) => self.param(*p),
                    AtomicTarget::Shared(a) => self.shared(*a),
                };
                let mut args = vec![format!("&{memory}[{}]", self.bare(index))];
                args.extend(compare.iter().map(|c| self.expr(c)));
                args.push(self.expr(value));
                let call = format!("lf_atomic_{}({})", op.name(), args.join(", "));
                let _ = match old {
                    Some(old) => writeln!(text, "{pad}{old} = {call};"),
                    None => writeln!(text, "{pad}{call};"),
                };
            }
            Stmt::Barrier => {
                let _ = writeln!(text, "{pad}__syncthreads();");
            }
            Stmt::Fence(scope) => {
                let _ = writeln!(text, "{pad}{}();", scope.cuda_function());
            }
            Stmt::Print(pieces) => {
                let (format, args) = crate::printf::cuda_call(pieces, |e| self.expr(e));
                let _ = writeln!(text, "{pad}printf({format}{args});");
            }
            Stmt::Warp {
                dst,
                op,
                mask,
                value,
                lane,
            } => {
                let (mask, value, lane) = (self.expr(mask), self.expr(value), self.expr(lane));
                let function = op.cuda_function();
                let call = match op {
                    WarpOp::ActiveMask => format!("{function}()"),
                    WarpOp::Ballot | WarpOp::All | WarpOp::Any => {
                        format!("{function}((unsigned)({mask}), (int)({value}))")
                    }
                    _ => {
                        let dtype = self.kernel.vars.get(dst.index()).copied();
                        // The shuffles have no overload for bool or 8/16-bit integers.
                        let widen = matches!(
                            dtype,
                            Some(DType::Bool | DType::I8 | DType::I16 | DType::U8 | DType::U16)
                        );
                        let value = if widen {
                            format!("(int)({value})")
                        } else {
                            value
                        };
                        format!(
                            "({})({function}((unsigned)({mask}), {value}, (int)({lane})))",
                            self.var_type(*dst)
                        )
                    }
                };
                let _ = writeln!(text, "{pad}{dst} = {call};");
            }
            Stmt::ShuffleDown { dst, src, delta } => {
                let dtype = self.kernel.vars.get(src.index()).copied();
                // __shfl_down_sync has no overload for bool or 8/16-bit integers.
                let widen = matches!(
                    dtype,
                    Some(DType::Bool | DType::I8 | DType::I16 | DType::U8 | DType::U16)
                );
                let _ = if widen {
                    writeln!(
                        text,
                        "{pad}{dst} = ({})__shfl_down_sync(0xffffffffu, (int){src}, {delta});",
                        self.var_type(*dst)
                    )
                } else {
                    writeln!(
                        text,
                        "{pad}{dst} = __shfl_down_sync(0xffffffffu, {src}, {delta});"
                    )
                };
            }
        }
    }

    /// `memory[index] = value;`
    fn assign_element(
        &self,
        text: &mut String,
        pad: &str,
        memory: &str,
        index: &Expr,
        value: &Expr,
    ) {
        let _ = writeln!(
            text,
            "{pad}{memory}[{}] = {};",
            self.bare(index),
            self.expr(value)
        );
    }

    fn param(&self, i: u32) -> &str {
        self.kernel
            .params
            .get(i as usize)
            .map_or("missing_param", |p| p.name.as_str())
    }

    fn shared(&self, i: u32) -> &str {
        self.kernel
            .shared
            .get(i as usize)
            .map_or("missing_shared", |s| s.name.as_str())
    }

    /// An expression standing alone (a condition, a loop bound): index
    /// arithmetic without its outer parentheses.
    fn bare(&self, expr: &Expr) -> String {
        match expr {
            Expr::Index(op, a, b) => format!("{} {} {}", self.expr(a), op.symbol(), self.expr(b)),
            _ => self.expr(expr),
        }
    }

    fn expr(&self, expr: &Expr) -> String {
        match expr {
            Expr::Var(v) => v.to_string(),
            Expr::Param(p) => self.param(*p).to_string(),
            Expr::Special(s) => s.cuda_name().to_string(),
            Expr::Const(literal) => literal_text(*literal),
            Expr::Load { param, index } => format!("{}[{}]", self.param(*param), self.bare(index)),
            Expr::LoadShared { array, index } => {
                format!("{}[{}]", self.shared(*array), self.bare(index))
            }
            Expr::Index(op, a, b) => {
                format!("({} {} {})", self.expr(a), op.symbol(), self.expr(b))
            }
            Expr::Unary(op, a) => format!("lf_{}({})", op.name(), self.expr(a)),
            Expr::Binary(op, a, b) => {
                format!("lf_{}({}, {})", op.name(), self.expr(a), self.expr(b))
            }
            Expr::Select(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            Expr::Fma(a, b, c) => {
                format!(
                    "lf_fma({}, {}, {})",
                    self.expr(a),
                    self.expr(b),
                    self.expr(c)
                )
            }
            // Builtins are unsigned: a plain C conversion to the index type.
            Expr::Cast(dtype, a) if matches!(**a, Expr::Special(_)) => {
                format!("({}){}", c_type(*dtype), self.expr(a))
            }
            Expr::Cast(dtype, a) => format!("lf_to_{}({})", dtype.short_name(), self.expr(a)),
            Expr::Bitcast(dtype, a) => {
                format!("lf_bits_{}({})", dtype.short_name(), self.expr(a))
            }
        }
    }
}

/// A constant as C source, exact (non-finite floats by their bits).
pub fn literal_text(literal: Literal) -> String {
    let dtype = literal.dtype();
    match (dtype, literal.to_wide()) {
        (DType::Bool, w) => (if w.truthy() { "true" } else { "false" }).to_string(),
        (DType::I64, Wide::Int(v)) if v == i64::MIN as i128 => {
            "(-9223372036854775807LL - 1)".to_string()
        }
        (DType::I32, Wide::Int(v)) if v == i32::MIN as i128 => "(-2147483647 - 1)".to_string(),
        (DType::I64, Wide::Int(v)) => format!("{v}LL"),
        (DType::U64, Wide::Int(v)) => format!("{v}ULL"),
        (DType::U32, Wide::Int(v)) => format!("{v}U"),
        (DType::I32, Wide::Int(v)) => v.to_string(),
        (d, Wide::Int(v)) => format!("(({}){v})", c_type(d)),
        (DType::F64, Wide::Float(v)) if v.is_finite() => format!("{v:e}"),
        (DType::F64, Wide::Float(v)) => format!("__longlong_as_double({:#x}LL)", v.to_bits()),
        (DType::F32, Wide::Float(v)) if v.is_finite() => format!("{:e}f", v as f32),
        (DType::F32, Wide::Float(v)) => format!("__int_as_float({:#x})", (v as f32).to_bits()),
        (d, Wide::Float(v)) => {
            format!("lf_to_{}({})", d.short_name(), literal_text(Literal::of(v)))
        }
    }
}

#[cfg(test)]
mod table_tests {
    use lazyfuse_core::{BinaryOp, DType, UnaryOp};

    use super::prelude;

    /// The printer calls `lf_<numpy name>` for every element operation,
    /// `lf_to_<dtype>` for every cast and `lf_bits_<dtype>` for every
    /// bitcast: the prelude must define each (NVRTC
    /// would say so too, but only where it is installed).
    #[test]
    fn the_prelude_defines_every_function_the_printer_calls() {
        let text = prelude();
        let unary = UnaryOp::ALL.iter().map(|op| op.name());
        let binary = BinaryOp::ALL.iter().map(|op| op.name());
        let casts = DType::ALL.iter().map(|d| format!("to_{}", d.short_name()));
        let bitcasts = (DType::ALL.iter())
            .filter(|d| **d != DType::Bool)
            .map(|d| format!("bits_{}", d.short_name()));
        // A function is defined by name, or named as a macro's argument
        // (the casts: `LF_INT_SOURCES(int, lf_to_i32, ...)`).
        let defined = |name: &str| {
            ["(", ",", ")"]
                .iter()
                .any(|after| text.contains(&format!("lf_{name}{after}")))
        };
        let missing: Vec<String> = unary
            .chain(binary)
            .map(str::to_string)
            .chain(casts)
            .chain(bitcasts)
            .filter(|name| !defined(name))
            .map(|name| format!("lf_{name}"))
            .collect();
        assert!(missing.is_empty(), "the prelude lacks {missing:?}");
    }
}
