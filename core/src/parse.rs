//! Expression strings (numexpr style) for [`crate::Ufunc::parse`].
//!
//! Grammar, loosest binding first:
//!
//! ```text
//! expr     := or
//! or       := xor ('|' xor)*
//! xor      := and ('^' and)*
//! and      := not ('&' not)*
//! not      := '~' not | compare
//! compare  := shift (('<' | '<=' | '>' | '>=' | '==' | '!=') shift)*
//! shift    := additive (('<<' | '>>') additive)*
//! additive := term (('+' | '-') term)*
//! term     := unary (('*' | '/' | '//' | '%') unary)*
//! unary    := ('-' | '+') unary | power
//! power    := primary ('**' unary)?
//! primary  := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
//! ```
//!
//! Names are the arguments, `True`/`False`, and the float constants `inf`
//! and `nan` (where no argument has their name).
//!
//! `& | ^ ~` are NumPy's bitwise operations (on bool: logical ones), and
//! bind looser than comparisons, as numexpr and pandas users write
//! `a > 0 & b < 1` (Python would bind them tighter). Operations of
//! constants are computed while parsing, as Python computes them on numbers
//! (`sin(2.453)`, `maximum(1.21, 2.561)`, `where(2.7 > 1.9, 2.7, 1.9)`), and
//! give a weak scalar; an expression that uses none of its arguments is that
//! constant broadcast to the arguments' shape.
//!
//! The parser emits `Expr` operations while it reads, so it records the same
//! trace as the equivalent Rust closure. Chains (`a + b + c + ...`) are
//! loops; only parentheses, unary operators and calls nest, and nesting is
//! limited to `MAX_DEPTH` so no input can exhaust the stack.

use crate::error::{Error, Result};
use crate::ops::{BinaryOp, UnaryOp};
use crate::scalar::Scalar;
use crate::trace::{Expr, ExprOperand};

mod fold;

use fold::{fold_binary, fold_unary, truthy};

/// Deepest nesting of parentheses, calls and unary operators accepted.
const MAX_DEPTH: usize = 200;

/// A parsed value: a traced expression or a constant.
#[derive(Clone, Copy, Debug)]
enum Value {
    Expr(Expr),
    Scalar(Scalar),
}

