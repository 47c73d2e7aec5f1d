//! `hql export`: a compiled type written out for other tools — a JSON
//! Schema (draft 2020-12), an OpenLineage `SchemaDatasetFacet`, or HQL's own
//! canonical JSON of the contract (tooling.md, "Contract tooling").
//!
//! Every function here reads a `Contract` and returns JSON; objects keep
//! the order they are built in (fields in declaration order), so the same
//! contract always gives the same text.
//!
//! A JSON Schema cannot say everything a contract says. A rule whose whole
//! meaning has a JSON Schema keyword gets that keyword; every rule, named
//! check and unique key — translated or not — is listed under `x-hql-rules`
//! with `"exact"` saying whether the schema enforces it, and every
//! expectation (which judges a whole stream, beyond any schema) under
//! `x-hql-expectations`, so nothing is dropped without a trace.

use std::collections::HashSet;
use std::rc::Rc;

use serde_json::{json, Map, Value as Json};

use crate::runtime::contract::{
    Contract, ExpectSpec, FieldSpec, RecordShape, Records, RuleSpec, Shape, TypeSpec,
};
use crate::runtime::hir::{Expr, Logic};
use crate::runtime::json::to_json;
use crate::runtime::value::Value;
use crate::syntax::ast::{BinOp, Severity};
use crate::syntax::canonical::write_key;

/// The draft every JSON Schema export declares.
pub const JSON_SCHEMA_DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The facet an OpenLineage export is an instance of.
pub const OPENLINEAGE_FACET: &str =
    "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet";

/// The formats `hql export --format` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    JsonSchema,
    OpenLineage,
    Contract,
}

impl Format {
    /// The format named `name`, or a message saying which there are.
    pub fn lookup(name: &str) -> Result<Format, String> {
        match name {
            "json-schema" => Ok(Format::JsonSchema),
            "openlineage" => Ok(Format::OpenLineage),
            "contract" => Ok(Format::Contract),
            "sql" => Err(
                "the `sql` export needs a dialect and an input: `hql export FILE TYPE --format sql --dialect duckdb --from INPUT`"
                    .into(),
            ),
            other => Err(format!(
                "no export format `{other}`; the formats are json-schema, openlineage and contract"
            )),
        }
    }
}

/// `contract` in `format`.
pub fn export(contract: &Contract, format: Format) -> Json {
    match format {
        Format::JsonSchema => json_schema(contract),
        Format::OpenLineage => openlineage(contract),
        Format::Contract => canonical(contract),
    }
}

/// `export`, as the commands print it: pretty JSON and a final newline.
pub fn export_text(contract: &Contract, format: Format) -> String {
    let mut text = serde_json::to_string_pretty(&export(contract, format))
        .expect("JSON values always serialize");
    text.push('\n');
    text
}

/// A `///` description as exports carry it: without its `example:` lines,
/// which are the standard library's tests, not prose. None when nothing
/// else is left.
fn description(doc: &Option<String>) -> Option<String> {
    let text: Vec<&str> = doc
        .as_deref()?
        .lines()
        .filter(|l| !l.trim_start().starts_with("example:"))
        .collect();
    let text = text.join("\n").trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// A value as JSON (numbers keep their text where serde_json can hold it).
fn value_json(v: &Value) -> Json {
    serde_json::from_str(&to_json(v)).unwrap_or(Json::Null)
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Require => "require",
        Severity::Warn => "warn",
    }
}

/// A field's name as a program writes it (quoted when not an identifier).
fn key_text(name: &str) -> String {
    let mut out = String::new();
    write_key(&mut out, name);
    out
}

fn unique_text(shape: &RecordShape, slots: &[u32]) -> (String, Vec<Json>) {
    let names: Vec<String> = slots
        .iter()
        .map(|&s| key_text(&shape.fields[s as usize].name))
        .collect();
    let text = match names.as_slice() {
        [one] => format!("unique {one}"),
        _ => format!("unique ({})", names.join(", ")),
    };
    let fields = slots
        .iter()
        .map(|&s| Json::from(&*shape.fields[s as usize].name))
        .collect();
    (text, fields)
}

// ---------------------------------------------------------------------------
// `--format contract`

