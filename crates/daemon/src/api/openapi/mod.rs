//! The OpenAPI 3.1 document of the whole API (`GET /api/openapi.json`, kept in
//! `docs/openapi.json`). Every body schema is generated from the wire types the routes
//! answer with and the request types clients send (`orchestra_proto::wire`), so the document cannot
//! drift from the code; this module adds what types cannot say: the paths, parameters,
//! statuses and the sentence of each.

use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use orchestra_proto::task::{StepStatus, TaskStatus};
use orchestra_proto::wire::request::{
    Answer, ContinueTask, Gc, HOOK_TOKEN_HEADER, HookReport, NewSession, NewStep, NewTask,
    OutputLines, PickVariant, Resize, ResultReport, SendMessage, StepChange, TaskChange, TrustPath,
};
use orchestra_proto::wire::{
    CollectedList, ConflictList, ConflictReport, DaemonStopped, DiffBody, Discarded, EventFrame,
    MergedTask, MessageBody, MessageList, Peek, Picked, ProviderList, PullRequestTask, Revoked,
    SessionBody, SessionCreated, SessionList, Status, StepAdded, StepBody, StreamEvent,
    StreamRequest, Switched, TaskBody, TaskList, TrustList, Trusted, WorktreeList,
};
use serde_json::{Value, json};
use spec::Spec;
use std::sync::OnceLock;

mod spec;

/// Whether the serving orchestra requires a token (all do but one started with
/// `--insecure-no-auth`): the document it serves says so.
#[derive(Debug, Clone, Copy)]
pub struct TokenRequired(pub bool);

/// `GET /api/openapi.json`: the document, as this server's token setting makes it.
pub async fn serve(Extension(TokenRequired(required)): Extension<TokenRequired>) -> Response {
    static OPEN: OnceLock<Value> = OnceLock::new();
    static GUARDED: OnceLock<Value> = OnceLock::new();
    let doc = if required {
        GUARDED.get_or_init(document)
    } else {
        OPEN.get_or_init(|| document_for(TokenRequired(false)))
    };
    Json(doc).into_response()
}

/// The document of a server with or without a token. The committed copy is the default
/// server's, which requires one; under `--insecure-no-auth` the bearer scheme is optional.
pub fn document_for(token: TokenRequired) -> Value {
    let mut doc = document();
    if !token.0 {
        doc["security"] = json!([{"bearer": []}, {}]);
    }
    doc
}

/// The document as `docs/openapi.json` holds it (pretty, with a final newline).
pub fn document_text() -> String {
    let mut text = serde_json::to_string_pretty(&document()).unwrap_or_default();
    text.push('\n');
    text
}

const TASKS: &str = "/api/coding-agents/tasks";
const TASK: &str = "/api/coding-agents/tasks/{id}";
const SESSIONS: &str = "/api/coding-agents/sessions";
const SESSION: &str = "/api/coding-agents/sessions/{id}";

/// The whole document.
pub fn document() -> Value {
    let mut spec = Spec::new();
    tasks(&mut spec);
    trust(&mut spec);
    worktrees(&mut spec);
    sessions(&mut spec);
    orchestrator(&mut spec);
    spec.finish()
}

/// The task routes, part by part, in the order the document has always listed them.
fn tasks(spec: &mut Spec) {
    task_records(spec);
    task_runs(spec);
    task_reports(spec);
    task_worktree(spec);
}

