//! Parsing: `parse(&str) -> Result<ast::Module, Vec<ParseError>>`.
//!
//! The token stream (after layout) is cut at the newlines that end
//! statements; each statement is parsed on its own by the LALRPOP parser, so
//! one syntax error never hides the next. A last pass rejects pipes whose
//! right side is not a call, with the fix in the help.

use lalrpop_util::ParseError as LalrError;

use crate::syntax::ast::*;
use crate::syntax::lexer::{self, LexError, Spanned, Token};

#[allow(clippy::all, unused_parens)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/hql.rs"));
}

/// A syntax error.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    /// Text that is not a token: `let x = 1 # 2`.
    Lex(LexError),
    /// A token where it cannot stand: `let = 3`.
    Unexpected {
        found: String,
        expected: Vec<String>,
        span: Span,
        help: Option<String>,
    },
    /// The input stops inside a statement: `f(1,`.
    UnexpectedEnd { expected: Vec<String>, span: Span },
    /// The right side of `|` is not a call: `xs | count() + 1`, `xs | T`.
    PipeNotCall { span: Span, help: String },
    /// A statement nested deeper than `limits::MAX_DEPTH`; the span is the
    /// first part too deep.
    TooDeep { span: Span },
    /// A bracket the statement never closes: `type T : Data = {` and no
    /// `}`. The span is the opening bracket `open`; `close` is the one
    /// missing.
    Unclosed {
        span: Span,
        open: &'static str,
        close: &'static str,
    },
}

impl ParseError {
    pub fn span(&self) -> Span {
        match self {
            ParseError::Lex(e) => e.span.clone(),
            ParseError::Unexpected { span, .. }
            | ParseError::UnexpectedEnd { span, .. }
            | ParseError::PipeNotCall { span, .. }
            | ParseError::TooDeep { span }
            | ParseError::Unclosed { span, .. } => span.clone(),
        }
    }
}

/// Parse a whole program.
pub fn parse(src: &str) -> Result<Module, Vec<ParseError>> {
    parse_at(src, 0)
}

/// A source's text and where it starts in the program's span space.
#[derive(Clone, Copy)]
struct Text<'a> {
    src: &'a str,
    base: usize,
}

impl<'a> Text<'a> {
    fn slice(&self, span: Span) -> &'a str {
        let start = span.start.saturating_sub(self.base).min(self.src.len());
        let end = span
            .end
            .saturating_sub(self.base)
            .clamp(start, self.src.len());
        self.src.get(start..end).unwrap_or("")
    }
}

/// Parse a program whose spans start at `base` (each file of a program
/// gets its own range of offsets, so a span alone names its file).
pub fn parse_at(src: &str, base: usize) -> Result<Module, Vec<ParseError>> {
    let parsed = parse_recovering(src, base);
    if parsed.errors.is_empty() {
        Ok(parsed.module)
    } else {
        Err(parsed.errors)
    }
}

/// A file parsed as far as it goes, so that the checker can still check
/// every statement that parsed.
pub struct Parsed {
    /// The statements without syntax errors.
    pub module: Module,
    pub errors: Vec<ParseError>,
    /// The names the statements with errors would declare (`let x = (`).
    pub lost_names: Vec<String>,
    /// The file did not lex: none of its statements is known.
    pub lost_all: bool,
}

/// Parse every statement that can be parsed; see [`Parsed`].
pub fn parse_recovering(src: &str, base: usize) -> Parsed {
    let text = Text { src, base };
    let tokens = match lexer::lex_at(src, base) {
        Ok(tokens) => tokens,
        Err(es) => {
            return Parsed {
                module: Module { stmts: Vec::new() },
                errors: es.into_iter().map(ParseError::Lex).collect(),
                lost_names: Vec::new(),
                lost_all: true,
            }
        }
    };
    let mut stmts = Vec::new();
    let mut errors = Vec::new();
    let mut lost_names = Vec::new();
    for chunk in statements(tokens) {
        let declares = declared_name(&chunk);
        let before = errors.len();
        match parse_statement(text, chunk) {
            Ok(stmt) => match too_deep(&stmt) {
                // Deeper trees are not walked: the limit is what keeps
                // every later walk within the stack.
                Some(span) => errors.push(ParseError::TooDeep {
                    span: span.start..span.start + 1,
                }),
                None => {
                    check_pipes_in_stmt(text, &stmt, &mut errors);
                    if errors.len() == before {
                        stmts.push(stmt);
                    }
                }
            },
            Err(e) => errors.push(e),
        }
        if errors.len() > before {
            lost_names.extend(declares);
        }
    }
    errors.sort_by_key(|e| e.span().start);
    Parsed {
        module: Module { stmts },
        errors,
        lost_names,
        lost_all: false,
    }
}

