//! orchestra: a terminal cockpit for coding agents.
//!
//! Front ends (`tui`, `api`, `cli`) talk to the `engine`; the engine owns all state and uses
//! `session`, `providers` and `store`. Nothing below the engine knows a front end exists.

pub mod api;
pub mod boot;
pub mod cli;
pub mod credentials;
pub mod daemon;
pub mod engine;
pub mod git;
pub mod niceness;
pub mod output_line;
pub mod providers;
pub mod session;
pub mod state_dir;
pub mod store;
pub mod task;
pub mod task_output;
pub mod tui;
pub mod wire;