/// The task list and one task: list, create, read, change, delete.
fn task_records(spec: &mut Spec) {
    spec.op("get", TASKS, "listTasks", "List tasks, newest first")
        .tag("tasks")
        .query_of::<TaskStatus>("status", "Only tasks with this status.")
        .query(
            "limit",
            json!({"type": "integer", "minimum": 1}),
            "At most this many (a positive integer; larger than the list: all of it).",
        )
        .query(
            "parent",
            json!({"type": "string", "minLength": 1}),
            "Only the children of this task (`parentTaskId`).",
        )
        .answer::<TaskList>(200, "The tasks.")
        .error(
            400,
            "A status that is not one of the six, a limit that is not a positive integer, or an empty parent.",
        )
        .add();
    spec.op("post", TASKS, "createTask", "Create a task")
        .tag("tasks")
        .describe("The task is `pending` with progress 0. `description` may be left out only for providers that do not run it (`needsDescription: false` in `GET /providers`, e.g. `shell`). Default provider: the configured one, else the first installed coding agent, else `shell`; default directory: the server's. With `variants` (2–8, best of N) the task is a parent that runs no agent of its own (its providerId is the first variant's) and gets one pending child per variant (`<name> · <label>`, label the provider's id, `codex-2` when one repeats; each with `variant` and `parentTaskId`, in its own worktree from one base commit fixed now); list them with `GET /tasks?parent=ID`. Starting the parent starts them within the concurrency limit.")
        .body::<NewTask>()
        .example(&NewTask {
            name: "tests".into(),
            description: "cargo test".into(),
            provider_id: Some("shell".into()),
            ..NewTask::default()
        })
        .answer::<TaskBody>(201, "The new task.")
        .error(400, "A missing or blank name, a missing description its provider needs, an unknown provider, isolation, approval or answers, a parentTaskId that names no task, a workingDirectory that is not an existing directory, or variants that are not 2–8, name an unknown provider, come with isolation `none` or a directory that is not in a git repository with a commit.")
        .error(403, "With an agent session's credential: a parent that is not the session's task or one of its descendants, an approval wider than the session's own, or a command provider (`exec`, `shell`) asked for by an agent not under `auto`.")
        .error(503, "The provider is known but not installed here.")
        .add();
    spec.op("get", TASK, "getTask", "A task")
        .tag("tasks")
        .answer::<TaskBody>(200, "The task.")
        .add();
    spec.op("patch", TASK, "updateTask", "Change a task's status, progress, error, or (pending) its name, description and settings")
        .tag("tasks")
        .describe("Only the fields given change; status moves only along the state machine (`pending → running | completed | failed | cancelled`, `running → paused | completed | failed | cancelled`, `paused → running | completed | failed | cancelled`). Name, description, providerId, approval, isolation, baseRef, checks and maxAttempts change on pending tasks only (a best-of-N variant keeps its provider, isolation and base).")
        .body_at_least_one::<TaskChange>()
        .example(&TaskChange {
            progress: Some(40.0),
            ..TaskChange::default()
        })
        .answer::<TaskBody>(200, "The task as changed.")
        .error(400, "No field to change, a progress outside 0–100, an unknown status, a field of the wrong type, an unknown providerId, approval or isolation, a description its provider needs left blank, or isolation `worktree` (or a baseRef) for a directory that is not in a git repository with a commit, or a base ref it does not have.")
        .error(409, "The move is not legal from the task's status, the task is finished, or a setting was given for a task no longer pending.")
        .add();
    spec.op("delete", TASK, "deleteTask", "Delete a finished task")
        .tag("tasks")
        .describe("Its session record and transcript go too.")
        .answer::<TaskBody>(200, "The task as it was.")
        .error(409, "The task is not finished.")
        .add();
}

