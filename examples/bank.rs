//! The bank of the design document (DESIGN.md section 2), after the 2012 pipes tutorial (seed
//! 004): a server thread holds the accounts, and each client session follows the `bank`
//! protocol. The story: a failed login, a retry, deposits, a withdrawal paid and one refused;
//! then a second customer. The type checker, not a runtime check, makes sure nobody deposits
//! before logging in or withdraws twice without reading the answer.
//!
//! Sessions reach the server as delegated endpoints: the server's end of each session travels
//! over a stream of `bank::server::Login`, so one thread serves every customer in turn.
//!
//! Run: `cargo run --release --example bank [-- SESSIONS]`: after the story, SESSIONS more
//! sessions (default 10000) of login, deposit, withdrawal and logout are timed.

use std::collections::BTreeMap;
use std::thread;
use std::time::Instant;

use pipes::{Chan, Port, stream};

pipes::proto! {
    /// Online banking, written from the client's side.
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

/// One account: its password and its balance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The password a login must match.
    pub password: String,
    /// The balance in whole units.
    pub balance: u64,
}

/// The accounts the server holds, by user name.
pub type Accounts = BTreeMap<String, Account>;

/// The bank the story starts with: alice has 100, bob has nothing.
pub fn opening_accounts() -> Accounts {
    let mut accounts = Accounts::new();
    for (user, password, balance) in [("alice", "secret", 100), ("bob", "hunter2", 0)] {
        let account = Account {
            password: password.into(),
            balance,
        };
        accounts.insert(user.into(), account);
    }
    accounts
}

/// Starts the server thread. Each session's server end arrives on the returned chan; the
/// thread serves them one after another and, once the chan is dropped, hands the accounts back.
pub fn start_server(
    accounts: Accounts,
) -> (Chan<bank::server::Login>, thread::JoinHandle<Accounts>) {
    let (sessions, connect) = stream::<bank::server::Login>();
    let server = thread::spawn(move || serve(accounts, sessions));
    (connect, server)
}

/// The server loop: one session at a time, until no more can arrive.
fn serve(mut accounts: Accounts, sessions: Port<bank::server::Login>) -> Accounts {
    for session in sessions {
        // A client that vanishes mid-session ends only its own session, never the bank.
        let _ = serve_session(&mut accounts, session);
    }
    accounts
}

/// Serves one session: logins until one succeeds, then deposits and withdrawals until logout.
fn serve_session(
    accounts: &mut Accounts,
    mut login: bank::server::Login,
) -> Result<(), pipes::RecvError> {
    let (user, mut connected) = loop {
        let bank::Login::Login(user, password, response) = login.recv()?;
        match accounts.get(&user) {
            Some(account) if account.password == password => {
                // A send fails only if the client is gone; then the session is over anyway.
                match response.logged_in() {
                    Ok(connected) => break (user, connected),
                    Err(_) => return Ok(()),
                }
            }
            _ => match response.invalid() {
                Ok(next) => login = next,
                Err(_) => return Ok(()),
            },
        }
    };
    let account = accounts
        .get_mut(&user)
        .expect("logged in to an existing account");
    loop {
        let next = match connected.recv()? {
            bank::Connected::Deposit(amount, next) => {
                account.balance += amount;
                Some(next)
            }
            bank::Connected::Withdrawal(amount, response) if amount <= account.balance => {
                account.balance -= amount;
                match response.money(amount) {
                    Ok(next) => Some(next),
                    // The client left before the money reached it: the failed send hands the
                    // amount back, and it goes back into the account.
                    Err(unpaid) => {
                        account.balance += unpaid.into_inner();
                        None
                    }
                }
            }
            bank::Connected::Withdrawal(_, response) => response.insufficient_funds().ok(),
            bank::Connected::Logout => return Ok(()),
        };
        // A failed answer means the client is gone: the session is over.
        match next {
            Some(next) => connected = next,
            None => return Ok(()),
        }
    }
}

/// Opens a session with the server: makes the pair and delegates the server's end to it.
fn connect(server: &Chan<bank::server::Login>) -> bank::client::Login {
    let (server_end, client_end) = bank::init();
    server.send(server_end).expect("the bank is running");
    client_end
}