/// HQL's canonical JSON of a type: every key always present, in a fixed
/// order (docs/reference.md, "hql export").
pub fn canonical(c: &Contract) -> Json {
    let mut out = Map::new();
    out.insert("name".into(), c.name.clone().into());
    match &c.shape {
        Shape::Record { kind, record } => {
            out.insert("kind".into(), kind.name().into());
            out.insert("open".into(), record.open.into());
        }
        Shape::Refined { base, .. } => {
            out.insert("kind".into(), "refinement".into());
            out.insert("base".into(), base.text().into());
        }
    }
    out.insert("version".into(), c.version.clone().into());
    out.insert("owner".into(), c.owner.clone().into());
    out.insert("description".into(), description(&c.doc).into());
    match &c.shape {
        Shape::Record { record, .. } => {
            let fields = record.fields.iter().map(canonical_field).collect();
            out.insert("fields".into(), Json::Array(fields));
            let rules = record
                .rules
                .iter()
                .chain(&record.warns)
                .map(canonical_rule)
                .collect();
            out.insert("rules".into(), Json::Array(rules));
            let uniques = record
                .uniques
                .iter()
                .map(|u| {
                    let (_, fields) = unique_text(record, &u.slots);
                    json!({"id": &*u.id, "fields": fields})
                })
                .collect();
            out.insert("unique".into(), Json::Array(uniques));
            let expects = record.expects.iter().map(canonical_expect).collect();
            out.insert("expectations".into(), Json::Array(expects));
        }
        Shape::Refined { rules, .. } => {
            out.insert(
                "rules".into(),
                Json::Array(rules.iter().map(canonical_rule).collect()),
            );
        }
    }
    Json::Object(out)
}

fn canonical_field(f: &FieldSpec) -> Json {
    let checks: Vec<Json> = f
        .checks
        .iter()
        .map(|c| json!({"id": &*c.id, "function": c.func_name}))
        .collect();
    json!({
        "name": &*f.name,
        "type": f.ty.text(),
        "optional": f.optional,
        "nullable": f.ty.admits_null(),
        "default": f.default_text,
        "description": description(&f.doc),
        "checks": checks,
    })
}

fn canonical_rule(r: &RuleSpec) -> Json {
    let fields: Vec<Json> = r.fields.iter().map(|f| Json::from(&**f)).collect();
    json!({
        "id": &*r.id,
        "severity": severity_name(r.severity),
        "text": r.text,
        "fields": fields,
        "message": r.message,
        "description": description(&r.doc),
    })
}

fn canonical_expect(e: &ExpectSpec) -> Json {
    let fields: Vec<Json> = e.fields.iter().map(|f| Json::from(&**f)).collect();
    let measures: Vec<Json> = e.measures.iter().map(|m| Json::from(&*m.text)).collect();
    json!({
        "id": &*e.id,
        "kind": e.kind(),
        "text": e.text,
        "fields": fields,
        "measures": measures,
        "description": description(&e.doc),
    })
}

// ---------------------------------------------------------------------------
// `--format openlineage`

/// An OpenLineage `SchemaDatasetFacet` of the type's fields.
pub fn openlineage(c: &Contract) -> Json {
    let mut seen = HashSet::new();
    seen.insert(c.name.clone());
    let fields = match &c.shape {
        Shape::Record { record, .. } => lineage_fields(record, &mut seen),
        Shape::Refined { .. } => Vec::new(),
    };
    json!({
        "_producer": format!("hql/{}", env!("CARGO_PKG_VERSION")),
        "_schemaURL": OPENLINEAGE_FACET,
        "fields": fields,
    })
}

fn lineage_fields(record: &RecordShape, seen: &mut HashSet<String>) -> Vec<Json> {
    record
        .fields
        .iter()
        .map(|f| {
            let mut field = Map::new();
            field.insert("name".into(), Json::from(&*f.name));
            let mut ty = String::new();
            f.ty.write_text(&mut ty, Records::Word);
            field.insert("type".into(), ty.into());
            if let Some(doc) = description(&f.doc) {
                field.insert("description".into(), doc.into());
            }
            if let Some(nested) = nested_record(&f.ty, seen) {
                field.insert("fields".into(), Json::Array(nested));
            }
            Json::Object(field)
        })
        .collect()
}

