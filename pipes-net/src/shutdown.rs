//! What a node's graceful shutdown waits for before it closes its connections: the typed
//! sessions' pumps ([`Pumps`]) that still have something to put on the wire.
//!
//! A user who drops a typed endpoint and then the node expects the peer to see the session
//! closed after every message sent on it. But the endpoint's drop only wakes its pump, on the
//! node's runtime: the pump has yet to forward what the endpoint sent and queue the `Close`.
//! So the shutdown starts a new *round*, puts a settle request in every session's inbox (which
//! a pump always watches while it waits, so this costs the pumps nothing until a shutdown), and
//! waits (bounded by [`Config::shutdown_timeout`](crate::Config::shutdown_timeout)) until each
//! live pump has either ended or taken the request while waiting on its local endpoint or on
//! the peer. A pump polls its local endpoint first, so a pump whose endpoint was dropped ends
//! (and queues its `Close`) before it can report idle; a pump whose user still holds the
//! endpoint reports idle, and its session is cut with the connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

use crate::connection::lock;

/// The live pumps of one node.
#[derive(Default)]
pub(crate) struct Pumps {
    /// Each live pump's mark: the last round in which it was found idle.
    marks: Mutex<Vec<Weak<AtomicU64>>>,
    /// The current round; a shutdown starts a new one.
    round: AtomicU64,
    /// Woken when a pump reports idle or ends.
    changed: Notify,
}

impl Pumps {
    /// Registers a new pump: the mark it keeps while it lives.
    pub(crate) fn register(self: &Arc<Self>) -> PumpMark {
        let mark = Arc::new(AtomicU64::new(0));
        let mut marks = lock(&self.marks);
        // The ended pumps' marks are pruned only when the list is full, and it then gets room
        // for as many again as it keeps: a registration costs O(1) amortized, not a scan of
        // every live pump, and the list holds at most about twice the live pumps.
        if marks.len() == marks.capacity() {
            marks.retain(|mark| mark.strong_count() > 0);
            let keep = marks.len().max(16);
            marks.reserve(keep);
        }
        marks.push(Arc::downgrade(&mark));
        drop(marks);
        PumpMark {
            mark,
            pumps: self.clone(),
            before: 0,
        }
    }

    /// Starts a round: the caller then asks every session's pump to report in.
    pub(crate) fn begin_round(&self) -> u64 {
        self.round.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Waits until every live pump has ended or reported idle in `round`. Not bounded by
    /// itself: the caller puts a deadline on it.
    pub(crate) async fn settled(&self, round: u64) {
        loop {
            let notified = self.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            let busy = lock(&self.marks)
                .iter()
                .filter_map(Weak::upgrade)
                .any(|mark| mark.load(Ordering::Acquire) < round);
            if !busy {
                return;
            }
            notified.await;
        }
    }
}

/// A pump's registration: it reports idle through it, and its drop (the pump ended) wakes a
/// waiting shutdown.
pub(crate) struct PumpMark {
    mark: Arc<AtomicU64>,
    pumps: Arc<Pumps>,
    /// The mark before [`away`](PumpMark::away), put back by [`back`](PumpMark::back).
    before: u64,
}

impl PumpMark {
    /// Reports that the pump took a settle request while waiting with nothing to put on the
    /// wire.
    pub(crate) fn idle(&mut self) {
        let round = self.pumps.round.load(Ordering::Acquire);
        self.mark.store(round, Ordering::Release);
        self.pumps.changed.notify_waiters();
    }

    /// Reports the pump idle for every round until [`back`](PumpMark::back): it waits for its
    /// user to read, with nothing to put on the wire, and takes no settle request meanwhile.
    pub(crate) fn away(&mut self) {
        self.before = self.mark.swap(u64::MAX, Ordering::AcqRel);
        self.pumps.changed.notify_waiters();
    }

    /// Ends [`away`](PumpMark::away): the pump is idle only for the rounds it was before. A
    /// round begun meanwhile left its settle request in the session's inbox, which the pump
    /// takes when it next waits on the peer.
    pub(crate) fn back(&mut self) {
        self.mark.store(self.before, Ordering::Release);
    }
}

impl Drop for PumpMark {
    fn drop(&mut self) {
        // Ended: done with every round (a shutdown may look before the mark is gone).
        self.mark.store(u64::MAX, Ordering::Release);
        self.pumps.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without pruning the list would hold a mark for every pump that ever ran (10,100 here).
    #[test]
    fn the_marks_of_ended_pumps_are_pruned_as_pumps_come_and_go() {
        let pumps = Arc::new(Pumps::default());
        let held = || lock(&pumps.marks).len();
        let mut most = 0;
        let live: Vec<PumpMark> = (0..100).map(|_| pumps.register()).collect();
        for _ in 0..5_000 {
            drop(pumps.register());
            most = most.max(held());
        }
        drop(live);
        for _ in 0..5_000 {
            drop(pumps.register());
            most = most.max(held());
        }
        assert!(
            most <= 4 * 100 + 64,
            "{most} marks held for at most 101 live pumps"
        );
    }
}
