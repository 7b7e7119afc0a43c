//! `select!` waits on an endpoint and then receives from it: an endpoint written as any
//! expression but a place (`ports.remove(0)`) must be evaluated once, or the endpoint received
//! from is not the one waited on. Found by an adversarial review (review 4): the first test
//! received from the wrong endpoint and dropped the ready one with its message; the second
//! panicked inside the expansion.

pipes::proto! {
    pub note { Start: send { Text(String) -> ! } }
}

use note::Start::Text;

/// Two ready endpoints in a `Vec`; `select!` on `ports.remove(0)`. It waits on the first
/// (ready), then receives from the *second*, and the first, with its message, is dropped.
#[test]
fn select_receives_from_the_endpoint_it_waited_on() {
    let (first, first_client) = note::init();
    let (second, second_client) = note::init();
    first_client.text("first".to_string()).unwrap();
    second_client.text("second".to_string()).unwrap();
    let mut ports = vec![first, second];
    let got = pipes::select! {
        ports.remove(0) => {
            Text(text) -> ! { text },
        },
    };
    assert_eq!(
        got, "first",
        "select! received from another endpoint than it waited on"
    );
    assert_eq!(
        ports.len(),
        1,
        "select! took two endpoints out of the Vec for one message"
    );
}

/// With one endpoint in the `Vec`, the second evaluation panics inside the expansion
/// (`Vec::remove` out of bounds) although the endpoint was ready.
#[test]
fn select_on_a_moved_out_endpoint_does_not_panic() {
    let (only, client) = note::init();
    client.text("only".to_string()).unwrap();
    let mut ports = vec![only];
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pipes::select! {
            ports.remove(0) => {
                Text(text) -> ! { text },
            },
        }
    }));
    assert_eq!(got.ok().as_deref(), Some("only"));
}