/// Running a task: start, pause, resume, cancel, answer its question, retry, continue.
fn task_runs(spec: &mut Spec) {
    let lifecycle = [
        (
            "start",
            "startTask",
            "Run a task on a subagent session",
            "A task that is not pending or paused cannot start.",
        ),
        (
            "pause",
            "pauseTask",
            "Pause a running task (SIGSTOP to its session's process group)",
            "The task is not running.",
        ),
        (
            "resume",
            "resumeTask",
            "Resume a paused task (SIGCONT)",
            "The task is not paused.",
        ),
        (
            "cancel",
            "cancelTask",
            "Cancel a task, ending its session",
            "The task is finished.",
        ),
    ];
    for (action, id, summary, conflict) in lifecycle {
        let path = format!("{TASK}/{action}");
        let mut op = spec
            .op("post", &path, id, summary)
            .tag("tasks")
            .answer::<TaskBody>(200, "The task.")
            .error(409, conflict);
        if action == "start" {
            op = op
                .describe("Runs it on a subagent session of its provider, in its directory (a worktree task: in its new worktree, after its repository's set-up). When the set-up comes from the repository's own `.orchestra.toml` and the user has not trusted that file's exact content, nothing runs: the task answers `running` with no session, `metadata.prompt` (kind `trust`) asking, `metadata.trust` naming the file and a step that says it waits; answer it with `POST /tasks/{id}/answer` (or `POST /trust`).")
                .error(
                    429,
                    "As many sessions as allowed are alive (`maxSessions`).",
                )
                .error(
                    503,
                    "The task's provider is not installed, or its program cannot start.",
                );
        }
        if matches!(action, "pause" | "resume" | "cancel") {
            op = op
                .query(
                    "children",
                    json!({"type": "string", "enum": ["true", "false"]}),
                    "`true`: the task's descendants (tasks made by its agent, and theirs) go the same way, each as far as its own state allows.",
                )
                .error(400, "`children` is neither true nor false.");
        }
        op.add();
    }
    spec.op(
        "post",
        &format!("{TASK}/answer"),
        "answerTask",
        "Answer the question a task waits on before its agent starts",
    )
    .tag("tasks")
    .describe("A task whose repository's `.orchestra.toml` asks to run or copy something the user has not trusted waits, `running` with no session, on `metadata.prompt` (kind `trust`): option `1` trusts the file's content as it was read (kept in the state directory) and the task, with every other task waiting on that file, proceeds (its set-up, then its agent); option `2` declines and the task fails, nothing run. The event stream sends `task:prompt` when the question appears and when it goes.")
    .body::<Answer>()
    .example(&Answer {
        option: crate::engine::TRUST_OPTION.into(),
    })
    .answer::<TaskBody>(200, "The task as answered: the question gone, and `failed` when declined.")
    .error(400, "A missing option, or one the question does not have.")
    .error(409, "The task waits on no question (it was answered already, maybe at the same moment, or never asked one).")
    .add();
    spec.op(
        "post",
        &format!("{TASK}/retry"),
        "retryTask",
        "A new pending task like a finished one",
    )
    .tag("tasks")
    .describe(
        "Same name, description, provider and directory; `metadata.retryOf` is the original's id.",
    )
    .answer::<TaskBody>(201, "The new task.")
    .error(409, "The task is not finished.")
    .error(503, "The task's provider is not installed here (any more).")
    .add();
    spec.op("post", &format!("{TASK}/continue"), "continueTask", "Run the agent again on the task's conversation")
        .tag("tasks")
        .body::<ContinueTask>()
        .example(&ContinueTask {
            message: Some("Now add tests.".into()),
        })
        .answer::<TaskBody>(200, "The task, running again.")
        .error(409, "The task is not finished, its session is alive, or its provider cannot continue a conversation.")
        .error(429, "As many sessions as allowed are alive (`maxSessions`).")
        .error(503, "The task's provider is not installed, or its program cannot start.")
        .add();
}

/// What an agent reports on its task: output lines, steps, the result.
fn task_reports(spec: &mut Spec) {
    spec.op(
        "post",
        &format!("{TASK}/output"),
        "appendTaskOutput",
        "Append output lines to a task",
    )
    .tag("tasks")
    .body::<OutputLines>()
    .example(&OutputLines {
        output: "compiling\nok".into(),
    })
    .answer::<TaskBody>(200, "The task with the lines appended.")
    .error(409, "The task is finished.")
    .add();
    spec.op(
        "post",
        &format!("{TASK}/steps"),
        "addTaskStep",
        "Add a step to a task",
    )
    .tag("tasks")
    .body::<NewStep>()
    .example(&NewStep {
        description: "Run the tests".into(),
    })
    .answer::<StepAdded>(201, "The new step and its id.")
    .error(400, "A missing or blank description.")
    .error(409, "The task is finished.")
    .add();
    spec.op(
        "patch",
        &format!("{TASK}/steps/{{stepId}}"),
        "updateTaskStep",
        "Change a step",
    )
    .tag("tasks")
    .path_param("stepId", "The step's id.")
    .body::<StepChange>()
    .example(&StepChange {
        status: StepStatus::Completed,
        output: Some("42 passed".into()),
    })
    .answer::<StepBody>(200, "The step as changed.")
    .error(
        404,
        "No task with this id, or the task has no step with this id.",
    )
    .error(409, "The task is finished.")
    .add();
    spec.op(
        "post",
        &format!("{TASK}/result"),
        "setTaskResult",
        "Finish a task with its result",
    )
    .tag("tasks")
    .describe("`success: true` completes it (progress 100), `false` fails it.")
    .body::<ResultReport>()
    .example(&ResultReport {
        success: true,
        summary: "Fixed the parser".into(),
        files_modified: vec!["src/parse.rs".into()],
        files_created: vec![],
        error: None,
    })
    .answer::<TaskBody>(200, "The finished task.")
    .error(409, "The task is finished.")
    .add();
}

