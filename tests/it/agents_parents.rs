//! Real agents as parents (issue 33), through the scripted model: a task with `delegate`
//! whose agent (Claude Code, Codex CLI) hands work to children through orchestra's MCP server
//! alone. It creates a `codex` child that writes the hello file in its own worktree and an
//! `exec` child, waits for both, reads the codex child's diff, merges it and ends its turn with
//! the child's result; and, separately, answers the question of a child made with
//! `answers: "parent"`.
//!
//! The parent's model and the codex child's talk to the one scripted model server: the
//! parent's turns are those whose prompt is the parent's task, the child's those whose prompt
//! is the hello task. Ids come from earlier tool results (`{task:NAME/id}`, see
//! `model/results.rs`), as a model takes them.
//!
//! Each test names the parent CLI and the version it was written against; one that is not
//! installed (the parent, or codex for the child) is skipped, saying so.

use crate::agents_delegate::{
    CODEX_TOOL_SEARCH, TOOL_SEARCH, conversation, mcp_server_built, our_tool,
};
use crate::agents_e2e::{
    API, DONE, Places, Run, TASK, claude_env, claude_home, codex_home, hello_write, run_with_config,
};
use crate::model::{Reply, Script, Turn};
use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// The parent's task: delegate the hello file and merge it. (It must not contain [`TASK`], the
/// child's, or the child's turns would answer it.)
const DELEGATE: &str = "hand the greeting file to a codex child and merge its work";
/// The parent's task that asks a child to ask it a question.
const ASK: &str = "run a command that asks before it proceeds and answer it yourself";
/// The children's names, which the script finds them by in tool results.
const HELLO_CHILD: &str = "hello-child";
const ECHO_CHILD: &str = "echo-child";
const ASKER: &str = "asker";
/// What the exec child prints.
const ECHOED: &str = "echoed-by-exec";
/// The question the asking child puts (POSIX sh: the exec provider runs `/bin/sh -c`).
const ASKING: &str = "printf 'Proceed? [y/N] '; read a; echo answered-$a";
/// The parent's closing words; the child's result follows them.
const SUMMARY: &str = "Merged the codex child's work. It said:";
const ANSWERED: &str = "The child proceeded.";
/// A whole delegation: two agents' turns and a merge, on a shared two-core machine.
const FAMILY_WAIT: Duration = Duration::from_secs(240);
/// Each wait_for_task call: under Codex's 60 s tool timeout; a wait that times out is
/// called again.
const WAIT_SECONDS: u64 = 45;

/// The tools of ours the parent loads (Claude's `select:` list; Codex's search words).
const USED: [&str; 5] = [
    "create_task",
    "wait_for_task",
    "task_diff",
    "merge_task",
    "answer_prompt",
];

/// The parent's first call: its CLI's search for our deferred tools.
fn load_tools(cli: &str) -> (&'static str, Value) {
    if cli == "codex" {
        (
            CODEX_TOOL_SEARCH,
            json!({"query": format!("orchestra {}", USED.join(" ")), "limit": 20}),
        )
    } else {
        let names: Vec<String> = USED.iter().map(|t| our_tool(cli, t)).collect();
        (
            TOOL_SEARCH,
            json!({"query": format!("select:{}", names.join(",")), "max_results": 10}),
        )
    }
}

/// The codex child's turns: the hello file by `apply_patch`, a path relative to its
/// worktree; then [`DONE`].
fn child_turns(script: Script) -> Script {
    let (tool, input) = hello_write("codex");
    script
        .turn(Turn::on_tool_result(TASK, Reply::text(DONE)).offering(tool))
        .turn(Turn::on_prompt(TASK, Reply::tool(tool, input)).offering(tool))
}

