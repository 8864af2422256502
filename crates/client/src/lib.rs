//! The one way to reach an orchestra daemon: find the one of a state directory (or start it),
//! and talk to its HTTP API.

pub mod daemon;
pub mod http;