impl From<Value> for ExprOperand {
    fn from(v: Value) -> ExprOperand {
        match v {
            Value::Expr(e) => ExprOperand::Expr(e),
            Value::Scalar(s) => ExprOperand::Scalar(s),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Number(Scalar),
    Name(String),
    Symbol(&'static str),
    End,
}

/// Two-character symbols first: the tokenizer takes the first that matches.
const SYMBOLS: [&str; 22] = [
    "**", "//", "<=", ">=", "==", "!=", "<<", ">>", "+", "-", "*", "/", "%", "<", ">", "(", ")",
    ",", "&", "|", "^", "~",
];

/// Parses `text` with `params` bound to `names`; errors name the column (1-based).
pub(crate) fn parse(text: &str, names: &[&str], params: &[Expr]) -> Result<Expr> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        text,
        tokens,
        pos: 0,
        names,
        params,
        depth: 0,
    };
    let value = parser.expr()?;
    if parser.peek() != &Token::End {
        return Err(parser.error(&format!("unexpected {}", parser.describe())));
    }
    match value {
        Value::Expr(e) => Ok(e),
        Value::Scalar(s) => Ok(Expr::full(s)),
    }
}

fn tokenize(text: &str) -> Result<Vec<(Token, usize)>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let column = |i: usize, chars: &[(usize, char)]| i.min(chars.len()) + 1;
    while i < chars.len() {
        let (_, c) = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|(_, d)| d.is_ascii_digit()))
        {
            let mut is_float = false;
            while i < chars.len() && (chars[i].1.is_ascii_digit() || chars[i].1 == '.') {
                is_float |= chars[i].1 == '.';
                i += 1;
            }
            if i < chars.len() && (chars[i].1 == 'e' || chars[i].1 == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j].1 == '+' || chars[j].1 == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].1.is_ascii_digit() {
                    is_float = true;
                    i = j;
                    while i < chars.len() && chars[i].1.is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let literal: String = chars[start..i].iter().map(|(_, c)| c).collect();
            let number = if is_float {
                literal.parse::<f64>().ok().map(Scalar::Float)
            } else {
                literal.parse::<i128>().ok().map(Scalar::Int)
            };
            let number = number.ok_or_else(|| {
                Error::invalid(
                    "parse",
                    format!(
                        "invalid number '{literal}' at column {}",
                        column(start, &chars)
                    ),
                )
            })?;
            tokens.push((Token::Number(number), start + 1));
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].1.is_alphanumeric() || chars[i].1 == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().map(|(_, c)| c).collect();
            tokens.push((Token::Name(name), start + 1));
            continue;
        }
        let rest: String = chars[i..].iter().take(2).map(|(_, c)| c).collect();
        match SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            Some(symbol) => {
                tokens.push((Token::Symbol(symbol), start + 1));
                i += symbol.chars().count();
            }
            None => {
                return Err(Error::invalid(
                    "parse",
                    format!("unexpected character '{c}' at column {}", start + 1),
                ))
            }
        }
    }
    tokens.push((Token::End, chars.len() + 1));
    Ok(tokens)
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<(Token, usize)>,
    pos: usize,
    names: &'a [&'a str],
    params: &'a [Expr],
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        self.tokens.get(self.pos).map_or(&Token::End, |(t, _)| t)
    }

    fn column(&self) -> usize {
        self.tokens
            .get(self.pos)
            .map_or(self.text.chars().count() + 1, |(_, c)| *c)
    }

    fn describe(&self) -> String {
        match self.peek() {
            Token::Number(n) => format!("number {n}"),
            Token::Name(n) => format!("name '{n}'"),
            Token::Symbol(s) => format!("'{s}'"),
            Token::End => "end of input".to_string(),
        }
    }

    fn error(&self, message: &str) -> Error {
        Error::invalid(
            "parse",
            format!("{message} at column {} of '{}'", self.column(), self.text),
        )
    }

    fn eat(&mut self, symbol: &str) -> bool {
        if matches!(self.peek(), Token::Symbol(s) if *s == symbol) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, symbol: &str) -> Result<()> {
        if self.eat(symbol) {
            Ok(())
        } else {
            Err(self.error(&format!("expected '{symbol}'")))
        }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(&format!("expression nested more than {MAX_DEPTH} deep")));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn expr(&mut self) -> Result<Value> {
        let mut left = self.xor()?;
        while self.eat("|") {
            let right = self.xor()?;
            left = self.binary(BinaryOp::BitwiseOr, left, right)?;
        }
        Ok(left)
    }

    fn xor(&mut self) -> Result<Value> {
        let mut left = self.and()?;
        while self.eat("^") {
            let right = self.and()?;
            left = self.binary(BinaryOp::BitwiseXor, left, right)?;
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Value> {
        let mut left = self.not()?;
        while self.eat("&") {
            let right = self.not()?;
            left = self.binary(BinaryOp::BitwiseAnd, left, right)?;
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Value> {
        if self.eat("~") {
            let operand = self.nested(Self::not)?;
            return self.unary(UnaryOp::Invert, operand);
        }
        self.compare()
    }

    fn compare(&mut self) -> Result<Value> {
        let mut left = self.shift()?;
        loop {
            let op = match self.peek() {
                Token::Symbol("<") => BinaryOp::Lt,
                Token::Symbol("<=") => BinaryOp::Le,
                Token::Symbol(">") => BinaryOp::Gt,
                Token::Symbol(">=") => BinaryOp::Ge,
                Token::Symbol("==") => BinaryOp::Eq,
                Token::Symbol("!=") => BinaryOp::Ne,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.shift()?;
            left = self.binary(op, left, right)?;
        }
    }

    fn shift(&mut self) -> Result<Value> {
        let mut left = self.additive()?;
        loop {
            let op = match self.peek() {
                Token::Symbol("<<") => BinaryOp::LeftShift,
                Token::Symbol(">>") => BinaryOp::RightShift,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.additive()?;
            left = self.binary(op, left, right)?;
        }
    }

    fn additive(&mut self) -> Result<Value> {
        let mut left = self.term()?;
        loop {
            let op = match self.peek() {
                Token::Symbol("+") => BinaryOp::Add,
                Token::Symbol("-") => BinaryOp::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.term()?;
            left = self.binary(op, left, right)?;
        }
    }

    fn term(&mut self) -> Result<Value> {
        let mut left = self.unary_level()?;
        loop {
            let op = match self.peek() {
                Token::Symbol("*") => BinaryOp::Mul,
                Token::Symbol("/") => BinaryOp::Div,
                Token::Symbol("//") => BinaryOp::FloorDiv,
                Token::Symbol("%") => BinaryOp::Rem,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.unary_level()?;
            left = self.binary(op, left, right)?;
        }
    }

    fn unary_level(&mut self) -> Result<Value> {
        if self.eat("-") {
            let operand = self.nested(Self::unary_level)?;
            return self.unary(UnaryOp::Neg, operand);
        }
        if self.eat("+") {
            return self.nested(Self::unary_level);
        }
        self.power()
    }

    fn power(&mut self) -> Result<Value> {
        let base = self.primary()?;
        if self.eat("**") {
            let exponent = self.nested(Self::unary_level)?;
            return self.binary(BinaryOp::Pow, base, exponent);
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Value> {
        match self.peek().clone() {
            Token::Number(n) => {
                self.pos += 1;
                Ok(Value::Scalar(n))
            }
            Token::Symbol("(") => {
                self.pos += 1;
                let inner = self.nested(Self::expr)?;
                self.expect(")")?;
                Ok(inner)
            }
            Token::Name(name) => {
                let column = self.column();
                self.pos += 1;
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.nested(Self::expr)?);
                            if self.eat(")") {
                                break;
                            }
                            if !self.eat(",") {
                                return Err(self.error("expected ')'"));
                            }
                        }
                    }
                    return self.call(&name, &args, column);
                }
                match name.as_str() {
                    "True" | "true" => return Ok(Value::Scalar(Scalar::Bool(true))),
                    "False" | "false" => return Ok(Value::Scalar(Scalar::Bool(false))),
                    _ => {}
                }
                match self.names.iter().position(|n| *n == name) {
                    Some(i) => Ok(Value::Expr(self.params[i])),
                    // Unless an argument has the name: NumPy's float constants.
                    None if name == "inf" => Ok(Value::Scalar(Scalar::Float(f64::INFINITY))),
                    None if name == "nan" => Ok(Value::Scalar(Scalar::Float(f64::NAN))),
                    None => Err(Error::invalid(
                        "parse",
                        format!(
                            "unknown name '{name}' at column {column} of '{}' (expected one of the arguments {})",
                            self.text,
                            self.names.join(", ")
                        ),
                    )),
                }
            }
            _ => Err(self.error(&format!(
                "expected a number, a name or '(' but found {}",
                self.describe()
            ))),
        }
    }

    fn call(&mut self, name: &str, args: &[Value], column: usize) -> Result<Value> {
        let arity = |n: usize| -> Result<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(Error::invalid(
                    "parse",
                    format!(
                        "{name} takes {n} argument{} (got {}) at column {column} of '{}'",
                        if n == 1 { "" } else { "s" },
                        args.len(),
                        self.text
                    ),
                ))
            }
        };
        if let Some(op) = UnaryOp::lookup(name) {
            arity(1)?;
            return self.unary(op, args[0]);
        }
        if let Some(op) = BinaryOp::lookup(name) {
            arity(2)?;
            return self.binary(op, args[0], args[1]);
        }
        match (name, args) {
            ("clip", [x, lo, hi]) => return self.composite(name, *x, column, |x| x.clip(*lo, *hi)),
            ("nan_to_num", [x]) => return self.composite(name, *x, column, |x| x.nan_to_num()),
            ("isclose", [a, b]) => {
                return self.composite(name, *a, column, |a| a.isclose(*b, 1e-5, 1e-8))
            }
            ("clip", _) => arity(3)?,
            ("nan_to_num", _) => arity(1)?,
            ("isclose", _) => arity(2)?,
            _ => {}
        }
        if name == "where" {
            arity(3)?;
            return match args[0] {
                Value::Expr(c) => Ok(Value::Expr(Expr::select(c, args[1], args[2]))),
                Value::Scalar(c) => Ok(if truthy(c) { args[1] } else { args[2] }),
            };
        }
        Err(Error::invalid(
            "parse",
            format!(
                "unknown function '{name}' at column {column} of '{}' (expected a NumPy ufunc such as sqrt, \
                 exp, arctan2, minimum, or where, clip, isclose, nan_to_num)",
                self.text
            ),
        ))
    }

    /// A composite function (`clip`, `isclose`, `nan_to_num`) of an
    /// expression; of a constant first argument it is an error.
    fn composite(
        &self,
        name: &str,
        first: Value,
        column: usize,
        apply: impl FnOnce(Expr) -> Expr,
    ) -> Result<Value> {
        match first {
            Value::Expr(e) => Ok(Value::Expr(apply(e))),
            Value::Scalar(_) => Err(Error::invalid(
                "parse",
                format!(
                    "{name} needs an argument, not a constant, first at column {column} of '{}'",
                    self.text
                ),
            )),
        }
    }

    fn unary(&self, op: UnaryOp, value: Value) -> Result<Value> {
        match value {
            Value::Expr(e) => Ok(Value::Expr(e.apply_unary(op))),
            Value::Scalar(s) => fold_unary(op, s)
                .map(Value::Scalar)
                .ok_or_else(|| self.error(&format!("{}({s}) has no value", op.name()))),
        }
    }

    fn binary(&self, op: BinaryOp, left: Value, right: Value) -> Result<Value> {
        match (left, right) {
            (Value::Expr(a), b) => Ok(Value::Expr(a.apply_binary(op, b.into()))),
            (Value::Scalar(a), Value::Expr(b)) => Ok(Value::Expr(Expr::scalar_left(a, op, b))),
            (Value::Scalar(a), Value::Scalar(b)) => {
                fold_binary(op, a, b).map(Value::Scalar).ok_or_else(|| {
                    self.error(&format!(
                        "{}({a}, {b}) has no value (Python raises for it too)",
                        op.name()
                    ))
                })
            }
        }
    }
}
