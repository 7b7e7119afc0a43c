//! Rumpsteak's async session-type examples (ring, ring with choice, adder, double buffering),
//! written with pipes' binary protocols and `recv_async`, on tokio's current-thread runtime.
//! Each multiparty protocol becomes one binary protocol per pair of roles that talk; every run
//! checks its result. Sends never block, so a task only ever awaits a receive.
//!
//! Run: `cargo run --release --example async_rumpsteak [-- ROUNDS]` (default 1000).

pipes::proto! {
    // One link of a ring: a value to add, or the end.
    pub link {
        Open: send { Value(u64) -> Open, Stop -> ! }
    }
}

pipes::proto! {
    // One link of the ring with choice: the left role chooses, the right one follows.
    pub choice {
        Open: send { Add(i64) -> Open, Sub(i64) -> Open, Stop -> ! }
    }
}

pipes::proto! {
    // The adder: the client sends two numbers and gets their sum, until it says bye.
    pub adder {
        First: send { Add(i64) -> Second, Bye -> ! }
        Second: send { Add(i64) -> Sum }
        Sum: recv { Sum(i64) -> First }
    }
}

pipes::proto! {
    // Double buffering: the receiving side says it is ready for a buffer, then gets one.
    pub buffer {
        Idle: send { Ready -> Full, Done -> ! }
        Full: recv { Copy(Vec<u64>) -> Idle, End -> ! }
    }
}

/// Ring: roles A, B, C pass a value round `rounds` times, each adding its own number (1, 2,
/// 3). Returns what A ends with: `6 * rounds`.
pub async fn ring(rounds: u64) -> u64 {
    let (b_from_a, a_to_b) = link::init();
    let (c_from_b, b_to_c) = link::init();
    let (a_from_c, c_to_a) = link::init();
    // B and C add their number and pass the value on, until told to stop.
    let relay = |mut from: link::server::Open, mut to: link::client::Open, add: u64| async move {
        loop {
            match from.recv_async().await.unwrap() {
                link::Open::Value(value, next) => {
                    from = next;
                    to = to.value(value + add).unwrap();
                }
                link::Open::Stop => return to.stop().unwrap(),
            }
        }
    };
    let b = tokio::spawn(relay(b_from_a, b_to_c, 2));
    let c = tokio::spawn(relay(c_from_b, c_to_a, 3));
    let (mut to_b, mut from_c, mut value) = (a_to_b, a_from_c, 0);
    for _ in 0..rounds {
        to_b = to_b.value(value + 1).unwrap();
        let link::Open::Value(back, next) = from_c.recv_async().await.unwrap() else {
            unreachable!("C stops only after A does");
        };
        (from_c, value) = (next, back);
    }
    to_b.stop().unwrap();
    assert!(matches!(from_c.recv_async().await, Ok(link::Open::Stop)));
    b.await.unwrap();
    c.await.unwrap();
    value
}

/// Ring with choice: A chooses, on each round, to add or subtract `round` and tells B; B
/// applies the same choice with twice the amount and tells C; C applies it with three times
/// and tells A. Returns A's total: the sum of `±6 * round`, adding on even rounds.
pub async fn ring_choice(rounds: i64) -> i64 {
    let (b_from_a, a_to_b) = choice::init();
    let (c_from_b, b_to_c) = choice::init();
    let (a_from_c, c_to_a) = choice::init();
    let follow = |mut from: choice::server::Open, mut to: choice::client::Open, factor: i64| async move {
        loop {
            match from.recv_async().await.unwrap() {
                choice::Open::Add(amount, next) => {
                    from = next;
                    to = to.add(amount / (factor - 1) * factor).unwrap();
                }
                choice::Open::Sub(amount, next) => {
                    from = next;
                    to = to.sub(amount / (factor - 1) * factor).unwrap();
                }
                choice::Open::Stop => return to.stop().unwrap(),
            }
        }
    };
    let b = tokio::spawn(follow(b_from_a, b_to_c, 2));
    let c = tokio::spawn(follow(c_from_b, c_to_a, 3));
    let (mut to_b, mut from_c, mut total) = (a_to_b, a_from_c, 0);
    for round in 1..=rounds {
        to_b = if round % 2 == 0 {
            to_b.add(round).unwrap()
        } else {
            to_b.sub(round).unwrap()
        };
        // B forwards 2 * round and C 3 * round; A counts its own, B's and C's shares.
        (from_c, total) = match from_c.recv_async().await.unwrap() {
            choice::Open::Add(amount, next) => (next, total + round + amount / 3 * 2 + amount),
            choice::Open::Sub(amount, next) => (next, total - round - amount / 3 * 2 - amount),
            choice::Open::Stop => unreachable!("C stops only after A does"),
        };
    }
    to_b.stop().unwrap();
    b.await.unwrap();
    c.await.unwrap();
    total
}

