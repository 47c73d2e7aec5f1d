//! What differs between the SQL dialects the compiler writes: one tree of
//! SQL is built by the generator, and each piece whose spelling differs —
//! list functions, struct literals, the JSON functions, regex and text
//! functions — is asked of the dialect here.
//!
//! A JSON value is a `Loc`: an SQL expression of the engine's JSON type
//! (DuckDB's `JSON`, Spark's `VARIANT`, Trino's and PostgreSQL's `json`)
//! and, beside it, the
//! JSON path of the value within the line as SQL text, which Spark needs to
//! read what its `VARIANT` forgets (the order of keys, `1.0` against `1`).
//! A `Loc` may instead be a value in typed columns (`typed`), which each
//! method over a `Loc` hands to `typed` first.
//!
//! PostgreSQL has no lambdas and no struct literals: its lists are SQL
//! arrays walked by subqueries (`unnest … WITH ORDINALITY`), a failure is a
//! `jsonb` object and a list of failures a `jsonb` array (so lists of them
//! nest, which its arrays do not). What it cannot say in one expression —
//! a JSON text that may not parse, an error raised where it is reached —
//! is a helper function the query makes first in the session's temporary
//! schema (`helpers`).

use std::rc::Rc;

use super::typed::{self, Typed};

/// The SQL dialects the compiler writes (`--dialect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Dialect {
    #[value(name = "duckdb")]
    DuckDb,
    Spark,
    Trino,
    Postgres,
}

/// The scalar types a rule reads values as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Bool,
    Int,
    Float,
    Text,
}

/// The kinds of JSON value a type test tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Int,
    Number,
    Text,
    Array,
    Object,
}

/// A JSON value: its SQL expression and its path in the line.
#[derive(Debug, Clone)]
pub struct Loc {
    pub json: String,
    /// SQL text of its JSONPath (`'$'`, `'$[''items''][' || n || ']'`).
    pub path: String,
    /// A column holding its kind (`kind_of`), computed once a row.
    pub kind: Option<String>,
    /// A column holding it read as a scalar (`read`), computed once a row.
    pub scalar: Option<(String, Ty)>,
    /// A value in typed columns rather than JSON (`typed`).
    pub typed: Option<Rc<Typed>>,
}

/// Unicode white space as Rust's `char::is_whitespace` has it, as the
/// inside of a regex class (RE2 and Java read it alike).
pub const WHITE_SPACE: &str = "\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

/// What a PostgreSQL query makes before it runs, in the session's
/// temporary schema (gone when the session ends): a JSON text parsed or
/// NULL (PostgreSQL 15 has no `try_cast`; a text `jsonb` refuses, such as
/// `\u0000`, is no JSON here either), an instant read or NULL, and an
/// error raised where it is reached as a value of any type (a constant
/// error would be raised when the query is planned).
const POSTGRES_HELPERS: &str = "-- Helpers of this query, in the session's temporary schema.\n\
CREATE OR REPLACE FUNCTION pg_temp.hql_json(t text) RETURNS json LANGUAGE plpgsql IMMUTABLE AS $hql$\n\
BEGIN PERFORM CAST(t AS jsonb); RETURN CAST(t AS json); EXCEPTION WHEN others THEN RETURN NULL; END $hql$;\n\
CREATE OR REPLACE FUNCTION pg_temp.hql_instant(t text) RETURNS timestamptz LANGUAGE plpgsql STABLE AS $hql$\n\
BEGIN RETURN CAST(t AS timestamptz); EXCEPTION WHEN others THEN RETURN NULL; END $hql$;\n\
CREATE OR REPLACE FUNCTION pg_temp.hql_raise(message text, kind anyelement) RETURNS anyelement LANGUAGE plpgsql VOLATILE AS $hql$\n\
BEGIN RAISE EXCEPTION '%', message; END $hql$;\n";

