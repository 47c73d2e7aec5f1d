//! `hql export FILE TYPE --format sql --dialect D` (tooling.md, "Scale past
//! one machine"): a record contract compiled into one SQL query that gives,
//! for every line of a JSON Lines input, the identities of the rules it
//! breaks — the same identities, in the same order, as `validate` — so a
//! table too big for one machine is checked where it lies and the results
//! compare one to one with `hql run`.
//!
//! Input: a compiled record contract (`runtime::contract::Contract`; rules
//! as `hir`, fields as frame slots) and the interpreter holding the
//! program's globals (functions a rule calls are inlined, constants become
//! literals). Output: the query's text, or the first part of the contract
//! that does not compile, named, with the reason — never a query that
//! silently checks less than the contract says.
//!
//! The query reads each line as text (so `"5"` and `5` stay different),
//! decodes it with the engine's JSON functions, and builds per line:
//! `hql_line`, `hql_ok`, `hql_failures` (a list of `{rule, kind, path}` in
//! `validate`'s order: each field's missing, null or type failure and its
//! type's rules in declaration order, undeclared fields of a closed kind,
//! then the `require` rules over fields that passed, then the `unique`
//! keys) and `hql_warnings` (the `warn` rules of a record with no failure).
//! `--summary` folds that into `report()`'s one row.
//!
//! One generator writes every dialect: the pieces whose spelling differs
//! are asked of `dialect::Dialect`; regexes are rewritten for the engine's
//! regex library by `regex`; rule expressions are compiled by `expr`.
//! What does not compile is listed in `docs/scale.md`.

mod dialect;
mod expect;
mod expr;
mod regex;
mod typed;

use std::fmt::Write as _;

use crate::formats::catalog::Column;
use crate::runtime::contract::{Contract, FieldSpec, RecordShape, RuleSpec, Shape, TypeSpec};
use crate::runtime::decide::{self, FailureKind};
use crate::runtime::eval::Interp;
use crate::runtime::hir::Expr;
use crate::runtime::value::Value;
use crate::syntax::ast::Severity;

pub use dialect::Dialect;
use dialect::{Kind, Loc, Ty};
use expr::{outcome, Held, Scope, Sql};

/// What the query reads and what it gives.
pub struct Options<'a> {
    pub dialect: Dialect,
    /// A JSON Lines file (or a glob of them, or a directory for Spark),
    /// read as text lines; anything else is a table (or, for DuckDB, a
    /// table expression) with one text column `line`, one row a JSON value.
    pub from: &'a str,
    /// One row, `report()`'s, instead of one row a line.
    pub summary: bool,
    /// The program's globals: the functions rules call, the constants
    /// they read.
    pub globals: Option<&'a Interp>,
    /// The time `age(f)` measures to, in nanoseconds since the epoch;
    /// `None`: the engine's clock when the query runs.
    pub now: Option<i128>,
    /// A typed input, whose columns are checked where they lie (`typed`):
    /// `from` then names Parquet files or a table.
    pub typed: Option<TypedFrom<'a>>,
}

