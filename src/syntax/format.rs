//! The formatter: `format_source(&str) -> Result<String, Vec<ParseError>>`.
//!
//! A program is parsed, then written again from its tree in one canonical
//! layout: expressions by the canonical printer (`canonical.rs`, the text
//! that gives unnamed rules their identity), declarations one member a
//! line, indented by four spaces. Nothing of the source's layout survives
//! except what the author meant to say with it: every comment (the lexer's
//! trivia) is put back — an own-line comment above the line that follows
//! it, an end-of-line comment at the end of its line — and a run of blank
//! lines between statements or members stays one blank line. A pipeline
//! wider than [`WIDTH`] columns, or holding a comment, goes one stage a
//! line with a leading `|`; a list that is too wide goes one item a line
//! (literals fill their lines instead).

use crate::syntax::ast::*;
use crate::syntax::canonical::{
    expr_text, field_head, is_identifier, lambda_place_text, pipeline_stages, stage_text,
    type_text, write_json_string, write_key,
};
use crate::syntax::lexer::{self, Comment, Token};
use crate::syntax::parser::{self, ParseError};

/// The widest a line may be before a pipeline or a list is broken.
pub const WIDTH: usize = 100;

const INDENT: usize = 4;

/// Format a whole program. A program that does not parse gives its errors.
pub fn format_source(src: &str) -> Result<String, Vec<ParseError>> {
    let module = parser::parse(src)?;
    let comments = match lexer::lex_with_comments(src) {
        Ok((_, comments)) => comments,
        Err(es) => return Err(es.into_iter().map(ParseError::Lex).collect()),
    };
    let mut w = Writer::new(src, &comments, false);
    for stmt in &module.stmts {
        w.stmt(stmt);
    }
    Ok(render(src, &w.lines, &comments))
}

/// A statement's canonical text: its formatted lines without comments, its
/// doc comments written from the tree. Two statements mean the same when
/// their texts are equal; the formatter is held to that.
pub fn stmt_text(stmt: &Stmt) -> String {
    let mut w = Writer::new("", &[], true);
    w.stmt(stmt);
    render("", &w.lines, &[])
}

/// A line of output, and the range of the source it prints.
struct Line {
    indent: usize,
    text: String,
    start: usize,
    end: usize,
    kind: LineKind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LineKind {
    /// The first line of a statement or a member: a blank line before it
    /// in the source is kept.
    Item,
    /// A later line of one: a pipeline's stage, a list's row.
    Inner,
    /// A closing bracket: the comments above it belong inside the block.
    Close,
}

/// Lays a tree out in lines; the last line stays open for what follows.
struct Writer<'a> {
    src: &'a str,
    comments: &'a [Comment],
    /// Write doc comments from the tree (for `stmt_text`); when formatting
    /// a file they come back as trivia, in their place among the comments.
    docs: bool,
    lines: Vec<Line>,
    cur: Line,
}