/// A worktree task's changes: the diff, merging them, discarding them.
fn task_worktree(spec: &mut Spec) {
    spec.op(
        "get",
        &format!("{TASK}/diff"),
        "taskDiff",
        "A worktree task's changes against its base",
    )
    .tag("worktrees")
    .answer::<DiffBody>(200, "Files changed, with counts, and the unified diff.")
    .error(
        409,
        "The task has no live worktree (isolation `none`, or merged, discarded or collected).",
    )
    .add();
    spec.op("post", &format!("{TASK}/merge"), "mergeTask", "Merge a finished worktree task into its base branch")
        .tag("worktrees")
        .answer::<MergedTask>(200, "The task and what the merge did.")
        .error(409, "The task is not finished or has no live worktree, the merge conflicts, or the user's uncommitted changes are in the way (the files are named).")
        .add();
    spec.op(
        "post",
        &format!("{TASK}/discard"),
        "discardTask",
        "Remove a finished task's worktree and branch",
    )
    .tag("worktrees")
    .describe("Its work is kept under a snapshot ref.")
    .answer::<Discarded>(200, "The task and the ref its work is kept under.")
    .error(409, "The task is not finished or has no live worktree.")
    .add();
    spec.op(
        "post",
        &format!("{TASK}/pr"),
        "openPullRequest",
        "Push a finished worktree task's branch and open a pull request for it",
    )
    .tag("worktrees")
    .describe("What the agent left uncommitted is committed on the task's branch first (the message names the task), the branch is pushed under its own name to the base branch's upstream remote (else `origin`), and the pull request (GitLab: merge request) is opened with the user's own `gh` or `glab`: the title is the task's name, the body its summary, the checks that passed and the diffstat. The task records it in `metadata.pullRequest`; its worktree stays.")
    .answer::<PullRequestTask>(200, "The task, recording the pull request, and the pull request.")
    .error(409, "The task is not finished or has no live worktree.")
    .error(422, "No remote to push to, neither `gh` nor `glab` on PATH (or not the one the remote's host needs), or the CLI is not logged in: the sentence says which; nothing was pushed.")
    .error(502, "The push failed (git's reason; nothing opened), or the CLI could not open the pull request (its reason; the branch was pushed).")
    .add();
    spec.op(
        "post",
        &format!("{TASK}/pick"),
        "pickVariant",
        "Keep one variant of a best-of-N task",
    )
    .tag("worktrees")
    .describe("`variant`: a label (`codex`, `codex-2`) or a variant's task id. Merges that variant into the base branch, discards the others (each kept under its snapshot ref) and completes the parent naming the pick. Every variant must have finished; a failed or cancelled one may be picked (its worktree is what is merged).")
    .body::<PickVariant>()
    .answer::<Picked>(200, "The parent, completed; what the merge did; where each other variant's work is kept.")
    .error(404, "No such task, or no such variant (the labels are named).")
    .error(409, "The task is not a best-of-N parent or was settled already, a variant is still running, the picked variant has no live worktree, or the merge conflicts (the files are named; nothing was discarded).")
    .add();
    spec.op(
        "get",
        &format!("{TASK}/conflicts"),
        "taskConflicts",
        "Which live worktree tasks and base branch a task's work would conflict with",
    )
    .tag("worktrees")
    .describe("The conflict radar looks again first (a task whose agent may still be writing is read again, a base branch that moved is seen), then answers with the files each merge would conflict in, worked out with `git merge-tree` without touching any work tree, and the order of merging that conflicts least. A task without a live worktree gets an empty report whose `note` says why. An agent's credential sees only its own family's tasks in it.")
    .answer::<ConflictReport>(200, "The task's conflicts.")
    .add();
    spec.op(
        "get",
        "/api/coding-agents/conflicts",
        "listConflicts",
        "The conflict radar's report of every live worktree task",
    )
    .tag("worktrees")
    .describe("As `GET /tasks/{id}/conflicts`, for every live worktree task, oldest first.")
    .answer::<ConflictList>(200, "Every live worktree task's conflicts.")
    .add();
}

