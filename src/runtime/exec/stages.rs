//! Sources and stream stages (language.md §6, §6.1).
//!
//! Stages that pass records on (`validate`, `oks`, `map`, `filter`, …) return
//! a new lazy `Stream` wrapping their input, so a pipeline holds one record
//! at a time; stages that must see everything (`sort`, `count_by`, `report`)
//! consume their input and return a value.

use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::smallvec;

use super::planner::{self, Consumer, Path};
use crate::runtime::builtins::{Builtin, Format};
use crate::runtime::contract::{Contract, RecordShape};
use crate::runtime::decide::FailureKind;
use crate::runtime::eval::equality::{compare, sort_order, ValueKey};
use crate::runtime::eval::io::{
    listed, next_or_end, Boundary, DatabaseAt, DecodedRecords, Input, JsonInput, JsonText,
    LineReader, OptionError, PendingFile, Place, RecordWriter, SourceSpec, TargetSpec, Words,
};
use crate::runtime::eval::meter::Metered;
use crate::runtime::eval::ops;
use crate::runtime::eval::{
    Held, Interp, Item, Items, Origin, Plan, Result, RuntimeError, Step, Stream,
};
use crate::runtime::measures::Measures;
use crate::runtime::scan::LineCheck;
use crate::runtime::validate::{self, failure_rules, Uniques};
use crate::runtime::value::{Okay, Record, Value};
use crate::syntax::ast::Span;

/// The stages and validation the interpreter is handed (`eval::Engine`).
pub struct Stages;

/// The engine every interpreter runs with.
pub static ENGINE: Stages = Stages;

impl crate::runtime::eval::Engine for Stages {
    fn stage(
        &self,
        interp: &Rc<Interp>,
        b: Builtin,
        args: &[Value],
        span: Option<&Span>,
    ) -> Result<Option<Value>> {
        call_stage(interp, b, args, span)
    }

    fn force(&self, v: Value) -> Result<Value> {
        force(v)
    }

    fn construct(&self, interp: &Rc<Interp>, c: &Rc<Contract>, value: Value) -> Result<Value> {
        match validate::validate_value(interp, c, value, None, None)? {
            Value::Err(failure) => {
                let rule = validate::first_rule(&failure).unwrap_or_default();
                Err(RuntimeError::new(
                    "hql::construct",
                    format!("this {} breaks rule {rule}", c.name),
                ))
            }
            Value::Ok(ok) => Ok(ok.value.clone()),
            other => Ok(other),
        }
    }
}

/// Run `b` if it is a source or a stream stage; `None` otherwise. Errors a
/// stream meets later, as its items are read, point at `span`, the
/// stage's call, when it is known.
fn call_stage(
    interp: &Rc<Interp>,
    b: Builtin,
    args: &[Value],
    span: Option<&Span>,
) -> Result<Option<Value>> {
    let input = args.first().cloned().unwrap_or(Value::Null);
    let arg = args.get(1).cloned().unwrap_or(Value::Null);
    let at = span.cloned();
    let value = match b {
        Builtin::File => descriptor("file", input),
        Builtin::Stdin => descriptor("stdin", Value::Bool(true)),
        Builtin::Source => {
            let options = args.get(b.format_options_at()).unwrap_or(&Value::Null);
            source(interp, input, arg, options, at)?
        }
        Builtin::Validate => validate_stage(interp, input, arg, at)?,
        Builtin::Oks => {
            let plan = oks_plan(&input).or_else(|| staged(&input, b, None, &at));
            with_plan(filter_map(input, oks)?, plan)
        }
        Builtin::Errs => {
            let plan = staged(&input, b, None, &at);
            with_plan(without_contract(filter_map(input, errs)?), plan)
        }
        Builtin::Warnings => without_contract(flat(input, warnings)?),
        Builtin::Unwrap => lazy(input, move |items| {
            let at = at.clone();
            Box::new(items.map(move |i| i.and_then(|i| unwrap_item(i, at.as_ref()))))
        }),
        Builtin::Map => {
            let plan = staged(&input, b, Some(arg.clone()), &at);
            with_plan(without_contract(map(interp, input, arg, at)), plan)
        }
        Builtin::Filter => {
            let plan = staged(&input, b, Some(arg.clone()), &at);
            with_plan(filter(interp, input, arg, at), plan)
        }
        Builtin::FlatMap => without_contract(flat_map(interp, input, arg, at)),
        Builtin::Take => take_skip(input, &arg, true)?,
        Builtin::Skip => take_skip(input, &arg, false)?,
        Builtin::Distinct => distinct(input),
        Builtin::Write => write(
            interp,
            input,
            arg,
            args.get(2).cloned().unwrap_or(Value::Null),
            args.get(b.format_options_at()).unwrap_or(&Value::Null),
        )?,
        Builtin::Route => super::route::route(
            interp,
            input,
            arg,
            args.get(2).cloned().unwrap_or(Value::Null),
        )?,
        Builtin::Param | Builtin::Env => setting(interp, b, &input, args.get(1))?,
        Builtin::Report
        | Builtin::Count
        | Builtin::Sum
        | Builtin::Min
        | Builtin::Max
        | Builtin::Avg
        | Builtin::First
        | Builtin::All
        | Builtin::Any
        | Builtin::Sort
        | Builtin::SortBy
        | Builtin::CountBy
        | Builtin::GroupBy
        | Builtin::Collect => consume(interp, b, input, arg)?,
        _ => return Ok(None),
    };
    Ok(Some(value))
}

/// The plan of a stream value, if any.
pub(super) fn plan_of(v: &Value) -> Option<Plan> {
    match v {
        Value::Stream(s) => s.plan().cloned(),
        _ => None,
    }
}

fn with_plan(v: Value, plan: Option<Plan>) -> Value {
    match plan {
        Some(plan) => restream(v, |s| s.with_plan(Some(plan))),
        None => v,
    }
}

/// A stream a stage just made, changed before anyone else holds it.
fn restream(v: Value, change: impl FnOnce(Stream) -> Stream) -> Value {
    match v {
        Value::Stream(s) => match Rc::try_unwrap(s) {
            Ok(s) => Value::Stream(Rc::new(change(s))),
            Err(s) => Value::Stream(s),
        },
        v => v,
    }
}

/// `validate(T) | oks()` keeps the plan, marked as keeping oks only.
fn oks_plan(input: &Value) -> Option<Plan> {
    match plan_of(input)? {
        Plan::Validated {
            source,
            contract,
            oks: false,
            at,
            interp,
        } => Some(Plan::Validated {
            source,
            contract,
            oks: true,
            at,
            interp,
        }),
        _ => None,
    }
}

/// The plan of a validated source with one more stage after it.
fn staged(input: &Value, stage: Builtin, func: Option<Value>, at: &Option<Span>) -> Option<Plan> {
    let step = Step {
        stage,
        func,
        at: at.clone(),
    };
    let mut staged = plan_of(input)?.staged()?;
    staged.steps.push(step);
    Some(Plan::Staged(Rc::new(staged)))
}

/// `input` through one stage.
pub(super) fn run_step(interp: &Rc<Interp>, input: Value, step: &Step) -> Result<Value> {
    let mut args = vec![input];
    args.extend(step.func.clone());
    Ok(call_stage(interp, step.stage, &args, step.at.as_ref())?.unwrap_or(Value::Null))
}

/// A stream of `items`, which can be read once.
pub(super) fn read_once(items: Items) -> Value {
    let items = std::cell::RefCell::new(Some(items));
    Value::Stream(Rc::new(Stream::new(move || {
        items
            .borrow_mut()
            .take()
            .ok_or_else(|| RuntimeError::new("hql::parallel", "a chunk was read twice"))
    })))
}

/// A chunk of a JSON Lines file: the framing of its format, the name of
/// its source, its bytes, and the number of its first line.
pub(super) struct Chunk {
    pub framing: &'static dyn JsonText,
    pub name: Rc<str>,
    pub input: JsonInput,
    pub first_line: u64,
}

