//! A widget drawing a vt100 screen: colours, bold/dim/italic/underline/inverse, wide
//! characters. The cursor is placed by the caller (the real terminal cursor).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

/// Draws `screen` into the area, top-left aligned; what does not fit is cut.
pub struct TermView<'a> {
    screen: &'a vt100::Screen,
    color: bool,
}

impl<'a> TermView<'a> {
    pub fn new(screen: &'a vt100::Screen) -> Self {
        TermView {
            screen,
            color: true,
        }
    }

    /// Without colours (NO_COLOR): attributes only.
    pub fn color(mut self, on: bool) -> Self {
        self.color = on;
        self
    }
}

pub fn convert_color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => match i {
            0 => Color::Black,
            1 => Color::Red,
            2 => Color::Green,
            3 => Color::Yellow,
            4 => Color::Blue,
            5 => Color::Magenta,
            6 => Color::Cyan,
            7 => Color::Gray,
            8 => Color::DarkGray,
            9 => Color::LightRed,
            10 => Color::LightGreen,
            11 => Color::LightYellow,
            12 => Color::LightBlue,
            13 => Color::LightMagenta,
            14 => Color::LightCyan,
            15 => Color::White,
            i => Color::Indexed(i),
        },
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

fn cell_style(cell: &vt100::Cell, color: bool) -> Style {
    let mut style = Style::default();
    if color {
        style = style
            .fg(convert_color(cell.fgcolor()))
            .bg(convert_color(cell.bgcolor()));
    }
    let mut m = Modifier::empty();
    if cell.bold() {
        m |= Modifier::BOLD;
    }
    if cell.dim() {
        m |= Modifier::DIM;
    }
    if cell.italic() {
        m |= Modifier::ITALIC;
    }
    if cell.underline() {
        m |= Modifier::UNDERLINED;
    }
    if cell.inverse() {
        m |= Modifier::REVERSED;
    }
    style.add_modifier(m)
}

impl Widget for TermView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (rows, cols) = self.screen.size();
        let h = area.height.min(rows);
        let w = area.width.min(cols);
        for row in 0..h {
            let mut col = 0;
            while col < w {
                let x = area.x + col;
                let y = area.y + row;
                let Some(cell) = self.screen.cell(row, col) else {
                    col += 1;
                    continue;
                };
                let style = cell_style(cell, self.color);
                if cell.is_wide_continuation() {
                    // Reached only when the wide character's first half was cut.
                    buf[(x, y)].reset();
                    buf[(x, y)].set_style(style);
                    col += 1;
                    continue;
                }
                let text = cell.contents();
                if cell.is_wide() {
                    if col + 1 >= w {
                        // Half a wide character does not fit: leave a blank.
                        buf[(x, y)].set_symbol(" ").set_style(style);
                        col += 1;
                        continue;
                    }
                    buf[(x, y)].set_symbol(text).set_style(style);
                    // The next cell is covered by the wide character.
                    buf[(x + 1, y)].reset();
                    buf[(x + 1, y)].set_style(style);
                    col += 2;
                    continue;
                }
                let sym = if text.is_empty() { " " } else { text };
                buf[(x, y)].set_symbol(sym).set_style(style);
                col += 1;
            }
        }
    }
}