/// The name a statement's tokens declare, whether or not it parses: the
/// name after `let`, `fn` or `type`, past doc comments and annotations.
fn declared_name(chunk: &[Spanned]) -> Option<String> {
    let preamble = |t: &Token| {
        matches!(
            t,
            Token::Doc(_)
                | Token::At
                | Token::Ident(_)
                | Token::LParen
                | Token::RParen
                | Token::Str(_)
                | Token::RawStr(_)
        )
    };
    let at = chunk.iter().position(|t| !preamble(&t.1))?;
    match (&chunk[at].1, chunk.get(at + 1).map(|t| &t.1)) {
        (Token::Let | Token::Fn | Token::Type, Some(Token::Ident(name))) => Some(name.clone()),
        _ => None,
    }
}

/// Parse one expression (for the REPL's `:type` and for tests).
pub fn parse_expr(src: &str) -> Result<Expr, Vec<ParseError>> {
    let module = parse(src)?;
    match module.stmts.into_iter().next() {
        Some(Stmt::Expr(e)) => Ok(e),
        _ => Err(vec![ParseError::UnexpectedEnd {
            expected: vec!["an expression".into()],
            span: 0..src.len(),
        }]),
    }
}

/// Cut the token stream at newlines outside every bracket.
fn statements(tokens: Vec<Spanned>) -> Vec<Vec<Spanned>> {
    let mut chunks = vec![Vec::new()];
    let mut depth = 0usize;
    for tok in tokens {
        match tok.1 {
            Token::Newline if depth == 0 => {
                chunks.push(Vec::new());
                continue;
            }
            Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace => depth = depth.saturating_sub(1),
            _ => {}
        }
        if let Some(c) = chunks.last_mut() {
            c.push(tok);
        }
    }
    chunks.retain(|c| !c.is_empty());
    chunks
}

fn parse_statement(src: Text, chunk: Vec<Spanned>) -> Result<Stmt, ParseError> {
    let first = chunk.first().map(|t| (t.0, t.1.clone()));
    let end = chunk.last().map(|t| t.2).unwrap_or(0);
    let unclosed = unclosed(&chunk);
    let tokens = chunk.into_iter().map(Ok::<_, String>);
    generated::StmtParser::new().parse(tokens).map_err(|e| {
        // A bracket left open runs the statement on into the next ones,
        // where the parser stops: the bracket is the mistake to show.
        match unclosed {
            Some((span, (open, close))) => ParseError::Unclosed { span, open, close },
            None => syntax_error(src, e, end, first),
        }
    })
}

/// The bracket a statement's tokens leave open, and the one that would
/// close it: the first one a closer of another kind skips (`(` in
/// `f(a]`), else the innermost still open at the end.
fn unclosed(chunk: &[Spanned]) -> Option<(Span, (&'static str, &'static str))> {
    let pair = |t: &Token| match t {
        Token::LParen => Some(("(", ")")),
        Token::LBracket => Some(("[", "]")),
        Token::LBrace => Some(("{", "}")),
        _ => None,
    };
    let mut open: Vec<(Span, (&'static str, &'static str))> = Vec::new();
    for (l, tok, r) in chunk {
        if let Some(p) = pair(tok) {
            open.push((*l..*r, p));
            continue;
        }
        let close = match tok {
            Token::RParen => ")",
            Token::RBracket => "]",
            Token::RBrace => "}",
            _ => continue,
        };
        // A closer of a bracket further out skips the ones inside it.
        if let Some(at) = open.iter().rposition(|(_, (_, c))| *c == close) {
            if at + 1 < open.len() {
                return open.into_iter().nth(at + 1);
            }
            open.truncate(at);
        }
    }
    open.pop()
}