/// The lines of a chunk, validated against `contract` as one thread
/// validates the whole file: read with the line check where it builds
/// records.
pub(super) fn validated_chunk(
    interp: &Rc<Interp>,
    contract: &Rc<Contract>,
    chunk: Chunk,
    at: Option<Span>,
    keys: KeyWork,
) -> Items {
    let hook = LineCheck::building(contract, interp).map(|mut check| {
        let hook_interp = interp.clone();
        Box::new(move |line: &[u8]| check.validated(&hook_interp, line)) as LineReader
    });
    let lines = (chunk.framing).items(chunk.input, chunk.name, chunk.first_line - 1, hook);
    validated_items(interp, contract, lines, at, keys)
}

/// The framing of a format whose records are JSON texts: the paths that
/// read a file's lines by their bytes are planned only for such a format
/// (`counting::json_file`).
pub(crate) fn framing(interp: &Interp, format: Format) -> Result<&'static dyn JsonText> {
    interp.codec(format).json_text().ok_or_else(|| {
        RuntimeError::new(
            "hql::format",
            format!("{} records are not JSON texts", format.name()),
        )
    })
}

/// Items of a source validated against `contract`, as `validate` does.
/// (Neither this nor `validated_chunk` shows them to the progress meter:
/// a chunk's records are shown once they are settled, `staged`.)
pub(super) fn validated_items(
    interp: &Rc<Interp>,
    contract: &Rc<Contract>,
    items: Items,
    at: Option<Span>,
    keys: KeyWork,
) -> Items {
    validated(interp, contract, Upstream::Checked(items), at, keys, None)
}

/// Where `validate` takes step 6 of §4.8, the unique keys.
pub(super) enum KeyWork {
    /// Here, in the order of the records, against the keys claimed in
    /// this set so far.
    Claimed(Rc<RefCell<Uniques>>),
    /// Later: a record valid but for its keys stays `ok` (its warnings
    /// checked), and its value and origin are handed to this, for its keys
    /// to be settled in the order of the file (a worker's chunk, `staged`).
    Deferred(Defer),
}

/// What is done with a record whose keys are left to settle: its value
/// and origin.
pub(super) type Defer = Box<dyn FnMut(&Value, Option<&Origin>)>;

impl KeyWork {
    /// Keys claimed here, from none.
    pub(super) fn claimed() -> KeyWork {
        KeyWork::Claimed(Rc::default())
    }
}

/// Stages that read their whole input and give one value.
fn consume(interp: &Rc<Interp>, b: Builtin, input: Value, arg: Value) -> Result<Value> {
    if let Some(consumer @ (Consumer::Count | Consumer::Report)) = Consumer::of(b) {
        match planner::plan(interp, consumer, &input, None).path {
            Path::Counting(route) => {
                let plan = plan_of(&input);
                // `None`: the file did not open, which the ordinary path reports.
                if let Some(v) =
                    crate::runtime::exec::counting::consume(interp, b, plan.as_ref(), route)?
                {
                    return Ok(v);
                }
            }
            Path::Spread(spread) => {
                return match consumer {
                    Consumer::Count => super::staged::count(*spread),
                    _ => super::staged::report(*spread),
                };
            }
            _ => {}
        }
    }
    let items = || items(&input);
    match b {
        Builtin::Report => report(interp, items()?),
        Builtin::Count => items()?
            .try_fold(0i64, |n, i| i.map(|_| n + 1))
            .map(Value::Int),
        Builtin::Sum => fold_numbers(items()?, Value::Int(0), |a, b| {
            ops::binary(crate::syntax::ast::BinOp::Add, &a, &b)
        }),
        Builtin::Min => extreme(items()?, std::cmp::Ordering::Less),
        Builtin::Max => extreme(items()?, std::cmp::Ordering::Greater),
        Builtin::Avg => avg(items()?),
        Builtin::First => Ok(items()?
            .next()
            .transpose()?
            .map(kept)
            .unwrap_or(Value::Null)),
        Builtin::All => quantify(interp, items()?, &arg, false),
        Builtin::Any => quantify(interp, items()?, &arg, true),
        Builtin::Sort => sorted(collect_kept(items()?)?, |_| Ok(None)),
        Builtin::SortBy => sorted(collect_kept(items()?)?, |v| {
            interp.call(&arg, smallvec![v.clone()]).map(Some)
        }),
        Builtin::CountBy => count_by(interp, items()?, &arg),
        Builtin::GroupBy => group_by(interp, items()?, &arg),
        _ => Ok(Value::list(collect_kept(items()?)?)),
    }
}

/// The elements of a stream or a list (whose records may know their
/// origin: see `kept`).
pub fn items(v: &Value) -> Result<Items> {
    match v {
        Value::Stream(s) => s.open(),
        Value::List(list) => {
            let list = list.clone();
            // A signal stops a pass over collected data as it stops a
            // source being read.
            Ok(Box::new((0..list.len()).map(move |i| {
                crate::runtime::eval::check_interrupt()?;
                let value = list[i].clone();
                Ok(Item {
                    origin: origin_of(&value),
                    value,
                })
            })))
        }
        other => Err(RuntimeError::new(
            "hql::type",
            format!(
                "expected a stream or a list, found {}",
                other.kind_article()
            ),
        )),
    }
}

fn collect(items: Items) -> Result<Vec<Value>> {
    items.map(|i| i.map(|i| i.value)).collect()
}

/// The values of items that leave the stream unchanged, for a list or a
/// single result: each keeps its origin (`kept`).
fn collect_kept(items: Items) -> Result<Vec<Value>> {
    items.map(|i| i.map(kept)).collect()
}

/// An item's value, its record (or the record of its `ok`) carrying the
/// item's origin (language.md §4.9: stages that pass values through keep
/// it). Records fresh from a source are held once, so this writes into
/// them; a shared one is copied.
pub fn kept(item: Item) -> Value {
    let Some(origin) = item.origin else {
        return item.value;
    };
    match item.value {
        Value::Record(mut r) => {
            if r.origin() != Some(&origin) {
                Rc::make_mut(&mut r).set_origin(Some(origin));
            }
            Value::Record(r)
        }
        Value::Ok(mut ok) if matches!(ok.value, Value::Record(_)) => match Rc::get_mut(&mut ok) {
            Some(okay) => {
                let value = std::mem::replace(&mut okay.value, Value::Null);
                okay.value = kept(Item {
                    value,
                    origin: Some(origin),
                });
                Value::Ok(ok)
            }
            None => {
                let value = kept(Item {
                    value: ok.value.clone(),
                    origin: Some(origin),
                });
                Value::Ok(Rc::new(Okay {
                    value,
                    warnings: ok.warnings.clone(),
                }))
            }
        },
        v => v,
    }
}

/// The origin a value carries (`kept`), if any.
pub fn origin_of(v: &Value) -> Option<Origin> {
    match v {
        Value::Record(r) => r.origin().cloned(),
        Value::Ok(ok) => origin_of(&ok.value),
        _ => None,
    }
}

/// Streams (also inside lists and records) made into lists, for printing.
pub fn force(v: Value) -> Result<Value> {
    match v {
        Value::Stream(s) => {
            let values = collect(s.open()?)?;
            Ok(Value::list(
                values.into_iter().map(force).collect::<Result<_>>()?,
            ))
        }
        Value::List(items) if items.iter().any(needs_force) => Ok(Value::list(
            items.iter().cloned().map(force).collect::<Result<_>>()?,
        )),
        Value::Record(r) if r.values().any(needs_force) => {
            let forced = r
                .iter()
                .map(|(k, v)| Ok((k.clone(), force(v.clone())?)))
                .collect::<Result<Record>>()?;
            Ok(Value::record(forced))
        }
        v => Ok(v),
    }
}

fn needs_force(v: &Value) -> bool {
    match v {
        Value::Stream(_) => true,
        Value::List(items) => items.iter().any(needs_force),
        Value::Record(r) => r.values().any(needs_force),
        _ => false,
    }
}

fn descriptor(key: &str, v: Value) -> Value {
    let mut r = Record::default();
    r.insert(key.into(), v);
    Value::record(r)
}

