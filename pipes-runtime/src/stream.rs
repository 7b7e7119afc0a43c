//! Streams: an unbounded pipe of many messages in order, declared with `proto!` as the 2012
//! library's `streamp`. Each message travels in a fresh packet together with the receiving
//! end of the next one; `Port` and `Chan` keep the current endpoint in a cell so they can be
//! used through `&self`.
//!
//! ```
//! let (port, chan) = pipes_runtime::stream::<u32>();
//! std::thread::spawn(move || {
//!     for i in 0..3 {
//!         chan.send(i).unwrap();
//!     }
//! });
//! assert_eq!(port.collect::<Vec<_>>(), [0, 1, 2]);
//! ```

use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, RecvTimeoutError, SendError, TryRecvError};
use crate::future::Registration;
use crate::wait::{EMPTY, FULL, StateWord, closed_word};

crate::proto! {
    #[allow(dead_code)]
    stream {
        Open: send<T> { Data(T) -> Open<T> }
    }
}

use stream::Open::Data;

/// Makes a stream: the receiving and the sending end, in that order.
pub fn stream<T>() -> (Port<T>, Chan<T>) {
    let (port, chan) = stream::init();
    (
        Port {
            next: Cell::new(Some(port)),
        },
        Chan {
            next: Cell::new(Some(chan)),
        },
    )
}

/// The sending end of a stream. Not `Sync`: share it through a `SharedChan`.
pub struct Chan<T> {
    /// The packet the next message goes into; `None` once the port is known to be gone.
    next: Cell<Option<stream::client::Open<T>>>,
}

impl<T> Chan<T> {
    /// Sends a message. Never blocks; hands the message back if the port is gone.
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        let Some(open) = self.next.take() else {
            return Err(SendError(message));
        };
        // On an error the port is gone and `self.next` stays empty.
        self.next.set(Some(open.data(message)?));
        Ok(())
    }
}

/// The receiving end of a stream. It is an [`Iterator`] that ends when the chan is dropped and
/// every message is taken. Dropping it with messages still queued drops them in a loop, not by
/// recursion (each message holds the rest of the stream), as for every protocol's endpoints.
pub struct Port<T> {
    /// The packet the next message arrives in; `None` once the chan is known to be gone.
    next: Cell<Option<stream::server::Open<T>>>,
}

impl<T> Port<T> {
    /// Blocks until a message arrives; fails once the chan is dropped and the stream drained.
    pub fn recv(&self) -> Result<T, RecvError> {
        let open = self.next.take().ok_or(closed())?;
        let Data(message, next) = open.recv()?;
        self.next.set(Some(next));
        Ok(message)
    }

    /// Takes a message if one is already here.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let open = self.next.take().ok_or(closed())?;
        match open.try_recv() {
            Ok(Data(message, next)) => {
                self.next.set(Some(next));
                Ok(message)
            }
            Err(error) => Err(error.map(|open| self.next.set(Some(open)))),
        }
    }

    /// Blocks for at most `timeout` waiting for a message.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.recv_deadline(deadline),
            None => self.recv().map_err(RecvTimeoutError::Disconnected),
        }
    }

    /// Blocks until `deadline` at the latest waiting for a message.
    pub fn recv_deadline(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        let open = self.next.take().ok_or(closed())?;
        match open.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Data(message, next)) => {
                self.next.set(Some(next));
                Ok(message)
            }
            Err(error) => Err(error.map(|open| self.next.set(Some(open)))),
        }
    }

    /// Whether a message is waiting, so `try_recv` would return it (the 2012 `peek`). `false`
    /// when the stream is empty, and also once the chan is gone and every message taken.
    pub fn peek(&self) -> bool {
        self.state_word().load() == FULL
    }

    /// The state word of the packet the next message arrives in (a word that stays
    /// `TERMINATED` once the chan is known to be gone): what select and port sets wait on.
    /// The word lives in that packet, so it must not be used after this port next receives.
    pub(crate) fn state_word(&self) -> &StateWord {
        // SAFETY: `Port` is not `Sync` and nothing on this thread is inside another method of
        // this port while we read (none calls out), so the cell is not written during the read;
        // the reference to the cell's contents ends here, and the word returned lives in the
        // packet on the heap, which stays alive until this port's next receive.
        match unsafe { &*self.next.as_ptr() } {
            Some(open) => open.__state_word(),
            None => closed_word(),
        }
    }

    /// A future of the next message, for any executor; resolves as `recv` returns.
    ///
    /// Cancel-safe: dropping it before it resolves loses nothing. The port stays open and a
    /// message that arrived meanwhile is the next one received. While the future is pending
    /// it holds the port's endpoint, so a receive through the port itself in the meantime
    /// reports the stream closed. The future borrows the port, which is not `Sync`, so it is
    /// not `Send`: to receive on a multi-threaded executor, own the port inside the task.
    pub fn recv_async(&self) -> PortRecv<'_, T> {
        PortRecv {
            open: self.next.take(),
            port: self,
            registration: Registration::default(),
        }
    }

    /// An iterator over messages that blocks for each and ends when the chan is gone.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { port: self }
    }

    /// An iterator over the messages already here; it never blocks.
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { port: self }
    }
}

