//! What every terminal emulator in orchestra (the daemon's and the TUI's) agrees on.

/// The smallest screen a vt100 parser is given: with one row or one column, vt100 0.16
/// panics on ordinary output (text that wraps, a wide character).
pub const MIN_SIZE: u16 = 2;

/// `(rows, cols)` made safe for a vt100 parser (see [`MIN_SIZE`]).
pub fn parser_size(rows: u16, cols: u16) -> (u16, u16) {
    (rows.max(MIN_SIZE), cols.max(MIN_SIZE))
}
