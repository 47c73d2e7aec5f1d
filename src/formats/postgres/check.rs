//! Checking a configured PostgreSQL table on its own server (`hql vet
//! --engine postgres`): the table's columns read from the server's
//! catalog in the words `hql export --columns` takes, and the one row of a
//! query run there.
//!
//! Input: the server's URL and the table as `hql.toml` names it. Output:
//! the columns (name, type), or the row's columns by name as text; or
//! what the server said, without the URL (the caller names the server
//! without its password).

use super::{said, table_ident, tls, TEXT_FORMS};

/// Types nested deeper than this (arrays of composites of arrays …) are
/// not read (the catalog's own parser stops there too).
const MAX_DEPTH: usize = 64;

/// `table` (`orders`, `shop.orders`) quoted as an SQL name, part by part.
pub fn table_name(table: &str) -> String {
    table_ident(table)
}

/// The columns of `table` on the server at `url`, in their order, each
/// with its type as the catalog names it (`numeric(9,2)`, `timestamp(3)
/// with time zone`); an array of a composite type is written as a list of
/// its fields (`STRUCT("sku" text, "qty" bigint)[]`), a domain as its
/// base and an enum as `text`.
pub fn table_columns(url: &str, table: &str) -> Result<Vec<(String, String)>, String> {
    let mut client = tls::connect(url)?;
    let found: Option<u32> = client
        .query_one(
            "SELECT CAST(to_regclass($1) AS oid)",
            &[&table_ident(table)],
        )
        .map_err(|e| said(&e))?
        .get(0);
    let Some(relation) = found else {
        return Err(format!("there is no table {table}"));
    };
    let columns = fields(&mut client, relation, 0)?;
    if columns.is_empty() {
        return Err(format!("the table {table} has no columns"));
    }
    Ok(columns)
}

/// The attributes of the relation `relation` (a table or a composite
/// type), each with its type's name.
fn fields(
    client: &mut postgres::Client,
    relation: u32,
    depth: usize,
) -> Result<Vec<(String, String)>, String> {
    let rows = client
        .query(
            "SELECT attname::text, atttypid, atttypmod FROM pg_attribute \
             WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            &[&relation],
        )
        .map_err(|e| said(&e))?;
    rows.iter()
        .map(|row| {
            let ty = type_name(client, row.get(1), row.get(2), depth)?;
            Ok((row.get(0), ty))
        })
        .collect()
}

/// The name of type `oid` at modifier `modifier`, in the words the
/// catalog's parser reads.
fn type_name(
    client: &mut postgres::Client,
    oid: u32,
    modifier: i32,
    depth: usize,
) -> Result<String, String> {
    if depth > MAX_DEPTH {
        return Err(format!("a type nested deeper than {MAX_DEPTH} levels"));
    }
    let row = client
        .query_one(
            "SELECT typtype::text, typcategory::text, typelem, typrelid, typbasetype, typtypmod, \
             format_type(oid, $2) FROM pg_type WHERE oid = $1",
            &[&oid, &modifier],
        )
        .map_err(|e| said(&e))?;
    let (kind, category): (String, String) = (row.get(0), row.get(1));
    let (element, relation, base): (u32, u32, u32) = (row.get(2), row.get(3), row.get(4));
    Ok(match (kind.as_str(), category.as_str()) {
        (_, "A") if element != 0 => {
            format!("{}[]", type_name(client, element, modifier, depth + 1)?)
        }
        ("c", _) => {
            let fields: Vec<String> = fields(client, relation, depth + 1)?
                .into_iter()
                .map(|(name, ty)| format!("\"{}\" {ty}", name.replace('"', "\"\"")))
                .collect();
            format!("STRUCT({})", fields.join(", "))
        }
        ("d", _) => type_name(client, base, row.get(5), depth + 1)?,
        ("e", _) => "text".into(),
        _ => row.get(6),
    })
}

/// Run `sql` (statements, the last a query giving one row) on the server
/// at `url`, in a transaction rolled back after it, with the text forms
/// the PostgreSQL reader reads in: the row's columns, by name, as text.
pub fn one_row(url: &str, sql: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut client = tls::connect(url)?;
    let mut t = client.transaction().map_err(|e| said(&e))?;
    t.batch_execute(TEXT_FORMS).map_err(|e| said(&e))?;
    let messages = t.simple_query(sql).map_err(|e| said(&e))?;
    // The transaction is rolled back when dropped: the query's helpers go
    // with it.
    let row = messages.iter().rev().find_map(|m| match m {
        postgres::SimpleQueryMessage::Row(row) => Some(row),
        _ => None,
    });
    let Some(row) = row else {
        return Err("the query gave no row".into());
    };
    Ok(row
        .columns()
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name().to_string(), row.get(i).map(str::to_string)))
        .collect())
}
