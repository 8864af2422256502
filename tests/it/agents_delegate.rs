//! Delegation with the real coding-agent CLIs, through the scripted model (issue 33): a task
//! with `delegate` gets orchestra's MCP server (`orchestra mcp --session-file FILE`) the way
//! its CLI takes one, and the CLI really launches it: the model is offered its tools, and
//! under `auto` a call of one goes through without the CLI stopping to ask. A task without
//! `delegate` is offered none. Each test names the CLI and version it was written against; a
//! CLI that is not installed is skipped, saying so.

use crate::agents_e2e::{
    API, DONE, Places, Run, WAIT, claude_env, claude_home, codex_home, gemini_env, gemini_home,
    opencode_home, run_with_config,
};
use crate::model::conversation::{Api, Conversation};
use crate::model::{Reply, Script, Turn};
use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;

/// What a delegating task asks: the model calls our `list_tasks`, then says [`DONE`].
const LIST: &str = "list the tasks orchestra runs";
/// What a task without delegation asks.
const PLAIN: &str = "say hello without any tool";

/// The name `cli` gives our server's tool `tool` (its own prefix for an MCP server's tools).
pub(crate) fn our_tool(cli: &str, tool: &str) -> String {
    match cli {
        "gemini" => format!("mcp_orchestra_{tool}"),
        "opencode" => format!("orchestra_{tool}"),
        _ => format!("mcp__orchestra__{tool}"),
    }
}

/// Claude Code's tool that loads the tools it defers (an MCP server's, by default): they are
/// named to the model, and offered once it asked for them by name.
pub(crate) const TOOL_SEARCH: &str = "ToolSearch";
/// Codex CLI's (see `model::conversation::TOOL_SEARCH`).
pub(crate) const CODEX_TOOL_SEARCH: &str = crate::model::conversation::TOOL_SEARCH;

/// On [`LIST`] call our `list_tasks` (offered only when the server runs; with Claude Code,
/// loaded first through its tool search, as a model does); on its result say [`DONE`].
fn list_script(cli: &'static str) -> impl FnOnce(&Path) -> Script {
    let list = our_tool(cli, "list_tasks");
    let select = json!({"query": format!("select:{list}"), "max_results": 5});
    move |cwd| {
        Script::new(cwd)
            .turn(Turn::on_tool_result(LIST, Reply::text(DONE)).after(&list))
            .turn(Turn::on_tool_result(LIST, Reply::tool(&list, json!({}))).after(TOOL_SEARCH))
            .turn(
                Turn::on_tool_result(LIST, Reply::tool(&list, json!({}))).after(CODEX_TOOL_SEARCH),
            )
            .turn(Turn::on_prompt(LIST, Reply::tool(&list, json!({}))).offering(&list))
            .turn(Turn::on_prompt(LIST, Reply::tool(TOOL_SEARCH, select)).offering(TOOL_SEARCH))
            .turn(
                Turn::on_prompt(
                    LIST,
                    Reply::tool(CODEX_TOOL_SEARCH, json!({"query": "orchestra list tasks"})),
                )
                .offering(CODEX_TOOL_SEARCH),
            )
            .turn(Turn::on_prompt(PLAIN, Reply::text("Hello.")))
            .fallback("Nothing scripted for that.")
    }
}

