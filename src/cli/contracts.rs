//! Loading a contracts file for the commands that read declarations
//! (`hql vet`, `hql export`, `hql diff`, `hql contract`): the file is
//! imported into a session, so it is checked exactly as a program importing
//! it would be, and its own types — imports and the standard library aside —
//! are picked out in declaration order.

use std::rc::Rc;

use crate::runtime::contract::Contract;
use crate::session::{Session, Sinks, EXIT_OK};
use crate::syntax::ast::{Stmt, TypeBody};

/// The types a file declares itself, compiled, in declaration order.
pub struct Declared {
    pub file: String,
    pub types: Vec<Rc<Contract>>,
}

impl Declared {
    /// The type named `name`, or a message listing the ones there are.
    pub fn get(&self, name: &str) -> Result<&Rc<Contract>, String> {
        self.types.iter().find(|c| c.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.types.iter().map(|c| c.name.as_str()).collect();
            format!(
                "{} declares no type `{name}` (it declares {})",
                self.file,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
        })
    }
}

/// Import `file` into `session` and pick out its own types. Diagnostics
/// go to `sinks`; the error is the exit status (2 for a static error, or
/// for a file that cannot be read).
pub fn load(session: &mut Session, file: &str, sinks: &mut Sinks) -> Result<Declared, i32> {
    let text = match session.interp().host().read_source(file) {
        Ok(text) => text,
        Err(e) => {
            let _ = writeln!(sinks.err, "hql: cannot read {file}: {e}");
            return Err(crate::session::EXIT_STATIC);
        }
    };
    let import = format!(
        "import {}",
        crate::runtime::print::to_hql(&crate::runtime::value::Value::str(file))
    );
    // Declarations only: a contract file is read, never run (tooling.md,
    // "What a program can touch").
    let status = session.submit_declarations("<import>", &import, sinks);
    if status != EXIT_OK {
        return Err(status);
    }
    let types = type_names(&text, false)
        .iter()
        .filter_map(|name| session.contract(name))
        .collect();
    Ok(Declared {
        file: file.to_string(),
        types,
    })
}

/// The types a program's text declares itself, in order; with `records`,
/// only record types. None when it does not parse: the session reports
/// that, with spans.
pub fn type_names(text: &str, records: bool) -> Vec<String> {
    let Ok(module) = crate::syntax::parser::parse(text) else {
        return Vec::new();
    };
    module
        .stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Type(t) if !records || matches!(t.body, TypeBody::Record(_)) => {
                Some(t.name.text.clone())
            }
            _ => None,
        })
        .collect()
}
