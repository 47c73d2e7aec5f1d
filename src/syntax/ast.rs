//! The parser's output: a syntax tree that keeps every span and every
//! literal as written (the canonical printer needs the text).

pub type Span = std::ops::Range<usize>;

#[derive(Debug, Clone)]
pub struct Module {
    pub stmts: Vec<Stmt>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Type(TypeDecl),
    Fn(FnDecl),
    Let { name: Name, value: Expr },
    Check { label: Name, cond: Expr, span: Span },
    Import { path: String, span: Span },
    Expr(Expr),
}

#[derive(Debug, Clone)]
pub struct Attr {
    pub name: Name,
    pub value: String,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct TypeDecl {
    pub doc: Option<String>,
    pub attrs: Vec<Attr>,
    pub name: Name,
    /// `: Kind` or `: Parent`.
    pub parent: Option<Name>,
    pub body: TypeBody,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum TypeBody {
    /// `= { members }`
    Record(Vec<Member>),
    /// `= T require …` (a refinement, or an alias when it has no rules).
    Refine { base: TypeExpr, rules: Vec<Rule> },
}

#[derive(Debug, Clone)]
pub enum Member {
    Field(FieldDecl),
    Rule(Rule),
    Check { field: Name, func: Name, span: Span },
    Unique { fields: Vec<Name>, span: Span },
    Expect(Expectation),
}

/// `expect [warn] [name:] condition`: a condition over the whole stream a
/// `validate(T)` read (language.md §4.11).
#[derive(Debug, Clone)]
pub struct Expectation {
    pub doc: Option<String>,
    pub warn: bool,
    pub name: Option<Name>,
    pub cond: Expr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct FieldDecl {
    pub doc: Option<String>,
    pub name: Name,
    pub optional: bool,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Require,
    Warn,
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub doc: Option<String>,
    pub severity: Severity,
    pub name: Option<Name>,
    pub cond: Expr,
    pub message: Option<String>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum TypeExpr {
    Name(Name),
    Generic {
        name: Name,
        args: Vec<TypeExpr>,
        span: Span,
    },
    Record {
        fields: Vec<FieldDecl>,
        span: Span,
    },
    Union(Vec<TypeExpr>),
    Literal(Lit, Span),
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Name(n) => n.span.clone(),
            TypeExpr::Generic { span, .. } | TypeExpr::Record { span, .. } => span.clone(),
            TypeExpr::Literal(_, span) => span.clone(),
            TypeExpr::Union(members) => {
                let first = members.first().map(|m| m.span().start).unwrap_or(0);
                let last = members.last().map(|m| m.span().end).unwrap_or(0);
                first..last
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: Name,
    pub ty: Option<TypeExpr>,
}

#[derive(Debug, Clone)]
pub struct FnDecl {
    pub doc: Option<String>,
    pub name: Name,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// Integer literal as written (`10_000`).
    Int(String),
    Float(String),
    /// A share of the rows in an expectation, `5%`: the number as written,
    /// without its `%`.
    Percent(String),
    /// A duration in an expectation as written, `3d`.
    Duration(String),
    /// A string's value and its text as written (`r"\d"` stays raw).
    Str {
        value: String,
        text: String,
    },
    Bool(bool),
    Null,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Implies,
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Coalesce,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    /// The operator that says the same with its operands swapped: `a < b`
    /// is `b > a`.
    pub fn flipped(self) -> BinOp {
        match self {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            other => other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Not,
    Neg,
}

#[derive(Debug, Clone)]
pub struct Arg {
    pub name: Option<Name>,
    pub value: Expr,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Lit(Lit),
    Name(String),
    SelfRef,
    List(Vec<Expr>),
    Record(Vec<(Name, Expr)>),
    Field(Box<Expr>, Name),
    Index(Box<Expr>, Box<Expr>),
    /// `e?`
    Present(Box<Expr>),
    Call(Box<Expr>, Vec<Arg>),
    Construct(Name, Vec<(Name, Expr)>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a | f(b)`; the right side is checked to be a call after parsing.
    Pipe(Box<Expr>, Box<Expr>),
    Lambda(Name, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
}

// Dropping a tree by recursion would overflow the stack on a deep one (the
// parser builds a statement before it measures its depth, and a syntax
// error can drop a half-built one): nodes are taken apart with a loop.

/// A node taken out of a tree being dropped.
enum Part {
    Expr(ExprKind),
    Type(TypeExpr),
}

/// Take a node's children out of the tree with `take`, then their children
/// and so on, each part dropped once its children are taken: a loop, where
/// dropping field by field would recurse as deep as the tree. Children
/// that are leaves stay and drop as usual.
fn dismantle(take: impl FnOnce(&mut Vec<Part>)) {
    let mut parts = Vec::new();
    take(&mut parts);
    while let Some(mut part) = parts.pop() {
        match &mut part {
            Part::Expr(kind) => kind.take_children(&mut parts),
            Part::Type(ty) => ty.take_children(&mut parts),
        }
    }
}

/// Move `e`'s node into `parts` unless it is a leaf, leaving a leaf.
fn take_expr(e: &mut Expr, parts: &mut Vec<Part>) {
    if !e.kind.is_leaf() {
        parts.push(Part::Expr(std::mem::replace(
            &mut e.kind,
            ExprKind::SelfRef,
        )));
    }
}

/// Move `t` into `parts` unless it is a leaf, leaving a leaf.
fn take_type(t: &mut TypeExpr, parts: &mut Vec<Part>) {
    if !t.is_leaf() {
        parts.push(Part::Type(std::mem::replace(
            t,
            TypeExpr::Union(Vec::new()),
        )));
    }
}

impl ExprKind {
    fn is_leaf(&self) -> bool {
        matches!(
            self,
            ExprKind::Lit(_) | ExprKind::Name(_) | ExprKind::SelfRef
        )
    }

    fn take_children(&mut self, parts: &mut Vec<Part>) {
        match self {
            ExprKind::Lit(_) | ExprKind::Name(_) | ExprKind::SelfRef => {}
            ExprKind::List(items) => items.iter_mut().for_each(|e| take_expr(e, parts)),
            ExprKind::Record(fields) | ExprKind::Construct(_, fields) => {
                fields.iter_mut().for_each(|(_, e)| take_expr(e, parts))
            }
            ExprKind::Call(f, args) => {
                take_expr(f, parts);
                args.iter_mut().for_each(|a| take_expr(&mut a.value, parts));
            }
            ExprKind::Field(e, _)
            | ExprKind::Present(e)
            | ExprKind::Unary(_, e)
            | ExprKind::Lambda(_, e) => take_expr(e, parts),
            ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) | ExprKind::Pipe(a, b) => {
                take_expr(a, parts);
                take_expr(b, parts);
            }
            ExprKind::If(c, a, b) => {
                take_expr(c, parts);
                take_expr(a, parts);
                take_expr(b, parts);
            }
        }
    }
}

impl Drop for ExprKind {
    fn drop(&mut self) {
        dismantle(|parts| self.take_children(parts));
    }
}

impl TypeExpr {
    fn is_leaf(&self) -> bool {
        match self {
            TypeExpr::Name(_) | TypeExpr::Literal(..) => true,
            TypeExpr::Union(members) => members.is_empty(),
            TypeExpr::Generic { .. } | TypeExpr::Record { .. } => false,
        }
    }

    fn take_children(&mut self, parts: &mut Vec<Part>) {
        match self {
            TypeExpr::Name(_) | TypeExpr::Literal(..) => {}
            TypeExpr::Generic { args: types, .. } | TypeExpr::Union(types) => {
                types.iter_mut().for_each(|t| take_type(t, parts))
            }
            TypeExpr::Record { fields, .. } => {
                for f in fields.iter_mut() {
                    take_type(&mut f.ty, parts);
                    if let Some(d) = &mut f.default {
                        take_expr(d, parts);
                    }
                }
            }
        }
    }
}

impl Drop for TypeExpr {
    fn drop(&mut self) {
        dismantle(|parts| self.take_children(parts));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_trees_drop_without_recursion() {
        // A million levels on a test thread's small stack.
        let name = |text: &str| Name {
            text: text.into(),
            span: 0..0,
        };
        let mut e = Expr::new(ExprKind::Name("x".into()), 0..0);
        let mut t = TypeExpr::Name(name("Int"));
        for i in 0..1_000_000 {
            let kind = match i % 3 {
                0 => ExprKind::Unary(UnOp::Not, Box::new(e)),
                1 => ExprKind::List(vec![e]),
                _ => ExprKind::Record(vec![(name("a"), e)]),
            };
            e = Expr::new(kind, 0..0);
            t = match i % 2 {
                0 => TypeExpr::Generic {
                    name: name("List"),
                    args: vec![t],
                    span: 0..0,
                },
                _ => TypeExpr::Record {
                    fields: vec![FieldDecl {
                        doc: None,
                        name: name("a"),
                        optional: false,
                        ty: t,
                        default: Some(Expr::new(ExprKind::List(vec![]), 0..0)),
                        span: 0..0,
                    }],
                    span: 0..0,
                },
            };
        }
        drop(e);
        drop(t);
    }
}
