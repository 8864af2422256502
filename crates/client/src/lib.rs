//! The one way to reach an orchestra daemon: find the one of a state directory (or start it),
//! talk to its HTTP API, and follow its events.

pub mod daemon;
pub mod events;
pub mod http;
