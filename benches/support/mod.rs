//! Helpers shared by the benches.
#![allow(dead_code)]

pub mod daemon;
pub mod figures;
pub mod tmux;

/// A whole number from the environment, or `default`.
pub fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// User + system CPU ticks a process has used (`/proc/PID/stat`); 0 if it is gone.
pub fn cpu_ticks(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| {
            let after = t.rsplit_once(')')?.1.to_string();
            let f: Vec<&str> = after.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0)
}

/// A JSON request to a bench's server: GET, or POST with or without a body; `Null` when it
/// fails (benches report what they measured, they do not judge the API).
pub fn json_call(
    http: &ureq::Agent,
    method: &str,
    url: &str,
    body: Option<serde_json::Value>,
) -> serde_json::Value {
    let resp = match (method, body) {
        ("GET", _) => http.get(url).call(),
        (_, Some(b)) => http
            .post(url)
            .header("Content-Type", "application/json")
            .send(b.to_string().as_str()),
        (_, None) => http.post(url).send_empty(),
    };
    resp.ok()
        .and_then(|mut r| r.body_mut().read_to_string().ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// Writes about `mb` MiB of coloured lines that all differ (so every screen update has work
/// in it) to `path`; returns the bytes written.
pub fn flood_file(path: &std::path::Path, mb: u64) -> std::io::Result<u64> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let (target, mut written, mut i) = (mb * 1024 * 1024, 0u64, 0u64);
    while written < target {
        let line = format!(
            "\x1b[3{c}m[{i:09}]\x1b[0m building unit {i} of the flood, \x1b[1mbold\x1b[0m and plain text {i:x}\r\n",
            c = i % 7 + 1
        );
        std::io::Write::write_all(&mut f, line.as_bytes())?;
        written += line.len() as u64;
        i += 1;
    }
    std::io::Write::flush(&mut f)?;
    Ok(written)
}
