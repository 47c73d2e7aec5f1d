//! A rule's condition in SQL: the `hir` expression of a `require` or
//! `warn` (or a refinement's rule, or the body of a function it calls)
//! compiled against a scope of SQL values.
//!
//! Calls of declared functions are inlined: each parameter becomes the SQL
//! of its argument. A function that calls itself (directly or through
//! others) cannot be inlined and is refused. Globals that are constants
//! (`let COUNTRY_CODES = [...]`) become literals.

use crate::runtime::builtins::Builtin;
use crate::runtime::contract::{RecordShape, Shape, TypeSpec};
use crate::runtime::decide::FailureKind;
use crate::runtime::eval::{Function, Interp};
use crate::runtime::hir::{Expr, FnDef, Logic};
use crate::runtime::stdlib_native::Native;
use crate::runtime::value::Value;
use crate::syntax::ast::BinOp;

use super::dialect::{Dialect, Loc, Ty, WHITE_SPACE};
use super::literal;

/// An expression in SQL, and when evaluating it raises in HQL (a division
/// by zero makes the rule's outcome `eval`): an SQL condition, `None` for
/// never. Operands are evaluated as HQL evaluates them — `and`, `or`, `=>`,
/// `??` and `if` stop early — so a raise counts only where it is reached.
#[derive(Debug, Clone)]
pub struct Sql {
    pub text: String,
    pub raises: Option<String>,
    /// Its scalar type when known; lists have none.
    pub ty: Option<Ty>,
    /// A list (of text, from `split`), or a constant list's items.
    pub list: Option<Option<Vec<String>>>,
    /// A JSON array or record of the data, read where a rule uses it.
    pub json: Option<Json>,
}

impl Sql {
    pub fn plain(text: String, ty: Option<Ty>) -> Sql {
        Sql {
            text,
            raises: None,
            ty,
            list: None,
            json: None,
        }
    }
}

/// A list or record of the data, as a rule reads it: where it is and
/// what it holds.
#[derive(Debug, Clone)]
pub struct Json {
    pub at: Loc,
    pub shape: Held,
}

/// What a value of the data holds, as far as rules read it.
#[derive(Debug, Clone)]
pub enum Held {
    Scalar(Ty),
    List(Box<Held>),
    /// A record's fields: name, what it holds, may it be missing.
    Record(Vec<(String, Held, bool)>),
    /// Something a rule cannot read (a map, a union of several kinds).
    Other,
}

impl Held {
    /// What a value of `t` holds, `depth` levels down at most.
    pub fn of(t: &TypeSpec, depth: usize) -> Held {
        if depth == 0 {
            return Held::Other;
        }
        if let Some(ty) = super::value_type(t) {
            return Held::Scalar(ty);
        }
        let record = |shape: &RecordShape| {
            Held::Record(
                shape
                    .fields
                    .iter()
                    .map(|f| {
                        let missing = f.optional && f.default.is_none();
                        (f.name.to_string(), Held::of(&f.ty, depth - 1), missing)
                    })
                    .collect(),
            )
        };
        match t {
            TypeSpec::List(item) => Held::List(Box::new(Held::of(item, depth - 1))),
            TypeSpec::Record(shape) => record(shape),
            TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
                Some(Shape::Refined { base, rules, .. }) if rules.is_empty() => {
                    Held::of(base, depth)
                }
                Some(Shape::Record { record: r, .. }) => record(r),
                _ => Held::Other,
            },
            _ => Held::Other,
        }
    }

    /// A value of this shape at `at`, as a rule reads it.
    pub fn read(&self, d: Dialect, at: Loc) -> Result<Sql, String> {
        Ok(match self {
            Held::Scalar(ty) => Sql::plain(d.read(&at, *ty), Some(*ty)),
            Held::Other => return Err("it reads a value whose type is not compiled".into()),
            shape => Sql {
                text: at.json.clone(),
                raises: None,
                ty: None,
                list: None,
                json: Some(Json {
                    at,
                    shape: shape.clone(),
                }),
            },
        })
    }
}

