//! The async forms on tokio's multi-thread runtime. Every future here is handed to
//! `tokio::spawn`, which takes only `Send` futures, so each test that compiles shows that form's
//! future is `Send`; two worker threads and `yield_now` between receives let a task move
//! between threads while it waits. Then cancellation: a receive that times out
//! (`tokio::time::timeout`) or loses a `tokio::select!` race loses no message, and leaves its
//! port or set as it was.

use std::collections::BTreeMap;
use std::future::Future;
use std::thread;
use std::time::Duration;

use pipes::select::{Selectable, selecti_async};
use pipes::{PortSet, TryRecvError, stream};

pipes::proto! {
    pub ticks {
        Open: send { Tick(u64) -> Open, Stop -> ! }
    }
}

use ticks::Open::{Stop, Tick};

/// Sends `0..n` as ticks, then stops.
fn tick_all(mut client: ticks::client::Open, n: u64) {
    for i in 0..n {
        client = client.tick(i).unwrap();
    }
    client.stop().unwrap();
}

/// The sum of `0..n`.
fn sum_below(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// How many times some tests run in a row: threads, tasks and timeouts interleave differently
/// each time.
const ROUNDS: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_moved_into_a_spawned_task_receives_everything_in_order() {
    for _ in 0..ROUNDS {
        let (mut port, chan) = stream::<u64>();
        let receiver = tokio::spawn(async move {
            let mut received = Vec::new();
            while let Ok(n) = port.recv_async().await {
                received.push(n);
                if n % 64 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            received
        });
        let sender = tokio::spawn(async move {
            for n in 0..1000 {
                chan.send(n).unwrap();
                if n % 100 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        });
        sender.await.unwrap();
        assert_eq!(receiver.await.unwrap(), (0..1000).collect::<Vec<_>>());
    }
}

/// Two spawned tasks bounce a number back and forth over two streams: every hop is a task
/// waiting, and being woken by the other, on whichever worker runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_spawned_tasks_ping_pong_over_streams() {
    let (mut pings, ping_chan) = stream::<u64>();
    let (mut pongs, pong_chan) = stream::<u64>();
    let echo = tokio::spawn(async move {
        while let Ok(n) = pings.recv_async().await {
            pong_chan.send(n + 1).unwrap();
        }
    });
    let player = tokio::spawn(async move {
        let mut n = 0;
        for _ in 0..2000 {
            ping_chan.send(n).unwrap();
            n = pongs.recv_async().await.unwrap();
        }
        n
    });
    assert_eq!(player.await.unwrap(), 2000);
    echo.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_set_moved_into_a_spawned_task_receives_from_every_chan() {
    for _ in 0..ROUNDS {
        let mut set = PortSet::new();
        let senders: Vec<_> = (0..4u64)
            .map(|i| {
                let chan = set.chan();
                tokio::spawn(async move {
                    for n in 0..250 {
                        chan.send((i, n)).unwrap();
                        if n % 50 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        let receiver = tokio::spawn(async move {
            let mut per_chan: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
            while let Ok((i, n)) = set.recv_async().await {
                per_chan.entry(i).or_default().push(n);
            }
            per_chan
        });
        for sender in senders {
            sender.await.unwrap();
        }
        let per_chan = receiver.await.unwrap();
        assert_eq!(per_chan.len(), 4);
        for received in per_chan.values() {
            assert_eq!(
                *received,
                (0..250).collect::<Vec<_>>(),
                "each chan in order"
            );
        }
    }
}

/// `select_async!` over two sessions of a generated protocol in a spawned task, assigning the
/// next state's endpoint back in each arm; once one side stops, the other is received with the
/// generated `recv_async`, also inside the task.
async fn sum_two(mut left: ticks::server::Open, mut right: ticks::server::Open) -> u64 {
    let mut total = 0;
    let mut rest = loop {
        pipes::select_async! {
            left => {
                Tick(n) -> next { total += n; left = next; },
                Stop -> ! { break right; },
            },
            right => {
                Tick(n) -> next { total += n; right = next; },
                Stop -> ! { break left; },
            },
        }
    };
    loop {
        match rest.recv_async().await.unwrap() {
            Tick(n, next) => {
                total += n;
                rest = next;
            }
            Stop => return total,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_async_over_generated_endpoints_in_a_spawned_task() {
    for _ in 0..ROUNDS {
        let (left, left_client) = ticks::init();
        let (right, right_client) = ticks::init();
        let receiver = tokio::spawn(sum_two(left, right));
        let senders = [
            thread::spawn(move || tick_all(left_client, 300)),
            thread::spawn(move || tick_all(right_client, 200)),
        ];
        assert_eq!(receiver.await.unwrap(), sum_below(300) + sum_below(200));
        for sender in senders {
            sender.join().unwrap();
        }
    }
}

/// A generated endpoint's own `recv_async`, in a task spawned on each side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_endpoints_recv_async_in_a_spawned_task() {
    let (mut server, client) = ticks::init();
    let receiver = tokio::spawn(async move {
        let mut total = 0;
        loop {
            match server.recv_async().await.unwrap() {
                Tick(n, next) => {
                    total += n;
                    server = next;
                    tokio::task::yield_now().await;
                }
                Stop => return total,
            }
        }
    });
    let sender = tokio::spawn(async move { tick_all(client, 500) });
    sender.await.unwrap();
    assert_eq!(receiver.await.unwrap(), sum_below(500));
}

/// `selecti_async` over exclusive borrows of a stream port and a port set, as `dyn Selectable
/// + Send`, in a spawned task: it says which is ready, and the task receives from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selecti_async_over_a_port_and_a_port_set_in_a_spawned_task() {
    let (mut port, chan) = stream::<u64>();
    let mut set = PortSet::new();
    let set_chan = set.chan();
    let receiver = tokio::spawn(async move {
        let (mut from_port, mut from_set) = (Vec::new(), Vec::new());
        while from_port.len() < 100 || from_set.len() < 100 {
            let endpoints: &mut [&mut (dyn Selectable + Send)] = &mut [&mut port, &mut set];
            match selecti_async(endpoints).await {
                0 => from_port.push(port.try_recv().unwrap()),
                _ => from_set.push(set.try_recv().unwrap()),
            }
        }
        (from_port, from_set)
    });
    // The chans stay open until the task has every message (a closed port is ready too).
    let port_sender = thread::spawn(move || {
        (0..100).for_each(|n| chan.send(n).unwrap());
        chan
    });
    let set_sender = thread::spawn(move || {
        (0..100).for_each(|n| set_chan.send(n).unwrap());
        set_chan
    });
    let (from_port, from_set) = receiver.await.unwrap();
    assert_eq!(from_port, (0..100).collect::<Vec<_>>());
    assert_eq!(from_set, (0..100).collect::<Vec<_>>());
    drop((port_sender.join().unwrap(), set_sender.join().unwrap()));
}

/// Receives with a timeout short enough that many receives time out while a thread sends
/// `0..n` in bursts with pauses longer than the timeout between (tokio's timer counts whole
/// milliseconds): every message is received once, in order, and the port still ends when the
/// chan is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_receive_timing_out_loses_no_message() {
    let (mut port, chan) = stream::<u64>();
    let sender = thread::spawn(move || {
        for n in 0..200 {
            chan.send(n).unwrap();
            if n % 20 == 0 {
                thread::sleep(Duration::from_millis(3));
            }
        }
    });
    let receiver = tokio::spawn(async move {
        let (mut received, mut timeouts) = (Vec::new(), 0);
        loop {
            match tokio::time::timeout(Duration::from_millis(1), port.recv_async()).await {
                Ok(Ok(n)) => received.push(n),
                Ok(Err(_closed)) => return (received, timeouts),
                Err(_elapsed) => timeouts += 1,
            }
        }
    });
    let (received, timeouts) = receiver.await.unwrap();
    sender.join().unwrap();
    assert_eq!(received, (0..200).collect::<Vec<_>>());
    assert!(timeouts > 0, "some receives were cancelled mid-wait");
}

/// A receive that timed out leaves the port open for its chan and its next receive: the
/// chan's send succeeds, and that message is what the port receives next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_after_a_timed_out_receive_is_open_and_gets_the_next_message() {
    let (mut port, chan) = stream::<u64>();
    let timed_out = tokio::time::timeout(Duration::from_millis(5), port.recv_async()).await;
    assert!(timed_out.is_err());
    assert!(matches!(port.try_recv(), Err(TryRecvError::Empty(()))));
    chan.send(7).unwrap();
    assert_eq!(
        tokio::spawn(async move { port.recv_async().await })
            .await
            .unwrap()
            .unwrap(),
        7
    );
}

/// Creating a receive future (and dropping it unpolled, or polling it once) changes nothing
/// its port's chan or its next receive can see: neither looks at a closed stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_a_port_receive_future_does_not_make_the_port_look_closed() {
    let (mut port, chan) = stream::<u64>();
    drop(port.recv_async());
    chan.send(1).unwrap();
    assert_eq!(port.try_recv().unwrap(), 1);
    let future = port.recv_async();
    // The chan sends while the future exists, before it is ever polled.
    chan.send(2).unwrap();
    assert_eq!(future.await.unwrap(), 2);
    {
        let mut pending = std::pin::pin!(port.recv_async());
        assert!(futures_poll_once(pending.as_mut()).await.is_none());
        chan.send(3).unwrap();
        assert_eq!(pending.await.unwrap(), 3);
    }
    assert!(matches!(port.try_recv(), Err(TryRecvError::Empty(()))));
    drop(chan);
    assert!(
        port.recv_async().await.is_err(),
        "closed once the chan is gone"
    );
}

/// Polls `future` once from inside a task: `Some` if it resolved.
async fn futures_poll_once<F: Future + Unpin>(mut future: F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
            std::task::Poll::Ready(output) => Some(output),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

/// Two ports raced with `tokio::select!` in a loop: each round the losing receive is dropped
/// (cancelled) mid-wait, and still every message of both is received once, each port's in
/// order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ports_raced_in_tokio_select_lose_no_message() {
    let (mut evens, even_chan) = stream::<u64>();
    let (mut odds, odd_chan) = stream::<u64>();
    let senders = [
        thread::spawn(move || {
            for n in (0..400).step_by(2) {
                even_chan.send(n).unwrap();
                if n % 20 == 0 {
                    thread::sleep(Duration::from_micros(100));
                }
            }
        }),
        thread::spawn(move || {
            for n in (1..400).step_by(2) {
                odd_chan.send(n).unwrap();
                if n % 30 == 1 {
                    thread::sleep(Duration::from_micros(100));
                }
            }
        }),
    ];
    let receiver = tokio::spawn(async move {
        let (mut got_evens, mut got_odds) = (Vec::new(), Vec::new());
        let (mut evens_open, mut odds_open) = (true, true);
        while evens_open || odds_open {
            tokio::select! {
                received = evens.recv_async(), if evens_open => match received {
                    Ok(n) => got_evens.push(n),
                    Err(_) => evens_open = false,
                },
                received = odds.recv_async(), if odds_open => match received {
                    Ok(n) => got_odds.push(n),
                    Err(_) => odds_open = false,
                },
            }
        }
        (got_evens, got_odds)
    });
    let (got_evens, got_odds) = receiver.await.unwrap();
    for sender in senders {
        sender.join().unwrap();
    }
    assert_eq!(got_evens, (0..400).step_by(2).collect::<Vec<_>>());
    assert_eq!(got_odds, (1..400).step_by(2).collect::<Vec<_>>());
}

/// A port set's receive raced against a timer in `tokio::select!` while threads send in bursts
/// with pauses longer than the timer: the timer often wins and cancels the receive, and no
/// message is lost; the set still ends when every chan is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_set_receive_cancelled_by_tokio_select_loses_no_message() {
    let mut set = PortSet::new();
    let senders: Vec<_> = (0..3u64)
        .map(|i| {
            let chan = set.chan();
            thread::spawn(move || {
                for n in 0..100 {
                    chan.send((i, n)).unwrap();
                    if n % 20 == 0 {
                        thread::sleep(Duration::from_millis(3));
                    }
                }
            })
        })
        .collect();
    let receiver = tokio::spawn(async move {
        let mut per_chan: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        let mut cancelled = 0;
        loop {
            tokio::select! {
                received = set.recv_async() => match received {
                    Ok((i, n)) => per_chan.entry(i).or_default().push(n),
                    Err(_) => return (per_chan, cancelled),
                },
                () = tokio::time::sleep(Duration::from_millis(1)) => cancelled += 1,
            }
        }
    });
    let (per_chan, cancelled) = receiver.await.unwrap();
    for sender in senders {
        sender.join().unwrap();
    }
    assert_eq!(per_chan.len(), 3);
    for received in per_chan.values() {
        assert_eq!(*received, (0..100).collect::<Vec<_>>());
    }
    assert!(cancelled > 0, "some receives were cancelled mid-wait");
}

/// A port set's receive that timed out leaves the set whole: its ports stay in it, a message
/// sent afterwards is the next one received, and a port added afterwards is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_set_after_a_timed_out_receive_keeps_its_ports() {
    let mut set = PortSet::new();
    let chan = set.chan();
    assert!(
        tokio::time::timeout(Duration::from_millis(5), set.recv_async())
            .await
            .is_err()
    );
    assert_eq!(set.len(), 1);
    chan.send(1u64).unwrap();
    let (port, added) = stream();
    set.add(port);
    added.send(2).unwrap();
    let receiver = tokio::spawn(async move {
        let mut received = vec![set.recv_async().await.unwrap()];
        received.push(set.recv_async().await.unwrap());
        received.sort();
        received
    });
    assert_eq!(receiver.await.unwrap(), [1, 2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_receive_timed_out_hands_its_endpoint_back_and_the_session_goes_on() {
    for _ in 0..ROUNDS {
        let (server, client) = ticks::init();
        let (timed_out, mut told) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            // Borrowed by the timeout, so the future is still ours when it gives up.
            let mut receive = server.recv_async();
            let outcome = tokio::time::timeout(Duration::from_millis(1), &mut receive).await;
            assert!(
                outcome.is_err(),
                "nothing is sent before the timeout is told"
            );
            let server = receive.cancel().expect("pending: the endpoint comes back");
            timed_out.send(()).unwrap();
            // The session is open: the client's ticks arrive on the same endpoint.
            let (mut sum, mut server) = (0, server);
            loop {
                match server.await.unwrap() {
                    Tick(n, next) => {
                        sum += n;
                        server = next;
                    }
                    Stop => return sum,
                }
            }
        });
        (&mut told).await.unwrap();
        tick_all(client, 100);
        assert_eq!(task.await.unwrap(), sum_below(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_receive_losing_a_tokio_select_hands_its_endpoint_back() {
    for _ in 0..ROUNDS {
        let (server, client) = ticks::init();
        let (wake, mut woken) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut receive = server.recv_async();
            // The wake is sent before the ticks and looked at first, so it wins the race.
            let server = tokio::select! {
                biased;
                _ = &mut woken => receive.cancel().expect("the wake won"),
                _ = &mut receive => panic!("the wake is sent before the ticks"),
            };
            // What was sent meanwhile is still there for the endpoint handed back.
            let Tick(0, server) = server.await.unwrap() else {
                panic!("the first tick")
            };
            let Tick(1, server) = server.await.unwrap() else {
                panic!("the second tick")
            };
            server.await.unwrap_err()
        });
        wake.send(()).unwrap();
        drop(client.tick(0).unwrap().tick(1).unwrap());
        let closed = task.await.unwrap();
        assert!(closed.to_string().contains("ticks"), "{closed}");
    }
}
