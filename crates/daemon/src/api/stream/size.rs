//! Which size a watched session's terminal takes: the size of the client that was active
//! last, i.e. last sent input or a resize (tmux's `window-size latest`).

use std::collections::HashMap;

/// A client of one session's stream.
pub type ClientId = u64;

#[derive(Debug, Default)]
struct Client {
    /// The size it asked for (`cols`, `rows`), once it did.
    size: Option<(u16, u16)>,
    /// When it was last active, on this session's clock (0: never).
    active_at: u64,
}

/// The clients watching one session. Each method returns the size (`cols`, `rows`) the
/// terminal should have now, if any client gave one; the caller applies it when it differs
/// from the terminal's (another route may have resized it meanwhile).
#[derive(Debug, Default)]
pub struct LatestSize {
    clients: HashMap<ClientId, Client>,
    clock: u64,
}

impl LatestSize {
    pub fn join(&mut self, id: ClientId) {
        self.clients.insert(id, Client::default());
    }

    pub fn is_empty(&self) -> bool {
        self.clients.is_empty()
    }

    /// The client asked for a size: it is the active one now.
    pub fn resize(&mut self, id: ClientId, cols: u16, rows: u16) -> Option<(u16, u16)> {
        let client = self.clients.get_mut(&id)?;
        client.size = Some((cols, rows));
        self.touch(id);
        self.follow()
    }

    /// The client sent input: it is the active one now, and the terminal takes its size.
    pub fn input(&mut self, id: ClientId) -> Option<(u16, u16)> {
        self.touch(id);
        self.follow()
    }

    /// The client left; if it was the active one, the next most recent one's size wins.
    pub fn leave(&mut self, id: ClientId) -> Option<(u16, u16)> {
        self.clients.remove(&id);
        self.follow()
    }

    fn touch(&mut self, id: ClientId) {
        self.clock += 1;
        if let Some(c) = self.clients.get_mut(&id) {
            c.active_at = self.clock;
        }
    }

    /// The size of the most recently active client that gave one.
    fn follow(&self) -> Option<(u16, u16)> {
        self.clients
            .values()
            .filter(|c| c.size.is_some())
            .max_by_key(|c| c.active_at)
            .and_then(|c| c.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_active_client_sets_the_size() {
        let mut s = LatestSize::default();
        s.join(1);
        s.join(2);
        assert_eq!(s.resize(1, 100, 30), Some((100, 30)));
        assert_eq!(s.resize(2, 80, 24), Some((80, 24)));
        // Typing in client 1 makes it the active one again.
        assert_eq!(s.input(1), Some((100, 30)));
        assert_eq!(s.input(2), Some((80, 24)));
    }

    #[test]
    fn a_client_without_a_size_keeps_the_size_it_found() {
        let mut s = LatestSize::default();
        s.join(1);
        s.join(2);
        assert_eq!(s.resize(1, 100, 30), Some((100, 30)));
        assert_eq!(s.input(2), Some((100, 30)));
        // Once it gives its size, it wins (it is the latest).
        assert_eq!(s.resize(2, 60, 20), Some((60, 20)));
    }

    #[test]
    fn when_the_active_client_leaves_the_previous_one_takes_over() {
        let mut s = LatestSize::default();
        for id in [1, 2, 3] {
            s.join(id);
        }
        s.resize(1, 100, 30);
        s.resize(2, 80, 24);
        s.resize(3, 120, 40);
        assert_eq!(s.leave(1), Some((120, 40)), "not the active one: no change");
        assert_eq!(s.leave(3), Some((80, 24)));
        assert_eq!(s.leave(2), None, "nobody left: the size stays");
        assert!(s.is_empty());
        assert_eq!(s.resize(7, 10, 10), None, "unknown client");
    }
}
