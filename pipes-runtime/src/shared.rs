//! Shared chans: many senders into one stream, the 2012 library's `SharedChan` ("a send endpoint
//! wrapped in an exclusive ARC"): senders contend for a lock, the receiving port stays exactly as
//! cheap as before.
//!
//! ```
//! use pipes_runtime::{SharedChan, stream};
//!
//! let (port, chan) = stream::<u32>();
//! let chan = SharedChan::new(chan);
//! let senders: Vec<_> = (0..4)
//!     .map(|i| {
//!         let chan = chan.clone();
//!         std::thread::spawn(move || chan.send(i).unwrap())
//!     })
//!     .collect();
//! drop(chan);
//! let mut got: Vec<u32> = port.collect();
//! got.sort();
//! assert_eq!(got, [0, 1, 2, 3]);
//! # for sender in senders { sender.join().unwrap(); }
//! ```
//!
//! The lock is parking_lot's: one CAS when uncontended, a short spin then a park when not. The
//! packet for the *next* message is allocated before the lock is taken, so the critical section
//! is the send's one swap and a pointer store.

use std::fmt;

use crate::error::SendError;
use crate::stream::Chan;
use crate::sync::{Arc, Mutex};

/// A sending end of a stream that can be cloned and shared between threads (`Clone + Send +
/// Sync` when `T: Send`). Messages from one thread arrive in the order it sent them.
pub struct SharedChan<T> {
    chan: Arc<Mutex<Chan<T>>>,
}

impl<T> SharedChan<T> {
    /// Shares `chan`.
    pub fn new(chan: Chan<T>) -> Self {
        SharedChan {
            chan: Arc::new(Mutex::new(chan)),
        }
    }

    /// Sends a message. Never blocks for long (only on other senders' sends); hands the message
    /// back if the port is gone.
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        self.chan.lock().send(message)
    }
}

impl<T> Clone for SharedChan<T> {
    fn clone(&self) -> Self {
        SharedChan {
            chan: Arc::clone(&self.chan),
        }
    }
}

impl<T> From<Chan<T>> for SharedChan<T> {
    fn from(chan: Chan<T>) -> Self {
        SharedChan::new(chan)
    }
}

impl<T> fmt::Debug for SharedChan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedChan").finish_non_exhaustive()
    }
}
