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

use pipes_runtime::__private::{
    Closer, RecvEndpoint, RecvSlot, SendSlot, SentByClient, SentByServer, Session, Slot, Slots,
    StateName, session,
};
use pipes_runtime::{RecvError, SendError};

/// What travels in the `Ping` slot: payloads only, never endpoints.
pub enum PingMessage<T> {
    Ping(T),
    Bye,
}

pub struct Buffer<T> {
    ping: Slot<PingMessage<T>, SentByClient>,
    pong: Slot<T, SentByServer>,
}

impl<T> Slots for Buffer<T> {
    fn close(&self, closer: &Closer<'_>) {
        closer.close(&self.ping);
        closer.close(&self.pong);
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
    let (server, client) = session(Buffer {
        ping: Slot::new(),
        pong: Slot::new(),
    });
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
            pipes_runtime::Recv::recv(self)
        }

        pub fn try_recv(self) -> Result<super::Ping<T>, pipes_runtime::TryRecvError<Self>> {
            pipes_runtime::Recv::try_recv(self)
        }

        /// Receives with a time limit, handing the endpoint back on a timeout.
        pub fn recv_timeout(
            self,
            timeout: std::time::Duration,
        ) -> Result<super::Ping<T>, pipes_runtime::RecvTimeoutError<Self>> {
            pipes_runtime::Recv::recv_timeout(self, timeout)
        }
    }

    /// What `proto!` generates for every receiving state: `Recv` (so select can wait on it)
    /// comes with it.
    impl<T> RecvEndpoint for Ping<T> {
        type Message = super::Ping<T>;
        type End = RecvSlot<PingMessage<T>, Buffer<T>>;
        const STATE: StateName = PING;

        fn into_end(self) -> Self::End {
            self.0
        }

        fn from_end(end: Self::End) -> Self {
            Ping(end)
        }

        fn end(&self) -> &Self::End {
            &self.0
        }

        fn arrive((message, session): (PingMessage<T>, Session<Buffer<T>>)) -> super::Ping<T> {
            match message {
                PingMessage::Ping(value) => {
                    super::Ping::Ping(value, Pong(session.sender(|b| &b.pong)))
                }
                PingMessage::Bye => {
                    session.finish();
                    super::Ping::Bye
                }
            }
        }
    }

    impl<T> Pong<T> {
        pub fn pong(self, value: T) -> Result<Ping<T>, SendError<T>> {
            self.0.send(value).map(Ping::new).map_err(SendError)
        }
    }
}
