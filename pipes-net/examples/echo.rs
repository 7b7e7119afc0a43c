//! Two processes, one session: a server that echoes every line, and a client that sends some.
//! Untyped for now (state and message indices by hand); generated pumps will hide them.
//!
//! ```sh
//! cargo run -p pipes-net --example echo -- serve 127.0.0.1:7700
//! cargo run -p pipes-net --example echo -- send 127.0.0.1:7700 hello world
//! ```

use std::error::Error;
use std::net::SocketAddr;

use pipes_net::{Node, Protocol, Role, SessionError};

/// Written from the client's side: in state 0 it sends `Line(String)` (message 0) or ends;
/// in state 1 the server answers with `Echo(String)` (message 0).
const ECHO: Protocol = Protocol::bounded(
    "echo",
    b"echo: 0 send Line(String) -> 1; 1 recv Echo(String) -> 0",
);

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [command, addr] if command == "serve" => serve(addr.parse()?),
        [command, addr, words @ ..] if command == "send" => send(addr.parse()?, words),
        _ => {
            eprintln!("usage: echo serve ADDR | echo send ADDR WORDS...");
            std::process::exit(2);
        }
    }
}

fn serve(addr: SocketAddr) -> Result<(), Box<dyn Error>> {
    let node = Node::builder().listen(addr).start()?;
    let mut acceptor = node.serve(ECHO, Role::Server);
    println!(
        "serving `echo` on {}",
        node.local_addr().expect("it listens")
    );
    while let Some(mut session) = acceptor.accept() {
        std::thread::spawn(move || {
            loop {
                match session.recv() {
                    Ok(message) if (message.state, message.msg) == (0, 0) => {
                        let line: String = match message.decode() {
                            Ok(line) => line,
                            Err(error) => return session.violation(&error.to_string()),
                        };
                        if session.send(1, 0, &line).is_err() {
                            return;
                        }
                    }
                    Ok(message) => {
                        let what = format!("no message {} in state {}", message.msg, message.state);
                        return session.violation(&what);
                    }
                    Err(SessionError::PeerClosed) => return,
                    Err(error) => return eprintln!("session {}: {error}", session.id()),
                }
            }
        });
    }
    Ok(())
}

fn send(addr: SocketAddr, words: &[String]) -> Result<(), Box<dyn Error>> {
    let node = Node::builder().start()?;
    let mut session = node.open(addr, ECHO, Role::Client)?;
    for word in words {
        session.send(0, 0, word)?;
        let echo = session.recv()?;
        println!("{}", echo.decode::<String>()?);
    }
    session.close();
    Ok(())
}
