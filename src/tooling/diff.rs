//! `diff`: see the floor's documentation.
