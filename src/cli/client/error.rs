//! How a client command fails: a sentence for stderr and an exit code a script can trust.

use std::process::ExitCode;

/// Exit codes of the client subcommands (documented in their `--help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The server refused the request (a 4xx, a 503 saying what it lacks, e.g. a provider
    /// that is not installed, or a 502 saying what failed beyond it, e.g. a push), or the
    /// request cannot apply to what is there.
    Refused = 1,
    /// The command line is wrong (clap uses 2 for its own usage errors too).
    Usage = 2,
    /// No orchestra answers: no server.json, connection refused, timed out.
    Unreachable = 3,
    /// The server failed (a 500, or a 5xx without orchestra's `{"error"}` answer) or answered
    /// with something that is not the API.
    Server = 4,
}

#[derive(Debug)]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
    /// The HTTP status of the server's answer, when the error is one.
    pub http_status: Option<u16>,
}

pub type CliResult<T> = Result<T, CliError>;

impl CliError {
    pub fn new(exit: Exit, message: impl Into<String>) -> CliError {
        CliError {
            exit,
            message: message.into(),
            http_status: None,
        }
    }
    pub fn refused(message: impl Into<String>) -> CliError {
        CliError::new(Exit::Refused, message)
    }
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::new(Exit::Usage, message)
    }
    pub fn unreachable(message: impl Into<String>) -> CliError {
        CliError::new(Exit::Unreachable, message)
    }
    pub fn server(message: impl Into<String>) -> CliError {
        CliError::new(Exit::Server, message)
    }

    /// The same error, marked as the server's answer with this HTTP status.
    pub fn with_http_status(mut self, status: u16) -> CliError {
        self.http_status = Some(status);
        self
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.exit as u8)
    }
}

/// The long-help text every client subcommand carries.
pub const EXIT_CODES_HELP: &str = "\
Finding orchestra: --url URL, else $ORCHESTRA_URL, else the server.json that a running orchestra
writes into its state directory (--state-dir, $ORCHESTRA_STATE_DIR, else the default one).
Token: --token / $ORCHESTRA_TOKEN, else the token in that server.json (when its URL is the one used).

Exit codes:
  0  success
  1  the server refused the request (4xx: unknown id, bad value, not allowed in the current state;
     or 503 with its reason, e.g. the task's provider is not installed; or 502 with the reason a
     program beyond orchestra failed, e.g. git's for a push)
  2  usage error (bad flags or arguments)
  3  cannot reach orchestra (no server.json, connection refused or timed out)
  4  the server failed (500, or a 5xx that is not orchestra's answer) or did not answer like orchestra";
