//! The standard library (`stdlib/*.hql`), embedded in the binary and loaded
//! before every program.

/// (name, text) of each standard library file, in load order.
pub const FILES: &[(&str, &str)] = &[
    ("stdlib/text.hql", include_str!("../../stdlib/text.hql")),
    ("stdlib/time.hql", include_str!("../../stdlib/time.hql")),
    ("stdlib/codes.hql", include_str!("../../stdlib/codes.hql")),
    (
        "stdlib/numbers.hql",
        include_str!("../../stdlib/numbers.hql"),
    ),
];
