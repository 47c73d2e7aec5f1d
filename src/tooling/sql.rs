//! `hql export FILE TYPE --format sql --dialect duckdb` (tooling.md, "Scale
//! past one machine"): a record contract compiled into one SQL query that
//! gives, for every line of a JSON Lines input, the identities of the rules
//! it breaks — the same identities, in the same order, as `validate` — so a
//! table too big for one machine is checked where it lies and the results
//! compare one to one with `hql run`.
//!
//! Input: a compiled record contract (`runtime::contract::Contract`; rules
//! as `hir`, fields as frame slots). Output: the query's text, or the first
//! part of the contract that does not compile, named, with the reason —
//! never a query that silently checks less than the contract says.
//!
//! The query reads each line as text (so `"5"` and `5` stay different),
//! decodes it with the engine's JSON functions, and builds per line:
//! `hql_line`, `hql_ok`, `hql_failures` (a list of `{rule, kind, path}` in
//! `validate`'s order: each field's missing, null or type failure in
//! declaration order, undeclared fields of a closed kind, then the `require`
//! rules over fields that passed, then a `unique` key) and `hql_warnings`
//! (the `warn` rules of a record with no failure). `--summary` folds that
//! into `report()`'s one row.
//!
//! What compiles today: fields of scalar types, literal unions, unions of
//! scalars, `| Null`, aliases, lists of scalars, defaults that are
//! literals, open and closed kinds, rules and warnings over scalar fields
//! built from comparisons, arithmetic, `and`/`or`/`not`/`=>`, `in`, `??`,
//! `?`, `if`, `len`, `lower`, `upper`, `trim`, `contains`, `starts_with`,
//! `ends_with`, `abs` and `matches`, and one `unique` key. Nested records,
//! lists of records, maps, refinements with rules (the standard library's
//! `Email`, `Timestamp`, …), named checks and calls of functions are named
//! as not compiled yet.

use std::fmt::Write as _;

use crate::runtime::builtins::Builtin;
use crate::runtime::contract::{Contract, FieldSpec, RecordShape, RuleSpec, Shape, TypeSpec};
use crate::runtime::hir::{Expr, Logic};
use crate::runtime::value::Value;
use crate::syntax::ast::BinOp;

/// The SQL dialects the compiler writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    DuckDb,
}

impl Dialect {
    pub fn lookup(name: &str) -> Result<Dialect, String> {
        match name {
            "duckdb" => Ok(Dialect::DuckDb),
            "spark" | "trino" => Err(format!(
                "the `{name}` dialect is not built yet; the dialect there is is duckdb"
            )),
            other => Err(format!(
                "no SQL dialect `{other}`; the dialect there is is duckdb"
            )),
        }
    }
}

/// What the query reads and what it gives.
pub struct Options<'a> {
    pub dialect: Dialect,
    /// A JSON Lines file (or a glob of them: `events/*.jsonl`), read as
    /// text lines; anything else is a table expression with one text
    /// column `line`, one row a JSON value, in order.
    pub from: &'a str,
    /// One row, `report()`'s, instead of one row a line.
    pub summary: bool,
}

/// A part of the contract the compiler cannot express in SQL (yet).
#[derive(Debug, Clone, PartialEq)]
pub struct NotCompiled {
    /// The rule's identity or the field, as a person finds it.
    pub what: String,
    pub why: String,
}

impl std::fmt::Display for NotCompiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} does not compile to SQL: {}", self.what, self.why)
    }
}

type Compiled<T> = Result<T, NotCompiled>;

/// The query for `contract` (a record type).
pub fn compile(contract: &Contract, options: &Options) -> Compiled<String> {
    let Shape::Record { record, .. } = &contract.shape else {
        return Err(NotCompiled {
            what: format!("type {}", contract.name),
            why: "only record types compile (a refinement is checked as a field's type)".into(),
        });
    };
    let fields = record
        .fields
        .iter()
        .map(|f| Field::of(&contract.name, f))
        .collect::<Compiled<Vec<Field>>>()?;
    let q = Query {
        owner: &contract.name,
        record,
        fields,
    };
    q.sql(options)
}

