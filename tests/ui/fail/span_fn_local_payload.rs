// A payload type declared inside a function body: the protocol's module cannot see it.

fn main() {
    struct Reading(f64);

    pipes::proto! {
        sensor {
            Idle: send { Sample(Reading) -> Idle }
        }
    }
}