impl<'a> Writer<'a> {
    fn new(src: &'a str, comments: &'a [Comment], docs: bool) -> Writer<'a> {
        Writer {
            src,
            comments,
            docs,
            lines: Vec::new(),
            cur: Line {
                indent: 0,
                text: String::new(),
                start: 0,
                end: 0,
                kind: LineKind::Item,
            },
        }
    }

    fn begin(&mut self, indent: usize, kind: LineKind, start: usize) {
        self.cur = Line {
            indent,
            text: String::new(),
            start,
            end: start,
            kind,
        };
    }

    fn push(&mut self, s: &str) {
        self.cur.text.push_str(s);
    }

    fn finish(&mut self, end: usize) {
        let mut line = std::mem::replace(
            &mut self.cur,
            Line {
                indent: 0,
                text: String::new(),
                start: end,
                end,
                kind: LineKind::Inner,
            },
        );
        line.end = end.max(line.start);
        self.lines.push(line);
    }

    /// The columns the open line takes so far.
    fn width(&self) -> usize {
        self.cur.indent + self.cur.text.chars().count()
    }

    fn has_comment(&self, span: &Span) -> bool {
        self.comments
            .iter()
            .any(|c| span.start <= c.span.start && c.span.start < span.end)
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Import { path, span } => {
                self.begin(0, LineKind::Item, span.start);
                self.push("import ");
                self.push_string(path);
                self.finish(span.end);
            }
            Stmt::Let { name, value } => {
                self.begin(0, LineKind::Item, name.span.start);
                self.push("let ");
                self.push(&name.text);
                self.value(value, true);
                self.finish(value.span.end);
            }
            Stmt::Check { label, cond, span } => {
                self.begin(0, LineKind::Item, span.start);
                self.push("check ");
                self.push_label(&label.text);
                self.push(": ");
                self.expr(cond, false);
                self.finish(span.end);
            }
            Stmt::Expr(e) => {
                self.begin(0, LineKind::Item, e.span.start);
                let text = expr_text(e);
                // A line that starts with `-` would continue the one before.
                if text.starts_with('-') {
                    self.push(&format!("({text})"));
                } else {
                    self.expr(e, false);
                }
                self.finish(e.span.end);
            }
            Stmt::Fn(f) => self.fn_decl(f),
            Stmt::Type(t) => self.type_decl(t),
        }
    }

    fn push_string(&mut self, s: &str) {
        write_json_string(&mut self.cur.text, s);
    }

    /// A check's label: bare when it is a name, else a string.
    fn push_label(&mut self, label: &str) {
        let bare = is_identifier(label)
            && matches!(lexer::lex(label).as_deref(), Ok([(_, Token::Ident(_), _)]));
        if bare {
            self.push(label);
        } else {
            self.push_string(label);
        }
    }

    /// Doc lines from the tree, in `stmt_text` only.
    fn doc(&mut self, doc: &Option<String>, indent: usize, at: usize) {
        let Some(doc) = doc.as_ref().filter(|_| self.docs) else {
            return;
        };
        for line in doc.split('\n') {
            self.begin(indent, LineKind::Item, at);
            self.push("///");
            if !line.is_empty() {
                self.push(" ");
                self.push(line);
            }
            self.finish(at);
        }
    }

    /// An expression on the open line; a pipeline or a list that does not
    /// fit goes on lines of its own, the last one left open.
    fn expr(&mut self, e: &Expr, let_value: bool) {
        let text = if let_value {
            lambda_place_text(e)
        } else {
            expr_text(e)
        };
        let wide = self.width() + text.chars().count() > WIDTH;
        let stages = pipeline_stages(e);
        if stages.len() > 1 && (wide || self.has_comment(&e.span)) {
            return self.pipeline(&stages);
        }
        match &e.kind {
            ExprKind::List(items) if wide && !items.is_empty() => self.list(items, &e.span),
            ExprKind::If(..) if wide => self.if_chain(e),
            _ => self.push(&text),
        }
    }

    /// What follows a declaration's `=`: on the same line, or indented on
    /// the next when it does not fit there (a pipeline or a list breaks on
    /// its own instead).
    fn value(&mut self, e: &Expr, let_value: bool) {
        let text = if let_value {
            lambda_place_text(e)
        } else {
            expr_text(e)
        };
        let breaks_itself = matches!(e.kind, ExprKind::Pipe(..) | ExprKind::List(_));
        if breaks_itself || self.width() + 2 + text.chars().count() <= WIDTH {
            self.push(" = ");
            return self.expr(e, let_value);
        }
        self.push(" =");
        let indent = self.cur.indent + INDENT;
        self.finish(e.span.start);
        self.begin(indent, LineKind::Inner, e.span.start);
        self.expr(e, let_value);
    }

    /// `if … then … else if … else …` that does not fit: an arm a line
    /// (`then` on a line of its own when an arm does not fit either), and
    /// `else` last.
    fn if_chain(&mut self, e: &Expr) {
        let indent = if self.cur.text.is_empty() {
            self.cur.indent
        } else {
            self.cur.indent + INDENT
        };
        let mut at = e;
        while let ExprKind::If(c, a, b) = &at.kind {
            if !std::ptr::eq(at, e) {
                self.finish(at.span.start);
                self.begin(indent, LineKind::Inner, at.span.start);
                self.push("else ");
            }
            let cond = expr_text(c);
            let then = expr_text(a);
            let arm = format!("if {cond} then {then}");
            if self.width() + arm.chars().count() > WIDTH {
                self.push("if ");
                self.push(&cond);
                self.finish(c.span.end);
                self.begin(indent, LineKind::Inner, a.span.start);
                self.push("then ");
                self.expr(a, false);
            } else {
                self.push(&arm);
            }
            at = b;
        }
        self.finish(at.span.start);
        self.begin(indent, LineKind::Inner, at.span.start);
        self.push("else ");
        self.expr(at, false);
    }

    fn pipeline(&mut self, stages: &[&Expr]) {
        let indent = self.cur.indent + INDENT;
        let first = stage_text(stages[0], true);
        let wide_list = match &stages[0].kind {
            ExprKind::List(items) if self.width() + first.chars().count() > WIDTH => Some(items),
            _ => None,
        };
        match wide_list {
            // A list too wide for its line goes one item a line, and the
            // stages follow its `]` when they fit there.
            Some(items) if !items.is_empty() => {
                self.list(items, &stages[0].span);
                let rest: Vec<String> = stages[1..].iter().map(|s| stage_text(s, false)).collect();
                let rest = format!(" | {}", rest.join(" | "));
                let span = stages[0].span.end..stages[stages.len() - 1].span.end;
                if self.width() + rest.chars().count() <= WIDTH && !self.has_comment(&span) {
                    return self.push(&rest);
                }
            }
            _ => self.push(&first),
        }
        for pair in stages.windows(2) {
            self.finish(pair[0].span.end);
            self.begin(indent, LineKind::Inner, pair[1].span.start);
            self.push("| ");
            self.push(&stage_text(pair[1], false));
        }
    }

    fn list(&mut self, items: &[Expr], span: &Span) {
        let outer = self.cur.indent;
        let indent = outer + INDENT;
        self.push("[");
        self.finish(span.start + 1);
        let literals = items.iter().all(|e| matches!(e.kind, ExprKind::Lit(_)));
        let last = items.len() - 1;
        if literals {
            self.fill(items, indent);
        } else {
            for (i, item) in items.iter().enumerate() {
                self.begin(indent, LineKind::Inner, item.span.start);
                self.expr(item, false);
                if i < last {
                    self.push(",");
                }
                self.finish(item.span.end);
            }
        }
        self.begin(outer, LineKind::Close, span.end.saturating_sub(1));
        self.push("]");
    }

    /// Literals in the author's rows, each row filled as far as it fits.
    fn fill(&mut self, items: &[Expr], indent: usize) {
        let last = items.len() - 1;
        for (i, item) in items.iter().enumerate() {
            let mut text = expr_text(item);
            if i < last {
                text.push(',');
            }
            let fresh = self.cur.text.is_empty();
            let gap = i.checked_sub(1).map(|j| items[j].span.end..item.span.start);
            let new_row = gap
                .and_then(|g| self.src.get(g))
                .is_some_and(|g| g.contains('\n'));
            if !fresh && (new_row || self.width() + 1 + text.chars().count() > WIDTH) {
                self.finish(items[i - 1].span.end);
            }
            if self.cur.text.is_empty() {
                self.begin(indent, LineKind::Inner, item.span.start);
            } else {
                self.push(" ");
            }
            self.push(&text);
        }
        self.finish(items[last].span.end);
    }

    fn fn_decl(&mut self, f: &FnDecl) {
        self.doc(&f.doc, 0, f.span.start);
        self.begin(0, LineKind::Item, f.span.start);
        self.push("fn ");
        self.push(&f.name.text);
        self.push("(");
        for (i, p) in f.params.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.push(&p.name.text);
            if let Some(ty) = &p.ty {
                self.push(": ");
                self.ty(ty);
            }
        }
        self.push(")");
        if let Some(ret) = &f.ret {
            self.push(" -> ");
            self.ty(ret);
        }
        self.value(&f.body, false);
        self.finish(f.span.end);
    }

    fn type_decl(&mut self, t: &TypeDecl) {
        self.doc(&t.doc, 0, t.span.start);
        let mut kind = LineKind::Item;
        for a in &t.attrs {
            self.begin(0, kind, a.span.start);
            self.push("@");
            self.push(&a.name.text);
            self.push("(");
            self.push_string(&a.value);
            self.push(")");
            self.finish(a.span.end);
            kind = LineKind::Inner;
        }
        let start = match t.attrs.last() {
            Some(a) => next_token(self.src, a.span.end),
            None => t.span.start,
        };
        self.begin(0, kind, start);
        self.push("type ");
        self.push(&t.name.text);
        if let Some(parent) = &t.parent {
            self.push(" : ");
            self.push(&parent.text);
        }
        self.push(" = ");
        match &t.body {
            TypeBody::Record(members) => {
                let head_end = t.parent.as_ref().unwrap_or(&t.name).span.end;
                let open = next_token(self.src, head_end);
                if members.is_empty() && !self.has_comment(&t.span) {
                    self.push("{}");
                    return self.finish(t.span.end);
                }
                self.push("{");
                self.finish(open + 1);
                for m in members {
                    self.member(m, INDENT);
                }
                self.close("}", 0, t.span.end);
            }
            TypeBody::Refine { base, rules } => {
                self.ty(base);
                self.finish(base.span().end);
                for r in rules {
                    self.rule(r, INDENT);
                }
            }
        }
    }

    /// A closing bracket on a line of its own, ending at `end`.
    fn close(&mut self, bracket: &str, indent: usize, end: usize) {
        self.begin(indent, LineKind::Close, end.saturating_sub(1));
        self.push(bracket);
        self.finish(end);
    }

    fn member(&mut self, m: &Member, indent: usize) {
        match m {
            Member::Field(f) => self.field(f, indent),
            Member::Rule(r) => self.rule(r, indent),
            Member::Check { field, func, span } => {
                self.begin(indent, LineKind::Item, span.start);
                self.push("validate ");
                write_key(&mut self.cur.text, &field.text);
                self.push(" with ");
                self.push(&func.text);
                self.finish(span.end);
            }
            Member::Expect(e) => self.expectation(e, indent),
            Member::Unique { fields, span } => {
                self.begin(indent, LineKind::Item, span.start);
                self.push("unique ");
                let mut keys = String::new();
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        keys.push_str(", ");
                    }
                    write_key(&mut keys, &f.text);
                }
                if fields.len() == 1 {
                    self.push(&keys);
                } else {
                    self.push(&format!("({keys})"));
                }
                self.finish(span.end);
            }
        }
    }

    fn field(&mut self, f: &FieldDecl, indent: usize) {
        self.doc(&f.doc, indent, f.span.start);
        self.begin(indent, LineKind::Item, f.span.start);
        self.push(&field_head(f));
        self.ty(&f.ty);
        if let Some(d) = &f.default {
            self.push(" = ");
            self.expr(d, false);
        }
        self.finish(f.span.end);
    }

    fn rule(&mut self, r: &Rule, indent: usize) {
        self.doc(&r.doc, indent, r.span.start);
        self.begin(indent, LineKind::Item, r.span.start);
        self.push(match r.severity {
            Severity::Require => "require ",
            Severity::Warn => "warn ",
        });
        if let Some(name) = &r.name {
            self.push(&name.text);
            self.push(": ");
        }
        self.expr(&r.cond, false);
        if let Some(message) = &r.message {
            self.push(" else ");
            self.push_string(message);
        }
        self.finish(r.span.end);
    }

    fn expectation(&mut self, e: &Expectation, indent: usize) {
        self.doc(&e.doc, indent, e.span.start);
        self.begin(indent, LineKind::Item, e.span.start);
        self.push(if e.warn { "expect warn " } else { "expect " });
        if let Some(name) = &e.name {
            self.push(&name.text);
            self.push(": ");
        }
        self.expr(&e.cond, false);
        self.finish(e.span.end);
    }

    /// A type on the open line; an inline record type that has doc
    /// comments or comments, or does not fit, goes one field a line.
    fn ty(&mut self, t: &TypeExpr) {
        match t {
            TypeExpr::Record { fields, span } if self.record_breaks(t, fields, span) => {
                let indent = self.cur.indent;
                self.push("{");
                self.finish(span.start + 1);
                for f in fields {
                    self.field(f, indent + INDENT);
                }
                self.begin(indent, LineKind::Close, span.end.saturating_sub(1));
                self.push("}");
            }
            TypeExpr::Generic { name, args, .. } => {
                self.push(&name.text);
                self.push("[");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    self.ty(a);
                }
                self.push("]");
            }
            TypeExpr::Union(members) => {
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        self.push(" | ");
                    }
                    self.ty(m);
                }
            }
            _ => self.push(&type_text(t)),
        }
    }

    fn record_breaks(&self, t: &TypeExpr, fields: &[FieldDecl], span: &Span) -> bool {
        !fields.is_empty()
            && (fields.iter().any(|f| f.doc.is_some())
                || self.has_comment(span)
                || self.width() + type_text(t).chars().count() > WIDTH)
    }
}

