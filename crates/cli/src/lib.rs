//! mqwatch-cli: the `mqwatch` binary's library half — command line, config, state directory, the
//! collect-and-check cycle, `check` and `serve`. A library so integration tests can drive the same code the
//! binary runs; `main.rs` only parses arguments and maps the result to an exit code.

pub mod audit;
pub mod check;
pub mod cli;
pub mod config;
pub mod demo;
pub mod run;
pub mod serve;
pub mod state;
