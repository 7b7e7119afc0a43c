//! A port set's side of its ready list ([`ReadyList`], declared with the waking side in
//! `waiter.rs`): registering sleepers, draining woken ports, closing.

use std::collections::VecDeque;
use std::time::Instant;

use crate::sync::{Arc, Ordering, park};
use crate::waiter::{CLOSED, IDLE, ReadyList, SLEEPING, Waiter, word_of};

impl ReadyList {
    /// Registers `waiter` (a thread, or a task) to be woken by the next push, and marks the set
    /// sleeping. Fails when ports are already queued (drain them first), or when `waiter` is
    /// registered already (the same set selected twice, or a wait that registered before); it
    /// is woken then as it is.
    pub(crate) fn arm(&self, waiter: &Arc<Waiter>) -> Result<(), Armed> {
        debug_assert!(
            !matches!(**waiter, Waiter::Ready { .. }),
            "a port set's waiter does not wait on a set"
        );
        let mut sleepers = self.sleepers.lock();
        // Under the lock, so the sender that ends this sleep finds the entry (type docs).
        // Acquire on failure: a stack is there, to drain.
        match self.head.compare_exchange(
            word_of(IDLE),
            word_of(SLEEPING),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {}
            Err(found) if found.addr() == SLEEPING => {}
            Err(_) => return Err(Armed::Pending),
        }
        if sleepers.iter().any(|sleeper| Arc::ptr_eq(sleeper, waiter)) {
            // Registered in this sleep, or in one whose sender has yet to take the entry: a
            // wake is coming either way.
            return Err(Armed::Already);
        }
        sleepers.push(Arc::clone(waiter));
        Ok(())
    }

    /// Whether a push may have come since `waiter` was armed: the set no longer sleeps, or a
    /// push took `waiter`'s entry (and wakes it). `false` means it is still registered, and
    /// the push that ends the sleep wakes it.
    pub(crate) fn pushed(&self, waiter: &Arc<Waiter>) -> bool {
        if self.head.load(Ordering::Acquire).addr() != SLEEPING {
            return true;
        }
        let sleepers = self.sleepers.lock();
        !sleepers.iter().any(|sleeper| Arc::ptr_eq(sleeper, waiter))
    }

    /// Takes `waiter`'s entry back after a wait, and ends the sleep if no one else is
    /// registered. Returns whether it was still armed (registered, and the set asleep); if
    /// not, a push came, and ports may be queued.
    pub(crate) fn disarm(&self, waiter: &Arc<Waiter>) -> bool {
        let mut sleepers = self.sleepers.lock();
        let mine = sleepers
            .iter()
            .position(|sleeper| Arc::ptr_eq(sleeper, waiter))
            .map(|at| sleepers.swap_remove(at));
        let asleep = if sleepers.is_empty() {
            // The last registrant leaves: pushes need not lock any more. A failed exchange
            // means a push came (or the set drained after one).
            self.head
                .compare_exchange(
                    word_of(SLEEPING),
                    word_of(IDLE),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
        } else {
            self.head.load(Ordering::Acquire).addr() == SLEEPING
        };
        drop(sleepers);
        mine.is_some() && asleep
    }

    /// Whether a port is queued (a read only; the set's thread alone takes them).
    pub(crate) fn is_pending(&self) -> bool {
        self.head.load(Ordering::Relaxed).addr() > CLOSED
    }

    /// Moves every queued port to the back of `local`, oldest first, taking back the waiters'
    /// references. `spare` is an empty vector, kept to reuse its allocation.
    pub(crate) fn drain(&self, local: &mut VecDeque<usize>, spare: &mut Vec<usize>) {
        if !self.is_pending() {
            return;
        }
        // Only senders change the word while it holds a stack, and only by pushing, so it still
        // holds one. Acquire pairs with the pushes' Release: every `next` is visible.
        let mut node = self.head.swap(word_of(IDLE), Ordering::Acquire);
        while node.addr() != IDLE {
            // SAFETY: taken off the stack by our swap: the reference its sender pushed is ours.
            let waiter = unsafe { Waiter::from_word(node) };
            let Waiter::Ready { port, next, .. } = &*waiter else {
                unreachable!("only a port set's waiters are queued");
            };
            spare.push(*port);
            node = next.load(Ordering::Relaxed);
        }
        local.extend(spare.drain(..).rev());
    }

    /// Parks the set's thread until a port is queued or `deadline` passes (then returns
    /// `false`). Returns at once if a port is already queued. Registers the thread beside any
    /// other sleeper (a pending task's, say) and takes only its own entry back.
    pub(crate) fn sleep(&self, deadline: Option<Instant>) -> bool {
        // The set may have moved to another thread since it last slept: this thread's waiter.
        let me = Waiter::current();
        if let Err(Armed::Pending) = self.arm(&me) {
            return true;
        }
        loop {
            if !park(deadline) {
                // If a push got in first, there is something to drain.
                return !self.disarm(&me);
            }
            if !self.still_asleep(&me) {
                return true;
            }
        }
    }

    /// After a sleeping thread's wake-up, under one lock: whether the set still sleeps (an
    /// unpark that was spurious, or came from the sender of an earlier sleep, which took the
    /// entry: it is put back). If not, a push came, and the thread's entry is taken back if
    /// that push has yet to take it.
    fn still_asleep(&self, me: &Arc<Waiter>) -> bool {
        let mut sleepers = self.sleepers.lock();
        let mine = sleepers.iter().position(|sleeper| Arc::ptr_eq(sleeper, me));
        // Read under the lock, as `arm` reads it: a put-back entry is found by the push that
        // ends this sleep (type docs).
        if self.head.load(Ordering::Acquire).addr() == SLEEPING {
            if mine.is_none() {
                sleepers.push(Arc::clone(me));
            }
            return true;
        }
        let mine = mine.map(|at| sleepers.swap_remove(at));
        drop(sleepers);
        drop(mine);
        false
    }

    /// Marks the set gone and takes back the references of waiters still queued. Pushes after
    /// this drop their own. Drops the entries that futures forgotten while pending left.
    pub(crate) fn close(&self) {
        let mut node = self.head.swap(word_of(CLOSED), Ordering::Acquire);
        while node.addr() > CLOSED {
            // SAFETY: taken off the stack by our swap, as in `drain`.
            let waiter = unsafe { Waiter::from_word(node) };
            let Waiter::Ready { next, .. } = &*waiter else {
                unreachable!("only a port set's waiters are queued");
            };
            node = next.load(Ordering::Relaxed);
        }
        // Outside the lock: dropping a waker may run any code.
        let forgotten = std::mem::take(&mut *self.sleepers.lock());
        drop(forgotten);
    }
}

/// Why [`ReadyList::arm`] did not arm.
pub(crate) enum Armed {
    /// This waiter is registered already (the same set selected twice).
    Already,
    /// Ports are queued.
    Pending,
}
