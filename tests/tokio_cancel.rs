//! Pipes futures under tokio's own scheduling, with every payload counted: a payload type
//! whose `Drop` counts, so each test checks that no message is lost or duplicated and every
//! payload is dropped exactly once, whether its receive was aborted (`JoinHandle::abort`),
//! cancelled by `tokio::select!` or a timeout, left pending while its runtime shut down, moved
//! to another task between polls, or run on a current-thread runtime beside its sender.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use pipes::select::selecti_async;
use pipes::{PortSet, SharedChan, oneshot, stream};

/// A payload that counts its drops in its test's counter.
#[derive(Debug)]
pub struct Counted(u64, Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

pipes::proto! {
    /// Unbounded: two lanes.
    pub ticks {
        Open: send { Tick(Counted) -> Open, Stop -> ! }
    }
}

pipes::proto! {
    /// Bounded: one session buffer.
    pub ask {
        Ask: send { Question(Counted) -> Answer, Quit -> ! }
        Answer: recv { Reply(Counted) -> Ask }
    }
}

/// A payload counted in `drops`.
fn counted(n: u64, drops: &Arc<AtomicUsize>) -> Counted {
    Counted(n, Arc::clone(drops))
}

/// How often the racier tests run: tokio's workers, the sender thread and the abort or timer
/// interleave differently each time.
const ROUNDS: u64 = 30;

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `f` on a thread of its own and fails the test if it has not returned within 20 s:
/// a deadlocked current-thread runtime cannot time itself out.
fn within_20s<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, finished) = std::sync::mpsc::channel();
    let runner = thread::spawn(move || done.send(f()).unwrap());
    match finished.recv_timeout(Duration::from_secs(20)) {
        Ok(result) => {
            runner.join().unwrap();
            result
        }
        Err(_) => match runner.is_finished() {
            true => std::panic::resume_unwind(runner.join().unwrap_err()),
            false => panic!("deadlocked: still running after 20 s"),
        },
    }
}

/// A task receiving ticks is aborted at a random point while a thread sends: each tick is
/// received once or dropped once (with the aborted task's endpoint, or handed back to its
/// sender).
#[test]
fn an_aborted_receive_of_a_protocol_drops_every_payload_once() {
    let runtime = multi_thread();
    for round in 0..ROUNDS {
        let drops = Arc::new(AtomicUsize::new(0));
        let received = Arc::new(AtomicUsize::new(0));
        let (server, client) = ticks::init();
        let task = runtime.spawn({
            let received = Arc::clone(&received);
            async move {
                let mut server = server;
                while let Ok(ticks::Open::Tick(tick, next)) = server.recv_async().await {
                    drop(tick);
                    received.fetch_add(1, Ordering::SeqCst);
                    server = next;
                    tokio::task::yield_now().await;
                }
            }
        });
        let sender = thread::spawn({
            let drops = Arc::clone(&drops);
            move || {
                let mut client = client;
                for n in 0..200 {
                    match client.tick(counted(n, &drops)) {
                        Ok(next) => client = next,
                        // The payload comes back in the error, dropped here.
                        Err(_) => return n as usize + 1,
                    }
                    if n % 16 == 0 {
                        thread::sleep(Duration::from_micros(50));
                    }
                }
                let _ = client.stop();
                200
            }
        });
        thread::sleep(Duration::from_micros(100 * (round % 10)));
        task.abort();
        let _ = runtime.block_on(task);
        let made = sender.join().unwrap();
        assert!(received.load(Ordering::SeqCst) <= made);
        assert_eq!(drops.load(Ordering::SeqCst), made, "round {round}");
    }
}

