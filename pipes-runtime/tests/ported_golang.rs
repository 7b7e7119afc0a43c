//! Go's channel tests, ported onto pipes' streams, shared chans, port sets and select.
//!
//! # Origin and licences
//!
//! Ported test by test from crossbeam-channel's `tests/golang.rs` (crossbeam commit
//! `7de845aa13ce5d80084ce0889e014ae0aa0d19ce`; <https://github.com/crossbeam-rs/crossbeam>;
//! Copyright (c) 2019 The Crossbeam Project Developers; MIT OR Apache-2.0), which rewrote
//! tests of the Go project (<https://github.com/golang/go>: `test/chan/*.go`, `test/ken/*.go`,
//! `src/runtime/chan_test.go`) in Rust. The Go tests are under Go's BSD-3-Clause licence
//! (<https://golang.org/LICENSE>):
//!
//! ```text
//! Copyright (c) 2009 The Go Authors. All rights reserved.
//!
//! Redistribution and use in source and binary forms, with or without
//! modification, are permitted provided that the following conditions are
//! met:
//!
//!    * Redistributions of source code must retain the above copyright
//! notice, this list of conditions and the following disclaimer.
//!    * Redistributions in binary form must reproduce the above
//! copyright notice, this list of conditions and the following disclaimer
//! in the documentation and/or other materials provided with the
//! distribution.
//!    * Neither the name of Google LLC nor the names of its
//! contributors may be used to endorse or promote products derived from
//! this software without specific prior written permission.
//!
//! THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS
//! "AS IS" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT
//! LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR
//! A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT
//! OWNER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL,
//! SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT
//! LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
//! DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
//! THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
//! (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
//! OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
//! ```
//!
//! Modules and test names are crossbeam's (one module per Go file); each keeps its Go test's
//! assertions and message counts where they carry over, and a note on a test says where the
//! semantics differ.
//!
//! # Mapping
//!
//! A Go channel is one value that any goroutine may send on, receive from and close. Here it is
//! a stream: a [`Port`] (one receiver) and a [`Chan`], or a [`SharedChan`] where several
//! goroutines send, or a [`PortSet`] with one `set.chan()` per sender where order across
//! senders does not matter. Closing is dropping every sender; a receive then drains what was
//! sent and fails (Go's zero value with `ok == false`). `select` over receives is [`selecti`],
//! [`select2`] or [`select`]; `select` with `default` is [`selecti_timeout`] with a zero
//! timeout. Goroutines are threads, all joined (crossbeam's `go!` detaches them).
//!
//! The big differences: pipes' streams are unbounded, so sends never block and a Go channel's
//! capacity means nothing (an unbuffered Go send waits for its receiver; here it does not);
//! there is no select over sends (a send is always ready); a port has one receiver.
//!
//! # Not ported
//!
//! - `select::main` (select.go): select over sends with `default`, counting how often the send
//!   values are evaluated. Pipes has no select over sends.
//! - `chan_test::test_self_select`: send and receive on one channel in one select, from two
//!   goroutines that both receive. No select over sends; one receiver per port.
//! - `chan_test::test_chan_send_interface`: non-blocking sends (select with `default`) into a
//!   full channel. Streams are never full and have no send select.
//! - `chan_test::test_pseudo_random_send`: a select over two sends to one channel must pick
//!   either pseudo-randomly. No select over sends.
//! - `chan_test::test_select_duplicate_channel`: a select goroutine and another goroutine both
//!   queued to receive on one channel, and a channel both received in a select and sent on by
//!   the same goroutine while main receives it. One receiver per port. (A port passed twice to
//!   one select is tested in `tests/select.rs`.)
//! - `chan1::main` (ken/chan1.go): ten goroutines receiving from one channel. One receiver per
//!   port.
//! - `chan::main` (ken/chan.go) is ported for its tests 1 and 2 only (direct send to direct
//!   receive, direct send to a select receiving); tests 3 to 6 select over sends.
//! - From `chan_test::test_chan`, the block "send to a full chan blocks" (streams never fill),
//!   and the second receiver of each channel.
//! - `select3`, `closedchan`, `chanbarrier_test`, `race_chan_test`: empty (TODO) in crossbeam.
//!
//! # Pipes bugs found
//!
//! - `chan_test::test_select_fairness`: select was not fair. Each select started looking at the
//!   endpoint after the one the thread's previous select started at (one counter per thread,
//!   shared by all its selects) and took the first ready one. With Go's two selects per round
//!   the first always started at an even index, and of two ready ports one was never chosen
//!   (10000 to 0); `test_select_fairness_one_select_per_round` showed the bias left with one
//!   select per round (the ready port after the longest run of empty ones won 3 in 4). Fixed:
//!   select now picks uniformly among the ready endpoints, as Go does.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use common::size;
use pipes_runtime::{
    Chan, Either, Port, PortSet, SharedChan, TryRecvError, select,
    select::{Selectable, selecti_timeout},
    select2, selecti, stream,
};

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// Go's `select { case <-c: ..; default: .. }` over `endpoints`: the index of one that is
/// ready (a message, or its senders gone) without waiting, or `None`.
fn ready_now(endpoints: &[&dyn Selectable]) -> Option<usize> {
    selecti_timeout(endpoints, Duration::ZERO)
}

/// A stream whose chan is shared by several goroutines.
fn shared<T>() -> (Port<T>, SharedChan<T>) {
    let (port, chan) = stream();
    (port, SharedChan::new(chan))
}

