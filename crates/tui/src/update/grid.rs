//! The grid of live agents and zoom: entering and leaving them, moving between tiles, laying
//! out the grid's page for a frame, and sizing each shown agent's PTY to its tile — once per
//! layout change (a tile's size is sent once, and again only when it changes), and back to its
//! size before when the grid closes.

use crate::app::*;
use crate::backend::Command;
use crate::grid;
use crate::keymap::Action;
use ratatui::layout::Rect;

impl App {
    /// Whether the grid is shown (instead of the three panes).
    pub fn grid_shown(&self) -> bool {
        self.grid.is_some()
    }

    /// Whether the terminal (or the selected tile) fills the window.
    pub fn zoomed(&self) -> bool {
        self.zoom
    }

    /// The page of the grid the last frame showed.
    pub fn grid_page(&self) -> Option<&grid::GridPage> {
        self.grid.as_ref().map(|g| &g.page)
    }

    /// The live agents the grid shows, in the list's order (the filter applies): the tasks'
    /// agents, then the sessions without a task.
    pub fn grid_sessions(&self) -> Vec<String> {
        let live = |sid: &str| self.snap.sessions.iter().any(|s| s.id == sid && !s.ended);
        self.rows
            .iter()
            .filter_map(|r| match *r {
                Row::Task(i) => self.snap.tasks.get(i)?.metadata.session_id.clone(),
                Row::Session(i) => self.snap.sessions.get(i).map(|s| s.id.clone()),
                Row::Header | Row::Group(_) => None,
            })
            .filter(|sid| live(sid))
            .collect()
    }

    /// Selects the row (task or session) whose agent is `sid`; `false`: no row shows it.
    pub(crate) fn select_session(&mut self, sid: &str) -> bool {
        let i = self.rows.iter().position(|r| match *r {
            Row::Task(t) => {
                self.snap
                    .tasks
                    .get(t)
                    .and_then(|t| t.metadata.session_id.as_deref())
                    == Some(sid)
            }
            Row::Session(s) => self.snap.sessions.get(s).is_some_and(|s| s.id == sid),
            Row::Header | Row::Group(_) => false,
        });
        if i.is_some() {
            self.select_index(i);
        }
        i.is_some()
    }

    /// `v`: the grid, or back to the three panes.
    pub(crate) fn toggle_grid(&mut self) {
        self.dirty = true;
        if let Some(g) = self.grid.take() {
            self.leave_grid(g);
            return;
        }
        let tiles = self.grid_sessions();
        if !self
            .shown_session_id()
            .is_some_and(|sid| tiles.contains(&sid))
            && let Some(first) = tiles.first()
        {
            let first = first.clone();
            self.select_session(&first);
        }
        // The grid shows live screens only.
        self.scroll = None;
        self.transcript = None;
        self.grid = Some(GridView::default());
    }

    /// Gives every agent resized for a tile its size from before, except the shown one, which
    /// the terminal pane sizes on the next frame; the cockpit keeps only the shown stream.
    fn leave_grid(&mut self, g: GridView) {
        // First, so the sizes given back go by call, not up streams about to close.
        self.cockpit.keep_streams(&[]);
        let shown = self.shown_session_id();
        for (sid, (cols, rows)) in g.restore {
            if Some(&sid) == shown.as_ref() || !self.session_live(&sid) {
                continue;
            }
            self.send_resize(sid, cols, rows);
        }
    }

    fn session_live(&self, sid: &str) -> bool {
        self.snap.sessions.iter().any(|s| s.id == sid && !s.ended)
    }

    /// `z`: the terminal pane (in the grid, the selected tile) fills the window, or no longer.
    pub(crate) fn toggle_zoom(&mut self) {
        self.zoom = !self.zoom;
        self.dirty = true;
    }

