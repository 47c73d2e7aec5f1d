//! What each name in a program stands for, as the checker resolved it.
//!
//! The checker is the one resolver: while it lowers the syntax tree to the
//! `hir` the evaluator runs, it writes down here, for every name it
//! resolves, the declaration that name refers to. Type flow, completion
//! and the contract tools read this table instead of keeping scopes of
//! their own, so a parameter that shadows a function, a `let` redefined
//! later, or the library's name hidden by the program's are decided once.
//!
//! A name is keyed by the offset where it is written (every file of a
//! program has its own range in one span space, so offsets are unique);
//! a declaration is identified the same way, by where its name is written.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::runtime::builtins::{Builtin, Format};
use crate::runtime::contract::TypeSpec;

/// The declaration a name refers to.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// A parameter of a lambda or of a `fn`, by where its name is written.
    Param(usize),
    /// A slot of the frame a rule is checked in: 0 is `self`, then the
    /// record's fields in order, inherited ones first.
    RuleSlot(u32),
    /// A `let`, by where its name is written.
    Let(usize),
    /// A `fn`, by where its name is written.
    Fn(usize),
    Builtin(Builtin),
    /// A declared type used as a value.
    Type(String),
    Format(Format),
}

/// The resolver's output beside the `hir`.
#[derive(Debug, Default)]
pub struct Names {
    /// Ordered by offset, so that a session can let go of an entry's names
    /// (`forget_from`) without a walk over the history's.
    uses: BTreeMap<usize, Binding>,
    /// Parameter annotations by where the parameter's name is written, and
    /// return annotations by where the function's name is written; compiled
    /// by the same code that compiles a field's type.
    annotations: FxHashMap<usize, TypeSpec>,
}

impl Names {
    pub(crate) fn resolve(&mut self, at: usize, binding: Binding) {
        self.uses.insert(at, binding);
    }

    pub(crate) fn annotate(&mut self, at: usize, ty: TypeSpec) {
        self.annotations.insert(at, ty);
    }

    /// Forget the uses written at or after `at`: an entry of a session
    /// that did not check (it declared no function, so no annotation),
    /// whose offsets the next entry takes again.
    pub(crate) fn forget_from(&mut self, at: usize) {
        self.uses.split_off(&at);
    }

    /// What the name written at `at` refers to (none when it did not resolve).
    pub fn binding(&self, at: usize) -> Option<&Binding> {
        self.uses.get(&at)
    }

    /// The declared type of the parameter, or the return type of the
    /// function, whose name is written at `at`.
    pub fn annotation(&self, at: usize) -> Option<&TypeSpec> {
        self.annotations.get(&at)
    }
}