fn syntax_error(
    src: Text,
    err: LalrError<usize, Token, String>,
    end: usize,
    first: Option<(usize, Token)>,
) -> ParseError {
    match err {
        LalrError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => {
            let help = help_for(src, &tok, l, first.as_ref());
            ParseError::Unexpected {
                found: describe(&tok),
                expected: tidy_expected(expected),
                span: l..r,
                help,
            }
        }
        LalrError::UnrecognizedEof { expected, .. } => ParseError::UnexpectedEnd {
            expected: tidy_expected(expected),
            span: end.saturating_sub(1)..end,
        },
        LalrError::ExtraToken { token: (l, tok, r) } => ParseError::Unexpected {
            found: describe(&tok),
            expected: vec![],
            span: l..r,
            help: None,
        },
        LalrError::InvalidToken { location } => ParseError::Unexpected {
            found: "an invalid token".into(),
            expected: vec![],
            span: location..location + 1,
            help: None,
        },
        LalrError::User { error } => ParseError::Unexpected {
            found: error,
            expected: vec![],
            span: end..end,
            help: None,
        },
    }
}

/// The fix for the common mistakes, where it is known.
fn help_for(src: Text, tok: &Token, at: usize, first: Option<&(usize, Token)>) -> Option<String> {
    let before = src.slice(0..at).trim_end();
    let comparison = ["==", "!=", "<=", ">=", "<", ">"];
    match tok {
        Token::Lt | Token::Le | Token::Gt | Token::Ge | Token::EqEq | Token::NotEq
            if comparison
                .iter()
                .any(|c| statement_text(src, first, at).contains(c)) =>
        {
            Some("comparisons do not chain: write `a < b and b < c`".into())
        }
        Token::Assign => Some("use `==` to compare two values".into()),
        Token::Minus if first.map(|f| f.0) == Some(at) => {
            Some("a statement cannot begin with unary minus: write `(-x)`".into())
        }
        _ if before.ends_with('|') => {
            Some("the right side of `|` is a call, such as `map(f)` or `count()`".into())
        }
        _ => None,
    }
}

fn statement_text<'a>(src: Text<'a>, first: Option<&(usize, Token)>, at: usize) -> &'a str {
    let start = first.map(|f| f.0).unwrap_or(0).min(at);
    src.slice(start..at)
}

fn tidy_expected(expected: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = expected
        .into_iter()
        .map(|e| match e.as_str() {
            "Ident" => "a name".to_string(),
            "IntLit" | "FloatLit" => "a number".to_string(),
            "StrLit" | "RawStrLit" => "a string".to_string(),
            // A share or a duration is the right next token only in an
            // expectation: naming them everywhere would only add noise.
            "LambdaParam" | "Doc" | "ShareLit" | "DurationLit" => String::new(),
            "\"newline\"" => "a new line".to_string(),
            other => format!("`{}`", other.trim_matches('"')),
        })
        .filter(|e| !e.is_empty())
        .collect();
    out.dedup();
    out
}

/// How a token reads in an error message.
pub fn describe(tok: &Token) -> String {
    match tok {
        Token::Ident(s) => format!("name `{s}`"),
        Token::Int(s) | Token::Float(s) => format!("number `{s}`"),
        Token::Share(s) => format!("share `{s}%`"),
        Token::Duration(s) => format!("duration `{s}`"),
        Token::Str(s) | Token::RawStr(s) => format!("string {}", s.text),
        Token::Newline => "end of line".into(),
        Token::Doc(_) => "doc comment".into(),
        Token::LambdaParam(s) => format!("lambda `{s} =>`"),
        other => format!("`{}`", token_text(other)),
    }
}

fn token_text(tok: &Token) -> &'static str {
    use Token::*;
    if let Some(word) = lexer::keyword_text(tok) {
        return word;
    }
    match tok {
        LParen => "(",
        RParen => ")",
        LBracket => "[",
        RBracket => "]",
        LBrace => "{",
        RBrace => "}",
        Comma => ",",
        Colon => ":",
        Assign => "=",
        FatArrow => "=>",
        Arrow => "->",
        Dot => ".",
        Question => "?",
        Coalesce => "??",
        Pipe => "|",
        Plus => "+",
        Minus => "-",
        Star => "*",
        Slash => "/",
        Percent => "%",
        EqEq => "==",
        NotEq => "!=",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
        At => "@",
        _ => "",
    }
}