/// `a`'s raise, or `b`'s when `reached` (an SQL condition on `a`) holds.
fn raise_then(a: Option<&String>, reached: String, b: &Sql) -> Option<String> {
    let later = b
        .raises
        .as_ref()
        .map(|r| format!("(({reached}) AND ({r}))"));
    match (a, later) {
        (None, None) => None,
        (Some(x), None) => Some(x.clone()),
        (None, Some(y)) => Some(y),
        (Some(x), Some(y)) => Some(format!("({x}) OR {y}")),
    }
}

fn either(raises: impl IntoIterator<Item = Option<String>>) -> Option<String> {
    let all: Vec<String> = raises.into_iter().flatten().collect();
    (!all.is_empty()).then(|| format!("({})", all.join(") OR (")))
}

/// How many functions deep a rule's calls may be inlined.
const MAX_CALLS: usize = 16;

/// The values an expression reads: frame slot `i` at depth 0 (a rule's
/// `self` and fields, or a function's parameters), and the program's
/// globals.
pub struct Scope<'q> {
    pub dialect: Dialect,
    /// What the error names: `rule Order.positive`.
    pub what: String,
    pub globals: Option<&'q Interp>,
    /// Each slot's SQL, or why it cannot be read.
    pub slots: Vec<Result<Sql, String>>,
    /// The names of `self`'s fields by slot (slot 1 first), for `self.f`.
    pub names: Vec<String>,
    /// The functions being inlined, outermost first.
    pub calls: Vec<String>,
    /// The frames around a lambda's: its rule's, then enclosing lambdas'.
    pub outer: Vec<Vec<Result<Sql, String>>>,
}

type Compiled<T> = Result<T, String>;

