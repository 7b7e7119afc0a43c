//! A #[wire] protocol compiles under strict lints, with no implicit prelude in its module, and
//! its `Wire` type opens typed sessions.

#![deny(missing_docs, warnings, unused_results, unreachable_pub)]

use pipes::net::{Node, WireProtocol};

pipes::proto! {
    /// Online banking.
    #[wire]
    pub bank {
        Login: send { Login(String, String) -> LoginResponse }
        LoginResponse: recv { LoggedIn -> Connected, Invalid -> Login }
        Connected: send {
            Deposit(u64) -> Connected,
            Withdrawal(u64) -> WithdrawalResponse,
            Logout -> Done,
        }
        WithdrawalResponse: recv { Money(u64) -> Connected, InsufficientFunds -> Connected }
        Done {}
    }
}

pipes::proto! {
    /// Nothing ever crosses.
    #[wire]
    pub nothing { Done {} }
}

/// Opens a session of `bank` and hands back the client's start endpoint.
pub fn open(node: &Node, addr: std::net::SocketAddr) -> Option<bank::client::Login> {
    node.client::<bank::Wire>(addr).ok()
}

fn main() {
    assert_eq!(<bank::Wire as WireProtocol>::PROTOCOL.name, "bank");
    // `Deposit -> Connected` sends again and again without an answer: credit flow control.
    assert!(<bank::Wire as WireProtocol>::PROTOCOL.unbounded);
    assert_eq!(<bank::Wire as WireProtocol>::PROTOCOL.fingerprint.len(), 16);
    assert_eq!(<nothing::Wire as WireProtocol>::PROTOCOL.name, "nothing");
}