fn trust(spec: &mut Spec) {
    const TRUST: &str = "/api/coding-agents/trust";
    spec.op("get", TRUST, "listTrust", "Repository files whose commands the user trusted")
        .tag("trust")
        .describe("Each file's canonical path and the SHA-256 of the content trusted: a file whose bytes differ is not trusted.")
        .answer::<TrustList>(200, "The trusted files.")
        .add();
    spec.op("post", TRUST, "trust", "Trust a repository file's current content")
        .tag("trust")
        .describe("`path`: an absolute path to a repository's `.orchestra.toml`, or to the directory holding it. Its current content is trusted, and every task waiting on that file proceeds (`orchestra trust PATH`).")
        .body::<TrustPath>()
        .example(&TrustPath {
            path: "/home/me/src/app/.orchestra.toml".into(),
        })
        .answer::<Trusted>(200, "What was trusted, what the file asks, and the tasks that now proceed.")
        .error(400, "A missing or relative path, no file there, or a file that is not valid.")
        .error(507, "The disk holding the state directory is full: nothing was trusted.")
        .add();
    spec.op(
        "post",
        &format!("{TRUST}/revoke"),
        "revokeTrust",
        "Trust a repository file no more",
    )
    .tag("trust")
    .describe("The next task that needs the file asks again.")
    .body::<TrustPath>()
    .answer::<Revoked>(200, "The trust taken back.")
    .error(400, "A missing or relative path.")
    .error(404, "The file is not trusted.")
    .add();
}

fn worktrees(spec: &mut Spec) {
    spec.op(
        "get",
        "/api/coding-agents/worktrees",
        "listWorktrees",
        "Live task worktrees and the disk they use",
    )
    .tag("worktrees")
    .answer::<WorktreeList>(200, "Each live worktree and the bytes of all.")
    .add();
    spec.op(
        "post",
        "/api/coding-agents/worktrees/gc",
        "collectWorktrees",
        "Remove the worktrees of tasks finished long ago",
    )
    .tag("worktrees")
    .describe("Each is snapshotted first; branches stay.")
    .body::<Gc>()
    .answer::<CollectedList>(200, "What was removed and the bytes freed.")
    .error(
        400,
        "olderThanSeconds is not a number of seconds, 0 or more.",
    )
    .add();
}

/// The session routes, part by part, in the order the document has always listed them.
fn sessions(spec: &mut Spec) {
    session_records(spec);
    session_views(spec);
    session_control(spec);
}

/// The session list and one session: list, start, read, end or remove.
fn session_records(spec: &mut Spec) {
    spec.op("get", SESSIONS, "listSessions", "List sessions")
        .tag("sessions")
        .describe("Ended sessions stay listed with `ended: true`.")
        .answer::<SessionList>(200, "The sessions.")
        .add();
    spec.op("post", SESSIONS, "createSession", "Start a session (a subagent in its own terminal)")
        .tag("sessions")
        .describe("No providerId: the configured default, else the first installed coding-agent CLI. Provider `shell`: the user's shell, with `task` typed as its first line.")
        .body::<NewSession>()
        .example(&NewSession {
            task: Some("ls".into()),
            provider_id: Some("shell".into()),
            cols: Some(120),
            rows: Some(40),
            ..NewSession::default()
        })
        .answer::<SessionCreated>(201, "The new session.")
        .error(400, "An unknown provider or approval, a size out of range, a workingDirectory that is not an existing directory, or a missing task its provider needs.")
        .error(429, "As many sessions as allowed are alive (`maxSessions`).")
        .error(503, "No provider given and no coding-agent CLI installed (the sentence names what was looked for), or the provider's program is not installed or cannot start.")
        .add();
    spec.op("get", SESSION, "getSession", "A session")
        .tag("sessions")
        .answer::<SessionBody>(200, "The session.")
        .add();
    spec.op("delete", SESSION, "endSession", "End a session, or remove an ended one's record")
        .tag("sessions")
        .describe("Ends the process group (SIGTERM, then SIGKILL after a grace period) and reaps it; idempotent on an ended session. With `remove=true`, removes an ended session's record and transcript.")
        .query("remove", flag(), "Remove the record of an ended session instead.")
        .answer::<SessionBody>(200, "The session, ended (or as it was, when removed).")
        .error(400, "remove is not a flag.")
        .error(409, "remove=true on a session still alive, or one a task still refers to.")
        .add();
}