/// One declared field, as the query reads it.
struct Field<'a> {
    spec: &'a FieldSpec,
    /// `'$."name"'`
    path: String,
    /// The SQL type its value has in rules, when it has one.
    sql_type: Option<&'static str>,
    /// Its default as SQL, when it has one.
    default: Option<String>,
}

impl<'a> Field<'a> {
    fn of(owner: &str, spec: &'a FieldSpec) -> Compiled<Field<'a>> {
        let what = || format!("field {owner}.{}", spec.name);
        if spec.name.contains(['"', '\\']) {
            return Err(NotCompiled {
                what: what(),
                why: "a field name with `\"` or `\\` has no JSON path here".into(),
            });
        }
        if !spec.checks.is_empty() {
            return Err(NotCompiled {
                what: what(),
                why: "a named check (`validate … with f`) calls a function".into(),
            });
        }
        let ty = plain(&spec.ty).map_err(|why| NotCompiled { what: what(), why })?;
        let default = match &spec.default {
            None => None,
            Some(Expr::Const(v)) => Some(literal(v).ok_or_else(|| NotCompiled {
                what: what(),
                why: "its default is not a scalar".into(),
            })?),
            Some(_) => {
                return Err(NotCompiled {
                    what: what(),
                    why: "its default is computed".into(),
                })
            }
        };
        Ok(Field {
            spec,
            path: sql_string(&format!("$.\"{}\"", spec.name)),
            sql_type: value_type(ty),
            default,
        })
    }
}

/// A field's type with aliases followed, or why it does not compile.
fn plain(t: &TypeSpec) -> Result<&TypeSpec, String> {
    match t {
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, rules, .. }) if rules.is_empty() => plain(base),
            Some(Shape::Refined { .. }) => Err(format!(
                "its type {} is a refinement with rules (not compiled yet)",
                t.describe()
            )),
            _ => Err(format!(
                "its type {} is a record (nested records are not compiled yet)",
                t.describe()
            )),
        },
        TypeSpec::Record(_) => Err("its type is a record (not compiled yet)".into()),
        TypeSpec::Map(_) => Err("its type is a Map (not compiled yet)".into()),
        TypeSpec::List(item) => match plain(item)? {
            TypeSpec::List(_) => Err("a list of lists is not compiled yet".into()),
            _ => Ok(t),
        },
        TypeSpec::Union(members) => {
            for m in members {
                if let TypeSpec::List(_) = plain(m)? {
                    return Err("a union with a list is not compiled yet".into());
                }
            }
            Ok(t)
        }
        _ => Ok(t),
    }
}

/// The SQL type of a field's value as rules read it: one scalar kind (and
/// `Null`), or none (the field cannot be read by a compiled rule).
fn value_type(t: &TypeSpec) -> Option<&'static str> {
    let mut kinds: Vec<&'static str> = Vec::new();
    let mut add = |k: &'static str| {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    };
    fn walk(t: &TypeSpec, add: &mut dyn FnMut(&'static str)) -> bool {
        match t {
            TypeSpec::Null => true,
            TypeSpec::Bool => {
                add("BOOLEAN");
                true
            }
            TypeSpec::Int => {
                add("HUGEINT");
                true
            }
            TypeSpec::Float => {
                add("DOUBLE");
                true
            }
            TypeSpec::String => {
                add("VARCHAR");
                true
            }
            TypeSpec::Literal(Value::Str(_)) => {
                add("VARCHAR");
                true
            }
            TypeSpec::Literal(v) if v.is_int() => {
                add("HUGEINT");
                true
            }
            TypeSpec::Union(ms) => ms.iter().all(|m| walk(m, add)),
            TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
                Some(Shape::Refined { base, .. }) => walk(base, add),
                _ => false,
            },
            _ => false,
        }
    }
    if !walk(t, &mut add) {
        return None;
    }
    match kinds.as_slice() {
        [one] => Some(one),
        // Int and Float together read as numbers.
        [a, b] if kinds.contains(&"HUGEINT") && kinds.contains(&"DOUBLE") && a != b => {
            Some("DOUBLE")
        }
        _ => None,
    }
}

