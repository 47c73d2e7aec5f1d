//! `route(ok: target, err: target)`: the valid records to one target,
//! the failure records to the other, in one pass; and `write` of the valid
//! records alone (`validate(T) | oks()`), which is read the same way.
//!
//! Over a validated JSON Lines file, a valid line is never built: the line
//! check vouches for it and its text is copied, and a failing line of a
//! record of scalar fields is written from failure texts learnt from the
//! ordinary path (`Copier`). With several threads, such a file is read in
//! chunks that workers route into text, written in the order of the file
//! (`spread`), so the targets hold exactly what one thread writes.

use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::planner::{self, Consumer, Path};
use super::stages::{checked_lines, contract_of, items, plan_of, target_spec, Target};
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::LineReader;
use crate::runtime::eval::io::{SourceSpec, TargetSpec};
use crate::runtime::eval::{Interp, Plan, Result, RuntimeError};
use crate::runtime::exec::stages::Tally;
use crate::runtime::json::{write_compact, write_json};
use crate::runtime::scan::{LineCheck, Verdict};
use crate::runtime::validate::{self, Findings};
use crate::runtime::value::Value;

mod spread;

/// `route(ok: target, err: target)`: oks to one, failure records to the
/// other, in one pass; `{ok: n, err: m}`.
pub(super) fn route(interp: &Rc<Interp>, input: Value, ok: Value, err: Value) -> Result<Value> {
    let shape = contract_of(&input);
    let ok_spec = target_spec(interp, &ok, &Value::Null)?;
    let err_spec = target_spec(interp, &err, &Value::Null)?;
    if err_spec.table.is_some() || !interp.codec(err_spec.format).keeps_nesting() {
        return Err(RuntimeError::new(
            "hql::route",
            format!("the `err` target {} is not JSON", err_spec.name),
        )
        .with_help("failure records are nested: send them to a `.jsonl` or `.json` file"));
    }
    let key = |spec: &TargetSpec| interp.host().target_key(&spec.path).ok();
    if ok_spec.path == err_spec.path || key(&ok_spec).is_some_and(|k| Some(k) == key(&err_spec)) {
        return Err(RuntimeError::new(
            "hql::route",
            format!("`ok` and `err` both write {}", ok_spec.path),
        )
        .with_help("send the valid records and the failure records to two files"));
    }
    if ok_spec.table.is_some() {
        return super::tables::route_table(interp, input, &ok_spec, err_spec);
    }
    let path = planner::plan(interp, Consumer::Route, &input, Some(&ok_spec)).path;
    let (copy, spread) = match path {
        Path::Copier(plan) => (Some(*plan), None),
        Path::Spread(spread) => (None, Some(*spread)),
        _ => (None, None),
    };
    let mark = interp.unmet_count();
    let mut out = Targets {
        oks: Target::open(interp, ok_spec, shape.as_ref())?,
        errs: Some(Target::open(interp, err_spec, None)?),
        tally: Tally::default(),
    };
    match (copy, spread) {
        (Some(plan), _) => copy_lines(interp, plan, &mut out)?,
        (None, Some(spread)) => spread_results(spread, &mut out)?,
        (None, None) => {
            for item in items(&input)? {
                let item = item?;
                out.tally.add(&item.value);
                put_result(&item.value, &mut out).map_err(|e| e.from_record(&item.origin))?;
            }
        }
    }
    let mut tally = std::mem::take(&mut out.tally);
    out.close(interp)?;
    tally.add_unmet(interp, mark);
    Ok(tally.into_value())
}

/// Is the target JSON, with its fields as the records have them?
pub(super) fn is_json(interp: &Interp, spec: &TargetSpec) -> bool {
    interp.codec(spec.format).json_text().is_some() && spec.boundary.columns.is_empty()
}

/// Route a pipeline of stages after `validate` that runs on several
/// threads (`staged`): each chunk's texts written whole to a JSON Lines
/// target, one at a time to another.
fn spread_results(spread: super::staged::Spread, out: &mut Targets) -> Result<()> {
    spread.run(crate::runtime::exec::staged::Render::Route, &mut |piece| {
        out.tally.merge(&piece.tally);
        let oks = piece.n - piece.failed;
        for (ok, text, n) in [(true, &piece.text, oks), (false, &piece.errs, piece.failed)] {
            if n == 0 || out.lines(ok, text.as_bytes(), n)? {
                continue;
            }
            for record in text.lines() {
                out.text(ok, record.as_bytes())?;
            }
        }
        Ok(true)
    })
}

