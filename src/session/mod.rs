//! Subagent sessions: one child per pseudo-terminal and process group, read through vt100.