/// Whether this build has the MCP server (`orchestra mcp`); `false` says why the test skips.
pub(crate) fn mcp_server_built() -> bool {
    let ok = std::process::Command::new(BIN)
        .args(["mcp", "--help"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: this orchestra has no `mcp` command (the MCP server) yet");
    }
    ok
}

impl Run {
    /// Creates a task for this CLI with `delegate`, under `approval`, and starts it.
    fn start_delegating(&self, description: &str, approval: &str, delegate: bool) -> String {
        let t = create_task(
            &self.s,
            "delegate",
            json!({"description": description, "providerId": self.provider,
                   "approval": approval, "delegate": delegate,
                   "workingDirectory": self.work.path(), "isolation": "none"}),
        );
        // (`false` is left out of the task's JSON.)
        let recorded = t["metadata"]["delegate"].as_bool().unwrap_or(false);
        assert_eq!(recorded, delegate, "{t}");
        let id = t["id"].as_str().expect("task id").to_string();
        let r = self.s.post_empty(&format!("{API}/tasks/{id}/start"));
        assert_eq!(r.status, 200, "{}", r.body);
        id
    }

    /// The names of the tools offered in the model requests that carried `prompt`.
    fn tools_offered_with(&self, prompt: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .model
            .requests()
            .iter()
            .filter(|q| q.body.to_string().contains(prompt))
            .flat_map(|q| tool_names(&q.path, &q.body))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// A delegating task under `auto` is offered our tools, calls one without the CLI asking
    /// and completes; then a task without delegation is offered none of them.
    fn delegation_is_handed_over(&self) {
        let id = self.start_delegating(LIST, "auto", true);
        let t = self.wait_final(&id);
        let offered = self.tools_offered_with(LIST);
        let ctx = self.context(&t);
        let list = our_tool(self.provider, "list_tasks");
        assert!(
            offered.contains(&list),
            "{}: {list} not offered: {offered:?}\n{ctx}",
            self.cli
        );
        assert_eq!(
            t["metadata"]["status"], "completed",
            "{}: {t}\n{ctx}",
            self.cli
        );
        self.assert_summary_is_the_reply(&t, DONE);
        // The tool's result went back to the model: our server answered the call.
        let answered = self.model.requests().iter().any(|q| {
            let b = q.body.to_string();
            b.contains(LIST) && b.contains("tasks") && tool_names(&q.path, &q.body).contains(&list)
        });
        assert!(answered, "{}: no result of {list}\n{ctx}", self.cli);
        // Its private session file went with the session's end.
        let sid = t["metadata"]["sessionId"].as_str().unwrap_or_default();
        let r = self.s.delete(&format!("{API}/sessions/{sid}"));
        assert!(r.status < 300, "{}", r.body);
        let file = self.s.state_dir.join("mcp").join(format!("{sid}.json"));
        assert!(
            wait_until(WAIT, || !file.exists()),
            "{} outlived its session",
            file.display()
        );

        let plain = self.start_delegating(PLAIN, "auto", false);
        let t = self.wait_final(&plain);
        let offered = self.tools_offered_with(PLAIN);
        assert!(
            !offered.iter().any(|n| n.contains("list_tasks")),
            "{}: offered without delegate: {offered:?}\n{}",
            self.cli,
            self.context(&t)
        );
    }
}

/// The tools a model request offers, whichever API it came through (as the scripted model
/// reads them: Codex's searched MCP tools too).
fn tool_names(path: &str, body: &Value) -> Vec<String> {
    conversation(path, body)
        .tools
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// A model request to `path` as the scripted model reads it.
pub(crate) fn conversation(path: &str, body: &Value) -> Conversation {
    let api = if path.ends_with("/responses") {
        Api::Responses
    } else if path.ends_with("/chat/completions") {
        Api::Chat
    } else if path.contains(":") {
        Api::Gemini
    } else {
        Api::Anthropic
    };
    Conversation::read(api, body)
}

fn delegation_run(
    cli: &'static str,
    setup: impl FnOnce(&Path, &Path, &str),
    env: impl FnOnce(&str) -> Vec<(&'static str, String)>,
) -> Option<Run> {
    if !mcp_server_built() {
        return None;
    }
    run_with_config(Places::new(), cli, list_script(cli), setup, env, "")
}

#[test]
fn claude_2_1_332_delegating_launches_our_mcp_server() {
    if let Some(r) = delegation_run("claude", claude_home, claude_env) {
        r.delegation_is_handed_over();
    }
}

#[test]
fn codex_0_171_0_delegating_launches_our_mcp_server() {
    if let Some(r) = delegation_run("codex", codex_home, |_| vec![]) {
        r.delegation_is_handed_over();
    }
}

#[test]
fn gemini_0_61_0_delegating_launches_our_mcp_server() {
    if let Some(r) = delegation_run("gemini", gemini_home, gemini_env) {
        r.delegation_is_handed_over();
    }
}

#[test]
fn opencode_1_18_33_delegating_launches_our_mcp_server() {
    if let Some(r) = delegation_run("opencode", opencode_home, |_| vec![]) {
        r.delegation_is_handed_over();
    }
}