/// `write` of `source(file(…), Json) | validate(T) | oks()` to a JSON
/// target: the valid lines copied as `route` copies them (on several
/// threads too), the others dropped as `oks()` drops them, as the planner
/// planned it (`copies`).
pub(super) fn write_valid(
    interp: &Rc<Interp>,
    plan: CopyPlan,
    spec: &TargetSpec,
    shape: Option<&Rc<Contract>>,
) -> Result<Value> {
    let mut out = Targets {
        oks: Target::open(interp, spec.clone(), shape)?,
        errs: None,
        tally: Tally::default(),
    };
    copy_lines(interp, plan, &mut out)?;
    Ok(Value::Int(out.close(interp)?.0))
}

/// Route the lines of a file the copier reads (`copy_plan`): on several
/// threads where the session and the file allow it, else on this one.
fn copy_lines(interp: &Rc<Interp>, plan: CopyPlan, out: &mut Targets) -> Result<()> {
    let CopyPlan {
        source,
        path,
        contract,
        copier,
        parallel,
    } = plan;
    if let Some(parallel) = parallel {
        let errs = copier.borrow().errs_wanted;
        return spread::spread(interp, &parallel, &source, &path, &contract, errs, out);
    }
    let hook = Copier::hook(&copier, interp);
    let lines = checked_lines(interp, &source, &path, hook)?;
    let mut record_text = Vec::new();
    for item in lines {
        let ok = routed(interp, &copier, &contract, item?, &mut record_text, out)?;
        if let Some(meter) = interp.meter() {
            meter.judged(u64::from(ok), u64::from(!ok));
        }
    }
    Ok(())
}

/// Where routed records go: the two targets, or a worker's two texts.
trait Routes {
    /// A record given as its compact JSON text.
    fn text(&mut self, ok: bool, text: &[u8]) -> Result<()>;
    fn value(&mut self, ok: bool, v: &Value) -> Result<()>;
    /// The results routed so far, counted as `report()` counts them.
    fn tally(&mut self) -> &mut Tally;
}

/// The targets of a `route`, or of a `write` of valid records only (whose
/// failing records go nowhere).
struct Targets {
    oks: Target,
    errs: Option<Target>,
    tally: Tally,
}

impl Routes for Targets {
    fn text(&mut self, ok: bool, text: &[u8]) -> Result<()> {
        match (ok, &mut self.errs) {
            (true, _) => self.oks.put_text(text),
            (false, Some(errs)) => errs.put_text(text),
            (false, None) => Ok(()),
        }
    }

    fn value(&mut self, ok: bool, v: &Value) -> Result<()> {
        match (ok, &mut self.errs) {
            (true, _) => self.oks.put(v),
            (false, Some(errs)) => errs.put(v),
            (false, None) => Ok(()),
        }
    }

    fn tally(&mut self) -> &mut Tally {
        &mut self.tally
    }
}

impl Targets {
    /// `n` records as JSON Lines text, written whole where the target is
    /// JSON Lines (`true`); a target that has none takes them too.
    fn lines(&mut self, ok: bool, text: &[u8], n: u64) -> Result<bool> {
        match (ok, &mut self.errs) {
            (true, _) => self.oks.put_lines(text, n),
            (false, Some(errs)) => errs.put_lines(text, n),
            (false, None) => Ok(true),
        }
    }

    /// Finish them: how many records each holds.
    fn close(self, interp: &Interp) -> Result<(i64, i64)> {
        let oks = self.oks.close(interp)?;
        let errs = match self.errs {
            Some(errs) => errs.close(interp)?,
            None => 0,
        };
        Ok((oks, errs))
    }
}

/// Route one line of a validated JSON file read with the copier: written
/// from the copier's texts when it wrote them (`Value::Absent`), else
/// validated the ordinary way (the copier learns from the result). Whether
/// it went to `ok`.
fn routed(
    interp: &Rc<Interp>,
    copier: &RefCell<Copier>,
    contract: &Rc<Contract>,
    item: crate::runtime::eval::Item,
    record_text: &mut Vec<u8>,
    out: &mut dyn Routes,
) -> Result<bool> {
    let origin = item.origin;
    let (ok, written) = match item.value {
        Value::Absent => {
            let copier = copier.borrow();
            match (&copier.failures, &origin) {
                (None, _) => {
                    out.tally().add_valid(1);
                    (true, out.text(true, &copier.text))
                }
                // A failure no one writes.
                (Some(_), _) if !copier.errs_wanted => (false, Ok(())),
                (Some(failures), Some(at)) => {
                    out.tally().add_findings(&copier.found);
                    record_text.clear();
                    validate::write_failure_record_json(
                        record_text,
                        contract,
                        at,
                        &copier.text,
                        failures,
                    );
                    (false, out.text(false, record_text))
                }
                (Some(_), None) => unreachable!("a line read from a file has its origin"),
            }
        }
        value => {
            let result = validate::validate_value(interp, contract, value, origin.as_ref(), None)?;
            copier.borrow_mut().learn(&result);
            out.tally().add(&result);
            let ok = !matches!(result, Value::Err(_));
            (ok, put_result(&result, out))
        }
    };
    written.map_err(|e| e.from_record(&origin))?;
    Ok(ok)
}

