//! The standard library (`stdlib/*.hql`), embedded in the binary and loaded
//! before every program.

/// (name, text) of each standard library file, in load order.
pub const FILES: &[(&str, &str)] = &[];