/// A stage that wraps its input's items; the records it passes on keep
/// the contract they were validated against.
fn lazy(input: Value, wrap: impl Fn(Items) -> Items + 'static) -> Value {
    let contract = contract_of(&input);
    Value::Stream(Rc::new(
        Stream::new(move || Ok(wrap(items(&input)?))).with_contract(contract),
    ))
}

/// The contract a stream's records were validated against, if known.
pub(super) fn contract_of(v: &Value) -> Option<Rc<Contract>> {
    match v {
        Value::Stream(s) => s.contract().cloned(),
        _ => None,
    }
}

/// A stage that makes new values, which no contract describes.
fn without_contract(v: Value) -> Value {
    restream(v, |s| s.with_contract(None))
}

// ------------------------------------------------------------------- sources

fn source(
    interp: &Rc<Interp>,
    desc: Value,
    format: Value,
    options: &Value,
    at: Option<Span>,
) -> Result<Value> {
    let mut spec = source_spec(interp, &desc, &format)?;
    with_options(&mut spec.boundary, spec.format, true, options, &desc)?;
    interp.sniff(&spec);
    let spec = Rc::new(spec);
    let plan = Plan::Source(spec.clone());
    let interp = interp.clone();
    Ok(Value::Stream(Rc::new(
        Stream::new(move || {
            let records = interp
                .open_source(&spec, None)
                .map_err(|e| e.at_some(at.as_ref()))?;
            Ok(decoded_items(records))
        })
        .with_plan(Some(plan)),
    )))
}

/// A source's or target's format options, as the program's named
/// arguments give them (`Value::Null`: none); a configured one takes its
/// options from `hql.toml`.
fn with_options(
    boundary: &mut Boundary,
    format: Format,
    reading: bool,
    options: &Value,
    place: &Value,
) -> Result<()> {
    if matches!(options, Value::Null) {
        return Ok(());
    }
    if let Some(id) = place.as_str() {
        let section = if reading { "sources" } else { "targets" };
        let table = format.name().to_ascii_lowercase();
        return Err(RuntimeError::new(
            "hql::format_option",
            format!("`{id}` is configured: its format options are set in hql.toml"),
        )
        .with_help(format!(
            "set them in `[{section}.{id}]`: `{table} = {{ … }}`"
        )));
    }
    (boundary.set_options(format, reading, options)).map_err(OptionError::into_runtime)
}

/// What `source(desc, format)` reads: a file or standard input in a
/// format, or a source configured by id.
fn source_spec(interp: &Interp, desc: &Value, format: &Value) -> Result<SourceSpec> {
    if let Some(id) = desc.as_str() {
        if !matches!(format, Value::Null) {
            return Err(RuntimeError::new(
                "hql::source",
                format!("source `{id}` is configured: its format is set in hql.toml"),
            )
            .with_help(format!("write `source({id:?})`")));
        }
        return interp.host.configured_source(id);
    }
    let (name, place) = match desc {
        Value::Record(r) if r.contains_key("stdin") => ("<stdin>".to_string(), Place::Stdin),
        Value::Record(r) => match r.get("file").and_then(Value::as_str) {
            Some(p) => (p.to_string(), Place::File(p.to_string())),
            None => return Err(not_a_source(desc)),
        },
        _ => return Err(not_a_source(desc)),
    };
    let format = match format {
        Value::Format(f) => *f,
        Value::Null => {
            return Err(RuntimeError::new(
                "hql::format",
                format!("`source` of {name} needs a format"),
            )
            .with_help(format!(
                "add the format: {}",
                interp.formats().names_listed(|n| format!("`, {n}`"), "or")
            )))
        }
        other => {
            return Err(RuntimeError::new(
                "hql::format",
                format!("{} is not a format", other.kind_article()),
            )
            .with_help(format!(
                "the formats are {}",
                interp.formats().names_listed(|n| format!("`{n}`"), "and")
            )))
        }
    };
    Ok(SourceSpec::new(&name, place, format))
}

impl Interp {
    /// The records of a source, read by its format's codec; with a
    /// `shape`, text cells convert to the contract's types.
    pub fn open_source(
        &self,
        spec: &SourceSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Result<DecodedRecords> {
        let input = self.open_input(spec)?;
        let records = self.codec(spec.format).read(input, spec, shape)?;
        Ok(self.counted(records))
    }

    /// Tell the user what a source's first bytes suggest where they look
    /// like another format or dialect (`Codec::sniff`), as a warning with
    /// its help. Only a regular file is peeked at: a FIFO or standard
    /// input can be read only once.
    pub fn sniff(&self, spec: &SourceSpec) {
        const PEEK: u64 = 64 << 10;
        let Place::File(path) = &spec.place else {
            return;
        };
        let codec = self.codec(spec.format);
        let regular = self.host.file_len(path).is_some() || self.host.compression(path).is_some();
        if codec.reads_files() || !regular || !self.first_look(&spec.name) {
            return;
        }
        let Ok(reader) = self.host.open_file(path) else {
            return;
        };
        let mut first = Vec::new();
        if std::io::Read::read_to_end(&mut std::io::Read::take(reader, PEEK + 1), &mut first)
            .is_err()
        {
            return;
        }
        let complete = first.len() as u64 <= PEEK;
        first.truncate(PEEK as usize);
        if let Some(hint) = codec.sniff(spec, &first, complete) {
            // A configured source's options are hql.toml's, whoever names it.
            let words = if spec.path() != Some(&*spec.name) {
                Words::Config
            } else if self.sources_by_flags() {
                Words::Flags
            } else {
                Words::Program
            };
            let help = hint.help(spec, spec.format.name(), words);
            (self.host).warn(&format!(
                "warning: {}: {}\n  help: {help}",
                spec.name, hint.seen
            ));
        }
    }

    /// What the codec of `spec` reads: the bytes of its file or of standard
    /// input (metered), its file to read at any offset for a format that
    /// reads whole files, or its database, readied.
    pub fn open_input<'a>(&self, spec: &'a SourceSpec) -> Result<Input<'a>> {
        let configured = |p: &str, e: std::io::Error| {
            match *spec.name != *p {
            true => cannot_read(p, &e).with_help(format!(
                "source `{}` is configured in hql.toml; its paths are relative to that file's folder",
                spec.name
            )),
            false => cannot_read(p, &e),
        }
        };
        let whole = self.codec(spec.format).reads_files();
        let input = match &spec.place {
            Place::File(p) if whole => {
                let file = self.host.open_seekable(p).map_err(|e| configured(p, e))?;
                if let Some(meter) = self.meter() {
                    meter.start_source(None);
                }
                return Ok(Input::File(file));
            }
            Place::Stdin if whole => {
                let name = spec.format.name();
                return Err(RuntimeError::new(
                    "hql::io",
                    format!("{name} cannot be read from standard input: it is read from a file, its end first"),
                )
                .with_help(format!(
                    "save the data to a file and read that: `source(file(\"data.{}\"), {name})`",
                    spec.format.def().extensions.first().copied().unwrap_or("dat")
                )));
            }
            Place::File(p) => self.host.open_file(p).map_err(|e| configured(p, e))?,
            Place::Stdin => self.take_stdin()?,
            Place::Database(database) => {
                if let DatabaseAt::File(path) = &database.at {
                    self.host.ready_database(&spec.name, path)?;
                }
                if let Some(meter) = self.meter() {
                    meter.start_source(None);
                }
                return Ok(Input::Database(database));
            }
        };
        Ok(Input::Bytes(self.metered(input, spec.path())))
    }

    /// A source's records, counted on the meter when the run is watched.
    fn counted(&self, records: DecodedRecords) -> DecodedRecords {
        match self.meter() {
            Some(meter) => Box::new(Counted {
                records,
                meter: meter.clone(),
            }),
            None => records,
        }
    }

    /// A source's reader, its bytes counted into the meter when the run is
    /// watched.
    pub fn metered(
        &self,
        reader: Box<dyn std::io::BufRead>,
        path: Option<&str>,
    ) -> Box<dyn std::io::BufRead> {
        let Some(meter) = self.meter() else {
            return reader;
        };
        meter.start_source(path.and_then(|p| self.host.file_len(p)));
        Box::new(Metered::new(reader, meter.clone()))
    }
}

