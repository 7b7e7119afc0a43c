//! What select waits on: a [`Target`] is the state word of an endpoint's next packet or lane
//! (with the word that means "nothing yet" for it), or a port set. Select (`select.rs`) and port
//! sets (`port_set.rs`) sit above this; endpoints name it in their hidden [`Recv`] hook.
//!
//! [`Recv`]: crate::Recv

use std::task::Waker;

use crate::ready_list::Armed;
use crate::sync::Arc;
use crate::wait::{Found, StateWord, is_settled};
use crate::waiter::{ReadyList, Waiter};

/// What select waits on for one endpoint: the state word of its next packet, or a port set.
/// Opaque: not a public API.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Target<'a>(Kind<'a>);

#[derive(Clone, Copy)]
enum Kind<'a> {
    /// A word, and the word in it that means nothing for the receiver yet.
    Word(&'a StateWord, usize),
    Set(&'a dyn SetTarget),
    /// A stream port: its lane, or the shared chan's queue the lane ran out into.
    Port(&'a dyn PortTarget),
}

/// A stream port as select sees it: its lane's word, or, once the chan became a shared chan and
/// the lane ran dry, the queue (`mpsc.rs`). Dynamic, so that a port whose lane runs out into a
/// queue while select waits moves on to the queue, rather than looking ready with nothing to
/// receive. Every method is called by the port's borrower, on the port's thread, while the
/// port is not received from.
pub(crate) trait PortTarget {
    /// Whether a receive would not wait.
    fn is_ready(&self) -> bool;
    /// Leaves `waiter` to be woken by the next message; `false` if a receive would not wait.
    fn register(&self, waiter: &Arc<Waiter>) -> bool;
    /// After a wake-up: whether a receive would not wait (registering again if not).
    fn woken(&self, waiter: &Arc<Waiter>) -> bool;
    /// Takes `waiter` back; whether a receive would now not wait.
    fn unregister(&self, waiter: &Arc<Waiter>) -> bool;
    /// A task's wait: `true` if ready, else leaves a waiter for it (kept in `mine`).
    fn watch(&self, waker: &Waker, mine: &mut Option<Arc<Waiter>>) -> bool;
    /// Ends a `watch`.
    fn unwatch(&self, mine: &mut Option<Arc<Waiter>>);
}

/// A port set, as select sees it.
pub(crate) trait SetTarget {
    /// Whether a receive would return at once (a message, or no port left). Watches the ports
    /// it finds empty, as a receive would, so the set's ready list hears of every sender.
    fn settle(&self) -> bool;
    /// The list senders push woken ports onto, which select arms to be woken too.
    fn ready_list(&self) -> &ReadyList;
}

/// How a registration went.
pub(crate) enum Registration {
    Stored,
    /// This target is already registered (the same endpoint passed twice).
    Duplicate,
    Ready,
}

impl<'a> Target<'a> {
    /// Waits on a state word, where `idle` means nothing for the receiver yet.
    pub(crate) fn word(word: &'a StateWord, idle: usize) -> Self {
        Target(Kind::Word(word, idle))
    }

    /// Waits on a stream port.
    pub(crate) fn port(port: &'a dyn PortTarget) -> Self {
        Target(Kind::Port(port))
    }

    pub(crate) fn set(set: &'a dyn SetTarget) -> Self {
        Target(Kind::Set(set))
    }

    pub(crate) fn is_ready(self) -> bool {
        match self.0 {
            Kind::Word(word, idle) => word.is_ready(idle),
            Kind::Set(set) => set.settle(),
            Kind::Port(port) => port.is_ready(),
        }
    }

    /// Leaves `waiter` where a sender will find it, unless the target is ready already.
    pub(crate) fn register(self, waiter: &Arc<Waiter>) -> Registration {
        match self.0 {
            Kind::Word(word, idle) => match word.register(idle, waiter) {
                // No borrow is held here: a displaced waiter is woken at once.
                Ok(_) => Registration::Stored,
                Err(Found::Duplicate) => Registration::Duplicate,
                Err(Found::Settled(_)) => Registration::Ready,
            },
            Kind::Set(set) => loop {
                match set.ready_list().arm(waiter) {
                    Ok(()) => break Registration::Stored,
                    Err(Armed::Already) => break Registration::Duplicate,
                    // Ports were queued: ready if one holds a message; if not (hang-ups only),
                    // the queue is drained now and arming can be tried again.
                    Err(Armed::Pending) => {
                        if set.settle() {
                            break Registration::Ready;
                        }
                    }
                }
            },
            // Registering twice (the same port selected twice) leaves the one waiter.
            Kind::Port(port) => match port.register(waiter) {
                true => Registration::Stored,
                false => Registration::Ready,
            },
        }
    }

    /// After a wake-up: whether this registered target is ready. A registration that is gone
    /// without the target being ready (a port set woken only by hang-ups) is made again.
    pub(crate) fn woken(self, waiter: &Arc<Waiter>) -> bool {
        match self.0 {
            Kind::Word(word, idle) => {
                let found = word.load();
                is_settled(found, idle)
                    || (found != Arc::as_ptr(waiter).addr()
                        && matches!(self.register(waiter), Registration::Ready))
            }
            Kind::Set(set) => {
                set.ready_list().pushed(waiter)
                    && matches!(self.register(waiter), Registration::Ready)
            }
            Kind::Port(port) => port.woken(waiter),
        }
    }

    /// Takes `waiter` back. Returns whether the target turned out ready meanwhile.
    pub(crate) fn unregister(self, waiter: &Arc<Waiter>) -> bool {
        match self.0 {
            // Swapped out by a sender (so ready), or not ours any more: a duplicate already
            // taken back.
            Kind::Word(word, idle) => word
                .unregister(idle, waiter)
                .is_err_and(|found| is_settled(found, idle)),
            Kind::Set(set) => !set.ready_list().disarm(waiter) && set.settle(),
            Kind::Port(port) => port.unregister(waiter),
        }
    }

    /// An async select's registration in this target for the task of `waker`: `true` if the
    /// target is ready. `watch` is the select's waiter here, kept between polls.
    pub(crate) fn watch(self, watch: &mut Option<Arc<Waiter>>, waker: &Waker) -> bool {
        match self.0 {
            Kind::Word(word, idle) => word.watch(idle, waker, watch).is_ready(),
            Kind::Port(port) => port.watch(waker, watch),
            Kind::Set(set) => {
                // Look at the set first, as a receive would: since the last poll a receive
                // through the set (or another select on it) may have left a port served or on
                // the set's local list, where no sender's push announces it. Looking watches
                // every port found empty, so from here a send on any of them pushes, and the
                // registration below (or the one still there) is woken by it.
                if set.settle() {
                    return true;
                }
                if let Some(waiter) = watch.as_ref()
                    && waiter.is_task_of(waker)
                {
                    return self.woken(waiter);
                }
                // First poll, or the task moved: arm the set for this task.
                if let Some(waiter) = watch.take()
                    && self.unregister(&waiter)
                {
                    return true;
                }
                let waiter = Waiter::task(waker);
                match self.register(&waiter) {
                    Registration::Ready => true,
                    Registration::Stored => {
                        *watch = Some(waiter);
                        false
                    }
                    // The set is armed for another target of this select already.
                    Registration::Duplicate => false,
                }
            }
        }
    }

    /// Ends a [`Target::watch`].
    pub(crate) fn unwatch(self, watch: &mut Option<Arc<Waiter>>) {
        match self.0 {
            Kind::Word(word, idle) => {
                word.unwatch(idle, watch);
            }
            Kind::Port(port) => port.unwatch(watch),
            Kind::Set(_) => {
                if let Some(waiter) = watch.take() {
                    self.unregister(&waiter);
                }
            }
        }
    }
}
