//! Shared chans: many senders into one stream, in the order they sent (the 2012 library's
//! `SharedChan`, there a send endpoint behind a lock; here a lock-free queue).
//!
//! [`SharedChan::new`] takes the [`Chan`] of a [`stream`](crate::stream()) and makes a sending
//! end that is `Clone`, `Send` and `Sync` (when the message type is `Send`): give a clone to
//! every producer. The stream's [`Port`](crate::Port) receives what the chan sent before it
//! was shared, then what the shared chan's clones send, and ends once every clone is dropped.
//!
//! ```
//! # use pipes_runtime as pipes;
//! use pipes::{SharedChan, stream};
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
//! # Order, and when a port set is the better choice
//!
//! A send that happens before another (on one thread, or synchronized) is received first, as
//! with std's mpsc, crossbeam and Go. Keeping that order makes every sender touch one shared
//! tail. For many producers that need no order across them, a [`PortSet`](crate::PortSet)
//! with a chan per producer (`set.chan()`) is the other choice: each send touches only its own
//! stream, so it scales with the producers.
//!
//! # Costs
//!
//! A send claims its place with one atomic add and publishes it with one more; it never
//! blocks (other senders delay it at most by the moment it takes to link a new segment) and
//! rings the port only when the port waits for that very message. Senders sending at the
//! same moment take the tail from each other on every send, so a sender whose sends keep
//! landing between other senders' yields its core once every 32 of them ([`spin`](crate::spin)
//! says what that measured). A send after the port is gone hands the message back in a
//! [`SendError`].

// Implementation: a send claims its slot with one `fetch_add` and publishes it (`queue.rs`),
// and rings the port only when the port waits for that very message (`mpsc.rs`). The chan
// handed to `SharedChan::new` hangs up into the queue: the port takes what it sent first, then
// the queue's messages.

use std::fmt;

use crate::error::SendError;
use crate::mpsc::SharedQueue;
use crate::stream::Chan;
use crate::sync::Arc;

/// A sending end of a stream that can be cloned and shared between threads (`Clone + Send +
/// Sync` when `T: Send`). Messages from one thread arrive in the order it sent them, and a
/// send that happens before another's arrives first.
pub struct SharedChan<T> {
    queue: Arc<SharedQueue<T>>,
}

impl<T> SharedChan<T> {
    /// Shares `chan`: its port receives what `chan` sent, then what the shared chan's clones
    /// send.
    pub fn new(chan: Chan<T>) -> Self {
        let queue = SharedQueue::new();
        chan.upgrade(Arc::clone(&queue));
        SharedChan { queue }
    }

    /// Sends a message. Never blocks (other senders only delay it by the moment of a segment
    /// link); hands the message back if the port is gone.
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        self.queue.send(message).map_err(SendError)
    }
}

impl<T> Clone for SharedChan<T> {
    fn clone(&self) -> Self {
        self.queue.add_sender();
        SharedChan {
            queue: Arc::clone(&self.queue),
        }
    }
}

impl<T> Drop for SharedChan<T> {
    /// The last clone's drop tells the port that no more messages come.
    fn drop(&mut self) {
        self.queue.remove_sender();
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
