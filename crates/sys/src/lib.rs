//! What orchestra needs of the machine it runs on: the state directory and its private files,
//! the file a daemon announces itself in, other processes, and thread priorities. Everything
//! Linux-specific that is not a PTY lives here, behind functions a port to another system
//! would implement again (see docs/architecture.md).

pub mod credentials;
pub mod niceness;
pub mod paths;
pub mod private;
pub mod process;
pub mod server_file;
pub mod state_dir;