// ----------------------------------------------------- helpers for the grammar

pub fn bin(op: BinOp, a: Expr, b: Expr, span: Span) -> Expr {
    Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

pub fn union(first: TypeExpr, rest: Vec<TypeExpr>) -> TypeExpr {
    if rest.is_empty() {
        return first;
    }
    let mut all = vec![first];
    all.extend(rest);
    TypeExpr::Union(all)
}

pub fn with_doc(member: Member, doc: Option<String>) -> Member {
    match member {
        Member::Field(f) => Member::Field(FieldDecl { doc, ..f }),
        Member::Rule(r) => Member::Rule(Rule { doc, ..r }),
        Member::Expect(e) => Member::Expect(Expectation { doc, ..e }),
        other => other,
    }
}

// ------------------------------------------------------------ nesting depth

/// A part of a statement: an expression or a type expression.
#[derive(Clone, Copy)]
enum Node<'a> {
    Expr(&'a Expr),
    Type(&'a TypeExpr),
}

/// The first part of `stmt` nested deeper than `limits::MAX_DEPTH`, found
/// with a loop (what follows parsing recurses, so it must not see such a
/// statement).
fn too_deep(stmt: &Stmt) -> Option<Span> {
    let mut todo: Vec<(Node, usize)> = Vec::new();
    match stmt {
        Stmt::Let { value: e, .. } | Stmt::Check { cond: e, .. } | Stmt::Expr(e) => {
            todo.push((Node::Expr(e), 1))
        }
        Stmt::Fn(f) => {
            todo.push((Node::Expr(&f.body), 1));
            let types = f.params.iter().filter_map(|p| p.ty.as_ref());
            todo.extend(types.chain(&f.ret).map(|t| (Node::Type(t), 1)));
        }
        Stmt::Type(t) => {
            let rules = match &t.body {
                TypeBody::Record(members) => {
                    for m in members {
                        match m {
                            Member::Field(f) => push_field(&mut todo, f, 1),
                            Member::Rule(r) => todo.push((Node::Expr(&r.cond), 1)),
                            Member::Expect(e) => todo.push((Node::Expr(&e.cond), 1)),
                            Member::Check { .. } | Member::Unique { .. } => {}
                        }
                    }
                    &[][..]
                }
                TypeBody::Refine { base, rules } => {
                    todo.push((Node::Type(base), 1));
                    &rules[..]
                }
            };
            todo.extend(rules.iter().map(|r| (Node::Expr(&r.cond), 1)));
        }
        Stmt::Import { .. } => {}
    }
    while let Some((node, depth)) = todo.pop() {
        let deeper = depth + 1;
        match node {
            Node::Expr(e) if depth > crate::syntax::limits::MAX_DEPTH => {
                return Some(e.span.clone())
            }
            Node::Type(t) if depth > crate::syntax::limits::MAX_DEPTH => return Some(t.span()),
            Node::Expr(e) => todo.extend(children(e).into_iter().map(|c| (Node::Expr(c), deeper))),
            Node::Type(TypeExpr::Generic { args: types, .. } | TypeExpr::Union(types)) => {
                todo.extend(types.iter().map(|t| (Node::Type(t), deeper)))
            }
            Node::Type(TypeExpr::Record { fields, .. }) => {
                fields.iter().for_each(|f| push_field(&mut todo, f, deeper))
            }
            Node::Type(TypeExpr::Name(_) | TypeExpr::Literal(..)) => {}
        }
    }
    None
}

/// A field's type and default, at `depth`.
fn push_field<'a>(todo: &mut Vec<(Node<'a>, usize)>, f: &'a FieldDecl, depth: usize) {
    todo.push((Node::Type(&f.ty), depth));
    todo.extend(f.default.iter().map(|d| (Node::Expr(d), depth)));
}