fn join_all(handles: Vec<JoinHandle<()>>) {
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Counts the bytes live from allocations made and freed on threads that opted in (only
/// `select2::main`'s), so that other tests running meanwhile do not count. crossbeam counts
/// every thread's.
struct Tracking;

static TRACKED_BYTES: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    static TRACKED: Cell<bool> = const { Cell::new(false) };
}

fn tracked() -> bool {
    TRACKED.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: defers to the system allocator and only counts.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed through.
        let ret = unsafe { System.alloc(layout) };
        if !ret.is_null() && tracked() {
            TRACKED_BYTES.fetch_add(layout.size() as isize, SeqCst);
        }
        ret
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if tracked() {
            TRACKED_BYTES.fetch_sub(layout.size() as isize, SeqCst);
        }
        // SAFETY: the caller's contract is passed through.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static A: Tracking = Tracking;

// https://github.com/golang/go/blob/HEAD/test/chan/doubleselect.go
mod doubleselect {
    use super::*;

    const ITERATIONS: i32 = if cfg!(miri) { 100 } else { 10_000 };

    /// Go selects over four unbuffered sends and takes any that is ready; pipes has no select
    /// over sends (a send is always ready), so the values are dealt round robin. Dropping the
    /// chans closes them (Go's deferred closes).
    fn sender(n: i32, c: [Chan<i32>; 4]) {
        for i in 0..n {
            c[i as usize % 4].send(i).unwrap();
        }
    }

    fn mux(out: impl Fn(i32), inp: Port<i32>, done: SharedChan<bool>) {
        for v in inp {
            out(v);
        }
        done.send(true).unwrap();
    }

    /// Go checks only for duplicates; every value is also counted here.
    fn recver(inp: impl Iterator<Item = i32>) {
        let mut seen = HashSet::new();

        for v in inp {
            if !seen.insert(v) {
                panic!("got duplicate value for {}", v);
            }
        }
        assert_eq!(seen.len(), ITERATIONS as usize);
    }

    /// `cmux` is a shared chan: the four muxes and the closer hold clones, and it closes when
    /// the last is dropped (the closer's, after four `done`s, as in Go).
    #[test]
    fn main() {
        let (p1, c1) = stream::<i32>();
        let (p2, c2) = stream::<i32>();
        let (p3, c3) = stream::<i32>();
        let (p4, c4) = stream::<i32>();
        let (done_port, done) = shared::<bool>();
        let (cmux_port, cmux) = shared::<i32>();

        let mut handles = vec![thread::spawn(move || sender(ITERATIONS, [c1, c2, c3, c4]))];
        for inp in [p1, p2, p3, p4] {
            let (cmux, done) = (cmux.clone(), done.clone());
            handles.push(thread::spawn(move || {
                mux(|v| cmux.send(v).unwrap(), inp, done)
            }));
        }
        drop(done);
        handles.push(thread::spawn(move || {
            done_port.recv().unwrap();
            done_port.recv().unwrap();
            done_port.recv().unwrap();
            done_port.recv().unwrap();
            drop(cmux);
        }));
        recver(cmux_port);
        join_all(handles);
    }

    /// The same with `cmux` a port set, one chan per mux.
    #[test]
    fn main_port_set() {
        let (p1, c1) = stream::<i32>();
        let (p2, c2) = stream::<i32>();
        let (p3, c3) = stream::<i32>();
        let (p4, c4) = stream::<i32>();
        let (done_port, done) = shared::<bool>();
        let cmux = PortSet::new();

        let mut handles = vec![thread::spawn(move || sender(ITERATIONS, [c1, c2, c3, c4]))];
        for inp in [p1, p2, p3, p4] {
            let (out, done) = (cmux.chan(), done.clone());
            handles.push(thread::spawn(move || {
                mux(|v| out.send(v).unwrap(), inp, done)
            }));
        }
        drop(done);
        recver(cmux.iter());
        for _ in 0..4 {
            assert!(done_port.recv().unwrap());
        }
        join_all(handles);
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/fifo.go
mod fifo {
    use super::*;

    const N: i32 = 10;

    #[test]
    fn asynch_fifo() {
        let (ch, tx) = stream::<i32>();
        for i in 0..N {
            tx.send(i).unwrap();
        }
        for i in 0..N {
            if ch.recv().ok() != Some(i) {
                panic!("bad receive");
            }
        }
    }

    /// Go's goroutines all receive from one channel `ch`, each after the one before it has
    /// signalled. A port has one receiver, so the signal carries the port itself down the
    /// chain: each goroutine receives the port, takes its value from it, and sends it on.
    fn chain(val: i32, inp: Port<Port<i32>>, out: Chan<Port<i32>>) {
        let ch = inp.recv().unwrap();
        if ch.recv().ok() != Some(val) {
            panic!("{}", val);
        }
        out.send(ch).unwrap();
    }

    /// Go's `ch` is unbuffered, so each send waits for its goroutine; here the sends run ahead.
    #[test]
    fn synch_fifo() {
        let (ch, tx) = stream::<i32>();
        let (mut inp, start) = stream::<Port<i32>>();
        let mut handles = Vec::new();

        for i in 0..N {
            let (next, out) = stream();
            handles.push(thread::spawn(move || chain(i, inp, out)));
            inp = next;
        }

        start.send(ch).unwrap();
        for i in 0..N {
            tx.send(i).unwrap();
        }
        inp.recv().unwrap();
        join_all(handles);
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/goroutines.go
mod goroutines {
    use super::*;

    fn f(left: Chan<i32>, right: Port<i32>) {
        left.send(right.recv().unwrap()).unwrap();
    }

    /// 100 threads in a chain (10 under Miri).
    #[test]
    fn main() {
        let n = size(100, 10);

        let (leftmost, mut left) = stream::<i32>();
        let mut handles = Vec::with_capacity(n + 1);

        for _ in 0..n {
            let (right, right_chan) = stream::<i32>();
            handles.push(thread::spawn(move || f(left, right)));
            left = right_chan;
        }

        handles.push(thread::spawn(move || left.send(1).unwrap()));
        assert_eq!(leftmost.recv().unwrap(), 1);
        join_all(handles);
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/nonblock.go
mod nonblock {
    use super::*;

    fn receiver<T: PartialEq + Debug>(c: Port<T>, expected: T, strobe: SharedChan<bool>) {
        assert_eq!(c.recv().unwrap(), expected, "receiver value");
        strobe.send(true).unwrap();
    }

    fn sender<T>(c: Chan<T>, value: T, strobe: SharedChan<bool>) {
        c.send(value).unwrap();
        strobe.send(true).unwrap();
    }

    /// Go polls up to 10,000 times 10-20 µs ("up to 100ms per test"); here up to 10,000 times
    /// 1 ms, a bound only a hang reaches (the value usually arrives in the first few tries).
    const MAX_TRIES: usize = 10000;

    fn sleep() {
        thread::sleep(ms(1));
    }

    /// One type's half of Go's test: a non-blocking receive finds nothing; a goroutine receives
    /// what main sends (Go retries a non-blocking send until the goroutine is ready; a send here
    /// never blocks); main polls with non-blocking receives until what a goroutine sent arrives.
    /// A Go channel carries both directions; here they are two streams. Go's capacity (0 or 1)
    /// decides whether main takes the sender's strobe before polling or after; both orders are
    /// kept, so the polling meets the value both before and after it is sent.
    fn exchange<T>(
        buffer: usize,
        to_receiver: T,
        from_sender: T,
        sync: &Port<bool>,
        strobe: &SharedChan<bool>,
    ) where
        T: PartialEq + Debug + Clone + Send + 'static,
    {
        let (main_rx, goroutine_tx) = stream::<T>();
        let (goroutine_rx, main_tx) = stream::<T>();

        if ready_now(&[&main_rx]).is_some() {
            panic!("blocked sender");
        }

        let (expected, strobe1) = (to_receiver.clone(), strobe.clone());
        let r = thread::spawn(move || receiver(goroutine_rx, expected, strobe1));
        main_tx.send(to_receiver).unwrap();
        sync.recv().unwrap();
        r.join().unwrap();

        let (value, strobe2) = (from_sender.clone(), strobe.clone());
        let s = thread::spawn(move || sender(goroutine_tx, value, strobe2));
        if buffer > 0 {
            sync.recv().unwrap();
        }
        let mut r#try = 0;
        loop {
            match main_rx.try_recv() {
                Ok(v) => {
                    if v != from_sender {
                        panic!("sender value");
                    }
                    break;
                }
                Err(TryRecvError::Empty(())) => {
                    r#try += 1;
                    if r#try > MAX_TRIES {
                        println!("sender buffer={}", buffer);
                        panic!("fail");
                    }
                    sleep();
                }
                Err(TryRecvError::Disconnected(error)) => panic!("{error}"),
            }
        }
        if buffer == 0 {
            sync.recv().unwrap();
        }
        s.join().unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore = "sleeps")]
    fn main() {
        let (sync, strobe) = shared::<bool>();
        for buffer in 0..2 {
            exchange(buffer, 123i32, 234i32, &sync, &strobe);
            exchange(buffer, 123456i64, 234567i64, &sync, &strobe);
            exchange(buffer, true, true, &sync, &strobe);
            exchange(
                buffer,
                "hello".to_string(),
                "hello again".to_string(),
                &sync,
                &strobe,
            );
        }
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/select2.go
mod select2 {
    use super::*;

    const N: i32 = if cfg!(miri) { 200 } else { 100000 };

    fn sender(c: Chan<i32>, n: i32) -> Chan<i32> {
        TRACKED.with(|tracked| tracked.set(true));
        for _ in 0..n {
            c.send(1).unwrap();
        }
        c
    }

    fn receiver(c: &Port<i32>, dummy: &Port<i32>, n: i32) {
        for _ in 0..n {
            match select2(c, dummy) {
                Either::Left((message, _)) => assert_eq!(message.unwrap(), 1),
                Either::Right(_) => panic!("dummy"),
            }
        }
    }

    /// Select must not leak: a second round of `N` selects may not leave more than `N + 10000`
    /// bytes allocated beyond the first. Only this test's two threads are counted (see
    /// [`Tracking`]).
    #[test]
    fn main() {
        TRACKED.with(|tracked| tracked.set(true));
        let (c, tx) = stream::<i32>();
        let (dummy, _dummy_tx) = stream::<i32>();

        let t = thread::spawn(move || sender(tx, N));
        receiver(&c, &dummy, N);
        let tx = t.join().unwrap();

        let alloc = TRACKED_BYTES.load(SeqCst);

        let t = thread::spawn(move || sender(tx, N));
        receiver(&c, &dummy, N);
        drop(t.join().unwrap());

        let final_alloc = TRACKED_BYTES.load(SeqCst);
        TRACKED.with(|tracked| tracked.set(false));

        assert!(
            !(final_alloc > alloc && final_alloc - alloc > N as isize + 10000),
            "{alloc} bytes live after the first round, {final_alloc} after the second"
        );
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/select4.go
mod select4 {
    use super::*;

    #[test]
    fn main() {
        let (c, tx) = stream::<i32>();
        let (c1, _tx1) = stream::<i32>();
        tx.send(42).unwrap();
        match select2(&c1, &c) {
            Either::Left(_) => panic!("BUG"),
            Either::Right((_, v)) => assert_eq!(v, Ok(42)),
        }
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/select6.go
mod select6 {
    use super::*;

    /// Go issue 2075: a select that wakes on `c2` must leave nothing queued on `c1`, or a later
    /// send on `c1` goes to the stale select. In Go another goroutine receives `c1` first and
    /// the selecting one second; a port has one receiver, so the selecting thread takes both.
    #[test]
    fn main() {
        let (c1, c1_tx) = stream::<bool>();
        let (c2, c2_tx) = stream::<bool>();
        let (c3, c3_tx) = stream::<bool>();

        let t1 = thread::spawn(move || {
            match select2(&c1, &c2) {
                Either::Left(_) => panic!("dummy"),
                Either::Right((_, _)) => c3_tx.send(true).unwrap(),
            }
            c1.recv().unwrap();
            c1.recv().unwrap();
        });
        let t2 = thread::spawn(move || c2_tx.send(true).unwrap());

        c3.recv().unwrap();
        c1_tx.send(true).unwrap();
        c1_tx.send(true).unwrap();
        t1.join().unwrap();
        t2.join().unwrap();
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/select7.go
mod select7 {
    use super::*;

    fn recv1(c: Port<i32>) {
        c.recv().unwrap();
    }

    fn recv2(c: Port<i32>) {
        let (_, message, _) = select(vec![&c]);
        message.unwrap();
    }

    fn recv3(c: Port<i32>) {
        let (c2, _c2_tx) = stream::<i32>();
        match select2(&c, &c2) {
            Either::Left((message, _)) => message.unwrap(),
            Either::Right(_) => panic!("nothing is sent on c2"),
        };
    }

    fn send1(recv: fn(Port<i32>)) {
        let (c, tx) = stream::<i32>();
        let t = thread::spawn(move || recv(c));
        thread::yield_now();
        tx.send(1).unwrap();
        t.join().unwrap();
    }

    /// Go crosses three receives with three sends: a plain send, a select over one send, and
    /// a select over a send to `c` and one to another channel (either may be taken). Pipes
    /// has no select over sends, so all three are the plain send, done once per receive.
    #[test]
    fn main() {
        send1(recv1);
        send1(recv2);
        send1(recv3);
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/sieve1.go
mod sieve1 {
    use super::*;

    /// Go's generator is infinite and its channels of capacity 1 hold it back; pipes' streams
    /// are unbounded, so it stops at `limit` (the last prime the test checks). Every stage
    /// ends when its input ends or its output's receiver is gone, so all threads are joined.
    fn generate(ch: Chan<i32>, limit: i32) {
        for i in 2..=limit {
            if ch.send(i).is_err() {
                return;
            }
        }
    }

    fn filter(in_ch: Port<i32>, out_ch: Chan<i32>, prime: i32) {
        for i in in_ch {
            if i % prime != 0 && out_ch.send(i).is_err() {
                return;
            }
        }
    }

    fn sieve(primes: Chan<i32>, limit: i32) {
        let (mut ch, generator) = stream::<i32>();
        let mut handles = vec![thread::spawn(move || generate(generator, limit))];
        while let Ok(prime) = ch.recv() {
            if primes.send(prime).is_err() {
                break;
            }

            let (ch1, ch1_tx) = stream::<i32>();
            handles.push(thread::spawn(move || filter(ch, ch1_tx, prime)));
            ch = ch1;
        }
        drop(ch);
        join_all(handles);
    }

    /// The 25 primes below 100 (10 under Miri), then, as the generator stops, the end.
    #[test]
    fn main() {
        let a = [
            2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83,
            89, 97,
        ];
        #[cfg(miri)]
        let a = &a[..10];

        let (primes, primes_tx) = stream::<i32>();
        let limit = *a.last().unwrap();
        let t = thread::spawn(move || sieve(primes_tx, limit));

        for item in a.iter() {
            let x = primes.recv().unwrap();
            if x != *item {
                println!("{} != {}", x, item);
                panic!("fail");
            }
        }
        assert!(primes.recv().is_err());
        t.join().unwrap();
    }
}

// https://github.com/golang/go/blob/HEAD/test/chan/zerosize.go
mod zerosize {
    use super::*;

    /// Go only makes the channel; a value also goes through here.
    #[test]
    fn zero_size_struct() {
        #[derive(Debug, PartialEq)]
        struct ZeroSize;
        let (port, chan) = stream::<ZeroSize>();
        chan.send(ZeroSize).unwrap();
        assert_eq!(port.recv(), Ok(ZeroSize));
    }

    #[test]
    fn zero_size_array() {
        let (port, chan) = stream::<[u8; 0]>();
        chan.send([]).unwrap();
        assert_eq!(port.recv(), Ok([]));
    }
}

// https://github.com/golang/go/blob/HEAD/src/runtime/chan_test.go
mod chan_test {
    use super::*;

    /// Go sweeps capacities 0..200; a stream has none, so `cap` is the round and, where Go
    /// fills the channel, the number of values. The blocks that start threads run every tenth
    /// round only (they do not depend on `cap`, and a thread start costs milliseconds here).
    /// Dropped: the block "send to full chan blocks" (streams never fill) and the second
    /// receiver of the first block (one receiver per port; Go's two non-blocking receives are
    /// made before the receiving thread takes the port).
    #[test]
    #[cfg_attr(miri, ignore = "sleeps")]
    fn test_chan() {
        const N: i32 = if cfg!(miri) { 12 } else { 200 };

        const MESSAGES_COUNT: i32 = if cfg!(miri) { 20 } else { 100 };

        for cap in 0..N {
            let with_threads = cap % 10 == 0;
            if with_threads {
                // Ensure that non-blocking receive does not block.
                let (c, tx) = stream::<i32>();
                if ready_now(&[&c]).is_some() {
                    panic!();
                }
                if ready_now(&[&c]).is_some() {
                    panic!();
                }

                // Ensure that receive from empty chan blocks.
                let recv1 = Arc::new(AtomicBool::new(false));
                let t = thread::spawn({
                    let recv1 = recv1.clone();
                    move || {
                        c.recv().unwrap();
                        recv1.store(true, SeqCst);
                    }
                });

                thread::sleep(ms(1));

                if recv1.load(SeqCst) {
                    panic!();
                }

                tx.send(0).unwrap();
                t.join().unwrap();
                assert!(recv1.load(SeqCst));
            }

            {
                // Ensure that we receive 0 from closed chan.
                let (c, tx) = stream::<i32>();
                for i in 0..cap {
                    tx.send(i).unwrap();
                }
                drop(tx);

                for i in 0..cap {
                    let v = c.recv().ok();
                    if v != Some(i) {
                        panic!();
                    }
                }

                if c.recv().is_ok() {
                    panic!();
                }
                if c.try_recv().is_ok() {
                    panic!();
                }
            }

            if with_threads {
                // Ensure that close unblocks receive. (crossbeam's port receives with
                // `try_recv`; Go's, and this one, block.)
                let (c, tx) = stream::<i32>();
                let (done, done_tx) = stream::<bool>();

                let t = thread::spawn(move || {
                    let v = c.recv();
                    done_tx.send(v.is_err()).unwrap();
                });

                thread::sleep(ms(1));
                drop(tx);

                if !done.recv().unwrap() {
                    panic!();
                }
                t.join().unwrap();
            }

            if with_threads {
                // Send many integers,
                // ensure that we receive them non-corrupted in FIFO order.
                let (c, tx) = stream::<i32>();
                let t = thread::spawn(move || {
                    for i in 0..MESSAGES_COUNT {
                        tx.send(i).unwrap();
                    }
                    tx
                });
                for i in 0..MESSAGES_COUNT {
                    if c.recv().ok() != Some(i) {
                        panic!();
                    }
                }
                let tx = t.join().unwrap();

                // Same, but using recv2.
                let t = thread::spawn(move || {
                    for i in 0..MESSAGES_COUNT {
                        tx.send(i).unwrap();
                    }
                });
                for i in 0..MESSAGES_COUNT {
                    if c.recv().ok() != Some(i) {
                        panic!();
                    }
                }
                t.join().unwrap();
            }
        }
    }

    /// A non-blocking receive of a buffered value, racing the close of the channel, must find
    /// it. Go's main then receives too (a second receiver): dropped. Go starts a goroutine per
    /// round; here one thread serves every round, handed each round's port over a stream (a
    /// thread start costs milliseconds here, which would let the close win every race).
    #[test]
    fn test_nonblock_recv_race() {
        let n = size(1000, 20);

        let (rounds, rounds_tx) = stream::<Port<i32>>();
        let t = thread::spawn(move || {
            for c in rounds {
                if ready_now(&[&c]).is_none() {
                    panic!("chan is not ready");
                }
                assert_eq!(c.recv(), Ok(1));
            }
        });

        for _ in 0..n {
            let (c, tx) = stream::<i32>();
            tx.send(1).unwrap();
            rounds_tx.send(c).unwrap();
            drop(tx);
        }
        drop(rounds_tx);
        t.join().unwrap();
    }

    /// The two ports of a round of the select races.
    type Round = (Port<i32>, Port<i32>);

    /// One thread serving every round of the two select races, as in `test_nonblock_recv_race`:
    /// it answers whether a non-blocking select over the round's two ports found one ready, and
    /// hands the ports back so they outlive main's sends, as Go's channels do.
    fn select_racer() -> (Chan<Round>, Port<(bool, Round)>, JoinHandle<()>) {
        let (rounds, rounds_tx) = stream::<Round>();
        let (done, done_tx) = stream();
        let t = thread::spawn(move || {
            for (c1, c2) in rounds {
                let ready = ready_now(&[&c1, &c2]).is_some();
                done_tx.send((ready, (c1, c2))).unwrap();
            }
        });
        (rounds_tx, done, t)
    }

    /// In Go, main sends on `c2` and then takes `c1`'s value with a non-blocking receive,
    /// racing the goroutine's non-blocking select over both: at every moment one of them holds
    /// a value. A port has one receiver, so main closes `c1` instead of draining it: the select
    /// must still see a ready port.
    #[test]
    fn test_nonblock_select_race() {
        let n = size(1000, 20);

        let (rounds, done, t) = select_racer();
        for _ in 0..n {
            let (c1, c1_tx) = stream::<i32>();
            let (c2, c2_tx) = stream::<i32>();
            c1_tx.send(1).unwrap();

            rounds.send((c1, c2)).unwrap();

            c2_tx.send(1).unwrap();
            drop(c1_tx);
            if !done.recv().unwrap().0 {
                panic!("no chan is ready");
            }
        }
        drop(rounds);
        t.join().unwrap();
    }

    /// As `test_nonblock_select_race`, with `c2` closed instead of sent on; main closes `c1`
    /// instead of draining it.
    #[test]
    fn test_nonblock_select_race2() {
        let n = size(1000, 20);

        let (rounds, done, t) = select_racer();
        for _ in 0..n {
            let (c1, c1_tx) = stream::<i32>();
            let (c2, c2_tx) = stream::<i32>();
            c1_tx.send(1).unwrap();

            rounds.send((c1, c2)).unwrap();

            drop(c2_tx);
            drop(c1_tx);
            if !done.recv().unwrap().0 {
                panic!("no chan is ready");
            }
        }
        drop(rounds);
        t.join().unwrap();
    }

    /// Go: four goroutines send `N` on each of four channels, four receive `N` from each, one
    /// sends `N` to each in one select over sends, and one receives `N` from each in one select,
    /// dropping a channel from its select once it has had `N`. Here each channel is a shared
    /// chan: the direct sender and the select-sender (which deals its sends round robin over
    /// the chans still owed some, pipes having no select over sends). A port has one receiver,
    /// so the select-receiver takes all `2N` from each port, and the four direct receivers are
    /// dropped. Counts are checked exactly (Go checks only that nothing deadlocks).
    #[test]
    fn test_select_stress() {
        const N: usize = if cfg!(miri) { 100 } else { 10000 };

        let (ports, chans): (Vec<_>, Vec<_>) = (0..4).map(|_| shared::<i32>()).unzip();

        let mut handles = Vec::new();
        for c in &chans {
            let c = c.clone();
            handles.push(thread::spawn(move || {
                for _ in 0..N {
                    c.send(0).unwrap();
                }
            }));
        }

        handles.push(thread::spawn(move || {
            let mut n = [0; 4];
            let mut k = 0;
            for _ in 0..4 * N {
                while n[k % 4] == N {
                    k += 1;
                }
                chans[k % 4].send(0).unwrap();
                n[k % 4] += 1;
                k += 1;
            }
        }));

        let mut n = [0; 4];
        let mut live: Vec<usize> = vec![3, 2, 0, 1];
        for _ in 0..4 * 2 * N {
            let targets: Vec<&dyn Selectable> =
                live.iter().map(|&k| &ports[k] as &dyn Selectable).collect();
            let j = selecti(&targets);
            let k = live[j];
            assert_eq!(ports[k].recv(), Ok(0));
            n[k] += 1;
            if n[k] == 2 * N {
                live.remove(j);
            }
        }
        assert_eq!(n, [2 * N; 4]);
        join_all(handles);
        for port in &ports {
            assert!(port.recv().is_err());
        }
    }

    const TRIALS: usize = if cfg!(miri) { 100 } else { 10000 };

    /// Go's fairness bound today: the count of 1s may be at most 10 standard deviations from
    /// half the trials (500 of 10000), which a fair select never reaches (a chance below
    /// 10^-22) and the biases found here did by far (10000 to 0, 7500 to 2500).
    ///
    /// crossbeam ported Go's older bound, a confidence level of five nines (4.4172 / (2 *
    /// sqrt(TRIALS)) off one half): a perfectly fair select fails that once in 10^5 runs by
    /// construction, and with two random fairness tests here, once in 5 * 10^4 test runs. Go
    /// itself moved to six nines and then to this bound (`runtime/chan_test.go`). With 100
    /// trials (Miri) the bound is the whole range, so there it catches a select that always
    /// takes the same endpoint, the bug it was ported for, and nothing subtler.
    fn assert_fair(cnt1: usize, cnt2: usize) {
        let mean = TRIALS as f64 * 0.5;
        let stddev = (TRIALS as f64 * 0.5 * (1.0 - 0.5)).sqrt();

        if (cnt1 as f64 - mean).abs() >= 10.0 * stddev {
            panic!(
                "unfair select: in {} trials, results were {}, {}",
                TRIALS, cnt1, cnt2,
            );
        }
    }

    /// The bound still fails the biases this port found in select (see the file's notes).
    #[test]
    #[cfg_attr(miri, ignore = "100 trials cannot resolve a 3 to 1 bias at 10 sigma")]
    #[should_panic(expected = "unfair select")]
    fn assert_fair_fails_a_select_that_favours_one_port_3_to_1() {
        assert_fair(TRIALS * 3 / 4, TRIALS / 4);
    }

    #[test]
    #[should_panic(expected = "unfair select")]
    fn assert_fair_fails_a_select_that_always_takes_one_port() {
        assert_fair(TRIALS, 0);
    }

    /// Go's goroutine: a select over two empty and two always-ready ports, whose value it
    /// forwards on `out` in a second select, with `done`. Returns how often each ready port won
    /// in `TRIALS` rounds. Sends never block here, so the second select is a non-blocking one
    /// on `done` followed by the send (`second_select`; without it, the value is just sent).
    /// The thread also stops when its ports hang up, which main makes them do after counting
    /// (with `second_select`, when it sees `done` closed).
    fn select_fairness_trial(second_select: bool) -> (usize, usize) {
        let (c1, c1_tx) = stream::<u8>();
        let (c2, c2_tx) = stream::<u8>();

        for _ in 0..TRIALS + 1 {
            c1_tx.send(1).unwrap();
            c2_tx.send(2).unwrap();
        }

        let (c3, c3_tx) = stream::<u8>();
        let (c4, c4_tx) = stream::<u8>();
        let (out, out_tx) = stream::<u8>();
        let (done, done_tx) = stream::<u8>();

        let t = thread::spawn(move || {
            let targets: [&dyn Selectable; 4] = [&c3, &c4, &c1, &c2];
            let ports = [&c3, &c4, &c1, &c2];
            loop {
                let i = selecti(&targets);
                let Ok(b) = ports[i].recv() else { return };
                if second_select && ready_now(&[&done]).is_some() {
                    return;
                }
                if out_tx.send(b).is_err() {
                    return;
                }
            }
        });

        let (mut cnt1, mut cnt2) = (0, 0);
        for _ in 0..TRIALS {
            match out.recv() {
                Ok(1) => cnt1 += 1,
                Ok(2) => cnt2 += 1,
                b => panic!("unexpected value {:?} on channel", b),
            }
        }

        // `out` goes last, once nothing sends on it: its backlog is then drained with no
        // sender racing the drain (see `ported_mpsc`'s `port_gone_concurrent_oversubscribed`).
        drop((done_tx, c1_tx, c2_tx, c3_tx, c4_tx));
        t.join().unwrap();
        drop(out);
        (cnt1, cnt2)
    }

    /// If the select is fair, `c1` and `c2` win about as often. As in Go, the goroutine selects
    /// twice per round (a select over `c3`, `c4`, `c1`, `c2`, then one involving `done`).
    #[test]
    fn test_select_fairness() {
        let (cnt1, cnt2) = select_fairness_trial(true);
        assert_fair(cnt1, cnt2);
    }

    /// Not in Go: `test_select_fairness` with one select per round (which failed after the
    /// first fix, see the file's notes).
    #[test]
    fn test_select_fairness_one_select_per_round() {
        let (cnt1, cnt2) = select_fairness_trial(false);
        assert_fair(cnt1, cnt2);
    }

    /// The same over a port set holding the four ports: a set promises that every ready port
    /// is served within one round of the others.
    #[test]
    fn test_select_fairness_port_set() {
        let set = PortSet::new();
        let c3_tx = set.chan();
        let c4_tx = set.chan();
        let c1_tx = set.chan();
        let c2_tx = set.chan();

        for _ in 0..TRIALS + 1 {
            c1_tx.send(1u8).unwrap();
            c2_tx.send(2u8).unwrap();
        }

        let (mut cnt1, mut cnt2) = (0, 0);
        for _ in 0..TRIALS {
            match set.recv() {
                Ok(1) => cnt1 += 1,
                Ok(2) => cnt2 += 1,
                b => panic!("unexpected value {:?} on channel", b),
            }
        }

        drop((c1_tx, c2_tx, c3_tx, c4_tx));
        assert_fair(cnt1, cnt2);
    }

    const NWORK: usize = 23;
    const NITER: usize = if cfg!(miri) { 50 } else { 271828 };

    /// Go's 23 workers all receive from one channel `q`. A port has one receiver, so `q` is one
    /// stream per worker and the producer deals the values round robin; `r`, into which every
    /// worker sends, has the chan `outs[w]` for worker `w` and ends when every worker is done.
    fn multi_consumer<C: Send + 'static>(
        outs: Vec<C>,
        send: fn(&C, i32),
        r: impl Iterator<Item = i32>,
    ) {
        let pn = [2, 3, 7, 11, 13, 17, 19, 23, 27, 31];

        let mut q = Vec::with_capacity(NWORK);
        let mut handles = Vec::with_capacity(NWORK + 1);
        for (w, r) in outs.into_iter().enumerate() {
            let (inp, tx) = stream::<i32>();
            q.push(tx);
            handles.push(thread::spawn(move || {
                for v in &inp {
                    if pn[w % pn.len()] == v {
                        thread::yield_now();
                    }
                    send(&r, v);
                }
            }));
        }

        let expect = Arc::new(Mutex::new(0));
        let producer = thread::spawn({
            let expect = expect.clone();
            move || {
                for i in 0..NITER {
                    let v = pn[i % pn.len()];
                    *expect.lock().unwrap() += v;
                    q[i % NWORK].send(v).unwrap();
                }
            }
        });

        let mut n = 0;
        let mut s = 0;
        for v in r {
            n += 1;
            s += v;
        }

        producer.join().unwrap();
        join_all(handles);
        if n != NITER || s != *expect.lock().unwrap() {
            panic!();
        }
    }

    /// `r` a shared chan.
    #[test]
    fn test_multi_consumer() {
        let (r, r_tx) = shared::<i32>();
        let outs = (0..NWORK).map(|_| r_tx.clone()).collect();
        drop(r_tx);
        multi_consumer(outs, |r, v| r.send(v).unwrap(), r.iter());
    }

    /// `r` a port set, a chan per worker.
    #[test]
    fn test_multi_consumer_port_set() {
        let r = PortSet::<i32>::new();
        let outs = (0..NWORK).map(|_| r.chan()).collect();
        multi_consumer(outs, |r, v| r.send(v).unwrap(), r.iter());
    }
}

// https://github.com/golang/go/blob/HEAD/test/ken/chan.go
mod chan {
    use super::*;

    const MESSAGES_PER_CHANEL: u32 = 76;
    const MESSAGES_RANGE_LEN: u32 = 100;
    const END: i32 = 10000;

    struct Totals {
        /// Total sent messages
        tots: u32,
        /// Total received messages
        totr: u32,
    }

    #[derive(Clone)]
    struct Context {
        tot: Arc<Mutex<Totals>>,
        randx: Arc<Mutex<i32>>,
    }

    fn nrand(n: i32, randx: &Mutex<i32>) -> i32 {
        let mut randx = randx.lock().unwrap();
        *randx += 10007;
        if *randx >= 1000000 {
            *randx -= 1000000
        }
        *randx % n
    }

    fn expect(v: i32, v0: i32) -> i32 {
        if v == v0 {
            return if v % MESSAGES_RANGE_LEN as i32 == MESSAGES_PER_CHANEL as i32 - 1 {
                END
            } else {
                v + 1
            };
        }
        panic!("got {}, expected {}", v, v0 + 1);
    }

    /// A stream and the first value it carries: values run from there for
    /// `MESSAGES_PER_CHANEL`, then the sender closes (drops) it.
    struct Channel {
        port: Port<i32>,
        chan: Chan<i32>,
        first: i32,
    }

    fn mkchan(n: usize, cval: &mut i32) -> Vec<Channel> {
        (0..n)
            .map(|_| {
                *cval += MESSAGES_RANGE_LEN as i32;
                let (port, chan) = stream();
                Channel {
                    port,
                    chan,
                    first: *cval,
                }
            })
            .collect()
    }

    fn send(c: Chan<i32>, mut sv: i32, ctx: Context) {
        loop {
            for _ in 0..=nrand(10, &ctx.randx) {
                thread::yield_now();
            }
            c.send(sv).unwrap();
            ctx.tot.lock().unwrap().tots += 1;
            sv = expect(sv, sv);
            if sv == END {
                break;
            }
        }
    }

    fn recv(c: Port<i32>, mut rv: i32, ctx: Context) {
        loop {
            for _ in (0..nrand(10, &ctx.randx)).rev() {
                thread::yield_now();
            }
            let v = c.recv().unwrap();
            ctx.tot.lock().unwrap().totr += 1;
            rv = expect(rv, v);
            if rv == END {
                break;
            }
        }
    }

    /// Go's `sel` with its receive arms (in test 2 its send arms are on a closed channel, so
    /// they never fire). A port whose values are done leaves the select, as Go's closed
    /// receiving side does.
    fn sel(mut r: Vec<(Port<i32>, i32)>, ctx: Context) {
        while !r.is_empty() {
            for _ in 0..=nrand(5, &ctx.randx) {
                thread::yield_now();
            }
            let targets: Vec<&dyn Selectable> =
                r.iter().map(|(port, _)| port as &dyn Selectable).collect();
            let i = selecti(&targets);
            let v = r[i].0.recv().unwrap();
            ctx.tot.lock().unwrap().totr += 1;
            r[i].1 = expect(r[i].1, v);
            if r[i].1 == END {
                r.remove(i);
            }
        }
    }

    /// Direct send to direct recv
    fn test1(c: Channel, ctx: &Context) -> Vec<JoinHandle<()>> {
        let (sctx, rctx) = (ctx.clone(), ctx.clone());
        vec![
            thread::spawn(move || send(c.chan, c.first, sctx)),
            thread::spawn(move || recv(c.port, c.first, rctx)),
        ]
    }

    /// Direct send to select recv
    fn test2(cval: &mut i32, ctx: &Context) -> Vec<JoinHandle<()>> {
        let mut handles = Vec::new();
        let mut r = Vec::new();
        for c in mkchan(4, cval) {
            let ctx = ctx.clone();
            handles.push(thread::spawn(move || send(c.chan, c.first, ctx)));
            r.push((c.port, c.first));
        }
        let ctx = ctx.clone();
        handles.push(thread::spawn(move || sel(r, ctx)));
        handles
    }

    fn tests(cval: &mut i32, ctx: &Context) {
        let mut handles = Vec::new();
        for c in mkchan(4, cval) {
            handles.extend(test1(c, ctx));
        }
        join_all(handles);

        join_all(test2(cval, ctx));
    }

    /// Go runs its tests 1 to 6 with capacities 0, 1, 10 and 100; here tests 1 and 2 (3 to 6
    /// select over sends), four times over (a stream has no capacity).
    #[test]
    #[cfg_attr(miri, ignore = "Miri is too slow (crossbeam skips it too)")]
    fn main() {
        let ctx = Context {
            tot: Arc::new(Mutex::new(Totals { tots: 0, totr: 0 })),
            randx: Arc::new(Mutex::new(0)),
        };
        let mut cval = 0;

        for _capacity in [0, 1, 10, 100] {
            tests(&mut cval, &ctx);
        }

        #[rustfmt::skip]
        let t = 4 * // buffer sizes
                    (4 + // test 1 channels
                            4) * // test 2 channels
                        MESSAGES_PER_CHANEL; // sends/recvs on a channel

        let tot = ctx.tot.lock().unwrap();
        if tot.tots != t || tot.totr != t {
            panic!("tots={} totr={} sb={}", tot.tots, tot.totr, t);
        }
    }
}
