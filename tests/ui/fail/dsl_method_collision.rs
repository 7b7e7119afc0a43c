// A protocol mistake is a compile error at the user's own tokens: method collision

pipes::proto! {
    simple_proto {
        StartState: send {
            SayHello -> StartState,
            say_hello -> StartState,
            HTTPGet(String) -> StartState,
            HttpGet(String) -> !,
        }
    }
}

fn main() {}
