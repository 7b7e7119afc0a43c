// Delegation across the wire is refused: an endpoint of a protocol (the same one, or another
// in the same invocation) cannot be a payload of a #[wire] protocol.

pipes::proto! {
    #[wire]
    pub account {
        Open: send { Balance -> Answer }
        Answer: recv { Amount(u64) -> ! }
    }

    #[wire]
    pub bank {
        Login: send {
            Login(String) -> Connected,
        }
        Connected: send {
            Hand(account::client::Open) -> Connected,
            Again(Box<bank::client::Login>) -> !,
        }
    }
}

fn main() {}
