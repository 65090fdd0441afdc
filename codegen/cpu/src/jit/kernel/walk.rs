//! Every statement and expression of a kernel body, visited without
//! recursion (a deep body cannot overflow the stack).

use lazyfuse_device::ir::{Expr, PrintPiece, Stmt};

/// A statement or an expression of a body.
pub(super) enum Node<'a> {
    Stmt(&'a Stmt),
    Expr(&'a Expr),
}

/// The statements and expressions of `body`, nested ones included, each
/// before its children (in no other particular order).
pub(super) fn nodes(body: &[Stmt]) -> Nodes<'_> {
    Nodes {
        stack: body.iter().map(Node::Stmt).collect(),
    }
}

/// The iterator of [`nodes`].
pub(super) struct Nodes<'a> {
    stack: Vec<Node<'a>>,
}

impl<'a> Iterator for Nodes<'a> {
    type Item = Node<'a>;

    fn next(&mut self) -> Option<Node<'a>> {
        let node = self.stack.pop()?;
        let stack = &mut self.stack;
        let exprs = |stack: &mut Vec<Node<'a>>, exprs: &[&'a Expr]| {
            stack.extend(exprs.iter().map(|&e| Node::Expr(e)));
        };
        match node {
            Node::Stmt(stmt) => match stmt {
                Stmt::Let(_, value) | Stmt::Assign(_, value) => exprs(stack, &[value]),
                Stmt::Store { index, value, .. } | Stmt::StoreShared { index, value, .. } => {
                    exprs(stack, &[index, value]);
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    exprs(stack, &[cond]);
                    stack.extend(then.iter().chain(otherwise).map(Node::Stmt));
                }
                Stmt::For {
                    start,
                    end,
                    step,
                    body,
                    ..
                } => {
                    exprs(stack, &[start, end, step]);
                    stack.extend(body.iter().map(Node::Stmt));
                }
                Stmt::While { cond, body } => {
                    exprs(stack, &[cond]);
                    stack.extend(body.iter().map(Node::Stmt));
                }
                Stmt::LoadVector { index, .. } => exprs(stack, &[index]),
                Stmt::StoreVector { index, values, .. } => {
                    exprs(stack, &[index]);
                    stack.extend(values.iter().map(Node::Expr));
                }
                Stmt::Atomic {
                    index,
                    value,
                    compare,
                    ..
                } => {
                    exprs(stack, &[index, value]);
                    stack.extend(compare.iter().map(Node::Expr));
                }
                Stmt::Print(pieces) => stack.extend(pieces.iter().filter_map(|p| match p {
                    PrintPiece::Value(e, _) => Some(Node::Expr(e)),
                    PrintPiece::Text(_) => None,
                })),
                Stmt::Warp {
                    mask, value, lane, ..
                } => exprs(stack, &[mask, value, lane]),
                Stmt::Barrier | Stmt::Fence(_) | Stmt::ShuffleDown { .. } => {}
            },
            Node::Expr(expr) => match expr {
                Expr::Load { index, .. } | Expr::LoadShared { index, .. } => {
                    exprs(stack, &[index]);
                }
                Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::Bitcast(_, a) => exprs(stack, &[a]),
                Expr::Index(_, a, b) | Expr::Binary(_, a, b) => exprs(stack, &[a, b]),
                Expr::Select(c, a, b) | Expr::Fma(a, b, c) => exprs(stack, &[c, a, b]),
                Expr::Var(_) | Expr::Param(_) | Expr::Special(_) | Expr::Const(_) => {}
            },
        }
        Some(node)
    }
}
