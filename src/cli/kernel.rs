//! Running cells: `Kernel::execute(code) -> CellOutput`.
//!
//! One API over a session, `input_status` and the renderers (plain text as
//! `hql run` prints, and an HTML table for lists of records), for the
//! notebook runner here and for a Jupyter kernel later: neither needs to
//! reach into the evaluator.

use std::rc::Rc;

use crate::cli::repl::chart;
use crate::cli::run::{print_value, OutputFormat};
use crate::runtime::eval::Host;
use crate::runtime::exec::stages::force;
use crate::runtime::print::to_hql;
use crate::runtime::value::{Record, Value};
use crate::session::{CheckResult, Session, Sinks};

pub use crate::syntax::input::{input_status, InputStatus};

/// What one cell did.
#[derive(Debug, Clone, Default)]
pub struct CellOutput {
    /// Standard output, exactly as `hql run` would print it.
    pub text: String,
    /// Diagnostics (no colour), as `hql run` would write them to stderr.
    pub diagnostics: String,
    /// The exit status the cell alone would give (tooling.md).
    pub status: i32,
    /// Every `check` the cell ran.
    pub checks: Vec<CheckResult>,
    /// The cell's last value as HTML: a table when it is a list of records,
    /// led by an SVG bar chart when those are what `count_by` gives; an
    /// SVG histogram when it is a list of at least two numbers.
    pub html: Option<String>,
}

pub struct Kernel {
    session: Session,
    cells: usize,
    /// Diagnostics as JSON Lines (`--diagnostics json`) instead of reports.
    json: bool,
}

impl Kernel {
    pub fn new(host: Rc<dyn Host>) -> Kernel {
        Kernel {
            session: Session::new(host),
            cells: 0,
            json: false,
        }
    }

    /// Write `CellOutput::diagnostics` as JSON Lines, one object a
    /// diagnostic, as `--diagnostics json` does.
    pub fn with_json_diagnostics(mut self, json: bool) -> Kernel {
        self.json = json;
        self
    }

    /// Run a cell's code in the kernel's session. `name` is the source name
    /// diagnostics use (a notebook passes `file.md:line`).
    pub fn execute(&mut self, name: &str, code: &str) -> CellOutput {
        self.cells += 1;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut last = None;
        let checks_before = self.session.checks.len();
        let status = {
            let mut sinks = Sinks {
                out: &mut out,
                err: &mut err,
                color: false,
                json: self.json,
            };
            self.session
                .submit(name, code, &mut sinks, &mut |v, sinks| {
                    let v = force(v)?;
                    last = Some(v.clone());
                    print_value(v, OutputFormat::Hql, sinks.out)
                })
        };
        CellOutput {
            text: String::from_utf8_lossy(&out).into_owned(),
            diagnostics: String::from_utf8_lossy(&err).into_owned(),
            status,
            checks: self.session.checks[checks_before..].to_vec(),
            html: last.as_ref().and_then(render_cell),
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }
}

/// A cell's value as HTML (see [`CellOutput::html`]).
pub fn render_cell(v: &Value) -> Option<String> {
    let Value::List(items) = v else { return None };
    if items.len() >= 2 && items.iter().all(Value::is_number) {
        let histogram = chart::histogram(v).ok()??;
        return Some(histogram.svg());
    }
    let table = render_html(v)?;
    if chart::is_count_by(items) {
        if let Ok(Some((rows, _))) = chart::keyed(v) {
            return Some(format!("{}\n{table}", chart::bars_svg(&rows)));
        }
    }
    Some(table)
}

/// A list of records as an HTML table (columns in first-seen order).
pub fn render_html(v: &Value) -> Option<String> {
    let Value::List(items) = v else { return None };
    let rows: Vec<&Record> = items
        .iter()
        .map(|i| match i {
            Value::Record(r) => Some(&**r),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if rows.is_empty() {
        return None;
    }
    let mut columns: Vec<&str> = Vec::new();
    for r in &rows {
        for k in r.keys() {
            if !columns.contains(&&**k) {
                columns.push(k);
            }
        }
    }
    let mut html = String::from("<table>\n<thead><tr>");
    for c in &columns {
        html.push_str(&format!("<th>{}</th>", escape(c)));
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        html.push_str("<tr>");
        for c in &columns {
            let cell = match r.get(c) {
                Some(Value::Str(s)) => s.to_string(),
                Some(v) => to_hql(v),
                None => String::new(),
            };
            html.push_str(&format!("<td>{}</td>", escape(&cell)));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>");
    Some(html)
}

use chart::escape;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_render_as_an_html_table() {
        let mut a = Record::default();
        a.insert("name".into(), Value::str("<wren>"));
        let mut b = Record::default();
        b.insert("n".into(), Value::Int(2));
        let html = render_html(&Value::list(vec![Value::record(a), Value::record(b)])).unwrap();
        assert_eq!(
            html,
            "<table>\n<thead><tr><th>name</th><th>n</th></tr></thead>\n<tbody>\n<tr><td>&lt;wren&gt;</td><td></td></tr>\n<tr><td></td><td>2</td></tr>\n</tbody>\n</table>"
        );
        assert!(render_html(&Value::list(vec![Value::Int(1)])).is_none());
    }

    #[test]
    fn numbers_and_counts_render_as_svg_charts() {
        let numbers = Value::list((1..=9).map(Value::Int).collect());
        let html = render_cell(&numbers).unwrap();
        assert!(html.starts_with("<svg "), "{html}");
        assert_eq!(html.matches("<rect ").count(), 5, "{html}");
        assert!(html.contains("<title>[0, 2) 1</title>"), "{html}");
        assert!(render_cell(&Value::list(vec![Value::Int(1)])).is_none());

        let mut kernel = Kernel::new(Rc::new(crate::session::memory::MemHost::new(&[], None)));
        let out = kernel.execute("t", "[\"a\", \"b\", \"a\"] | count_by(x => x)");
        let html = out.html.unwrap();
        assert!(html.starts_with("<svg "), "{html}");
        assert!(html.contains("<title>a 2</title>"), "{html}");
        assert!(html.contains("</svg>\n<table>"), "{html}");
        // Other records are a table only.
        let out = kernel.execute("t", "[{name: \"a\", n: 2}]");
        assert!(out.html.unwrap().starts_with("<table>"));
    }
}
