//! The interactive REPL on a terminal: rustyline line editing, multi-line
//! entries decided by `input_status`, history kept after every entry.

use std::path::PathBuf;
use std::rc::Rc;

use rustyline::error::ReadlineError;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Completer, Editor, Helper, Highlighter, Hinter};

use super::{Control, Repl};
use crate::eval::Host;
use crate::input::{input_status, InputStatus};
use crate::session::{Sinks, EXIT_OK};

#[derive(Completer, Helper, Highlighter, Hinter)]
pub struct HqlHelper;

impl Validator for HqlHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        let input = ctx.input();
        // A blank last line forces submission.
        if input.ends_with('\n') || input.trim_start().starts_with(':') {
            return Ok(ValidationResult::Valid(None));
        }
        Ok(match input_status(input) {
            InputStatus::Complete => ValidationResult::Valid(None),
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

fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(100)
}

pub fn run_interactive(host: Rc<dyn Host>, color: bool) -> i32 {
    let mut editor: Editor<HqlHelper, rustyline::history::DefaultHistory> = match Editor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("hql: cannot start the line editor: {e}");
            return 1;
        }
    };
    editor.set_helper(Some(HqlHelper));
    let history = history_path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    let mut repl = Repl::new(host, Some(terminal_width()));
    println!(
        "HQL {} — :help for commands, Ctrl-D to leave",
        env!("CARGO_PKG_VERSION")
    );
    loop {
        match editor.readline("hql> ") {
            Ok(line) => {
                let _ = editor.add_history_entry(line.as_str());
                save_history(&mut editor, history.as_ref());
                let mut out = std::io::stdout();
                let mut err = std::io::stderr();
                let mut sinks = Sinks {
                    out: &mut out,
                    err: &mut err,
                    color,
                };
                if repl.entry(&line, &mut sinks) == Control::Quit {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("hql: {e}");
                break;
            }
        }
    }
    EXIT_OK
}

fn save_history(
    editor: &mut Editor<HqlHelper, rustyline::history::DefaultHistory>,
    path: Option<&PathBuf>,
) {
    let Some(path) = path else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = editor.save_history(path);
}
