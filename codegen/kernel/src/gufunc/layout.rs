//! A generalized ufunc's layout as Numba and NumPy write it
//! (`"(m,n),(n,p)->(m,p)"`) and its signatures as Numba writes them
//! (`"void(f32[:,:], f32[:,:])"`). Errors name the text and the column
//! (1-based) where reading stopped.

use lazyfuse_core::{DType, Error, Result};

/// One core dimension of an argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoreDim {
    /// A size named by a symbol: every dimension with that symbol has one size.
    Symbol(String),
    /// A fixed size (`(3)`, as NumPy allows).
    Fixed(usize),
}

impl std::fmt::Display for CoreDim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoreDim::Symbol(s) => f.write_str(s),
            CoreDim::Fixed(n) => write!(f, "{n}"),
        }
    }
}

/// The core dimensions of each input and each output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Core dimensions of each input, outermost first.
    pub inputs: Vec<Vec<CoreDim>>,
    /// Core dimensions of each output.
    pub outputs: Vec<Vec<CoreDim>>,
}

impl Layout {
    /// Parses `"(m,n),(n,p)->(m,p)"`; `op` names the gufunc in errors.
    pub fn parse(op: &str, text: &str) -> Result<Layout> {
        let mut reader = Reader::new(op, "layout", text);
        let inputs = reader.tuples()?;
        reader.expect("->")?;
        let outputs = reader.tuples()?;
        reader.end()?;
        if inputs.is_empty() || outputs.is_empty() {
            return Err(reader.error(
                1,
                "needs at least one input and one output, as \"(n)->()\"".to_string(),
            ));
        }
        Ok(Layout { inputs, outputs })
    }