/// A result of `validate` to its target: an `ok`'s value or any other
/// value to `ok`, an `err`'s failure record to `err`.
fn put_result(result: &Value, out: &mut dyn Routes) -> Result<()> {
    match result {
        Value::Err(failure) => out.value(false, failure),
        Value::Ok(ok) => out.value(true, &ok.value),
        other => out.value(true, other),
    }
}

/// A file the copier reads: its source, its path, the contract, the
/// copier, and the threads it is read on (`None`: this one). Made once,
/// by the planner (`copies`), and run as it was planned.
pub struct CopyPlan {
    source: Rc<SourceSpec>,
    path: String,
    contract: Rc<Contract>,
    copier: Rc<RefCell<Copier>>,
    parallel: Option<crate::runtime::eval::Parallel>,
}

impl CopyPlan {
    /// How many threads read the file.
    pub fn threads(&self) -> usize {
        self.parallel.as_ref().map_or(1, |p| p.threads)
    }
}

/// How the copier reads the lines of a pipeline — `source(file(…), Json)
/// | validate(T)` (with `oks()` after it when `oks`, whose failing lines
/// are dropped), a contract with no defaults or unique keys — for a JSON
/// target; `None` otherwise. A valid line is never built: the line
/// check vouches for it and its text is copied; a failing line of a record
/// of scalar fields is written from failure texts met before (`Copier`).
fn copy_plan(
    interp: &Interp,
    input: &Value,
    target: &TargetSpec,
    oks: bool,
) -> std::result::Result<CopyPlan, &'static str> {
    let Some(Plan::Validated {
        source,
        contract,
        oks: validated_oks,
        ..
    }) = plan_of(input)
    else {
        return Err("the pipeline is not a validated source");
    };
    let path = crate::runtime::exec::counting::json_file(interp, &source)
        .ok_or("the source is not a JSON file read by its field names")?;
    if validated_oks != oks {
        return Err(match oks {
            true => "write copies only what oks() keeps",
            false => "route copies the results of validate(T) as they come",
        });
    }
    if !is_json(interp, target) {
        return Err("the target is not JSON with the records' own fields");
    }
    let copier = Copier::new(&contract, interp, !oks).ok_or(
        "the contract has defaults or unique keys, or rules the line check cannot vouch for",
    )?;
    let parallel = spread::parallel_for(interp, &path).ok();
    Ok(CopyPlan {
        parallel,
        source,
        path,
        contract,
        copier,
    })
}

/// How `route` (or `write` of `… | oks()`, `oks`) would copy the lines
/// of `input` to `target`, or why it would not: the execution planner's
/// question, whose answer is then run.
pub(super) fn copies(
    interp: &Interp,
    input: &Value,
    target: &TargetSpec,
    oks: bool,
) -> std::result::Result<CopyPlan, &'static str> {
    copy_plan(interp, input, target, oks)
}

/// What `route` copies of a line instead of building its record: a valid
/// record's compact JSON text, or for a failing record of scalar fields,
/// its input's JSON text and the JSON texts of its failures.
///
/// A failure's JSON text is learnt from the ordinary path: in a record of
/// scalar fields, a failure's identity and the field it is found at fix
/// everything in it (its path, fields and message name neither the value
/// nor anything else of the record; `eval` failures, whose message carries
/// an error, are never learnt). So the first record that breaks a rule is
/// validated the ordinary way, and the text of each of its failures is
/// kept; a later record whose failures have all been met is written from
/// those texts. `tests/targets.rs` holds the two to the same bytes.
struct Copier {
    check: LineCheck,
    /// The valid record's text, or the failing record's input's.
    text: Vec<u8>,
    /// For a failing record, its failures' JSON texts, comma-separated.
    failures: Option<Vec<u8>>,
    /// For a failing record written from `failures`, the check's findings
    /// (each failure's rule and kind), which `route`'s report counts.
    found: Findings,
    /// Each failure met, by identity and where it was found
    /// (`LineCheck::found_at`): its JSON text.
    met: FxHashMap<(Rc<str>, u32), Box<str>>,
    /// The failures the check found in the line last handed to the
    /// ordinary path, to learn their texts from its result.
    pending: Vec<(Rc<str>, u32)>,
    /// Are failure records written (`route`), or dropped (`oks()`)?
    errs_wanted: bool,
}

