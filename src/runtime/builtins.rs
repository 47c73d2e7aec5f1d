//! The builtin functions' names and signatures (language.md §6.1), shared by
//! the checker (arity, named arguments) and the evaluator (dispatch).
//! And `Format`, a handle on a format's registry entry (`FormatDef`):
//! the registry itself is `crate::formats::FORMATS`, above this floor;
//! and `Compression`, what a file's bytes may be compressed with beneath
//! its format.

macro_rules! builtins {
    ($($variant:ident = $name:literal ($min:literal ..= $max:literal) [$($named:literal),*];)*) => {
        /// A builtin function.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Builtin { $($variant),* }

        impl Builtin {
            pub const ALL: &'static [Builtin] = &[$(Builtin::$variant),*];

            pub fn name(self) -> &'static str {
                match self { $(Builtin::$variant => $name),* }
            }

            /// Positional arguments (counting a pipe's left side): min, max.
            pub fn arity(self) -> (usize, usize) {
                match self { $(Builtin::$variant => ($min, $max)),* }
            }

            pub fn named_params(self) -> &'static [&'static str] {
                match self { $(Builtin::$variant => &[$($named),*]),* }
            }
        }
    };
}

builtins! {
    Source = "source" (1..=2) [];
    File = "file" (1..=1) [];
    Stdin = "stdin" (0..=0) [];
    Validate = "validate" (2..=2) [];
    Oks = "oks" (1..=1) [];
    Errs = "errs" (1..=1) [];
    Warnings = "warnings" (1..=1) [];
    Unwrap = "unwrap" (1..=1) [];
    Report = "report" (1..=1) [];
    Map = "map" (2..=2) [];
    Filter = "filter" (2..=2) [];
    FlatMap = "flat_map" (2..=2) [];
    Take = "take" (2..=2) [];
    Skip = "skip" (2..=2) [];
    Count = "count" (1..=1) [];
    Sum = "sum" (1..=1) [];
    Min = "min" (1..=1) [];
    Max = "max" (1..=1) [];
    Avg = "avg" (1..=1) [];
    First = "first" (1..=1) [];
    All = "all" (2..=2) [];
    Any = "any" (2..=2) [];
    Sort = "sort" (1..=1) [];
    SortBy = "sort_by" (2..=2) [];
    Distinct = "distinct" (1..=1) [];
    CountBy = "count_by" (2..=2) [];
    GroupBy = "group_by" (2..=2) [];
    Collect = "collect" (1..=1) [];
    Write = "write" (2..=3) [];
    Route = "route" (1..=1) ["ok", "err"];
    Param = "param" (1..=2) [];
    Env = "env" (1..=2) [];
    Fmt = "fmt" (1..=64) [];
    Len = "len" (1..=1) [];
    Lower = "lower" (1..=1) [];
    Upper = "upper" (1..=1) [];
    Trim = "trim" (1..=1) [];
    Contains = "contains" (2..=2) [];
    StartsWith = "starts_with" (2..=2) [];
    EndsWith = "ends_with" (2..=2) [];
    Matches = "matches" (2..=2) [];
    Replace = "replace" (3..=3) [];
    Split = "split" (2..=2) [];
    Join = "join" (2..=2) [];
    Abs = "abs" (1..=1) [];
    Round = "round" (1..=1) [];
    Floor = "floor" (1..=1) [];
    Ceil = "ceil" (1..=1) [];
    Int = "int" (1..=1) [];
    Float = "float" (1..=1) [];
    String = "string" (1..=1) [];
    Keys = "keys" (1..=1) [];
    Values = "values" (1..=1) [];
    Has = "has" (2..=2) [];
    Get = "get" (2..=3) [];
    Merge = "merge" (2..=2) [];
    Ok = "ok" (1..=1) [];
    Err = "err" (1..=1) [];
    IsOk = "is_ok" (1..=1) [];
    IsErr = "is_err" (1..=1) [];
}

impl Builtin {
    pub fn lookup(name: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.name() == name)
    }

    /// Stages whose first argument is a stream and whose lambda argument is
    /// a filter: a bare `x?` there is a presence test (§4.4).
    pub fn takes_predicate(self) -> bool {
        matches!(self, Builtin::Filter | Builtin::All | Builtin::Any)
    }

    /// Does a call run when its argument at `position` is absent, taking
    /// it as null? Only `get`'s first (like `??`, language.md §6.1); any
    /// other call with an absent argument is absent without running (§4.4).
    pub fn runs_with_absent(self, position: usize) -> bool {
        self == Builtin::Get && position == 0
    }

    /// Is a bare `x?` as the whole body of its lambda, written in place, a
    /// presence test? Only in `filter`'s: in `all`'s and `any`'s it is the
    /// value (language.md §4.4).
    pub fn tests_presence(self) -> bool {
        matches!(self, Builtin::Filter)
    }

    /// Does it take its format's options as named arguments after its
    /// positional ones (`source(file("p.csv"), Csv, delimiter: ";")`)?
    /// They reach the evaluator as one record after every positional
    /// argument (`format_options_at`).
    pub fn takes_format_options(self) -> bool {
        matches!(self, Builtin::Source | Builtin::Write)
    }

    /// Where the record of format options stands among the lowered
    /// arguments: after the most positional ones it takes.
    pub fn format_options_at(self) -> usize {
        self.arity().1
    }
}

