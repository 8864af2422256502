//! A widget drawing a vt100 screen: colours, bold/dim/italic/underline/inverse, wide
//! characters. The cursor is placed by the caller (the real terminal cursor).

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
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

/// The attributes of `cell` as ratatui modifiers.
fn modifiers(cell: &vt100::Cell) -> Modifier {
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
    m
}

/// Gives `target` the colours (unless `color` is off) and attributes of `cell`. The fields
/// are written directly: this runs for every cell of every shown terminal in every frame.
fn paint(target: &mut Cell, cell: &vt100::Cell, color: bool) {
    if color {
        target.fg = convert_color(cell.fgcolor());
        target.bg = convert_color(cell.bgcolor());
    }
    target.modifier.insert(modifiers(cell));
}

impl Widget for TermView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        let (rows, cols) = self.screen.size();
        let h = area.height.min(rows);
        let w = area.width.min(cols);
        for row in 0..h {
            // One row of the buffer at a time, indexed directly: a grid of flooding agents
            // draws every cell of the window in every frame.
            let start = buf.index_of(area.x, area.y + row);
            let line = &mut buf.content[start..start + usize::from(w)];
            let mut col = 0;
            while col < w {
                let i = usize::from(col);
                let Some(cell) = self.screen.cell(row, col) else {
                    col += 1;
                    continue;
                };
                if cell.is_wide_continuation() {
                    // Reached only when the wide character's first half was cut.
                    line[i].reset();
                    paint(&mut line[i], cell, self.color);
                    col += 1;
                    continue;
                }
                let text = cell.contents();
                if cell.is_wide() {
                    if col + 1 >= w {
                        // Half a wide character does not fit: leave a blank.
                        line[i].set_symbol(" ");
                        paint(&mut line[i], cell, self.color);
                        col += 1;
                        continue;
                    }
                    line[i].set_symbol(text);
                    paint(&mut line[i], cell, self.color);
                    // The next cell is covered by the wide character.
                    line[i + 1].reset();
                    paint(&mut line[i + 1], cell, self.color);
                    col += 2;
                    continue;
                }
                line[i].set_symbol(if text.is_empty() { " " } else { text });
                paint(&mut line[i], cell, self.color);
                col += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(cols: u16, bytes: &[u8]) -> vt100::Parser {
        let mut p = vt100::Parser::new(2, cols, 0);
        p.process(bytes);
        p
    }

    fn draw(p: &vt100::Parser, area: Rect, buf_area: Rect, color: bool) -> Buffer {
        let mut buf = Buffer::empty(buf_area);
        TermView::new(p.screen())
            .color(color)
            .render(area, &mut buf);
        buf
    }

    #[test]
    fn colours_and_attributes_reach_each_cell() {
        let p = screen(6, b"\x1b[1;31mA\x1b[0;4;44mb\x1b[0mc");
        let buf = draw(&p, Rect::new(1, 0, 5, 2), Rect::new(0, 0, 6, 2), true);
        assert_eq!(buf[(1, 0)].symbol(), "A");
        assert_eq!(buf[(1, 0)].fg, Color::Red);
        assert_eq!(buf[(1, 0)].modifier, Modifier::BOLD);
        assert_eq!(buf[(2, 0)].symbol(), "b");
        assert_eq!(buf[(2, 0)].bg, Color::Blue);
        assert_eq!(buf[(2, 0)].modifier, Modifier::UNDERLINED);
        assert_eq!(buf[(3, 0)].symbol(), "c");
        assert_eq!(buf[(3, 0)].fg, Color::Reset);
        // Blank cells are drawn as spaces; the column left of the area is untouched.
        assert_eq!(buf[(4, 0)].symbol(), " ");
        assert_eq!(buf[(0, 0)], Cell::EMPTY);
    }

    #[test]
    fn without_colour_only_attributes_are_drawn() {
        let p = screen(4, b"\x1b[1;31mA");
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 2));
        buf[(0, 0)].fg = Color::Green;
        TermView::new(p.screen())
            .color(false)
            .render(buf.area, &mut buf);
        assert_eq!(buf[(0, 0)].fg, Color::Green);
        assert_eq!(buf[(0, 0)].modifier, Modifier::BOLD);
    }

    #[test]
    fn a_wide_character_cut_by_the_edge_leaves_a_blank() {
        // 世 takes columns 3 and 4; an area 4 wide shows only its first half.
        let p = screen(6, "abc世".as_bytes());
        let buf = draw(&p, Rect::new(0, 0, 4, 1), Rect::new(0, 0, 6, 1), true);
        assert_eq!(buf[(2, 0)].symbol(), "c");
        assert_eq!(buf[(3, 0)].symbol(), " ");
        let whole = draw(&p, Rect::new(0, 0, 6, 1), Rect::new(0, 0, 6, 1), true);
        assert_eq!(whole[(3, 0)].symbol(), "世");
    }

    #[test]
    fn an_area_past_the_buffer_is_cut_not_a_panic() {
        let p = screen(6, b"abcdef\r\nghijkl");
        let buf = draw(&p, Rect::new(3, 1, 6, 2), Rect::new(0, 0, 5, 2), true);
        assert_eq!(buf[(3, 1)].symbol(), "a");
        assert_eq!(buf[(4, 1)].symbol(), "b");
    }
}
