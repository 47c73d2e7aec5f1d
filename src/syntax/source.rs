//! The files of one program — the standard library, the main file and its
//! imports — laid end to end in one span space, so a span alone says which
//! file it points into.

use crate::syntax::ast::Span;

#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// Offset of the file's first byte in the program's span space.
    pub base: usize,
    /// Where each line after the first starts, found when first asked.
    line_starts: std::cell::OnceCell<Vec<usize>>,
}

impl SourceFile {
    /// The line (from 1) holding byte `offset` of the file; a binary search,
    /// so that naming the line of every statement costs no more than the
    /// file's length.
    pub fn line(&self, offset: usize) -> usize {
        let starts = self.line_starts.get_or_init(|| {
            memchr::memchr_iter(b'\n', self.text.as_bytes())
                .map(|i| i + 1)
                .collect()
        });
        starts.partition_point(|&start| start <= offset) + 1
    }
}

#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// Add a file; returns the base offset its spans start at.
    pub fn add(&mut self, name: &str, text: &str) -> usize {
        // One byte of gap keeps an end-of-file span inside its own file.
        let base = self.end();
        self.files.push(SourceFile {
            name: name.to_string(),
            text: text.to_string(),
            base,
            line_starts: std::cell::OnceCell::new(),
        });
        base
    }

    /// The file holding `span`, and the span relative to that file.
    pub fn locate(&self, span: &Span) -> Option<(&SourceFile, Span)> {
        let file = self.files.iter().rev().find(|f| f.base <= span.start)?;
        let start = span.start - file.base;
        Some((file, start..span.end.saturating_sub(file.base).max(start)))
    }

    /// Forget the files added after the first `len` (a check that runs
    /// nothing leaves no trace).
    pub fn truncate(&mut self, len: usize) {
        self.files.truncate(len);
    }

    /// Where the next file's spans would start: every offset so far is
    /// below it.
    pub fn end(&self) -> usize {
        (self.files.last()).map_or(0, |f| f.base + f.text.len() + 1)
    }

    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_find_their_file() {
        let mut map = SourceMap::default();
        let a = map.add("a.hql", "let x = 1\n");
        let b = map.add("b.hql", "x + 1\n");
        assert_eq!(a, 0);
        let (file, span) = map.locate(&(b + 4..b + 5)).unwrap();
        assert_eq!((file.name.as_str(), span), ("b.hql", 4..5));
        assert_eq!(map.locate(&(2..3)).unwrap().0.name, "a.hql");
    }

    #[test]
    fn offsets_find_their_line() {
        let mut map = SourceMap::default();
        map.add("a.hql", "ab\n\ncd\n");
        let file = &map.files()[0];
        let lines: Vec<usize> = (0..=7).map(|o| file.line(o)).collect();
        assert_eq!(lines, [1, 1, 1, 2, 3, 3, 3, 4]);
    }
}
