//! The blocking forms of the session API: each is its async form polled on the calling thread,
//! which parks between wakes. The futures it runs (tokio's channels and semaphores, and
//! `JoinHandle`s of tasks on the node's runtime) need no reactor on this thread.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to completion on this thread. Not for async code: it blocks the thread (use
/// the `_async` forms there).
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            // A wake between the poll and the park leaves the token, so park returns at once.
            Poll::Pending => thread::park(),
        }
    }
}