/// The same over a stream, a shared chan's port and a port set raced in one `tokio::select!`
/// (each round's losers cancelled), aborted at a random point: every payload is received once
/// or dropped once.
#[test]
fn an_aborted_select_over_ports_and_a_set_drops_every_payload_once() {
    let runtime = multi_thread();
    for round in 0..ROUNDS {
        let drops = Arc::new(AtomicUsize::new(0));
        let (mut port, chan) = stream::<Counted>();
        let (mut shared_port, shared) = stream::<Counted>();
        let shared = SharedChan::new(shared);
        let mut set = PortSet::<Counted>::new();
        let set_chan = set.chan();
        let received = Arc::new(AtomicUsize::new(0));
        let task = runtime.spawn({
            let received = Arc::clone(&received);
            async move {
                let (mut a, mut b, mut c) = (true, true, true);
                while a || b || c {
                    let got = tokio::select! {
                        got = port.recv_async(), if a => got.map_err(|_| a = false),
                        got = shared_port.recv_async(), if b => got.map_err(|_| b = false),
                        got = set.recv_async(), if c => got.map_err(|_| c = false),
                    };
                    if let Ok(message) = got {
                        drop(message);
                        received.fetch_add(1, Ordering::SeqCst);
                    }
                    tokio::task::yield_now().await;
                }
            }
        });
        let sender = thread::spawn({
            let drops = Arc::clone(&drops);
            move || {
                for n in 0..300 {
                    let message = counted(n, &drops);
                    // A refused message comes back in the error, dropped here.
                    let _ = match n % 3 {
                        0 => chan.send(message).map_err(drop),
                        1 => shared.send(message).map_err(drop),
                        _ => set_chan.send(message).map_err(drop),
                    };
                    if n % 32 == 0 {
                        thread::sleep(Duration::from_micros(50));
                    }
                }
            }
        });
        thread::sleep(Duration::from_micros(150 * (round % 10)));
        task.abort();
        let _ = runtime.block_on(task);
        sender.join().unwrap();
        assert!(received.load(Ordering::SeqCst) <= 300);
        assert_eq!(drops.load(Ordering::SeqCst), 300, "round {round}");
    }
}

/// A runtime shut down while its tasks wait in every kind of pipes receive: the tasks' futures
/// are dropped with their endpoints (and their wakers with them), and the senders, on this
/// thread, find each pipe closed and get their payloads back. Nothing is left registered: the
/// sends wake no dropped task.
#[test]
fn a_runtime_shut_down_with_receives_pending_drops_them_and_their_endpoints() {
    for round in 0..ROUNDS {
        let drops = Arc::new(AtomicUsize::new(0));
        let runtime = multi_thread();
        let (mut port, chan) = stream::<Counted>();
        let (mut shared_port, shared) = stream::<Counted>();
        let shared = SharedChan::new(shared);
        let mut set = PortSet::<Counted>::new();
        let set_chan = set.chan();
        let (one, one_chan) = oneshot::<Counted>();
        let (mut selected, selected_chan) = oneshot::<Counted>();
        let (mut selected_port, selected_port_chan) = stream::<Counted>();
        let (server, client) = ticks::init();
        let (asked, asker) = ask::init();
        let waiting = Arc::new(AtomicUsize::new(0));
        // Spawns a task that makes the future (moving in what it names), polls it once to
        // see it pending, counts itself waiting and then waits on it.
        macro_rules! spawn_pending {
            ($future:expr) => {
                runtime.spawn({
                    let waiting = Arc::clone(&waiting);
                    async move {
                        let mut future = $future;
                        assert!(futures_poll_once(&mut future).await.is_none());
                        waiting.fetch_add(1, Ordering::SeqCst);
                        let _ = future.await;
                    }
                })
            };
        }
        let tasks = vec![
            spawn_pending!(port.recv_async()),
            spawn_pending!(shared_port.recv_async()),
            spawn_pending!(set.recv_async()),
            spawn_pending!(one.recv_async()),
            spawn_pending!(selecti_async((&mut selected, (&mut selected_port, ())))),
            spawn_pending!(server.recv_async()),
            spawn_pending!(asked.recv_async()),
        ];
        let n = tasks.len();
        while waiting.load(Ordering::SeqCst) < n {
            thread::yield_now();
        }
        if round % 2 == 0 {
            drop(runtime);
        } else {
            runtime.shutdown_timeout(Duration::from_millis(10));
        }
        for task in tasks {
            drop(task);
        }
        let mut refused = 0;
        refused += chan.send(counted(0, &drops)).is_err() as usize;
        refused += shared.send(counted(1, &drops)).is_err() as usize;
        refused += set_chan.send(counted(2, &drops)).is_err() as usize;
        refused += one_chan.send(counted(3, &drops)).is_err() as usize;
        refused += selected_chan.send(counted(4, &drops)).is_err() as usize;
        refused += selected_port_chan.send(counted(5, &drops)).is_err() as usize;
        refused += client.tick(counted(6, &drops)).is_err() as usize;
        refused += asker.question(counted(7, &drops)).is_err() as usize;
        assert_eq!(refused, 8, "every receiving end went with its task");
        assert_eq!(drops.load(Ordering::SeqCst), 8);
    }
}

