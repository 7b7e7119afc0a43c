// A protocol mistake is a compile error at the user's own tokens: endpoint method collision

pipes::proto! {
    p {
        Start: send {
            Recv -> Start,
            TryRecv -> Start,
            RecvTimeout(u64) -> !,
        }
    }
}

fn main() {}