// ------------------------------------------------------ pipes must end in calls

fn check_pipes_in_stmt(src: Text, stmt: &Stmt, errors: &mut Vec<ParseError>) {
    let mut visit = |e: &Expr| check_pipes(src, e, errors);
    match stmt {
        Stmt::Let { value, .. } => visit(value),
        Stmt::Check { cond, .. } => visit(cond),
        Stmt::Expr(e) => visit(e),
        Stmt::Fn(f) => visit(&f.body),
        Stmt::Type(t) => {
            for e in type_exprs(t) {
                visit(e);
            }
        }
        Stmt::Import { .. } => {}
    }
}

fn type_exprs(t: &TypeDecl) -> Vec<&Expr> {
    let rules: Vec<&Rule> = match &t.body {
        TypeBody::Record(members) => members
            .iter()
            .filter_map(|m| match m {
                Member::Rule(r) => Some(r),
                _ => None,
            })
            .collect(),
        TypeBody::Refine { rules, .. } => rules.iter().collect(),
    };
    // Defaults and expectations' conditions.
    let defaults = match &t.body {
        TypeBody::Record(members) => members
            .iter()
            .filter_map(|m| match m {
                Member::Field(f) => f.default.as_ref(),
                Member::Expect(e) => Some(&e.cond),
                _ => None,
            })
            .collect(),
        TypeBody::Refine { .. } => vec![],
    };
    rules.into_iter().map(|r| &r.cond).chain(defaults).collect()
}

fn check_pipes(src: Text, e: &Expr, errors: &mut Vec<ParseError>) {
    if let ExprKind::Pipe(lhs, rhs) = &e.kind {
        if let Some(help) = pipe_help(src, lhs, rhs) {
            errors.push(ParseError::PipeNotCall {
                span: rhs.span.clone(),
                help,
            });
        }
    }
    for child in children(e) {
        check_pipes(src, child, errors);
    }
}

fn pipe_help(src: Text, lhs: &Expr, rhs: &Expr) -> Option<String> {
    let text = |e: &Expr| src.slice(e.span.clone());
    match &rhs.kind {
        ExprKind::Call(..) => None,
        ExprKind::Binary(op, a, b) if matches!(a.kind, ExprKind::Call(..)) => Some(format!(
            "arithmetic on a pipeline's result needs parentheses: `({} | {}) {} {}`",
            text(lhs),
            text(a),
            crate::syntax::canonical::binop_text(*op),
            text(b)
        )),
        ExprKind::Name(n) if n.starts_with(|c: char| c.is_uppercase()) => Some(format!(
            "to check values against a type, write `validate({n})`"
        )),
        ExprKind::Name(n) => Some(format!("call it: `{n}()`")),
        _ => Some("the right side of `|` is a call, such as `map(f)` or `count()`".into()),
    }
}

