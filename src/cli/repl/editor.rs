//! The interactive REPL on a terminal: rustyline line editing, multi-line
//! entries decided by `input_status`, history kept after every entry.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{CompletionType, Config, Context, Editor, Helper};

use super::{blank_line_submits, complete, highlight, Control, Repl};
use crate::cli::output::note;
use crate::runtime::eval::{clear_interrupt, interrupt, Host};
use crate::session::{Sinks, EXIT_OK};
use crate::syntax::input::{input_status, InputStatus};

/// The line editor's helper: completion from the session, highlighting,
/// the hint of what is still open, and when an entry is finished.
pub struct HqlHelper {
    /// The REPL, shared with the loop; borrowed only while editing.
    repl: Rc<RefCell<Repl>>,
    color: bool,
    /// The bracket to show in bold (its partner is under the cursor).
    bracket: Cell<Option<usize>>,
}

impl Helper for HqlHelper {}

impl Completer for HqlHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let Ok(mut repl) = self.repl.try_borrow_mut() else {
            return Ok((pos, vec![]));
        };
        let (start, found) = complete::complete(&mut repl.session, line, pos);
        let pairs = found
            .into_iter()
            .map(|c| Pair {
                display: c.display,
                replacement: c.replacement,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Highlighter for HqlHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if !self.color {
            return Cow::Borrowed(line);
        }
        Cow::Owned(highlight::highlight(line, self.bracket.get()))
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        Cow::Owned(format!("\x1b[90m{hint}\x1b[0m"))
    }

    fn highlight_char(&self, line: &str, pos: usize, kind: CmdKind) -> bool {
        if !self.color {
            return false;
        }
        let bracket = match kind {
            CmdKind::ForcedRefresh => None,
            _ => highlight::matching_bracket(line, pos),
        };
        self.bracket.set(bracket);
        kind != CmdKind::ForcedRefresh
    }
}

impl Hinter for HqlHelper {
    type Hint = String;

    /// At the end of the entry: the brackets still open (with colour only,
    /// so that a hint is never mistaken for typed text).
    fn hint(&self, line: &str, pos: usize, _: &Context<'_>) -> Option<String> {
        if !self.color || pos < line.len() || line.trim_start().starts_with(':') {
            return None;
        }
        let closers = highlight::closers(line);
        (!closers.is_empty()).then_some(closers)
    }
}

impl Validator for HqlHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        let input = ctx.input();
        if input.trim_start().starts_with(':') {
            return Ok(ValidationResult::Valid(None));
        }
        // Enter on a blank last line submits an unfinished entry, except
        // inside `{ … }`.
        let blank_line = input
            .rsplit('\n')
            .next()
            .is_some_and(|l| l.trim().is_empty());
        Ok(match input_status(input) {
            InputStatus::Complete => ValidationResult::Valid(None),
            InputStatus::Incomplete if blank_line && blank_line_submits(input) => {
                ValidationResult::Valid(None)
            }
            InputStatus::Incomplete => ValidationResult::Incomplete,
        })
    }
}

/// Where history is kept: `HQL_HISTORY` (empty disables), else
/// `$XDG_STATE_HOME/hql/history`, else `~/.local/state/hql/history`.
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HQL_HISTORY") {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(state.join("hql").join("history"))
}

/// The terminal's width, asked of the terminal each time (it may have
/// been resized); `$COLUMNS` where the terminal does not say, else 100.
fn terminal_width() -> usize {
    let asked = terminal_size::terminal_size_of(std::io::stdout())
        .or_else(|| terminal_size::terminal_size_of(std::io::stderr()))
        .map(|(terminal_size::Width(w), _)| w as usize)
        .filter(|&w| w > 0);
    asked
        .or_else(|| std::env::var("COLUMNS").ok()?.parse().ok())
        .unwrap_or(100)
}

/// The REPL on a terminal; results go to `out` (standard output, which
/// keeps a failed write for the caller to report).
pub fn run_interactive(host: Rc<dyn Host>, color: bool, out: &mut dyn Write) -> i32 {
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .history_ignore_dups(true)
        .and_then(|c| c.max_history_size(10_000))
        .map(|c| c.auto_add_history(false).build());
    let editor = config.and_then(Editor::<HqlHelper, DefaultHistory>::with_config);
    let mut editor = match editor {
        Ok(e) => e,
        Err(e) => {
            note(&format!("hql: cannot start the line editor: {e}"));
            return 1;
        }
    };
    let repl = Rc::new(RefCell::new(Repl::new(host, Some(terminal_width()))));
    editor.set_helper(Some(HqlHelper {
        repl: repl.clone(),
        color,
        bracket: Cell::new(None),
    }));
    let history = history_path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    // Ctrl-C while an entry runs stops it; at the prompt the line editor
    // reads Ctrl-C itself (the terminal is in raw mode) and drops the entry.
    if let Err(e) = ctrlc::set_handler(interrupt) {
        note(&format!("hql: Ctrl-C will end the REPL ({e})"));
    }
    let _ = writeln!(
        out,
        "HQL {} — :help for commands, Ctrl-D to leave",
        env!("CARGO_PKG_VERSION")
    );
    let _ = out.flush();
    loop {
        match editor.readline("hql> ") {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                    save_history(&mut editor, history.as_ref());
                }
                let mut err = std::io::stderr();
                let mut sinks = Sinks {
                    out: &mut *out,
                    err: &mut err,
                    color,
                    json: false,
                };
                clear_interrupt();
                repl.borrow_mut().set_width(terminal_width());
                let control = repl.borrow_mut().entry(&line, &mut sinks);
                clear_interrupt();
                if control == Control::Quit {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                note(&format!("hql: {e}"));
                break;
            }
        }
    }
    EXIT_OK
}

fn save_history(editor: &mut Editor<HqlHelper, DefaultHistory>, path: Option<&PathBuf>) {
    let Some(path) = path else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = editor.save_history(path);
}
