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
//! scalars, `| Null`, aliases, lists, nested records (inline or declared,
//! at paths like `items[1].qty`), defaults that are literals, open and
//! closed kinds, rules and warnings over scalar fields built from
//! comparisons, arithmetic, `and`/`or`/`not`/`=>`, `in`, `??`, `?`, `if`,
//! `len`, `lower`, `upper`, `trim`, `contains`, `starts_with`, `ends_with`,
//! `abs` and `matches`, and one `unique` key. Maps, unions of records,
//! refinements with rules (the standard library's `Email`, `Timestamp`,
//! …), named checks and calls of functions are named as not compiled yet
//! (`docs/scale.md`).

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
                "the `{name}` dialect is not built yet; the one built is duckdb"
            )),
            other => Err(format!("no SQL dialect `{other}`; the one built is duckdb")),
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
    let Dialect::DuckDb = options.dialect;
    let top = Frame::new(&contract.name, record, "hql_j".into(), None, 0)?;
    let failures = top.failures()?;
    let warns = record
        .warns
        .iter()
        .map(|r| top.rule(r, "warn", false))
        .collect::<Compiled<Vec<String>>>()?;
    let (unique_cte, final_failures) = top.unique()?;
    let not_record = sql_string(&format!("{}.not_record", contract.name));
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
         hql_checked AS (\n  SELECT *,\n    CASE\n      \
         WHEN NOT hql_decoded THEN [{{'rule': 'decode', 'kind': 'decode', 'path': NULL::VARCHAR}}]\n      \
         WHEN json_type(hql_j) <> 'OBJECT' THEN [{{'rule': {not_record}, 'kind': 'not_record', 'path': NULL::VARCHAR}}]\n      \
         ELSE {failures}\n    END AS hql_before_unique\n  FROM hql_rows\n){unique_cte},\n\
         hql_result AS (\n  SELECT hql_source, hql_line, {final_failures} AS hql_failures,\n    \
         CASE WHEN len({final_failures}) = 0 AND hql_decoded AND json_type(hql_j) = 'OBJECT'\n      \
         THEN list_filter([{warns}]::{FAILURE}[], lambda x: x IS NOT NULL)\n      \
         ELSE []::{FAILURE}[] END AS hql_warnings\n  \
         FROM hql_unique\n)\n",
        owner = contract.name,
        input = input(options.from),
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

/// Nested records and lists deeper than this are not compiled (a type
/// that holds itself would otherwise compile forever).
const MAX_DEPTH: usize = 8;

/// A record being checked: where its JSON is, the path its failures name,
/// and its fields as SQL.
struct Frame<'a> {
    /// The prefix of its identities (`Order`, `Order.address`, `Item`).
    owner: String,
    shape: &'a RecordShape,
    fields: Vec<FieldSql<'a>>,
    /// SQL of its JSON.
    json: String,
    /// SQL of its path for failures: `NULL` at the top, else a VARCHAR
    /// expression (`'items[' || n0 || ']'`).
    path: String,
}

/// One declared field of a frame.
struct FieldSql<'a> {
    spec: &'a FieldSpec,
    /// Its failures: an SQL list (§4.8 step 3, with what nests inside).
    failures: String,
    /// Its value as rules read it, when it has one scalar type.
    value: Option<String>,
}