impl<'q> Scope<'q> {
    /// A scope of `slots` at the top of a rule or check: no functions
    /// being inlined, no lambda around it.
    pub fn new(
        dialect: Dialect,
        what: String,
        globals: Option<&'q Interp>,
        slots: Vec<Result<Sql, String>>,
    ) -> Scope<'q> {
        Scope {
            dialect,
            what,
            globals,
            slots,
            names: Vec::new(),
            calls: Vec::new(),
            outer: Vec::new(),
        }
    }

    pub fn expr(&self, e: &Expr) -> Compiled<Sql> {
        let d = self.dialect;
        Ok(match e {
            Expr::Const(v) => self.constant(v)?,
            Expr::Local { depth: 0, slot } => match self.slots.get(*slot as usize) {
                Some(Ok(sql)) => sql.clone(),
                Some(Err(why)) => return Err(why.clone()),
                None => return Err("it reads a value the compiler cannot place".into()),
            },
            Expr::Local { depth, slot } => {
                let frame = (*depth as usize)
                    .checked_sub(1)
                    .and_then(|up| self.outer.len().checked_sub(up + 1))
                    .and_then(|i| self.outer.get(i));
                match frame.and_then(|f| f.get(*slot as usize)) {
                    Some(Ok(sql)) => sql.clone(),
                    Some(Err(why)) => return Err(why.clone()),
                    None => return Err("it reads a value the compiler cannot place".into()),
                }
            }
            Expr::Global(slot, _) => match self.global(*slot)? {
                Value::Func(_) => return Err("it passes a function as a value".into()),
                v => self.constant(&v)?,
            },
            Expr::Field {
                target, name, soft, ..
            } => match &**target {
                Expr::Local { depth: 0, slot: 0 } if !self.names.is_empty() => {
                    self.field_of_self(name)?
                }
                _ => self.field_of_record(target, name, *soft)?,
            },
            Expr::Index {
                target,
                index,
                soft,
                ..
            } => match (&**target, &**index) {
                (Expr::Local { depth: 0, slot: 0 }, Expr::Const(Value::Str(name)))
                    if !self.names.is_empty() =>
                {
                    self.field_of_self(name)?
                }
                (_, Expr::Const(Value::Str(name))) => self.field_of_record(target, name, *soft)?,
                _ => {
                    let (list, i) = (self.expr(target)?, self.expr(index)?);
                    if list.list.is_none() || i.ty != Some(Ty::Int) {
                        return Err("it indexes a value other than a list by an Int".into());
                    }
                    let n = d.size(&list.text);
                    let outside =
                        (!soft).then(|| format!("({i}) >= {n} OR ({i}) < -{n}", i = i.text));
                    Sql {
                        text: d.element(&list.text, &i.text),
                        raises: either([list.raises, i.raises, outside]),
                        ty: Some(Ty::Text),
                        list: None,
                        json: None,
                    }
                }
            },
            Expr::Soft(x) => self.expr(x)?,
            Expr::Presence(x) => {
                let x = self.expr(x)?;
                Sql {
                    text: format!("({}) IS NOT NULL", x.text),
                    raises: x.raises,
                    ty: Some(Ty::Bool),
                    list: None,
                    json: None,
                }
            }
            Expr::Not(x, _) => self.unary(x, "NOT", Some(Ty::Bool))?,
            Expr::Neg(x, _) => {
                let ty = self.expr(x)?.ty;
                self.unary(x, "-", ty)?
            }
            Expr::Logic(op, a, b, _) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                let (text, reached) = match op {
                    Logic::And => (
                        format!("({}) AND ({})", a.text, b.text),
                        format!("({}) IS NOT FALSE", a.text),
                    ),
                    Logic::Or => (
                        format!("({}) OR ({})", a.text, b.text),
                        format!("({}) IS NOT TRUE", a.text),
                    ),
                    Logic::Implies => (
                        format!("(NOT ({})) OR ({})", a.text, b.text),
                        format!("({}) IS NOT FALSE", a.text),
                    ),
                };
                Sql {
                    raises: raise_then(a.raises.as_ref(), reached, &b),
                    text,
                    ty: Some(Ty::Bool),
                    list: None,
                    json: None,
                }
            }
            Expr::Binary(op, a, b, _) => self.binary(*op, a, b)?,
            Expr::If(c, a, b, _) => {
                let (c, a, b) = (self.expr(c)?, self.expr(a)?, self.expr(b)?);
                let then = raise_then(None, format!("({}) IS TRUE", c.text), &a);
                let other = raise_then(None, format!("({}) IS NOT TRUE", c.text), &b);
                Sql {
                    text: format!(
                        "CASE WHEN ({}) THEN ({}) ELSE ({}) END",
                        c.text, a.text, b.text
                    ),
                    raises: either([c.raises, then, other]),
                    ty: a.ty.or(b.ty),
                    list: None,
                    json: None,
                }
            }
            Expr::Matches { subject, regex, .. } => {
                let subject = self.expr(subject)?;
                let pattern = super::regex::translate(regex.as_str(), d)?;
                Sql {
                    text: d.regex_search(&subject.text, &pattern),
                    raises: subject.raises,
                    ty: Some(Ty::Bool),
                    list: None,
                    json: None,
                }
            }
            Expr::Builtin { builtin, args, .. } => self.builtin(*builtin, args)?,
            Expr::Call { func, args, .. } => self.call(func, args)?,
            Expr::List(items) => {
                let items = items
                    .iter()
                    .map(|i| match i {
                        Expr::Const(v) => literal(v, d),
                        _ => None,
                    })
                    .collect::<Option<Vec<String>>>()
                    .ok_or("it builds a list of values that are not constants")?;
                self.constant_list(items)
            }
            _ => return Err("it uses an expression the compiler does not know yet".into()),
        })
    }

    fn field_of_self(&self, name: &str) -> Compiled<Sql> {
        let Some(i) = self.names.iter().position(|n| n == name) else {
            return Err("it reads an undeclared field of `self`".into());
        };
        self.expr(&Expr::Local {
            depth: 0,
            slot: i as u32 + 1,
        })
    }

    /// Field `name` of a record of the data (a list's item, say).
    fn field_of_record(&self, target: &Expr, name: &str, soft: bool) -> Compiled<Sql> {
        let d = self.dialect;
        let record = self.expr(target)?;
        let Some(Json {
            at,
            shape: Held::Record(fields),
        }) = &record.json
        else {
            return Err("it reads a field of a value that is not a record of the data".into());
        };
        let Some((_, held, optional)) = fields.iter().find(|(n, ..)| n == name) else {
            return Err(format!("it reads the undeclared field {name} of a record"));
        };
        let at = d.field(at, name);
        // Reading a field the record lacks raises, unless written `f?`; a
        // record that passed its checks has its required fields.
        let missing = (!soft && *optional).then(|| {
            format!(
                "({}) IS NULL AND ({}) IS NOT NULL",
                d.kind_of(&at),
                record.text
            )
        });
        let mut value = held.read(d, at)?;
        value.raises = either([record.raises, missing]);
        Ok(value)
    }

    /// A lambda's body over each item of a list of the data: an SQL list.
    fn each(&self, list: &Sql, f: &Expr) -> Compiled<Sql> {
        let d = self.dialect;
        let Some(Json {
            at,
            shape: Held::List(item),
        }) = &list.json
        else {
            return Err("it maps a value that is not a list of the data".into());
        };
        let Expr::Lambda(lambda) = f else {
            return Err("it maps with something other than a lambda".into());
        };
        let mut outer = self.outer.clone();
        outer.push(self.slots.clone());
        let n = format!("hql_m{}", outer.len());
        let mut body = Err(String::new());
        let text = d.each(at, &n, |elem, _| {
            body = item.read(d, elem.clone()).and_then(|value| {
                Scope {
                    dialect: d,
                    what: self.what.clone(),
                    globals: self.globals,
                    slots: vec![Ok(value)],
                    names: Vec::new(),
                    calls: self.calls.clone(),
                    outer,
                }
                .expr(&lambda.body)
            });
            body.as_ref().map(|b| b.text.clone()).unwrap_or_default()
        });
        let body = body?;
        if body.raises.is_some() || body.json.is_some() {
            return Err("it maps with a lambda that may raise or gives lists".into());
        }
        Ok(Sql {
            text,
            raises: list.raises.clone(),
            ty: body.ty,
            list: Some(None),
            json: None,
        })
    }

    fn unary(&self, x: &Expr, op: &str, ty: Option<Ty>) -> Compiled<Sql> {
        let x = self.expr(x)?;
        Ok(Sql {
            text: format!("{op} ({})", x.text),
            raises: x.raises,
            ty,
            list: None,
            json: None,
        })
    }

    fn global(&self, slot: u32) -> Compiled<Value> {
        self.globals
            .and_then(|g| g.global_value(slot))
            .ok_or_else(|| "it reads a global the compiler cannot see".to_string())
    }

    fn constant(&self, v: &Value) -> Compiled<Sql> {
        if let Value::List(items) = v {
            let items = items
                .iter()
                .map(|i| literal(i, self.dialect))
                .collect::<Option<Vec<String>>>()
                .ok_or("it reads a list holding something other than scalars")?;
            return Ok(self.constant_list(items));
        }
        let text = literal(v, self.dialect).ok_or("it holds a constant that is not a scalar")?;
        let ty = match v {
            Value::Bool(_) => Some(Ty::Bool),
            Value::Str(_) => Some(Ty::Text),
            v if v.is_int() => Some(Ty::Int),
            v if v.is_number() => Some(Ty::Float),
            _ => None,
        };
        Ok(Sql::plain(text, ty))
    }

    fn constant_list(&self, items: Vec<String>) -> Sql {
        let text = if items.is_empty() {
            "NULL".into()
        } else {
            self.dialect.list(&items)
        };
        Sql {
            text,
            raises: None,
            ty: None,
            list: Some(Some(items)),
            json: None,
        }
    }

    /// A declared function's body, its parameters bound to the arguments.
    fn call(&self, func: &Expr, args: &[Expr]) -> Compiled<Sql> {
        let args = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Compiled<Vec<Sql>>>()?;
        self.apply(func, args)
    }

    /// The function `func` (a declared one) called with `args`.
    pub fn apply(&self, func: &Expr, args: Vec<Sql>) -> Compiled<Sql> {
        let Expr::Global(slot, _) = func else {
            return Err("it calls a function value (only declared functions compile)".into());
        };
        let Value::Func(f) = self.global(*slot)? else {
            return Err("it calls a value that is not a function".into());
        };
        let Function::Decl(def) = &*f else {
            return Err("it calls a function value (only declared functions compile)".into());
        };
        if self.calls.contains(&def.name) {
            return Err(format!(
                "it calls `{}`, which calls itself (recursion does not compile to SQL)",
                def.name
            ));
        }
        if self.calls.len() >= MAX_CALLS {
            return Err(format!("its calls nest deeper than {MAX_CALLS} functions"));
        }
        if let Some(sql) = self.calendar(def, &args) {
            return Ok(sql);
        }
        let mut calls = self.calls.clone();
        calls.push(def.name.clone());
        let inner = Scope {
            dialect: self.dialect,
            what: self.what.clone(),
            globals: self.globals,
            slots: args
                .iter()
                .map(|a| {
                    Ok(Sql {
                        raises: None,
                        ..a.clone()
                    })
                })
                .collect(),
            names: Vec::new(),
            outer: Vec::new(),
            calls,
        };
        let body = inner.expr(&def.body)?;
        // An absent argument makes the call absent (§5).
        let absent: Vec<String> = args
            .iter()
            .filter(|a| a.list.is_none())
            .map(|a| format!("({}) IS NULL", a.text))
            .collect();
        let (text, reached) = if absent.is_empty() {
            (body.text.clone(), "true".to_string())
        } else {
            let any = absent.join(" OR ");
            (
                format!("CASE WHEN {any} THEN NULL ELSE {} END", body.text),
                format!("NOT ({any})"),
            )
        };
        Ok(Sql {
            text,
            raises: either(
                args.iter()
                    .map(|a| a.raises.clone())
                    .chain([raise_then(None, reached, &body)]),
            ),
            ty: body.ty,
            list: body.list,
            json: None,
        })
    }

    /// The standard library's `is_date` and `is_timestamp` in a compact
    /// form: their own regex (read from their body), then the calendar
    /// check on the first ten characters, which that regex makes the date.
    /// Inlined as written, their nested calls repeat the text so often that
    /// engines' parsers run out of memory.
    fn calendar(&self, def: &FnDef, args: &[Sql]) -> Option<Sql> {
        let d = self.dialect;
        let timestamp = match def.native? {
            Native::IsDate => false,
            Native::IsTimestamp => true,
            _ => return None,
        };
        let [s] = args else { return None };
        if s.ty != Some(Ty::Text) {
            return None;
        }
        let Expr::If(cond, ..) = &def.body else {
            return None;
        };
        let Expr::Matches { regex, .. } = &**cond else {
            return None;
        };
        let shape = super::regex::translate(regex.as_str(), d).ok()?;
        let date = if timestamp {
            format!("substr({}, 1, 10)", s.text)
        } else {
            s.text.clone()
        };
        let part = |from: usize, len: usize| format!("CAST(substr({date}, {from}, {len}) AS INT)");
        let (y, m, day) = (part(1, 4), part(6, 2), part(9, 2));
        let text = format!(
            "CASE WHEN ({s}) IS NULL THEN NULL WHEN {matches} THEN {day} >= 1 AND {day} <= \
             CASE WHEN {m} < 1 OR {m} > 12 THEN 0 WHEN {m} = 2 THEN \
             CASE WHEN ({y} % 4 = 0 AND {y} % 100 <> 0) OR {y} % 400 = 0 THEN 29 ELSE 28 END \
             WHEN {m} IN (4, 6, 9, 11) THEN 30 ELSE 31 END ELSE false END",
            s = s.text,
            matches = d.regex_search(&s.text, &shape),
        );
        Some(Sql {
            text,
            raises: s.raises.clone(),
            ty: Some(Ty::Bool),
            list: None,
            json: None,
        })
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr) -> Compiled<Sql> {
        let d = self.dialect;
        let (x, y) = (self.expr(a)?, self.expr(b)?);
        if matches!(op, BinOp::In | BinOp::NotIn) {
            let Some(Some(items)) = &y.list else {
                return Err("`in` needs a list of constants".into());
            };
            let not = if op == BinOp::NotIn { "NOT " } else { "" };
            let text = if items.is_empty() {
                format!(
                    "CASE WHEN ({}) IS NULL THEN NULL ELSE {} END",
                    x.text,
                    op == BinOp::NotIn
                )
            } else {
                format!("({}) {not}IN ({})", x.text, items.join(", "))
            };
            return Ok(Sql {
                text,
                raises: x.raises,
                ty: Some(Ty::Bool),
                list: None,
                json: None,
            });
        }
        let numeric = |x: &Sql, y: &Sql| {
            if x.ty == Some(Ty::Int) && y.ty == Some(Ty::Int) {
                Some(Ty::Int)
            } else {
                Some(Ty::Float)
            }
        };
        let (text, ty) = match op {
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let sql_op = match op {
                    BinOp::Eq => "=",
                    BinOp::Ne => "<>",
                    BinOp::Lt => "<",
                    BinOp::Le => "<=",
                    BinOp::Gt => ">",
                    _ => ">=",
                };
                let texts = [x.ty, y.ty].contains(&Some(Ty::Text));
                let order = match op {
                    BinOp::Eq | BinOp::Ne => "",
                    _ if texts => d.text_order(),
                    _ => "",
                };
                (
                    format!("({}) {sql_op} ({}){order}", x.text, y.text),
                    Some(Ty::Bool),
                )
            }
            BinOp::Add if x.ty == Some(Ty::Text) && y.ty == Some(Ty::Text) => {
                (format!("({}) || ({})", x.text, y.text), Some(Ty::Text))
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let sql_op = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    _ => "*",
                };
                (
                    format!("({}) {sql_op} ({})", x.text, y.text),
                    numeric(&x, &y),
                )
            }
            BinOp::Div => (d.divide(&x.text, &y.text), Some(Ty::Float)),
            BinOp::Rem => (d.remainder(&x.text, &y.text), numeric(&x, &y)),
            BinOp::Coalesce => {
                return Ok(Sql {
                    raises: raise_then(x.raises.as_ref(), format!("({}) IS NULL", x.text), &y),
                    text: format!("coalesce({}, {})", x.text, y.text),
                    ty: x.ty.or(y.ty),
                    list: None,
                    json: None,
                })
            }
            _ => return Err("it uses an operator the compiler does not know yet".into()),
        };
        // HQL raises on a division by zero; SQL would give NULL.
        let by_zero = matches!(op, BinOp::Div | BinOp::Rem)
            .then(|| format!("({}) = 0 AND ({}) IS NOT NULL", y.text, x.text));
        Ok(Sql {
            text,
            raises: either([x.raises, y.raises, by_zero]),
            ty,
            list: None,
            json: None,
        })
    }

    fn builtin(&self, b: Builtin, args: &[Expr]) -> Compiled<Sql> {
        let d = self.dialect;
        if b != Builtin::Map && args.iter().any(|a| matches!(a, Expr::Lambda(_))) {
            return Err(format!("it calls `{}` (not compiled to SQL)", b.name()));
        }
        if let (Builtin::Map, [list, f]) = (b, args) {
            let list = self.expr(list)?;
            return self.each(&list, f);
        }
        if let (Builtin::Len | Builtin::Count | Builtin::Sum, [list]) = (b, args) {
            let list = self.expr(list)?;
            if let Some(Json {
                at,
                shape: Held::List(item),
            }) = &list.json
            {
                let text = match (b, &**item) {
                    (Builtin::Sum, Held::Scalar(ty @ (Ty::Int | Ty::Float))) => {
                        d.sum(&d.each(at, "hql_s", |e, _| d.read(e, *ty)), *ty)
                    }
                    (Builtin::Sum, _) => return Err("it sums a list that is not of numbers".into()),
                    _ => d.array_length(at),
                };
                let ty = match (b, &**item) {
                    (Builtin::Sum, Held::Scalar(ty)) => Some(*ty),
                    _ => Some(Ty::Int),
                };
                return Ok(Sql {
                    text,
                    raises: list.raises,
                    ty,
                    list: None,
                    json: None,
                });
            }
            if list.list.is_some() && b != Builtin::Len {
                let text = match b {
                    Builtin::Sum => match list.ty {
                        Some(ty @ (Ty::Int | Ty::Float)) => d.sum(&list.text, ty),
                        _ => return Err("it sums a list that is not of numbers".into()),
                    },
                    _ => d.size(&list.text),
                };
                return Ok(Sql {
                    text,
                    raises: list.raises,
                    ty: if b == Builtin::Sum {
                        list.ty
                    } else {
                        Some(Ty::Int)
                    },
                    list: None,
                    json: None,
                });
            }
        }
        // `split` and `replace` need their separators written in the rule.
        let literal_text = |i: usize| match args.get(i) {
            Some(Expr::Const(Value::Str(s))) if !s.is_empty() => Ok(s.to_string()),
            _ => Err(format!(
                "it calls `{}` with a separator that is not a non-empty text written in the rule",
                b.name()
            )),
        };
        let compiled = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Compiled<Vec<Sql>>>()?;
        let texts: Vec<&str> = compiled.iter().map(|a| a.text.as_str()).collect();
        let a = compiled.first();
        let a_text = texts.first().copied().unwrap_or_default();
        let is_list = a.is_some_and(|a| a.list.is_some());
        let a_ty = a.and_then(|a| a.ty);
        let mut raises = None;
        let (text, ty, list) = match b {
            Builtin::Len if is_list => (d.size(a_text), Some(Ty::Int), None),
            Builtin::Len => (d.text_fn("len", &texts), Some(Ty::Int), None),
            Builtin::Lower | Builtin::Upper => (d.text_fn(b.name(), &texts), Some(Ty::Text), None),
            Builtin::Trim => (
                d.regex_remove(a_text, &format!("^[{WHITE_SPACE}]+|[{WHITE_SPACE}]+\\z")),
                Some(Ty::Text),
                None,
            ),
            Builtin::Contains if is_list => (
                d.list_contains(a_text, texts.get(1).copied().unwrap_or_default()),
                Some(Ty::Bool),
                None,
            ),
            Builtin::Contains | Builtin::StartsWith | Builtin::EndsWith => {
                (d.text_fn(b.name(), &texts), Some(Ty::Bool), None)
            }
            Builtin::Abs => (d.text_fn("abs", &texts), a_ty, None),
            Builtin::Round | Builtin::Floor | Builtin::Ceil if a_ty == Some(Ty::Int) => {
                (a_text.to_string(), Some(Ty::Int), None)
            }
            Builtin::Round | Builtin::Floor | Builtin::Ceil => {
                let f = d.text_fn(b.name(), &[a_text]);
                let (text, outside) = within_int(&f, &d.cast(&f, Ty::Int));
                raises = Some(outside);
                (text, Some(Ty::Int), None)
            }
            Builtin::Int if a_ty == Some(Ty::Text) => {
                let (text, bad) = self.parse_number(a_text, true);
                raises = Some(bad);
                (text, Some(Ty::Int), None)
            }
            Builtin::Int if a_ty == Some(Ty::Int) => (a_text.to_string(), Some(Ty::Int), None),
            Builtin::Int if a_ty == Some(Ty::Float) => {
                let (text, outside) = within_int(a_text, &d.trunc_to_int(a_text));
                raises = Some(outside);
                (text, Some(Ty::Int), None)
            }
            Builtin::Float if a_ty == Some(Ty::Text) => {
                let (text, bad) = self.parse_number(a_text, false);
                raises = Some(bad);
                (text, Some(Ty::Float), None)
            }
            Builtin::Float if matches!(a_ty, Some(Ty::Int | Ty::Float)) => {
                (d.cast(a_text, Ty::Float), Some(Ty::Float), None)
            }
            Builtin::Replace => {
                literal_text(1)?;
                (
                    format!("replace({})", texts.join(", ")),
                    Some(Ty::Text),
                    None,
                )
            }
            Builtin::Split => {
                let sep = literal_text(1)?;
                (
                    d.text_fn("split", &[a_text, &d.split_separator(&sep)]),
                    None,
                    Some(None),
                )
            }
            other => {
                return Err(format!(
                    "it calls `{}` (not compiled to SQL{})",
                    other.name(),
                    if matches!(other, Builtin::Int | Builtin::Float) {
                        " on a value whose type the compiler does not know"
                    } else {
                        ""
                    }
                ))
            }
        };
        Ok(Sql {
            text,
            raises: either(compiled.into_iter().map(|a| a.raises).chain([raises])),
            ty,
            list,
            json: None,
        })
    }

    /// `int(s)` or `float(s)` of a text as HQL reads it: white space
    /// trimmed, then an integer or a decimal number (`int` truncates it);
    /// anything else raises. The SQL and its raise condition.
    fn parse_number(&self, s: &str, int: bool) -> (String, String) {
        let d = self.dialect;
        let t = d.regex_remove(s, &format!("^[{WHITE_SPACE}]+|[{WHITE_SPACE}]+\\z"));
        let integer = "^[+-]?[0-9]+\\z";
        let decimal = "^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\z";
        let as_float = d.cast(&t, Ty::Float);
        if int {
            let whole = d.try_cast(&t, Ty::Int);
            let text = format!(
                "CASE WHEN {} THEN {whole} WHEN {} AND abs({as_float}) < 9.223e18 THEN {} END",
                d.regex_search(&t, integer),
                d.regex_search(&t, decimal),
                d.trunc_to_int(&as_float)
            );
            let bad = format!("({s}) IS NOT NULL AND ({text}) IS NULL");
            (text, bad)
        } else {
            let text = format!(
                "CASE WHEN {} THEN {as_float} END",
                d.regex_search(&t, decimal)
            );
            let bad = format!("({s}) IS NOT NULL AND ({text}) IS NULL");
            (text, bad)
        }
    }
}

/// `int` of the Float `x` (its SQL `int`) where it fits HQL's 64 bits,
/// and the condition under which it does not (HQL raises).
fn within_int(x: &str, int: &str) -> (String, String) {
    (
        format!("CASE WHEN abs({x}) < 9.223e18 THEN {int} END"),
        format!("abs({x}) >= 9.223e18"),
    )
}

/// A rule as a failure (or warning) struct, NULL when it holds: `cond`
/// compiled, `live` an SQL condition for the rule being checked at all.
pub fn outcome(
    d: Dialect,
    cond: &Sql,
    id: &str,
    kind: &str,
    path: &str,
    live: Option<&str>,
) -> String {
    let live = live.map(|l| format!("{l} AND ")).unwrap_or_default();
    let id = d.string(id);
    let eval = match &cond.raises {
        Some(r) => format!(
            "WHEN {live}({r}) IS TRUE THEN {} ",
            d.failure(&id, &d.string(FailureKind::Eval.name()), path)
        ),
        None => String::new(),
    };
    format!(
        "CASE {eval}WHEN {live}({}) IS FALSE THEN {} END",
        cond.text,
        d.failure(&id, &d.string(kind), path)
    )
}