/// The fields of the record a field holds (through lists, nullable unions
/// and named record types), if it holds one. A named type already being
/// listed further out is not listed again.
fn nested_record(t: &TypeSpec, seen: &mut HashSet<String>) -> Option<Vec<Json>> {
    match t {
        TypeSpec::Record(shape) => Some(lineage_fields(shape, seen)),
        TypeSpec::List(item) => nested_record(item, seen),
        TypeSpec::Union(members) => {
            let mut records = members.iter().filter(|m| !matches!(m, TypeSpec::Null));
            match (records.next(), records.next()) {
                (Some(only), None) => nested_record(only, seen),
                _ => None,
            }
        }
        TypeSpec::Named(cell) => {
            let named = cell.get()?;
            match &named.shape {
                Shape::Record { record, .. } if seen.insert(named.name.clone()) => {
                    let fields = lineage_fields(record, seen);
                    seen.remove(&named.name);
                    Some(fields)
                }
                Shape::Refined { base, .. } => nested_record(base, seen),
                Shape::Record { .. } => None,
            }
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// `--format json-schema`

/// A JSON Schema (draft 2020-12) for values of the type.
pub fn json_schema(c: &Contract) -> Json {
    let mut schema = SchemaBuilder {
        root: c.name.clone(),
        ..SchemaBuilder::default()
    };
    schema.done.insert(c.name.clone());
    let body = schema.contract(c);
    let mut root = Map::new();
    root.insert("$schema".into(), JSON_SCHEMA_DRAFT.into());
    root.insert("title".into(), c.name.clone().into());
    root.extend(body);
    while let Some(named) = schema.pending.pop() {
        let def = schema.contract(&named);
        schema.defs.insert(named.name.clone(), Json::Object(def));
    }
    if !schema.defs.is_empty() {
        // In the order the types were first met.
        let mut defs = Map::new();
        for name in &schema.order {
            if let Some(def) = schema.defs.remove(name) {
                defs.insert(name.clone(), def);
            }
        }
        root.insert("$defs".into(), Json::Object(defs));
    }
    Json::Object(root)
}

#[derive(Default)]
struct SchemaBuilder {
    /// The type exported: a reference to it (a recursive type) is `#`.
    root: String,
    /// Named types given a `$defs` entry (or being the root).
    done: HashSet<String>,
    /// Names met, in order; the `$defs` follow it.
    order: Vec<String>,
    pending: Vec<Rc<Contract>>,
    defs: Map<String, Json>,
}

impl SchemaBuilder {
    /// The schema of a declared type, with its description, version and
    /// rules.
    fn contract(&mut self, c: &Contract) -> Map<String, Json> {
        let mut out = Map::new();
        if let Some(doc) = description(&c.doc) {
            out.insert("description".into(), doc.into());
        }
        if let Some(version) = &c.version {
            out.insert("x-hql-version".into(), version.clone().into());
        }
        let mut notes = Vec::new();
        match &c.shape {
            Shape::Record { record, .. } => {
                out.extend(self.record(record, &mut notes));
                self.record_rules(record, &mut out, &mut notes);
            }
            Shape::Refined { base, rules, ids } => {
                out.extend(self.type_schema(base));
                int_note(
                    base,
                    &ids.type_,
                    &format!("{}: {}", c.name, base.text()),
                    &mut notes,
                );
                for rule in rules {
                    let keywords = (rule.severity == Severity::Require)
                        .then(|| refinement_keywords(&rule.cond, base))
                        .flatten();
                    let exact = keywords.is_some();
                    for (keyword, value) in keywords.unwrap_or_default() {
                        add_keyword(&mut out, keyword, value);
                    }
                    notes.push(rule_note(rule, exact));
                }
            }
        }
        if !notes.is_empty() {
            out.insert("x-hql-rules".into(), Json::Array(notes));
        }
        if let Some(record) = c.record().filter(|r| !r.expects.is_empty()) {
            let expects = record.expects.iter().map(expect_note).collect();
            out.insert("x-hql-expectations".into(), Json::Array(expects));
        }
        out
    }

    /// `type`, `properties`, `required`, `additionalProperties`; the fields'
    /// structural notes (`Int`) and named checks go to `notes`.
    fn record(&mut self, record: &RecordShape, notes: &mut Vec<Json>) -> Map<String, Json> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for f in &record.fields {
            let mut property = Map::new();
            if let Some(doc) = description(&f.doc) {
                property.insert("description".into(), doc.into());
            }
            property.extend(self.type_schema(&f.ty));
            if let Some(Expr::Const(v)) = &f.default {
                property.insert("default".into(), value_json(v));
            }
            properties.insert(f.name.to_string(), Json::Object(property));
            if !f.optional && f.default.is_none() {
                required.push(Json::from(&*f.name));
            }
            field_int_notes(f, notes);
            let name = key_text(&f.name);
            for check in &f.checks {
                notes.push(json!({
                    "id": &*check.id,
                    "kind": "check",
                    "text": format!("validate {name} with {}", check.func_name),
                    "exact": false,
                }));
            }
        }
        let mut out = Map::new();
        out.insert("type".into(), "object".into());
        out.insert("properties".into(), Json::Object(properties));
        if !required.is_empty() {
            out.insert("required".into(), Json::Array(required));
        }
        out.insert("additionalProperties".into(), record.open.into());
        out
    }

    /// A record type's `require` and `warn` rules and unique keys: the
    /// keywords of those that have them, and a note for each.
    fn record_rules(
        &mut self,
        record: &RecordShape,
        out: &mut Map<String, Json>,
        notes: &mut Vec<Json>,
    ) {
        for rule in record.rules.iter().chain(&record.warns) {
            let keywords = (rule.severity == Severity::Require)
                .then(|| record_keywords(&rule.cond, record))
                .flatten();
            let exact = keywords.is_some();
            if let Some(Json::Object(properties)) = out.get_mut("properties") {
                for (slot, keyword, value) in keywords.unwrap_or_default() {
                    let name = &record.fields[slot].name;
                    if let Some(Json::Object(property)) = properties.get_mut(&**name) {
                        add_keyword(property, keyword, value);
                    }
                }
            }
            notes.push(rule_note(rule, exact));
        }
        for u in &record.uniques {
            let (text, _) = unique_text(record, &u.slots);
            notes.push(json!({
                "id": &*u.id,
                "kind": "unique",
                "text": text,
                "exact": false,
            }));
        }
    }

    fn type_schema(&mut self, t: &TypeSpec) -> Map<String, Json> {
        let mut out = Map::new();
        match t {
            TypeSpec::Any => {}
            TypeSpec::Record(shape) => {
                // An inline record has no rules; its fields' notes are made
                // by the enclosing field.
                let mut ignored = Vec::new();
                out = self.record(shape, &mut ignored);
            }
            TypeSpec::List(item) => {
                out.insert("type".into(), "array".into());
                out.insert("items".into(), Json::Object(self.type_schema(item)));
            }
            TypeSpec::Map(item) => {
                out.insert("type".into(), "object".into());
                out.insert(
                    "additionalProperties".into(),
                    Json::Object(self.type_schema(item)),
                );
            }
            TypeSpec::Literal(v) => {
                out.insert("const".into(), value_json(v));
            }
            TypeSpec::Named(cell) => {
                if let Some(named) = cell.get() {
                    if self.done.insert(named.name.clone()) {
                        self.order.push(named.name.clone());
                        self.pending.push(named.clone());
                    }
                    let target = if named.name == self.root {
                        "#".to_string()
                    } else {
                        format!("#/$defs/{}", named.name)
                    };
                    out.insert("$ref".into(), target.into());
                }
            }
            TypeSpec::Union(members) => out = self.union(members),
            simple => {
                out.insert("type".into(), json_type(simple).unwrap_or("null").into());
            }
        }
        out
    }

    /// A union: `enum`/`const` when every member is a literal (or `Null`),
    /// `type: [..]` when every member is a plain type or one schema plus
    /// `Null`, else `anyOf`.
    fn union(&mut self, members: &[TypeSpec]) -> Map<String, Json> {
        let mut out = Map::new();
        let literal = |m: &TypeSpec| match m {
            TypeSpec::Literal(v) => Some(value_json(v)),
            TypeSpec::Null => Some(Json::Null),
            _ => None,
        };
        if let Some(values) = members.iter().map(literal).collect::<Option<Vec<Json>>>() {
            if let [one] = values.as_slice() {
                out.insert("const".into(), one.clone());
            } else {
                out.insert("enum".into(), Json::Array(values));
            }
            return out;
        }
        if let Some(types) = members.iter().map(json_type).collect::<Option<Vec<&str>>>() {
            let mut distinct: Vec<Json> = Vec::new();
            for t in types {
                if !distinct.iter().any(|d| d == t) {
                    distinct.push(t.into());
                }
            }
            out.insert("type".into(), Json::Array(distinct));
            return out;
        }
        let others: Vec<&TypeSpec> = members
            .iter()
            .filter(|m| !matches!(m, TypeSpec::Null))
            .collect();
        if let [only] = others.as_slice() {
            // `T | Null` where `T`'s keywords all apply to one JSON type:
            // widen that type.
            let mut schema = self.type_schema(only);
            if let Some(Json::String(t)) = schema.get("type").cloned() {
                if !schema.contains_key("const") {
                    schema.insert("type".into(), json!([t, "null"]));
                    return schema;
                }
            }
        }
        let any: Vec<Json> = members
            .iter()
            .map(|m| Json::Object(self.type_schema(m)))
            .collect();
        out.insert("anyOf".into(), Json::Array(any));
        out
    }
}

/// The JSON type of a plain HQL type.
fn json_type(t: &TypeSpec) -> Option<&'static str> {
    Some(match t {
        TypeSpec::Null => "null",
        TypeSpec::Bool => "boolean",
        TypeSpec::Int => "integer",
        TypeSpec::Float => "number",
        TypeSpec::String => "string",
        _ => return None,
    })
}

/// Put `keyword` into `schema`, or under `allOf` when the schema has it
/// already (two rules bounding the same field).
fn add_keyword(schema: &mut Map<String, Json>, keyword: &'static str, value: Json) {
    if !schema.contains_key(keyword) {
        schema.insert(keyword.into(), value);
        return;
    }
    let all = schema
        .entry("allOf")
        .or_insert_with(|| Json::Array(Vec::new()));
    if let Json::Array(all) = all {
        all.push(json!({ keyword: value }));
    }
}

/// A rule under `x-hql-rules`: its identity, kind, canonical text, whether
/// a keyword says it exactly, and its `///` description where it has one.
fn rule_note(rule: &RuleSpec, exact: bool) -> Json {
    let kind = severity_name(rule.severity);
    note(&rule.id, kind, &rule.text, exact, &rule.doc)
}

/// An expectation under `x-hql-expectations`, as a rule is under
/// `x-hql-rules`: no schema judges a whole stream, so never `exact`.
fn expect_note(e: &ExpectSpec) -> Json {
    note(&e.id, e.kind(), &e.text, false, &e.doc)
}

fn note(id: &str, kind: &str, text: &str, exact: bool, doc: &Option<String>) -> Json {
    let mut note = json!({"id": id, "kind": kind, "text": text, "exact": exact});
    if let (Some(doc), Json::Object(fields)) = (description(doc), &mut note) {
        fields.insert("description".into(), doc.into());
    }
    note
}

/// Does the type admit an Int directly (not through a named type)?
fn mentions_int(t: &TypeSpec) -> bool {
    match t {
        TypeSpec::Int => true,
        TypeSpec::List(item) | TypeSpec::Map(item) => mentions_int(item),
        TypeSpec::Union(members) => members.iter().any(mentions_int),
        _ => false,
    }
}

/// JSON Schema's `integer` admits `1.0`, which HQL's `Int` refuses: a note
/// for each field whose type says `Int`.
fn int_note(t: &TypeSpec, id: &str, text: &str, notes: &mut Vec<Json>) {
    if mentions_int(t) {
        notes.push(json!({
            "id": id,
            "kind": "type",
            "text": text,
            "exact": false,
            "note": "JSON Schema's integer admits a number written with a fraction such as 1.0; HQL's Int does not",
        }));
    }
}

/// The `Int` notes of a field and of the fields of inline records in it.
fn field_int_notes(f: &FieldSpec, notes: &mut Vec<Json>) {
    let text = format!("{}: {}", key_text(&f.name), f.ty.text());
    int_note(&f.ty, &f.ids.type_, &text, notes);
    nested_int_notes(&f.ty, notes);
}

/// The `Int` notes of the fields of inline records inside `t`.
fn nested_int_notes(t: &TypeSpec, notes: &mut Vec<Json>) {
    match t {
        TypeSpec::Record(shape) => shape.fields.iter().for_each(|f| field_int_notes(f, notes)),
        TypeSpec::List(item) | TypeSpec::Map(item) => nested_int_notes(item, notes),
        TypeSpec::Union(members) => members.iter().for_each(|m| nested_int_notes(m, notes)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// Rules with an exact JSON Schema equivalent

/// What a subject's type allows a keyword to mean exactly: a JSON Schema
/// keyword constrains one JSON type and lets others pass, so it is exact
/// only when the type check already confines the value to that JSON type
/// (or to it and `null`, which HQL's rules treat as absent).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Subject {
    Number,
    Text,
    Other,
}

impl Subject {
    fn of(t: &TypeSpec) -> Subject {
        match t {
            TypeSpec::Int | TypeSpec::Float => Subject::Number,
            TypeSpec::String => Subject::Text,
            TypeSpec::Union(members) => {
                let kinds: Vec<Subject> = members
                    .iter()
                    .filter(|m| !matches!(m, TypeSpec::Null))
                    .map(Subject::of)
                    .collect();
                match kinds.split_first() {
                    Some((first, rest)) if rest.iter().all(|k| k == first) => *first,
                    _ => Subject::Other,
                }
            }
            _ => Subject::Other,
        }
    }
}

/// The keywords a record rule comes to, each for one field (by position),
/// if every part of it has an exact equivalent.
fn record_keywords(cond: &Expr, record: &RecordShape) -> Option<Vec<(usize, &'static str, Json)>> {
    let mut out = Vec::new();
    for atom in conjuncts(cond) {
        let (slot, keyword, value) = atom_keyword(atom, &|slot| {
            // Slot 0 is `self`; a field with a default is filled before the
            // rule runs, so the rule also judges the default.
            let f = record.fields.get((slot as usize).checked_sub(1)?)?;
            (f.default.is_none()).then_some(&f.ty)
        })?;
        out.push((slot as usize - 1, keyword, value));
    }
    Some(out)
}

/// The keywords a refinement rule comes to, if it has an exact equivalent.
fn refinement_keywords(cond: &Expr, base: &TypeSpec) -> Option<Vec<(&'static str, Json)>> {
    conjuncts(cond)
        .into_iter()
        .map(|atom| atom_keyword(atom, &|slot| (slot == 0).then_some(base)).map(|(_, k, v)| (k, v)))
        .collect()
}

/// `a and b and c` as its parts. Under HQL's three-valued logic a rule
/// holds unless some part is false, just as a schema holds unless some
/// keyword fails.
fn conjuncts(cond: &Expr) -> Vec<&Expr> {
    match cond {
        Expr::Logic(Logic::And, a, b, _) => {
            let mut parts = conjuncts(a);
            parts.extend(conjuncts(b));
            parts
        }
        other => vec![other],
    }
}

/// A frame slot read directly (`x`, `x?`, `self` in a refinement).
fn slot_of(e: &Expr) -> Option<u32> {
    match e {
        Expr::Local { depth: 0, slot } => Some(*slot),
        Expr::Soft(inner) => slot_of(inner),
        _ => None,
    }
}

fn number(e: &Expr) -> Option<Json> {
    match e {
        Expr::Const(v @ (Value::Int(_) | Value::Float(_) | Value::Num(_))) => Some(value_json(v)),
        Expr::Neg(inner, _) => match number(inner)? {
            Json::Number(n) => n
                .as_i64()
                .map(|i| Json::from(-i))
                .or_else(|| n.as_f64().map(|f| Json::from(-f))),
            _ => None,
        },
        _ => None,
    }
}

fn scalar(e: &Expr) -> Option<Json> {
    match e {
        // Not `null`: a null read with `?` is absent, and the rule holds.
        Expr::Const(v @ (Value::Str(_) | Value::Bool(_))) => Some(value_json(v)),
        _ => number(e),
    }
}

/// One part of a rule as one keyword on the slot it reads; `ty` gives the
/// type of a slot whose keywords may be exact.
fn atom_keyword<'a>(
    atom: &Expr,
    ty: &dyn Fn(u32) -> Option<&'a TypeSpec>,
) -> Option<(u32, &'static str, Json)> {
    match atom {
        Expr::Matches { subject, regex, .. } => {
            let slot = slot_of(subject)?;
            let pattern = regex.as_str();
            (Subject::of(ty(slot)?) == Subject::Text && ecma_safe(pattern))
                .then(|| (slot, "pattern", Json::from(pattern)))
        }
        Expr::Binary(op, a, b, _) => {
            // The subject on the left: `0 < x` is `x > 0`.
            let (op, subject, other) = match (slot_of(a), slot_of(b)) {
                (Some(_), _) => (*op, &**a, &**b),
                (None, Some(_)) => (flip(*op)?, &**b, &**a),
                (None, None) => return length_keyword(*op, a, b, ty),
            };
            let slot = slot_of(subject)?;
            let t = ty(slot)?;
            let nullable = t.admits_null();
            match op {
                BinOp::Ge | BinOp::Gt | BinOp::Le | BinOp::Lt => {
                    let bound = number(other)?;
                    (Subject::of(t) == Subject::Number).then(|| (slot, bound_keyword(op), bound))
                }
                BinOp::Eq if nullable => Some((slot, "enum", json!([scalar(other)?, null]))),
                BinOp::Eq => Some((slot, "const", scalar(other)?)),
                BinOp::Ne => Some((slot, "not", json!({"const": scalar(other)?}))),
                BinOp::In => Some((slot, "enum", or_null(list(other)?, nullable))),
                BinOp::NotIn => Some((slot, "not", json!({"enum": list(other)?}))),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `len(x) >= n` and the like, on a String: `minLength`/`maxLength`
/// (both count characters).
fn length_keyword<'a>(
    op: BinOp,
    a: &Expr,
    b: &Expr,
    ty: &dyn Fn(u32) -> Option<&'a TypeSpec>,
) -> Option<(u32, &'static str, Json)> {
    let len_of = |e: &Expr| match e {
        Expr::Builtin { builtin, args, .. }
            if *builtin == crate::runtime::builtins::Builtin::Len && args.len() == 1 =>
        {
            slot_of(&args[0])
        }
        _ => None,
    };
    let (op, slot, other) = match (len_of(a), len_of(b)) {
        (Some(slot), _) => (op, slot, b),
        (None, Some(slot)) => (flip(op)?, slot, a),
        _ => return None,
    };
    if Subject::of(ty(slot)?) != Subject::Text {
        return None;
    }
    let n = match other {
        Expr::Const(Value::Int(n)) if *n >= 0 => *n,
        _ => return None,
    };
    match op {
        BinOp::Ge => Some((slot, "minLength", n.into())),
        BinOp::Gt => Some((slot, "minLength", (n + 1).into())),
        BinOp::Le => Some((slot, "maxLength", n.into())),
        BinOp::Lt if n > 0 => Some((slot, "maxLength", (n - 1).into())),
        _ => None,
    }
}

fn list(e: &Expr) -> Option<Json> {
    match e {
        Expr::List(items) => items
            .iter()
            .map(scalar)
            .collect::<Option<Vec<_>>>()
            .map(Json::Array),
        Expr::Const(Value::List(items)) => items
            .iter()
            .map(|v| scalar(&Expr::Const(v.clone())))
            .collect::<Option<Vec<_>>>()
            .map(Json::Array),
        _ => None,
    }
}

/// A rule over a nullable field reads it with `?`: a null is absent and
/// the rule holds, so the schema must let `null` through.
fn or_null(mut values: Json, nullable: bool) -> Json {
    if let (Json::Array(items), true) = (&mut values, nullable) {
        items.push(Json::Null);
    }
    values
}

fn flip(op: BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        BinOp::Eq | BinOp::Ne => op,
        _ => return None,
    })
}

fn bound_keyword(op: BinOp) -> &'static str {
    match op {
        BinOp::Ge => "minimum",
        BinOp::Gt => "exclusiveMinimum",
        BinOp::Le => "maximum",
        _ => "exclusiveMaximum",
    }
}

/// Does `pattern` mean the same in ECMA-262 (JSON Schema's dialect) as in
/// Rust's `regex`? Only a conservative subset is taken: ASCII literals and
/// escaped punctuation, `^`, `$`, groups `(…)`/`(?:…)`, `|`, the
/// quantifiers `* + ?` (lazy too) and `{n}`, `{n,}`, `{n,m}`, and classes
/// of ASCII literals and ranges. Anything whose meaning differs or may
/// differ — `.`, `\d`, `\s`, `\w`, `\b`, flags, non-ASCII text, nested
/// classes — is refused.
pub fn ecma_safe(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    if !pattern.is_ascii() {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\\' => {
                if !escaped_punctuation(bytes.get(i + 1)) {
                    return false;
                }
                i += 2;
                continue;
            }
            b'[' => match class_end(bytes, i + 1) {
                Some(end) => i = end,
                None => return false,
            },
            b'(' => {
                if bytes.get(i + 1) == Some(&b'?') {
                    if bytes.get(i + 2) != Some(&b':') {
                        return false;
                    }
                    i += 2;
                }
            }
            b'{' => match repetition_end(bytes, i + 1) {
                Some(end) => i = end,
                None => return false,
            },
            b'.' | b'}' | b']' => return false,
            c if c.is_ascii_graphic() || c == b' ' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

fn escaped_punctuation(c: Option<&u8>) -> bool {
    matches!(c, Some(c) if b"\\.-[](){}*+?|^$/".contains(c))
}

/// The index of the `]` closing a class whose body starts at `i`.
fn class_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    if bytes.get(i) == Some(&b'^') {
        i += 1;
    }
    let start = i;
    while i < bytes.len() {
        match bytes[i] {
            b']' if i > start => return Some(i),
            b'\\' => {
                if !escaped_punctuation(bytes.get(i + 1)) {
                    return None;
                }
                i += 1;
            }
            // Nested classes and set operations (`&&`, `--`, `~~`) are
            // Rust's alone.
            b'[' | b'&' | b'~' | b']' => return None,
            b'-' if bytes.get(i + 1) == Some(&b'-') => return None,
            c if c.is_ascii_graphic() || c == b' ' => {}
            _ => return None,
        }
        i += 1;
    }
    None
}

/// The index of the `}` closing `{n}`, `{n,}` or `{n,m}` whose body starts
/// at `i`.
fn repetition_end(bytes: &[u8], i: usize) -> Option<usize> {
    let close = i + bytes[i..].iter().position(|&b| b == b'}')?;
    let body = std::str::from_utf8(&bytes[i..close]).ok()?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = match body.split_once(',') {
        None => digits(body),
        Some((n, m)) => digits(n) && (m.is_empty() || digits(m)),
    };
    ok.then_some(close)
}

#[cfg(test)]
mod tests {
    use super::ecma_safe;

    #[test]
    fn only_patterns_with_one_meaning_are_translated() {
        for safe in [
            r"^[A-Z]{2}$",
            r"^[0-9A-Fa-f]{8}-[0-9]{4}$",
            r"^(ab|cd)+?x*$",
            r"^a\.b\-c$",
            r"^(?:x|y){1,3}[^@ ]$",
        ] {
            assert!(ecma_safe(safe), "{safe}");
        }
        for unsafe_ in [
            r"^\d+$",
            r"^[^@\s]+$",
            r"a.b",
            r"(?i)^abc$",
            r"^é$",
            r"[a-z&&[^aeiou]]",
            r"[[:alpha:]]",
            r"x{,3}",
            r"x{a}",
            r"\bword",
            r"[a--b]",
        ] {
            assert!(!ecma_safe(unsafe_), "{unsafe_}");
        }
    }
}