/// What a session shows and was sent: its messages, its screen, its live terminal, its
/// transcript.
fn session_views(spec: &mut Spec) {
    spec.op(
        "get",
        &format!("{SESSION}/messages"),
        "sessionMessages",
        "What was sent to a session and the agent's replies",
    )
    .tag("sessions")
    .answer::<MessageList>(200, "The messages, oldest first.")
    .add();
    spec.op(
        "post",
        &format!("{SESSION}/messages"),
        "sendMessage",
        "Type text (submitted) or press named keys",
    )
    .tag("sessions")
    .describe("Answers once the message is durable and its turn among what is typed into the session is taken; it is typed right after, in that order. The `message` event (and `GET …/messages`) shows it once it is typed.")
    .body_schema(send_message_schema(), true)
    .example(&SendMessage::Text("ls".into()))
    .answer::<MessageBody>(201, "The message as recorded.")
    .error(
        400,
        "Neither or both of text and keys, an empty keys list, or an unknown key name.",
    )
    .error(409, "The session has ended.")
    .add();
    spec.op(
        "get",
        &format!("{SESSION}/peek"),
        "peekSession",
        "The session's screen",
    )
    .tag("sessions")
    .query(
        "lines",
        json!({"type": "integer", "minimum": 0}),
        "Add the last N scrollback lines as `scrollback`.",
    )
    .query(
        "ansi",
        flag(),
        "Add the screen with its colours as `screenAnsi`.",
    )
    .answer::<Peek>(200, "The visible screen, cursor, size and status.")
    .error(400, "lines is not a whole number, or ansi not a flag.")
    .add();
    spec.op("get", &format!("{SESSION}/stream"), "streamSession", "The session's terminal, live, over a WebSocket")
        .tag("sessions")
        .describe("Upgrades to a WebSocket (see docs/stream.md): text messages are `StreamEvent` (server → client) and `StreamRequest` (client → server) JSON; binary messages are terminal output, and raw input from the client. Refusals come before the upgrade, as HTTP.")
        .extension_with("x-websocket-messages", |g| {
            json!({
                "server": g.subschema_for::<StreamEvent>(),
                "client": g.subschema_for::<StreamRequest>(),
            })
        })
        .raw_answer(101, json!({"description": "Switching to the WebSocket protocol."}))
        .error(403, "The Host or Origin is not allowed (a page of another site), or the Host is not a loopback name.")
        .error(426, "The request is not a WebSocket upgrade.")
        .add();
    spec.op("get", &format!("{SESSION}/transcript"), "sessionTranscript", "The raw bytes the session printed")
        .tag("sessions")
        .query(
            "bytes",
            json!({"type": "integer", "minimum": 0}),
            "Only the last N bytes.",
        )
        .raw_answer(200, json!({
            "description": "The transcript, as the terminal received it.",
            "content": {"application/octet-stream": {"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}},
        }))
        .error(400, "bytes is not a whole number.")
        .add();
}

/// Steering a session: resize, pause and resume, answer its prompt, its agent's hook.
fn session_control(spec: &mut Spec) {
    spec.op(
        "post",
        &format!("{SESSION}/resize"),
        "resizeSession",
        "Resize a session's terminal",
    )
    .tag("sessions")
    .body::<Resize>()
    .example(&Resize {
        cols: 100,
        rows: 30,
    })
    .answer::<SessionBody>(200, "The session at its new size.")
    .error(
        400,
        "A missing size, or one out of range (cols 2–1000, rows 2–500).",
    )
    .error(409, "The session has ended.")
    .add();
    for (action, id, summary, conflict) in [
        (
            "pause",
            "pauseSession",
            "Pause a session (SIGSTOP to its process group)",
            "The session has ended.",
        ),
        (
            "resume",
            "resumeSession",
            "Resume a paused session (SIGCONT)",
            "The session has ended.",
        ),
    ] {
        spec.op("post", &format!("{SESSION}/{action}"), id, summary)
            .tag("sessions")
            .answer::<SessionBody>(200, "The session.")
            .error(409, conflict)
            .add();
    }
    spec.op(
        "post",
        &format!("{SESSION}/answer"),
        "answerPrompt",
        "Answer the prompt a blocked session shows",
    )
    .tag("sessions")
    .describe("Presses the keys its CLI expects for the option (`session.prompt.options[].key`). Like `POST …/messages`, answers once they are durable and in their turn, and types them right after: the session answered may still show the prompt.")
    .body::<Answer>()
    .answer::<SessionBody>(200, "The session.")
    .error(400, "A missing option, or one the prompt does not have.")
    .error(409, "The session is not blocked, or has ended.")
    .add();
    spec.op(
        "post",
        &format!("{SESSION}/hook"),
        "sessionHook",
        "An agent's own report of what it does",
    )
    .tag("sessions")
    .describe(
        "Sent by `orchestra hook EVENT` from the agent's hooks, with the session's hook token.",
    )
    .header_param(
        HOOK_TOKEN_HEADER,
        "The session's hook token (given to its agent only).",
    )
    .body::<HookReport>()
    .answer::<SessionBody>(200, "The session, its status as the report says.")
    .error(
        401,
        "No credential, or one that opens nothing (the hook token alone is enough for the session's own hook).",
    )
    .error(
        403,
        "A hook token that is not this session's, or another session's credential.",
    )
    .error(409, "The session has ended.")
    .add();
}

fn orchestrator(spec: &mut Spec) {
    for (path, id) in [
        ("/api/status", "status"),
        ("/api/coding-agents/status", "codingAgentsStatus"),
    ] {
        spec.op("get", path, id, "The orchestrator's state and counts")
            .tag("orchestrator")
            .answer::<Status>(
                200,
                "Autopilot state, tasks by status, sessions, limits, uptime, version.",
            )
            .add();
    }
    spec.op(
        "get",
        "/api/coding-agents/providers",
        "listProviders",
        "The agent CLIs orchestra knows and which are installed",
    )
    .tag("orchestrator")
    .answer::<ProviderList>(200, "The providers.")
    .add();
    spec.op("get", "/api/coding-agents/events", "events", "Server-Sent Events, one per change")
        .tag("orchestrator")
        .describe("Each event's name is its `type`; its data is one `EventFrame` as JSON. A comment `keep-alive` comes every 15 s. A reader that falls behind gets `lagged` with how many it missed, and then reads the state again. Output is sent in batches: after a `task:output` the stream gathers what follows for 16 ms and sends it in one write; events keep their order, an event that follows output within those 16 ms waits for the batch, and every other event is sent at once.")
        .query(
            "output",
            json!({"type": "string", "enum": ["task", "lines", "last"], "default": "task"}),
            "What a `task:output` event carries: `task` (the default), the whole task with all its output lines and the new `lines`; `lines`, the task's id and the new `lines` only, for a reader that keeps its own copy of each task's output; `last`, the task's id and only the newest of the new lines (in `lines`), for a reader that shows each task's last line and not its output.",
        )
        .extension_with("x-event-data", |g| g.subschema_for::<EventFrame>().to_value())
        .raw_answer(200, json!({
            "description": "The event stream (it does not end until orchestra stops).",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }))
        .error(400, "An `output` that is not `task`, `lines` or `last`.")
        .add();
    for (action, id, summary) in [
        (
            "start",
            "agentStart",
            "Bring the orchestrator up, autopilot off (`paused`)",
        ),
        ("stop", "agentStop", "End every session (`stopped`)"),
        ("pause", "agentPause", "Turn autopilot off"),
        (
            "resume",
            "agentResume",
            "Turn autopilot on: pending tasks start up to the concurrency limit",
        ),
    ] {
        spec.op("post", &format!("/api/agent/{action}"), id, summary)
            .tag("orchestrator")
            .answer::<Switched>(200, "The state after the switch.")
            .add();
    }
    spec.op("post", "/api/daemon/stop", "daemonStop", "Stop orchestra")
        .tag("orchestrator")
        .describe("Answers, then stops gracefully: every agent is ended (its whole process group), their tasks cancelled, the state saved.")
        .answer::<DaemonStopped>(200, "How many agents it is ending and how long they may take.")
        .add();
    spec.op("get", "/api/openapi.json", "openapi", "This document")
        .tag("orchestrator")
        .raw_answer(
            200,
            json!({
                "description": "The OpenAPI 3.1 document of the API.",
                "content": {"application/json": {"schema": {"type": "object"}}},
            }),
        )
        .add();
}

/// A query flag as the server reads it: `1`/`true` (or bare) on, `0`/`false` off.
fn flag() -> Value {
    json!({"type": "string", "enum": ["true", "false", "1", "0", ""]})
}

/// `{text}` or `{keys}`, never both: the server's rule, which the enum's own schema (each
/// variant closed to other fields) would state too strictly for a body that may carry
/// unknown fields and `null`s.
fn send_message_schema() -> Value {
    // The wire type decides the field names: a test checks the schema against it.
    json!({
        "description": "Text to type and submit the way the provider expects, or named keys to press.",
        "type": "object",
        "oneOf": [
            {"required": ["text"],
             "properties": {"text": {"type": "string"}, "keys": {"type": "null"}}},
            {"required": ["keys"],
             "properties": {
                "text": {"type": "null"},
                "keys": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1},
                    "description": "Key names: enter, tab, shift-tab, esc, backspace, up, down, left, right, home, end, pageup, pagedown, insert, delete, f1–f12, space, a single character, each with ctrl-, alt-, shift- prefixes."}}}
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_documents_its_errors_as_error_bodies() {
        let doc = document();
        let paths = doc["paths"].as_object().expect("paths");
        for (path, item) in paths {
            for (method, op) in item.as_object().expect("path item") {
                let responses = op["responses"].as_object().expect("responses");
                assert!(responses.contains_key("401"), "{method} {path}: no 401");
                for (status, r) in responses {
                    if status.starts_with('4') || status.starts_with('5') {
                        assert_eq!(
                            r["content"]["application/json"]["schema"]["$ref"],
                            "#/components/schemas/ErrorBody",
                            "{method} {path} {status}"
                        );
                    }
                }
            }
        }
        assert_eq!(
            doc["components"]["schemas"]["ErrorBody"]["required"],
            json!(["error"])
        );
    }

    #[test]
    fn optional_request_fields_take_null_and_required_ones_do_not() {
        let doc = document();
        let body = &doc["paths"][TASKS]["post"]["requestBody"];
        assert_eq!(body["required"], true);
        let schema = &body["content"]["application/json"]["schema"];
        assert_eq!(schema["required"], json!(["name"]));
        assert_eq!(schema["properties"]["name"]["type"], "string");
        assert_eq!(
            schema["properties"]["providerId"]["type"],
            json!(["string", "null"])
        );
        let patch =
            &doc["paths"][TASK]["patch"]["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(patch["anyOf"].as_array().map(Vec::len), Some(11));
    }

    #[test]
    fn the_send_message_schema_names_the_wire_fields() {
        let text = serde_json::to_value(SendMessage::Text("a".into())).unwrap();
        let keys = serde_json::to_value(SendMessage::Keys(vec!["enter".into()])).unwrap();
        let schema = send_message_schema();
        assert_eq!(
            schema["oneOf"][0]["required"][0],
            *text.as_object().unwrap().keys().next().unwrap()
        );
        assert_eq!(
            schema["oneOf"][1]["required"][0],
            *keys.as_object().unwrap().keys().next().unwrap()
        );
    }
}