struct Query<'a> {
    owner: &'a str,
    record: &'a RecordShape,
    fields: Vec<Field<'a>>,
}

impl Query<'_> {
    fn sql(&self, options: &Options) -> Compiled<String> {
        let Dialect::DuckDb = options.dialect;
        let mut field_failures = Vec::new();
        let mut columns = String::new();
        for (i, f) in self.fields.iter().enumerate() {
            let _ = write!(
                columns,
                ",\n    json_type(hql_j, {path}) AS hql_t{i}",
                path = f.path
            );
            field_failures.push(self.field_failure(i, f));
        }
        let mut values = String::new();
        for (i, f) in self.fields.iter().enumerate() {
            let _ = write!(
                values,
                ",\n    {} AS hql_k{i},\n    {} AS hql_v{i}",
                self.failure_kind(i, f),
                self.value(i, f)
            );
        }
        let rules = self
            .record
            .rules
            .iter()
            .map(|r| self.rule(r, "require", true))
            .collect::<Compiled<Vec<String>>>()?;
        let warns = self
            .record
            .warns
            .iter()
            .map(|r| self.rule(r, "warn", false))
            .collect::<Compiled<Vec<String>>>()?;
        let extras = if self.record.open {
            "[]".to_string()
        } else {
            let declared: Vec<String> = self
                .fields
                .iter()
                .map(|f| sql_string(&f.spec.name))
                .collect();
            format!(
                "list_transform(list_filter(json_keys(hql_j), lambda k: NOT list_contains([{}]::VARCHAR[], k)), \
                 lambda k: {{'rule': {} || k || '.extra', 'kind': 'extra', 'path': k}})",
                declared.join(", "),
                sql_string(&format!("{}.", self.owner))
            )
        };
        let (unique_cte, final_failures) = self.unique()?;
        let not_record = sql_string(&format!("{}.not_record", self.owner));
        let mut sql = String::new();
        let _ = write!(
            sql,
            "-- {owner}: one row a line, the rules it breaks (hql export --format sql)\n\
             WITH hql_text AS (\n{input}\n),\n\
             hql_rows AS (\n  SELECT hql_source, hql_line,\n    json_valid(hql_t) AS hql_decoded,\n    \
             CASE WHEN json_valid(hql_t) THEN hql_t::JSON END AS hql_j\n  \
             FROM (SELECT hql_source, hql_line,\n    \
             CASE WHEN hql_line = 1 THEN ltrim(rtrim(hql_raw, chr(13)), chr(65279)) ELSE rtrim(hql_raw, chr(13)) END AS hql_t\n    \
             FROM hql_text)\n  WHERE trim(hql_t, ' ' || chr(9)) <> ''\n),\n\
             hql_typed AS (\n  SELECT *{columns}\n  FROM hql_rows\n),\n\
             hql_read AS (\n  SELECT *{values}\n  FROM hql_typed\n),\n\
             hql_checked AS (\n  SELECT hql_read.*,\n    CASE\n      \
             WHEN NOT hql_decoded THEN [{{'rule': 'decode', 'kind': 'decode', 'path': NULL::VARCHAR}}]\n      \
             WHEN json_type(hql_j) <> 'OBJECT' THEN [{{'rule': {not_record}, 'kind': 'not_record', 'path': NULL::VARCHAR}}]\n      \
             ELSE list_concat(\n        {fields},\n        \
             {extras},\n        \
             list_filter([{rules}]::STRUCT(rule VARCHAR, kind VARCHAR, path VARCHAR)[], lambda x: x IS NOT NULL))\n    \
             END AS hql_before_unique\n  FROM hql_read\n){unique_cte},\n\
             hql_result AS (\n  SELECT hql_source, hql_line, {final_failures} AS hql_failures,\n    \
             CASE WHEN len({final_failures}) = 0 AND hql_decoded AND json_type(hql_j) = 'OBJECT'\n      \
             THEN list_filter([{warns}]::STRUCT(rule VARCHAR, kind VARCHAR, path VARCHAR)[], lambda x: x IS NOT NULL)\n      \
             ELSE []::STRUCT(rule VARCHAR, kind VARCHAR, path VARCHAR)[] END AS hql_warnings\n  \
             FROM hql_unique\n)\n",
            owner = self.owner,
            input = input(options.from),
            fields = if field_failures.is_empty() {
                format!("[]::{FAILURE}[]")
            } else {
                format!("flatten([{}])", field_failures.join(",\n          "))
            },
            rules = rules.join(",\n          "),
            warns = warns.join(", "),
        );
        if options.summary {
            sql.push_str(
                "SELECT count(*) AS total,\n  count(*) FILTER (WHERE len(hql_failures) = 0) AS ok,\n  \
                 count(*) FILTER (WHERE len(hql_failures) > 0) AS err,\n  \
                 count(*) FILTER (WHERE len(hql_failures) = 0 AND len(hql_warnings) > 0) AS warned,\n  \
                 (SELECT coalesce(list({'rule': rule, 'kind': kind, 'count': n} ORDER BY n DESC, rule, kind), [])\n   \
                 FROM (SELECT f.rule AS rule, f.kind AS kind, count(*) AS n\n     \
                 FROM (SELECT unnest(list_concat(hql_failures, hql_warnings)) AS f FROM hql_result)\n     \
                 GROUP BY ALL)) AS by_rule\nFROM hql_result\n",
            );
        } else {
            sql.push_str(
                "SELECT hql_source, hql_line, len(hql_failures) = 0 AS hql_ok, hql_failures, hql_warnings\n\
                 FROM hql_result\nORDER BY hql_source, hql_line\n",
            );
        }
        Ok(sql)
    }

    /// The field's failure, if any: `missing`, `null` or `type` (§4.8 step 3).
    fn failure_kind(&self, i: usize, f: &Field) -> String {
        let spec = f.spec;
        let absent_ok = spec.optional || f.default.is_some();
        let raw = format!("json_extract(hql_j, {})", f.path);
        let wrong = match &spec.ty {
            // A list holding elements of another type: each is a failure.
            TypeSpec::List(item) => format!(
                "WHEN hql_t{i} <> 'ARRAY' THEN 'type' WHEN NOT ({}) THEN 'elements'",
                elements_ok(item, &raw)
            ),
            ty => format!(
                "WHEN NOT ({}) THEN 'type'",
                type_test(ty, &format!("hql_t{i}"), &raw)
            ),
        };
        format!(
            "CASE WHEN hql_t{i} IS NULL THEN {missing} \
             WHEN hql_t{i} = 'NULL' THEN {null} {wrong} END",
            missing = if absent_ok { "NULL" } else { "'missing'" },
            null = if spec.ty.admits_null() {
                "NULL"
            } else {
                "'null'"
            },
        )
    }

    /// The field's failures: a list of none, or one, or one an element of
    /// a list that holds elements of another type.
    fn field_failure(&self, i: usize, f: &Field) -> String {
        let ids = &f.spec.ids;
        let path = sql_string(&f.spec.name);
        let elements = match &f.spec.ty {
            TypeSpec::List(item) => format!(
                "WHEN 'elements' THEN list_transform(\
                 list_filter(range(CAST(json_array_length(hql_j, {p}) AS BIGINT)), lambda n: NOT ({ok})), \
                 lambda n: {{'rule': {t}, 'kind': 'type', 'path': {name} || '[' || n || ']'}}) ",
                p = f.path,
                ok = elements_ok_at(item, &format!("json_extract(hql_j, {})", f.path)),
                t = sql_string(&ids.type_),
                name = path,
            ),
            _ => String::new(),
        };
        format!(
            "CASE hql_k{i} WHEN 'missing' THEN [{{'rule': {m}, 'kind': 'missing', 'path': {path}}}] \
             WHEN 'null' THEN [{{'rule': {n}, 'kind': 'null', 'path': {path}}}] \
             WHEN 'type' THEN [{{'rule': {t}, 'kind': 'type', 'path': {path}}}] {elements}\
             ELSE []::{STRUCT}[] END",
            m = sql_string(&ids.missing),
            n = sql_string(&ids.null),
            t = sql_string(&ids.type_),
            STRUCT = FAILURE,
        )
    }

    /// The field's value as rules read it (NULL when absent or null).
    fn value(&self, i: usize, f: &Field) -> String {
        let Some(ty) = f.sql_type else {
            return "NULL".into();
        };
        let read = format!("TRY_CAST(hql_j ->> {} AS {ty})", f.path);
        match &f.default {
            Some(d) => format!("CASE WHEN hql_t{i} IS NULL THEN CAST({d} AS {ty}) ELSE {read} END"),
            None => read,
        }
    }

    /// A rule as a failure (or warning) struct, NULL when it holds; a
    /// `require` rule over a field that failed is skipped (§4.8 step 5).
    fn rule(&self, rule: &RuleSpec, kind: &str, skip_failed: bool) -> Compiled<String> {
        let cond = Rule { query: self, rule }.expr(&rule.cond)?;
        let eval = match &cond.raises {
            Some(r) => format!(
                "WHEN {live}({r}) IS TRUE THEN {{'rule': {id}, 'kind': 'eval', 'path': NULL::VARCHAR}} ",
                live = live_prefix(rule, skip_failed),
                id = sql_string(&rule.id)
            ),
            None => String::new(),
        };
        let cond = cond.text;
        let live = live_prefix(rule, skip_failed);
        Ok(format!(
            "CASE {eval}WHEN {live}({cond}) IS FALSE THEN {{'rule': {id}, 'kind': '{kind}', 'path': NULL::VARCHAR}} END",
            id = sql_string(&rule.id)
        ))
    }

    /// The `unique` key's CTE and the failures after it: only a record with
    /// no other failure claims its key, the first by line (§4.8 step 6).
    fn unique(&self) -> Compiled<(String, String)> {
        match self.record.uniques.as_slice() {
            [] => Ok((
                ",\nhql_unique AS (SELECT * FROM hql_checked)".into(),
                "hql_before_unique".into(),
            )),
            [u] => {
                let mut keys = Vec::new();
                for &s in &u.slots {
                    let f = &self.fields[s as usize];
                    if f.sql_type.is_none() {
                        return Err(NotCompiled {
                            what: u.id.to_string(),
                            why: format!("its field {} is not of one scalar type", f.spec.name),
                        });
                    }
                    keys.push(format!("hql_v{s}"));
                }
                let all_present = keys
                    .iter()
                    .map(|k| format!("{k} IS NOT NULL"))
                    .collect::<Vec<_>>()
                    .join(" AND ");
                let cte = format!(
                    ",\nhql_unique AS (\n  SELECT *,\n    CASE WHEN len(hql_before_unique) = 0 AND {all_present}\n      \
                     THEN row_number() OVER (PARTITION BY len(hql_before_unique) = 0 AND {all_present}, {keys} ORDER BY hql_source, hql_line) > 1\n      \
                     ELSE false END AS hql_taken\n  FROM hql_checked\n)",
                    keys = keys.join(", ")
                );
                let failures = format!(
                    "CASE WHEN hql_taken THEN [{{'rule': {id}, 'kind': 'unique', 'path': NULL::VARCHAR}}] ELSE hql_before_unique END",
                    id = sql_string(&u.id)
                );
                Ok((cte, failures))
            }
            [_, second, ..] => Err(NotCompiled {
                what: second.id.to_string(),
                why: "a second unique key (a record claims its keys only when every one is free, \
                      which one query cannot follow) is not compiled yet"
                    .into(),
            }),
        }
    }
}