    /// Arrows and `hjkl` in the grid: the next tile that way (up and down by a row of the
    /// page's layout); the first tile when none is selected.
    pub(crate) fn move_tile(&mut self, action: Action) {
        let tiles = self.grid_sessions();
        let Some(last) = tiles.len().checked_sub(1) else {
            return;
        };
        let cols = self.grid.as_ref().map_or(1, |g| g.page.cols.max(1));
        let cur = self
            .shown_session_id()
            .and_then(|sid| tiles.iter().position(|t| *t == sid));
        let next = match (cur, action) {
            (None, _) => 0,
            (Some(c), Action::TileLeft) => c.saturating_sub(1),
            (Some(c), Action::TileRight) => c + 1,
            (Some(c), Action::TileUp) => c.saturating_sub(cols),
            (Some(c), Action::TileDown) => c + cols,
            (Some(c), _) => c,
        };
        self.select_session(&tiles[next.min(last)]);
    }

    /// PgUp/PgDn in the grid: the first tile of the previous / next page.
    pub(crate) fn turn_grid_page(&mut self, forward: bool) {
        let tiles = self.grid_sessions();
        let Some(last) = tiles.len().checked_sub(1) else {
            return;
        };
        let per = self.grid.as_ref().map_or(1, |g| g.page.per_page.max(1));
        let page = self
            .shown_session_id()
            .and_then(|sid| tiles.iter().position(|t| *t == sid))
            .map_or(0, |i| i / per);
        let to = if forward {
            page + 1
        } else {
            page.saturating_sub(1)
        };
        self.select_session(&tiles[(to * per).min(last)]);
    }

    /// Lays out the grid's page for a frame whose main area is `area` (zoomed: the selected
    /// tile alone), and tells the cockpit which sessions to stream: the shown tiles only.
    pub(crate) fn layout_grid(&mut self, area: Rect) {
        let Some(mut g) = self.grid.take() else {
            return;
        };
        let mut tiles = self.grid_sessions();
        let mut selected = self
            .shown_session_id()
            .and_then(|sid| tiles.iter().position(|t| *t == sid));
        if self.zoom
            && let Some(i) = selected
        {
            tiles = vec![tiles.swap_remove(i)];
            selected = Some(0);
        }
        g.page = grid::page(&tiles, selected, area);
        let shown: Vec<String> = g.page.tiles.iter().map(|t| t.session_id.clone()).collect();
        if shown != g.streamed {
            self.cockpit.keep_streams(&shown);
            g.streamed = shown;
        }
        self.grid = Some(g);
    }

    /// Resizes each shown tile's PTY to the tile when they differ (once per size), noting
    /// the size it had before so leaving the grid gives it back.
    pub(crate) fn sync_grid_sizes(&mut self) {
        let Some(tiles) = self.grid.as_ref().map(|g| g.page.tiles.clone()) else {
            return;
        };
        for t in tiles {
            if let Some(before) = self.resize_to(&t.session_id, t.inner.width, t.inner.height)
                && let Some(g) = self.grid.as_mut()
            {
                g.restore.entry(t.session_id).or_insert(before);
            }
        }
    }

    /// Asks for `sid`'s PTY at `cols`×`rows` unless it is that size or was asked already;
    /// the size it had (cols, rows) when asked.
    pub(crate) fn resize_to(&mut self, sid: &str, cols: u16, rows: u16) -> Option<(u16, u16)> {
        if cols == 0 || rows == 0 || self.resize_sent.get(sid) == Some(&(cols, rows)) {
            return None;
        }
        let mut size = None;
        self.cockpit
            .with_screen(sid, &mut |s| size = Some(s.size()));
        let (cur_rows, cur_cols) = size?;
        if (cur_cols, cur_rows) == (cols, rows) {
            return None;
        }
        self.send_resize(sid.to_string(), cols, rows);
        Some((cur_cols, cur_rows))
    }

    fn send_resize(&mut self, session_id: String, cols: u16, rows: u16) {
        self.resize_sent.insert(session_id.clone(), (cols, rows));
        self.run(
            Command::Resize {
                session_id,
                cols,
                rows,
            },
            Origin::Quiet,
        );
    }

    /// Whether `sid`'s screen is on show (the terminal pane's, or a tile of the grid).
    pub fn on_show(&self, sid: &str) -> bool {
        match &self.grid {
            Some(g) => g.page.tiles.iter().any(|t| t.session_id == sid),
            None => self.shown_session_id().as_deref() == Some(sid),
        }
    }
}
