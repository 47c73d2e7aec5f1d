//! `route` of a validated JSON Lines file (and `write` of its valid
//! records) on several threads.
//!
//! The file is read in chunks by worker threads (`exec::chunks`); each
//! worker routes a chunk's lines with its own copier into two texts, one
//! record a line. The calling thread writes those to the targets in the
//! order of the chunks: the targets get exactly the records one thread
//! writes, in the same order, with the same origins.

use std::cell::RefCell;
use std::rc::Rc;

use super::{routed, Copier, Routes, Targets};
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{JsonText, SourceSpec};
use crate::runtime::eval::{Interp, Origin, Parallel, Result};
use crate::runtime::exec::chunks::{self, Job, Worker};
use crate::runtime::exec::stages::{framing, Tally};
use crate::runtime::json::write_json;
use crate::runtime::validate;
use crate::runtime::value::Value;

pub(super) use chunks::parallel_for;

/// A chunk routed: each target's records as compact JSON, one a line.
#[derive(Default)]
struct Routed {
    ok: Vec<u8>,
    err: Vec<u8>,
    oks: u64,
    errs: u64,
    tally: Tally,
}

impl Routes for Routed {
    fn text(&mut self, ok: bool, text: &[u8]) -> Result<()> {
        let (out, n) = match ok {
            true => (&mut self.ok, &mut self.oks),
            false => (&mut self.err, &mut self.errs),
        };
        out.extend_from_slice(text);
        out.push(b'\n');
        *n += 1;
        Ok(())
    }

    fn value(&mut self, ok: bool, v: &Value) -> Result<()> {
        // As the JSON writer writes a record.
        let mut text = String::new();
        write_json(&mut text, v);
        self.text(ok, text.as_bytes())
    }

    fn tally(&mut self) -> &mut Tally {
        &mut self.tally
    }
}

/// Route the lines of `path` on `parallel`'s threads into `out`.
pub(super) fn spread(
    interp: &Rc<Interp>,
    parallel: &Parallel,
    source: &SourceSpec,
    path: &str,
    contract: &Rc<Contract>,
    errs_wanted: bool,
    out: &mut Targets,
) -> Result<()> {
    let ty = contract.name.clone();
    let rebuild = parallel.rebuild.clone();
    let (name, framing): (&str, _) = (&source.name, framing(interp, source.format)?);
    let start = move || -> std::result::Result<Worker<Routed>, &'static str> {
        let (interp, contract) = rebuild.rebuild(&ty)?;
        let copier = Copier::new(&contract, &interp, errs_wanted)
            .ok_or("the contract cannot be checked by lines")?;
        let name: Rc<str> = name.into();
        Ok(Box::new(move |job| {
            route_chunk(&interp, &contract, &copier, (framing, &name), job)
        }))
    };
    let mut take = |routed| write(interp, &routed, out).map(|()| true);
    let failed = chunks::spread(interp, parallel, path, chunks::AHEAD, &start, &mut take)?;
    // A read error ends the input after one failure, as a source has it.
    if let Some(failed) = failed {
        let origin = Origin {
            source: name.into(),
            line: failed.line,
        };
        let failure = validate::decode_failure(&origin, String::new(), failed.message);
        out.tally.add(&failure);
        if let Value::Err(record) = &failure {
            out.value(false, record)?;
        }
    }
    Ok(())
}

/// Write a routed chunk's records to the targets: whole, to a JSON Lines
/// target, one at a time to another.
fn write(interp: &Interp, routed: &Routed, out: &mut Targets) -> Result<()> {
    out.tally.merge(&routed.tally);
    let counts = [routed.oks, routed.errs];
    for (ok, text, n) in [
        (true, &routed.ok, routed.oks),
        (false, &routed.err, routed.errs),
    ] {
        if n == 0 || out.lines(ok, text, n)? {
            continue;
        }
        for record in chunks::lines(text).filter(|r| !r.is_empty()) {
            out.text(ok, record)?;
        }
    }
    if let Some(meter) = interp.meter() {
        meter.read_records(counts[0] + counts[1]);
        meter.judged(counts[0], counts[1]);
    }
    Ok(())
}

/// Route the lines of one chunk as one thread routes them.
fn route_chunk(
    interp: &Rc<Interp>,
    contract: &Rc<Contract>,
    copier: &Rc<RefCell<Copier>>,
    (framing, name): (&dyn JsonText, &Rc<str>),
    job: Job,
) -> Result<Routed> {
    let mut out = Routed::default();
    let mut record_text = Vec::new();
    let first_line = job.first_line;
    let hook = Some(Copier::hook(copier, interp));
    for item in framing.items(job.into_lines(), name.clone(), first_line - 1, hook) {
        routed(interp, copier, contract, item?, &mut record_text, &mut out)?;
    }
    Ok(out)
}
