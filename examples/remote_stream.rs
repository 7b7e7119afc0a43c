//! A stream of numbers between two processes, with flow control: an unbounded `#[wire]`
//! protocol whose sender waits for room before each send (`pipes::net::wait_writable`), so
//! however slowly the receiver reads, the sender keeps at most about two credit windows of
//! numbers in memory; and the receiver's node, whose pump receives only as fast as its user
//! reads, no more.
//!
//! Run the receiver, then a sender (in another terminal):
//!
//! ```sh
//! cargo run --release --features net --example remote_stream -- serve 127.0.0.1:7879
//! cargo run --release --features net --example remote_stream -- send 127.0.0.1:7879 1000000
//! ```
//!
//! The receiver prints the address it listens on (port 0 picks a free one) and takes every
//! session on a thread of its own: it checks that the numbers arrive in order and answers with
//! their count and sum, which the sender prints.

use std::net::SocketAddr;

use pipes::net::Node;

pipes::proto! {
    /// Numbers, then their count and sum back.
    #[wire]
    pub numbers {
        Stream: send {
            Number(u64) -> Stream,
            End -> Tally,
        }
        Tally: recv {
            Count(u64, u64) -> !,
        }
    }
}

/// Takes one stream; answers with the count and sum of its numbers, or says what went wrong.
fn take(mut stream: numbers::server::Stream) -> Result<(), String> {
    let (mut count, mut sum) = (0u64, 0u64);
    loop {
        match stream.recv().map_err(|error| error.to_string())? {
            numbers::Stream::Number(n, next) => {
                if n != count {
                    return Err(format!("number {n} arrived where {count} was due"));
                }
                count += 1;
                sum += n;
                stream = next;
            }
            numbers::Stream::End(tally) => {
                return tally.count(count, sum).map_err(|error| error.to_string());
            }
        }
    }
}

/// Listens on `addr` and takes every stream, each on a thread of its own, until the process is
/// stopped.
fn serve(addr: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    let node = Node::builder().listen(addr).start()?;
    // The address first, on a line of its own: the end-to-end test reads the port from it.
    println!("listening on {}", node.local_addr().ok_or("no address")?);
    for stream in node.incoming::<numbers::Wire>() {
        std::thread::spawn(move || {
            if let Err(error) = take(stream) {
                eprintln!("remote_stream: {error}");
            }
        });
    }
    Ok(())
}

/// Sends `0..n` to the receiver at `addr`, waiting for room before each number; returns the
/// count and sum the receiver answers with.
fn send(addr: SocketAddr, n: u64) -> Result<(u64, u64), Box<dyn std::error::Error>> {
    let node = Node::builder().start()?;
    let mut stream = node.client::<numbers::Wire>(addr)?;
    for number in 0..n {
        pipes::net::wait_writable(&stream);
        stream = stream.number(number)?;
    }
    let numbers::Tally::Count(count, sum) = stream.end()?.recv()?;
    Ok((count, sum))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: remote_stream serve ADDR | remote_stream send ADDR N";
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["serve", addr] => serve(addr.parse()?),
        ["send", addr, n] => {
            let n: u64 = n.parse()?;
            let (count, sum) = send(addr.parse()?, n)?;
            println!("sent {n} numbers; the receiver took {count} in order, sum {sum}");
            Ok(())
        }
        _ => Err(usage.into()),
    }
}