/// The parent's turns for [`DELEGATE`], each on the result of the call before it (first match
/// wins, so the narrower turns come first).
fn delegate_turns(cli: &'static str, script: Script) -> Script {
    let t = |tool: &str| our_tool(cli, tool);
    let (search, query) = load_tools(cli);
    let hello_id = format!("{{task:{HELLO_CHILD}/id}}");
    let wait = Reply::tool(
        &t("wait_for_task"),
        json!({"ids": [hello_id, format!("{{task:{ECHO_CHILD}/id}}")],
               "timeoutSeconds": WAIT_SECONDS}),
    );
    let on = |tool: &str, reply: Reply| Turn::on_tool_result(DELEGATE, reply).after(tool);
    script
        .turn(on(
            &t("merge_task"),
            Reply::text(&format!("{SUMMARY} {{task:{HELLO_CHILD}/result/summary}}")),
        ))
        .turn(on(
            &t("task_diff"),
            Reply::tool(&t("merge_task"), json!({"id": hello_id})),
        ))
        // Both children came back (each arrival is returned once): nothing left to wait for.
        .turn(
            on(
                &t("wait_for_task"),
                Reply::tool(&t("task_diff"), json!({"id": hello_id})),
            )
            .result_at("/arrived", Value::Null)
            .result_at("/timedOut", json!(false)),
        )
        .turn(on(&t("wait_for_task"), wait.clone()))
        .turn(on(&t("create_task"), wait).result_at("/name", json!(ECHO_CHILD)))
        .turn(
            on(
                &t("create_task"),
                Reply::tool(
                    &t("create_task"),
                    json!({"name": ECHO_CHILD, "providerId": "exec",
                           "description": format!("echo {ECHOED}"), "start": true}),
                ),
            )
            .result_at("/name", json!(HELLO_CHILD)),
        )
        .turn(on(
            search,
            Reply::tool(
                &t("create_task"),
                json!({"name": HELLO_CHILD, "providerId": "codex", "description": TASK,
                       "isolation": "worktree", "approval": "auto", "start": true}),
            ),
        ))
        .turn(Turn::on_prompt(DELEGATE, Reply::tool(search, query.clone())).offering(search))
}

/// The parent's turns for [`ASK`]: an exec child whose question comes to the parent, a wait
/// until it is blocked, the answer, a wait until it is done.
fn ask_turns(cli: &'static str, script: Script) -> Script {
    let t = |tool: &str| our_tool(cli, tool);
    let (search, query) = load_tools(cli);
    let id = format!("{{task:{ASKER}/id}}");
    let on = |tool: &str, reply: Reply| Turn::on_tool_result(ASK, reply).after(tool);
    let wait = Reply::tool(
        &t("wait_for_task"),
        json!({"id": id, "timeoutSeconds": WAIT_SECONDS}),
    );
    script
        .turn(
            on(&t("wait_for_task"), Reply::text(ANSWERED))
                .result_at("/arrived/status", json!("completed")),
        )
        .turn(
            on(
                &t("wait_for_task"),
                Reply::tool(&t("answer_prompt"), json!({"id": id, "option": "y"})),
            )
            .result_at("/arrived/blocked", json!(true)),
        )
        .turn(on(&t("answer_prompt"), wait.clone()))
        .turn(on(&t("wait_for_task"), wait))
        .turn(on(
            &t("create_task"),
            Reply::tool(
                &t("wait_for_task"),
                json!({"id": id, "until": ["blocked"], "timeoutSeconds": WAIT_SECONDS}),
            ),
        ))
        .turn(on(
            search,
            Reply::tool(
                &t("create_task"),
                json!({"name": ASKER, "providerId": "exec", "description": ASKING,
                       "answers": "parent", "start": true}),
            ),
        ))
        .turn(Turn::on_prompt(ASK, Reply::tool(search, query)).offering(search))
}

fn family_script(cli: &'static str) -> impl FnOnce(&Path) -> Script {
    move |cwd| {
        let script = delegate_turns(cli, Script::new(cwd));
        child_turns(ask_turns(cli, script)).fallback("Nothing scripted for that.")
    }
}

/// A run with `cli` as the parent, and codex installed for the child (the HOME set up for
/// both); `None`, saying why, when either is missing or this build has no MCP server.
fn family_run(cli: &'static str) -> Option<Run> {
    if !tools_bin().join("codex").exists() {
        eprintln!("SKIP: codex (the child) is not installed (run scripts/install-agent-clis)");
        return None;
    }
    if !mcp_server_built() {
        return None;
    }
    let setup = |home: &Path, work: &Path, url: &str| {
        claude_home(home, work, url);
        codex_home(home, work, url);
    };
    run_with_config(
        Places::new(),
        cli,
        family_script(cli),
        setup,
        claude_env,
        "",
    )
}

