//! Typing into a session: the first instruction once the agent is ready, raw keystrokes,
//! and sends (text submitted, or named keys), each in its turn and recorded as a message.
//! What is typed is also what the reply awaited and the status are measured from.

use super::messages::new_message;
use super::replies::{PendingReply, screen_lines};
use super::{SendMessage, SessionEntry, session_error};
use crate::engine::status::{Fact, SessionStatus};
use crate::engine::{Engine, EngineError, EngineResult};
use crate::providers::Provider;
use crate::store::{Removal, Table};
use orchestra_proto::wire::{Message, Role};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use tokio::sync::oneshot;

/// What submits a typed line to the session's program (its provider's submit key).
fn submit_bytes(provider: Option<&Provider>) -> &'static [u8] {
    provider.map(|p| p.submit).unwrap_or_default().bytes()
}

/// A send stored and in its turn, still to be typed.
struct Accepted {
    pty: Arc<crate::session::PtySession>,
    message: Message,
    /// The store's place of the previous reply, if the screen shows one.
    reply_seq: i64,
    /// Whether a reply to it is the agent's work on its task (see `PendingReply::request`).
    request: bool,
}

/// Whether a typed byte ends the line being typed: Enter submits it, Ctrl-C and Ctrl-U
/// throw it away.
fn ends_a_line(byte: u8) -> bool {
    matches!(byte, b'\r' | b'\n' | 0x03 | 0x15)
}

impl Engine {
    /// Types the first instruction if it is still pending; exactly once, whoever calls.
    pub(super) async fn type_first_instruction(&self, entry: &Arc<SessionEntry>) {
        // Once typed, a `ready` does not wait for a write in progress (a stopped child).
        if entry.first_instruction.lock().is_none() {
            return;
        }
        let _turn = entry.typing.lock().await;
        let first = entry.first_instruction.lock().take();
        if let Some(text) = first
            && let Err(e) = self.type_now(entry, SendMessage::Text(text), None).await
        {
            tracing::warn!(error = %e, "could not type the first instruction");
        }
    }

    /// Before input someone types into a session that is not ready yet (still starting, or
    /// its output not settled): the first instruction goes first, so the typed input comes
    /// after it instead of ahead of it (and the instruction is not typed into a line the
    /// user left half-done). Not while a question waits for an answer: what is typed then
    /// answers it, and the instruction waits for the input prompt.
    async fn first_instruction_before_input(&self, entry: &Arc<SessionEntry>) {
        let asked = entry.info.lock().status == SessionStatus::Blocked
            || entry.agent.lock().answering.is_some();
        if !asked {
            self.type_first_instruction(entry).await;
        }
    }

    /// Writes raw bytes (keystrokes) to a session's terminal, after its first instruction
    /// (see `first_instruction_before_input`) and after whatever was typed before them.
    pub async fn write_input(&self, id: &str, bytes: Vec<u8>) -> EngineResult<()> {
        let entry = self.session_entry(id)?;
        self.first_instruction_before_input(&entry).await;
        self.limit_over(&entry);
        let _turn = entry.typing.lock().await;
        let pty = entry.live_pty()?.clone();
        if let Some(last) = bytes.last() {
            entry
                .typed_line
                .typed(ends_a_line(*last), pty.screen_generation());
        }
        // Here when the terminal has room (nearly always): a hop to another thread would
        // have to wait for a turn on a CPU that busy agents keep taken.
        let done = pty.try_write(&bytes).map_err(session_error)?;
        if done == bytes.len() {
            return Ok(());
        }
        // A child that does not read its input: waiting for room is for a blocking thread.
        let rest = bytes[done..].to_vec();
        tokio::task::spawn_blocking(move || pty.write(&rest))
            .await
            .map_err(|e| EngineError::Internal(format!("write failed: {e}")))?
            .map_err(session_error)
    }

