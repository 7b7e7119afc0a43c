//! Streams: order, the iterator, and every way an end can vanish.

mod common;

use std::thread;
use std::time::Duration;

use common::SETTLE;
use pipes_runtime::{RecvTimeoutError, TryRecvError, stream};

#[test]
fn messages_arrive_in_order_and_the_iterator_ends_when_the_chan_drops() {
    let (port, chan) = stream();
    let sender = thread::spawn(move || {
        for i in 0..1000 {
            chan.send(i).unwrap();
        }
    });
    assert_eq!(port.collect::<Vec<_>>(), (0..1000).collect::<Vec<_>>());
    sender.join().unwrap();
}

#[test]
fn messages_sent_before_the_chan_drops_are_still_received() {
    let (port, chan) = stream();
    chan.send(1).unwrap();
    chan.send(2).unwrap();
    drop(chan);
    assert_eq!(port.recv().unwrap(), 1);
    assert_eq!(port.try_recv().unwrap(), 2);
    assert!(matches!(
        port.try_recv(),
        Err(TryRecvError::Disconnected(_))
    ));
    let error = port.recv().unwrap_err();
    assert_eq!((error.protocol(), error.state()), ("stream", "Open"));
}

#[test]
fn try_recv_on_an_empty_stream_keeps_the_port_usable() {
    let (port, chan) = stream();
    assert!(matches!(port.try_recv(), Err(TryRecvError::Empty(()))));
    chan.send('a').unwrap();
    assert_eq!(port.try_recv().unwrap(), 'a');
}

#[test]
fn recv_timeout_times_out_then_receives() {
    let (port, chan) = stream();
    assert!(matches!(
        port.recv_timeout(Duration::from_millis(1)),
        Err(RecvTimeoutError::Timeout(()))
    ));
    chan.send(5).unwrap();
    assert_eq!(port.recv_timeout(Duration::from_secs(60)).unwrap(), 5);
    drop(chan);
    assert!(matches!(
        port.recv_timeout(Duration::from_secs(60)),
        Err(RecvTimeoutError::Disconnected(_))
    ));
}

#[test]
fn send_after_the_port_drops_hands_every_message_back() {
    let (port, chan) = stream();
    chan.send(1).unwrap();
    drop(port);
    assert_eq!(chan.send(2).unwrap_err().into_inner(), 2);
    assert_eq!(chan.send(3).unwrap_err().into_inner(), 3);
}

#[test]
fn recv_blocks_then_chan_drops() {
    let (port, chan) = stream::<u8>();
    let receiver = thread::spawn(move || port.recv());
    thread::sleep(SETTLE);
    drop(chan);
    assert!(receiver.join().unwrap().is_err());
}

#[test]
fn chan_thread_panics_and_the_port_iterator_ends() {
    let (port, chan) = stream();
    let sender = thread::spawn(move || {
        chan.send(1).unwrap();
        panic!("the sender fails mid-stream");
    });
    assert_eq!(port.iter().collect::<Vec<_>>(), [1]);
    assert!(sender.join().is_err());
}

#[test]
fn try_iter_takes_only_what_is_there() {
    let (port, chan) = stream();
    for i in 0..3 {
        chan.send(i).unwrap();
    }
    assert_eq!(port.try_iter().collect::<Vec<_>>(), [0, 1, 2]);
    chan.send(3).unwrap();
    assert_eq!((&port).into_iter().next(), Some(3));
}

#[test]
fn a_backlog_sent_from_another_thread_arrives_in_order_across_grown_segments() {
    // Enough `u64`s that the lane's segments grow from 256 slots to 4096 (Miri: to 2048, past
    // the 1,792 slots of the first three).
    let n = common::size(20_000, 2_000) as u64;
    let (port, chan) = stream();
    // All sent before the first receive: every segment is new, each twice the last.
    let chan = thread::spawn(move || {
        for i in 0..n {
            chan.send(i).unwrap();
        }
        chan
    })
    .join()
    .unwrap();
    // Then sent while the port receives: segments are handed back and reused.
    let sender = thread::spawn(move || {
        for i in n..2 * n {
            chan.send(i).unwrap();
        }
    });
    assert_eq!(port.collect::<Vec<_>>(), (0..2 * n).collect::<Vec<_>>());
    sender.join().unwrap();
}