/// Polls `future` once from inside a task: `Some` if it resolved.
async fn futures_poll_once<F: std::future::Future + Unpin>(future: &mut F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut *future).poll(cx) {
            std::task::Poll::Ready(output) => Some(output),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

/// On a current-thread runtime a sender and its receiver are tasks of one thread: an async
/// receive that waited by blocking (or spinning for its sender) would hang the runtime. Every
/// kind of receive is pingponged a thousand times between two tasks.
#[test]
fn sender_and_receiver_tasks_of_one_current_thread_runtime_never_deadlock() {
    const HOPS: u64 = 1000;
    let drops = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&drops);
    within_20s(move || {
        let drops = counter;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            // Streams one way, a port set the other.
            let (mut there, there_chan) = stream::<Counted>();
            let mut back = PortSet::<Counted>::new();
            let back_chan = back.chan();
            let drops_there = Arc::clone(&drops);
            let echo = tokio::spawn(async move {
                while let Ok(message) = there.recv_async().await {
                    back_chan
                        .send(counted(message.0 + 1, &drops_there))
                        .unwrap();
                }
            });
            let mut n = 0;
            for _ in 0..HOPS {
                there_chan.send(counted(n, &drops)).unwrap();
                n = back.recv_async().await.unwrap().0;
            }
            assert_eq!(n, HOPS);
            drop(there_chan);
            echo.await.unwrap();

            // A bounded protocol: the server is a task, the client this one.
            let (server, mut client) = ask::init();
            let drops_server = Arc::clone(&drops);
            let answering = tokio::spawn(async move {
                let mut server = server;
                loop {
                    match server.await.unwrap() {
                        ask::Ask::Question(q, answer) => {
                            server = answer.reply(counted(q.0 * 2, &drops_server)).unwrap();
                        }
                        ask::Ask::Quit => return,
                    }
                }
            });
            for i in 0..HOPS {
                let answer = client.question(counted(i, &drops)).unwrap();
                let ask::Answer::Reply(r, next) = answer.await.unwrap();
                assert_eq!(r.0, i * 2);
                client = next;
            }
            client.quit().unwrap();
            answering.await.unwrap();

            // An unbounded one, each tick answered by a oneshot carried in no message: the
            // oneshots are made per hop and handed over a stream.
            let (server, mut client) = ticks::init();
            let (mut replies, replies_chan) = stream::<pipes::ChanOne<u64>>();
            let ticking = tokio::spawn(async move {
                let mut server = server;
                while let ticks::Open::Tick(tick, next) = server.await.unwrap() {
                    let reply = replies.recv_async().await.unwrap();
                    reply.send(tick.0).unwrap();
                    server = next;
                }
            });
            for i in 0..HOPS {
                let (port, chan) = oneshot::<u64>();
                replies_chan.send(chan).unwrap();
                client = client.tick(counted(i, &drops)).unwrap();
                assert_eq!(port.await.unwrap(), i);
            }
            client.stop().unwrap();
            ticking.await.unwrap();
        });
    });
    assert_eq!(drops.load(Ordering::SeqCst), (5 * HOPS) as usize);
}

/// A receive future polled once in one task, then handed to another task (on whichever
/// worker) that awaits it: the send after the hand-over wakes the second task, not the first.
/// The same for a select over two ports and a room wait is not needed: they register the same
/// way. Each round hands a different kind of future over.
#[test]
fn a_pending_receive_moved_to_another_task_is_woken_there() {
    let runtime = multi_thread();
    for round in 0..ROUNDS {
        let drops = Arc::new(AtomicUsize::new(0));
        let (server, client) = ticks::init();
        let (mut port, chan) = stream::<Counted>();
        let (hand, mut handed) = tokio::sync::mpsc::channel(1);
        let (polled, was_polled) = std::sync::mpsc::channel();
        let first = runtime.spawn(async move {
            let mut receive = server.recv_async();
            assert!(futures_poll_once(&mut receive).await.is_none());
            let mut port_receive = Box::pin(async move {
                let got = port.recv_async().await;
                (got, port)
            });
            assert!(futures_poll_once(&mut port_receive).await.is_none());
            hand.send((receive, port_receive)).await.ok().unwrap();
            polled.send(()).unwrap();
            // This task waits on: it must not be the one woken.
            std::future::pending::<()>().await;
        });
        let second = runtime.spawn(async move {
            let (receive, port_receive) = handed.recv().await.unwrap();
            let Ok(ticks::Open::Tick(tick, _next)) = receive.await else {
                panic!("the tick")
            };
            let (got, _port) = port_receive.await;
            (tick.0, got.unwrap().0)
        });
        was_polled.recv().unwrap();
        if round % 2 == 1 {
            thread::sleep(Duration::from_micros(200));
        }
        let client = client.tick(counted(1, &drops)).unwrap();
        chan.send(counted(2, &drops)).unwrap();
        let got = runtime
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), second).await })
            .expect("the task the futures moved to is woken")
            .unwrap();
        assert_eq!(got, (1, 2));
        first.abort();
        let _ = runtime.block_on(first);
        drop(client);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }
}

