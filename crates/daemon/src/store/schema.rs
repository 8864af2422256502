//! Schema versions. Each migration runs once, in order, inside a transaction;
//! `PRAGMA user_version` records how far a database has come.

use super::StoreError;
use rusqlite::Connection;

const MIGRATIONS: &[&str] = &[
    // 1: tasks, sessions and session messages as JSON documents, ordered by seq.
    "CREATE TABLE tasks (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner TEXT, data TEXT NOT NULL);
     CREATE INDEX tasks_seq ON tasks(seq);
     CREATE TABLE sessions (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner TEXT, data TEXT NOT NULL);
     CREATE INDEX sessions_seq ON sessions(seq);
     CREATE TABLE messages (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner TEXT, data TEXT NOT NULL);
     CREATE INDEX messages_owner ON messages(owner, seq);",
    // 2: settings the user switches (autopilot), kept across restarts; same shape.
    "CREATE TABLE settings (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner TEXT, data TEXT NOT NULL);",
];

pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let known = MIGRATIONS.len() as i64;
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > known {
        return Err(StoreError::TooNew { found, known });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}