/// Where the next token after `from` starts: past blanks and comments.
fn next_token(src: &str, from: usize) -> usize {
    let mut at = from;
    let bytes = src.as_bytes();
    while at < bytes.len() {
        match bytes[at] {
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = src[at..].find('\n').map_or(src.len(), |n| at + n);
            }
            b if b.is_ascii_whitespace() => at += 1,
            _ => return at,
        }
    }
    from.min(src.len())
}

/// Is there a blank line between source offsets `a` and `b`?
fn blank_between(src: &str, a: usize, b: usize) -> bool {
    let Some(gap) = src.get(a..b) else {
        return false;
    };
    let mut lines: Vec<&str> = gap.split('\n').collect();
    if lines.len() < 3 {
        return false;
    }
    lines.pop();
    lines[1..].iter().any(|l| l.trim().is_empty())
}

/// Is the comment the last thing on a line that has code before it?
fn is_trailing(src: &str, c: &Comment) -> bool {
    let line_start = src[..c.span.start].rfind('\n').map_or(0, |n| n + 1);
    let before = &src[line_start..c.span.start];
    let before = before.strip_prefix('\u{feff}').unwrap_or(before);
    !before.trim().is_empty()
}

/// The lines and the comments woven together, as text.
fn render(src: &str, lines: &[Line], comments: &[Comment]) -> String {
    let mut out = Out {
        src,
        lines: Vec::new(),
        last_code: None,
        prev_end: lexer::preamble_len(src),
        after_open: true,
        commented: false,
    };
    let mut next = 0;
    for line in lines {
        let mut trailing = Vec::new();
        while let Some(c) = comments.get(next).filter(|c| c.span.start < line.end) {
            next += 1;
            let text = comment_text(src, c);
            if !is_trailing(src, c) {
                let indent = line.indent
                    + if line.kind == LineKind::Close {
                        INDENT
                    } else {
                        0
                    };
                out.line(indent, text, c.span.clone(), true);
            } else if c.span.start >= line.start || out.last_code.is_none() {
                trailing.push(text);
            } else {
                out.append(text);
            }
        }
        out.line(
            line.indent,
            &line.text,
            line.start..line.end,
            line.kind == LineKind::Item,
        );
        out.last_code = Some(out.lines.len() - 1);
        out.commented = false;
        for t in trailing {
            out.append(t);
        }
        out.after_open = line.text.ends_with(['{', '[']);
    }
    for c in &comments[next..] {
        let text = comment_text(src, c);
        if is_trailing(src, c) && out.last_code.is_some() {
            out.append(text);
        } else {
            out.line(0, text, c.span.clone(), true);
        }
    }
    let mut text = preamble(src);
    for line in out.lines {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

fn comment_text<'s>(src: &'s str, c: &Comment) -> &'s str {
    src[c.span.clone()].trim_end()
}

