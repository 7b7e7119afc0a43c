//! What a receive found: [`Take`], shared by lanes, the shared chan's queue, streams and port
//! sets.

/// What a look at a lane or a queue found.
pub(crate) enum Take<T> {
    /// The next message (or, from a look, that there is one).
    Message(T),
    /// Nothing yet; the sender may send later.
    Empty,
    /// The sender is gone and every message it sent was taken.
    Closed,
}
