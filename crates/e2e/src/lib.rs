//! mqwatch-e2e: no library code. Its `tests/` run mqwatch end to end against real peers started by
//! `mqwatch-testkit` and driven by real clients; it exists so those heavy dev-dependencies stay out of every
//! other crate's build.