/// What to write instead of `write` of results, said by the static error
/// and by the runtime one (a stream whose type the checker did not know).
pub const WRITE_RESULTS_HELP: &str = "keep the valid records with `oks()`, stop at the first failure with `unwrap()`, or send both to files with `route(ok: …, err: …)`";

/// What a format is, as its registry entry describes it
/// (`crate::formats::FORMATS` holds one for each, beside its codec): the
/// data the checker and the runtime read of a format without knowing which
/// formats there are (tooling.md, "Sources, targets and the schema
/// boundary").
#[derive(Debug)]
pub struct FormatDef {
    /// Its name as a program writes it (`Json`), in messages and printed
    /// values.
    pub name: &'static str,
    /// Can a program name it (`source(file(…), Json)`)? A format that only
    /// configured sources read (SQLite) cannot.
    pub in_programs: bool,
    /// The file extensions it is the format of, lower case, without the
    /// dot: a path's default format, for `write`, `hql.toml`, `hql vet` and
    /// `hql infer` alike. Help texts name these.
    pub extensions: &'static [&'static str],
    /// Extensions it is the format of too, which help texts leave out
    /// (`ndjson`).
    pub more_extensions: &'static [&'static str],
    /// The extensions whose files a target of it writes as one document
    /// (a `.json` file: one array) rather than one record a line.
    pub whole_extensions: &'static [&'static str],
    /// Extensions and names people use for it that are not its own
    /// (`jsonl` for `Json`, `tsv` for `Csv`): "did you mean" hints, and
    /// data files given where a program was wanted.
    pub synonyms: &'static [&'static str],
    /// The options it takes (tooling.md, "Format options"): named after
    /// the format in a program, in its table of `hql.toml`, as flags of
    /// `hql vet` and `hql infer`.
    pub options: &'static [FormatOption],
}

impl FormatDef {
    /// A database's format: named only by sources and targets configured
    /// in `hql.toml`, never by a program or an extension.
    pub const fn database(name: &'static str) -> FormatDef {
        FormatDef {
            name,
            in_programs: false,
            extensions: &[],
            more_extensions: &[],
            whole_extensions: &[],
            synonyms: &[],
            options: &[],
        }
    }
}

/// An option of a format: how a source of it is read or a target written
/// (`delimiter: ";"`, `at: "/data"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FormatOption {
    Delimiter,
    Quote,
    Nulls,
    Encoding,
    Header,
    EscapeFormulas,
    At,
}

impl FormatOption {
    pub const ALL: &'static [FormatOption] = &[
        FormatOption::Delimiter,
        FormatOption::Quote,
        FormatOption::Nulls,
        FormatOption::Encoding,
        FormatOption::Header,
        FormatOption::EscapeFormulas,
        FormatOption::At,
    ];

    /// Its name in programs, in `hql.toml` and (with `--`) as a flag.
    pub fn name(self) -> &'static str {
        match self {
            FormatOption::Delimiter => "delimiter",
            FormatOption::Quote => "quote",
            FormatOption::Nulls => "nulls",
            FormatOption::Encoding => "encoding",
            FormatOption::Header => "header",
            FormatOption::EscapeFormulas => "escape_formulas",
            FormatOption::At => "at",
        }
    }

    /// Does it say how a source is read?
    pub fn reads(self) -> bool {
        self != FormatOption::EscapeFormulas
    }

    /// Does it say how a target is written?
    pub fn writes(self) -> bool {
        matches!(
            self,
            FormatOption::Delimiter
                | FormatOption::Quote
                | FormatOption::Header
                | FormatOption::EscapeFormulas
        )
    }

    /// What its value is, for messages: "one character".
    pub fn takes(self) -> &'static str {
        match self {
            FormatOption::Delimiter | FormatOption::Quote => "one character",
            FormatOption::Nulls => "a list of strings",
            FormatOption::Encoding => "the name of an encoding",
            FormatOption::Header | FormatOption::EscapeFormulas => "true or false",
            FormatOption::At => "a JSON pointer",
        }
    }
}