/// An async select over two protocol endpoints, raced in `tokio::select!` against a timer
/// that often wins: the cancelled select leaves both endpoints to be selected on again, and
/// every tick of both sessions is received once.
#[test]
fn an_async_select_cancelled_by_a_timer_keeps_its_endpoints() {
    let runtime = multi_thread();
    for _ in 0..ROUNDS / 3 {
        let drops = Arc::new(AtomicUsize::new(0));
        let (left, left_client) = ticks::init();
        let (right, right_client) = ticks::init();
        let task = runtime.spawn(async move {
            let mut ends = [Some(left), Some(right)];
            let (mut got, mut cancelled) = (Vec::new(), 0);
            while ends.iter().any(Option::is_some) {
                let ready = {
                    let mut open: Vec<&mut ticks::server::Open> =
                        ends.iter_mut().flatten().collect();
                    tokio::select! {
                        ready = selecti_async(&mut open[..]) => Some(ready),
                        () = tokio::time::sleep(Duration::from_micros(20)) => None,
                    }
                };
                let Some(ready) = ready else {
                    cancelled += 1;
                    continue;
                };
                // The `ready`-th endpoint still open.
                let slot = ends
                    .iter_mut()
                    .filter(|end| end.is_some())
                    .nth(ready)
                    .expect("selecti_async returns an index into its list");
                let endpoint = slot.take().unwrap();
                match endpoint.try_recv() {
                    Ok(ticks::Open::Tick(tick, next)) => {
                        got.push(tick.0);
                        *slot = Some(next);
                    }
                    Ok(ticks::Open::Stop) => {}
                    Err(error) => panic!("ready, but {error:?}"),
                }
            }
            (got, cancelled)
        });
        let senders = [(left_client, 0), (right_client, 1000)].map(|(client, base)| {
            let drops = Arc::clone(&drops);
            thread::spawn(move || {
                let mut client = client;
                for n in base..base + 100 {
                    client = client.tick(counted(n, &drops)).unwrap();
                    if n % 10 == 0 {
                        thread::sleep(Duration::from_micros(100));
                    }
                }
                client.stop().unwrap();
            })
        });
        let (mut got, _cancelled) = runtime.block_on(task).unwrap();
        for sender in senders {
            sender.join().unwrap();
        }
        got.sort();
        let want: Vec<u64> = (0..100).chain(1000..1100).collect();
        assert_eq!(got, want);
        assert_eq!(drops.load(Ordering::SeqCst), 200);
    }
}