/// `NOT (a field the rule reads failed) AND `, when rules over failed
/// fields are skipped (§4.8 step 5).
fn live_prefix(rule: &RuleSpec, skip_failed: bool) -> String {
    if !skip_failed || rule.slots.is_empty() {
        return String::new();
    }
    let failed: Vec<String> = rule
        .slots
        .iter()
        .map(|s| format!("hql_k{s} IS NOT NULL"))
        .collect();
    format!("NOT ({}) AND ", failed.join(" OR "))
}

/// The SQL type of a failure or warning: HQL's `{rule, kind, path}`.
const FAILURE: &str = "STRUCT(rule VARCHAR, kind VARCHAR, path VARCHAR)";

/// Does every element of the JSON array `raw` have type `item`?
fn elements_ok(item: &TypeSpec, raw: &str) -> String {
    format!(
        "coalesce(list_bool_and(list_transform(CAST({raw} AS JSON[]), lambda e: {})), true)",
        type_test(item, "json_type(e)", "e")
    )
}

/// Is element `n` (from 0) of the JSON array `raw` of type `item`?
fn elements_ok_at(item: &TypeSpec, raw: &str) -> String {
    let e = format!("json_extract({raw}, '$[' || n || ']')");
    type_test(item, &format!("json_type({e})"), &e)
}

