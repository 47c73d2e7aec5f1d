//! `infer`: see the floor's documentation.
