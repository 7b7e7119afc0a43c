// Generated code is warning-free and fully documented, names nothing through the prelude,
// and reaches the runtime through `$crate`, so it works with the crate renamed.
#![deny(missing_docs, warnings)]
#![no_implicit_prelude]
//! A crate using several protocols under strict lints.

extern crate pipes as renamed_runtime;
extern crate std;

use std::string::String;

renamed_runtime::proto! {
    /// Online banking.
    pub bank {
        Login: send { Login(String, String) -> LoginResponse }
        LoginResponse: recv { LoggedIn -> Connected, Invalid -> Login }
        Connected: send {
            Deposit(u64) -> Connected,
            Withdrawal(u64) -> WithdrawalResponse,
            Logout -> !,
        }
        WithdrawalResponse: recv { Money(u64) -> Connected, InsufficientFunds -> Connected }
    }

    /// A bounded protocol, with a state that has no messages.
    pub pingpong {
        ping: send { ping -> pong, quit -> done }
        pong: recv { pong -> ping }
        done {}
    }
}

renamed_runtime::proto! {
    /// A future.
    pub future_pipe {
        waiting: recv<T: std::marker::Send> { completed(T) -> ! }
    }
}

fn main() {
    let (server, client) = bank::init();
    let _response = client.login(String::new(), String::new());
    ::std::mem::drop(server);
    let (server, client) = pingpong::init();
    let _ = client.quit();
    ::std::mem::drop(server);
    let (server, client) = future_pipe::init::<u8>();
    let _ = server.completed(1);
    let _ = client.recv();
}