/// A typed input and its columns, as the catalog names their types.
#[derive(Debug, Clone, Copy)]
pub enum TypedFrom<'a> {
    /// Parquet files (`--from x.parquet`: the file's schema).
    Parquet(&'a [(String, Column)]),
    /// A table (`--from-table`: the table's columns).
    Table(&'a [(String, Column)]),
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

/// Does `from` name files (read as text lines) rather than a table?
pub fn names_files(from: &str) -> bool {
    let lower = from.to_ascii_lowercase();
    lower.ends_with(".jsonl")
        || lower.ends_with(".ndjson")
        || lower.ends_with(".jsonl.gz")
        || lower.ends_with('/')
}

/// The query for `contract` (a record type).
pub fn compile(contract: &Contract, options: &Options) -> Compiled<String> {
    let Shape::Record { record, .. } = &contract.shape else {
        return Err(NotCompiled {
            what: format!("type {}", contract.name),
            why: "only record types compile (a refinement is checked as a field's type)".into(),
        });
    };
    let d = options.dialect;
    let q = Query {
        d,
        globals: options.globals,
    };
    if let Some(typed) = options.typed {
        return compile_typed(contract, record, typed, &q, options);
    }
    let top = Frame::new(&q, &contract.name, record, d.top("hql_j"), None, 0)?;
    let Checks {
        failures,
        warns,
        unique_cte,
        final_failures,
    } = top.checks()?;
    let not_record = d.string(&decide::not_record_id(&contract.name));
    let null_text = d.null_text();
    let decode = decode(d);
    let not_record = d.failures(&[d.failure(
        &not_record,
        &d.string(FailureKind::NotRecord.name()),
        null_text,
    )]);
    let object = d.is(Kind::Object, &d.kind_of(&d.top("hql_j")), &d.top("hql_j"));
    let (preamble, input) = input(d, options.from).map_err(|why| NotCompiled {
        what: "--from".into(),
        why,
    })?;
    let text = d.cast("hql_raw", Ty::Text);
    let (strip_cr, strip_bom) = match d {
        Dialect::DuckDb => (
            format!("rtrim({text}, chr(13))"),
            format!("ltrim(rtrim({text}, chr(13)), chr(65279))"),
        ),
        _ => (
            d.regex_remove(&text, "\\r+\\z"),
            d.regex_remove(&d.regex_remove(&text, "\\r+\\z"), "^\\x{FEFF}+"),
        ),
    };
    let blank = match d {
        Dialect::DuckDb => "trim(hql_t, ' ' || chr(9)) = ''".to_string(),
        _ => d.regex_search("hql_t", "^[ \\t]*\\z"),
    };
    let size = |x: &str| d.failure_count(x);
    let mut sql = format!("{}{preamble}", d.helpers());
    let _ = write!(
        sql,
        "-- {owner}: one row a line, the rules it breaks (hql export --format sql --dialect {dialect})\n\
         WITH hql_text AS (\n{input}\n),\n\
         hql_rows AS (\n  SELECT hql_source, hql_line, hql_t, {parse} AS hql_j\n  \
         FROM (SELECT hql_source, hql_line,\n    \
         CASE WHEN hql_line = 1 THEN {strip_bom} ELSE {strip_cr} END AS hql_t\n    \
         FROM hql_text) hql_lines\n  WHERE hql_t IS NULL OR NOT ({blank})\n),\n\
         hql_fields AS (\n  SELECT *{columns}\n  FROM {rows}\n),\n\
         hql_checked AS (\n  SELECT *,\n    CASE\n      \
         WHEN hql_j IS NULL THEN {decode}\n      \
         WHEN NOT ({object}) THEN {not_record}\n      \
         ELSE {failures}\n    END AS hql_before_unique\n  FROM hql_fields\n){unique_cte},\n\
         hql_result AS {materialized}(\n  SELECT hql_source, hql_line,{delivered} {final_failures} AS hql_failures,\n    \
         CASE WHEN {final_size} = 0 AND hql_j IS NOT NULL AND {object}\n      \
         THEN {warnings}\n      \
         ELSE {none} END AS hql_warnings\n  \
         FROM hql_unique\n)\n",
        owner = contract.name,
        dialect = d.name(),
        parse = d.parse("hql_t"),
        // The summary's measures read the records as delivered.
        // (Spark's Int test reads the line's text too.)
        delivered = if options.summary { " hql_t, hql_j," } else { "" },
        // The summary reads the result twice: DuckDB computes it once.
        materialized = if d == Dialect::DuckDb { "MATERIALIZED " } else { "" },
        rows = match (d, top.fields.is_empty()) {
            (Dialect::DuckDb, false) => format!(
                "(SELECT *, json_extract(hql_j, [{}]) AS hql_jf FROM hql_rows) hql_parsed",
                top.fields
                    .iter()
                    .map(|f| d.string(&format!("$.\"{}\"", f.spec.name)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => "hql_rows".to_string(),
        },
        columns = top
            .fields
            .iter()
            .flat_map(|f| &f.columns)
            .map(|(name, sql)| format!(",\n    {sql} AS {name}"))
            .collect::<String>(),
        final_size = size(&final_failures),
        warnings = d.present(&d.failures(&warns)),
        none = d.no_failures(),
    );
    sql.push_str(&ending(d, record, &d.top("hql_j"), options)?);
    Ok(sql)
}

/// The query's last statement over `hql_result`: a row a record, or the
/// summary's one row (`top`: where a record's fields are, for the
/// expectations' measures).
fn ending(d: Dialect, record: &RecordShape, top: &Loc, options: &Options) -> Compiled<String> {
    Ok(if options.summary {
        let expects = expect::failed_rows(d, top, &record.expects, options.now)?;
        summary(d, &expects)
    } else {
        format!(
            "SELECT hql_source, hql_line, {} = 0 AS hql_ok, hql_failures, hql_warnings\n\
             FROM hql_result\nORDER BY hql_source, hql_line\n",
            d.failure_count("hql_failures")
        )
    })
}

/// The query over typed columns (`Options::typed`): no line to decode
/// and no record to find in it — each row is a record, its fields the
/// columns, checked as `typed` says.
fn compile_typed(
    contract: &Contract,
    record: &RecordShape,
    from: TypedFrom,
    q: &Query,
    options: &Options,
) -> Compiled<String> {
    let d = q.d;
    let columns = match from {
        TypedFrom::Parquet(columns) | TypedFrom::Table(columns) => columns,
    };
    if let Some((what, why)) = typed::refusal(d, columns, record) {
        return Err(NotCompiled { what, why });
    }
    let row = typed::Typed::row(columns, record);
    let at = typed::row(row.clone());
    let c = Frame::new(q, &contract.name, record, at.clone(), None, 0)?.checks()?;
    let input = typed::input(d, options.from, from).map_err(|why| NotCompiled {
        what: "--from".into(),
        why,
    })?;
    let checked = match typed::no_value(d, &row) {
        Some(no_value) => format!(
            "CASE WHEN {no_value} THEN {} ELSE {} END",
            decode(d),
            c.failures
        ),
        None => c.failures,
    };
    let mut sql = format!(
        "{helpers}-- {owner}: one row a row of {rows}, the rules it breaks (hql export --format sql --dialect {dialect})\n\
         WITH hql_rows AS (\n{input}\n),\n\
         hql_checked AS (\n  SELECT *,\n    {checked} AS hql_before_unique\n  FROM hql_rows\n){unique_cte},\n\
         hql_result AS {materialized}(\n  SELECT *, {final_failures} AS hql_failures,\n    \
         CASE WHEN {final_size} = 0 THEN {warnings} ELSE {none} END AS hql_warnings\n  \
         FROM hql_unique\n)\n",
        helpers = d.helpers(),
        owner = contract.name,
        rows = match from {
            TypedFrom::Parquet(_) => "the files",
            TypedFrom::Table(_) => "the table",
        },
        dialect = d.name(),
        materialized = if d == Dialect::DuckDb { "MATERIALIZED " } else { "" },
        unique_cte = c.unique_cte,
        final_failures = c.final_failures,
        final_size = d.failure_count(&c.final_failures),
        warnings = d.present(&d.failures(&c.warns)),
        none = d.no_failures(),
    );
    sql.push_str(&ending(d, record, &at, options)?);
    Ok(sql)
}

/// A record's `decode` failure, as a list.
fn decode(d: Dialect) -> String {
    d.failures(&[d.failure("'decode'", "'decode'", d.null_text())])
}

/// What the top record's checks come to, as SQL.
struct Checks {
    /// Its failures but the `unique` keys'.
    failures: String,
    /// Its `warn` rules, each a warning or NULL.
    warns: Vec<String>,
    /// The `unique` keys' CTE (`Frame::uniques`).
    unique_cte: String,
    /// Every failure, the `unique` keys' among them.
    final_failures: String,
}

/// `report()`'s one row over `hql_result`; `expects` adds the failed
/// expectations' rows to `by_rule` (`expect::failed_rows`).
fn summary(d: Dialect, expects: &str) -> String {
    let size = |x: &str| d.failure_count(x);
    let counts = format!(
        "SELECT count(*) AS total,\n  count(*) FILTER (WHERE {f} = 0) AS ok,\n  \
         count(*) FILTER (WHERE {f} > 0) AS err,\n  \
         count(*) FILTER (WHERE {f} = 0 AND {w} > 0) AS warned,\n",
        f = size("hql_failures"),
        w = size("hql_warnings"),
    );
    let found = match d {
        Dialect::Trino => "SELECT u.rule AS rule, u.kind AS kind FROM hql_result \
             CROSS JOIN UNNEST(concat(hql_failures, hql_warnings)) AS u(rule, kind, path)"
            .to_string(),
        Dialect::Postgres => "SELECT f ->> 'rule' AS rule, f ->> 'kind' AS kind FROM hql_result \
             CROSS JOIN LATERAL jsonb_array_elements(hql_failures || hql_warnings) AS hql_f(f)"
            .to_string(),
        _ => format!(
            "SELECT f.rule AS rule, f.kind AS kind FROM (SELECT {} AS f FROM hql_result) hql_f",
            match d {
                Dialect::DuckDb => "unnest(list_concat(hql_failures, hql_warnings))",
                _ => "explode(concat(hql_failures, hql_warnings))",
            }
        ),
    };
    let grouped = format!(
        "SELECT rule, kind, count(*) AS n FROM ({found}) hql_found GROUP BY rule, kind{expects}"
    );
    let by_rule = match d {
        Dialect::DuckDb => format!(
            "(SELECT coalesce(list({{'rule': rule, 'kind': kind, 'count': n}} ORDER BY n DESC, rule, kind), [])\n   \
             FROM ({grouped}) hql_g)"
        ),
        // Structs sort field by field: minus the count, then rule, then kind.
        Dialect::Spark => format!(
            "(SELECT transform(array_sort(collect_list(named_struct('m', -n, 'rule', rule, 'kind', kind))),\n     \
             b -> named_struct('rule', b.rule, 'kind', b.kind, 'count', -b.m))\n   FROM ({grouped}) hql_g)"
        ),
        Dialect::Trino => format!(
            "(SELECT coalesce(array_agg(CAST(ROW(rule, kind, n) AS ROW(rule VARCHAR, kind VARCHAR, count BIGINT)) \
             ORDER BY n DESC, rule, kind), ARRAY[])\n   FROM ({grouped}) hql_g)"
        ),
        Dialect::Postgres => format!(
            "(SELECT coalesce(jsonb_agg(jsonb_build_object('rule', rule, 'kind', kind, 'count', n) \
             ORDER BY n DESC, rule{o}, kind{o}), CAST('[]' AS jsonb))\n   FROM ({grouped}) hql_g)",
            o = d.text_order()
        ),
    };
    format!("{counts}  {by_rule} AS by_rule\nFROM hql_result\n")
}

/// Nested records and lists deeper than this are not compiled (a type
/// that holds itself would otherwise compile forever).
const MAX_DEPTH: usize = 8;

/// What every part of one query shares.
struct Query<'a> {
    d: Dialect,
    globals: Option<&'a Interp>,
}

/// A record being checked: where its JSON is, the path its failures name,
/// and its fields as SQL.
struct Frame<'a, 'q> {
    q: &'q Query<'q>,
    /// The prefix of its identities (`Order`, `Order.address`, `Item`).
    owner: String,
    shape: &'a RecordShape,
    fields: Vec<FieldSql<'a>>,
    json: Loc,
    /// SQL of its path for failures: NULL at the top, else a text
    /// expression (`'items[' || n0 || ']'`).
    path: String,
}

/// One declared field of a frame.
struct FieldSql<'a> {
    spec: &'a FieldSpec,
    /// Its failures: an SQL list (§4.8 step 3, with what nests inside).
    failures: String,
    /// Its value as rules read it, when it has one scalar type.
    value: Option<(String, Ty)>,
    /// For a field of the top record: the columns its kind and value are
    /// read into, with their SQL.
    columns: Vec<(String, String)>,
    /// Where its value is.
    at: Loc,
}

impl<'a, 'q> Frame<'a, 'q> {
    fn new(
        q: &'q Query<'q>,
        owner: &str,
        shape: &'a RecordShape,
        json: Loc,
        path: Option<String>,
        depth: usize,
    ) -> Compiled<Frame<'a, 'q>> {
        if depth > MAX_DEPTH {
            return Err(NotCompiled {
                what: format!("type {owner}"),
                why: format!("it nests deeper than {MAX_DEPTH} levels"),
            });
        }
        let mut fields = Vec::with_capacity(shape.fields.len());
        for (i, spec) in shape.fields.iter().enumerate() {
            // The top record's fields are read once a row, into columns.
            let column = (depth == 0).then_some(i);
            fields.push(FieldSql::new(
                q,
                owner,
                spec,
                &json,
                path.as_deref(),
                depth,
                column,
            )?);
        }
        Ok(Frame {
            q,
            owner: owner.to_string(),
            shape,
            fields,
            json,
            path: path.unwrap_or_else(|| q.d.null_text().into()),
        })
    }

    /// The record's failures, as an SQL list: its fields', its undeclared
    /// fields' (a closed kind), then its `require` rules'.
    fn failures(&self) -> Compiled<String> {
        let d = self.q.d;
        let fields: Vec<String> = self.fields.iter().map(|f| f.failures.clone()).collect();
        let fields = if fields.is_empty() {
            d.no_failures()
        } else {
            d.flatten(&d.list(&fields))
        };
        let mut parts = vec![fields];
        if !self.shape.open {
            let declared: Vec<String> =
                self.fields.iter().map(|f| d.string(&f.spec.name)).collect();
            let path = if self.path == d.null_text() {
                "k".to_string()
            } else {
                format!("{} || '.' || k", self.path)
            };
            let undeclared = if declared.is_empty() {
                d.keys(&self.json)
            } else {
                d.filter(
                    &d.keys(&self.json),
                    "k",
                    &format!("NOT (k IN ({}))", declared.join(", ")),
                )
            };
            parts.push(d.failure_each(
                &undeclared,
                "k",
                &d.failure(
                    &format!(
                        "{} || k || {}",
                        d.string(&format!("{}.", self.owner)),
                        d.string(decide::EXTRA_SUFFIX)
                    ),
                    &d.string(FailureKind::Extra.name()),
                    &path,
                ),
            ));
        }
        let rules = self
            .shape
            .rules
            .iter()
            .map(|r| self.rule(r, FailureKind::Require.name(), true))
            .collect::<Compiled<Vec<String>>>()?;
        if !rules.is_empty() {
            parts.push(d.present(&d.failures(&rules)));
        }
        Ok(d.concat(&parts))
    }

    /// The top record's checks: failures, warnings and unique keys.
    fn checks(&self) -> Compiled<Checks> {
        let warns = (self.shape.warns.iter())
            .map(|r| self.rule(r, FailureKind::Warn.name(), false))
            .collect::<Compiled<Vec<String>>>()?;
        let (unique_cte, final_failures) = self.uniques()?;
        Ok(Checks {
            failures: self.failures()?,
            warns,
            unique_cte,
            final_failures,
        })
    }

    /// The scope a rule of this record reads: `self` (not compiled) and
    /// its fields.
    fn scope(&self, rule: &RuleSpec) -> Scope<'q> {
        let mut slots = vec![Err("it reads `self` as a whole".to_string())];
        slots.extend(self.fields.iter().map(|f| match &f.value {
            Some((v, ty)) => Ok(Sql::plain(v.clone(), Some(*ty))),
            // Lists and records are read where the rule reads into them.
            None => match Held::of(&f.spec.ty, MAX_DEPTH) {
                held @ (Held::List(_) | Held::Record(_)) => held.read(self.q.d, f.at.clone()),
                _ => Err(format!(
                    "it reads {}, whose type is not one scalar type",
                    f.spec.name
                )),
            },
        }));
        Scope {
            dialect: self.q.d,
            what: format!("rule {}", rule.id),
            globals: self.q.globals,
            slots,
            names: self
                .fields
                .iter()
                .map(|f| f.spec.name.to_string())
                .collect(),
            calls: Vec::new(),
            outer: Vec::new(),
        }
    }

    /// A rule as a failure (or warning) struct, NULL when it holds; a
    /// `require` rule over a field that failed is skipped (§4.8 step 5).
    fn rule(&self, rule: &RuleSpec, kind: &str, skip_failed: bool) -> Compiled<String> {
        let d = self.q.d;
        let scope = self.scope(rule);
        let cond = scope.expr(&rule.cond).map_err(|why| NotCompiled {
            what: scope.what.clone(),
            why,
        })?;
        let live = (skip_failed && !rule.slots.is_empty()).then(|| {
            let failed: Vec<String> = rule
                .slots
                .iter()
                .map(|&s| format!("{} > 0", d.failure_count(&self.fields[s as usize].failures)))
                .collect();
            format!("NOT ({})", failed.join(" OR "))
        });
        Ok(outcome(
            d,
            &cond,
            &rule.id,
            kind,
            &self.path,
            live.as_deref(),
        ))
    }

    /// The `unique` keys' CTE and the failures after it (§4.8 step 6):
    /// only a record with no other failure claims its keys, and only when
    /// every one is free; the first by line claims.
    ///
    /// Each key is a window over the records with no other failure that
    /// have it. With several keys a record rejected for one key claims
    /// none of the others, so whether a later record's key is free can
    /// depend on a chain of earlier ones, which windows do not follow: the
    /// query computes the answer when no such chain exists — the first
    /// holder of every repeated key has all its keys free — and otherwise
    /// stops with an error rather than give a different answer.
    fn uniques(&self) -> Compiled<(String, String)> {
        let d = self.q.d;
        if self.shape.uniques.is_empty() {
            return Ok((
                ",\nhql_unique AS (SELECT * FROM hql_checked)".into(),
                "hql_before_unique".into(),
            ));
        }
        let clean = format!("{} = 0", d.failure_count("hql_before_unique"));
        let mut columns = Vec::new();
        let (mut taken, mut first_of_many, mut failures) = (Vec::new(), Vec::new(), Vec::new());
        let several = self.shape.uniques.len() > 1;
        for (n, u) in self.shape.uniques.iter().enumerate() {
            let mut keys = Vec::new();
            for &s in &u.slots {
                let f = &self.fields[s as usize];
                let Some((value, _)) = &f.value else {
                    return Err(NotCompiled {
                        what: u.id.to_string(),
                        why: format!("its field {} is not of one scalar type", f.spec.name),
                    });
                };
                keys.push(value.clone());
            }
            let holds = format!(
                "{clean} AND {}",
                keys.iter()
                    .map(|k| format!("{k} IS NOT NULL"))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            );
            let window = format!("PARTITION BY {holds}, {}", keys.join(", "));
            columns.push(format!(
                "CASE WHEN {holds} THEN row_number() OVER ({window} ORDER BY hql_source, hql_line) > 1 ELSE false END AS hql_taken{n}"
            ));
            if several {
                columns.push(format!(
                    "CASE WHEN {holds} THEN count(*) OVER ({window}) > 1 ELSE false END AS hql_shared{n}"
                ));
                first_of_many.push(format!("(hql_shared{n} AND NOT hql_taken{n})"));
            }
            taken.push(format!("hql_taken{n}"));
            failures.push(format!(
                "CASE WHEN hql_taken{n} THEN {} END",
                d.failure(
                    &d.string(&u.id),
                    &d.string(FailureKind::Unique.name()),
                    d.null_text()
                )
            ));
        }
        let cte = format!(
            ",\nhql_unique AS (\n  SELECT *,\n    {}\n  FROM hql_checked\n)",
            columns.join(",\n    ")
        );
        let any_taken = taken.join(" OR ");
        let mut result = format!(
            "CASE WHEN {any_taken} THEN {} ELSE hql_before_unique END",
            d.present(&d.failures(&failures))
        );
        if several {
            let message = format!(
                "the unique keys of {} depend on one another in this data (a record rejected for one key holds another that a later record repeats); check it with hql run",
                self.owner
            );
            result = format!(
                "CASE WHEN ({}) AND ({any_taken}) THEN {} ELSE {result} END",
                first_of_many.join(" OR "),
                d.raise(&message, &d.failures_type())
            );
        }
        Ok((cte, result))
    }
}

impl<'a> FieldSql<'a> {
    fn new(
        q: &Query,
        owner: &str,
        spec: &'a FieldSpec,
        json: &Loc,
        parent: Option<&str>,
        depth: usize,
        column: Option<usize>,
    ) -> Compiled<FieldSql<'a>> {
        let d = q.d;
        let what = || format!("field {owner}.{}", spec.name);
        let no = |why: String| NotCompiled { what: what(), why };
        if spec.name.contains(['"', '\\', '\'', '[', ']']) {
            return Err(no(
                "a field name with a quote, a backslash or a bracket has no JSON path here".into(),
            ));
        }
        let default = match &spec.default {
            None => None,
            Some(Expr::Const(v)) => {
                Some(literal(v, d).ok_or_else(|| no("its default is not a scalar".into()))?)
            }
            Some(_) => return Err(no("its default is computed".into())),
        };
        let mut at = d.field(json, &spec.name);
        let mut columns = Vec::new();
        // Typed columns need no reading once a row: they are columns.
        if let Some(i) = column.filter(|_| json.typed.is_none()) {
            // DuckDB parses the line once for every top field (`hql_jf`).
            if d == Dialect::DuckDb {
                at.json = format!("hql_jf[{}]", i + 1);
            }
            let kind = format!("hql_k{i}");
            columns.push((kind.clone(), d.kind_of(&at)));
            if let Some(ty) = value_type(&spec.ty) {
                let value = format!("hql_v{i}");
                columns.push((value.clone(), d.read(&at, ty)));
                at.scalar = Some((value, ty));
            }
            at.kind = Some(kind);
        }
        let t = d.kind_of(&at);
        let path = match parent {
            None => d.string(&spec.name),
            Some(p) => format!("{p} || {}", d.string(&format!(".{}", spec.name))),
        };
        let mut inner =
            value_failures(q, &spec.ty, &at, &path, &spec.ids.type_, depth).map_err(no)?;
        if !spec.checks.is_empty() {
            inner = checks(q, spec, &at, &path, &inner).map_err(no)?;
        }
        let fail = |rule: &str, kind: &str| {
            d.failures(&[d.failure(&d.string(rule), &d.string(kind), &path)])
        };
        let failures = format!(
            "CASE WHEN {t} IS NULL THEN {missing} WHEN {null} THEN {on_null} ELSE {inner} END",
            missing = if spec.optional || default.is_some() {
                d.no_failures()
            } else {
                fail(&spec.ids.missing, FailureKind::Missing.name())
            },
            null = d.is(Kind::Null, &t, &at),
            on_null = if spec.ty.admits_null() {
                d.no_failures()
            } else {
                fail(&spec.ids.null, FailureKind::Null.name())
            },
        );
        let value = value_type(&spec.ty).map(|ty| {
            let read = d.read(&at, ty);
            let v = match &default {
                Some(dv) => format!(
                    "CASE WHEN {t} IS NULL THEN {} ELSE {read} END",
                    d.cast(dv, ty)
                ),
                None => read,
            };
            (v, ty)
        });
        Ok(FieldSql {
            spec,
            failures,
            value,
            columns,
            at,
        })
    }
}

/// The failures of a present, non-null value `at` against `spec`, at
/// `path`: an SQL list, type failures naming `type_id`. Why it does not
/// compile, when it does not.
fn value_failures(
    q: &Query,
    spec: &TypeSpec,
    at: &Loc,
    path: &str,
    type_id: &str,
    depth: usize,
) -> Result<String, String> {
    let d = q.d;
    let t = d.kind_of(at);
    let wrong = d.failures(&[d.failure(
        &d.string(type_id),
        &d.string(FailureKind::Type.name()),
        path,
    )]);
    let none = d.no_failures();
    if depth > MAX_DEPTH {
        return Err(format!("it nests deeper than {MAX_DEPTH} levels"));
    }
    Ok(match spec {
        TypeSpec::List(item) => {
            let n = format!("hql_n{depth}");
            let mut inner = Err(String::new());
            let each = d.each(at, &n, |elem, index| {
                let elem_path = format!("{path} || '[' || {index} || ']'");
                inner = value_failures(q, item, elem, &elem_path, type_id, depth + 1);
                inner.clone().unwrap_or_default()
            });
            inner?;
            format!(
                "CASE WHEN NOT ({}) THEN {wrong} ELSE {} END",
                d.is(Kind::Array, &t, at),
                d.flatten(&each)
            )
        }
        // An inline record's identities are its field's (`Order.address`).
        TypeSpec::Record(shape) => {
            let owner = type_id.strip_suffix(".type").unwrap_or(type_id);
            nested(q, owner, shape, at, path, &wrong, depth)?
        }
        TypeSpec::Named(cell) => match cell.get().map(|c| (c, &c.shape)) {
            Some((_, Shape::Refined { base, rules, .. })) if rules.is_empty() => {
                value_failures(q, base, at, path, type_id, depth)?
            }
            // A field's value of the wrong base type fails as the field
            // (`T.email.type`, language.md §4.7).
            Some((c, Shape::Refined { base, rules, .. })) => {
                refined(q, c, base, rules, type_id, at, path, depth)?
            }
            Some((c, Shape::Record { record, .. })) => {
                if !record.warns.is_empty() {
                    return Err(format!(
                        "its type {} has warnings (the warnings of nested records are not compiled yet)",
                        c.name
                    ));
                }
                nested(q, &c.name, record, at, path, &wrong, depth)?
            }
            None => return Err("its type is not known".into()),
        },
        TypeSpec::Map(_) => return Err("its type is a Map (not compiled yet)".into()),
        // The first member whose kind the value has is the one it is
        // checked against, its rules included (`Email | Null`).
        TypeSpec::Union(members)
            if !members.iter().all(is_scalar) && members.iter().all(refines_scalar) =>
        {
            let t = d.kind_of(at);
            let mut arms = String::new();
            for m in members {
                let _ = write!(
                    arms,
                    "WHEN {} THEN {} ",
                    type_test(d, m, &t, at),
                    value_failures(q, m, at, path, type_id, depth)?
                );
            }
            format!("CASE {arms}ELSE {wrong} END")
        }
        TypeSpec::Union(members) if members.iter().any(|m| !is_scalar(m)) => {
            return Err(
                "a union holding records, lists or refinements with rules is not compiled yet"
                    .into(),
            )
        }
        scalar => format!(
            "CASE WHEN {} THEN {none} ELSE {wrong} END",
            type_test(d, scalar, &t, at)
        ),
    })
}

/// A field's named checks (`validate … with f`), after its type holds:
/// `f(value)` must give true, else a `check` failure (`eval` when it
/// raises), at the field's path.
fn checks(
    q: &Query,
    spec: &FieldSpec,
    at: &Loc,
    path: &str,
    before: &str,
) -> Result<String, String> {
    let d = q.d;
    let Some(ty) = value_type(&spec.ty) else {
        return Err(
            "a named check of a value that is not one scalar type is not compiled yet".into(),
        );
    };
    let value = Sql::plain(d.read(at, ty), Some(ty));
    let outcomes = spec
        .checks
        .iter()
        .map(|check| {
            let scope = Scope::new(d, format!("check {}", check.id), q.globals, Vec::new());
            let result = scope
                .apply(&check.func, vec![value.clone()])
                .map_err(|why| format!("its check {}: {why}", check.func_name))?;
            let id = d.string(&check.id);
            let eval = match &result.raises {
                Some(r) => format!(
                    "WHEN ({r}) IS TRUE THEN {} ",
                    d.failure(&id, &d.string(FailureKind::Eval.name()), path)
                ),
                None => String::new(),
            };
            Ok(format!(
                "CASE {eval}WHEN ({}) IS NOT TRUE THEN {} END",
                result.text,
                d.failure(&id, &d.string(FailureKind::Check.name()), path)
            ))
        })
        .collect::<Result<Vec<String>, String>>()?;
    Ok(format!(
        "CASE WHEN {} > 0 THEN {before} ELSE {} END",
        d.failure_count(before),
        d.present(&d.failures(&outcomes))
    ))
}

/// A value of a refinement with rules (`Email`, `Date`, …): its base, its
/// type failure `type_id` (the field's, `T.email.type`), then, when the base
/// holds, its rules with `self` the value, failing at the field's path.
#[allow(clippy::too_many_arguments)]
fn refined(
    q: &Query,
    c: &Contract,
    base: &TypeSpec,
    rules: &[RuleSpec],
    type_id: &str,
    at: &Loc,
    path: &str,
    depth: usize,
) -> Result<String, String> {
    let d = q.d;
    let t = d.kind_of(at);
    if rules.iter().any(|r| r.severity == Severity::Warn) {
        return Err(format!(
            "its type {} has warnings (the warnings of nested values are not compiled yet)",
            c.name
        ));
    }
    let Some(ty) = value_type(base) else {
        return Err(format!(
            "its type {} refines a type that is not one scalar type",
            c.name
        ));
    };
    let value = Sql::plain(d.read(at, ty), Some(ty));
    let outcomes = rules
        .iter()
        .map(|rule| {
            let scope = Scope::new(
                d,
                format!("rule {}", rule.id),
                q.globals,
                vec![Ok(value.clone())],
            );
            let cond = scope
                .expr(&rule.cond)
                .map_err(|why| format!("its type {}'s rule {}: {why}", c.name, rule.id))?;
            Ok(outcome(
                d,
                &cond,
                &rule.id,
                FailureKind::Require.name(),
                path,
                None,
            ))
        })
        .collect::<Result<Vec<String>, String>>()?;
    let rules = d.present(&d.failures(&outcomes));
    let wrong = d.failures(&[d.failure(
        &d.string(type_id),
        &d.string(FailureKind::Type.name()),
        path,
    )]);
    Ok(if is_scalar(base) {
        format!(
            "CASE WHEN NOT ({}) THEN {wrong} ELSE {rules} END",
            type_test(d, base, &t, at)
        )
    } else {
        let before = value_failures(q, base, at, path, type_id, depth)?;
        format!(
            "CASE WHEN {} > 0 THEN {before} ELSE {rules} END",
            d.failure_count(&before)
        )
    })
}

/// A record inside a value: `wrong` when the value is not an object, else
/// the record's own failures.
fn nested(
    q: &Query,
    owner: &str,
    shape: &RecordShape,
    at: &Loc,
    path: &str,
    wrong: &str,
    depth: usize,
) -> Result<String, String> {
    let d = q.d;
    let frame = Frame::new(
        q,
        owner,
        shape,
        at.clone(),
        Some(path.to_string()),
        depth + 1,
    )
    .map_err(|e| e.why)?;
    let failures = frame
        .failures()
        .map_err(|e| format!("{}: {}", e.what, e.why))?;
    Ok(format!(
        "CASE WHEN NOT ({}) THEN {wrong} ELSE {failures} END",
        d.is(Kind::Object, &d.kind_of(at), at)
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

/// Is `t` a scalar type, or a refinement of one (with rules or not)?
fn refines_scalar(t: &TypeSpec) -> bool {
    match t {
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, .. }) => refines_scalar(base),
            _ => false,
        },
        other => is_scalar(other),
    }
}

/// The type of a field's value as rules read it: one scalar kind (and
/// `Null`), or none (the field cannot be read by a compiled rule).
fn value_type(t: &TypeSpec) -> Option<Ty> {
    fn walk(t: &TypeSpec, kinds: &mut Vec<Ty>) -> bool {
        let mut add = |k: Ty| {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
            true
        };
        match t {
            TypeSpec::Null => true,
            TypeSpec::Bool => add(Ty::Bool),
            TypeSpec::Int => add(Ty::Int),
            TypeSpec::Float => add(Ty::Float),
            TypeSpec::String | TypeSpec::Literal(Value::Str(_)) => add(Ty::Text),
            TypeSpec::Literal(v) if v.is_int() => add(Ty::Int),
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
        [one] => Some(*one),
        // Int and Float together read as numbers.
        [_, _] if kinds.contains(&Ty::Int) && kinds.contains(&Ty::Float) => Some(Ty::Float),
        _ => None,
    }
}

/// Is the JSON value at `at` (its kind `t`) of `spec`?
fn type_test(d: Dialect, spec: &TypeSpec, t: &str, at: &Loc) -> String {
    match spec {
        TypeSpec::Any => "true".into(),
        TypeSpec::Null => d.is(Kind::Null, t, at),
        TypeSpec::Bool => d.is(Kind::Bool, t, at),
        TypeSpec::Int => d.is(Kind::Int, t, at),
        TypeSpec::Float => d.is(Kind::Number, t, at),
        TypeSpec::String => d.is(Kind::Text, t, at),
        TypeSpec::Literal(Value::Str(s)) => format!(
            "({} AND {} = {})",
            d.is(Kind::Text, t, at),
            d.read(at, Ty::Text),
            d.string(s)
        ),
        TypeSpec::Literal(v) => match literal(v, d) {
            Some(n) if v.is_number() => format!(
                "({} AND {} = {n})",
                d.is(Kind::Number, t, at),
                d.read(at, Ty::Float)
            ),
            Some(b) => format!(
                "({} AND {} = {b})",
                d.is(Kind::Bool, t, at),
                d.read(at, Ty::Bool)
            ),
            None => "false".into(),
        },
        TypeSpec::Union(ms) => {
            let parts: Vec<String> = ms.iter().map(|m| type_test(d, m, t, at)).collect();
            format!("({})", parts.join(" OR "))
        }
        TypeSpec::List(item) => {
            let mut test = String::new();
            let each = d.each(at, "hql_e", |elem, _| {
                test = type_test(d, item, &d.kind_of(elem), elem);
                test.clone()
            });
            format!(
                "({} AND {})",
                d.is(Kind::Array, t, at),
                d.all(&each, "hql_b", "hql_b")
            )
        }
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, .. }) => type_test(d, base, t, at),
            _ => "false".into(),
        },
        TypeSpec::Record(_) | TypeSpec::Map(_) => "false".into(),
    }
}