/// The future of [`Port::recv_async`].
#[must_use = "a future does nothing unless polled"]
pub struct PortRecv<'a, T> {
    port: &'a Port<T>,
    /// The port's endpoint, taken out while the future is pending and put back when it
    /// resolves or is dropped; `None` from the start when the chan is known to be gone.
    open: Option<stream::server::Open<T>>,
    registration: Registration,
}

// Nothing is pinned: the state word holds the waiter's address, not the future's.
impl<T> Unpin for PortRecv<'_, T> {}

impl<T> Future for PortRecv<'_, T> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let Some(open) = &this.open else {
            return Poll::Ready(Err(closed()));
        };
        ready!(this.registration.poll(open.__state_word(), EMPTY, cx));
        let open = this.open.take().expect("the endpoint is still ours");
        // The packet is settled (the sender made its final transition), so this cannot find
        // it empty.
        match open.try_recv() {
            Ok(Data(message, next)) => {
                this.port.next.set(Some(next));
                Poll::Ready(Ok(message))
            }
            Err(TryRecvError::Disconnected(error)) => Poll::Ready(Err(error)),
            Err(TryRecvError::Empty(_)) => unreachable!("a settled packet is not empty"),
        }
    }
}

impl<T> Drop for PortRecv<'_, T> {
    fn drop(&mut self) {
        if let Some(open) = self.open.take() {
            // Take the waker back (or find the sender took it: then the message is there for
            // the port's next receive) and hand the endpoint back to the port.
            self.registration.cancel(open.__state_word(), EMPTY);
            self.port.next.set(Some(open));
        }
    }
}

impl<T> fmt::Debug for PortRecv<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortRecv")
            .field("resolved", &self.open.is_none())
            .finish_non_exhaustive()
    }
}

/// The error of a port whose chan is known to be gone.
fn closed() -> RecvError {
    RecvError::new("stream", "Open")
}

impl<T> Iterator for Port<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.recv().ok()
    }
}

/// Blocking iterator over a borrowed [`Port`]; see [`Port::iter`].
#[derive(Debug)]
pub struct Iter<'a, T> {
    port: &'a Port<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.port.recv().ok()
    }
}

/// Non-blocking iterator over a borrowed [`Port`]; see [`Port::try_iter`].
#[derive(Debug)]
pub struct TryIter<'a, T> {
    port: &'a Port<T>,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.port.try_recv().ok()
    }
}

/// A borrowed port is a receiving endpoint for select: `select2(&a, &b)` waits on two streams,
/// and the port that was not ready is simply the borrow handed back. Unlike a protocol's
/// endpoints it is not consumed by a receive, so `try_recv` hands back the same borrow.
impl<T> Recv for &Port<T> {
    type Message = T;

    fn recv(self) -> Result<T, RecvError> {
        Port::recv(self)
    }

    fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        Port::try_recv(self).map_err(|error| error.map(|()| self))
    }

    fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        Port::recv_timeout(self, timeout).map_err(|error| error.map(|()| self))
    }

    fn __state_word(&self) -> &StateWord {
        Port::state_word(self)
    }
}

impl<'a, T> IntoIterator for &'a Port<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> Drop for Port<T> {
    /// Receives and drops the messages already here in a loop: every protocol's endpoints drop
    /// a backlog iteratively anyway (`drop_queue.rs`), but a receive per message is the fastest
    /// way through one, and a port dropped while its chan keeps sending must outrun the chan to
    /// the packet it is filling before the chan learns the port is gone. When the loop finds a
    /// packet empty, dropping that endpoint closes it; if the chan filled it in between, the
    /// endpoint's drop goes on through the rest of the stream, iteratively too.
    fn drop(&mut self) {
        let mut next = self.next.take();
        while let Some(open) = next {
            next = match open.try_recv() {
                Ok(Data(message, open)) => {
                    drop(message);
                    Some(open)
                }
                Err(_) => None,
            };
        }
    }
}

impl<T> fmt::Debug for Chan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chan").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Port<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Port").finish_non_exhaustive()
    }
}
