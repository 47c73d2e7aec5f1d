//! The canonical printer: `expr_text(&ast::Expr) -> String`.
//!
//! Single spaces around binary operators, `, ` after commas, parentheses only
//! where the tree needs them, literals as written. An unnamed rule's identity
//! is its type's name, a dot and this text (language.md §4.7), so the output
//! must depend on the tree alone, never on how the source was laid out.

use std::fmt::Write as _;

use crate::syntax::ast::*;

/// Binding strength, loosest first (language.md §5).
const LAMBDA: u8 = 1;
const IMPLIES: u8 = 2;
const OR: u8 = 3;
const AND: u8 = 4;
const NOT: u8 = 5;
const COMPARE: u8 = 6;
const COALESCE: u8 = 7;
const PIPE: u8 = 8;
const ADD: u8 = 9;
const MUL: u8 = 10;
const NEG: u8 = 11;
const POSTFIX: u8 = 12;
const ATOM: u8 = 13;

pub fn expr_text(e: &Expr) -> String {
    let mut out = String::new();
    write_expr(&mut out, e, LAMBDA);
    out
}

/// An expression where `name =>` would start a lambda: a `let` value.
pub fn lambda_place_text(e: &Expr) -> String {
    let mut out = String::new();
    write_lambda_place(&mut out, e);
    out
}

/// The stages of a pipeline `a | f() | g()`, first to last; an expression
/// that is not a pipeline is its own one stage.
pub fn pipeline_stages(e: &Expr) -> Vec<&Expr> {
    let mut stages = Vec::new();
    let mut at = e;
    while let ExprKind::Pipe(a, b) = &at.kind {
        stages.push(&**b);
        at = a;
    }
    stages.push(at);
    stages.reverse();
    stages
}

/// A pipeline's stage as it is written on a line of its own: the first
/// stage (`first`), or one after a `|`.
pub fn stage_text(stage: &Expr, first: bool) -> String {
    let mut out = String::new();
    write_expr(&mut out, stage, if first { PIPE } else { ADD });
    out
}

/// A type expression on one line: `List[Int]`, `"a" | "b"`,
/// `{ street: String, zip?: String }`.
pub fn type_text(t: &TypeExpr) -> String {
    let mut out = String::new();
    write_type(&mut out, t);
    out
}

fn write_type(out: &mut String, t: &TypeExpr) {
    match t {
        TypeExpr::Name(n) => out.push_str(&n.text),
        TypeExpr::Literal(lit, _) => write_lit(out, lit),
        TypeExpr::Generic { name, args, .. } => {
            out.push_str(&name.text);
            out.push('[');
            write_separated(out, ", ", args.iter(), write_type);
            out.push(']');
        }
        TypeExpr::Union(members) => write_separated(out, " | ", members.iter(), write_type),
        TypeExpr::Record { fields, .. } if fields.is_empty() => out.push_str("{}"),
        TypeExpr::Record { fields, .. } => {
            out.push_str("{ ");
            write_separated(out, ", ", fields.iter(), write_field);
            out.push_str(" }");
        }
    }
}

/// A field declaration without its doc comment: `name?: Type = default`.
pub fn field_text(f: &FieldDecl) -> String {
    let mut out = String::new();
    write_field(&mut out, f);
    out
}

fn write_field(out: &mut String, f: &FieldDecl) {
    out.push_str(&field_head(f));
    write_type(out, &f.ty);
    out.push_str(&field_default(f));
}

/// What a field declaration writes before its type: `name: ` or `name?: `.
pub fn field_head(f: &FieldDecl) -> String {
    let mut out = String::new();
    write_key(&mut out, &f.name.text);
    out.push_str(if f.optional { "?: " } else { ": " });
    out
}

/// What a field declaration writes after its type: ` = default`, or
/// nothing.
fn field_default(f: &FieldDecl) -> String {
    f.default
        .as_ref()
        .map_or(String::new(), |d| format!(" = {}", expr_text(d)))
}

/// An expectation as a member in canonical form: `expect warn fresh:
/// age(placed) <= 3d`. Its identity's text is its condition's
/// (`expr_text`), as a rule's is.
pub fn expectation_text(e: &Expectation) -> String {
    let mut out = String::from("expect ");
    if e.warn {
        out.push_str("warn ");
    }
    if let Some(name) = &e.name {
        out.push_str(&name.text);
        out.push_str(": ");
    }
    write_expr(&mut out, &e.cond, LAMBDA);
    out
}

pub fn binop_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Implies => "=>",
        BinOp::Or => "or",
        BinOp::And => "and",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::In => "in",
        BinOp::NotIn => "not in",
        BinOp::Coalesce => "??",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
    }
}

