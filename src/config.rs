//! `hql.toml`: configured sources and targets, and the schema boundary.