impl Dialect {
    /// Its name on the command line (`--dialect`), as clap has it.
    pub fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }

    /// The statements the query needs made before it (PostgreSQL's
    /// helper functions), or nothing.
    pub fn helpers(self) -> &'static str {
        match self {
            Dialect::Postgres => POSTGRES_HELPERS,
            _ => "",
        }
    }

    /// `text` as a string literal (Spark reads backslashes in literals as
    /// escapes).
    pub fn string(self, text: &str) -> String {
        match self {
            Dialect::Spark => format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'")),
            _ => format!("'{}'", text.replace('\'', "''")),
        }
    }

    /// The SQL type of a failure or warning: HQL's `{rule, kind, path}`.
    pub fn failure_type(self) -> &'static str {
        match self {
            Dialect::DuckDb => "STRUCT(rule VARCHAR, kind VARCHAR, path VARCHAR)",
            Dialect::Spark => "STRUCT<rule: STRING, kind: STRING, path: STRING>",
            Dialect::Trino => "ROW(rule VARCHAR, kind VARCHAR, path VARCHAR)",
            Dialect::Postgres => "jsonb",
        }
    }

    /// The SQL type of a list of failures.
    pub fn failures_type(self) -> String {
        match self {
            Dialect::DuckDb => format!("{}[]", self.failure_type()),
            Dialect::Spark => format!("ARRAY<{}>", self.failure_type()),
            Dialect::Trino => format!("ARRAY({})", self.failure_type()),
            Dialect::Postgres => "jsonb".into(),
        }
    }

    /// One failure, from SQL text expressions.
    pub fn failure(self, rule: &str, kind: &str, path: &str) -> String {
        match self {
            Dialect::DuckDb => format!("{{'rule': {rule}, 'kind': {kind}, 'path': {path}}}"),
            Dialect::Spark => {
                format!("named_struct('rule', {rule}, 'kind', {kind}, 'path', {path})")
            }
            Dialect::Trino => format!(
                "CAST(ROW({rule}, {kind}, {path}) AS {})",
                self.failure_type()
            ),
            Dialect::Postgres => {
                format!("jsonb_build_object('rule', {rule}, 'kind', {kind}, 'path', {path})")
            }
        }
    }

    /// The empty list of failures.
    pub fn no_failures(self) -> String {
        match self {
            Dialect::DuckDb => format!("[]::{}", self.failures_type()),
            Dialect::Spark => format!("CAST(array() AS {})", self.failures_type()),
            Dialect::Trino => format!("CAST(ARRAY[] AS {})", self.failures_type()),
            Dialect::Postgres => "CAST('[]' AS jsonb)".into(),
        }
    }

    /// A list of failures (or NULLs, filtered out by `present`; PostgreSQL
    /// leaves them out here).
    pub fn failures(self, items: &[String]) -> String {
        if items.is_empty() {
            return self.no_failures();
        }
        match self {
            Dialect::DuckDb => format!("{}::{}", self.list(items), self.failures_type()),
            Dialect::Postgres => format!(
                "to_jsonb(array_remove(CAST({} AS jsonb[]), NULL))",
                self.list(items)
            ),
            _ => self.list(items),
        }
    }

    /// How many failures a list of them holds.
    pub fn failure_count(self, list: &str) -> String {
        match self {
            Dialect::Postgres => format!("jsonb_array_length({list})"),
            _ => self.size(list),
        }
    }

    /// A field (`rule`, `kind`, `path`) of a failure.
    pub fn failure_field(self, failure: &str, field: &str) -> String {
        match self {
            Dialect::Postgres => format!("({failure} ->> '{field}')"),
            _ => format!("{failure}.{field}"),
        }
    }

    /// The failures of a list for which `cond` (over `var`) holds.
    pub fn filter_failures(self, list: &str, var: &str, cond: &str) -> String {
        match self {
            Dialect::Postgres => format!(
                "(SELECT coalesce(jsonb_agg({var} ORDER BY {var}_o), CAST('[]' AS jsonb)) \
                 FROM jsonb_array_elements({list}) WITH ORDINALITY AS {var}_u({var}, {var}_o) WHERE {cond})"
            ),
            _ => self.filter(list, var, cond),
        }
    }

    /// Each item of a list (`var`) made a failure: a list of failures.
    pub fn failure_each(self, list: &str, var: &str, failure: &str) -> String {
        match self {
            Dialect::Postgres => format!("to_jsonb({})", self.transform(list, var, failure)),
            _ => self.transform(list, var, failure),
        }
    }

    /// A list literal of at least one item.
    pub fn list(self, items: &[String]) -> String {
        match self {
            Dialect::DuckDb => format!("[{}]", items.join(", ")),
            Dialect::Spark => format!("array({})", items.join(", ")),
            Dialect::Trino | Dialect::Postgres => format!("ARRAY[{}]", items.join(", ")),
        }
    }

    /// Lists (of failures) one after another.
    pub fn concat(self, lists: &[String]) -> String {
        match lists {
            [] => self.no_failures(),
            [one] => one.clone(),
            _ => match self {
                Dialect::DuckDb => {
                    // `list_concat` takes two lists in older DuckDBs.
                    let mut out = lists[0].clone();
                    for l in &lists[1..] {
                        out = format!("list_concat({out}, {l})");
                    }
                    out
                }
                Dialect::Postgres => format!("({})", lists.join("\n        || ")),
                _ => format!("concat({})", lists.join(",\n        ")),
            },
        }
    }

    /// A list of lists of failures, one list.
    pub fn flatten(self, list: &str) -> String {
        match self {
            // An array of `jsonb` arrays, walked in order.
            Dialect::Postgres => format!(
                "(SELECT coalesce(jsonb_agg(hql_f ORDER BY hql_fo, hql_fi), CAST('[]' AS jsonb)) \
                 FROM unnest({list}) WITH ORDINALITY AS hql_fu(hql_fl, hql_fo) \
                 CROSS JOIN LATERAL jsonb_array_elements(hql_fl) WITH ORDINALITY AS hql_fv(hql_f, hql_fi))"
            ),
            _ => format!("flatten({list})"),
        }
    }

    /// The items of `list` for which `cond` (over `var`) holds.
    pub fn filter(self, list: &str, var: &str, cond: &str) -> String {
        match self {
            Dialect::DuckDb => format!("list_filter({list}, lambda {var}: {cond})"),
            Dialect::Postgres => format!(
                "ARRAY(SELECT {var} FROM unnest({list}) WITH ORDINALITY AS {var}_u({var}, {var}_o) \
                 WHERE {cond} ORDER BY {var}_o)"
            ),
            _ => format!("filter({list}, {var} -> {cond})"),
        }
    }

    /// Failures with the NULLs (rules that held) left out.
    pub fn present(self, list: &str) -> String {
        match self {
            // `failures` left them out.
            Dialect::Postgres => list.to_string(),
            _ => self.filter(list, "x", "x IS NOT NULL"),
        }
    }

    pub fn transform(self, list: &str, var: &str, body: &str) -> String {
        match self {
            Dialect::DuckDb => format!("list_transform({list}, lambda {var}: {body})"),
            Dialect::Postgres => format!(
                "ARRAY(SELECT {body} FROM unnest({list}) WITH ORDINALITY AS {var}_u({var}, {var}_o) \
                 ORDER BY {var}_o)"
            ),
            _ => format!("transform({list}, {var} -> {body})"),
        }
    }

    /// Does `cond` hold for every item (true for none)?
    pub fn all(self, list: &str, var: &str, cond: &str) -> String {
        match self {
            Dialect::DuckDb => format!(
                "coalesce(list_bool_and(list_transform({list}, lambda {var}: {cond})), true)"
            ),
            Dialect::Spark => format!("forall({list}, {var} -> {cond})"),
            Dialect::Trino => format!("all_match({list}, {var} -> {cond})"),
            Dialect::Postgres => format!(
                "(SELECT coalesce(bool_and({cond}), true) FROM unnest({list}) AS {var}_u({var}))"
            ),
        }
    }

    pub fn size(self, list: &str) -> String {
        match self {
            Dialect::DuckDb => format!("len({list})"),
            Dialect::Spark => format!("size({list})"),
            Dialect::Trino | Dialect::Postgres => format!("cardinality({list})"),
        }
    }

    /// The sum of a list of numbers of type `ty`, 0 when it is empty.
    pub fn sum(self, list: &str, ty: Ty) -> String {
        let zero = self.cast("0", ty);
        match self {
            Dialect::DuckDb => format!("coalesce(list_sum({list}), {zero})"),
            Dialect::Spark => format!("aggregate({list}, {zero}, (hql_a, hql_x) -> hql_a + hql_x)"),
            Dialect::Trino => {
                format!("reduce({list}, {zero}, (hql_a, hql_x) -> hql_a + hql_x, hql_a -> hql_a)")
            }
            Dialect::Postgres => {
                format!(
                    "(SELECT coalesce(sum(hql_x), {zero}) FROM unnest({list}) AS hql_su(hql_x))"
                )
            }
        }
    }

    pub fn list_contains(self, list: &str, item: &str) -> String {
        match self {
            Dialect::DuckDb => format!("list_contains({list}, {item})"),
            Dialect::Spark => format!("array_contains({list}, {item})"),
            Dialect::Trino => format!("contains({list}, {item})"),
            Dialect::Postgres => format!("(({item}) = ANY({list}))"),
        }
    }

    /// Item `i` of a list counted as HQL counts (from 0; from the end when
    /// negative), NULL outside it.
    pub fn element(self, list: &str, i: &str) -> String {
        let at = format!("CASE WHEN ({i}) >= 0 THEN ({i}) + 1 ELSE ({i}) END");
        match self {
            Dialect::DuckDb => format!("list_extract({list}, {at})"),
            Dialect::Spark => format!("try_element_at({list}, {at})"),
            Dialect::Trino => format!("element_at({list}, {at})"),
            // Its arrays count from 1, and an index beyond `integer` is an
            // error: only one within the list is read.
            Dialect::Postgres => {
                let n = self.size(list);
                format!(
                    "CASE WHEN ({i}) >= 0 AND ({i}) < {n} THEN ({list})[CAST(({i}) + 1 AS integer)] \
                     WHEN ({i}) < 0 AND -({i}) <= {n} THEN ({list})[CAST({n} + ({i}) + 1 AS integer)] END"
                )
            }
        }
    }

    pub fn null_text(self) -> &'static str {
        match self {
            Dialect::DuckDb => "NULL::VARCHAR",
            Dialect::Spark => "CAST(NULL AS STRING)",
            Dialect::Trino => "CAST(NULL AS VARCHAR)",
            Dialect::Postgres => "CAST(NULL AS text)",
        }
    }

    pub fn type_name(self, ty: Ty) -> &'static str {
        match (self, ty) {
            (_, Ty::Bool) => "BOOLEAN",
            // Ints beyond 64 bits are Ints in HQL too.
            (Dialect::DuckDb, Ty::Int) => "HUGEINT",
            (Dialect::Spark, Ty::Int) => "DECIMAL(38,0)",
            (Dialect::Postgres, Ty::Int) => "numeric",
            (_, Ty::Int) => "BIGINT",
            (Dialect::Postgres, Ty::Float) => "double precision",
            (_, Ty::Float) => "DOUBLE",
            (Dialect::Spark, Ty::Text) => "STRING",
            (Dialect::Postgres, Ty::Text) => "text",
            (_, Ty::Text) => "VARCHAR",
        }
    }

    pub fn cast(self, x: &str, ty: Ty) -> String {
        format!("CAST({x} AS {})", self.type_name(ty))
    }

    /// `x` as `ty`, NULL where it is not one. PostgreSQL has no such cast:
    /// there it is a plain one, and every caller has checked `x`'s form.
    pub fn try_cast(self, x: &str, ty: Ty) -> String {
        match self {
            Dialect::Postgres => self.cast(x, ty),
            _ => format!("TRY_CAST({x} AS {})", self.type_name(ty)),
        }
    }

    /// What follows a text an ordering compares, so texts order by code
    /// point as in HQL whatever the database's collation.
    pub fn text_order(self) -> &'static str {
        match self {
            Dialect::Postgres => " COLLATE \"C\"",
            _ => "",
        }
    }
    /// A Float truncated toward zero, as an Int (its range checked before).
    pub fn trunc_to_int(self, x: &str) -> String {
        match self {
            Dialect::DuckDb => format!("CAST(trunc({x}) AS HUGEINT)"),
            Dialect::Spark => format!("CAST({x} AS BIGINT)"),
            Dialect::Trino => format!("CAST(truncate({x}) AS BIGINT)"),
            Dialect::Postgres => format!("CAST(trunc({x}) AS numeric)"),
        }
    }

    /// A number as text, so an Int reads as digits.
    pub fn to_text(self, x: &str) -> String {
        self.cast(x, Ty::Text)
    }

    /// An error raised when the row is reached (a query that cannot give
    /// the right answer stops instead of giving a wrong one), in place of a
    /// value of SQL type `ty`.
    pub fn raise(self, message: &str, ty: &str) -> String {
        let m = self.string(message);
        match self {
            Dialect::DuckDb => format!("error({m})"),
            Dialect::Spark => format!("raise_error({m})"),
            Dialect::Trino => format!("fail({m})"),
            Dialect::Postgres => format!("pg_temp.hql_raise({m}, CAST(NULL AS {ty}))"),
        }
    }

    // --- JSON ---

    /// The JSON value of a line's text, NULL when it is not JSON.
    pub fn parse(self, text: &str) -> String {
        match self {
            Dialect::DuckDb => {
                format!("CASE WHEN json_valid({text}) THEN CAST({text} AS JSON) END")
            }
            // Spark's parser stops after the first value and ignores what
            // follows; wrapped in an array, the line must add exactly one
            // element, and one more after it, or it is more than one value.
            Dialect::Spark => format!(
                "CASE WHEN json_array_length('[' || {text} || ']') = 1 \
                 AND json_array_length('[' || {text} || ',null]') = 2 THEN try_parse_json({text}) END"
            ),
            Dialect::Trino => format!("try(json_parse({text}))"),
            Dialect::Postgres => format!("pg_temp.hql_json({text})"),
        }
    }

    /// The whole line as a `Loc`.
    pub fn top(self, json: &str) -> Loc {
        Loc {
            json: json.to_string(),
            path: "'$'".into(),
            kind: None,
            scalar: None,
            typed: None,
        }
    }

    /// Field `name` of an object (NULL when it is missing).
    pub fn field(self, at: &Loc, name: &str) -> Loc {
        if let Some(t) = &at.typed {
            return typed::field(self, at, t, name);
        }
        let step = match self {
            Dialect::DuckDb => format!(".\"{name}\""),
            Dialect::Spark => format!("['{name}']"),
            Dialect::Trino => format!("[\"{name}\"]"),
            Dialect::Postgres => format!(".\"{name}\""),
        };
        let json = match self {
            Dialect::DuckDb => format!(
                "json_extract({}, {})",
                at.json,
                self.string(&format!("${step}"))
            ),
            Dialect::Spark => format!(
                "variant_get({}, {})",
                at.json,
                self.string(&format!("${step}"))
            ),
            Dialect::Trino => format!(
                "json_extract({}, {})",
                at.json,
                self.string(&format!("${step}"))
            ),
            Dialect::Postgres => format!("({} -> {})", at.json, self.string(name)),
        };
        Loc {
            json,
            path: join_text(&at.path, &self.string(&step)),
            kind: None,
            scalar: None,
            typed: None,
        }
    }

    /// A `Kind` test's subject: an SQL expression naming the value's kind
    /// in the engine's words, NULL when the value is missing.
    pub fn kind_of(self, at: &Loc) -> String {
        if let Some(column) = &at.kind {
            return column.clone();
        }
        if let Some(t) = &at.typed {
            return typed::kind_of(self, at, t);
        }
        match self {
            Dialect::DuckDb => format!("json_type({})", at.json),
            Dialect::Spark => format!("schema_of_variant({})", at.json),
            Dialect::Trino => format!(
                "CASE substr(json_format({j}), 1, 1) WHEN '{{' THEN 'object' WHEN '[' THEN 'array' \
                 WHEN '\"' THEN 'string' WHEN 't' THEN 'boolean' WHEN 'f' THEN 'boolean' \
                 WHEN 'n' THEN 'null' ELSE CASE WHEN {j} IS NOT NULL THEN 'number' END END",
                j = at.json
            ),
            Dialect::Postgres => format!("json_typeof({})", at.json),
        }
    }

    /// Is the value (kind `t`, from `kind_of`) of `kind`?
    pub fn is(self, kind: Kind, t: &str, at: &Loc) -> String {
        if at.typed.is_some() {
            return typed::is(kind, t);
        }
        match self {
            Dialect::DuckDb => match kind {
                Kind::Null => format!("{t} = 'NULL'"),
                Kind::Bool => format!("{t} = 'BOOLEAN'"),
                // A number without a fraction or exponent, whatever its size.
                Kind::Int => format!(
                    "({t} IN ('BIGINT', 'UBIGINT') OR ({t} = 'DOUBLE' AND regexp_full_match(CAST({} AS VARCHAR), '-?[0-9]+')))",
                    at.json
                ),
                Kind::Number => format!("{t} IN ('BIGINT', 'UBIGINT', 'DOUBLE')"),
                Kind::Text => format!("{t} = 'VARCHAR'"),
                Kind::Array => format!("{t} = 'ARRAY'"),
                Kind::Object => format!("{t} = 'OBJECT'"),
            },
            Dialect::Spark => match kind {
                Kind::Null => format!("{t} = 'VOID'"),
                Kind::Bool => format!("{t} = 'BOOLEAN'"),
                // VARIANT keeps `1.0` as DECIMAL(1,0): the line's text says
                // whether the number had a fraction.
                Kind::Int => format!(
                    "({t} = 'BIGINT' OR ({t} LIKE 'DECIMAL(%,0)' AND regexp_like(get_json_object(hql_t, {}), '^-?[0-9]+$')))",
                    at.path
                ),
                Kind::Number => format!("({t} IN ('BIGINT', 'DOUBLE') OR {t} LIKE 'DECIMAL(%')"),
                Kind::Text => format!("{t} = 'STRING'"),
                Kind::Array => format!("{t} LIKE 'ARRAY<%'"),
                Kind::Object => format!("{t} LIKE 'OBJECT<%'"),
            },
            // Trino's and PostgreSQL's `json` keep a number's text as the
            // line has it.
            Dialect::Trino | Dialect::Postgres => match kind {
                Kind::Null => format!("{t} = 'null'"),
                Kind::Bool => format!("{t} = 'boolean'"),
                Kind::Int => {
                    let digits = match self {
                        Dialect::Trino => format!("regexp_like(json_format({}), ", at.json),
                        _ => format!("(CAST({} AS text) ~ ", at.json),
                    };
                    format!("({t} = 'number' AND {digits}'^-?[0-9]+$'))")
                }
                Kind::Number => format!("{t} = 'number'"),
                Kind::Text => format!("{t} = 'string'"),
                Kind::Array => format!("{t} = 'array'"),
                Kind::Object => format!("{t} = 'object'"),
            },
        }
    }

    /// A scalar JSON value read as `ty` (NULL when it is not one).
    pub fn read(self, at: &Loc, ty: Ty) -> String {
        if let Some((column, _)) = at.scalar.as_ref().filter(|(_, t)| *t == ty) {
            return column.clone();
        }
        if let Some(t) = &at.typed {
            return typed::read(self, at, t, ty);
        }
        let name = self.type_name(ty);
        match self {
            Dialect::DuckDb => format!("TRY_CAST({} ->> '$' AS {name})", at.json),
            Dialect::Spark => format!(
                "try_variant_get({}, '$', '{}')",
                at.json,
                name.to_ascii_lowercase()
            ),
            Dialect::Trino => match ty {
                Ty::Text => format!("json_extract_scalar({}, '$')", at.json),
                _ => format!("TRY_CAST({} AS {name})", at.json),
            },
            // Read only when of its kind: a cast of anything else raises.
            Dialect::Postgres => {
                let (kind, text) = match ty {
                    Ty::Text => ("string", format!("({} #>> '{{}}')", at.json)),
                    Ty::Bool => ("boolean", format!("CAST({} AS text)", at.json)),
                    Ty::Int | Ty::Float => ("number", format!("CAST({} AS text)", at.json)),
                };
                let value = match ty {
                    Ty::Text => text,
                    _ => self.cast(&text, ty),
                };
                format!("CASE WHEN {} = '{kind}' THEN {value} END", self.kind_of(at))
            }
        }
    }

    /// The instant a text (`text`, SQL text: a valid RFC 3339 timestamp, or
    /// with `date` a `YYYY-MM-DD` date, at midnight UTC) stands for, in
    /// microseconds since the epoch; NULL where the engine cannot read it.
    pub fn instant_micros(self, text: &str, date: bool) -> String {
        let text = match date {
            true => join_text(text, "'T00:00:00Z'"),
            false => text.to_string(),
        };
        match self {
            Dialect::DuckDb => format!("epoch_us(TRY_CAST({text} AS TIMESTAMPTZ))"),
            Dialect::Spark => format!("unix_micros(try_to_timestamp({text}))"),
            Dialect::Trino => {
                format!("CAST(to_unixtime(from_iso8601_timestamp({text})) * 1000000 AS BIGINT)")
            }
            Dialect::Postgres => {
                format!("CAST(EXTRACT(EPOCH FROM pg_temp.hql_instant({text})) * 1000000 AS bigint)")
            }
        }
    }

    /// The engine's clock, in microseconds since the epoch.
    pub fn now_micros(self) -> &'static str {
        match self {
            Dialect::DuckDb => "epoch_us(get_current_timestamp())",
            Dialect::Spark => "unix_micros(current_timestamp())",
            Dialect::Trino => "CAST(to_unixtime(current_timestamp) * 1000000 AS BIGINT)",
            Dialect::Postgres => {
                "CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000000 AS bigint)"
            }
        }
    }

    /// The length of a JSON array.
    pub fn array_length(self, at: &Loc) -> String {
        if let Some(t) = &at.typed {
            return typed::array_length(self, at, t);
        }
        match self {
            Dialect::DuckDb => format!("CAST(json_array_length({}) AS BIGINT)", at.json),
            Dialect::Spark => format!(
                "array_size(variant_get({}, '$', 'array<variant>'))",
                at.json
            ),
            Dialect::Trino => format!("json_array_length({})", at.json),
            Dialect::Postgres => format!(
                "CAST(json_array_length({}) AS bigint)",
                self.only(at, "array")
            ),
        }
    }

    /// PostgreSQL's JSON value at `at` where it is of `kind`, else NULL:
    /// its functions over arrays and objects raise on anything else.
    fn only(self, at: &Loc, kind: &str) -> String {
        format!(
            "CASE WHEN {} = '{kind}' THEN {} END",
            self.kind_of(at),
            at.json
        )
    }

    /// Each element of a JSON array through `body` (given the element and
    /// the SQL of its index, from 0): an SQL list.
    pub fn each(self, at: &Loc, n: &str, body: impl FnOnce(&Loc, &str) -> String) -> String {
        if let Some(t) = &at.typed {
            return typed::each(self, at, t, n, body);
        }
        let e = format!("{n}_e");
        let elem = |index: &str| Loc {
            json: e.clone(),
            path: join_text(&at.path, &format!("'[' || {index} || ']'")),
            kind: None,
            scalar: None,
            typed: None,
        };
        match self {
            Dialect::Spark => {
                let text = body(&elem(n), n);
                format!(
                    "transform(variant_get({}, '$', 'array<variant>'), ({e}, {n}) -> {text})",
                    at.json
                )
            }
            // The array is parsed once into a list of its elements.
            Dialect::DuckDb => {
                let index = format!("({n} - 1)");
                // The cast makes a JSON null element an SQL NULL.
                let item = Loc {
                    json: format!("coalesce({e}, CAST('null' AS JSON))"),
                    ..elem(&index)
                };
                let text = body(&item, &index);
                format!(
                    "list_transform(CAST({} AS JSON[]), lambda {e}, {n}: {text})",
                    at.json
                )
            }
            Dialect::Trino => {
                let item = Loc {
                    json: format!(
                        "json_extract({}, '$[' || CAST({n} AS VARCHAR) || ']')",
                        at.json
                    ),
                    ..elem(n)
                };
                let text = body(&item, n);
                let len = self.array_length(at);
                self.transform(&format!("slice(sequence(0, {len}), 1, {len})"), n, &text)
            }
            Dialect::Postgres => {
                let index = format!("({n} - 1)");
                let text = body(&elem(&index), &index);
                format!(
                    "ARRAY(SELECT {text} FROM json_array_elements({}) WITH ORDINALITY AS {n}_u({e}, {n}) \
                     ORDER BY {n})",
                    self.only(at, "array")
                )
            }
        }
    }

    /// The keys of a JSON object in the order the line has them.
    pub fn keys(self, at: &Loc) -> String {
        if let Some(t) = &at.typed {
            return typed::keys(self, at, t);
        }
        match self {
            Dialect::DuckDb => format!("json_keys({})", at.json),
            // VARIANT sorts an object's keys: the line's text has their order.
            Dialect::Spark => {
                if at.path == "'$'" {
                    "json_object_keys(hql_t)".into()
                } else {
                    format!("json_object_keys(get_json_object(hql_t, {}))", at.path)
                }
            }
            Dialect::Trino => format!("map_keys(CAST({} AS MAP(VARCHAR, JSON)))", at.json),
            // `json` keeps the keys in the line's order.
            Dialect::Postgres => format!(
                "ARRAY(SELECT hql_key FROM json_object_keys({}) WITH ORDINALITY AS hql_keys(hql_key, hql_key_o) \
                 ORDER BY hql_key_o)",
                self.only(at, "object")
            ),
        }
    }

    // --- text ---

    /// Does the regex (already in the engine's syntax; for PostgreSQL, in
    /// DuckDB's, rewritten here by `regex::postgres`) match anywhere?
    pub fn regex_search(self, s: &str, pattern: &str) -> String {
        match self {
            Dialect::DuckDb => format!("regexp_matches({s}, {})", self.string(pattern)),
            Dialect::Postgres => format!("(({s}) ~ {})", self.postgres_pattern(pattern)),
            _ => format!("regexp_like({s}, {})", self.string(pattern)),
        }
    }

    /// Every match of the regex replaced by nothing.
    pub fn regex_remove(self, s: &str, pattern: &str) -> String {
        match self {
            Dialect::DuckDb => format!("regexp_replace({s}, {}, '', 'g')", self.string(pattern)),
            Dialect::Postgres => format!(
                "regexp_replace({s}, {}, '', 'g')",
                self.postgres_pattern(pattern)
            ),
            _ => format!("regexp_replace({s}, {}, '')", self.string(pattern)),
        }
    }

    /// A pattern in DuckDB's syntax as PostgreSQL's literal; one that folds
    /// case, under the ICU collation that folds it as Unicode does.
    fn postgres_pattern(self, pattern: &str) -> String {
        let (text, folds) = super::regex::postgres(pattern);
        let literal = self.string(&text);
        match folds {
            true => format!("({literal} COLLATE {UNICODE})"),
            false => literal,
        }
    }

    /// A builtin text or number function by HQL's name: its SQL.
    pub fn text_fn(self, name: &str, args: &[&str]) -> String {
        let a = args.first().copied().unwrap_or_default();
        let b = args.get(1).copied().unwrap_or_default();
        match (self, name) {
            (Dialect::Spark, "len") => format!("char_length({a})"),
            (_, "len") => format!("length({a})"),
            (Dialect::DuckDb, "contains") => format!("contains({a}, {b})"),
            (Dialect::Spark, "contains") => format!("contains({a}, {b})"),
            (Dialect::Trino, "contains") => format!("(strpos({a}, {b}) > 0)"),
            (Dialect::Spark, "starts_with") => format!("startswith({a}, {b})"),
            (_, "starts_with") => format!("starts_with({a}, {b})"),
            (Dialect::DuckDb, "ends_with") => format!("suffix({a}, {b})"),
            (Dialect::Spark, "ends_with") => format!("endswith({a}, {b})"),
            (Dialect::Trino, "ends_with") => {
                format!("(length({b}) = 0 OR substr({a}, -length({b})) = {b})")
            }
            (Dialect::DuckDb, "split") => format!("string_split({a}, {b})"),
            (Dialect::Spark, "split") => format!("split({a}, {b}, -1)"),
            (Dialect::Postgres, "contains") => format!("(strpos({a}, {b}) > 0)"),
            (Dialect::Postgres, "ends_with") => format!("(right({a}, length({b})) = {b})"),
            (Dialect::Postgres, "split") => format!("string_to_array({a}, {b})"),
            (Dialect::Postgres, "lower" | "upper") => format!("{name}({a} COLLATE {UNICODE})"),
            // Half away from zero, as `numeric` rounds (a double rounds half
            // to even).
            (Dialect::Postgres, "round") => format!("round(CAST({a} AS numeric))"),
            (_, other) => format!("{other}({})", args.join(", ")),
        }
    }

    /// A text literal as the separator `split` takes (Spark's is a regex).
    pub fn split_separator(self, sep: &str) -> String {
        match self {
            Dialect::Spark => {
                let mut quoted = String::new();
                for c in sep.chars() {
                    if !c.is_alphanumeric() {
                        quoted.push('\\');
                    }
                    quoted.push(c);
                }
                self.string(&quoted)
            }
            _ => self.string(sep),
        }
    }

    /// `a / b` as HQL divides (a Float, also of two Ints), NULL for zero.
    pub fn divide(self, a: &str, b: &str) -> String {
        match self {
            // Its doubles divide only doubles.
            Dialect::Postgres => format!(
                "{} / NULLIF({}, 0)",
                self.cast(a, Ty::Float),
                self.cast(b, Ty::Float)
            ),
            _ => format!("CAST({a} AS DOUBLE) / NULLIF({b}, 0)"),
        }
    }

    pub fn remainder(self, a: &str, b: &str) -> String {
        match self {
            Dialect::Trino => format!("mod({a}, NULLIF({b}, 0))"),
            // PostgreSQL's `%` takes no doubles.
            Dialect::Postgres => {
                format!("mod(CAST({a} AS numeric), NULLIF(CAST({b} AS numeric), 0))")
            }
            _ => format!("({a}) % NULLIF({b}, 0)"),
        }
    }
}

/// PostgreSQL's collation that changes and folds case as Unicode does
/// (`lower`, `upper`, `(?i)`): its ICU root locale, which servers built
/// with ICU have (the database's own collation may be `C`, which changes
/// only ASCII letters).
const UNICODE: &str = "\"und-x-icu\"";

/// Two SQL text expressions joined; two literals become one.
fn join_text(a: &str, b: &str) -> String {
    let literal = |s: &str| {
        s.len() >= 2
            && s.starts_with('\'')
            && s.ends_with('\'')
            && !s[1..s.len() - 1].replace("''", "").contains('\'')
    };
    if literal(a) && literal(b) {
        format!("{}{}", &a[..a.len() - 1], &b[1..])
    } else {
        format!("{a} || {b}")
    }
}
