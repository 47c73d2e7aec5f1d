//! `write` and `route` into a database table (tooling.md, "Sources,
//! targets and the schema boundary"): records go to the host's
//! [`TableSink`] its format opens (`Codec::tables`), which compares each
//! batch with the table's live schema;
//! the records its drift policy sets aside go, as failure records, to the
//! dead letters — the target `schema.dead_letters` names, or `route`'s
//! `err` target. `write` gives `{written, drift}`; `route` gives the
//! `report()` record of the results it consumed, plus `drift`.

use std::rc::Rc;

use super::stages::{contract_of, items, target_spec, write_of_results, Tally, Target};
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{DatabaseAt, TableSink, TargetSpec};
use crate::runtime::eval::{Interp, Origin, Result, RuntimeError};
use crate::runtime::value::{Record, Value};

/// `write("table")`: `{written, drift}`.
pub(super) fn write_table(interp: &Rc<Interp>, input: Value, spec: &TargetSpec) -> Result<Value> {
    let mut table = Table::open(interp, spec, &input, false)?;
    for item in items(&input)? {
        let item = item?;
        if matches!(item.value, Value::Ok(_) | Value::Err(_)) {
            return Err(write_of_results().from_record(&item.origin));
        }
        table.put(&item.value, item.origin.as_ref(), None)?;
    }
    let (written, drift) = table.close(interp, None)?;
    let mut result = Record::default();
    result.insert("written".into(), Value::Int(written));
    result.insert("drift".into(), drift);
    Ok(Value::record(result))
}

/// `route(ok: "table", err: target)`: the report record and `drift`; records the
/// drift policy sets aside go to `err` unless the table names its own
/// dead letters.
pub(super) fn route_table(
    interp: &Rc<Interp>,
    input: Value,
    ok: &TargetSpec,
    err: TargetSpec,
) -> Result<Value> {
    let mut errs = Target::open(interp, err, None)?;
    let mut table = Table::open(interp, ok, &input, true)?;
    let mut tally = Tally::default();
    let mark = interp.unmet_count();
    for item in items(&input)? {
        let item = item?;
        tally.add(&item.value);
        let origin = item.origin.as_ref();
        match &item.value {
            Value::Ok(ok) => table.put(&ok.value, origin, Some(&mut errs))?,
            Value::Err(failure) => errs.put(failure).map_err(|e| e.from_record(&item.origin))?,
            other => table.put(other, origin, Some(&mut errs))?,
        }
    }
    let (_, drift) = table.close(interp, Some(&mut errs))?;
    errs.close(interp)?;
    tally.add_unmet(interp, mark);
    let Value::Record(report) = tally.into_value() else {
        unreachable!("a report is a record")
    };
    let mut result = (*report).clone();
    result.insert("drift".into(), drift);
    Ok(Value::record(result))
}

/// A table target opened by its format (`Codec::tables`), its database
/// readied by the host first.
fn open(
    interp: &Rc<Interp>,
    spec: &TargetSpec,
    shape: Option<&Rc<Contract>>,
) -> Result<Box<dyn TableSink>> {
    let (Some(target), Some(tables)) = (&spec.table, interp.codec(spec.format).tables()) else {
        return Err(RuntimeError::new(
            "hql::target",
            format!("target `{}` is not a table", spec.name),
        ));
    };
    if let DatabaseAt::File(path) = &target.at {
        interp.host.ready_database(&spec.name, path)?;
    }
    let host = interp.host.clone();
    tables.open(target, shape, Box::new(move |line| host.warn(line)))
}

/// A table being written, with its own dead letters when it names them.
struct Table {
    sink: Box<dyn TableSink>,
    letters: Option<Target>,
}

impl Table {
    fn open(interp: &Rc<Interp>, spec: &TargetSpec, input: &Value, routed: bool) -> Result<Table> {
        let shape = contract_of(input);
        let sink = open(interp, spec, shape.as_ref())?;
        let letters = match sink.dead_letters() {
            None | Some(None) if routed => None,
            None => None,
            Some(Some(id)) => {
                let letters = target_spec(interp, &Value::str(id), &Value::Null)?;
                Some(Target::open(interp, letters, None)?)
            }
            Some(None) => {
                return Err(RuntimeError::new(
                    "hql::config",
                    format!(
                        "target `{}` quarantines drifting records but names no dead letters",
                        spec.name
                    ),
                )
                .with_help(format!(
                    "add `dead_letters = \"ID\"` (a JSON file target) to its `schema`, or write \
                     with `route(ok: {:?}, err: file(\"dead.jsonl\"))`",
                    spec.name
                )))
            }
        };
        Ok(Table { sink, letters })
    }

    fn put(
        &mut self,
        record: &Value,
        origin: Option<&Origin>,
        errs: Option<&mut Target>,
    ) -> Result<()> {
        self.sink.put(record, origin)?;
        self.set_aside(errs)
    }

    /// Send the records the policy set aside to the dead letters.
    fn set_aside(&mut self, errs: Option<&mut Target>) -> Result<()> {
        let failures = self.sink.quarantined();
        if failures.is_empty() {
            return Ok(());
        }
        let letters = match (self.letters.as_mut(), errs) {
            (Some(letters), _) => letters,
            (None, Some(errs)) => errs,
            (None, None) => unreachable!("a table that sets records aside has dead letters"),
        };
        failures.iter().try_for_each(|f| letters.put(f))
    }

    /// Write the last batch and hand the transaction (and the dead
    /// letters) to the run; the records written and the drift met.
    fn close(mut self, interp: &Interp, errs: Option<&mut Target>) -> Result<(i64, Value)> {
        let (written, drift) = self.sink.finish()?;
        self.set_aside(errs)?;
        if let Some(letters) = self.letters.take() {
            letters.close(interp)?;
        }
        interp.hold_pending(self.sink.into_pending());
        Ok((written, drift))
    }
}
