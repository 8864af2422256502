//! A ratatui buffer drawn as an SVG picture: the README's picture of the TUI is the TUI's own
//! rendering, so it cannot go stale (a test compares it with a fresh one).

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use unicode_width::UnicodeWidthStr;

const CELL_W: f32 = 8.4;
const CELL_H: f32 = 17.0;
const FONT: f32 = 14.0;
const BACKGROUND: &str = "#1e1e2e";
const FOREGROUND: &str = "#d9dce4";

/// The buffer as a standalone SVG document (no fonts or scripts fetched).
pub fn buffer_svg(buf: &Buffer) -> String {
    let (w, h) = (buf.area.width, buf.area.height);
    let width = f32::from(w) * CELL_W;
    let height = f32::from(h) * CELL_H;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.1} {height:.1}\" font-family=\"ui-monospace, Menlo, Consolas, \
         'DejaVu Sans Mono', monospace\" font-size=\"{FONT}\">\n<rect width=\"100%\" \
         height=\"100%\" fill=\"{BACKGROUND}\"/>\n"
    );
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let cell = &buf[(x, y)];
            let (fg, bg) = colours(cell.fg, cell.bg, cell.modifier);
            let symbol = cell.symbol();
            let cells = symbol.width().max(1) as u16;
            let px = f32::from(x) * CELL_W;
            let py = f32::from(y) * CELL_H;
            if bg != BACKGROUND {
                out.push_str(&format!(
                    "<rect x=\"{px:.1}\" y=\"{py:.1}\" width=\"{:.1}\" height=\"{CELL_H}\" fill=\"{bg}\"/>\n",
                    f32::from(cells) * CELL_W
                ));
            }
            if !symbol.trim().is_empty() {
                let mut attrs = format!("fill=\"{fg}\"");
                if cell.modifier.contains(Modifier::BOLD) {
                    attrs.push_str(" font-weight=\"bold\"");
                }
                if cell.modifier.contains(Modifier::ITALIC) {
                    attrs.push_str(" font-style=\"italic\"");
                }
                if cell.modifier.contains(Modifier::UNDERLINED) {
                    attrs.push_str(" text-decoration=\"underline\"");
                }
                if cell.modifier.contains(Modifier::DIM) {
                    attrs.push_str(" opacity=\"0.6\"");
                }
                out.push_str(&format!(
                    "<text x=\"{px:.1}\" y=\"{:.1}\" {attrs}>{}</text>\n",
                    py + CELL_H * 0.78,
                    escape(symbol)
                ));
            }
            x += cells;
        }
    }
    out.push_str("</svg>\n");
    out
}

/// Foreground and background as drawn: reversed swaps them; the defaults are the picture's.
fn colours(fg: Color, bg: Color, m: Modifier) -> (String, String) {
    let fg = hex(fg).unwrap_or_else(|| FOREGROUND.to_string());
    let bg = hex(bg).unwrap_or_else(|| BACKGROUND.to_string());
    if m.contains(Modifier::REVERSED) {
        (bg, fg)
    } else {
        (fg, bg)
    }
}

fn hex(c: Color) -> Option<String> {
    let rgb = match c {
        Color::Reset => return None,
        Color::Black => (0x45, 0x47, 0x5a),
        Color::Red => (0xf3, 0x8b, 0xa8),
        Color::Green => (0xa6, 0xe3, 0xa1),
        Color::Yellow => (0xf9, 0xe2, 0xaf),
        Color::Blue => (0x89, 0xb4, 0xfa),
        Color::Magenta => (0xf5, 0xc2, 0xe7),
        Color::Cyan => (0x94, 0xe2, 0xd5),
        Color::Gray => (0xba, 0xc2, 0xde),
        Color::DarkGray => (0x58, 0x5b, 0x70),
        Color::LightRed => (0xf3, 0x8b, 0xa8),
        Color::LightGreen => (0xa6, 0xe3, 0xa1),
        Color::LightYellow => (0xf9, 0xe2, 0xaf),
        Color::LightBlue => (0x89, 0xb4, 0xfa),
        Color::LightMagenta => (0xf5, 0xc2, 0xe7),
        Color::LightCyan => (0x94, 0xe2, 0xd5),
        Color::White => (0xcd, 0xd6, 0xf4),
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) => indexed(i),
    };
    Some(format!("#{:02x}{:02x}{:02x}", rgb.0, rgb.1, rgb.2))
}

/// xterm's 256-colour palette past the first 16.
fn indexed(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => (0x80, 0x80, 0x80),
        16..=231 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        _ => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
