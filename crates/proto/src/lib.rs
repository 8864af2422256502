//! The words orchestra speaks, shared by the daemon and every front end: the task model, the
//! JSON wire types of the HTTP API and the event stream, the key encoder, and the few rules
//! (sizes, clocks, units) both sides must agree on. Nothing here does I/O, so a front end
//! that depends on this crate alone cannot reach into the daemon.

pub mod clock;
pub mod keys;
pub mod prompt;
pub mod routes;
pub mod task;
pub mod terminal;
pub mod trust;
pub mod units;
pub mod wire;
pub mod worktree;