/// Is the JSON value with type `t` (`json_type`) and text `raw` of `spec`?
fn type_test(spec: &TypeSpec, t: &str, raw: &str) -> String {
    match spec {
        TypeSpec::Any => "true".into(),
        TypeSpec::Null => format!("{t} = 'NULL'"),
        TypeSpec::Bool => format!("{t} = 'BOOLEAN'"),
        // A number without a fraction or exponent, whatever its size.
        TypeSpec::Int => format!(
            "({t} IN ('BIGINT', 'UBIGINT') OR ({t} = 'DOUBLE' AND regexp_full_match(CAST({raw} AS VARCHAR), '-?[0-9]+')))"
        ),
        TypeSpec::Float => format!("{t} IN ('BIGINT', 'UBIGINT', 'DOUBLE')"),
        TypeSpec::String => format!("{t} = 'VARCHAR'"),
        TypeSpec::Literal(Value::Str(s)) => {
            format!("({t} = 'VARCHAR' AND ({raw} ->> '$') = {})", sql_string(s))
        }
        TypeSpec::Literal(v) => match literal(v) {
            Some(n) if v.is_number() => format!(
                "({t} IN ('BIGINT', 'UBIGINT', 'DOUBLE') AND TRY_CAST(CAST({raw} AS VARCHAR) AS DOUBLE) = {n})"
            ),
            Some(b) => format!("({t} = 'BOOLEAN' AND CAST(CAST({raw} AS VARCHAR) AS BOOLEAN) = {b})"),
            None => "false".into(),
        },
        TypeSpec::Union(ms) => {
            let parts: Vec<String> = ms.iter().map(|m| type_test(m, t, raw)).collect();
            format!("({})", parts.join(" OR "))
        }
        TypeSpec::List(item) => format!("({t} = 'ARRAY' AND {})", elements_ok(item, raw)),
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, .. }) => type_test(base, t, raw),
            _ => "false".into(),
        },
        TypeSpec::Record(_) | TypeSpec::Map(_) => "false".into(),
    }
}