pub fn is_comparison(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Eq | Ne | Lt | Le | Gt | Ge | In | NotIn)
}

fn binop_prec(op: BinOp) -> u8 {
    match op {
        BinOp::Implies => IMPLIES,
        BinOp::Or => OR,
        BinOp::And => AND,
        BinOp::Coalesce => COALESCE,
        BinOp::Add | BinOp::Sub => ADD,
        BinOp::Mul | BinOp::Div | BinOp::Rem => MUL,
        // The comparisons (`is_comparison`).
        _ => COMPARE,
    }
}

fn prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Lambda(..) | ExprKind::If(..) => LAMBDA,
        ExprKind::Binary(op, ..) => binop_prec(*op),
        ExprKind::Pipe(..) => PIPE,
        ExprKind::Unary(UnOp::Not, _) => NOT,
        ExprKind::Unary(UnOp::Neg, _) => NEG,
        ExprKind::Field(..)
        | ExprKind::Index(..)
        | ExprKind::Present(..)
        | ExprKind::Call(..)
        | ExprKind::Construct(..) => POSTFIX,
        _ => ATOM,
    }
}

/// The minimum strength of a binary operator's (left, right) operands.
fn operand_prec(op: BinOp) -> (u8, u8) {
    let p = binop_prec(op);
    match op {
        BinOp::Implies => (p + 1, p),
        _ if p == COMPARE => (p + 1, p + 1),
        _ => (p, p + 1),
    }
}

/// The minimum strength of an operand of `op`, raised so that an `and`
/// that is an operand of `or` is always in parentheses (`a or (b and c)`):
/// the grouping a reader would ask about is shown (language.md §4.7).
fn grouped(op: BinOp, operand: &Expr, min: u8) -> u8 {
    match (op, &operand.kind) {
        (BinOp::Or, ExprKind::Binary(BinOp::And, ..)) => AND + 1,
        _ => min,
    }
}

fn write_expr(out: &mut String, e: &Expr, min: u8) {
    let parens = prec(e) < min;
    if parens {
        out.push('(');
    }
    write_bare(out, e);
    if parens {
        out.push(')');
    }
}

fn write_bare(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Lit(lit) => write_lit(out, lit),
        ExprKind::Name(n) => out.push_str(n),
        ExprKind::SelfRef => out.push_str("self"),
        ExprKind::List(items) => {
            out.push('[');
            write_separated(out, ", ", items.iter(), |out, e| write_expr(out, e, LAMBDA));
            out.push(']');
        }
        ExprKind::Record(fields) => write_record(out, fields),
        ExprKind::Construct(ty, fields) => {
            out.push_str(&ty.text);
            out.push(' ');
            write_record(out, fields);
        }
        ExprKind::Field(x, name) => {
            write_expr(out, x, POSTFIX);
            out.push('.');
            out.push_str(&name.text);
        }
        ExprKind::Index(x, i) => {
            write_expr(out, x, POSTFIX);
            out.push('[');
            write_expr(out, i, LAMBDA);
            out.push(']');
        }
        ExprKind::Present(x) => {
            write_expr(out, x, POSTFIX);
            out.push('?');
        }
        ExprKind::Call(f, args) => {
            write_expr(out, f, POSTFIX);
            out.push('(');
            write_separated(out, ", ", args.iter(), write_arg);
            out.push(')');
        }
        ExprKind::Unary(UnOp::Not, x) => {
            out.push_str("not ");
            write_expr(out, x, NOT);
        }
        ExprKind::Unary(UnOp::Neg, x) => {
            out.push('-');
            write_expr(out, x, NEG);
        }
        ExprKind::Binary(op, a, b) => {
            let (l, r) = operand_prec(*op);
            write_expr(out, a, grouped(*op, a, l));
            out.push(' ');
            out.push_str(binop_text(*op));
            out.push(' ');
            write_expr(out, b, grouped(*op, b, r));
        }
        ExprKind::Pipe(a, b) => {
            write_expr(out, a, PIPE);
            out.push_str(" | ");
            write_expr(out, b, ADD);
        }
        ExprKind::Lambda(p, body) => {
            out.push_str(&p.text);
            out.push_str(" => ");
            write_lambda_place(out, body);
        }
        ExprKind::If(c, a, b) => {
            out.push_str("if ");
            write_expr(out, c, LAMBDA);
            out.push_str(" then ");
            write_expr(out, a, LAMBDA);
            out.push_str(" else ");
            write_expr(out, b, LAMBDA);
        }
    }
}

fn write_arg(out: &mut String, arg: &Arg) {
    if let Some(name) = &arg.name {
        out.push_str(&name.text);
        out.push_str(": ");
    }
    write_lambda_place(out, &arg.value);
}

