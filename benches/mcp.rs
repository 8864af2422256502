//! `orchestra mcp` over stdio against a real daemon, driven by the official MCP Python SDK's
//! client (tests/fixtures/mcp/driver.py), as an agent's MCP client would drive it:
//!
//! (a) `create_task` with `start: true` (an `exec` task running `true`): the round trip as
//!     the client sees it, p50/p99. Budget: p99 < 20 ms.
//! (b) `wait_for_task` on a pending task: from just before another client's PATCH makes it
//!     `completed` to the moment the client holds the answer (so the PATCH's own durable
//!     commit is in the figure; its round trip is printed beside). Budget: < 50 ms.
//! (c) a wait on 50 children of one parent while none of them changes for 10 s: CPU ticks
//!     (utime + stime, /proc) of the `orchestra mcp` process and of the daemon. Budget: 0
//!     ticks for the waiter.
//!
//! The figures include the Python client's own time (its JSON and validation), which a real
//! agent's client spends as well. Without `--bench` (as `cargo test --all-targets` runs it)
//! it is a short smoke run. Skipped, saying why, when the SDK cannot be installed.
//!
//! Knobs: MCP_BENCH_CREATES (default 200), MCP_BENCH_WAITS (50), MCP_BENCH_IDLE_SECS (10),
//! ORCHESTRA_BIN.

#[path = "../tests/fixtures/mcp/client.rs"]
mod client;
mod support;

use client::{McpClient, ServerSpec, is_error, structured, text};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use support::daemon::Daemon;
use support::figures::{percentile, report};
use support::{bench_mode, cpu_ticks, env_num, orchestra_bin};

fn epoch_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A tool call's final line, failing the bench on a protocol or tool error.
fn answered(c: &mut McpClient, tag: &str, what: &str) -> Value {
    let v = c
        .answer(tag, Duration::from_secs(120))
        .unwrap_or_else(|| panic!("{what}: no answer"));
    assert_eq!(v["op"], "result", "{what}: {v}");
    assert!(!is_error(&v["result"]), "{what}: {}", text(&v["result"]));
    v
}

/// Each thread of `pid` (its id and name) with the CPU ticks it has used.
fn thread_ticks(pid: i32) -> Vec<(String, u64)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|t| {
            let tid: i32 = t.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(t.path().join("comm")).ok()?;
            let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
            let after = stat.rsplit_once(')')?.1.to_string();
            let f: Vec<&str> = after.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some((format!("{tid} {}", name.trim()), ticks))
        })
        .collect()
}

