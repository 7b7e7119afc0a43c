//! Unbounded sessions: a protocol whose states can loop without waiting for the peer (a
//! stream of `Deposit`s) runs over two lanes, one per direction, allocated by `init()`. Each
//! lane carries every message its sender can send in any state, as one hidden enum per
//! direction that `proto!` generates; the receiver knows which state it is in from its
//! endpoint's type, and builds its endpoint for the next state around the same [`Duplex`]. So a
//! message costs a slot write and one swap, and nothing is allocated while the receiver keeps
//! up (lanes recycle their segments).
//!
//! Each endpoint of the session holds the side's `Duplex`: the sending end of one lane and the
//! receiving end of the other. Dropping it (an endpoint dropped mid-protocol, or the last
//! message sent or received) hangs up the one and closes the other, so the peer's next receive
//! reports the pipe closed once it has taken what was sent before, and its next send hands its
//! message back. Messages nobody received are dropped with the receiving end, in a loop (the
//! lane's drop), however many there are and whatever endpoints they carry.

use std::fmt;
use std::time::Instant;

use crate::error::{Cause, RecvError, RecvTimeoutError, TryRecvError};
use crate::lane::{LaneRx, LaneTx, Room, lane};
use crate::packet::{Receiving, StateName, sealed};
use crate::take::Take;
use crate::wait::{Settled, StateWord};

/// One side of an unbounded session: it sends `Tx`s to the peer and receives `Rx`s from it.
/// `Send` when both are; not `Sync`.
pub struct Duplex<Tx, Rx> {
    tx: LaneTx<Tx>,
    rx: LaneRx<Rx>,
}

/// A new session's two sides: the first receives what the second sends, and the other way.
pub fn duplex<A, B>() -> (Duplex<A, B>, Duplex<B, A>) {
    let (a_rx, b_tx) = lane();
    let (b_rx, a_tx) = lane();
    (Duplex { tx: a_tx, rx: a_rx }, Duplex { tx: b_tx, rx: b_rx })
}

impl<Tx, Rx> Duplex<Tx, Rx> {
    /// Sends `message` and returns this side for its next state. Never blocks; hands the
    /// message back (and ends this side) if the peer is gone.
    #[inline]
    pub fn send(self, message: Tx) -> Result<Self, Tx> {
        self.tx.send(message).map(|()| self)
    }

    /// Ends this side of the session, after its last message: the peer takes what was sent,
    /// then finds the session over.
    pub fn finish(self) {}

    /// Ends this side of the session for `cause`: the peer takes what was sent, then its
    /// receive fails for `cause`.
    pub fn close_with(self, cause: Cause) {
        let Duplex { tx, rx } = self;
        tx.close_with(cause);
        drop(rx);
    }

    /// The room this side's sends leave the peer (see `room.rs`).
    pub(crate) fn room(&self) -> Room<'_> {
        self.tx.room()
    }

    /// Reports this side's takes from now on, so the peer's sends can wait for `room`.
    pub(crate) fn report(&self, room: usize) {
        self.rx.report(room);
    }
}

impl<Tx, Rx> sealed::End for Duplex<Tx, Rx> {}

impl<Tx, Rx> Receiving for Duplex<Tx, Rx> {
    type Output = (Rx, Self);

    #[inline]
    fn word(&self) -> &StateWord {
        self.rx.word()
    }

    #[inline]
    fn idle(&self) -> usize {
        self.rx.idle()
    }

    /// As a port receives: from what the last look at the word found first, and chasing a
    /// peer that sends flat out (see `spin::Chase`); the word only when that runs out.
    #[inline]
    fn receive(self, at: &StateName) -> Result<(Rx, Self), RecvError> {
        loop {
            match self.rx.try_recv() {
                Take::Message(message) => return Ok((message, self)),
                Take::Closed => return Err(at.closed(self.rx.cause())),
                Take::Empty => {
                    if !self.rx.caught_up() {
                        self.word().wait(self.idle(), None);
                    }
                }
            }
        }
    }

    /// Takes from what the last look found, then looks at the word once.
    #[inline]
    fn try_receive(self, at: &StateName) -> Result<(Rx, Self), TryRecvError<Self>> {
        match self.rx.try_recv() {
            Take::Message(message) => Ok((message, self)),
            Take::Closed => Err(TryRecvError::Disconnected(at.closed(self.rx.cause()))),
            Take::Empty => Err(TryRecvError::Empty(self)),
        }
    }

    /// As [`receive`](Receiving::receive), until `deadline`.
    fn receive_until(
        self,
        deadline: Instant,
        at: &StateName,
    ) -> Result<(Rx, Self), RecvTimeoutError<Self>> {
        let mut timed_out = false;
        loop {
            match self.rx.try_recv() {
                Take::Message(message) => return Ok((message, self)),
                Take::Closed => {
                    return Err(RecvTimeoutError::Disconnected(at.closed(self.rx.cause())));
                }
                // One last look after the deadline, so a message that came with it is taken.
                Take::Empty if timed_out => return Err(RecvTimeoutError::Timeout(self)),
                Take::Empty => {
                    if !self.rx.caught_up() {
                        timed_out = self.word().wait(self.idle(), Some(deadline)).is_none();
                    }
                }
            }
        }
    }

    /// The next message and this side, or why the peer hung up before sending one.
    #[inline]
    fn take(self, _: Settled) -> Result<(Rx, Self), Cause> {
        match self.rx.try_recv() {
            Take::Message(message) => Ok((message, self)),
            Take::Closed => Err(self.rx.cause()),
            // Settled means the word moved past this side's position: a message, or the hang-up.
            Take::Empty => unreachable!("pipes: a lane's word settled with nothing in it"),
        }
    }
}

impl<Tx, Rx> fmt::Debug for Duplex<Tx, Rx> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Duplex").finish_non_exhaustive()
    }
}
