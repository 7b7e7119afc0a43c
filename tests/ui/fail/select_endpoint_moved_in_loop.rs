// A loop over `select!` whose arm that ends the protocol does not put its endpoint back: the
// move is reported at the endpoint's own token in the select, beside the arm that reinitializes
// it, not at the whole invocation.

pipes::proto! {
    hello { Start: send { Hello -> Start, Bye -> ! } }
}
use hello::Start::{Bye, Hello};

fn main() {
    let (mut a, _a) = hello::init();
    for _ in 0..2 {
        pipes::select! {
            a => {
                Hello -> next { a = next; },
                Bye -> ! {},
            },
        }
    }
}
