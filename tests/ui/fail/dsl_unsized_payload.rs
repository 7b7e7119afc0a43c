// A protocol mistake is a compile error at the user's own tokens: a payload type with no size
// known at compile time (a message holds its payloads by value), every one at once.

pipes::proto! {
    p {
        Start: send {
            Text(str) -> Start,
            Bytes(u8, [u8]) -> Start,
            Call(dyn Fn() + Send) -> Start,
            Fine(Box<str>, &'static [u8], Box<dyn Fn() + Send>) -> !,
        }
    }
}

fn main() {}
