//! The tools that talk with a task's agent: read what it shows, type to it, answer its
//! question.

use super::args::{AnswerPrompt, ReadOutput, SendMessage};
use super::refusal::Tool;
use super::{Ctx, Outcome, fetch_session, fetch_task, parse, refused, task_answer};
use orchestra_client::http::Method;
use orchestra_proto::routes;
use orchestra_proto::task::Task;
use orchestra_proto::wire::request::{self, Answer};
use orchestra_proto::wire::{MessageBody, Peek, SessionBody, TaskBody};
use rmcp::model::JsonObject;
use serde_json::json;

const DEFAULT_LINES: u32 = 40;
const MAX_LINES: u32 = 2000;
/// How much of a transcript is read when the task kept no output lines.
const TRANSCRIPT_BYTES: usize = 256 * 1024;

pub async fn read(ctx: &Ctx, args: Option<JsonObject>) -> Outcome {
    let a: ReadOutput = parse("read_output", args)?;
    let n = a.lines.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES) as usize;
    let search = a.search.filter(|s| !s.is_empty());
    let task = fetch_task(ctx, &a.id, Tool::Output).await?;
    let session = fetch_session(ctx, &task).await;
    let live = session.as_ref().filter(|s| !s.ended);
    if let (Some(s), None) = (live, &search) {
        let lines = screen_lines(ctx, &s.id, n)
            .await
            .map_err(|e| refused(Tool::Output, e))?;
        return Ok(lines_of(&task, "screen", lines));
    }
    let matches = |l: &str| search.as_deref().is_none_or(|s| l.contains(s));
    let kept: Vec<String> = task
        .metadata
        .output
        .iter()
        .map(|l| l.as_str())
        .filter(|l| matches(l))
        .map(str::to_string)
        .collect();
    if !task.metadata.output.is_empty() {
        return Ok(lines_of(&task, "output", last(kept, n)));
    }
    // Nothing recorded as lines (a session restored from an earlier run): its transcript.
    let Some(s) = session else {
        return Ok(lines_of(&task, "output", Vec::new()));
    };
    let path = format!(
        "{}?bytes={TRANSCRIPT_BYTES}",
        routes::at(routes::SESSION_TRANSCRIPT, &[&s.id])
    );
    let bytes = ctx
        .remote
        .bytes(path)
        .await
        .map_err(|e| refused(Tool::Output, e))?;
    let text = strip_ansi(&String::from_utf8_lossy(&bytes));
    let lines: Vec<String> = text
        .lines()
        .map(|l| l.rsplit('\r').next().unwrap_or(l).trim_end().to_string())
        .filter(|l| !l.is_empty() && matches(l))
        .collect();
    Ok(lines_of(&task, "transcript", last(lines, n)))
}

/// The last `n` lines a live session shows (its scrollback, then its screen), without the
/// screen's blank bottom.
pub(super) async fn screen_lines(
    ctx: &Ctx,
    session_id: &str,
    n: usize,
) -> Result<Vec<String>, crate::remote::Failed> {
    let path = format!(
        "{}?lines={n}",
        routes::at(routes::SESSION_PEEK, &[session_id])
    );
    let peek: Peek = ctx.remote.get(path, "a screen").await?;
    let mut lines: Vec<String> = peek.scrollback.unwrap_or_default();
    lines.extend(peek.screen.split('\n').map(str::to_string));
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    Ok(last(lines, n))
}

fn lines_of(task: &Task, source: &str, lines: Vec<String>) -> serde_json::Value {
    json!({"id": task.id, "status": task.metadata.status, "source": source, "lines": lines})
}

fn last(mut lines: Vec<String>, n: usize) -> Vec<String> {
    let cut = lines.len().saturating_sub(n);
    lines.drain(..cut);
    lines
}

/// Terminal text without its escape sequences (CSI, OSC and two-byte escapes).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameters and intermediates, up to the final byte.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                // Up to BEL or ST (ESC \).
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The session a message or an answer to `task` goes to.
fn session_of(task: &Task) -> Result<String, String> {
    task.metadata.session_id.clone().ok_or_else(|| {
        format!(
            "task {} has no session (it is {}): start_task or continue_task first",
            task.id, task.metadata.status
        )
    })
}

pub async fn send(ctx: &Ctx, args: Option<JsonObject>) -> Outcome {
    let a: SendMessage = parse("send_message", args)?;
    let task = fetch_task(ctx, &a.id, Tool::Message).await?;
    let sid = session_of(&task)?;
    let sent: MessageBody = ctx
        .remote
        .send(
            Method::Post,
            routes::at(routes::SESSION_MESSAGES, &[&sid]),
            request::SendMessage::Text(a.text),
            "a message",
        )
        .await
        .map_err(|e| refused(Tool::Message, e))?;
    Ok(json!({"id": task.id, "sessionId": sid, "message": sent.message}))
}

pub async fn answer(ctx: &Ctx, args: Option<JsonObject>) -> Outcome {
    let a: AnswerPrompt = parse("answer_prompt", args)?;
    let option = Answer {
        option: a.option.text(),
    };
    let task = fetch_task(ctx, &a.id, Tool::Answer).await?;
    // The task's own question (trust, before its agent starts) comes first: it has no
    // session to answer in yet.
    if task.metadata.prompt.is_some() {
        let body: TaskBody = ctx
            .remote
            .send(
                Method::Post,
                routes::at(routes::TASK_ANSWER, &[&task.id]),
                option,
                "a task",
            )
            .await
            .map_err(|e| refused(Tool::Answer, e))?;
        return Ok(task_answer(ctx, &body.task).await);
    }
    let sid = session_of(&task)?;
    let _: SessionBody = ctx
        .remote
        .send(
            Method::Post,
            routes::at(routes::SESSION_ANSWER, &[&sid]),
            option,
            "a session",
        )
        .await
        .map_err(|e| refused(Tool::Answer, e))?;
    let now = fetch_task(ctx, &task.id, Tool::Answer).await?;
    Ok(task_answer(ctx, &now).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_stripped() {
        assert_eq!(
            strip_ansi("\u{1b}[1;31mred\u{1b}[0m \u{1b}]0;title\u{7}done"),
            "red done"
        );
    }
}
