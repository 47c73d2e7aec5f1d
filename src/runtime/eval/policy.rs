//! A database table target as `hql.toml` configures it: what it does when
//! its records' shape drifts from the table's live schema, and how it
//! writes (`mode` and `schema = { … }` of a SQLite target; tooling.md and
//! seed `003`). `session::config` parses these; the format's table target
//! (`Codec::tables`) applies them.

/// A configured table target: which table of which database, and how it
/// is written.
#[derive(Debug, Clone, PartialEq)]
pub struct TableTarget {
    pub id: String,
    /// The database: a file, or a server by its URL.
    pub at: super::io::DatabaseAt,
    /// Where recovery finds a server again (its URL is not written down,
    /// for its password): the configuration file and this target's id.
    pub recover: Option<(std::path::PathBuf, String)>,
    /// The fields whose columns are `numeric` (a PostgreSQL target's
    /// `columns`).
    pub numeric: Vec<String>,
    /// The path as written in `hql.toml`, for messages.
    pub written: String,
    pub table: String,
    pub mode: WriteMode,
    pub create_table: bool,
    pub schema: SchemaPolicy,
}

/// `schema = { … }` of a SQLite target: what to do when a batch's shape
/// drifts from the table's (seed `003`, faucet's `schema:` block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaPolicy {
    pub on_drift: OnDrift,
    /// A lossless widening counts as evolvable (consulted by `evolve` only).
    pub allow_type_widening: bool,
    /// What `evolve` does with a change it cannot apply.
    pub on_incompatible: OnIncompatible,
    /// May `evolve` drop NOT NULL from a column a batch merely omits? Off by
    /// default: one batch's omission is no evidence the column is optional.
    pub relax_nullability_on_missing: bool,
    /// The target quarantined records go to (a configured JSON file target);
    /// `None` leaves it to `route`'s `err` target.
    pub dead_letters: Option<String>,
}

impl Default for SchemaPolicy {
    fn default() -> Self {
        SchemaPolicy {
            on_drift: OnDrift::default(),
            allow_type_widening: true,
            on_incompatible: OnIncompatible::default(),
            relax_nullability_on_missing: false,
            dead_letters: None,
        }
    }
}

/// An enumerated config value: the enum, its spellings in `hql.toml`
/// (`CHOICES`, for parsing and for help) and `name` (for messages).
macro_rules! config_enum {
    ($(#[$doc:meta])* $name:ident {
        $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)?
    }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// The spellings `hql.toml` accepts.
            pub const CHOICES: &'static [(&'static str, $name)] =
                &[$(($text, $name::$variant)),+];

            /// The value as `hql.toml` spells it.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
    };
}

config_enum! {
    /// `mode` of a SQLite target.
    #[derive(Default)]
    WriteMode {
        /// Add rows; the default, since losing rows must be asked for.
        #[default]
        Append = "append",
        /// Empty the table, then add rows (in the run's one transaction).
        Replace = "replace",
        /// Insert or update on the contract's `unique` key.
        Upsert = "upsert",
    }
}

config_enum! {
    /// `schema.on_drift`: the policy when a batch's shape differs.
    #[derive(Default)]
    OnDrift {
        /// Report the drift and write unchanged (the default).
        #[default]
        Warn = "warn",
        /// Drop the fields the table has no column for.
        Ignore = "ignore",
        /// Stop the run: a runtime error, so the targets are abandoned.
        Fail = "fail",
        /// Send drifting records to the dead letters.
        Quarantine = "quarantine",
        /// Add columns and widen types, then write.
        Evolve = "evolve",
    }
}

config_enum! {
    /// `schema.on_incompatible`: what `evolve` does with a narrowing or an
    /// unrelated type change.
    #[derive(Default)]
    OnIncompatible {
        /// Stop the run (the default).
        #[default]
        Fail = "fail",
        /// Send the offending records to the dead letters.
        Quarantine = "quarantine",
    }
}