/// The input: each line of a JSON Lines file (or glob) with its number,
/// or the rows of a table with a text column `line`; and, for Spark's
/// files, the statement that makes them a view first.
fn input(d: Dialect, from: &str) -> Result<(String, String), String> {
    let files = names_files(from);
    Ok(match (d, files) {
        // Read as bytes, so a line that is not UTF-8 is a `decode` failure
        // of its own rather than an error for the whole file: the bytes
        // are split as escaped text and each line decoded back.
        (Dialect::DuckDb, true) => (
            String::new(),
            format!(
                "  SELECT filename AS hql_source, hql_line, try(decode(CAST(hql_escaped AS BLOB))) AS hql_raw\n  \
                 FROM (SELECT filename,\n      \
                 unnest(range(1, len(hql_parts) + 1)) AS hql_line,\n      \
                 unnest(hql_parts) AS hql_escaped\n    \
                 FROM (SELECT filename, string_split(CAST(content AS VARCHAR), '\\x0A') AS hql_parts\n      \
                 FROM read_blob({})) hql_blobs) hql_split",
                d.string(from)
            ),
        ),
        (Dialect::DuckDb, false) => (
            String::new(),
            format!(
                "  SELECT NULL::VARCHAR AS hql_source, row_number() OVER () AS hql_line, line AS hql_raw\n  FROM ({from})"
            ),
        ),
        // Each file whole, so its lines keep their numbers.
        (Dialect::Spark, true) => (
            format!(
                "CREATE OR REPLACE TEMPORARY VIEW hql_files USING text OPTIONS (path {}, wholetext 'true');\n",
                d.string(from.trim_end_matches('/'))
            ),
            "  SELECT hql_source, hql_n + 1 AS hql_line,\n    \
             CASE WHEN is_valid_utf8(hql_bytes) THEN hql_bytes END AS hql_raw\n  \
             FROM (SELECT input_file_name() AS hql_source, value FROM hql_files) hql_whole\n  \
             LATERAL VIEW posexplode(split(value, chr(10), -1)) hql_x AS hql_n, hql_bytes"
                .to_string(),
        ),
        (Dialect::Spark, false) => (
            String::new(),
            format!(
                "  SELECT CAST(NULL AS STRING) AS hql_source,\n    \
                 row_number() OVER (ORDER BY monotonically_increasing_id()) AS hql_line, line AS hql_raw\n  \
                 FROM {from}"
            ),
        ),
        (Dialect::Trino, true) => {
            return Err("Trino reads tables: name a table or view with a text column `line`".into())
        }
        (Dialect::Trino, false) => (
            String::new(),
            format!(
                "  SELECT CAST(NULL AS VARCHAR) AS hql_source, row_number() OVER () AS hql_line, line AS hql_raw\n  FROM {from}"
            ),
        ),
        (Dialect::Postgres, true) => {
            return Err("PostgreSQL reads tables: name a table or view (or a parenthesised query) with a column `line` of JSON text".into())
        }
        // A `json` or text column keeps each line's text as it is (a
        // `jsonb` one has its keys sorted).
        (Dialect::Postgres, false) => (
            String::new(),
            format!(
                "  SELECT CAST(NULL AS text) AS hql_source, row_number() OVER () AS hql_line, CAST(line AS text) AS hql_raw\n  \
                 FROM {from} AS hql_input"
            ),
        ),
    })
}

/// A scalar as an SQL literal.
fn literal(v: &Value, d: Dialect) -> Option<String> {
    Some(match v {
        Value::Null | Value::Absent => "NULL".into(),
        Value::Bool(b) => if *b { "true" } else { "false" }.into(),
        Value::Int(n) => n.to_string(),
        Value::Float(f) if f.is_finite() => d.cast(&format!("{f:?}"), Ty::Float),
        Value::Num(n) => n.text.to_string(),
        Value::Str(s) => d.string(s),
        _ => return None,
    })
}
