//! Streams: an unbounded pipe of many messages in order, the 2012 library's
//! `proto! streamp { Open: send<T: Send> { data(T) -> Open<T> } }`, written here on packets.
//! Each message travels in a fresh packet together with the receiving end of the next one.
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
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, RecvTimeoutError, SendError, TryRecvError};
use crate::packet::{FULL, RecvPacket, SendPacket, StateName, StateWord, closed_word, entangle};

const OPEN: StateName = StateName {
    protocol: "stream",
    state: "Open",
};

/// One message of a stream: the payload and the receiving end of the packet for the next.
pub(crate) struct Data<T>(T, RecvPacket<Data<T>>);

/// Makes a stream: the receiving and the sending end, in that order.
pub fn stream<T>() -> (Port<T>, Chan<T>) {
    let (chan, port) = entangle();
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
    next: Cell<Option<SendPacket<Data<T>>>>,
}

impl<T> Chan<T> {
    /// Sends a message. Never blocks; hands the message back if the port is gone.
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        self.send_linked(message, entangle())
    }

    /// Sends `message` with `next` as the packet for the message after it. `SharedChan` makes
    /// `next` before it takes its lock, so the allocation is not done under the lock.
    pub(crate) fn send_linked(
        &self,
        message: T,
        (next, next_port): (SendPacket<Data<T>>, RecvPacket<Data<T>>),
    ) -> Result<(), SendError<T>> {
        let Some(packet) = self.next.take() else {
            return Err(SendError(message));
        };
        match packet.send(Data(message, next_port)) {
            Ok(()) => {
                self.next.set(Some(next));
                Ok(())
            }
            // The port is gone: `next` and its port drop here, and `self.next` stays empty.
            Err(Data(message, _)) => Err(SendError(message)),
        }
    }
}

/// The receiving end of a stream. It is an [`Iterator`] that ends when the chan is dropped and
/// every message is taken.
pub struct Port<T> {
    /// The packet the next message arrives in; `None` once the chan is known to be gone.
    next: Cell<Option<RecvPacket<Data<T>>>>,
}

impl<T> Port<T> {
    /// Blocks until a message arrives; fails once the chan is dropped and the stream drained.
    pub fn recv(&self) -> Result<T, RecvError> {
        let packet = self.next.take().ok_or(closed())?;
        let Data(message, next) = packet.recv(&OPEN)?;
        self.next.set(Some(next));
        Ok(message)
    }

    /// Takes a message if one is already here.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let packet = self.next.take().ok_or(closed())?;
        match packet.try_recv(&OPEN) {
            Ok(Data(message, next)) => {
                self.next.set(Some(next));
                Ok(message)
            }
            Err(error) => Err(error.map(|packet| self.next.set(Some(packet)))),
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
        let packet = self.next.take().ok_or(closed())?;
        match packet.recv_deadline(deadline, &OPEN) {
            Ok(Data(message, next)) => {
                self.next.set(Some(next));
                Ok(message)
            }
            Err(error) => Err(error.map(|packet| self.next.set(Some(packet)))),
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
            Some(packet) => packet.state_word(),
            None => closed_word(),
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

fn closed() -> RecvError {
    RecvError::new(OPEN.protocol, OPEN.state)
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
    /// Drains the stream iteratively: each unreceived message holds the rest of the stream, so
    /// letting drop glue recurse would overflow the stack on a long backlog.
    fn drop(&mut self) {
        while let Some(packet) = self.next.take() {
            if let Ok(Data(message, next)) = packet.try_recv(&OPEN) {
                drop(message);
                self.next.set(Some(next));
            }
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