/// The byte order mark and the `#!` line, kept as they are.
fn preamble(src: &str) -> String {
    let len = lexer::preamble_len(src);
    let mut text = src[..len].to_string();
    if text.trim_start_matches('\u{feff}').starts_with("#!") {
        text = text.trim_end().to_string();
        text.push('\n');
    }
    text
}

/// The text being rendered.
struct Out<'s> {
    src: &'s str,
    lines: Vec<String>,
    /// The last line of code written, which end-of-line comments join.
    last_code: Option<usize>,
    /// Where the source of what was last written ends.
    prev_end: usize,
    /// The last line opened a bracket: no blank line comes next.
    after_open: bool,
    /// The last line of code has an end-of-line comment.
    commented: bool,
}

impl Out<'_> {
    fn line(&mut self, indent: usize, text: &str, span: Span, may_blank: bool) {
        let blank = may_blank
            && !self.after_open
            && !self.lines.is_empty()
            && blank_between(self.src, self.prev_end, span.start);
        if blank {
            self.lines.push(String::new());
        }
        self.lines.push(format!("{}{text}", " ".repeat(indent)));
        self.prev_end = self.prev_end.max(span.end);
        self.after_open = false;
    }

    /// An end-of-line comment, at the end of the last line of code; when
    /// that line has one already, on a line of its own below, so that no
    /// two comments become one.
    fn append(&mut self, text: &str) {
        let Some(i) = self.last_code else { return };
        if self.commented {
            let indent = self.lines[i].len() - self.lines[i].trim_start().len();
            self.lines.push(format!("{}{text}", " ".repeat(indent)));
        } else {
            self.lines[i].push(' ');
            self.lines[i].push_str(text);
            self.commented = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(src: &str) -> String {
        format_source(src).unwrap()
    }

    #[test]
    fn statements_are_laid_out() {
        assert_eq!(fmt("let  x=1+2\nx*  3"), "let x = 1 + 2\nx * 3\n");
    }

    #[test]
    fn comments_stay_in_their_places() {
        let src = "// head\n\n\nlet x = 1 // one\n// before y\nlet y = 2\n// tail\n";
        assert_eq!(
            fmt(src),
            "// head\n\nlet x = 1 // one\n// before y\nlet y = 2\n// tail\n"
        );
    }
}