impl<'a> Frame<'a> {
    fn new(
        owner: &str,
        shape: &'a RecordShape,
        json: String,
        path: Option<String>,
        depth: usize,
    ) -> Compiled<Frame<'a>> {
        if depth > MAX_DEPTH {
            return Err(NotCompiled {
                what: format!("type {owner}"),
                why: format!("it nests deeper than {MAX_DEPTH} levels"),
            });
        }
        let mut fields = Vec::with_capacity(shape.fields.len());
        for spec in &shape.fields {
            fields.push(FieldSql::new(owner, spec, &json, path.as_deref(), depth)?);
        }
        Ok(Frame {
            owner: owner.to_string(),
            shape,
            fields,
            json,
            path: path.unwrap_or_else(|| "NULL::VARCHAR".into()),
        })
    }

    /// The record's failures, as an SQL list: its fields', its undeclared
    /// fields' (a closed kind), then its `require` rules'.
    fn failures(&self) -> Compiled<String> {
        let fields: Vec<&str> = self.fields.iter().map(|f| f.failures.as_str()).collect();
        let fields = if fields.is_empty() {
            format!("[]::{FAILURE}[]")
        } else {
            format!("flatten([{}])", fields.join(",\n          "))
        };
        let extras = if self.shape.open {
            format!("[]::{FAILURE}[]")
        } else {
            let declared: Vec<String> = self
                .fields
                .iter()
                .map(|f| sql_string(&f.spec.name))
                .collect();
            let json = &self.json;
            let path = if self.path.starts_with("NULL") {
                "k".to_string()
            } else {
                format!("{} || '.' || k", self.path)
            };
            format!(
                "list_transform(list_filter(json_keys({json}), lambda k: NOT list_contains([{}]::VARCHAR[], k)), \
                 lambda k: {{'rule': {} || k || '.extra', 'kind': 'extra', 'path': {path}}})",
                declared.join(", "),
                sql_string(&format!("{}.", self.owner))
            )
        };
        let rules = self
            .shape
            .rules
            .iter()
            .map(|r| self.rule(r, "require", true))
            .collect::<Compiled<Vec<String>>>()?;
        let rules = if rules.is_empty() {
            format!("[]::{FAILURE}[]")
        } else {
            format!(
                "list_filter([{}]::{FAILURE}[], lambda x: x IS NOT NULL)",
                rules.join(",\n          ")
            )
        };
        Ok(format!(
            "list_concat({fields},\n        {extras},\n        {rules})"
        ))
    }

    /// A rule as a failure (or warning) struct, NULL when it holds; a
    /// `require` rule over a field that failed is skipped (§4.8 step 5).
    fn rule(&self, rule: &RuleSpec, kind: &str, skip_failed: bool) -> Compiled<String> {
        let cond = Rule { frame: self, rule }.expr(&rule.cond)?;
        let live = if skip_failed && !rule.slots.is_empty() {
            let failed: Vec<String> = rule
                .slots
                .iter()
                .map(|&s| format!("len({}) > 0", self.fields[s as usize].failures))
                .collect();
            format!("NOT ({}) AND ", failed.join(" OR "))
        } else {
            String::new()
        };
        let id = sql_string(&rule.id);
        let path = &self.path;
        let eval = match &cond.raises {
            Some(r) => format!(
                "WHEN {live}({r}) IS TRUE THEN {{'rule': {id}, 'kind': 'eval', 'path': {path}}} "
            ),
            None => String::new(),
        };
        Ok(format!(
            "CASE {eval}WHEN {live}({}) IS FALSE THEN {{'rule': {id}, 'kind': '{kind}', 'path': {path}}} END",
            cond.text
        ))
    }

    /// The `unique` key's CTE and the failures after it: only a record with
    /// no other failure claims its key, the first by line (§4.8 step 6).
    fn unique(&self) -> Compiled<(String, String)> {
        match self.shape.uniques.as_slice() {
            [] => Ok((
                ",\nhql_unique AS (SELECT * FROM hql_checked)".into(),
                "hql_before_unique".into(),
            )),
            [u] => {
                let mut keys = Vec::new();
                for &s in &u.slots {
                    let f = &self.fields[s as usize];
                    let Some(value) = &f.value else {
                        return Err(NotCompiled {
                            what: u.id.to_string(),
                            why: format!("its field {} is not of one scalar type", f.spec.name),
                        });
                    };
                    keys.push(value.clone());
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

impl<'a> FieldSql<'a> {
    fn new(
        owner: &str,
        spec: &'a FieldSpec,
        json: &str,
        parent: Option<&str>,
        depth: usize,
    ) -> Compiled<FieldSql<'a>> {
        let what = || format!("field {owner}.{}", spec.name);
        let no = |why: String| NotCompiled { what: what(), why };
        if spec.name.contains(['"', '\\']) {
            return Err(no(
                "a field name with `\"` or `\\` has no JSON path here".into()
            ));
        }
        if !spec.checks.is_empty() {
            return Err(no(
                "a named check (`validate … with f`) calls a function".into()
            ));
        }
        let default = match &spec.default {
            None => None,
            Some(Expr::Const(v)) => {
                Some(literal(v).ok_or_else(|| no("its default is not a scalar".into()))?)
            }
            Some(_) => return Err(no("its default is computed".into())),
        };
        let key = sql_string(&format!("$.\"{}\"", spec.name));
        let t = format!("json_type({json}, {key})");
        let raw = format!("json_extract({json}, {key})");
        let path = match parent {
            None => sql_string(&spec.name),
            Some(p) => format!("{p} || {}", sql_string(&format!(".{}", spec.name))),
        };
        let ids = Ids {
            type_: spec.ids.type_.to_string(),
        };
        let inner = value_failures(&spec.ty, &t, &raw, &path, &ids, depth).map_err(no)?;
        let fail = |rule: &str, kind: &str| {
            format!(
                "[{{'rule': {}, 'kind': '{kind}', 'path': {path}}}]::{FAILURE}[]",
                sql_string(rule)
            )
        };
        let none = format!("[]::{FAILURE}[]");
        let failures = format!(
            "CASE WHEN {t} IS NULL THEN {missing} WHEN {t} = 'NULL' THEN {null} ELSE {inner} END",
            missing = if spec.optional || default.is_some() {
                none.clone()
            } else {
                fail(&spec.ids.missing, "missing")
            },
            null = if spec.ty.admits_null() {
                none
            } else {
                fail(&spec.ids.null, "null")
            },
        );
        let value = value_type(&spec.ty).map(|ty| {
            let read = format!("TRY_CAST({json} ->> {key} AS {ty})");
            match &default {
                Some(d) => format!("CASE WHEN {t} IS NULL THEN CAST({d} AS {ty}) ELSE {read} END"),
                None => read,
            }
        });
        Ok(FieldSql {
            spec,
            failures,
            value,
        })
    }
}

/// The identity a field's type failures name (an element's too).
struct Ids {
    type_: String,
}

/// The failures of a present, non-null value `raw` (its `json_type` `t`)
/// against `spec`, at `path`: an SQL list. Why it does not compile, when
/// it does not.
fn value_failures(
    spec: &TypeSpec,
    t: &str,
    raw: &str,
    path: &str,
    ids: &Ids,
    depth: usize,
) -> Result<String, String> {
    let wrong = format!(
        "[{{'rule': {}, 'kind': 'type', 'path': {path}}}]::{FAILURE}[]",
        sql_string(&ids.type_)
    );
    let none = format!("[]::{FAILURE}[]");
    if depth > MAX_DEPTH {
        return Err(format!("it nests deeper than {MAX_DEPTH} levels"));
    }
    Ok(match spec {
        TypeSpec::List(item) => {
            let n = format!("hql_n{depth}");
            let elem = format!("json_extract({raw}, '$[' || {n} || ']')");
            let elem_path = format!("{path} || '[' || {n} || ']'");
            let inner = value_failures(
                item,
                &format!("json_type({elem})"),
                &elem,
                &elem_path,
                ids,
                depth + 1,
            )?;
            format!(
                "CASE WHEN {t} <> 'ARRAY' THEN {wrong} ELSE flatten(list_transform(\
                 range(CAST(json_array_length({raw}) AS BIGINT)), lambda {n}: {inner})) END"
            )
        }
        // An inline record's identities are its field's (`Order.address`).
        TypeSpec::Record(shape) => {
            let owner = ids.type_.strip_suffix(".type").unwrap_or(&ids.type_);
            nested(owner, shape, t, raw, path, &wrong, depth)?
        }
        TypeSpec::Named(cell) => match cell.get().map(|c| (c, &c.shape)) {
            Some((_, Shape::Refined { base, rules, .. })) if rules.is_empty() => {
                value_failures(base, t, raw, path, ids, depth)?
            }
            Some((c, Shape::Refined { .. })) => {
                return Err(format!(
                    "its type {} is a refinement with rules (not compiled yet)",
                    c.name
                ))
            }
            Some((c, Shape::Record { record, .. })) => {
                if !record.warns.is_empty() {
                    return Err(format!(
                        "its type {} has warnings (the warnings of nested records are not compiled yet)",
                        c.name
                    ));
                }
                nested(&c.name, record, t, raw, path, &wrong, depth)?
            }
            None => return Err("its type is not known".into()),
        },
        TypeSpec::Map(_) => return Err("its type is a Map (not compiled yet)".into()),
        TypeSpec::Union(members) if members.iter().any(|m| !is_scalar(m)) => {
            return Err("a union holding records or lists is not compiled yet".into())
        }
        scalar => format!(
            "CASE WHEN {} THEN {none} ELSE {wrong} END",
            type_test(scalar, t, raw)
        ),
    })
}

/// A record inside a value: `wrong` when the value is not an object, else
/// the record's own failures.
fn nested(
    owner: &str,
    shape: &RecordShape,
    t: &str,
    raw: &str,
    path: &str,
    wrong: &str,
    depth: usize,
) -> Result<String, String> {
    let frame = Frame::new(
        owner,
        shape,
        raw.to_string(),
        Some(path.to_string()),
        depth + 1,
    )
    .map_err(|e| e.why)?;
    let failures = frame
        .failures()
        .map_err(|e| format!("{}: {}", e.what, e.why))?;
    Ok(format!(
        "CASE WHEN {t} <> 'OBJECT' THEN {wrong} ELSE {failures} END"
    ))
}

/// Is `t` a scalar type: its values are checked by their JSON type alone?
fn is_scalar(t: &TypeSpec) -> bool {
    match t {
        TypeSpec::List(_) | TypeSpec::Map(_) | TypeSpec::Record(_) => false,
        TypeSpec::Union(ms) => ms.iter().all(is_scalar),
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, rules, .. }) => rules.is_empty() && is_scalar(base),
            _ => false,
        },
        _ => true,
    }
}

