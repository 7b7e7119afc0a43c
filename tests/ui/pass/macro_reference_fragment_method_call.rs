// An `$e:expr` fragment given `&[1, 2, 3]` stays one operand, as rustc keeps it: `$e.len()` is
// `(&[1, 2, 3]).len()`, 3. proto!'s `needs_grouping` reads a multi-token fragment as a type
// first, and `&[1, 2, 3]` parses as a reference type, so it is printed bare: `&[1, 2, 3].len()`
// is `&3`, and the valid protocol fails with "expected `usize`, found `&usize`".
#![deny(warnings)]

macro_rules! sized_by {
    ($e:expr) => {
        pipes::proto! {
            pub by_ref {
                Start: send { Go([u8; $e.len()]) -> ! }
            }
        }
    };
}

sized_by!(&[1u8, 2, 3]);

// The same fragment in an ordinary item: rustc reads it as one operand.
macro_rules! plain {
    ($e:expr) => {
        type Plain = [u8; $e.len()];
    };
}

plain!(&[1u8, 2, 3]);

fn main() {
    let _: Plain = [0; 3];
    let (_server, client) = by_ref::init();
    client.go([0; 3]).unwrap();
}