    /// Types text (and submits it) or sends keys; records it as a `user` message. Returns
    /// once it is typed.
    pub(crate) async fn send_to(
        &self,
        entry: &Arc<SessionEntry>,
        send: SendMessage,
        auto: Option<String>,
    ) -> EngineResult<Message> {
        let _turn = entry.typing.lock().await;
        self.type_now(entry, send, auto).await
    }

    /// Types text orchestra asks the agent to act on (a failed check sent back): recorded
    /// with `auto` saying why, yet a request like the user's, the agent's reply to it its
    /// work on the task.
    pub(crate) async fn send_request_to(
        &self,
        entry: &Arc<SessionEntry>,
        text: String,
        auto: String,
    ) -> EngineResult<Message> {
        let _turn = entry.typing.lock().await;
        let send = SendMessage::Text(text);
        let mut accepted = self.accept_send(entry, &send, Some(auto)).await?;
        accepted.request = true;
        self.type_accepted(entry, send, accepted).await
    }

    /// A send from outside (the API: a message, an answer to a prompt): returns once it is
    /// accepted, that is durable and in its turn, and is typed right after, in that turn.
    ///
    /// Why not once typed: before typing, the screen is read for the previous reply, and a
    /// flooding session's screen is behind its parser's lock, taken by a bulk thread that
    /// busy agents keep short of CPU (tens of milliseconds, hundreds at worst). Nothing of
    /// what the caller is told depends on that read. The send runs on a task of its own, so
    /// that a caller who goes away does not cut it short between the store and the terminal.
    pub(in crate::engine) async fn send_accepted(
        &self,
        entry: &Arc<SessionEntry>,
        send: SendMessage,
    ) -> EngineResult<Message> {
        let (accepted, answer) = oneshot::channel();
        let engine = self.clone();
        let entry = entry.clone();
        tokio::spawn(async move {
            let accepting = entry.accepting.lock().await;
            let send_in_turn = match engine.accept_send(&entry, &send, None).await {
                Err(e) => {
                    let _ = accepted.send(Err(e));
                    return;
                }
                Ok(a) => a,
            };
            // Its place in the typing queue (a fair one) is taken before the next send is
            // accepted, so sends are typed in the order they were accepted; the caller is
            // answered without waiting for the sends ahead of it to be typed.
            let typing = entry.typing.lock();
            tokio::pin!(typing);
            let turn_now = std::future::poll_fn(|cx| Poll::Ready(typing.as_mut().poll(cx))).await;
            drop(accepting);
            let _ = accepted.send(Ok(send_in_turn.message.clone()));
            let _turn = match turn_now {
                Poll::Ready(turn) => turn,
                Poll::Pending => typing.await,
            };
            if let Err(e) = engine.type_accepted(&entry, send, send_in_turn).await {
                tracing::warn!(error = %e, "an accepted send was not typed");
            }
        });
        answer
            .await
            .map_err(|_| EngineError::Internal("the send stopped before it was stored".into()))?
    }

    /// `send_to`, the caller holding the session's `typing` turn.
    pub(in crate::engine) async fn type_now(
        &self,
        entry: &Arc<SessionEntry>,
        send: SendMessage,
        auto: Option<String>,
    ) -> EngineResult<Message> {
        let accepted = self.accept_send(entry, &send, auto).await?;
        self.type_accepted(entry, send, accepted).await
    }

    /// The first half of a send, in the caller's turn (the typing turn, or for a send from
    /// outside the accepting one): the session still lives and is not being ended, and the
    /// message is durable. Kept before anything is typed: a message the store cannot keep (a
    /// full disk) is refused with nothing typed, and one that is typed is never lost.
    async fn accept_send(
        &self,
        entry: &Arc<SessionEntry>,
        send: &SendMessage,
        auto: Option<String>,
    ) -> EngineResult<Accepted> {
        let pty = entry.live_pty()?.clone();
        if entry.ending_on_purpose.load(Ordering::SeqCst) {
            return Err(EngineError::Conflict(format!(
                "session {} is being ended; nothing more is typed into it",
                entry.info.lock().id
            )));
        }
        let (text, keys) = match send {
            SendMessage::Text(t) => (t.clone(), None),
            SendMessage::Keys(k) => (format!("[{}]", k.join(" ")), Some(k.clone())),
        };
        // The previous reply, taken once the screen is read, ends where this send begins:
        // its place in the store's order is kept ahead of this send's, stored first.
        let reply_seq = self.next_seq();
        let request = keys.is_none() && auto.is_none();
        let message = new_message(Role::User, text, keys, auto);
        self.store_message(entry, &message, self.next_seq()).await?;
        Ok(Accepted {
            pty,
            message,
            reply_seq,
            request,
        })
    }