/// The SQL type of a field's value as rules read it: one scalar kind (and
/// `Null`), or none (the field cannot be read by a compiled rule).
fn value_type(t: &TypeSpec) -> Option<&'static str> {
    fn walk(t: &TypeSpec, kinds: &mut Vec<&'static str>) -> bool {
        let mut add = |k: &'static str| {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
            true
        };
        match t {
            TypeSpec::Null => true,
            TypeSpec::Bool => add("BOOLEAN"),
            TypeSpec::Int => add("HUGEINT"),
            TypeSpec::Float => add("DOUBLE"),
            TypeSpec::String | TypeSpec::Literal(Value::Str(_)) => add("VARCHAR"),
            TypeSpec::Literal(v) if v.is_int() => add("HUGEINT"),
            TypeSpec::Union(ms) => ms.iter().all(|m| walk(m, kinds)),
            TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
                Some(Shape::Refined { base, .. }) => walk(base, kinds),
                _ => false,
            },
            _ => false,
        }
    }
    let mut kinds = Vec::new();
    if !walk(t, &mut kinds) {
        return None;
    }
    match kinds.as_slice() {
        [one] => Some(one),
        // Int and Float together read as numbers.
        [_, _] if kinds.contains(&"HUGEINT") && kinds.contains(&"DOUBLE") => Some("DOUBLE"),
        _ => None,
    }
}