impl Run {
    /// Starts a delegating task under `auto` working in the repository; returns its id.
    fn start_parent(&self, description: &str) -> String {
        let t = create_task(
            &self.s,
            "parent",
            json!({"description": description, "providerId": self.provider,
                   "approval": "auto", "delegate": true,
                   "workingDirectory": self.work.path(), "isolation": "none"}),
        );
        let id = t["id"].as_str().expect("task id").to_string();
        let r = self.s.post_empty(&format!("{API}/tasks/{id}/start"));
        assert_eq!(r.status, 200, "{}", r.body);
        id
    }

    /// Waits up to [`FAMILY_WAIT`] for the task to be final.
    fn wait_done(&self, id: &str) -> Value {
        let mut last = Value::Null;
        let ok = wait_until(FAMILY_WAIT, || {
            last = self.task(id);
            last["metadata"]["status"]
                .as_str()
                .is_some_and(|s| matches!(s, "completed" | "failed" | "cancelled"))
        });
        assert!(
            ok,
            "{}: task never ended: {last}\n{}",
            self.cli,
            self.family_context(id)
        );
        last
    }

    /// The children of `parent`, by name.
    fn children(&self, parent: &str) -> Vec<Value> {
        let r = self.s.get(&format!("{API}/tasks?parent={parent}"));
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()["tasks"].as_array().cloned().unwrap_or_default()
    }

