//! The grid of live agents: which agents a page holds and where their tiles go. tmux's tiled
//! layout (rows of equal height, a short last row stretched), with the number of columns
//! chosen for the count and the window's shape. Pure geometry: update decides the PTY sizes
//! from it, the view draws it.

use ratatui::layout::Rect;

/// The smallest tile still readable (border included): more agents than fit page.
pub const MIN_TILE_W: u16 = 40;
pub const MIN_TILE_H: u16 = 8;

/// A comfortable tile's width in columns per row (a cell is about twice as tall as wide, so
/// this is a tile somewhat wider than square; 80×24 is 3.3).
const GOOD_ASPECT: f64 = 2.5;
/// What an empty cell in the last row costs against the shape, in the same units.
const EMPTY_CELL_COST: f64 = 0.3;

/// One agent's tile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tile {
    pub session_id: String,
    /// The whole tile, border included.
    pub area: Rect,
    /// Where the agent's terminal is drawn: the size its PTY takes.
    pub inner: Rect,
}

/// The page of the grid a frame shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GridPage {
    pub tiles: Vec<Tile>,
    /// Columns of the layout (the arrows move by this much up and down).
    pub cols: usize,
    /// This page (from 0) and how many there are.
    pub page: usize,
    pub pages: usize,
    /// How many agents a page holds at this size.
    pub per_page: usize,
}

/// How many tiles of at least [`MIN_TILE_W`]×[`MIN_TILE_H`] fit: (rows, columns), at least 1×1.
fn capacity(area: Rect) -> (usize, usize) {
    (
        usize::from(area.height / MIN_TILE_H).max(1),
        usize::from(area.width / MIN_TILE_W).max(1),
    )
}

/// Rows × columns for `n` tiles (at most what fits): the columns whose tiles come closest to
/// a comfortable shape, fewer empty cells breaking ties.
pub fn shape(n: usize, area: Rect) -> (usize, usize) {
    let (max_r, max_c) = capacity(area);
    let n = n.clamp(1, max_r * max_c);
    let mut best: Option<(f64, usize, usize)> = None;
    for c in 1..=max_c.min(n) {
        let r = n.div_ceil(c);
        if r > max_r {
            continue;
        }
        let w = f64::from(area.width) / c as f64;
        let h = (f64::from(area.height) / r as f64).max(1.0);
        let score = (w / (h * GOOD_ASPECT)).ln().abs() + (r * c - n) as f64 * EMPTY_CELL_COST;
        if best.is_none_or(|(s, _, _)| score < s) {
            best = Some((score, r, c));
        }
    }
    best.map_or((max_r, max_c), |(_, r, c)| (r, c))
}

/// `total` cells cut into `parts` runs as equal as can be (the first ones a cell longer):
/// (offset, length) each.
fn split(total: u16, parts: usize) -> Vec<(u16, u16)> {
    let parts = parts.max(1) as u16;
    let (base, extra) = (total / parts, total % parts);
    let mut at = 0;
    (0..parts)
        .map(|i| {
            let len = base + u16::from(i < extra);
            let run = (at, len);
            at += len;
            run
        })
        .collect()
}

/// The tiles' areas for `n` agents in `area`, row by row; a short last row's tiles share
/// its whole width. Also the layout's number of columns.
pub fn tile_rects(n: usize, area: Rect) -> (Vec<Rect>, usize) {
    if n == 0 {
        return (Vec::new(), 1);
    }
    let (rows, cols) = shape(n, area);
    let mut out = Vec::with_capacity(n);
    for (y, h) in split(area.height, rows) {
        let in_row = cols.min(n - out.len());
        if in_row == 0 {
            break;
        }
        for (x, w) in split(area.width, in_row) {
            out.push(Rect::new(area.x + x, area.y + y, w, h));
        }
    }
    (out, cols)
}

/// The page of `sessions` (in the list's order) that holds the selected one (index into
/// `sessions`; the first page when none is selected), laid out in `area`.
pub fn page(sessions: &[String], selected: Option<usize>, area: Rect) -> GridPage {
    let (max_r, max_c) = capacity(area);
    let per_page = max_r * max_c;
    let pages = sessions.len().div_ceil(per_page).max(1);
    let page = selected.map_or(0, |i| i / per_page).min(pages - 1);
    let shown = &sessions[(page * per_page).min(sessions.len())..]
        [..sessions.len().saturating_sub(page * per_page).min(per_page)];
    let (rects, cols) = tile_rects(shown.len(), area);
    let tiles = shown
        .iter()
        .zip(rects)
        .map(|(sid, area)| Tile {
            session_id: sid.clone(),
            area,
            inner: inner(area),
        })
        .collect();
    GridPage {
        tiles,
        cols,
        page,
        pages,
        per_page,
    }
}

/// A tile's inside: the area less its one-cell border.
fn inner(area: Rect) -> Rect {
    ratatui::widgets::Block::bordered().inner(area)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i}")).collect()
    }

    #[test]
    fn shapes_follow_the_count_and_the_window() {
        let wide = Rect::new(0, 0, 240, 68);
        assert_eq!(shape(1, wide), (1, 1));
        assert_eq!(shape(2, wide), (1, 2));
        assert_eq!(shape(4, wide), (2, 2));
        // A tall window stacks two agents.
        assert_eq!(shape(2, Rect::new(0, 0, 80, 60)), (2, 1));
        let (r, c) = shape(16, wide);
        assert!(r * c >= 16 && c >= r, "{r}×{c}");
    }

    #[test]
    fn tiles_cover_the_area_without_overlap() {
        for (n, w, h) in [(1, 80, 22), (3, 120, 38), (7, 240, 68), (5, 100, 30)] {
            let area = Rect::new(2, 1, w, h);
            let (rects, _) = tile_rects(n, area);
            assert_eq!(rects.len(), n);
            let cells: u32 = rects.iter().map(|r| r.area()).sum();
            assert_eq!(cells, area.area(), "{n} in {w}×{h}");
            for (i, a) in rects.iter().enumerate() {
                assert!(area.contains(a.as_position()));
                for b in &rects[i + 1..] {
                    assert!(!a.intersects(*b), "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn too_many_agents_page_and_the_page_follows_the_selection() {
        let area = Rect::new(0, 0, 80, 22);
        let all = ids(7);
        let first = page(&all, None, area);
        assert_eq!((first.per_page, first.pages, first.page), (4, 2, 0));
        assert_eq!(first.tiles.len(), 4);
        assert!(
            first
                .tiles
                .iter()
                .all(|t| t.area.width >= MIN_TILE_W && t.area.height >= MIN_TILE_H)
        );
        let second = page(&all, Some(5), area);
        assert_eq!(second.page, 1);
        let shown: Vec<&str> = second.tiles.iter().map(|t| t.session_id.as_str()).collect();
        assert_eq!(shown, ["s4", "s5", "s6"]);
        assert!(page(&[], None, area).tiles.is_empty());
    }
}