/// A rule's condition, compiled.
struct Rule<'q> {
    query: &'q Query<'q>,
    rule: &'q RuleSpec,
}

/// An expression in SQL, and when evaluating it raises in HQL (a division
/// by zero makes the rule's outcome `eval`): an SQL condition, `None` for
/// never. Operands are evaluated as HQL evaluates them — `and`, `or`, `=>`,
/// `??` and `if` stop early — so a raise counts only where it is reached.
struct Sql {
    text: String,
    raises: Option<String>,
}

impl Sql {
    fn plain(text: String) -> Sql {
        Sql { text, raises: None }
    }
}

/// `a`'s raise, or `b`'s when `reached` (an SQL condition on `a`) holds.
fn raise_then(a: &Sql, reached: String, b: &Sql) -> Option<String> {
    let later = b
        .raises
        .as_ref()
        .map(|r| format!("(({reached}) AND ({r}))"));
    match (&a.raises, later) {
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

impl Rule<'_> {
    fn no(&self, why: impl Into<String>) -> NotCompiled {
        NotCompiled {
            what: format!("rule {}", self.rule.id),
            why: why.into(),
        }
    }

    fn expr(&self, e: &Expr) -> Compiled<Sql> {
        Ok(match e {
            Expr::Const(v) => Sql::plain(
                literal(v).ok_or_else(|| self.no("it holds a constant that is not a scalar"))?,
            ),
            Expr::Local { depth: 0, slot: 0 } => {
                return Err(self.no("it reads `self` as a whole"));
            }
            Expr::Local { depth: 0, slot } => {
                let i = *slot as usize - 1;
                let f = &self.query.fields[i];
                if f.sql_type.is_none() {
                    return Err(self.no(format!(
                        "it reads {}, whose type is not one scalar type",
                        f.spec.name
                    )));
                }
                Sql::plain(format!("hql_v{i}"))
            }
            Expr::Local { .. } => return Err(self.no("it has a lambda")),
            Expr::Index { target, index, .. } => match (&**target, &**index) {
                (Expr::Local { depth: 0, slot: 0 }, Expr::Const(Value::Str(name))) => {
                    let Some(i) = self
                        .query
                        .fields
                        .iter()
                        .position(|f| *f.spec.name == **name)
                    else {
                        return Err(self.no("it reads an undeclared field of `self`"));
                    };
                    self.expr(&Expr::Local {
                        depth: 0,
                        slot: i as u32 + 1,
                    })?
                }
                _ => return Err(self.no("it indexes a value")),
            },
            Expr::Soft(x) => self.expr(x)?,
            Expr::Presence(x) => {
                let x = self.expr(x)?;
                Sql {
                    text: format!("({}) IS NOT NULL", x.text),
                    raises: x.raises,
                }
            }
            Expr::Not(x, _) => {
                let x = self.expr(x)?;
                Sql {
                    text: format!("NOT ({})", x.text),
                    raises: x.raises,
                }
            }
            Expr::Neg(x, _) => {
                let x = self.expr(x)?;
                Sql {
                    text: format!("-({})", x.text),
                    raises: x.raises,
                }
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
                    raises: raise_then(&a, reached, &b),
                    text,
                }
            }
            Expr::Binary(op, a, b, _) => self.binary(*op, a, b)?,
            Expr::If(c, a, b, _) => {
                let (c, a, b) = (self.expr(c)?, self.expr(a)?, self.expr(b)?);
                let then = raise_then(
                    &Sql::plain(String::new()),
                    format!("({}) IS TRUE", c.text),
                    &a,
                );
                let other = raise_then(
                    &Sql::plain(String::new()),
                    format!("({}) IS NOT TRUE", c.text),
                    &b,
                );
                Sql {
                    text: format!(
                        "CASE WHEN ({}) THEN ({}) ELSE ({}) END",
                        c.text, a.text, b.text
                    ),
                    raises: either([c.raises, then, other]),
                }
            }
            Expr::Matches { subject, regex, .. } => {
                let subject = self.expr(subject)?;
                Sql {
                    text: format!(
                        "regexp_matches({}, {})",
                        subject.text,
                        sql_string(&re2(regex.as_str()).map_err(|why| self.no(why))?)
                    ),
                    raises: subject.raises,
                }
            }
            Expr::Builtin { builtin, args, .. } => self.builtin(*builtin, args)?,
            Expr::Call { .. } => {
                return Err(self.no("it calls a function (not compiled yet)"));
            }
            _ => return Err(self.no("it uses an expression the compiler does not know yet")),
        })
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr) -> Compiled<Sql> {
        if matches!(op, BinOp::In | BinOp::NotIn) {
            let items: Vec<Option<String>> = match b {
                Expr::List(items) => items
                    .iter()
                    .map(|i| match i {
                        Expr::Const(v) => literal(v),
                        _ => None,
                    })
                    .collect(),
                Expr::Const(Value::List(items)) => items.iter().map(literal).collect(),
                _ => return Err(self.no("`in` needs a list written in the rule")),
            };
            return self.membership(op, a, items);
        }
        let (x, y) = (self.expr(a)?, self.expr(b)?);
        let sql_op = match op {
            BinOp::Eq => "=",
            BinOp::Ne => "<>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Coalesce => {
                return Ok(Sql {
                    raises: raise_then(&x, format!("({}) IS NULL", x.text), &y),
                    text: format!("coalesce({}, {})", x.text, y.text),
                })
            }
            _ => return Err(self.no("it uses an operator the compiler does not know yet")),
        };
        // HQL raises on a division by zero; SQL would give NULL or infinity.
        let by_zero = matches!(op, BinOp::Div | BinOp::Rem)
            .then(|| format!("({}) = 0 AND ({}) IS NOT NULL", y.text, x.text));
        Ok(Sql {
            text: format!("({}) {sql_op} ({})", x.text, y.text),
            raises: either([x.raises, y.raises, by_zero]),
        })
    }

    fn membership(&self, op: BinOp, a: &Expr, items: Vec<Option<String>>) -> Compiled<Sql> {
        let items = items
            .into_iter()
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| self.no("an `in` list holds something other than scalars"))?;
        let not = if op == BinOp::NotIn { "NOT " } else { "" };
        let a = self.expr(a)?;
        Ok(Sql {
            text: format!("({}) {not}IN ({})", a.text, items.join(", ")),
            raises: a.raises,
        })
    }

    fn builtin(&self, b: Builtin, args: &[Expr]) -> Compiled<Sql> {
        let args = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Compiled<Vec<Sql>>>()?;
        let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        let call = |name: &str| format!("{name}({})", texts.join(", "));
        let text = match b {
            Builtin::Len => call("length"),
            Builtin::Lower => call("lower"),
            Builtin::Upper => call("upper"),
            // Rust's `trim` removes Unicode white space; SQL's only spaces.
            Builtin::Trim => format!(
                "regexp_replace({}, '^[\\s\\x{{85}}\\x{{A0}}\\x{{1680}}\\x{{2000}}-\\x{{200A}}\\x{{2028}}\\x{{2029}}\\x{{202F}}\\x{{205F}}\\x{{3000}}]+|[\\s\\x{{85}}\\x{{A0}}\\x{{1680}}\\x{{2000}}-\\x{{200A}}\\x{{2028}}\\x{{2029}}\\x{{202F}}\\x{{205F}}\\x{{3000}}]+$', '', 'g')",
                texts.first().copied().unwrap_or_default()
            ),
            Builtin::Contains => call("contains"),
            Builtin::StartsWith => call("starts_with"),
            Builtin::EndsWith => call("suffix"),
            Builtin::Abs => call("abs"),
            other => {
                return Err(self.no(format!("it calls `{}` (not compiled yet)", other.name())))
            }
        };
        Ok(Sql {
            text,
            raises: either(args.into_iter().map(|a| a.raises)),
        })
    }
}