impl Format {
    /// The options a source (`reading`) or a target of it takes, in order.
    pub fn options(self, reading: bool) -> impl Iterator<Item = FormatOption> {
        (self.0.options.iter().copied())
            .filter(move |o| if reading { o.reads() } else { o.writes() })
    }

    /// The option a source (`reading`) or a target of it takes named `name`.
    pub fn option(self, name: &str, reading: bool) -> Option<FormatOption> {
        self.options(reading).find(|o| o.name() == name)
    }
}

/// A format: a handle on its registry entry, which the checker and the
/// runtime carry without knowing the members. Two handles are the same
/// format when they name the same one.
#[derive(Clone, Copy)]
pub struct Format(&'static FormatDef);

impl Format {
    pub const fn new(def: &'static FormatDef) -> Format {
        Format(def)
    }

    pub fn def(self) -> &'static FormatDef {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// Is it the format of files named like `path` (by its extension,
    /// after a compression's: `orders.jsonl.gz` is JSON)?
    pub fn is_format_of(self, path: &str) -> bool {
        has_extension(path, self.0.extensions) || has_extension(path, self.0.more_extensions)
    }

    /// Does a file target of this format at `path` hold one document (a
    /// `.json` file: one JSON array) rather than one record a line?
    pub fn writes_whole(self, path: &str) -> bool {
        has_extension(path, self.0.whole_extensions)
    }
}

/// Does `path`'s extension (the one before a compression's), in any
/// case, stand among `extensions`?
fn has_extension(path: &str, extensions: &[&str]) -> bool {
    format_extension(path).is_some_and(|e| extensions.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// The extension that tells the format of a file named `path`: its last,
/// or the one before a compression's (`jsonl` of `orders.jsonl.gz`).
pub fn format_extension(path: &str) -> Option<&str> {
    let path = std::path::Path::new(path);
    let path = match Compression::of_name(&path.to_string_lossy()) {
        Some(_) => std::path::Path::new(path.file_stem()?),
        None => path,
    };
    path.extension().and_then(|e| e.to_str())
}

/// What a file's bytes may be compressed with, beneath its format
/// (tooling.md, "Compressed files"): a source's is found by its first
/// bytes, never its name; a target's is chosen by its name's last
/// extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    pub const ALL: [Compression; 2] = [Compression::Gzip, Compression::Zstd];

    /// How many first bytes of a file `of_bytes` needs to tell.
    pub const MAGIC_LEN: usize = 4;

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }

    /// The extension of its files, lower case, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Compression::Gzip => "gz",
            Compression::Zstd => "zst",
        }
    }

    fn magic(self) -> &'static [u8] {
        match self {
            Compression::Gzip => &[0x1f, 0x8b],
            Compression::Zstd => &[0x28, 0xb5, 0x2f, 0xfd],
        }
    }

    /// The compression whose stream `start`, a file's first bytes (up to
    /// `MAGIC_LEN` of them), begins.
    pub fn of_bytes(start: &[u8]) -> Option<Compression> {
        Compression::ALL
            .into_iter()
            .find(|c| start.starts_with(c.magic()))
    }

    /// The compression a file named `path` is written with, by its last
    /// extension, in any case (`out.jsonl.gz`).
    pub fn of_name(path: &str) -> Option<Compression> {
        let ext = std::path::Path::new(path).extension()?.to_str()?;
        (Compression::ALL.into_iter()).find(|c| c.extension().eq_ignore_ascii_case(ext))
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Format {}

impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.name.hash(h);
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compression's name and magic bytes tell it; the format comes
    /// from the extension before it.
    #[test]
    fn a_compression_is_told_by_its_bytes_and_named_by_its_extension() {
        assert_eq!(
            Compression::of_bytes(&[0x1f, 0x8b, 8, 0]),
            Some(Compression::Gzip)
        );
        assert_eq!(
            Compression::of_bytes(&[0x28, 0xb5, 0x2f, 0xfd]),
            Some(Compression::Zstd)
        );
        assert_eq!(Compression::of_bytes(&[0x28, 0xb5]), None);
        assert_eq!(Compression::of_bytes(b"{\"a\""), None);
        assert_eq!(
            Compression::of_name("out/x.jsonl.GZ"),
            Some(Compression::Gzip)
        );
        assert_eq!(Compression::of_name("x.json.zst"), Some(Compression::Zstd));
        assert_eq!(Compression::of_name("x.gz.jsonl"), None);
        assert_eq!(format_extension("d/orders.csv.gz"), Some("csv"));
        assert_eq!(format_extension("orders.jsonl"), Some("jsonl"));
        assert_eq!(format_extension("orders.gz"), None);
        assert_eq!(format_extension(".gz"), None);
    }

    #[test]
    fn names_round_trip() {
        for b in Builtin::ALL {
            assert_eq!(Builtin::lookup(b.name()), Some(*b));
        }
    }
}
