//! Figures the benches print: latencies in ms, their spread, CPU ticks over a window.

use super::cpu_ticks;
use std::time::Duration;

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// (median, p90, max) in ms.
pub fn spread(samples: &mut [f64]) -> (f64, f64, f64) {
    if samples.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    samples.sort_by(f64::total_cmp);
    (
        percentile(samples, 0.5),
        percentile(samples, 0.9),
        samples[samples.len() - 1],
    )
}

/// The `q` quantile (0..=1) of sorted samples; NaN if there are none.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n => sorted[((n - 1) as f64 * q).round() as usize],
    }
}

pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Context switches (voluntary and not) of all of a process's threads so far: each is a
/// thread put to sleep or preempted and woken again, what a hand-off between threads costs.
pub fn context_switches(pid: i32) -> u64 {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    threads
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

pub fn ticks_over(pids: &[i32], window: Duration) -> Vec<u64> {
    let before: Vec<u64> = pids.iter().map(|p| cpu_ticks(*p)).collect();
    std::thread::sleep(window);
    pids.iter()
        .zip(before)
        .map(|(p, b)| cpu_ticks(*p).saturating_sub(b))
        .collect()
}

pub fn report(name: &str, samples: &mut [f64]) -> f64 {
    let (p50, p90, max) = spread(samples);
    let p99 = percentile(samples, 0.99);
    println!(
        "  {name:<34} n={:<4} median {p50:6.2} ms  p90 {p90:6.2} ms  p99 {p99:6.2} ms  max {max:7.2} ms",
        samples.len()
    );
    p50
}
