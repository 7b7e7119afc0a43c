//! A bounded protocol written by hand the way `proto!` lays one out, to test session buffers
//! before the code generator exists:
//!
//! ```text
//! pingpong {
//!     Ping: send { Ping(T) -> Pong, Bye -> ! }
//!     Pong: recv { Pong(T) -> Ping }
//! }
//! ```
#![allow(dead_code)]

use pipes_runtime::__private::{RecvSlot, SendSlot, Session, Slot, Slots, StateName, session};
use pipes_runtime::{RecvError, SendError};

/// What travels in the `Ping` slot: payloads only, never endpoints.
pub enum PingMessage<T> {
    Ping(T),
    Bye,
}

pub struct Buffer<T> {
    ping: Slot<PingMessage<T>>,
    pong: Slot<T>,
}

impl<T> Slots for Buffer<T> {
    fn close(&self) {
        self.ping.close();
        self.pong.close();
    }
}

const PING: StateName = StateName {
    protocol: "pingpong",
    state: "Ping",
};
const PONG: StateName = StateName {
    protocol: "pingpong",
    state: "Pong",
};

pub fn init<T>() -> (server::Ping<T>, client::Ping<T>) {
    // SAFETY: the endpoints below use the slots as pingpong's states: the client sends `ping`
    // and receives `pong`, the server the other way round, alternately, as the protocol's
    // liveness rule requires.
    let (server, client) = unsafe {
        session(Buffer {
            ping: Slot::new(),
            pong: Slot::new(),
        })
    };
    (server::Ping::new(server), client::Ping::new(client))
}

/// What the server receives in `Ping`.
pub enum Ping<T> {
    Ping(T, server::Pong<T>),
    Bye,
}

pub mod client {
    use super::*;

    pub struct Ping<T>(SendSlot<PingMessage<T>, Buffer<T>>);
    pub struct Pong<T>(RecvSlot<T, Buffer<T>>);

    impl<T> Ping<T> {
        pub(super) fn new(session: Session<Buffer<T>>) -> Self {
            Ping(session.sender(|b| &b.ping))
        }

        pub fn ping(self, value: T) -> Result<Pong<T>, SendError<T>> {
            match self.0.send(PingMessage::Ping(value)) {
                Ok(session) => Ok(Pong(session.receiver(|b| &b.pong))),
                Err(PingMessage::Ping(value)) => Err(SendError(value)),
                Err(PingMessage::Bye) => unreachable!(),
            }
        }

        pub fn bye(self) -> Result<(), SendError<()>> {
            match self.0.send(PingMessage::Bye) {
                Ok(session) => {
                    session.finish();
                    Ok(())
                }
                Err(_) => Err(SendError(())),
            }
        }
    }

    impl<T> Pong<T> {
        pub fn recv(self) -> Result<(T, Ping<T>), RecvError> {
            let (value, session) = self.0.recv(&PONG)?;
            Ok((value, Ping::new(session)))
        }
    }
}

pub mod server {
    use super::*;

    pub struct Ping<T>(RecvSlot<PingMessage<T>, Buffer<T>>);
    pub struct Pong<T>(SendSlot<T, Buffer<T>>);

    impl<T> Ping<T> {
        pub(super) fn new(session: Session<Buffer<T>>) -> Self {
            Ping(session.receiver(|b| &b.ping))
        }

        pub fn recv(self) -> Result<super::Ping<T>, RecvError> {
            Ok(match self.0.recv(&PING)? {
                (PingMessage::Ping(value), session) => {
                    super::Ping::Ping(value, Pong(session.sender(|b| &b.pong)))
                }
                (PingMessage::Bye, session) => {
                    session.finish();
                    super::Ping::Bye
                }
            })
        }

        pub fn try_recv(self) -> Result<super::Ping<T>, pipes_runtime::TryRecvError<Self>> {
            match self.0.try_recv(&PING) {
                Ok((PingMessage::Ping(value), session)) => {
                    Ok(super::Ping::Ping(value, Pong(session.sender(|b| &b.pong))))
                }
                Ok((PingMessage::Bye, session)) => {
                    session.finish();
                    Ok(super::Ping::Bye)
                }
                Err(error) => Err(error.map(Ping)),
            }
        }
    }

    impl<T> Ping<T> {
        /// Receives with a time limit, handing the endpoint back on a timeout.
        pub fn recv_timeout(
            self,
            timeout: std::time::Duration,
        ) -> Result<super::Ping<T>, pipes_runtime::RecvTimeoutError<Self>> {
            match self.0.recv_timeout(timeout, &PING) {
                Ok((PingMessage::Ping(value), session)) => {
                    Ok(super::Ping::Ping(value, Pong(session.sender(|b| &b.pong))))
                }
                Ok((PingMessage::Bye, session)) => {
                    session.finish();
                    Ok(super::Ping::Bye)
                }
                Err(error) => Err(error.map(Ping)),
            }
        }
    }

    /// What `proto!` generates for every receiving state: select can wait on it.
    impl<T> pipes_runtime::Recv for Ping<T> {
        type Message = super::Ping<T>;

        fn recv(self) -> Result<Self::Message, RecvError> {
            Ping::recv(self)
        }

        fn try_recv(self) -> Result<Self::Message, pipes_runtime::TryRecvError<Self>> {
            Ping::try_recv(self)
        }

        fn recv_timeout(
            self,
            timeout: std::time::Duration,
        ) -> Result<Self::Message, pipes_runtime::RecvTimeoutError<Self>> {
            Ping::recv_timeout(self, timeout)
        }

        fn __state_word(&self) -> &pipes_runtime::__private::StateWord {
            self.0.state_word()
        }
    }

    impl<T> Pong<T> {
        pub fn pong(self, value: T) -> Result<Ping<T>, SendError<T>> {
            self.0.send(value).map(Ping::new).map_err(SendError)
        }
    }
}
