//! Every integration test in one binary, so `support` (the real daemon on port 0, the raw
//! HTTP client, waiting by polling) and the scripted model compile and link once. Each module
//! is one subject; run one with `cargo test --test it MODULE::`.

#[path = "support/model/mod.rs"]
mod model;
mod support;

mod agents_delegate;
mod agents_e2e;
mod agents_engine;
mod agents_fixtures;
mod agents_hooks;
mod agents_live;
mod agents_parents;
mod agents_variants;
mod api_manage;
mod api_openapi;
mod api_providers;
mod api_security;
mod api_sessions;
mod api_stream;
mod api_tasks;
mod cli_client;
mod cli_mcp_install;
mod daemon;
mod faults;
mod flood_memory;
mod git_pull_requests;
mod git_worktrees;
mod mcp_protocol;
mod message_durability;
mod model_server;
mod props_api;
mod props_providers;
mod props_session;
mod radar;
mod repo_trust;
mod session_runtime;
mod start_race;
mod state_modes;
mod task_checks;
mod task_continue;
mod task_family;
mod task_runs;
mod task_variants;
mod tui_app;
mod tui_diff;
mod tui_e2e;
mod tui_remote;
mod tui_snapshots;
