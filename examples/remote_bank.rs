//! The bank of the design document, across processes: the same `bank` protocol as
//! `examples/bank.rs`, marked `#[wire]`, with the bank in one process and its customers in
//! others. Each side holds the very endpoint types a local session has (`bank::server::Login`,
//! `bank::client::Login`); a pump on each node moves the messages over TCP.
//!
//! Run the bank, then a customer (in another terminal):
//!
//! ```sh
//! cargo run --features net --example remote_bank -- serve 127.0.0.1:7878
//! cargo run --features net --example remote_bank -- client 127.0.0.1:7878 ann
//! ```
//!
//! The bank prints the address it listens on (port 0 picks a free one) and serves every
//! session on a thread of its own; accounts last as long as the bank. A customer logs in with a
//! wrong password first, then with the right one (`secret`), deposits 100, and asks for 30, 80
//! and 70: the bank pays the first and the last and refuses the second.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use pipes::net::Node;

pipes::proto! {
    /// Online banking, written from the client's side.
    #[wire]
    pub bank {
        Login: send {
            Login(String, String) -> LoginResponse,
        }
        LoginResponse: recv {
            LoggedIn -> Connected,
            Invalid -> Login,
        }
        Connected: send {
            Deposit(u64) -> Connected,
            Withdrawal(u64) -> WithdrawalResponse,
            Logout -> !,
        }
        WithdrawalResponse: recv {
            Money(u64) -> Connected,
            InsufficientFunds -> Connected,
        }
    }
}

/// Every customer's password.
const PASSWORD: &str = "secret";

/// The balances, by customer.
type Accounts = Arc<Mutex<HashMap<String, u64>>>;

/// Serves one session; returns when the customer logs out or is gone.
fn serve_session(mut login: bank::server::Login, accounts: &Accounts) {
    let (user, mut connected) = loop {
        let Ok(bank::Login::Login(user, password, response)) = login.recv() else {
            return;
        };
        if password == PASSWORD {
            let Ok(connected) = response.logged_in() else {
                return;
            };
            break (user, connected);
        }
        match response.invalid() {
            Ok(again) => login = again,
            Err(_) => return,
        }
    };
    let account = |f: &mut dyn FnMut(&mut u64)| {
        let mut accounts = accounts.lock().unwrap();
        f(accounts.entry(user.clone()).or_default());
    };
    loop {
        connected = match connected.recv() {
            Ok(bank::Connected::Deposit(amount, next)) => {
                account(&mut |balance| *balance += amount);
                next
            }
            Ok(bank::Connected::Withdrawal(amount, response)) => {
                let mut paid = false;
                account(&mut |balance| {
                    paid = *balance >= amount;
                    if paid {
                        *balance -= amount;
                    }
                });
                let answer = if paid {
                    response.money(amount).map_err(drop)
                } else {
                    response.insufficient_funds().map_err(drop)
                };
                match answer {
                    Ok(next) => next,
                    Err(()) => return,
                }
            }
            Ok(bank::Connected::Logout) | Err(_) => return,
        };
    }
}

/// Listens on `addr` and serves every session, each on a thread of its own, until the
/// process is stopped.
fn serve(addr: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    let node = Node::builder().listen(addr).start()?;
    // The address first, on a line of its own: the end-to-end test reads the port from it.
    println!("listening on {}", node.local_addr().ok_or("no address")?);
    let accounts = Accounts::default();
    for login in node.incoming::<bank::Wire>() {
        let accounts = accounts.clone();
        std::thread::spawn(move || serve_session(login, &accounts));
    }
    Ok(())
}

/// One customer's visit, as lines of what happened.
pub fn visit(
    login: bank::client::Login,
    user: &str,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut log = Vec::new();
    let response = login.login(user.into(), "guess".into())?;
    let bank::LoginResponse::Invalid(login) = response.recv()? else {
        return Err("a wrong password was let in".into());
    };
    log.push(format!("{user}: wrong password refused"));
    let response = login.login(user.into(), PASSWORD.into())?;
    let bank::LoginResponse::LoggedIn(connected) = response.recv()? else {
        return Err("the right password was refused".into());
    };
    log.push(format!("{user}: logged in"));
    let mut connected = connected.deposit(100)?;
    log.push(format!("{user}: deposited 100"));
    for amount in [30, 80, 70] {
        connected = match connected.withdrawal(amount)?.recv()? {
            bank::WithdrawalResponse::Money(money, next) => {
                log.push(format!("{user}: withdrew {money}"));
                next
            }
            bank::WithdrawalResponse::InsufficientFunds(next) => {
                log.push(format!("{user}: {amount} refused, insufficient funds"));
                next
            }
        };
    }
    connected.logout()?;
    log.push(format!("{user}: logged out"));
    Ok(log)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: remote_bank serve ADDR | remote_bank client ADDR [USER]";
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["serve", addr] => serve(addr.parse()?),
        ["client", addr, rest @ ..] => {
            let user = rest.first().copied().unwrap_or("ann");
            let node = Node::builder().start()?;
            let login = node.client::<bank::Wire>(addr.parse()?)?;
            for line in visit(login, user)? {
                println!("{line}");
            }
            Ok(())
        }
        _ => Err(usage.into()),
    }
}