/// The SQL type of a failure or warning: HQL's `{rule, kind, path}`.
const FAILURE: &str = "STRUCT(rule VARCHAR, kind VARCHAR, path VARCHAR)";

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
        TypeSpec::List(item) => format!(
            "({t} = 'ARRAY' AND coalesce(list_bool_and(list_transform(CAST({raw} AS JSON[]), lambda e: {})), true))",
            type_test(item, "json_type(e)", "e")
        ),
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, .. }) => type_test(base, t, raw),
            _ => "false".into(),
        },
        TypeSpec::Record(_) | TypeSpec::Map(_) => "false".into(),
    }
}

/// A rule's condition, compiled.
struct Rule<'q> {
    frame: &'q Frame<'q>,
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
                let f = &self.frame.fields[*slot as usize - 1];
                let Some(value) = &f.value else {
                    return Err(self.no(format!(
                        "it reads {}, whose type is not one scalar type",
                        f.spec.name
                    )));
                };
                Sql::plain(value.clone())
            }
            Expr::Local { .. } => return Err(self.no("it has a lambda")),
            Expr::Index { target, index, .. } => match (&**target, &**index) {
                (Expr::Local { depth: 0, slot: 0 }, Expr::Const(Value::Str(name))) => {
                    let Some(i) = self
                        .frame
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
