//! "Did you mean": `closest(name, candidates) -> Vec<String>`, the one
//! helper every unknown-name error of the checker (and of `hql.toml`) uses.
//!
//! A candidate that differs from the name only in case comes first; then
//! those within a few edits (a swap of neighbouring letters counting as
//! one, the commonest typo), nearest first. A candidate that shares no
//! letter position with the name (`x` for `y`) is no suggestion.

/// At most this many suggestions.
const MAX_SUGGESTIONS: usize = 3;

/// Names longer than this get no suggestion: measuring costs the product of
/// two names' lengths, and no one types a name that long by hand.
const MAX_HINTED_NAME: usize = 100;

/// The names closest to `name`, best first.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let len = name.chars().count();
    if len > MAX_HINTED_NAME {
        return Vec::new();
    }
    let limit = (len / 3).max(1);
    let folded = name.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .filter(|c| *c != name && *c != "_")
        .filter_map(|c| {
            if c.to_lowercase() == folded {
                return Some((0, c));
            }
            let other = c.chars().count();
            // Cheap bound first: names whose lengths differ by more than
            // the limit cannot be within it.
            if other.abs_diff(len) > limit {
                return None;
            }
            let d = edit_distance(name, c);
            (d <= limit && d < len.max(other)).then_some((d, c))
        })
        .collect();
    scored.sort();
    scored.dedup();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, c)| c.to_string())
        .collect()
}

/// The candidate one edit from `name` (or differing only in case), when
/// there is one: for a read that is allowed but most likely a typo
/// (`c.Orgin` of an open type that declares `Origin`).
pub fn one_edit_away<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let folded = name.to_lowercase();
    closest(name, candidates)
        .into_iter()
        .find(|c| c.to_lowercase() == folded || edit_distance(name, c) == 1)
}

/// HQL's name for a type as other languages spell it (`Integer` →
/// `Int`; a format's are its registry entry's, `Formats::synonym`): too far from HQL's in letters for
/// [`closest`], but what a newcomer types.
pub fn synonym(name: &str) -> Option<&'static str> {
    let meant = match name.to_ascii_lowercase().as_str() {
        "integer" | "long" | "i64" | "i32" | "int64" | "bigint" => "Int",
        "double" | "decimal" | "number" | "f64" | "float64" | "real" => "Float",
        "str" | "text" | "varchar" | "char" => "String",
        "boolean" => "Bool",
        "none" | "nil" | "nothing" | "unit" => "Null",
        "array" | "vec" | "seq" | "sequence" => "List",
        "dict" | "object" | "hashmap" | "dictionary" | "mapping" => "Map",
        _ => return None,
    };
    (meant != name).then_some(meant)
}

/// Edits between two names (optimal string alignment distance).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("speceis", "species"), 1);
        assert_eq!(
            closest("rdier", ["rider", "ride"].into_iter()),
            vec!["rider"]
        );
        assert_eq!(
            closest("Flaot", ["Float", "Bool"].into_iter()),
            vec!["Float"]
        );
        assert_eq!(closest("cout", ["count", "map"].into_iter()), vec!["count"]);
    }

    #[test]
    fn short_names_and_case() {
        assert_eq!(closest("Tt", ["T", "U"].into_iter()), vec!["T"]);
        assert!(closest("x", ["y", "z"].into_iter()).is_empty());
        assert_eq!(
            closest("COUNT", ["count", "cont"].into_iter()),
            vec!["count"]
        );
        assert_eq!(closest("string", ["String"].into_iter()), vec!["String"]);
        assert!(closest("_", ["_"].into_iter()).is_empty());
    }

    #[test]
    fn a_very_long_name_is_cheap() {
        let long = "a".repeat(1_000_000);
        assert!(closest(&long, ["abc", "count"].into_iter()).is_empty());
    }
}