/// The direct subexpressions of `e`.
pub fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Name(_) | ExprKind::SelfRef => vec![],
        ExprKind::List(items) => items.iter().collect(),
        ExprKind::Record(fields) | ExprKind::Construct(_, fields) => {
            fields.iter().map(|(_, v)| v).collect()
        }
        ExprKind::Field(x, _)
        | ExprKind::Present(x)
        | ExprKind::Unary(_, x)
        | ExprKind::Lambda(_, x) => {
            vec![x]
        }
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) | ExprKind::Pipe(a, b) => vec![a, b],
        ExprKind::Call(f, args) => std::iter::once(&**f)
            .chain(args.iter().map(|a| &a.value))
            .collect(),
        ExprKind::If(c, a, b) => vec![c, a, b],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(src: &str) -> Vec<ParseError> {
        parse(src).expect_err("should not parse")
    }

    #[test]
    fn parses_the_first_program() {
        let src = "type Sighting : DataContract = {\n    species: String\n    seen: String\n\n    require seen == \"morning\" or seen == \"dusk\"\n}\n\nsource(file(\"x.jsonl\"), Json)\n| validate(Sighting)\n| oks()\n| map(s => fmt(\"{} at {}\", s.species, s.seen))\n";
        let m = parse(src).unwrap();
        assert_eq!(m.stmts.len(), 2);
    }

    #[test]
    fn recovers_at_statement_boundaries() {
        let errs = errors("let = 1\nlet y = 2\nlet z = (\n");
        assert_eq!(errs.len(), 2, "{errs:?}");
    }

    #[test]
    fn recovery_keeps_what_parsed_and_the_names_of_what_did_not() {
        let parsed = parse_recovering(
            "let a = 1\nlet b = 1 2\n@version(\"1\")\ntype T = = Int\nfn f(x) = x | b + a\na",
            0,
        );
        assert_eq!(parsed.module.stmts.len(), 2);
        assert_eq!(parsed.lost_names, vec!["b", "T", "f"]);
        assert!(!parsed.lost_all);
    }

    #[test]
    fn pipe_arithmetic_gets_help() {
        match &errors("[1, 2] | count() + 1")[0] {
            ParseError::PipeNotCall { help, .. } => {
                assert!(help.contains("([1, 2] | count()) + 1"), "{help}")
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn pipe_into_type_gets_help() {
        match &errors("[1] | Sighting")[0] {
            ParseError::PipeNotCall { help, .. } => assert!(help.contains("validate(Sighting)")),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn comparisons_do_not_chain() {
        match &errors("1 < 2 < 3")[0] {
            ParseError::Unexpected { help: Some(h), .. } => assert!(h.contains("do not chain")),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn keywords_are_names_after_dot_and_as_keys() {
        parse("let e = {type: 1, check: 2}\ne.type + e.check").unwrap();
        parse("type T : Data = {\n check: Bool\n type?: String\n}").unwrap();
    }

    #[test]
    fn members_and_attributes() {
        let src = "/// Orders.\n@version(\"1.2.0\")\n@owner(\"team\")\ntype Order : DataContract = {\n  /// the id\n  order_id: String\n  \"US Gross\"?: Int\n  country: String = \"CH\"\n  require ordered: low <= high else \"low must not exceed high\"\n  warn amount < 10_000\n  validate country with is_country_code\n  unique order_id\n  unique (a, b)\n}";
        let m = parse(src).unwrap();
        let Stmt::Type(t) = &m.stmts[0] else { panic!() };
        assert_eq!(t.attrs.len(), 2);
        assert_eq!(t.doc.as_deref(), Some("Orders."));
        let TypeBody::Record(members) = &t.body else {
            panic!()
        };
        assert_eq!(members.len(), 8);
    }

    #[test]
    fn expectations_are_members() {
        let src = "type Order : DataContract = {\n  /// enough\n  expect rows >= 1000\n  expect warn fresh: age(placed) <= 3d\n  expect budget: failures <= 1%, expect warn rows > 0\n}";
        let m = parse(src).unwrap();
        let Stmt::Type(t) = &m.stmts[0] else { panic!() };
        let TypeBody::Record(members) = &t.body else {
            panic!()
        };
        let expects: Vec<(bool, Option<&str>, Option<&str>)> = members
            .iter()
            .map(|m| match m {
                Member::Expect(e) => (
                    e.warn,
                    e.name.as_ref().map(|n| n.text.as_str()),
                    e.doc.as_deref(),
                ),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            expects,
            [
                (false, None, Some("enough")),
                (true, Some("fresh"), None),
                (false, Some("budget"), None),
                (true, None, None),
            ]
        );
        let Member::Expect(e) = &members[2] else {
            panic!()
        };
        let ExprKind::Binary(BinOp::Le, _, share) = &e.cond.kind else {
            panic!("{:?}", e.cond)
        };
        assert!(matches!(&share.kind, ExprKind::Lit(Lit::Percent(t)) if t == "1"));
        // `expect` stands in a type body only.
        assert!(parse("expect rows > 0").is_err());
    }

    #[test]
    fn refinements_and_functions() {
        parse("type Email = String require well_formed: matches(self, r\"^[^@]+@[^@]+$\")\n  require len(self) < 200").unwrap();
        parse("type Rating = \"G\" | \"PG\" | 3").unwrap();
        parse(
            "fn is_big(n: Int) -> Bool = n > 10\nlet f = x => x + 1\ncheck \"big\": is_big(f(10))",
        )
        .unwrap();
    }
}