    /// The second half of a send, in the same turn: the previous reply taken, the message
    /// typed, the reply to it awaited, the message published.
    async fn type_accepted(
        &self,
        entry: &Arc<SessionEntry>,
        send: SendMessage,
        accepted: Accepted,
    ) -> EngineResult<Message> {
        let Accepted {
            pty,
            message,
            reply_seq,
            request,
        } = accepted;
        let text = message.text.clone();
        let keys = message.keys.clone();
        // One look at the screen: the previous reply ends where this send begins.
        let before = screen_lines(&pty).await;
        let previous = self.take_reply(entry, &before);
        if let Some((request, text)) = &previous {
            self.reply_taken(entry, *request, text);
        }
        self.limit_over(entry);
        let submit = submit_bytes(entry.provider.as_ref());
        // Text is submitted; keys end a line when the last is Enter (or Ctrl-C, Ctrl-U).
        let half_typed = keys.as_ref().is_some_and(|k| {
            k.last()
                .and_then(|name| crate::session::encode_key(name, false).ok())
                .and_then(|bytes| bytes.last().copied())
                .is_none_or(|b| !ends_a_line(b))
        });
        entry.typed_line.typed(!half_typed, pty.screen_generation());
        // What the agent's hook said last is over once something is typed: the screen
        // decides until its next hook event (cleared first: that event may follow at once).
        if let Some(changed) = entry.record_fact(Fact::Hook(None)) {
            self.save_status(entry, &changed);
        }
        if let Some((_, text)) = previous {
            self.record_message_at(entry, Role::Agent, text, None, None, reply_seq)
                .await;
        }
        // A child that does not read its input can make a PTY write block: keep that off the
        // async workers.
        let writer = pty.clone();
        let typed = tokio::task::spawn_blocking(move || match send {
            SendMessage::Text(t) => writer.send_text(&t, submit),
            SendMessage::Keys(k) => writer.send_keys(&k),
        })
        .await
        .map_err(|e| EngineError::Internal(format!("send failed: {e}")))
        .and_then(|r| r.map_err(session_error));
        if let Err(e) = typed {
            // Not typed (the session ended meanwhile): not kept as sent either.
            let gone = Removal::Record(Table::Messages, message.id.clone());
            if let Err(e) = self.store().remove(vec![gone]).await {
                tracing::error!(error = %e, "could not remove a message that was not sent");
            }
            return Err(e);
        }
        {
            let mut pending = entry.reply.lock();
            // Keys (a housekeeping or permission answer) do not end the wait for the reply
            // to a request not answered yet: that reply is the agent's work.
            if keys.is_none() || !pending.as_ref().is_some_and(|p| p.request) {
                *pending = Some(PendingReply {
                    before,
                    sent: if keys.is_some() {
                        String::new()
                    } else {
                        text.clone()
                    },
                    request,
                    after_echo: false,
                });
            }
        }
        Ok(self.add_message(entry, message))
    }

    pub async fn send_message(&self, id: &str, send: SendMessage) -> EngineResult<Message> {
        let entry = self.session_entry(id)?;
        if let SendMessage::Keys(k) = &send {
            // Validate every key before sending any.
            crate::session::parse_keys(k).map_err(|e| session_error(e.into()))?;
        }
        entry.live_pty()?;
        self.first_instruction_before_input(&entry).await;
        self.send_accepted(&entry, send).await
    }
}
