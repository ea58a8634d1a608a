//! Settings: how a config struct reads the user's TOML shape, prints its
//! canonical form and describes itself.
//!
//! **Models:** each setting is declared once, in the config struct beside the
//! mechanism that uses it, with the [`settings!`](crate::settings!) macro: its
//! key in the user's table, its field and type, its default, how its values are
//! written (a [`Spec`]: units, bounds, words such as `"off"`), and its doc
//! comment, which becomes its line in the schema (and so in `--help`, `--set`
//! help and docs). From that one declaration come the struct, its `Default`,
//! reading a table of user values ([`Table::read`]), the canonical form with
//! human units and in plain SI numbers ([`Table::write`]) and the schema
//! ([`Table::describe`]). Values arrive as JSON (the TOML a user wrote, or a
//! `--set` string) and become typed values at once; nothing downstream parses
//! a string again.
//! **Deliberately different:** not serde's derive: a setting's table key may
//! differ from its field (`tcp.rto_min` is `RtoConfig::min`), sub-configs are
//! flattened into their table (`[tcp]` holds `rto_min`), strings from the
//! command line are accepted where TOML would give a number or a boolean, and
//! every error names the setting and what it allows, in one line.
//! **Not modelled:** settings whose value is itself a table (a topology
//! graph's nodes and links are read by `net::fabric_table`).

mod quantity;
mod spec;

pub use quantity::{packet_count, Duration, Rate, Size};
pub use spec::{python_repr, Choice, Count, Flag, Number, OrWord, Probability, Scaled};

use serde_json::{Map, Value as Json};

/// How the values of one setting are read, written and described.
pub trait Spec<T> {
    /// A user's value (a TOML value, or a string from `--set`) as a typed
    /// value; the error says what is allowed, without the setting's name.
    fn parse(&self, raw: &Json) -> Result<T, String>;
    /// The canonical TOML value, in human units (`"200ms"`).
    fn toml(&self, value: &T) -> Json;
    /// The value in plain SI numbers (seconds, bit/s, bytes); words such as
    /// `"off"` stay words.
    fn si(&self, value: &T) -> Json {
        self.toml(value)
    }
    /// The type's name in the schema: `duration`, `rate`, `size`, `count`, ...
    fn kind(&self) -> &'static str;
    /// What a value may be, in words.
    fn allowed(&self) -> String;
    /// The word that means "none" for an optional setting (`off`, `all`, ...).
    fn none_word(&self) -> Option<&'static str> {
        None
    }
}

/// One setting of a table, as [`Table::write`] gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Its key in the table.
    pub key: &'static str,
    /// The canonical TOML value.
    pub toml: Json,
    /// The value in plain SI numbers.
    pub si: Json,
}

/// One setting's line in the schema, as [`Table::describe`] gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// Its key in the table (the scenario adds the table's name).
    pub key: &'static str,
    /// The type's name: `duration`, `rate`, `size`, `count`, `flag`, `choice`, ...
    pub kind: &'static str,
    /// The default, as canonical TOML.
    pub default: Json,
    /// What a value may be, in words.
    pub allowed: String,
    /// The word meaning none, for optional settings.
    pub none: Option<&'static str>,
    /// The doc comment of the field.
    pub doc: String,
}

/// A config struct read from, and written to, one table of user settings.
/// Implemented by [`settings!`](crate::settings!).
pub trait Table: Default {
    /// Read one key into `self`; `None` when the key is not one of this table's.
    fn read(&mut self, key: &str, raw: &Json) -> Option<Result<(), String>>;
    /// Every setting, in declaration order.
    fn write(&self, out: &mut Vec<Entry>);
    /// Every setting's schema line, in declaration order.
    fn describe(out: &mut Vec<Setting>);
}

/// The keys of a table, in order: for "unknown setting" messages.
pub fn keys<T: Table>() -> Vec<&'static str> {
    let mut out = Vec::new();
    T::describe(&mut out);
    out.into_iter().map(|s| s.key).collect()
}