    /// The parent's child named `name`, once it is final.
    fn child_done(&self, parent: &str, name: &str) -> Value {
        let child = self
            .children(parent)
            .into_iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| {
                panic!(
                    "{}: no child {name}\n{}",
                    self.cli,
                    self.family_context(parent)
                )
            });
        self.wait_done(child["id"].as_str().unwrap_or_default())
    }

    /// Runs a parent task on `description` until it is final; asserts it completed.
    fn parent_completed(&self, description: &str) -> (String, Value) {
        let parent = self.start_parent(description);
        let t = self.wait_done(&parent);
        assert_eq!(
            t["metadata"]["status"],
            "completed",
            "{}: {t}\n{}",
            self.cli,
            self.family_context(&parent)
        );
        (parent, t)
    }

    /// The parent's context, and each child's screen and record, for failure messages.
    fn family_context(&self, parent: &str) -> String {
        let mut out = self.context(&self.task(parent));
        for c in self.children(parent) {
            let sid = c["metadata"]["sessionId"].as_str().unwrap_or_default();
            out.push_str(&format!(
                "\n--- child {}: {c}\nscreen:\n{}",
                c["name"],
                screen(&self.s, sid)
            ));
        }
        out
    }

    /// The tool results the parent's model got, in order: those of its longest conversation
    /// (the task's prompt is `prompt`), as the scripted model read them.
    fn parent_results(&self, prompt: &str) -> Vec<Value> {
        self.model
            .requests()
            .iter()
            .map(|q| conversation(&q.path, &q.body))
            .filter(|c| c.prompt.contains(prompt))
            .max_by_key(|c| c.results.len())
            .map(|c| c.results)
            .unwrap_or_default()
    }

    /// The whole delegation: two children made, waited for, the codex child's work reviewed
    /// and merged onto the base branch, and the parent's result carrying both.
    fn delegates_reviews_and_merges(&self) {
        let (parent, t) = self.parent_completed(DELEGATE);
        let ctx = || self.family_context(&parent);
        let hello = self.child_done(&parent, HELLO_CHILD);
        let echo = self.child_done(&parent, ECHO_CHILD);
        for c in [&hello, &echo] {
            assert_eq!(c["metadata"]["parentTaskId"], parent.as_str(), "{c}");
            assert_eq!(c["metadata"]["status"], "completed", "{c}\n{}", ctx());
        }
        assert_eq!(hello["metadata"]["result"]["summary"], DONE, "{hello}");
        // The exec child named no preset: it got its parent's (as create_task's schema says).
        assert_eq!(echo["metadata"]["approval"], "auto", "{echo}");
        let output = echo["metadata"]["output"].to_string();
        assert!(output.contains(ECHOED), "{echo}");

        // Merged: the file is on the base branch, the worktree's outcome says so.
        let w = &hello["metadata"]["worktree"];
        assert_eq!(w["outcome"], "merged", "{hello}\n{}", ctx());
        let base = w["baseBranch"].as_str().unwrap_or("HEAD");
        let file = git(self.work.path(), &["show", &format!("{base}:hello.txt")]);
        assert_eq!(file.trim_end(), "hi", "{hello}");

        // The parent reviewed the child's diff (the hello file, added) before it merged.
        let results = self.parent_results(DELEGATE);
        // Every child that arrived in a wait came with its last lines: a full-screen agent
        // (the codex child) with its screen's.
        let arrivals: Vec<&Value> = results
            .iter()
            .filter(|r| r["arrived"].is_object())
            .collect();
        assert!(
            !arrivals.is_empty(),
            "{}: no wait arrived in {results:?}",
            self.cli
        );
        for r in &arrivals {
            let lines = r["arrived"]["lastOutput"].as_array().map_or(0, Vec::len);
            assert!(
                lines > 0,
                "{}: an arrival without its last lines: {r}",
                self.cli
            );
        }
        let diff = results
            .iter()
            .find(|r| r["diff"].is_object())
            .unwrap_or_else(|| panic!("{}: no task_diff result in {results:?}", self.cli));
        assert_eq!(diff["diff"]["files"][0]["path"], "hello.txt", "{diff}");
        assert!(
            results.iter().any(|r| r["merge"].is_object()),
            "{results:?}"
        );

        // The parent's turn ended with the child's result, and its result lists both.
        let result = &t["metadata"]["result"];
        let summary = result["summary"].as_str().unwrap_or_default();
        assert!(
            summary.contains(SUMMARY) && summary.contains(DONE),
            "{}: {summary:?}\n{}",
            self.cli,
            ctx()
        );
        let outcomes = result["children"].as_array().cloned().unwrap_or_default();
        let outcome = |id: &Value| outcomes.iter().find(|o| o["id"] == *id).cloned();
        let h = outcome(&hello["id"]).unwrap_or_else(|| panic!("{result}"));
        assert_eq!(h["status"], "completed", "{result}");
        assert_eq!(h["summary"], DONE, "{result}");
        let e = outcome(&echo["id"]).unwrap_or_else(|| panic!("{result}"));
        assert_eq!(e["status"], "completed", "{result}");
        assert_eq!(outcomes.len(), 2, "{result}");
    }

    /// A child made with `answers: "parent"` blocks on its question; the parent's wait returns
    /// it blocked with the prompt, and the parent's answer lets it finish.
    fn answers_its_childs_question(&self) {
        let (parent, t) = self.parent_completed(ASK);
        let ctx = || self.family_context(&parent);
        let c = self.child_done(&parent, ASKER);
        assert_eq!(c["metadata"]["parentTaskId"], parent.as_str(), "{c}");
        assert_eq!(c["metadata"]["answers"], "parent", "{c}");
        assert_eq!(c["metadata"]["status"], "completed", "{c}\n{}", ctx());
        assert!(
            c["metadata"]["output"].to_string().contains("answered-y"),
            "{c}\n{}",
            ctx()
        );
        // The parent saw the question: its wait returned the child blocked, with the prompt.
        let results = self.parent_results(ASK);
        let blocked = results
            .iter()
            .find(|r| r["arrived"]["blocked"] == true)
            .unwrap_or_else(|| panic!("{}: never blocked: {results:?}\n{}", self.cli, ctx()));
        let arrived = &blocked["arrived"];
        assert_eq!(arrived["id"], c["id"], "{blocked}");
        assert_eq!(arrived["prompt"]["text"], "Proceed? [y/N]", "{blocked}");
        assert_eq!(t["metadata"]["result"]["summary"], ANSWERED, "{t}");
    }
}

#[test]
fn claude_2_1_332_delegates_to_codex_and_exec_reviews_and_merges() {
    if let Some(r) = family_run("claude") {
        r.delegates_reviews_and_merges();
    }
}

#[test]
fn codex_0_171_0_delegates_to_codex_and_exec_reviews_and_merges() {
    if let Some(r) = family_run("codex") {
        r.delegates_reviews_and_merges();
    }
}

#[test]
fn claude_2_1_332_answers_its_childs_question() {
    if let Some(r) = family_run("claude") {
        r.answers_its_childs_question();
    }
}

#[test]
fn codex_0_171_0_answers_its_childs_question() {
    if let Some(r) = family_run("codex") {
        r.answers_its_childs_question();
    }
}
