//! Each API's own answer when the account's usage limit or quota is spent: the status, the
//! headers and the body its CLI reads to tell a spent limit (which it reports and gives up on)
//! from a passing overload (which it retries), and when the limit resets.
//!
//! - Anthropic Messages (claude, opencode): 429 `rate_limit_error`, with the unified
//!   rate-limit headers Claude Code reads for a subscription's limit (`…-unified-status:
//!   rejected`, `…-unified-reset` as epoch seconds) and `x-should-retry: false`, which the
//!   Anthropic SDKs honour by not retrying.
//! - OpenAI Responses (codex): 429 whose `error.type` is `usage_limit_reached` with
//!   `resets_at` (epoch seconds): Codex ends the turn with its usage-limit message instead of
//!   retrying.
//! - OpenAI Chat Completions (aider): 429 `insufficient_quota`, OpenAI's answer to a spent
//!   quota (no reset time: OpenAI names none for it).
//! - Gemini: 429 `RESOURCE_EXHAUSTED` with a `QuotaFailure` on a per-day quota and a
//!   `RetryInfo` delay, which Gemini CLI reads as a terminal quota error.

use super::script::{Limit, now_secs};
use serde_json::{Value, json};

/// An error answer: status, headers, JSON body.
pub struct Refusal {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// Seconds until it resets, and when (epoch seconds).
fn reset(limit: &Limit) -> (u64, u64) {
    let at = limit.resets_at();
    (at.saturating_sub(now_secs()), at)
}

fn headers(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

pub fn anthropic(limit: &Limit) -> Refusal {
    let (secs, at) = reset(limit);
    let reset = at.to_string();
    Refusal {
        status: 429,
        headers: headers(&[
            ("anthropic-ratelimit-unified-status", "rejected".into()),
            ("anthropic-ratelimit-unified-reset", reset.clone()),
            (
                "anthropic-ratelimit-unified-representative-claim",
                "five_hour".into(),
            ),
            ("anthropic-ratelimit-unified-5h-status", "rejected".into()),
            ("anthropic-ratelimit-unified-5h-reset", reset),
            ("anthropic-ratelimit-unified-5h-utilization", "1.0".into()),
            ("retry-after", secs.to_string()),
            ("x-should-retry", "false".into()),
            ("request-id", "req_scripted_limit".into()),
        ]),
        body: json!({"type": "error", "error": {"type": "rate_limit_error",
            "message": "This request would exceed your account's rate limit. Please try again later."},
            "request_id": "req_scripted_limit"}),
    }
}

pub fn responses(limit: &Limit) -> Refusal {
    let (secs, reset) = reset(limit);
    // Not the `x-codex-primary-*` usage headers: at 100 % they bring up Codex's "Approaching
    // rate limits: switch model?" menu, a screen of its own.
    Refusal {
        status: 429,
        headers: headers(&[("retry-after", secs.to_string())]),
        body: json!({"error": {"type": "usage_limit_reached",
            "message": "The usage limit has been reached", "plan_type": "plus",
            "resets_at": reset, "resets_in_seconds": secs}}),
    }
}

pub fn chat(limit: &Limit) -> Refusal {
    let (secs, _) = reset(limit);
    Refusal {
        status: 429,
        headers: headers(&[
            ("retry-after", secs.to_string()),
            ("x-should-retry", "false".into()),
        ]),
        body: json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}),
    }
}

pub fn gemini(limit: &Limit) -> Refusal {
    let (secs, _) = reset(limit);
    Refusal {
        status: 429,
        headers: Vec::new(),
        body: json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
             "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                             "quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo",
             "retryDelay": format!("{secs}s")},
        ]}}),
    }
}