    /// Inputs and outputs together.
    pub fn args(&self) -> impl Iterator<Item = &Vec<CoreDim>> {
        self.inputs.iter().chain(&self.outputs)
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |args: &[Vec<CoreDim>]| {
            args.iter()
                .map(|dims| {
                    let dims: Vec<String> = dims.iter().map(ToString::to_string).collect();
                    format!("({})", dims.join(","))
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        write!(f, "{}->{}", side(&self.inputs), side(&self.outputs))
    }
}

/// Parses a Numba signature of a gufunc: `"void(f32[:,:], f32)"` (or
/// without `void`), one dtype and rank per argument, in order.
pub fn parse_signature(op: &str, text: &str) -> Result<Vec<(DType, usize)>> {
    let mut reader = Reader::new(op, "signature", text);
    reader.skip_space();
    if reader.rest().starts_with("void") {
        reader.pos += 4;
    }
    reader.expect("(")?;
    let mut args = Vec::new();
    if !reader.eat(")") {
        loop {
            reader.skip_space();
            let column = reader.column();
            let name = reader.word();
            let dtype: DType = name.parse().map_err(|_| {
                reader.error(
                    column,
                    format!("'{name}' is not a dtype (expected f32, float32, f64, i32, int64, …)"),
                )
            })?;
            let mut rank = 0;
            if reader.eat("[") {
                loop {
                    reader.expect(":")?;
                    rank += 1;
                    if reader.eat("]") {
                        break;
                    }
                    reader.expect(",")?;
                }
            }
            args.push((dtype, rank));
            if reader.eat(")") {
                break;
            }
            reader.expect(",")?;
        }
    }
    reader.end()?;
    Ok(args)
}

/// A cursor over the text being parsed.
struct Reader<'a> {
    op: &'a str,
    what: &'a str,
    text: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(op: &'a str, what: &'a str, text: &'a str) -> Reader<'a> {
        Reader {
            op,
            what,
            text,
            pos: 0,
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn column(&self) -> usize {
        self.text[..self.pos].chars().count() + 1
    }

    fn error(&self, column: usize, message: String) -> Error {
        Error::InvalidArgument {
            op: self.op.to_string(),
            message: format!(
                "{} \"{}\", column {column}: {message}",
                self.what, self.text
            ),
        }
    }

    fn skip_space(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<()> {
        if self.eat(token) {
            return Ok(());
        }
        let found = match self.rest().chars().next() {
            Some(c) => format!("'{c}'"),
            None => "the end".to_string(),
        };
        Err(self.error(self.column(), format!("expected '{token}', found {found}")))
    }

    fn end(&mut self) -> Result<()> {
        self.skip_space();
        if self.rest().is_empty() {
            Ok(())
        } else {
            Err(self.error(
                self.column(),
                format!("unexpected '{}' after the end", self.rest()),
            ))
        }
    }

    /// The identifier or number at the cursor (possibly empty).
    fn word(&mut self) -> &'a str {
        self.skip_space();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    /// `(dims),(dims),…`
    fn tuples(&mut self) -> Result<Vec<Vec<CoreDim>>> {
        let mut tuples = vec![self.tuple()?];
        while self.eat(",") {
            tuples.push(self.tuple()?);
        }
        Ok(tuples)
    }

    /// `(m,n)`, `(3)` or `()`.
    fn tuple(&mut self) -> Result<Vec<CoreDim>> {
        self.expect("(")?;
        let mut dims = Vec::new();
        if self.eat(")") {
            return Ok(dims);
        }
        loop {
            self.skip_space();
            let column = self.column();
            let word = self.word();
            let dim = if let Ok(n) = word.parse::<usize>() {
                CoreDim::Fixed(n)
            } else if word
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            {
                CoreDim::Symbol(word.to_string())
            } else {
                let found = self
                    .rest()
                    .chars()
                    .next()
                    .map_or("the end".into(), |c| format!("'{c}'"));
                return Err(self.error(
                    column,
                    format!("expected a dimension name or size, found {found}"),
                ));
            };
            dims.push(dim);
            if self.eat(")") {
                return Ok(dims);
            }
            self.expect(",")?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(s: &str) -> CoreDim {
        CoreDim::Symbol(s.to_string())
    }

    #[test]
    fn layouts_of_every_form_parse() {
        let matmul = Layout::parse("g", "(m,n),(n,p)->(m,p)").unwrap();
        assert_eq!(
            matmul.inputs,
            vec![vec![sym("m"), sym("n")], vec![sym("n"), sym("p")]]
        );
        assert_eq!(matmul.outputs, vec![vec![sym("m"), sym("p")]]);
        assert_eq!(matmul.to_string(), "(m,n),(n,p)->(m,p)");
        let moving = Layout::parse("g", " (n) , () -> (n) ").unwrap();
        assert_eq!(moving.inputs, vec![vec![sym("n")], vec![]]);
        let two = Layout::parse("g", "(n)->(),(3)").unwrap();
        assert_eq!(two.outputs, vec![vec![], vec![CoreDim::Fixed(3)]]);
    }

    #[test]
    fn bad_layouts_name_the_column() {
        for (text, column) in [
            ("(m,n)->", 8),
            ("(m,n)(m,n)", 6),
            ("(m,)->()", 4),
            ("(m n)->()", 4),
            ("(m)->(n)x", 9),
            ("m->n", 1),
        ] {
            let message = Layout::parse("g", text).unwrap_err().to_string();
            assert!(
                message.contains(&format!("column {column}:")),
                "{text}: {message}"
            );
        }
    }

    #[test]
    fn signatures_parse_short_and_long_names() {
        assert_eq!(
            parse_signature("g", "void(f32[:,:], float32[:, :])").unwrap(),
            vec![(DType::F32, 2), (DType::F32, 2)]
        );
        assert_eq!(
            parse_signature("g", "(float64[:], int64, f64[:])").unwrap(),
            vec![(DType::F64, 1), (DType::I64, 0), (DType::F64, 1)]
        );
        let message = parse_signature("g", "void(f32[:], flaot32)")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("column 14") && message.contains("'flaot32'"),
            "{message}"
        );
        let message = parse_signature("g", "void(f32[:;])")
            .unwrap_err()
            .to_string();
        assert!(message.contains("column 11"), "{message}");
    }
}