/// A source's records, counted on the meter as they are read.
struct Counted {
    records: DecodedRecords,
    meter: std::sync::Arc<crate::runtime::eval::meter::Meter>,
}

impl Iterator for Counted {
    type Item = Result<crate::runtime::eval::io::Decoded>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = self.records.next();
        if next.is_some() {
            self.meter.read_records(1);
        }
        next
    }
}

impl crate::runtime::eval::io::RecordSource for Counted {
    fn received(&self) -> Option<Value> {
        self.records.received()
    }

    fn end(&mut self) -> Result<()> {
        self.records.end()
    }
}

/// A source's records as stream items.
/// A source's records as stream items, its end-of-stream hook run once
/// when they run out.
fn decoded_items(mut records: DecodedRecords) -> Items {
    let mut ended = false;
    Box::new(std::iter::from_fn(move || {
        let d = next_or_end(&mut *records, &mut ended)?;
        Some(d.map(|d| Item {
            value: d.value,
            origin: Some(d.origin),
        }))
    }))
}

/// A source file that could not be opened.
pub fn cannot_read(path: &str, e: &std::io::Error) -> RuntimeError {
    if let Some(error) = crate::runtime::eval::io::unreadable(path, e) {
        return error;
    }
    RuntimeError::new("hql::io", format!("cannot read {path}: {e}"))
        .with_help("paths are relative to the directory `hql` runs in")
}

fn not_a_source(v: &Value) -> RuntimeError {
    RuntimeError::new(
        "hql::source",
        format!("cannot read from {}", v.kind_article()),
    )
    .with_help(
        "write `source(file(\"path.jsonl\"), Json)`, `source(stdin(), Json)` or `source(\"id\")`",
    )
}

// ---------------------------------------------------------------- validation

fn validate_stage(interp: &Rc<Interp>, input: Value, ty: Value, at: Option<Span>) -> Result<Value> {
    let Value::Type(contract) = ty else {
        return Err(
            RuntimeError::new("hql::type", "`validate` takes a type name")
                .with_help("write `validate(T)`"),
        );
    };
    if !matches!(input, Value::Stream(_) | Value::List(_)) {
        let origin = origin_of(&input);
        return validate::validate_value(interp, &contract, input, origin.as_ref(), None);
    }
    let source = match plan_of(&input) {
        Some(Plan::Source(source)) => Some(source),
        _ => None,
    };
    let plan = source.clone().map(|source| Plan::Validated {
        source,
        contract: contract.clone(),
        oks: false,
        at: at.clone(),
        interp: Rc::downgrade(interp),
    });
    let interp = interp.clone();
    let shape = contract.clone();
    Ok(Value::Stream(Rc::new(
        Stream::new(move || {
            let upstream = match &source {
                Some(source) => read_source_for(&interp, source, &contract),
                None => items(&input).map(Upstream::Items),
            };
            let upstream = upstream.map_err(|e| e.at_some(at.as_ref()))?;
            let tally = Measures::of(&interp, &contract).map_err(|e| e.at_some(at.as_ref()))?;
            let tally = tally.map(|t| Rc::new(RefCell::new(Some(t))));
            let keys = KeyWork::claimed();
            let items = validated(
                &interp,
                &contract,
                upstream,
                at.clone(),
                keys,
                tally.clone(),
            );
            let items = match tally {
                Some(tally) => tallied(&interp, items, tally),
                None => items,
            };
            Ok(metered(&interp, items))
        })
        .with_plan(plan)
        .with_contract(Some(shape)),
    )))
}

/// What `validate` reads: records of a source read together with it, or
/// any other stream's items.
enum Upstream {
    /// A JSON file read by the line check: its valid records come already
    /// validated (a decoded line is never an `ok`).
    Checked(Items),
    /// A source whose format converts by the contract: failure records
    /// show each record as received.
    Converted(DecodedRecords),
    Items(Items),
}

fn read_source_for(
    interp: &Rc<Interp>,
    source: &SourceSpec,
    contract: &Rc<Contract>,
) -> Result<Upstream> {
    // A contract that fills defaults changes records, so the check could
    // not build them: the line is decoded then.
    let check = LineCheck::building(contract, interp);
    if let (Some(path), Some(check)) = (
        crate::runtime::exec::counting::json_file(interp, source),
        check,
    ) {
        return Ok(Upstream::Checked(read_validated(
            interp, source, &path, check,
        )?));
    }
    if interp.codec(source.format).reads_by_shape() {
        return Ok(Upstream::Converted(
            interp.open_source(source, Some(contract))?,
        ));
    }
    Ok(Upstream::Items(decoded_items(
        interp.open_source(source, None)?,
    )))
}

fn validated(
    interp: &Rc<Interp>,
    contract: &Rc<Contract>,
    upstream: Upstream,
    at: Option<Span>,
    mut keys: KeyWork,
    tally: Option<Shared>,
) -> Items {
    let interp = interp.clone();
    let contract = contract.clone();
    let keyed = contract.record().is_some_and(|r| !r.uniques.is_empty());
    // Each record as received is counted with its result for the
    // contract's expectations: a failure budget spent stops the reading.
    let observe = move |input: &Value, item: &Item| -> Result<()> {
        let Some(tally) = &tally else {
            return Ok(());
        };
        let mut tally = tally.borrow_mut();
        let Some(t) = tally.as_mut() else {
            return Ok(());
        };
        t.observe(input, &item.value).map_err(|e| {
            *tally = None;
            e.from_record(&item.origin)
        })
    };
    let counts = observe.clone();
    // `checked`: the value is `ok` of a record the line check found valid,
    // whose unique keys are still to claim.
    let mut check = move |value: Value, origin: Option<Origin>, checked: bool| -> Result<Item> {
        let (interp, contract, at_record) = (&interp, &contract, origin.as_ref());
        let input = value.clone();
        let value = match &mut keys {
            KeyWork::Claimed(uniques) => {
                let uniques = &mut uniques.borrow_mut();
                if checked {
                    validate::claim_keys(interp, contract, value, at_record, uniques)
                } else {
                    validate::validate_value(interp, contract, value, at_record, Some(uniques))
                }
            }
            KeyWork::Deferred(defer) => {
                let result = match checked {
                    true => Ok(value),
                    false => validate::validate_value(interp, contract, value, at_record, None),
                };
                if let Ok(Value::Ok(ok)) = &result {
                    defer(&ok.value, at_record);
                }
                result
            }
        }
        .map_err(|e| e.from_record(&origin).at_some(at.as_ref()))?;
        let item = Item { value, origin };
        observe(&input, &item)?;
        Ok(item)
    };

    let items: Items = match upstream {
        Upstream::Checked(items) => Box::new(items.map(move |item| {
            let item = item?;
            let checked = matches!(item.value, Value::Ok(_));
            if checked && !keyed {
                counts(&item.value, &item)?;
                return Ok(item);
            }
            check(item.value, item.origin, checked)
        })),
        Upstream::Converted(mut records) => {
            let mut ended = false;
            Box::new(std::iter::from_fn(move || {
                let d = match next_or_end(&mut *records, &mut ended)? {
                    Ok(d) => d,
                    Err(e) => return Some(Err(e)),
                };
                let mut item = match check(d.value, Some(d.origin), false) {
                    Ok(item) => item,
                    Err(e) => return Some(Err(e)),
                };
                if let Value::Err(failure) = &item.value {
                    if let Some(received) = records.received() {
                        item.value = Value::err(validate::with_input(failure, received));
                    }
                }
                Some(Ok(item))
            }))
        }
        Upstream::Items(items) => Box::new(items.map(move |item| {
            let item = item?;
            check(item.value, item.origin, false)
        })),
    };
    items
}