/// Adder: a client task sends `rounds` pairs (i, i + 1) to a server task and sums the sums.
/// Returns that total: the sum of `2 * i + 1`, which is `rounds * rounds`.
pub async fn adder(rounds: i64) -> i64 {
    let (server, client) = adder::init();
    let server = tokio::spawn(async move {
        let mut server = server;
        loop {
            match server.recv_async().await.unwrap() {
                adder::First::Add(x, second) => {
                    let adder::Second::Add(y, sum) = second.recv_async().await.unwrap();
                    server = sum.sum(x + y).unwrap();
                }
                adder::First::Bye => return,
            }
        }
    });
    let (mut client, mut total) = (client, 0);
    for i in 0..rounds {
        let adder::Sum::Sum(sum, next) = client
            .add(i)
            .unwrap()
            .add(i + 1)
            .unwrap()
            .recv_async()
            .await
            .unwrap();
        (client, total) = (next, total + sum);
    }
    client.bye().unwrap();
    server.await.unwrap();
    total
}

/// Double buffering: a source makes `buffers` buffers of `size` numbers (counting up from 0);
/// a kernel fetches the next one from the source while its sink still works on the last, and
/// hands each on; the sink sums everything. Returns the sum: `n * (n - 1) / 2` for
/// `n = buffers * size`.
pub async fn double_buffering(buffers: u64, size: u64) -> u64 {
    // The kernel is the client of both: it asks the source (`Ready`) and the sink asks it.
    let (source, kernel_from_source) = buffer::init();
    let (kernel_to_sink, sink) = buffer::init();
    let source = tokio::spawn(async move {
        let (mut source, mut next_value) = (source, 0);
        loop {
            match source.recv_async().await.unwrap() {
                buffer::Idle::Ready(full) => {
                    if next_value == buffers * size {
                        return full.end().unwrap();
                    }
                    let data: Vec<u64> = (next_value..next_value + size).collect();
                    next_value += size;
                    source = full.copy(data).unwrap();
                }
                buffer::Idle::Done => return,
            }
        }
    });
    let kernel = tokio::spawn(async move {
        // Ask for the first buffer at once, and for the next one before handing this one on:
        // two buffers in flight, so the source fills one while the sink drains the other.
        let mut pending = kernel_from_source.ready().unwrap();
        let mut to_sink = kernel_to_sink;
        loop {
            match pending.recv_async().await.unwrap() {
                buffer::Full::Copy(data, idle) => {
                    pending = idle.ready().unwrap();
                    match to_sink.recv_async().await.unwrap() {
                        buffer::Idle::Ready(full) => to_sink = full.copy(data).unwrap(),
                        buffer::Idle::Done => unreachable!("the sink reads to the end"),
                    }
                }
                buffer::Full::End => {
                    match to_sink.recv_async().await.unwrap() {
                        buffer::Idle::Ready(full) => full.end().unwrap(),
                        buffer::Idle::Done => unreachable!("the sink reads to the end"),
                    }
                    return;
                }
            }
        }
    });
    let (mut sink, mut sum) = (sink, 0);
    // `End` (the last buffer was handed on) ends the loop.
    while let buffer::Full::Copy(data, idle) = sink.ready().unwrap().recv_async().await.unwrap() {
        sum += data.iter().sum::<u64>();
        sink = idle;
    }
    source.await.unwrap();
    kernel.await.unwrap();
    sum
}

fn main() {
    let rounds: u64 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(1000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let signed = rounds as i64;
        let start = std::time::Instant::now();
        println!("ring: {}", ring(rounds).await);
        println!("ring with choice: {}", ring_choice(signed).await);
        println!("adder: {}", adder(signed).await);
        println!("double buffering: {}", double_buffering(rounds, 16).await);
        println!("all four in {:?}", start.elapsed());
    });
}
