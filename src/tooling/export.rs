//! `export`: see the floor's documentation.