/// An expression where `name =>` starts a lambda (an argument, a lambda's
/// body): an implication from a bare name there needs parentheses.
fn write_lambda_place(out: &mut String, e: &Expr) {
    let min = match &e.kind {
        ExprKind::Binary(BinOp::Implies, a, _) if matches!(a.kind, ExprKind::Name(_)) => ATOM,
        _ => LAMBDA,
    };
    write_expr(out, e, min);
}

fn write_record(out: &mut String, fields: &[(Name, Expr)]) {
    out.push('{');
    write_separated(out, ", ", fields.iter(), |out, (k, v)| {
        write_key(out, &k.text);
        out.push_str(": ");
        write_expr(out, v, LAMBDA);
    });
    out.push('}');
}

/// Items written by `each`, `sep` between them: the one loop behind every
/// printed list, record and argument list (here, in `print` and in `json`).
pub fn write_separated<T>(
    out: &mut String,
    sep: &str,
    items: impl Iterator<Item = T>,
    mut each: impl FnMut(&mut String, T),
) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        each(out, item);
    }
}

/// Appends `s` as a JSON string literal: quotes, backslashes and control
/// characters escaped, everything else (non-ASCII included) as is.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    let mut run_start = 0;
    for (i, byte) in s.bytes().enumerate() {
        let escaped = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1F => "",
            _ => continue,
        };
        // `i` is at an ASCII byte, hence on a char boundary.
        out.push_str(&s[run_start..i]);
        if escaped.is_empty() {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escaped);
        }
        run_start = i + 1;
    }
    out.push_str(&s[run_start..]);
    out.push('"');
}

pub fn write_lit(out: &mut String, lit: &Lit) {
    match lit {
        Lit::Int(t) | Lit::Float(t) | Lit::Duration(t) => out.push_str(t),
        Lit::Percent(t) => {
            out.push_str(t);
            out.push('%');
        }
        Lit::Str { text, .. } => out.push_str(text),
        Lit::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Lit::Null => out.push_str("null"),
    }
}

/// A record key: bare when it is an identifier, else a quoted string.
pub fn write_key(out: &mut String, key: &str) {
    if is_identifier(key) {
        out.push_str(key);
    } else {
        write_json_string(out, key);
    }
}

pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parser::parse_expr;

    fn canon(src: &str) -> String {
        expr_text(&parse_expr(src).unwrap())
    }

    #[test]
    fn spacing_is_normalised() {
        assert_eq!(
            canon("seen==\"morning\"  or seen ==\"dusk\""),
            "seen == \"morning\" or seen == \"dusk\""
        );
        assert_eq!(canon("f( a ,b,c )"), "f(a, b, c)");
    }

    #[test]
    fn parentheses_only_where_needed() {
        assert_eq!(canon("((a + b)) * c"), "(a + b) * c");
        assert_eq!(canon("a + (b * c)"), "a + b * c");
        assert_eq!(canon("a - (b - c)"), "a - (b - c)");
        assert_eq!(canon("(a or b) and c"), "(a or b) and c");
        assert_eq!(canon("(a => b) => c"), "(a => b) => c");
        assert_eq!(canon("a => (b => c)"), "a => b => c");
        assert_eq!(canon("not (a == b)"), "not a == b");
        assert_eq!(canon("(xs | count()) + 1"), "(xs | count()) + 1");
    }

    #[test]
    fn an_and_inside_an_or_is_parenthesised() {
        assert_eq!(canon("a or b and c"), "a or (b and c)");
        assert_eq!(canon("a and b or c"), "(a and b) or c");
        assert_eq!(canon("a or (b and c) or d"), "a or (b and c) or d");
        assert_eq!(canon("(a or b) and c"), "(a or b) and c");
        assert_eq!(canon("a and b and c"), "a and b and c");
        assert_eq!(canon("not (a and b) or c"), "not (a and b) or c");
    }

    #[test]
    fn literals_as_written() {
        assert_eq!(canon("amount < 10_000"), "amount < 10_000");
        assert_eq!(canon("matches(s, r\"^\\d+$\")"), "matches(s, r\"^\\d+$\")");
        assert_eq!(canon("{a: 1, \"b c\": [1,2]}"), "{a: 1, \"b c\": [1, 2]}");
    }

    #[test]
    fn canonical_text_reparses_to_itself() {
        for src in [
            "a? or b?",
            "status == \"shipped\" => tracking?",
            "-x.y[0] ?? 3",
            "x not in [1, 2]",
            "a or b and c",
        ] {
            let once = canon(src);
            assert_eq!(canon(&once), once);
        }
    }
}