/// A Rust regex as RE2 reads it the same way, or why it cannot be.
/// Rust's `\d` is any Unicode decimal digit: `\p{Nd}` in RE2; the classes
/// whose Unicode meanings differ between the two are refused.
fn re2(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("\\p{Nd}"),
            Some('D') => out.push_str("\\P{Nd}"),
            Some(k @ ('w' | 'W' | 's' | 'S' | 'b' | 'B')) => {
                return Err(format!(
                    "its regex uses `\\{k}`, whose meaning in Unicode differs between Rust and the engine's RE2"
                ))
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Ok(out)
}

/// The input: each line of a JSON Lines file (or glob) with its number, or
/// the rows of a table expression with a text column `line`.
fn input(from: &str) -> String {
    let lower = from.to_ascii_lowercase();
    if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
        format!(
            "  SELECT filename AS hql_source, hql_line, hql_raw\n  FROM (SELECT filename,\n      \
             unnest(range(1, len(string_split(content, chr(10))) + 1)) AS hql_line,\n      \
             unnest(string_split(content, chr(10))) AS hql_raw\n    FROM read_text({}))",
            sql_string(from)
        )
    } else {
        format!(
            "  SELECT NULL::VARCHAR AS hql_source, row_number() OVER () AS hql_line, line AS hql_raw\n  FROM ({from})"
        )
    }
}

/// A scalar as an SQL literal.
fn literal(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null | Value::Absent => "NULL".into(),
        Value::Bool(b) => if *b { "true" } else { "false" }.into(),
        Value::Int(n) => n.to_string(),
        Value::Float(f) if f.is_finite() => format!("{f:?}::DOUBLE"),
        Value::Num(n) => n.text.to_string(),
        Value::Str(s) => sql_string(s),
        _ => return None,
    })
}

/// `text` as an SQL string literal.
fn sql_string(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
