//! PostgreSQL targets on a real server (tooling.md, "Sources, targets and
//! the schema boundary", "schema drift"): `create_table` with the contract
//! → column mapping, the write modes, every drift policy and option on
//! real column types (each lossless widening an `ALTER`), the run's one
//! transaction committed with its files or not at all, recovery of a
//! commit a crash interrupted, and the faults — each an error naming the
//! target, never the password, with the table's rows and schema as they
//! were.
//!
//! Each test starts a private server (`tests/pg/mod.rs`); they are ignored
//! by a plain `cargo test`, and `.ci/run` runs them.

mod common;
mod pg;

use common::*;
use pg::{Server, PASSWORD};

/// `hql.toml`'s entry for a PostgreSQL target.
fn target(id: &str, url: &str, table: &str, more: &str) -> String {
    format!("[targets.{id}]\npostgres = \"{url}\"\ntable = \"{table}\"\n{more}\n\n")
}

fn setup(name: &str, entries: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write("hql.toml", entries);
    s
}

#[track_caller]
fn ok(s: &Scratch, program: &str) -> Run {
    let r = s.run(program, &[]);
    assert_eq!(r.status, 0, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(!r.err.contains(PASSWORD), "{}", r.err);
    r
}

/// A run that fails with `code` and exit `status`; its standard error,
/// which never holds the password.
#[track_caller]
fn fails(s: &Scratch, program: &str, code: &str, status: i32) -> String {
    let r = s.run(program, &[]);
    assert_eq!(r.status, status, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.err.contains(code), "{}", r.err);
    assert!(
        !r.err.contains(PASSWORD),
        "the password is shown:\n{}",
        r.err
    );
    assert!(!r.err.contains("panicked"), "{}", r.err);
    r.err
}

/// The rows `sql` selects, each as its cells joined by `|` (NULL: `∅`).
fn rows(pg: &Server, sql: &str) -> Vec<String> {
    let mut client = pg.client("postgres");
    client
        .simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}\n{e}"))
        .into_iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).unwrap_or("∅"))
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect()
}

/// A table's columns as `name type [not null]`, in order.
fn columns(pg: &Server, table: &str) -> Vec<String> {
    rows(
        pg,
        &format!(
            "SELECT attname || ' ' || format_type(atttypid, atttypmod) || \
             CASE WHEN attnotnull THEN ' not null' ELSE '' END \
             FROM pg_attribute WHERE attrelid = '{table}'::regclass AND attnum > 0 \
             AND NOT attisdropped ORDER BY attnum"
        ),
    )
}

const ORDER: &str = "type Order : DataContract = {\n  id: Int\n  name: String\n  price: Float\n  \
                     paid: Bool\n  day: Date\n  at: Timestamp\n  tags: List[String]\n  \
                     note: String | Null\n  unique id\n}\n";

fn order_records() -> &'static str {
    "[{id: 1, name: \"tab\\there\", price: 2.5, paid: true, day: \"2024-02-29\", \
     at: \"2024-02-29T13:45:00.5+02:00\", tags: [\"a\", \"b\\\\c\"], note: null}, \
     {id: 2, name: \"line\\nbreak\", price: 0.1, paid: false, day: \"2024-03-01\", \
     at: \"2024-03-01T00:00:00Z\", tags: [], note: \"n\"}]"
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn create_table_maps_the_contract_and_the_modes_append_replace_and_upsert() {
    let pg = Server::start("t-modes");
    let url = pg.url("postgres");
    let s = setup(
        "pgt-modes",
        &(target("orders", &url, "shop.orders", "")
            + &target("again", &url, "shop.orders", "mode = \"replace\"")
            + &target("keyed", &url, "shop.orders", "mode = \"upsert\"")),
    );
    pg.sql("postgres", "CREATE SCHEMA shop");
    let program = format!(
        "{ORDER}{} | validate(Order) | oks() | write(\"orders\")\n",
        order_records()
    );
    let r = ok(&s, &program);
    assert_eq!(r.out, "{written: 2, drift: []}\n");
    assert_eq!(
        columns(&pg, "shop.orders"),
        [
            "id bigint not null",
            "name text not null",
            "price double precision not null",
            "paid boolean not null",
            "day date not null",
            "at timestamp with time zone not null",
            "tags jsonb not null",
            "note text",
        ]
    );
    let select = "SELECT id, name, price, paid, day, at AT TIME ZONE 'UTC', tags, note \
                  FROM shop.orders ORDER BY id, name";
    assert_eq!(
        rows(&pg, select),
        [
            "1|tab\there|2.5|t|2024-02-29|2024-02-29 11:45:00.5|[\"a\", \"b\\\\c\"]|∅",
            "2|line\nbreak|0.1|f|2024-03-01|2024-03-01 00:00:00|[]|n",
        ]
    );
    // Append adds the rows again; the unique index is upsert's alone.
    ok(&s, &program);
    assert_eq!(rows(&pg, "SELECT count(*) FROM shop.orders"), ["4"]);
    // Replace empties the table once a run: its second write adds.
    let r = ok(
        &s,
        &format!(
            "{ORDER}let o = {} | validate(Order) | oks()\n\
             o | write(\"again\")\no | filter(r => r.id == 2) | write(\"again\")\n",
            order_records()
        ),
    );
    assert_eq!(r.out, "{written: 2, drift: []}\n{written: 1, drift: []}\n");
    assert_eq!(
        rows(&pg, "SELECT id FROM shop.orders ORDER BY id"),
        ["1", "2", "2"]
    );
    // Upsert needs distinct keys: the rows must be made so first.
    ok(
        &s,
        &format!(
            "{ORDER}{} | validate(Order) | oks() | write(\"again\")\n",
            order_records()
        ),
    );
    let upsert = |name: &str| {
        format!(
            "{ORDER}[{{id: 2, name: \"{name}\", price: 1.0, paid: true, day: \"2024-01-01\", \
             at: \"2024-01-01T00:00:00Z\", tags: [], note: null}}, \
             {{id: 3, name: \"{name}\", price: 1.0, paid: true, day: \"2024-01-01\", \
             at: \"2024-01-01T00:00:00Z\", tags: [], note: null}}] \
             | validate(Order) | oks() | write(\"keyed\")\n"
        )
    };
    let r = ok(&s, &upsert("updated"));
    assert_eq!(r.out, "{written: 2, drift: []}\n");
    ok(&s, &upsert("again"));
    assert_eq!(
        rows(&pg, "SELECT id, name FROM shop.orders ORDER BY id"),
        ["1|tab\there", "2|again", "3|again"]
    );
}