/// A task that blocks its worker in `block_in_place` on a blocking receive, while another task
/// sends: the runtime hands the other tasks to another worker and nothing is lost.
#[test]
fn a_blocking_receive_in_block_in_place_gets_every_message() {
    let runtime = multi_thread();
    let drops = Arc::new(AtomicUsize::new(0));
    let (port, chan) = stream::<Counted>();
    let (server, client) = ticks::init();
    let receiver = runtime.spawn(async move {
        tokio::task::block_in_place(move || {
            let mut sum = port.map(|c| c.0).sum::<u64>();
            let mut server = server;
            while let ticks::Open::Tick(tick, next) = server.recv().unwrap() {
                sum += tick.0;
                server = next;
            }
            sum
        })
    });
    let sender = runtime.spawn({
        let drops = Arc::clone(&drops);
        async move {
            for n in 0..500 {
                chan.send(counted(n, &drops)).unwrap();
                if n % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            drop(chan);
            let mut client = client;
            for n in 0..500 {
                client = client.tick(counted(n, &drops)).unwrap();
                if n % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            client.stop().unwrap();
        }
    });
    runtime.block_on(sender).unwrap();
    let sum = runtime.block_on(receiver).unwrap();
    assert_eq!(sum, 2 * (500 * 499 / 2));
    assert_eq!(drops.load(Ordering::SeqCst), 1000);
}

/// A sender task that waits for room before each send (what `pipes::net`'s `writable` does),
/// its waits cut short by a timer (`cancel` hands the endpoint back) and the task finally
/// aborted, while a slow receiving thread reports its takes: no tick is lost or sent twice,
/// and the backlog never exceeds the room.
#[test]
fn room_waits_cancelled_by_a_timer_or_an_abort_lose_nothing() {
    use pipes::__private::{Backlog, RoomFuture};
    let runtime = multi_thread();
    for round in 0..ROUNDS / 3 {
        let drops = Arc::new(AtomicUsize::new(0));
        let (server, client) = ticks::init();
        server.report(4);
        let sent = Arc::new(AtomicUsize::new(0));
        let made = Arc::new(AtomicUsize::new(0));
        let task = runtime.spawn({
            let (drops, sent, made) = (Arc::clone(&drops), Arc::clone(&sent), Arc::clone(&made));
            async move {
                let mut client = client;
                for n in 0..200 {
                    let mut wait = RoomFuture::new(client);
                    client = loop {
                        match tokio::time::timeout(Duration::from_micros(30), &mut wait).await {
                            Ok(client) => break client,
                            Err(_) => {
                                // Cancelled, then waited for again from scratch.
                                wait = RoomFuture::new(wait.cancel());
                            }
                        }
                    };
                    made.fetch_add(1, Ordering::SeqCst);
                    match client.tick(counted(n, &drops)) {
                        Ok(next) => client = next,
                        // The receiver left (the payload came back, and is dropped).
                        Err(_) => return,
                    }
                    sent.fetch_add(1, Ordering::SeqCst);
                }
                client.stop().unwrap();
            }
        });
        let receiver = thread::spawn({
            let sent = Arc::clone(&sent);
            move || {
                let mut server = server;
                let mut got = 0u64;
                while let Ok(ticks::Open::Tick(tick, next)) = server.recv() {
                    assert_eq!(tick.0, got);
                    // Sent and not taken, this one counted as taken (the take reported it).
                    let backlog = (sent.load(Ordering::SeqCst) as u64).saturating_sub(got + 1);
                    assert!(
                        backlog <= 4,
                        "{backlog} sent and not taken, with room for 4"
                    );
                    got += 1;
                    server = next;
                    if got.is_multiple_of(8) {
                        thread::sleep(Duration::from_micros(100));
                    }
                    if round % 2 == 1 && got == 100 {
                        return got;
                    }
                }
                got
            }
        });
        let got = receiver.join().unwrap();
        if round % 2 == 1 {
            // The receiver left halfway: the task's next send fails, or it is aborted first.
            task.abort();
            let _ = runtime.block_on(task);
        } else {
            runtime.block_on(task).unwrap();
            assert_eq!(got, 200);
        }
        assert_eq!(drops.load(Ordering::SeqCst), made.load(Ordering::SeqCst));
    }
}

/// Two local tasks receive from one port (and from one port set) through shared borrows, each
/// with its own pending receive on the same state word, while a thread sends: each message is
/// received by exactly one of them, and neither is left waiting once the chan is gone.
#[test]
fn two_local_tasks_sharing_a_port_or_a_set_each_message_received_once() {
    use pipes::Recv;
    use std::rc::Rc;
    within_20s(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for round in 0..ROUNDS {
            let drops = Arc::new(AtomicUsize::new(0));
            let (port, chan) = stream::<Counted>();
            let port = Rc::new(port);
            let set = Rc::new(PortSet::<Counted>::new());
            let set_chans = [set.chan(), set.chan()];
            let local = tokio::task::LocalSet::new();
            let receivers: Vec<_> = (0..4)
                .map(|i| {
                    let (port, set) = (Rc::clone(&port), Rc::clone(&set));
                    local.spawn_local(async move {
                        let mut got = Vec::new();
                        loop {
                            let received = if i % 2 == 0 {
                                Recv::recv_async(&*port).await
                            } else {
                                Recv::recv_async(&*set).await
                            };
                            match received {
                                Ok(message) => got.push(message.0),
                                Err(_) => return got,
                            }
                            if got.len() % 7 == i {
                                tokio::task::yield_now().await;
                            }
                        }
                    })
                })
                .collect();
            let sender = thread::spawn({
                let drops = Arc::clone(&drops);
                move || {
                    let [first, second] = set_chans;
                    for n in 0..300 {
                        match n % 3 {
                            0 => chan.send(counted(n, &drops)).unwrap(),
                            1 => first.send(counted(n, &drops)).unwrap(),
                            _ => second.send(counted(n, &drops)).unwrap(),
                        }
                        if n % (10 + round) == 0 {
                            thread::sleep(Duration::from_micros(30));
                        }
                    }
                }
            });
            let mut got: Vec<u64> = runtime.block_on(local.run_until(async move {
                let mut got = Vec::new();
                for receiver in receivers {
                    got.extend(receiver.await.unwrap());
                }
                got
            }));
            sender.join().unwrap();
            got.sort();
            assert_eq!(got, (0..300).collect::<Vec<_>>());
            assert_eq!(drops.load(Ordering::SeqCst), 300);
        }
    });
}
