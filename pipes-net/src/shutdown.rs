//! What a node's graceful shutdown waits for before it closes its connections: the typed
//! sessions' pumps ([`Pumps`]) that still have something to put on the wire.
//!
//! A user who drops a typed endpoint and then the node expects the peer to see the session
//! closed after every message sent on it. But the endpoint's drop only wakes its pump, on the
//! node's runtime: the pump has yet to forward what the endpoint sent and queue the `Close`.
//! So the shutdown asks every live pump to report in (a new *round*), and waits (bounded by
//! [`Config::shutdown_timeout`](crate::Config::shutdown_timeout)) until each has either ended
//! or been polled, in this round, waiting on its local endpoint or on the peer with nothing to
//! do. A pump polls its local endpoint first, so a pump whose endpoint was dropped ends (and
//! queues its `Close`) before it can report idle; a pump whose user still holds the endpoint
//! reports idle, and its session is cut with the connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::{Notify, watch};

use crate::connection::lock;

/// The live pumps of one node.
pub(crate) struct Pumps {
    /// Each live pump's mark: the last round in which it was found idle.
    marks: Mutex<Vec<Weak<AtomicU64>>>,
    /// The current round; a shutdown starts a new one.
    round: watch::Sender<u64>,
    /// Woken when a pump reports idle or ends.
    changed: Notify,
}

impl Default for Pumps {
    fn default() -> Self {
        Pumps {
            marks: Mutex::new(Vec::new()),
            round: watch::channel(0).0,
            changed: Notify::new(),
        }
    }
}

impl Pumps {
    /// Registers a new pump: the mark it keeps while it lives.
    pub(crate) fn register(self: &Arc<Self>) -> PumpMark {
        let mark = Arc::new(AtomicU64::new(0));
        let mut marks = lock(&self.marks);
        marks.retain(|mark| mark.strong_count() > 0);
        marks.push(Arc::downgrade(&mark));
        drop(marks);
        let mut round = self.round.subscribe();
        // A pump that starts during a shutdown reports in at its first idle wait.
        round.mark_changed();
        PumpMark {
            mark,
            round,
            pumps: self.clone(),
        }
    }

    /// Starts a round and waits until every live pump has ended or reported idle in it.
    /// Not bounded by itself: the caller puts a deadline on it.
    pub(crate) async fn settle(&self) {
        self.round.send_modify(|round| *round += 1);
        let round = *self.round.borrow();
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
    round: watch::Receiver<u64>,
    pumps: Arc<Pumps>,
}

impl PumpMark {
    /// Resolves when a shutdown asks the pumps to report in. Cancel-safe.
    pub(crate) async fn asked(&mut self) {
        if self.round.changed().await.is_err() {
            // The node is gone with its rounds: never ask again.
            std::future::pending::<()>().await;
        }
    }

    /// Reports that the pump was just found waiting with nothing to put on the wire.
    pub(crate) fn idle(&mut self) {
        let round = *self.round.borrow_and_update();
        self.mark.store(round, Ordering::Release);
        self.pumps.changed.notify_waiters();
    }
}

impl Drop for PumpMark {
    fn drop(&mut self) {
        // Ended: no longer live (its mark's strong count is 0 once this returns, so mark
        // it done first for a shutdown that looks in between).
        self.mark.store(u64::MAX, Ordering::Release);
        self.pumps.changed.notify_waiters();
    }
}