/// Logs in, or hands the endpoint back to try again if the bank says the password is wrong.
fn login(
    client: bank::client::Login,
    user: &str,
    password: &str,
) -> Result<bank::client::Connected, bank::client::Login> {
    let response = client
        .login(user.into(), password.into())
        .expect("the bank is running");
    match response.recv().expect("the bank answers a login") {
        bank::LoginResponse::LoggedIn(connected) => Ok(connected),
        bank::LoginResponse::Invalid(retry) => Err(retry),
    }
}

/// Asks for money: `Ok` with the amount paid, or `Err` if the bank refused; either way the
/// session goes on.
fn withdraw(
    connected: bank::client::Connected,
    amount: u64,
) -> (Result<u64, u64>, bank::client::Connected) {
    let response = connected.withdrawal(amount).expect("the bank is running");
    match response.recv().expect("the bank answers a withdrawal") {
        bank::WithdrawalResponse::Money(paid, connected) => (Ok(paid), connected),
        bank::WithdrawalResponse::InsufficientFunds(connected) => (Err(amount), connected),
    }
}

/// The scripted story. Returns what happened, one line per step, and the accounts afterwards.
pub fn story() -> (Vec<String>, Accounts) {
    let (server, bank_thread) = start_server(opening_accounts());
    let mut log = Vec::new();

    // alice mistypes her password; the protocol hands her a fresh `Login` to retry with.
    let client = connect(&server);
    let client = match login(client, "alice", "sekret") {
        Ok(_) => panic!("a wrong password was accepted"),
        Err(retry) => {
            log.push("alice: login with a wrong password refused".to_string());
            retry
        }
    };
    let connected = login(client, "alice", "secret").expect("the right password is accepted");
    log.push("alice: logged in".to_string());
    let connected = connected.deposit(50).unwrap().deposit(25).unwrap();
    log.push("alice: deposited 50 and 25".to_string());
    let (paid, connected) = withdraw(connected, 120);
    log.push(format!("alice: withdrawal of 120 -> {paid:?}"));
    let (refused, connected) = withdraw(connected, 100);
    log.push(format!("alice: withdrawal of 100 -> {refused:?}"));
    connected.logout().unwrap();
    log.push("alice: logged out".to_string());

    // bob's session starts only after alice's ends: the server serves sessions in turn, and
    // sees alice's balance as she left it.
    let connected = login(connect(&server), "bob", "hunter2").expect("bob's password is accepted");
    let (refused, connected) = withdraw(connected.deposit(10).unwrap(), 11);
    log.push(format!(
        "bob: deposited 10, withdrawal of 11 -> {refused:?}"
    ));
    connected.logout().unwrap();

    // An unknown user is refused like a wrong password; dropping the endpoint ends the session.
    match login(connect(&server), "mallory", "guess") {
        Ok(_) => panic!("an unknown user logged in"),
        Err(retry) => drop(retry),
    }
    log.push("mallory: unknown user refused".to_string());

    drop(server);
    (log, bank_thread.join().expect("the bank thread"))
}

/// Runs `sessions` sessions of login, deposit 7, withdrawal 7, logout for alice. Returns her
/// final balance, which must be where it started.
pub fn sessions(sessions: u64) -> u64 {
    let (server, bank_thread) = start_server(opening_accounts());
    for _ in 0..sessions {
        let connected =
            login(connect(&server), "alice", "secret").expect("alice's password is accepted");
        let (paid, connected) = withdraw(connected.deposit(7).unwrap(), 7);
        assert_eq!(paid, Ok(7));
        connected.logout().unwrap();
    }
    drop(server);
    bank_thread.join().expect("the bank thread")["alice"].balance
}

fn main() {
    let count: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);

    let (log, accounts) = story();
    for line in &log {
        println!("{line}");
    }
    for (user, account) in &accounts {
        println!("balance of {user}: {}", account.balance);
    }

    let start = Instant::now();
    let balance = sessions(count);
    let elapsed = start.elapsed();
    println!(
        "{count} sessions (login, deposit, withdrawal, logout) in {:.3} s, {:.1} µs each; alice still has {balance}",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / count.max(1) as f64
    );
}