/// Read a whole table (a JSON object) into `T`, starting from its defaults.
///
/// Errors are `(key, message)`: the key is the offending setting's, the
/// message says what it allows, or which settings the table has.
pub fn read_table<T: Table>(table: &str, raw: &Map<String, Json>) -> Result<T, (String, String)> {
    let mut out = T::default();
    for (key, value) in raw {
        match out.read(key, value) {
            Some(Ok(())) => {}
            Some(Err(message)) => return Err((key.clone(), message)),
            None => return Err((key.clone(), unknown(table, &keys::<T>(), key))),
        }
    }
    Ok(out)
}

/// "unknown setting; did you mean rto_min?" when one of the table's `keys`
/// is close to `key`, else "unknown setting; [tcp] has mss, init_cwnd, ...".
pub fn unknown(table: &str, keys: &[&str], key: &str) -> String {
    match closest(key, keys.iter().copied()) {
        Some(near) => format!("unknown setting; did you mean {near}?"),
        None => format!("unknown setting; [{table}] has {}", keys.join(", ")),
    }
}

/// The one of `names` closest to `word` when it is close enough to be a
/// slip of the keyboard: at most one edit (insertion, deletion, change or
/// swap of neighbours) per three letters of `word`, and at least one.
pub fn closest<'a>(word: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let most = (word.chars().count() / 3).max(1);
    names.into_iter().map(|n| (edits(word, n), n)).filter(|&(d, _)| d <= most).min_by_key(|&(d, _)| d).map(|(_, n)| n)
}

/// Edits between `a` and `b` (optimal string alignment distance).
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let change = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + change);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// The first paragraph of a doc comment, as one line.
pub fn doc_line(lines: &[&str]) -> String {
    let mut out = String::new();
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            if out.is_empty() {
                continue;
            }
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// Declare a config struct whose fields are settings of one table.
///
/// ```ignore
/// settings! {
///     /// Retransmission-timer knobs (RFC 6298).
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub struct RtoConfig {
///         /// Lower bound on the retransmission timeout (RTO_min).
///         "rto_min" min: SimDuration = SimDuration::from_millis(200), Duration::ANY;
///     }
/// }
/// ```
///
/// Each field is `"key" field: Type = default, spec;` with its doc comment.
/// Sub-configs whose settings sit in the same table follow in
/// `flatten { field: Type, ... }`.
#[macro_export]
macro_rules! settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $key:literal $field:ident : $ty:ty = $default:expr, $spec:expr;
            )*
        }
        $(flatten {
            $( $(#[doc = $fdoc:literal])* $ffield:ident : $fty:ty ),* $(,)?
        })?
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )*
            $($( $(#[doc = $fdoc])* pub $ffield: $fty, )*)?
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $( $field: $default, )*
                    $($( $ffield: <$fty>::default(), )*)?
                }
            }
        }

        impl $crate::settings::Table for $name {
            fn read(&mut self, key: &str, raw: &serde_json::Value) -> Option<Result<(), String>> {
                #[allow(unused_imports)]
                use $crate::settings::Spec as _;
                match key {
                    $( $key => Some(($spec).parse(raw).map(|v| self.$field = v)), )*
                    _ => {
                        $($( if let Some(r) = self.$ffield.read(key, raw) { return Some(r); } )*)?
                        None
                    }
                }
            }

            fn write(&self, out: &mut Vec<$crate::settings::Entry>) {
                #[allow(unused_imports)]
                use $crate::settings::Spec as _;
                $( out.push($crate::settings::Entry {
                    key: $key,
                    toml: ($spec).toml(&self.$field),
                    si: ($spec).si(&self.$field),
                }); )*
                $($( self.$ffield.write(out); )*)?
            }

            fn describe(out: &mut Vec<$crate::settings::Setting>) {
                #[allow(unused_imports)]
                use $crate::settings::Spec as _;
                let defaults = <$name>::default();
                $( out.push($crate::settings::Setting {
                    key: $key,
                    kind: $crate::settings::Spec::<$ty>::kind(&($spec)),
                    default: ($spec).toml(&defaults.$field),
                    allowed: $crate::settings::Spec::<$ty>::allowed(&($spec)),
                    none: $crate::settings::Spec::<$ty>::none_word(&($spec)),
                    doc: $crate::settings::doc_line(&[$($doc),*]),
                }); )*
                $($( <$fty as $crate::settings::Table>::describe(out); )*)?
            }
        }
    };
}
