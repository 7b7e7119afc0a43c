// A payload type declared inside a function body: a module declared in a function cannot
// name the function's items, so the protocol's module cannot see it (module-level types it
// sees: tests/payload_types.rs). The error is at the user's token.

fn main() {
    struct Reading(f64);

    pipes::proto! {
        sensor {
            Idle: send { Sample(Reading) -> Idle }
        }
    }
}