fn main() {
    let bench = bench_mode("mcp");
    let python = match client::sdk_python() {
        Ok(p) => p,
        Err(why) => {
            println!("mcp: skipped: {why}");
            return;
        }
    };
    let creates = env_num("MCP_BENCH_CREATES", if bench { 200 } else { 5 }) as usize;
    let waits = env_num("MCP_BENCH_WAITS", if bench { 50 } else { 3 }) as usize;
    let idle = Duration::from_secs(env_num("MCP_BENCH_IDLE_SECS", if bench { 10 } else { 1 }));

    let root = tempfile::tempdir().expect("tempdir");
    for d in ["home", "work", "config", "state"] {
        std::fs::create_dir_all(root.path().join(d)).expect("dirs");
    }
    let bin = orchestra_bin();
    let mut daemon = Daemon::start(&bin, root.path()).expect("orchestra serve starts");
    let url = format!("http://{}", daemon.addr);
    let bin_text = bin.display().to_string();
    let work = root.path().join("work");
    let mut c = McpClient::start(
        &python,
        &ServerSpec {
            bin: &bin_text,
            args: vec!["mcp".into()],
            env: vec![
                ("ORCHESTRA_URL".into(), url.clone()),
                (
                    "ORCHESTRA_STATE_DIR".into(),
                    root.path().join("state").display().to_string(),
                ),
            ],
            cwd: &work,
        },
    );
    let mcp_pid = c.server_pid().expect("the orchestra mcp process") as i32;
    println!(
        "mcp: orchestra mcp pid {mcp_pid}, daemon pid {}",
        daemon.pid()
    );

    // (a) create_task with start: true.
    let mut rtt = Vec::with_capacity(creates);
    for i in 0..creates {
        let tag = c.call_async(
            "create_task",
            json!({"name": format!("c{i}"), "providerId": "exec", "description": "true", "start": true}),
            false,
        );
        let v = answered(&mut c, &tag, "create_task");
        assert_eq!(
            structured(&v["result"])["status"]
                .as_str()
                .map(|s| s != "pending"),
            Some(true),
            "{v}"
        );
        rtt.push(v["ms"].as_f64().unwrap_or(f64::NAN));
    }
    report("(a) create_task start:true", &mut rtt);
    let p99 = percentile(&rtt, 0.99);
    // The peer: the same two requests (create, start) sent straight to the API by this
    // process, so the MCP server's and the Python client's share shows.
    let mut direct = Vec::with_capacity(creates);
    for i in 0..creates {
        let sent = std::time::Instant::now();
        let t = daemon.call(
            "POST",
            "/tasks",
            Some(json!({"name": format!("d{i}"), "providerId": "exec", "description": "true"})),
        );
        let id = t["task"]["id"].as_str().expect("task id").to_string();
        daemon.call("POST", &format!("/tasks/{id}/start"), None);
        direct.push(sent.elapsed().as_secs_f64() * 1000.0);
    }
    report("    peer: the same over HTTP directly", &mut direct);
    println!(
        "    budget p99 < 20 ms: {}",
        if p99 < 20.0 { "met" } else { "NOT MET" }
    );

    // (b) wait_for_task: from another client's PATCH to the answer.
    let mut lat = Vec::with_capacity(waits);
    let mut patch = Vec::with_capacity(waits);
    for i in 0..waits {
        let task = daemon.call(
            "POST",
            "/tasks",
            Some(json!({"name": format!("w{i}"), "providerId": "exec", "description": "true"})),
        );
        let id = task["task"]["id"].as_str().expect("task id").to_string();
        let tag = c.call_async(
            "wait_for_task",
            json!({"id": id, "timeoutSeconds": 60}),
            true,
        );
        // The first notification: subscribed and the task read; the wait sleeps now.
        c.progress(&tag, Duration::from_secs(60))
            .expect("the wait is under way");
        let before = epoch_now();
        let sent = std::time::Instant::now();
        daemon.call(
            "PATCH",
            &format!("/tasks/{id}"),
            Some(json!({"status": "completed"})),
        );
        patch.push(sent.elapsed().as_secs_f64() * 1000.0);
        let v = answered(&mut c, &tag, "wait_for_task");
        assert_eq!(
            structured(&v["result"])["arrived"]["status"],
            "completed",
            "{v}"
        );
        lat.push((v["at"].as_f64().unwrap_or(f64::NAN) - before) * 1000.0);
    }
    report("(b) wait_for_task after a PATCH", &mut lat);
    let p99 = percentile(&lat, 0.99);
    report("    the PATCH's own round trip", &mut patch);
    println!(
        "    budget < 50 ms (p99): {}",
        if p99 < 50.0 { "met" } else { "NOT MET" }
    );

    // (c) a parent waiting on 50 quiet children.
    let parent = daemon.call("POST", "/tasks", Some(json!({"name": "parent"})));
    let parent_id = parent["task"]["id"]
        .as_str()
        .expect("parent id")
        .to_string();
    let children: Vec<String> = (0..50)
        .map(|i| {
            let t = daemon.call(
                "POST",
                "/tasks",
                Some(json!({"name": format!("child {i}"), "parentTaskId": parent_id})),
            );
            t["task"]["id"].as_str().expect("child id").to_string()
        })
        .collect();
    let tag = c.call_async(
        "wait_for_task",
        json!({"ids": children, "timeoutSeconds": 600}),
        true,
    );
    c.progress(&tag, Duration::from_secs(60))
        .expect("the wait is under way");
    let pids = [mcp_pid, daemon.pid()];
    let threads_before = thread_ticks(mcp_pid);
    let before: Vec<u64> = pids.iter().map(|p| cpu_ticks(*p)).collect();
    std::thread::sleep(idle);
    let used: Vec<u64> = pids
        .iter()
        .zip(&before)
        .map(|(p, b)| cpu_ticks(*p).saturating_sub(*b))
        .collect();
    println!(
        "  (c) 50 quiet children, {} s: orchestra mcp {} ticks, daemon {} ticks (budget: 0 for the waiter: {})",
        idle.as_secs(),
        used[0],
        used[1],
        if used[0] == 0 { "met" } else { "NOT MET" }
    );
    // Which of the waiter's threads used them, when any did.
    for (name, t) in thread_ticks(mcp_pid) {
        let b = threads_before
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, b)| *b);
        if t > b {
            println!("      orchestra mcp thread {name}: {} ticks", t - b);
        }
    }
    // One changes: the wait answers with it.
    daemon.call(
        "PATCH",
        &format!("/tasks/{}", children[17]),
        Some(json!({"status": "cancelled"})),
    );
    let v = answered(&mut c, &tag, "the wait on 50");
    assert_eq!(
        structured(&v["result"])["arrived"]["id"],
        children[17].as_str()
    );
    println!(
        "mcp: done (load {}); p99 of (a) {:.2} ms",
        support::figures::load(),
        percentile(&rtt, 0.99)
    );
    drop(c);
    daemon.stop(Duration::from_secs(20));
}