/// `items`, results of `validate`, counted for the contract's
/// expectations as they pass, and the expectations judged once the last
/// has passed (never when reading stops early). `validated` counted each
/// with the record as received; this judges them at the end.
fn tallied(interp: &Rc<Interp>, mut items: Items, tally: Shared) -> Items {
    let interp = interp.clone();
    Box::new(std::iter::from_fn(move || {
        let next = items.next();
        if next.is_none() {
            if let Some(tally) = tally.borrow_mut().take() {
                tally.end(&interp);
            }
        }
        next
    }))
}

/// The tally `validated` counts into and `tallied` judges.
type Shared = Rc<RefCell<Option<Measures>>>;

/// `items`, results of `validate`, shown to the progress meter as they
/// pass.
fn metered(interp: &Interp, items: Items) -> Items {
    let Some(meter) = interp.meter().cloned() else {
        return items;
    };
    Box::new(items.inspect(move |item| {
        if let Ok(item) = item {
            let ok = !matches!(item.value, Value::Err(_));
            meter.judged(u64::from(ok), u64::from(!ok));
        }
    }))
}

/// `source(file(path), Json) | validate(T)` read as one: each JSON line
/// goes through `check`, which builds `ok` of a valid record as it reads
/// it; any other line is decoded as `source` decodes it, for `validate`.
fn read_validated(
    interp: &Rc<Interp>,
    spec: &SourceSpec,
    path: &str,
    mut check: LineCheck,
) -> Result<Items> {
    let hook_interp = interp.clone();
    checked_lines(
        interp,
        spec,
        path,
        Box::new(move |line| check.validated(&hook_interp, line)),
    )
}

/// The lines of a JSON file, each offered to `hook` before it is decoded
/// (`JsonText::items`), as stream items counted on the meter.
pub(super) fn checked_lines(
    interp: &Interp,
    spec: &SourceSpec,
    path: &str,
    hook: LineReader,
) -> Result<Items> {
    let framing = framing(interp, spec.format)?;
    let reader = interp
        .host
        .open_file(path)
        .map_err(|e| cannot_read(path, &e))?;
    let input = JsonInput::Whole(interp.metered(reader, Some(path)));
    let items = framing.items(input, spec.name.clone(), 0, Some(hook));
    Ok(match interp.meter().cloned() {
        Some(meter) => Box::new(items.inspect(move |_| meter.read_records(1))),
        None => items,
    })
}

// ------------------------------------------------------------------- writing

/// `write(target)` / `write(file(path), Format)`: the number of records written.
fn write(
    interp: &Rc<Interp>,
    input: Value,
    target: Value,
    format: Value,
    options: &Value,
) -> Result<Value> {
    let mut spec = target_spec(interp, &target, &format)?;
    with_options(&mut spec.boundary, spec.format, false, options, &target)?;
    if spec.table.is_some() {
        return super::tables::write_table(interp, input, &spec);
    }
    let shape = contract_of(&input);
    let written = match planner::plan(interp, Consumer::Write, &input, Some(&spec)).path {
        Path::Copier(plan) => Some(super::route::write_valid(
            interp,
            *plan,
            &spec,
            shape.as_ref(),
        )),
        Path::Spread(spread) => super::staged::write(interp, *spread, &spec, shape.as_ref()),
        _ => None,
    };
    if let Some(written) = written {
        return written;
    }
    let mut sink = Target::open(interp, spec, shape.as_ref())?;
    for item in items(&input)? {
        let item = item?;
        if matches!(item.value, Value::Ok(_) | Value::Err(_)) {
            return Err(write_of_results().from_record(&item.origin));
        }
        sink.put(&item.value)
            .map_err(|e| e.from_record(&item.origin))?;
    }
    Ok(Value::Int(sink.close(interp)?))
}

pub(super) fn write_of_results() -> RuntimeError {
    RuntimeError::new("hql::write_results", "`write` takes values, not results")
        .with_help(crate::runtime::builtins::WRITE_RESULTS_HELP)
}

/// Where `write` or `route` sends records: a file (its format given or
/// from its extension) or a target configured by id.
pub(super) fn target_spec(interp: &Interp, target: &Value, format: &Value) -> Result<TargetSpec> {
    if let Some(id) = target.as_str() {
        return interp.host.configured_target(id);
    }
    let path = match target {
        Value::Record(r) => r.get("file").and_then(Value::as_str),
        _ => None,
    };
    let Some(path) = path else {
        return Err(RuntimeError::new(
            "hql::target",
            format!("cannot write to {}", target.kind_article()),
        )
        .with_help(
            "write to `file(\"path.jsonl\")` or to a target configured in hql.toml by its id",
        ));
    };
    let formats = interp.formats();
    let format = match format {
        Value::Format(f) => Some(*f),
        _ => formats.of_path(path),
    };
    format.map(|f| TargetSpec::file(path, f)).ok_or_else(|| {
        let mut names = formats.in_programs().map(|f| f.name());
        let first = names.next().unwrap_or_default();
        let others: Vec<String> = names.map(|n| format!("`{n}`")).collect();
        let others = match others.is_empty() {
            true => String::new(),
            false => format!(" (or {})", listed(others, "or")),
        };
        RuntimeError::new(
            "hql::format",
            format!("cannot tell the format of {path} from its extension"),
        )
        .with_help(format!("name it: `write(file({path:?}), {first})`{others}"))
    })
}

/// A target being written: records encoded by its format's writer into
/// the host's pending file. Dropped before it is finished, it is abandoned.
pub struct Target {
    file: Option<Box<dyn PendingFile>>,
    writer: Option<Box<dyn RecordWriter>>,
    written: i64,
    path: String,
    key: String,
    format: Format,
}

impl Target {
    /// Open a target for a statement: the run's own output to that file
    /// when an earlier `write` or `route` of the run wrote it (what this
    /// one writes is added after it), else a new temporary.
    pub fn open(interp: &Interp, spec: TargetSpec, shape: Option<&Rc<Contract>>) -> Result<Target> {
        let cannot = |e: std::io::Error| {
            RuntimeError::new("hql::io", format!("cannot write {}: {e}", spec.path))
                .with_help("the target's folder must exist and be writable")
        };
        let key = interp.host.target_key(&spec.path).map_err(cannot)?;
        if let Some(held) = interp.take_held(&key) {
            if held.format != spec.format {
                return Err(RuntimeError::new(
                    "hql::io",
                    format!(
                        "{} is written twice in this run, as {} and as {}",
                        spec.path,
                        held.format.name(),
                        spec.format.name()
                    ),
                )
                .with_help(
                    "a target has one format: write it with one format, or write two files",
                ));
            }
            return Ok(Target::from_held(held));
        }
        let codec = interp.codec(spec.format);
        codec.check_target(&spec, shape)?;
        let writer = codec.writer(&spec, shape).ok_or_else(|| {
            RuntimeError::new(
                "hql::format",
                format!(
                    "{} is not written as a file of {}",
                    spec.path,
                    spec.format.name()
                ),
            )
        })?;
        let file = interp.host.create_file(&spec.path).map_err(cannot)?;
        Ok(Target {
            file: Some(file),
            writer: Some(writer),
            written: 0,
            path: spec.path,
            key,
            format: spec.format,
        })
    }

    fn from_held(held: Held) -> Target {
        Target {
            file: Some(held.file),
            writer: Some(held.writer),
            written: 0,
            path: held.path,
            key: held.key,
            format: held.format,
        }
    }

    /// A writer's error over the bytes, with the target named.
    fn failed(&self, e: RuntimeError) -> RuntimeError {
        match e.code {
            crate::runtime::eval::io::WRITE_FAILED => RuntimeError {
                message: format!("cannot write {}: {}", self.path, e.message),
                ..e
            },
            _ => e,
        }
    }

