//! Several async waits on one port whose chan became a shared chan (its messages come through
//! the shared queue's signal word): two tasks, or one select given the port twice. Found by an
//! adversarial review: each wait's registration displaced and woke the other's, so the tasks
//! were polled in turn for ever with nothing sent, and the wait that gave up first disarmed the
//! queue under the other, whose wake was then lost. A lane port (`watches.rs`) never did
//! either; these are the same cases after the port moved on to the queue.

use std::task::Poll;

mod common;

use common::task::{counting, poll_once, wakes};
use pipes_runtime::select::{Selectable, selecti_async};
use pipes_runtime::{SharedChan, stream};

#[test]
fn two_pending_selects_on_one_shared_port_in_two_tasks_do_not_wake_each_other() {
    let (port, chan) = stream::<u32>();
    let chan = SharedChan::new(chan);
    let (first_count, first_waker) = counting();
    let (second_count, second_waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut first = selecti_async(&endpoints);
    let mut second = selecti_async(&endpoints);
    assert!(poll_once(&mut first, &first_waker).is_pending());
    assert!(poll_once(&mut second, &second_waker).is_pending());
    for _ in 0..3 {
        assert!(poll_once(&mut first, &first_waker).is_pending());
        assert!(poll_once(&mut second, &second_waker).is_pending());
    }
    assert_eq!(
        (wakes(&first_count), wakes(&second_count)),
        (0, 0),
        "polls with nothing sent wake nobody"
    );
    chan.send(1).unwrap();
    assert!(wakes(&first_count) >= 1, "one send wakes both waits");
    assert!(wakes(&second_count) >= 1, "one send wakes both waits");
    assert_eq!(poll_once(&mut first, &first_waker), Poll::Ready(0));
    drop((first, second));
    assert_eq!(port.recv().unwrap(), 1);
}

#[test]
fn an_async_select_over_one_shared_port_twice_does_not_wake_itself() {
    let (port, chan) = stream::<u32>();
    let chan = SharedChan::new(chan);
    let (count, waker) = counting();
    let endpoints: [&dyn Selectable; 2] = [&port, &port];
    let mut select = selecti_async(&endpoints);
    for _ in 0..10 {
        assert!(poll_once(&mut select, &waker).is_pending());
    }
    assert_eq!(wakes(&count), 0, "polled 10 times with nothing sent");
    chan.send(7).unwrap();
    assert!(wakes(&count) >= 1);
    assert!(matches!(poll_once(&mut select, &waker), Poll::Ready(0 | 1)));
    drop(select);
    assert_eq!(port.recv().unwrap(), 7);
}

/// Two waits on a shared port, one dropped (cancelled): the one still registered is woken by
/// the next send. The wait that gives up must not take the queue's arm from the other.
fn dropping_one_of_two_waits_keeps_the_other_woken(drop_the_first: bool) {
    let (port, chan) = stream::<u32>();
    let chan = SharedChan::new(chan);
    let (first_count, first_waker) = counting();
    let (second_count, second_waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut first = selecti_async(&endpoints);
    let mut second = selecti_async(&endpoints);
    assert!(poll_once(&mut first, &first_waker).is_pending());
    assert!(poll_once(&mut second, &second_waker).is_pending());
    assert!(poll_once(&mut first, &first_waker).is_pending());
    let (mut kept, kept_waker, kept_count) = if drop_the_first {
        drop(first);
        (second, second_waker, second_count)
    } else {
        drop(second);
        (first, first_waker, first_count)
    };
    let before = wakes(&kept_count);
    chan.send(1).unwrap();
    assert!(
        wakes(&kept_count) > before,
        "the send wakes the wait still registered"
    );
    assert_eq!(poll_once(&mut kept, &kept_waker), Poll::Ready(0));
    drop(kept);
    assert_eq!(port.recv().unwrap(), 1);
}

#[test]
fn dropping_the_second_of_two_waits_on_a_shared_port_keeps_the_first_woken() {
    dropping_one_of_two_waits_keeps_the_other_woken(false);
}

#[test]
fn dropping_the_first_of_two_waits_on_a_shared_port_keeps_the_second_woken() {
    dropping_one_of_two_waits_keeps_the_other_woken(true);
}

/// Two tasks awaiting `(&port).recv_async()` on one thread, run by the smallest executor (poll
/// whatever was woken): with nothing sent they go idle after one poll each, as on a lane port;
/// then one send wakes them and the first to run takes the message.
mod executor {
    use std::collections::VecDeque;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Wake, Waker};

    use pipes_runtime::{Chan, Port, Recv, SharedChan, stream};

    /// Queues its task's index on the run queue when woken, as any executor's waker does.
    struct Schedule(usize, Arc<Mutex<VecDeque<usize>>>);

    impl Wake for Schedule {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            self.1.lock().unwrap().push_back(self.0);
        }
    }

    /// Polls the two tasks until nothing is woken (at most 1,000 polls); returns the polls and
    /// what the tasks received.
    fn run(port: &Port<u32>, send: impl FnOnce()) -> (usize, Vec<u32>) {
        let queue = Arc::new(Mutex::new(VecDeque::from([0, 1])));
        let wakers: Vec<Waker> = (0..2)
            .map(|i| Waker::from(Arc::new(Schedule(i, Arc::clone(&queue)))))
            .collect();
        let mut tasks = [Recv::recv_async(port), Recv::recv_async(port)];
        let mut done = [false, false];
        let mut received = Vec::new();
        let mut polls = 0;
        let mut send = Some(send);
        loop {
            let next = queue.lock().unwrap().pop_front();
            let Some(task) = next else {
                match send.take() {
                    Some(send) => {
                        send();
                        continue;
                    }
                    None => break,
                }
            };
            polls += 1;
            assert!(polls < 1_000, "the tasks keep polling each other");
            if done[task] {
                continue;
            }
            let mut cx = Context::from_waker(&wakers[task]);
            if let Poll::Ready(message) = Pin::new(&mut tasks[task]).poll(&mut cx) {
                received.push(message.unwrap());
                done[task] = true;
            }
        }
        (polls, received)
    }

    #[test]
    fn two_tasks_awaiting_one_shared_port_go_idle_and_one_send_is_received_once() {
        let (port, chan) = stream::<u32>();
        let chan = SharedChan::new(chan);
        let (polls, received) = run(&port, || chan.send(3).unwrap());
        assert_eq!(received, [3]);
        assert!(polls <= 6, "{polls} polls for two waits and one message");
    }

    #[test]
    fn two_tasks_awaiting_one_lane_port_go_idle_and_one_send_is_received_once() {
        let (port, chan): (_, Chan<u32>) = stream();
        let (polls, received) = run(&port, || chan.send(3).unwrap());
        assert_eq!(received, [3]);
        assert!(polls <= 6, "{polls} polls for two waits and one message");
    }
}
