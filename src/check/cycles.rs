//! Types defined in terms of themselves: `type_cycles(decls) -> Vec<Vec<usize>>`.
//!
//! A type may refer to itself through a record's field (`type Tree = {
//! children: List[Tree] }`): a value of it is finite. Anywhere else — an
//! alias (`type T = T`), a list or map (`type A = List[A]`), a union
//! (`type A = A | Int`), a refinement's base (`type A = A require …`) — the
//! reference never reaches a value, and validating one would never end.
//! Inheritance cycles are the checker's own error (`InheritanceCycle`).

use rustc_hash::FxHashMap;

use crate::syntax::ast::{TypeBody, TypeDecl, TypeExpr};

/// Every cycle among `decls`, each as positions in `decls` starting with
/// its earliest declaration; a declaration is in at most one reported cycle.
pub fn type_cycles(decls: &[&TypeDecl]) -> Vec<Vec<usize>> {
    let index: FxHashMap<&str, usize> = decls
        .iter()
        .enumerate()
        .map(|(i, d)| (d.name.text.as_str(), i))
        .collect();
    let edges: Vec<Vec<usize>> = decls
        .iter()
        .map(|d| {
            let mut names = Vec::new();
            if let TypeBody::Refine { base, .. } = &d.body {
                unguarded(base, &mut names);
            }
            names.iter().filter_map(|n| index.get(n).copied()).collect()
        })
        .collect();
    Search::new(&edges).run()
}

/// The names `t` refers to with no record field in between.
fn unguarded<'a>(t: &'a TypeExpr, out: &mut Vec<&'a str>) {
    match t {
        TypeExpr::Name(n) => out.push(&n.text),
        TypeExpr::Generic { args, .. } => args.iter().for_each(|a| unguarded(a, out)),
        TypeExpr::Union(members) => members.iter().for_each(|m| unguarded(m, out)),
        TypeExpr::Record { .. } | TypeExpr::Literal(..) => {}
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mark {
    Unvisited,
    OnPath,
    Done,
}

/// A depth-first search with its own stack, so that a long chain of
/// aliases cannot overflow the thread's.
struct Search<'a> {
    edges: &'a [Vec<usize>],
    marks: Vec<Mark>,
    in_cycle: Vec<bool>,
    cycles: Vec<Vec<usize>>,
}

impl<'a> Search<'a> {
    fn new(edges: &'a [Vec<usize>]) -> Search<'a> {
        Search {
            edges,
            marks: vec![Mark::Unvisited; edges.len()],
            in_cycle: vec![false; edges.len()],
            cycles: Vec::new(),
        }
    }

    fn run(mut self) -> Vec<Vec<usize>> {
        for root in 0..self.edges.len() {
            if self.marks[root] == Mark::Unvisited {
                self.from(root);
            }
        }
        self.cycles
    }

    fn from(&mut self, root: usize) {
        // The path from the root: each node and the next edge to follow.
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        self.marks[root] = Mark::OnPath;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            let Some(&to) = self.edges[node].get(*next) else {
                self.marks[node] = Mark::Done;
                path.pop();
                continue;
            };
            *next += 1;
            match self.marks[to] {
                Mark::Unvisited => {
                    self.marks[to] = Mark::OnPath;
                    path.push((to, 0));
                }
                Mark::OnPath => self.found(&path, to),
                Mark::Done => {}
            }
        }
    }

    /// A back edge to `to`, which is on the path: the path from it is a cycle.
    fn found(&mut self, path: &[(usize, usize)], to: usize) {
        let start = path.iter().position(|(n, _)| *n == to).unwrap_or(0);
        let mut cycle: Vec<usize> = path[start..].iter().map(|(n, _)| *n).collect();
        if cycle.iter().any(|&n| self.in_cycle[n]) {
            return;
        }
        for &n in &cycle {
            self.in_cycle[n] = true;
        }
        let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
        cycle.rotate_left(first);
        self.cycles.push(cycle);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::Stmt;
    use crate::syntax::parser::parse;

    fn cycles(src: &str) -> Vec<Vec<String>> {
        let module = parse(src).expect("parses");
        let decls: Vec<&TypeDecl> = module
            .stmts
            .iter()
            .filter_map(|s| match s {
                Stmt::Type(t) => Some(t),
                _ => None,
            })
            .collect();
        type_cycles(&decls)
            .into_iter()
            .map(|c| c.into_iter().map(|i| decls[i].name.text.clone()).collect())
            .collect()
    }

    #[test]
    fn aliases_lists_unions_and_refinements_close_cycles() {
        assert_eq!(cycles("type T = T"), vec![vec!["T"]]);
        assert_eq!(cycles("type B = A\ntype A = B"), vec![vec!["B", "A"]]);
        assert_eq!(cycles("type A = List[A]"), vec![vec!["A"]]);
        assert_eq!(cycles("type A = A | Int"), vec![vec!["A"]]);
        assert_eq!(cycles("type A = A require self > 0"), vec![vec!["A"]]);
    }

    #[test]
    fn a_record_field_breaks_the_cycle() {
        assert!(cycles("type Tree = { children: List[Tree] }").is_empty());
        assert!(cycles("type A = List[{ next?: A }]").is_empty());
        assert!(cycles("type A = Int\ntype B = A | A").is_empty());
    }

    #[test]
    fn a_long_chain_does_not_overflow() {
        let mut src: String = (0..100_000)
            .map(|i| format!("type A{i} = A{}\n", i + 1))
            .collect();
        src.push_str("type A100000 = A0\n");
        assert_eq!(cycles(&src)[0].len(), 100_001);
    }
}