    /// A record given as its compact JSON text (the target is JSON).
    pub(super) fn put_text(&mut self, text: &[u8]) -> Result<()> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let writer = self
            .writer
            .as_deref_mut()
            .expect("an open target has its writer");
        match writer.write_json_text(file, text) {
            Ok(written) => self.written += i64::from(written),
            Err(e) => return Err(self.failed(e)),
        }
        Ok(())
    }

    /// `n` records given as their compact JSON texts, each followed by a
    /// newline; `false` (nothing written) where the format frames records
    /// otherwise, for the caller to give them one at a time.
    pub(super) fn put_lines(&mut self, text: &[u8], n: u64) -> Result<bool> {
        let Some(file) = self.file.as_mut() else {
            return Ok(true);
        };
        let writer = self
            .writer
            .as_deref_mut()
            .expect("an open target has its writer");
        match writer.write_json_lines(file, text, n) {
            Ok(true) => self.written += n as i64,
            Ok(false) => return Ok(false),
            Err(e) => return Err(self.failed(e)),
        }
        Ok(true)
    }

    pub fn put(&mut self, record: &Value) -> Result<()> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let record = force(record.clone())?;
        let writer = self
            .writer
            .as_deref_mut()
            .expect("an open target has its writer");
        if let Err(e) = writer.write(file, &record) {
            return Err(self.failed(e));
        }
        self.written += 1;
        Ok(())
    }

    /// Hand the output to the run, which finishes and commits it when it
    /// ends (or gives it to a later statement writing the same target);
    /// the number of records this statement wrote.
    pub fn close(mut self, interp: &Interp) -> Result<i64> {
        if let (Some(file), Some(writer)) = (self.file.as_mut(), self.writer.as_deref_mut()) {
            if let Err(e) = writer.settle(file) {
                return Err(self.failed(e));
            }
        }
        if let (Some(file), Some(writer)) = (self.file.take(), self.writer.take()) {
            interp.hold(Held {
                key: std::mem::take(&mut self.key),
                path: self.path.clone(),
                format: self.format,
                writer,
                file,
            });
        }
        Ok(self.written)
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            file.abandon();
        }
    }
}

// ---------------------------------------------------------------- parameters

/// `param("name")`, `env("VAR")`: the host's value, else the fallback, else
/// an error naming what is missing.
fn setting(interp: &Interp, b: Builtin, name: &Value, fallback: Option<&Value>) -> Result<Value> {
    let Some(key) = name.as_str() else {
        return Err(crate::runtime::eval::funcs::expected(
            b.name(),
            "a String",
            name,
        ));
    };
    let found = match b {
        Builtin::Param => interp.host.param(key),
        _ => interp.host.env(key)?,
    };
    match (found, fallback) {
        (Some(v), _) => Ok(Value::str(v)),
        (None, Some(v)) => Ok(v.clone()),
        (None, None) if b == Builtin::Param => Err(RuntimeError::new(
            "hql::param",
            format!("parameter `{key}` is not set"),
        )
        .with_help(format!(
            "pass `--set {key}=VALUE`, or give a fallback: `param({key:?}, \"…\")`"
        ))),
        (None, None) => Err(RuntimeError::new(
            "hql::env",
            format!("environment variable `{key}` is not set"),
        )
        .with_help(format!("set it, or give a fallback: `env({key:?}, \"…\")`"))),
    }
}

fn filter_map(input: Value, f: fn(Item) -> Option<Item>) -> Result<Value> {
    Ok(lazy(input, move |items| {
        Box::new(items.filter_map(move |i| i.map(f).transpose()))
    }))
}

fn oks(item: Item) -> Option<Item> {
    match &item.value {
        Value::Ok(ok) => Some(Item {
            value: ok.value.clone(),
            origin: item.origin,
        }),
        Value::Err(_) => None,
        _ => Some(item),
    }
}

fn errs(item: Item) -> Option<Item> {
    match &item.value {
        Value::Err(e) => Some(Item {
            value: (**e).clone(),
            origin: item.origin,
        }),
        _ => None,
    }
}

fn flat(input: Value, f: fn(Item) -> Vec<Item>) -> Result<Value> {
    Ok(lazy(input, move |items| {
        Box::new(items.flat_map(move |i| match i {
            Ok(i) => f(i).into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        }))
    }))
}

fn warnings(item: Item) -> Vec<Item> {
    let Value::Ok(ok) = &item.value else {
        return vec![];
    };
    let origin = item
        .origin
        .as_ref()
        .map(Origin::to_value)
        .unwrap_or(Value::Null);
    ok.warnings
        .iter()
        .map(|w| {
            let mut r = match w {
                Value::Record(r) => (**r).clone(),
                _ => Record::default(),
            };
            r.insert("origin".into(), origin.clone());
            Item {
                value: Value::record(r),
                origin: item.origin.clone(),
            }
        })
        .collect()
}

fn unwrap_item(item: Item, at: Option<&Span>) -> Result<Item> {
    match &item.value {
        Value::Ok(ok) => Ok(Item {
            value: ok.value.clone(),
            origin: item.origin,
        }),
        Value::Err(e) => {
            let rules = failure_rules(e);
            // What an `err` the program made holds may come from data, so
            // it is named by its kind only (§4.9).
            let (message, help) = if rules.is_empty() {
                (
                    format!(
                        "`unwrap()` met an `err` holding {}, not a failure record",
                        e.kind_article()
                    ),
                    "use `errs()` to see what each `err` holds, or `oks()` to keep only the `ok`s",
                )
            } else {
                (
                    format!("a record fails: {}", rules.join(", ")),
                    "use `errs()` to see every failure, or `oks()` to keep only valid records",
                )
            };
            Err(RuntimeError::new("hql::unwrap", message)
                .with_help(help)
                .from_record(&item.origin)
                .at_some(at))
        }
        _ => Ok(item),
    }
}

fn report(interp: &Interp, items: Items) -> Result<Value> {
    let mut tally = Tally::default();
    let mark = interp.unmet_count();
    for item in items {
        tally.add(&item?.value);
    }
    tally.add_unmet(interp, mark);
    Ok(tally.into_value())
}

/// What `report()` counts, kept apart from values so that counts made on
/// other threads can be merged.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub total: i64,
    pub ok: i64,
    pub err: i64,
    pub warned: i64,
    /// Failures and warnings counted by rule, then kind.
    pub by_rule: FxHashMap<String, FxHashMap<String, i64>>,
}

impl Tally {
    /// Count one result (a plain value counts as ok).
    pub fn add(&mut self, v: &Value) {
        self.total += 1;
        match v {
            Value::Ok(o) => {
                self.ok += 1;
                self.warned += i64::from(!o.warnings.is_empty());
                self.rules(&o.warnings);
            }
            Value::Err(e) => {
                self.err += 1;
                self.rules(&validate::failures_of(e));
            }
            _ => self.ok += 1,
        }
    }

    /// Count the expectations that did not hold while the stream was read
    /// (since `Interp::unmet_count` was `mark`): one entry each, of kind
    /// `expect` or `expect_warn` (language.md §4.11).
    pub fn add_unmet(&mut self, interp: &Interp, mark: usize) {
        self.add_expectations(&interp.unmet_since(mark));
    }

    /// Count expectations that did not hold, one entry each.
    pub fn add_expectations(&mut self, unmet: &[crate::runtime::eval::Unmet]) {
        for u in unmet {
            self.count_rule(&u.id, u.kind(), 1);
        }
    }

    /// Count an input that does not decode, as `add` counts its failure
    /// record (`validate::undecodable`), without building the record.
    pub fn add_undecodable(&mut self) {
        self.total += 1;
        self.err += 1;
        self.count_rule(validate::DECODE, validate::DECODE, 1);
    }

    fn rules(&mut self, failures: &[Value]) {
        for f in failures {
            let field = |k: &str| match f {
                Value::Record(r) => r.get(k).and_then(Value::as_str).unwrap_or(""),
                _ => "",
            };
            self.count_rule(field("rule"), field("kind"), 1);
        }
    }

    /// Count one validation's findings, as `add` counts its result.
    pub fn add_findings(&mut self, f: &validate::Findings) {
        self.total += 1;
        let counted = if f.failures.is_empty() {
            self.ok += 1;
            self.warned += i64::from(!f.warnings.is_empty());
            &f.warnings
        } else {
            self.err += 1;
            &f.failures
        };
        for (rule, kind) in counted {
            self.count_rule(rule, kind.name(), 1);
        }
    }

