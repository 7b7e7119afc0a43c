// A message's payload has the protocol's type.

pipes::proto! {
    bank {
        Connected: send { Deposit(u64) -> Connected }
    }
}

fn main() {
    let (_server, client) = bank::init();
    let _ = client.deposit("one hundred");
}
