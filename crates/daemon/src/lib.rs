//! The daemon: one per state directory, it owns every agent. Its HTTP API (`api`) and the
//! boot sequence (`boot`) are its front; the `engine` owns all state (tasks, sessions,
//! autopilot) and drives `session` (PTYs), `providers` (the agent CLIs), `git` (worktrees)
//! and `store` (SQLite). Nothing here knows which front end is on the other end of the API.

pub mod api;
pub mod boot;
pub mod engine;
pub mod forge;
pub mod git;
pub mod guard;
pub mod providers;
pub mod session;
pub mod store;
