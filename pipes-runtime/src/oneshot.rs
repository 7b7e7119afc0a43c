//! Oneshots: a pipe that carries exactly one message, the 2012 library's
//! `proto! oneshot { Oneshot: send<T: Send> { send(T) -> ! } }`, written here on one packet.
//!
//! ```
//! let (port, chan) = pipes_runtime::oneshot::<u32>();
//! std::thread::spawn(move || chan.send(42).unwrap());
//! assert_eq!(port.recv().unwrap(), 42);
//! ```

use std::fmt;
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, RecvTimeoutError, SendError, TryRecvError};
use crate::packet::{RecvPacket, SendPacket, StateName, StateWord, entangle};

const ONESHOT: StateName = StateName {
    protocol: "oneshot",
    state: "Oneshot",
};

/// Makes a oneshot pipe: the receiving and the sending end, in that order.
pub fn oneshot<T>() -> (PortOne<T>, ChanOne<T>) {
    let (chan, port) = entangle();
    (PortOne(port), ChanOne(chan))
}

/// The sending end of a oneshot: sends one message, then is gone.
pub struct ChanOne<T>(SendPacket<T>);

impl<T> ChanOne<T> {
    /// Sends the message. Never blocks; hands the message back if the port is gone.
    pub fn send(self, message: T) -> Result<(), SendError<T>> {
        self.0.send(message).map_err(SendError)
    }
}

/// The receiving end of a oneshot: receives one message, then is gone.
pub struct PortOne<T>(RecvPacket<T>);

impl<T> PortOne<T> {
    /// Blocks until the message arrives or the chan is dropped.
    pub fn recv(self) -> Result<T, RecvError> {
        self.0.recv(&ONESHOT)
    }

    /// Takes the message if it is already here; otherwise hands the port back.
    pub fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        self.0.try_recv(&ONESHOT).map_err(|e| e.map(PortOne))
    }

    /// Blocks for at most `timeout`; hands the port back if nothing arrived in time.
    pub fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        self.0
            .recv_timeout(timeout, &ONESHOT)
            .map_err(|e| e.map(PortOne))
    }

    /// Blocks until `deadline` at the latest; hands the port back if nothing arrived.
    pub fn recv_deadline(self, deadline: Instant) -> Result<T, RecvTimeoutError<Self>> {
        self.0
            .recv_deadline(deadline, &ONESHOT)
            .map_err(|e| e.map(PortOne))
    }
}

impl<T> Recv for PortOne<T> {
    type Message = T;

    fn recv(self) -> Result<T, RecvError> {
        PortOne::recv(self)
    }

    fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        PortOne::try_recv(self)
    }

    fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        PortOne::recv_timeout(self, timeout)
    }

    fn __state_word(&self) -> &StateWord {
        self.0.state_word()
    }
}

impl<T> fmt::Debug for ChanOne<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChanOne").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for PortOne<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortOne").finish_non_exhaustive()
    }
}
