// A payload of a #[wire] protocol that serde cannot serialize: an error at that payload, in
// protocol words.

pub struct Receipt {
    pub amount: u64,
}

pipes::proto! {
    #[wire]
    pub bank {
        Login: send { Login(String, String) -> Connected }
        Connected: send {
            Deposit(u64) -> Connected,
            Withdrawal(u64, Receipt) -> Connected,
            Logout -> !,
        }
    }
}

fn main() {}
