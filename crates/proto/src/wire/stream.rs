//! The messages of a session's terminal stream (`GET …/sessions/:id/stream`, docs/stream.md).

use super::SessionStatus;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Mouse reporting a program asked for (xterm's `?9`, `?1000`, `?1002`, `?1003`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MouseMode {
    #[default]
    None,
    Press,
    PressRelease,
    ButtonMotion,
    AnyMotion,
}

/// How mouse reports are encoded (`?1005` utf8, `?1006` sgr, else the default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MouseEncoding {
    #[default]
    Default,
    Utf8,
    Sgr,
}

/// The terminal modes that change what a client shows or what its keys and mouse must send.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalModes {
    /// The program is on the alternate screen (a full-screen program: vim, less, most agents).
    pub alt_screen: bool,
    /// Application cursor keys (`?1`): arrows send `ESC O A` rather than `ESC [ A`.
    pub app_cursor: bool,
    /// Application keypad (`ESC =`).
    pub app_keypad: bool,
    /// Bracketed paste (`?2004`): pasted text goes between `ESC [200~` and `ESC [201~`.
    pub bracketed_paste: bool,
    pub mouse: MouseMode,
    pub mouse_encoding: MouseEncoding,
    /// The cursor is hidden (`?25l`).
    pub hide_cursor: bool,
}

/// Server → client text messages of `GET /api/coding-agents/sessions/:id/stream`. Binary
/// messages carry terminal output instead (see docs/stream.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum StreamEvent {
    /// First message: the size to create the client's terminal at, before any output.
    Hello {
        session_id: String,
        cols: u16,
        rows: u16,
        status: SessionStatus,
        modes: TerminalModes,
    },
    /// The terminal's size changed: resize the client's terminal before the next output,
    /// which redraws the whole screen.
    Size { cols: u16, rows: u16 },
    /// The modes changed (the output that follows sets them too).
    Modes { modes: TerminalModes },
    /// The session's status changed.
    Status { status: SessionStatus },
    /// The session ended; the output before this was its final screen. Then the server closes.
    Exit {
        exit_code: Option<i32>,
        signal: Option<String>,
    },
    /// A client message could not be applied (the stream goes on).
    Error { error: String },
}

/// Client → server text messages (binary messages are raw input bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum StreamRequest {
    /// Bytes to type into the terminal, as text (keys already encoded: `"\r"` for Enter).
    Input { data: String },
    /// The client's terminal size; the session takes the size of the client that last sent
    /// input or a resize.
    Resize { cols: u16, rows: u16 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_encode_as_documented() {
        let hello = StreamEvent::Hello {
            session_id: "s1".into(),
            cols: 80,
            rows: 24,
            status: SessionStatus::Ready,
            modes: TerminalModes {
                app_cursor: true,
                mouse: MouseMode::ButtonMotion,
                mouse_encoding: MouseEncoding::Sgr,
                ..Default::default()
            },
        };
        assert_eq!(
            serde_json::to_value(&hello).unwrap(),
            json!({"type": "hello", "sessionId": "s1", "cols": 80, "rows": 24, "status": "ready",
                "modes": {"altScreen": false, "appCursor": true, "appKeypad": false,
                    "bracketedPaste": false, "mouse": "buttonMotion", "mouseEncoding": "sgr",
                    "hideCursor": false}})
        );
        let exit = StreamEvent::Exit {
            exit_code: Some(3),
            signal: None,
        };
        assert_eq!(
            serde_json::to_value(&exit).unwrap(),
            json!({"type": "exit", "exitCode": 3, "signal": null})
        );
    }

    #[test]
    fn requests_decode() {
        let r: StreamRequest = serde_json::from_str(r#"{"type":"input","data":"ls\r"}"#).unwrap();
        assert_eq!(
            r,
            StreamRequest::Input {
                data: "ls\r".into()
            }
        );
        let r: StreamRequest =
            serde_json::from_str(r#"{"type":"resize","cols":100,"rows":30}"#).unwrap();
        assert_eq!(
            r,
            StreamRequest::Resize {
                cols: 100,
                rows: 30
            }
        );
        assert!(serde_json::from_str::<StreamRequest>(r#"{"type":"nope"}"#).is_err());
    }
}
