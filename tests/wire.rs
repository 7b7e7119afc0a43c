//! Remote sessions of `#[wire]` protocols (the `net` feature): the endpoints `init()` hands out,
//! with their peer in another node, over `tokio::io::duplex` and loopback TCP.

#![cfg(feature = "net")]

#[path = "../pipes-net/tests/common/mod.rs"]
mod common;

use common::{pair, quick, within};

pipes::proto! {
    /// Online banking, across the wire.
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

/// The bank's side of one session: a password of "pw", and a balance.
fn serve_bank(mut login: bank::server::Login) {
    let mut balance = 0u64;
    let mut connected = loop {
        let bank::Login::Login(_user, password, response) = login.recv().unwrap();
        if password == "pw" {
            break response.logged_in().unwrap();
        }
        login = response.invalid().unwrap();
    };
    loop {
        match connected.recv().unwrap() {
            bank::Connected::Deposit(amount, next) => {
                balance += amount;
                connected = next;
            }
            bank::Connected::Withdrawal(amount, response) if amount <= balance => {
                balance -= amount;
                connected = response.money(amount).unwrap();
            }
            bank::Connected::Withdrawal(_, response) => {
                connected = response.insufficient_funds().unwrap();
            }
            bank::Connected::Logout => return,
        }
    }
}

/// The customer's side: a wrong password, then deposits and withdrawals.
fn use_bank(login: bank::client::Login) -> Vec<Option<u64>> {
    let response = login.login("ann".into(), "wrong".into()).unwrap();
    let bank::LoginResponse::Invalid(login) = response.recv().unwrap() else {
        panic!("a wrong password logged in")
    };
    let response = login.login("ann".into(), "pw".into()).unwrap();
    let bank::LoginResponse::LoggedIn(mut connected) = response.recv().unwrap() else {
        panic!("the right password was refused")
    };
    let mut got = Vec::new();
    connected = connected.deposit(100).unwrap();
    for amount in [30, 80, 70] {
        let response = connected.withdrawal(amount).unwrap();
        connected = match response.recv().unwrap() {
            bank::WithdrawalResponse::Money(money, next) => {
                got.push(Some(money));
                next
            }
            bank::WithdrawalResponse::InsufficientFunds(next) => {
                got.push(None);
                next
            }
        };
    }
    connected.logout().unwrap();
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bank_round_trip_over_duplex() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    let server = tokio::task::spawn_blocking(move || {
        let login = incoming.accept().unwrap();
        serve_bank(login)
    });
    let login = within(5, conn.client_async::<bank::Wire>()).await.unwrap();
    let got = within(10, tokio::task::spawn_blocking(move || use_bank(login)))
        .await
        .unwrap();
    assert_eq!(got, [Some(30), None, Some(70)]);
    within(5, server).await.unwrap();
}