    /// Add `n` valid records with no warning.
    pub fn add_valid(&mut self, n: usize) {
        self.total += n as i64;
        self.ok += n as i64;
    }

    /// Count a record the line check found valid with no warnings, whose
    /// unique keys at `taken` (positions in `shape.uniques`) were already
    /// taken: `ok` when there is none.
    #[inline]
    pub fn add_unique(&mut self, shape: &RecordShape, taken: &[usize]) {
        self.total += 1;
        if taken.is_empty() {
            self.ok += 1;
            return;
        }
        self.err += 1;
        for &n in taken {
            self.count_rule(&shape.uniques[n].id, FailureKind::Unique.name(), 1);
        }
    }

    /// Add `n` to the count of (`rule`, `kind`), allocating only for a
    /// pair not seen before.
    fn count_rule(&mut self, rule: &str, kind: &str, n: i64) {
        let kinds = match self.by_rule.get_mut(rule) {
            Some(kinds) => kinds,
            None => self.by_rule.entry(rule.to_string()).or_default(),
        };
        match kinds.get_mut(kind) {
            Some(count) => *count += n,
            None => {
                kinds.insert(kind.to_string(), n);
            }
        }
    }

    /// Add `other`'s counts, allocating only for a rule and kind not
    /// seen before.
    pub fn merge(&mut self, other: &Tally) {
        self.add_times(other, 1);
    }

    /// Take back `other`'s counts, counted here before: a rule and kind
    /// whose count comes to nothing is gone, as if never counted.
    pub fn withdraw(&mut self, other: &Tally) {
        self.add_times(other, -1);
        for kinds in self.by_rule.values_mut() {
            kinds.retain(|_, n| *n != 0);
        }
        self.by_rule.retain(|_, kinds| !kinds.is_empty());
    }

    /// Add `other`'s counts `times` times.
    fn add_times(&mut self, other: &Tally, times: i64) {
        self.total += times * other.total;
        self.ok += times * other.ok;
        self.err += times * other.err;
        self.warned += times * other.warned;
        for (rule, kinds) in &other.by_rule {
            for (kind, &n) in kinds {
                self.count_rule(rule, kind, times * n);
            }
        }
    }

    /// The report record: `by_rule` sorted by count, then rule, then kind.
    pub fn into_value(self) -> Value {
        let mut rows: Vec<_> = self
            .by_rule
            .into_iter()
            .flat_map(|(rule, kinds)| {
                kinds
                    .into_iter()
                    .map(move |(kind, n)| ((rule.clone(), kind), n))
            })
            .collect();
        rows.sort_by(|((r1, k1), c1), ((r2, k2), c2)| {
            c2.cmp(c1).then_with(|| r1.cmp(r2)).then_with(|| k1.cmp(k2))
        });
        let rows = rows
            .into_iter()
            .map(|((rule, kind), count)| {
                let mut r = Record::default();
                r.insert("rule".into(), Value::str(rule));
                r.insert("kind".into(), Value::str(kind));
                r.insert("count".into(), Value::Int(count));
                Value::record(r)
            })
            .collect();
        let mut r = Record::default();
        for (k, v) in [
            ("total", self.total),
            ("ok", self.ok),
            ("err", self.err),
            ("warned", self.warned),
        ] {
            r.insert(k.into(), Value::Int(v));
        }
        r.insert("by_rule".into(), Value::list(rows));
        Value::record(r)
    }
}

// ------------------------------------------------------------ general stages

fn map(interp: &Rc<Interp>, input: Value, f: Value, at: Option<Span>) -> Value {
    let interp = interp.clone();
    lazy(input, move |items| {
        let (interp, f, at) = (interp.clone(), f.clone(), at.clone());
        Box::new(items.map(move |i| {
            let i = i?;
            let value = interp
                .call(&f, smallvec![i.value])
                .map_err(|e| e.from_record(&i.origin).at_some(at.as_ref()))?;
            Ok(Item {
                value,
                origin: None,
            })
        }))
    })
}

fn predicate(interp: &Rc<Interp>, p: &Value, v: &Value) -> Result<bool> {
    match interp.call(p, smallvec![v.clone()])? {
        Value::Bool(b) => Ok(b),
        Value::Absent | Value::Null => Ok(false),
        other => Err(RuntimeError::new(
            "hql::type",
            format!(
                "a predicate must return a Bool, not {}",
                other.kind_article()
            ),
        )),
    }
}

fn filter(interp: &Rc<Interp>, input: Value, p: Value, at: Option<Span>) -> Value {
    let interp = interp.clone();
    lazy(input, move |items| {
        let (interp, p, at) = (interp.clone(), p.clone(), at.clone());
        Box::new(items.filter_map(move |i| match i {
            Ok(i) => match predicate(&interp, &p, &i.value) {
                Ok(true) => Some(Ok(i)),
                Ok(false) => None,
                Err(e) => Some(Err(e.from_record(&i.origin).at_some(at.as_ref()))),
            },
            Err(e) => Some(Err(e)),
        }))
    })
}

fn flat_map(interp: &Rc<Interp>, input: Value, f: Value, at: Option<Span>) -> Value {
    let interp = interp.clone();
    lazy(input, move |upstream| {
        let (interp, f, at) = (interp.clone(), f.clone(), at.clone());
        let mut inner: Option<Items> = None;
        let mut upstream = upstream;
        Box::new(std::iter::from_fn(move || loop {
            if let Some(next) = inner.as_mut().and_then(Iterator::next) {
                return Some(next.map(|i| Item {
                    value: i.value,
                    origin: None,
                }));
            }
            let item = match upstream.next()? {
                Ok(i) => i,
                Err(e) => return Some(Err(e)),
            };
            match interp
                .call(&f, smallvec![item.value])
                .and_then(|v| items(&v))
            {
                Ok(it) => inner = Some(it),
                Err(e) => return Some(Err(e.from_record(&item.origin).at_some(at.as_ref()))),
            }
        }))
    })
}

fn take_skip(input: Value, n: &Value, take: bool) -> Result<Value> {
    let n = match n {
        Value::Int(n) if *n >= 0 => *n as usize,
        other => {
            return Err(RuntimeError::new(
                "hql::type",
                format!(
                    "expected a count (an Int of 0 or more), found {}",
                    other.kind_article()
                ),
            ))
        }
    };
    Ok(lazy(input, move |items| {
        if take {
            Box::new(items.take(n))
        } else {
            Box::new(items.skip(n))
        }
    }))
}

// A `ValueKey` holds values with cells inside (a stream's state), but its
// hash and equality read none: streams and functions go by address.
#[allow(clippy::mutable_key_type)]
fn distinct(input: Value) -> Value {
    lazy(input, |items| {
        let mut seen = FxHashSet::default();
        Box::new(items.filter(move |i| match i {
            Ok(i) => seen.insert(ValueKey::one(i.value.clone())),
            Err(_) => true,
        }))
    })
}

fn fold_numbers(
    items: Items,
    zero: Value,
    add: impl Fn(Value, Value) -> Result<Value>,
) -> Result<Value> {
    let mut acc = zero;
    for i in items {
        let v = i?.value;
        if !v.is_number() {
            return Err(RuntimeError::new(
                "hql::type",
                format!("`sum` adds numbers, found {}", v.kind_article()),
            ));
        }
        acc = add(acc, v)?;
    }
    Ok(acc)
}

fn extreme(items: Items, want: std::cmp::Ordering) -> Result<Value> {
    let mut best: Option<Value> = None;
    for i in items {
        let v = i?.value;
        best = match best {
            Some(b) => {
                let ord = compare(&v, &b).ok_or_else(|| {
                    RuntimeError::new(
                        "hql::type",
                        format!(
                            "cannot compare {} with {}",
                            v.kind_article(),
                            b.kind_article()
                        ),
                    )
                })?;
                Some(if ord == want { v } else { b })
            }
            None => Some(v),
        };
    }
    Ok(best.unwrap_or(Value::Null))
}

