//! A stream client's upgraded socket, shared by the two sides that use it: the client's
//! task writes (frames, errors, pongs) through the runtime, the input thread reads in the
//! kernel (`input.rs`).

use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// The socket's two handles: the writer (which can also end both) and the reader.
pub(super) struct Split {
    pub writing: WriteOnly,
    pub reading: TcpStream,
}

/// Takes the socket out of the runtime's reactor and shares it: the reader gets a
/// non-blocking duplicate (it waits with poll), the writer is registered for writability
/// only. Registered as a plain socket it would be for reading too, and every key the input
/// thread reads would also wake a runtime worker for nothing.
pub(super) fn split(socket: tokio::net::TcpStream) -> io::Result<Split> {
    let socket = socket.into_std()?;
    let reading = socket.try_clone()?;
    // SAFETY: the socket owns its descriptor, and the `AsyncFd` owns the socket until it
    // is dropped: the descriptor is neither closed nor replaced while registered.
    let writing =
        WriteOnly(unsafe { AsyncFd::register_with_interest(socket, Interest::WRITABLE)? });
    Ok(Split { writing, reading })
}

/// The writing side of the socket.
pub(super) struct WriteOnly(AsyncFd<TcpStream>);

impl WriteOnly {
    /// Ends the connection both ways: the input thread, waiting to read, wakes to its end.
    pub fn shut_down(&self) {
        let _ = self.0.get_ref().shutdown(Shutdown::Both);
    }
}

impl AsyncWrite for WriteOnly {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut ready = ready!(self.0.poll_write_ready(cx))?;
            if let Ok(written) = ready.try_io(|socket| socket.get_ref().write(buf)) {
                return Poll::Ready(written);
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered here: each write went to the kernel.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.get_ref().shutdown(Shutdown::Write))
    }
}

impl AsyncRead for WriteOnly {
    /// Never called by the writer (sending frames only writes); should it be, it is told
    /// that another side reads this socket rather than left waiting.
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Ready(Err(io::Error::other(
            "this side of a stream's socket only writes; its input thread reads",
        )))
    }
}
