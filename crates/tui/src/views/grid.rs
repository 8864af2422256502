//! The grid of live agents: each agent's terminal in its own tile, titled with its task's
//! name, provider and status; a blocked agent's tile marked, the selected one highlighted.

use super::*;
use crate::grid::{GridPage, Tile};
use orchestra_proto::wire::SessionStatus;

/// What a tile's title says of its agent.
struct TileTitle {
    name: String,
    provider: String,
    status: String,
    status_style: Style,
    blocked: bool,
}

impl App {
    fn tile_title(&self, sid: &str) -> TileTitle {
        let info = self.snapshot().sessions.iter().find(|s| s.id == sid);
        let task = info
            .and_then(|s| s.task_id.as_deref())
            .and_then(|id| self.snapshot().tasks.iter().find(|t| t.id == id));
        let blocked = info.is_some_and(|s| !s.ended && s.status == SessionStatus::Blocked);
        let (status, status_style) = if blocked {
            (
                " ⚠ BLOCKED ".to_string(),
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            )
        } else if let Some(t) = task {
            (
                format!(" {} {} ", status_symbol(t.status()), t.status().as_str()),
                Style::default().fg(status_color(t.status())),
            )
        } else {
            (
                format!(" {} ", info.map_or("", |s| s.status.as_str())),
                Style::default().fg(Color::Gray),
            )
        };
        TileTitle {
            name: task
                .map(|t| match t.metadata.parent_task_id {
                    // A child's tile follows its parent's, and says so.
                    Some(_) => format!("↳ {}", t.name),
                    None => t.name.clone(),
                })
                .or_else(|| info.map(session_name))
                .unwrap_or_default(),
            provider: info.map(|s| s.provider_id.clone()).unwrap_or_default(),
            status,
            status_style,
            blocked,
        }
    }

    pub(super) fn draw_grid(&self, frame: &mut Frame, area: Rect) {
        let Some(page) = self.grid_page() else {
            return;
        };
        if page.tiles.is_empty() {
            let text = format!(
                "No agent is running: the grid shows live agents.\nPress {} for the three panes.",
                self.key(Action::Grid)
            );
            frame.render_widget(
                Paragraph::new(text)
                    .style(Style::default().fg(Color::DarkGray))
                    .wrap(Wrap { trim: false }),
                Block::bordered().inner(area),
            );
            return;
        }
        let shown = self.shown_session_id();
        let last = page.tiles.len() - 1;
        let mut cursor = None;
        for (i, tile) in page.tiles.iter().enumerate() {
            let selected = shown.as_deref() == Some(tile.session_id.as_str());
            let edges = self.tile_edges(tile, selected, i == last, page);
            edges.render(frame, tile.area);
            let inner = tile.inner;
            let typing = self.typing && selected;
            let drawn = self.draw_live_screen(frame, &tile.session_id, inner, typing, &mut cursor);
            if !drawn {
                frame.render_widget(
                    Paragraph::new("connecting to the agent's terminal…")
                        .style(Style::default().fg(Color::DarkGray)),
                    inner,
                );
            }
        }
        if let Some(p) = cursor {
            frame.set_cursor_position(p);
        }
    }

    /// A tile's frame: its border (the selected tile's, typing or not; a blocked agent's;
    /// any other's), its agent's name, provider and status on top, and at the bottom the
    /// page mark and how to leave (on the last tile of the page).
    fn tile_edges(
        &self,
        tile: &Tile,
        selected: bool,
        last: bool,
        page: &GridPage,
    ) -> PaneFrame<'static> {
        let title = self.tile_title(&tile.session_id);
        let w = usize::from(tile.area.width.saturating_sub(2));
        let status_w = title.status.width().min(w);
        let label = format!(" {} · {} ", title.name.trim(), title.provider);
        let label = fit(&label, label.width().min(w - status_w));
        let (border, border_style) = match (selected, self.typing, title.blocked) {
            (true, true, _) => (
                BorderType::Double,
                Style::default()
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            ),
            (true, false, _) => (
                BorderType::Thick,
                Style::default()
                    .fg(Color::LightCyan)
                    .add_modifier(Modifier::BOLD),
            ),
            (false, _, true) => (BorderType::Thick, Style::default().fg(Color::Yellow)),
            (false, _, false) => (BorderType::Rounded, Style::default().fg(Color::DarkGray)),
        };
        let label_style = if selected {
            border_style
        } else {
            Style::default().fg(Color::Gray)
        };
        let title = Line::from(vec![
            Span::styled(label, label_style),
            Span::styled(fit(&title.status, status_w), title.status_style),
        ]);
        let mut bottom = Vec::new();
        if last && page.pages > 1 {
            let mark = format!(" page {}/{} ", page.page + 1, page.pages);
            bottom.push(
                Line::from(Span::styled(
                    mark,
                    Style::default().fg(Color::Black).bg(Color::LightCyan),
                ))
                .right_aligned(),
            );
        }
        // How to leave, on the last tile (the bottom bar offers the grid's own keys).
        let hint = if self.zoom {
            Some(format!(" zoomed · {} back ", self.key(Action::Zoom)))
        } else if last {
            Some(format!(
                " {} panes · {} zoom ",
                self.key(Action::Grid),
                self.key(Action::Zoom)
            ))
        } else {
            None
        };
        if let Some(hint) = hint.filter(|h| h.width() + 12 <= w) {
            bottom.push(Line::from(Span::styled(
                hint,
                Style::default().fg(Color::DarkGray),
            )));
        }
        let mut edges = PaneFrame::styled(border, border_style, title);
        for line in bottom {
            edges = edges.title_bottom(line);
        }
        edges
    }
}