fn avg(items: Items) -> Result<Value> {
    let (mut sum, mut n) = (0.0, 0u64);
    for i in items {
        let v = i?.value;
        if ops::is_big_int(&v) {
            return Err(ops::big_int());
        }
        sum += ops::to_f64(&v).ok_or_else(|| {
            RuntimeError::new(
                "hql::type",
                format!("`avg` takes numbers, found {}", v.kind_article()),
            )
        })?;
        n += 1;
    }
    if n == 0 {
        return Ok(Value::Null);
    }
    ops::finite(sum / n as f64)
}

/// `any(p)` / `all(p)`: reading stops at the first element that decides.
fn quantify(interp: &Rc<Interp>, items: Items, p: &Value, any: bool) -> Result<Value> {
    for i in items {
        let i = i?;
        if predicate(interp, p, &i.value).map_err(|e| e.from_record(&i.origin))? == any {
            return Ok(Value::Bool(any));
        }
    }
    Ok(Value::Bool(!any))
}

fn sorted(values: Vec<Value>, key: impl Fn(&Value) -> Result<Option<Value>>) -> Result<Value> {
    let mut keyed = values
        .into_iter()
        .map(|v| {
            crate::runtime::eval::check_interrupt()?;
            Ok((key(&v)?.unwrap_or_else(|| v.clone()), v))
        })
        .collect::<Result<Vec<_>>>()?;
    keyed.sort_by(|a, b| sort_order(&a.0, &b.0));
    // The sort itself cannot stop part-way; a signal it took stops here.
    crate::runtime::eval::check_interrupt()?;
    Ok(Value::list(keyed.into_iter().map(|(_, v)| v).collect()))
}

/// Group items by `f(value)`, keys in order of first appearance; `add`
/// puts an item into its group.
#[allow(clippy::mutable_key_type)] // see `distinct`
fn groups<G: Default>(
    interp: &Rc<Interp>,
    items: Items,
    f: &Value,
    add: impl Fn(&mut G, Item),
) -> Result<Vec<(Value, G)>> {
    let mut index: FxHashMap<ValueKey, usize> = FxHashMap::default();
    let mut groups: Vec<(Value, G)> = Vec::new();
    for i in items {
        let i = i?;
        let key = interp
            .call(f, smallvec![i.value.clone()])
            .map_err(|e| e.from_record(&i.origin))?;
        let slot = *index.entry(ValueKey::one(key.clone())).or_insert_with(|| {
            groups.push((key, G::default()));
            groups.len() - 1
        });
        add(&mut groups[slot].1, i);
    }
    Ok(groups)
}

fn pair(a: &str, x: Value, b: &str, y: Value) -> Value {
    let mut r = Record::default();
    r.insert(a.into(), x);
    r.insert(b.into(), y);
    Value::record(r)
}

fn count_by(interp: &Rc<Interp>, items: Items, f: &Value) -> Result<Value> {
    let mut counted = groups(interp, items, f, |n: &mut i64, _| *n += 1)?;
    // A stable sort keeps ties in order of first appearance.
    counted.sort_by_key(|c| std::cmp::Reverse(c.1));
    crate::runtime::eval::check_interrupt()?;
    Ok(Value::list(
        counted
            .into_iter()
            .map(|(k, n)| pair("key", k, "count", Value::Int(n)))
            .collect(),
    ))
}

fn group_by(interp: &Rc<Interp>, items: Items, f: &Value) -> Result<Value> {
    let grouped = groups(interp, items, f, |vs: &mut Vec<Value>, i| vs.push(kept(i)))?;
    Ok(Value::list(
        grouped
            .into_iter()
            .map(|(k, vs)| pair("key", k, "items", Value::list(vs)))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use crate::runtime::eval::io::{Decoded, RecordSource};
    use crate::runtime::eval::{Origin, Result, RuntimeError};
    use crate::runtime::exec::stages::{decoded_items, Tally};
    use crate::runtime::validate::decode_failure;
    use crate::runtime::value::Value;

    /// A source of `n` records whose end-of-stream hook counts its calls
    /// and fails when told to.
    struct Ends {
        left: i64,
        ends: Rc<Cell<u32>>,
        fail: bool,
    }

    impl Iterator for Ends {
        type Item = Result<Decoded>;

        fn next(&mut self) -> Option<Result<Decoded>> {
            self.left -= 1;
            (self.left >= 0).then(|| {
                Ok(Decoded {
                    value: Value::Int(self.left),
                    origin: Origin {
                        source: "ends".into(),
                        line: 1,
                    },
                })
            })
        }
    }

    impl RecordSource for Ends {
        fn end(&mut self) -> Result<()> {
            self.ends.set(self.ends.get() + 1);
            match self.fail {
                true => Err(RuntimeError::new("hql::expect", "too few records")),
                false => Ok(()),
            }
        }
    }

    fn ends(n: i64, fail: bool) -> (Box<Ends>, Rc<Cell<u32>>) {
        let ends = Rc::new(Cell::new(0));
        let source = Ends {
            left: n,
            ends: ends.clone(),
            fail,
        };
        (Box::new(source), ends)
    }

    /// A source read to its end has its end-of-stream hook run once, after
    /// its last record, however often the exhausted stream is asked again.
    #[test]
    fn the_end_hook_runs_once_when_a_source_is_exhausted() {
        let (source, ends) = ends(3, false);
        let mut items = decoded_items(source);
        for _ in 0..3 {
            assert!(matches!(items.next(), Some(Ok(_))));
            assert_eq!(ends.get(), 0);
        }
        assert!(items.next().is_none());
        assert!(items.next().is_none());
        assert_eq!(ends.get(), 1);
    }

    /// A source read in part has no end to judge: its hook does not run.
    #[test]
    fn the_end_hook_does_not_run_when_reading_stops_early() {
        let (source, ends) = ends(3, false);
        let mut items = decoded_items(source);
        assert!(matches!(items.next(), Some(Ok(_))));
        drop(items);
        assert_eq!(ends.get(), 0);
    }

    /// What the hook finds wrong is the stream's last item.
    #[test]
    fn an_end_hook_error_is_the_last_item() {
        let (source, ends) = ends(1, true);
        let items: Vec<_> = decoded_items(source).collect();
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[1], Err(e) if e.message == "too few records"));
        assert_eq!(ends.get(), 1);
    }

    /// A tally withdrawn after it was merged leaves what was there: no
    /// rule it alone counted stays behind with a count of nothing.
    #[test]
    fn a_withdrawn_tally_leaves_no_trace() {
        let origin = Origin {
            source: "in.jsonl".into(),
            line: 1,
        };
        let mut base = Tally::default();
        base.add(&decode_failure(&origin, "{".into(), "cut".into()));
        base.add_valid(2);
        let mut more = Tally::default();
        more.add(&decode_failure(&origin, "[".into(), "cut".into()));
        more.count_rule("R.short", "warn", 1);
        more.add_valid(1);
        let mut both = Tally {
            by_rule: base.by_rule.clone(),
            ..base
        };
        both.merge(&more);
        assert_ne!(both.by_rule, base.by_rule);
        both.withdraw(&more);
        assert_eq!(
            (both.total, both.ok, both.err, both.warned, &both.by_rule),
            (base.total, base.ok, base.err, base.warned, &base.by_rule)
        );
    }

    /// An undecodable input counted without its failure record counts as
    /// the record does, beside other failures of the same rule.
    #[test]
    fn an_undecodable_input_counts_as_its_failure_record() {
        let origin = Origin {
            source: "in.jsonl".into(),
            line: 7,
        };
        let (mut by_record, mut by_rule) = (Tally::default(), Tally::default());
        for n in 0..3 {
            by_record.add(&decode_failure(
                &origin,
                "{".into(),
                format!("cut short {n}"),
            ));
            by_rule.add_undecodable();
        }
        assert_eq!(by_rule.total, 3);
        assert_eq!(
            format!("{:?}", by_rule.into_value()),
            format!("{:?}", by_record.into_value())
        );
    }
}
