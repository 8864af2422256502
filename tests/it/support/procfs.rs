//! What `/proc` says of a process; shared by the tests and the benches (included by path).

/// Resident memory of a process in KiB (`VmRSS`); 0 if it is gone.
pub fn rss_kib(pid: impl std::fmt::Display) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
