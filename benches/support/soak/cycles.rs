//! The workers' cycles: each kind of agent, created, driven to its end and deleted.

use super::Ctx;
use super::api::Api;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The kinds of cycle a worker runs, in turn.
/// One cycle of a kind: the `n`th, with its worker's client.
type Cycle = fn(&Ctx, &Api, u64) -> Result<(), String>;

const CYCLES: &[(&str, Cycle)] = &[
    ("quick", quick),
    ("flood", flood),
    ("deaf", deaf_to_sigterm),
    ("forker", forker),
    ("pauser", pauser),
    ("retry", failing_then_retried),
    ("shell", shell_session),
    ("python", python),
];

pub(super) fn worker(ctx: &Ctx, w: usize) {
    let api = Api::new(&ctx.addr);
    let s = &ctx.shared;
    let mut n = w as u64;
    while !s.workers_stop.load(Ordering::SeqCst) {
        if s.pause.load(Ordering::SeqCst) {
            s.parked.fetch_add(1, Ordering::SeqCst);
            while s.pause.load(Ordering::SeqCst) && !s.workers_stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            s.parked.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let (kind, cycle) = CYCLES[n as usize % CYCLES.len()];
        if let Err(e) = cycle(ctx, &api, n) {
            s.error(format!("{kind} #{n}: {e}"));
        }
        s.cycles.fetch_add(1, Ordering::Relaxed);
        n += 1;
    }
    s.done.fetch_add(1, Ordering::SeqCst);
    // Its connection stays open through the last sample, as through the others.
    while !s.stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A command task, created and started; its id and its session's.
pub(super) fn start_command(
    ctx: &Ctx,
    api: &Api,
    name: &str,
    command: &str,
) -> Result<(String, String), String> {
    let task = api.expect(
        "POST",
        "/tasks",
        Some(
            json!({"name": name, "description": command, "providerId": "exec",
            "workingDirectory": ctx.work}),
        ),
        201,
    )?;
    let id = task["task"]["id"]
        .as_str()
        .ok_or_else(|| format!("no task id in {task}"))?
        .to_string();
    let started = api.expect("POST", &format!("/tasks/{id}/start"), None, 200);
    let session = started
        .as_ref()
        .ok()
        .and_then(|t| t["task"]["metadata"]["sessionId"].as_str());
    match session {
        Some(sid) => {
            ctx.shared.started(sid);
            Ok((id, sid.to_string()))
        }
        None => {
            let e = format!("starting {name}: {started:?}");
            let _ = finish(api, &id);
            Err(e)
        }
    }
}

pub(super) fn task_status(v: &Value) -> &str {
    v["task"]["metadata"]["status"].as_str().unwrap_or("")
}

pub(super) fn wait_task(api: &Api, id: &str, statuses: &[&str]) -> Result<Value, String> {
    api.wait_for(
        &format!("/tasks/{id}"),
        &format!("became {statuses:?}"),
        |v| statuses.contains(&task_status(v)),
    )
}

/// Waits until the task's output holds `needle` (so the command got that far).
pub(super) fn wait_output(api: &Api, id: &str, needle: &str) -> Result<(), String> {
    api.wait_for(
        &format!("/tasks/{id}"),
        &format!("printed {needle:?}"),
        |v| {
            v["task"]["metadata"]["output"].as_array().is_some_and(|o| {
                o.iter()
                    .any(|l| l.as_str().is_some_and(|l| l.contains(needle)))
            })
        },
    )
    .map(|_| ())
}

/// Cancels the task unless it is finished, waits for it to be, then deletes it.
pub(super) fn finish(api: &Api, id: &str) -> Result<(), String> {
    let path = format!("/tasks/{id}");
    let (_, v) = api.call("GET", &path, None)?;
    if !["completed", "failed", "cancelled"].contains(&task_status(&v)) {
        api.expect("POST", &format!("{path}/cancel"), None, 200)?;
    }
    wait_task(api, id, &["completed", "failed", "cancelled"])?;
    api.expect("DELETE", &path, None, 200).map(|_| ())
}

/// Runs `body` on a started command task, then finishes it whatever `body` said.
pub(super) fn with_command(
    ctx: &Ctx,
    api: &Api,
    name: &str,
    command: &str,
    body: impl FnOnce(&str) -> Result<(), String>,
) -> Result<(), String> {
    let (id, _) = start_command(ctx, api, name, command)?;
    let outcome = body(&id);
    let finished = finish(api, &id);
    outcome.and(finished)
}

/// Waits for the task to end; an error unless it completed.
fn completes(api: &Api, id: &str) -> Result<(), String> {
    let v = wait_task(api, id, &["completed", "failed"])?;
    match task_status(&v) {
        "completed" => Ok(()),
        _ => Err(format!("the task failed: {v}")),
    }
}

pub(super) fn quick(ctx: &Ctx, api: &Api, n: u64) -> Result<(), String> {
    let cmd = format!("for i in $(seq 1 50); do printf 'soak {n} line %s\\n' $i; done");
    with_command(ctx, api, &format!("quick-{n}"), &cmd, |id| {
        completes(api, id)
    })
}

pub(super) fn python(ctx: &Ctx, api: &Api, n: u64) -> Result<(), String> {
    let cmd = format!(
        "python3 -c 'import sys\nfor i in range(200): print(\"py {n}\", i, \"\\x1b[32mok\\x1b[0m\")'"
    );
    with_command(ctx, api, &format!("python-{n}"), &cmd, |id| {
        completes(api, id)
    })
}

/// Bounded output as fast as the program can write it.
pub(super) fn flood(ctx: &Ctx, api: &Api, n: u64) -> Result<(), String> {
    let cmd = format!(
        "yes 'flooding {n}: \x1b[1mbold\x1b[0m and a long plain tail of text to fill the line' | head -c {}K",
        ctx.flood_kib
    );
    with_command(ctx, api, &format!("flood-{n}"), &cmd, |id| {
        wait_task(api, id, &["completed", "failed"]).map(|_| ())
    })
}

/// Ignores SIGTERM: cancelling it needs the SIGKILL after the grace period.
pub(super) fn deaf_to_sigterm(ctx: &Ctx, api: &Api, n: u64) -> Result<(), String> {
    let cmd = "trap '' TERM; echo deaf-armed; while :; do sleep 0.2; done";
    with_command(ctx, api, &format!("deaf-{n}"), cmd, |id| {
        wait_output(api, id, "deaf-armed")
    })
}

/// Leaves daemons behind: one in a new session (ignoring SIGTERM and SIGHUP), one double
/// forked; orchestra must end them with the agent.
pub(super) fn forker(ctx: &Ctx, api: &Api, n: u64) -> Result<(), String> {
    let cmd = "setsid sh -c 'trap \"\" TERM HUP; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 & \
               (sh -c 'sleep 1000 & exit 0' &) ; echo forked-off; sleep 1000";
    with_command(ctx, api, &format!("forker-{n}"), cmd, |id| {
        wait_output(api, id, "forked-off")
    })
}

pub(super) fn pauser(ctx: &Ctx, api: &Api, n: u64) -> Result<(), String> {
    let cmd = "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.05; done";
    with_command(ctx, api, &format!("pauser-{n}"), cmd, |id| {
        wait_output(api, id, "tick 3")?;
        api.expect("POST", &format!("/tasks/{id}/pause"), None, 200)?;
        wait_task(api, id, &["paused"])?;
        api.expect("POST", &format!("/tasks/{id}/resume"), None, 200)?;
        wait_task(api, id, &["running"])?;
        Ok(())
    })
}

/// Fails, is retried (a new pending task), and both go.
pub(super) fn failing_then_retried(ctx: &Ctx, api: &Api, n: u64) -> Result<(), String> {
    let (id, _) = start_command(ctx, api, &format!("retry-{n}"), "echo giving up; exit 3")?;
    let retried = wait_task(api, &id, &["failed"])
        .and_then(|_| api.expect("POST", &format!("/tasks/{id}/retry"), None, 201));
    let again = retried
        .as_ref()
        .ok()
        .and_then(|t| t["task"]["id"].as_str().map(str::to_string));
    let mut outcome = retried.map(|_| ());
    if let Some(again) = again {
        outcome = outcome.and(finish(api, &again));
    }
    outcome.and(finish(api, &id))
}

/// An interactive shell session of its own: typed into, paused, resumed, ended, removed.
pub(super) fn shell_session(ctx: &Ctx, api: &Api, n: u64) -> Result<(), String> {
    let created = api.expect(
        "POST",
        "/sessions",
        Some(
            json!({"task": format!("echo soak-shell-{n}-$((6*7))"), "providerId": "shell",
            "workingDirectory": ctx.work, "cols": 100, "rows": 30}),
        ),
        201,
    )?;
    let sid = created["sessionId"]
        .as_str()
        .ok_or_else(|| format!("no session id in {created}"))?
        .to_string();
    ctx.shared.started(&sid);
    let path = format!("/sessions/{sid}");
    let shows = |needle: String| {
        api.wait_for(
            &format!("{path}/peek"),
            &format!("showed {needle:?}"),
            move |v| v["screen"].as_str().is_some_and(|s| s.contains(&needle)),
        )
    };
    let outcome = (|| {
        shows(format!("soak-shell-{n}-42"))?;
        api.expect(
            "POST",
            &format!("{path}/messages"),
            Some(json!({"text": "for i in 1 2 3; do echo typed-$((i*11)); done"})),
            201,
        )?;
        shows("typed-33".into())?;
        api.expect("POST", &format!("{path}/pause"), None, 200)?;
        api.expect("POST", &format!("{path}/resume"), None, 200)?;
        Ok::<(), String>(())
    })();
    let ended = api
        .expect("DELETE", &path, None, 200)
        .and_then(|_| api.wait_for(&path, "ended", |v| v["session"]["ended"] == true))
        .and_then(|_| api.expect("DELETE", &format!("{path}?remove=true"), None, 200));
    outcome.and(ended.map(|_| ()))
}

/// Leaves agents running for the stop to end: two deaf to SIGTERM, two forking daemons, and
/// a shell; returns once each has got going.
pub(super) fn leave_running(ctx: &Ctx) -> Result<(), String> {
    let api = Api::new(&ctx.addr);
    let mut ids = Vec::new();
    for (i, (cmd, armed)) in [
        ("trap '' TERM; echo deaf-armed; while :; do sleep 0.2; done", "deaf-armed"),
        ("setsid sh -c 'trap \"\" TERM HUP; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 & (sh -c 'sleep 1000 & exit 0' &) ; echo forked-off; sleep 1000", "forked-off"),
    ]
    .iter()
    .cycle()
    .take(4)
    .enumerate()
    {
        let (id, _) = start_command(ctx, &api, &format!("at-stop-{i}"), cmd)?;
        ids.push((id, *armed));
    }
    for (id, armed) in &ids {
        wait_output(&api, id, armed)?;
    }
    let shell = api.expect(
        "POST",
        "/sessions",
        Some(json!({"task": "echo at-stop", "providerId": "shell", "workingDirectory": ctx.work})),
        201,
    )?;
    if let Some(sid) = shell["sessionId"].as_str() {
        ctx.shared.started(sid);
    }
    Ok(())
}