impl Copier {
    /// A copier for `contract`, when the line check can vouch for its
    /// records as they are read (no defaults, no unique keys); with
    /// `errs_wanted`, it writes failure records too.
    fn new(
        contract: &Rc<Contract>,
        interp: &Interp,
        errs_wanted: bool,
    ) -> Option<Rc<RefCell<Copier>>> {
        let check = LineCheck::new(contract, interp).filter(LineCheck::keeps_records)?;
        Some(Rc::new(RefCell::new(Copier {
            check,
            text: Vec::new(),
            failures: None,
            found: Findings::default(),
            met: FxHashMap::default(),
            pending: Vec::new(),
            errs_wanted,
        })))
    }

    /// The line reader a JSON source offers each line to.
    fn hook(copier: &Rc<RefCell<Copier>>, interp: &Rc<Interp>) -> LineReader {
        let (copier, interp) = (copier.clone(), interp.clone());
        Box::new(move |line| copier.borrow_mut().copy(&interp, line))
    }

    /// Copy `line`: `Some(Value::Absent)` when its result is in `text`
    /// (and `failures`), `None` to have it decoded.
    fn copy(&mut self, interp: &Rc<Interp>, line: &[u8]) -> Option<Value> {
        self.text.clear();
        self.failures = None;
        self.pending.clear();
        match self.check.compact(interp, line, &mut self.text) {
            Verdict::Valid => return Some(Value::Absent),
            Verdict::Invalid if !self.errs_wanted => {
                // Dropped: no failure record is wanted.
                self.failures = Some(Vec::new());
                return Some(Value::Absent);
            }
            _ => {}
        }
        if !self.errs_wanted || !self.check.flat() {
            // Nested failures' paths hold list positions: not learnt.
            return None;
        }
        let found = self.check.findings(interp, line)?;
        if found.failures.is_empty() {
            // Valid with warnings: `ok`, built the ordinary way.
            return None;
        }
        if found
            .failures
            .iter()
            .any(|(_, kind)| *kind == crate::runtime::decide::FailureKind::Eval)
        {
            // Its message carries the error: never learnt, and the rule's
            // other failures must not stand for it.
            return None;
        }
        let keys: Vec<(Rc<str>, u32)> = (found.failures.iter())
            .zip(self.check.found_at())
            .map(|((rule, _), &at)| (rule.clone(), at))
            .collect();
        let mut failures = Vec::new();
        for key in &keys {
            let Some(text) = self.met.get(key) else {
                self.pending = keys;
                return None;
            };
            if !failures.is_empty() {
                failures.push(b',');
            }
            failures.extend_from_slice(text.as_bytes());
        }
        self.text.clear();
        if !write_compact(line, &mut self.text) {
            return None;
        }
        self.failures = Some(failures);
        self.found = found;
        Some(Value::Absent)
    }

    /// Keep the texts of the failures of `result`, the ordinary path's
    /// result for the line `copy` last left to it.
    fn learn(&mut self, result: &Value) {
        let pending = std::mem::take(&mut self.pending);
        let Value::Err(record) = result else {
            return;
        };
        let field = |v: &Value, name: &str| match v {
            Value::Record(r) => r.get(name).cloned(),
            _ => None,
        };
        let Some(Value::List(failures)) = field(record, "failures") else {
            return;
        };
        if failures.len() != pending.len() {
            return;
        }
        let text_of = |f: &Value, name: &str| field(f, name)?.as_str().map(str::to_string);
        let agree = (failures.iter().zip(&pending))
            .all(|(f, (rule, _))| text_of(f, "rule").as_deref() == Some(&**rule));
        if !agree {
            return;
        }
        for (failure, key) in failures.iter().zip(pending) {
            if text_of(failure, "kind").as_deref()
                != Some(crate::runtime::decide::FailureKind::Eval.name())
            {
                let mut text = String::new();
                write_json(&mut text, failure);
                self.met.insert(key, text.into());
            }
        }
    }
}
