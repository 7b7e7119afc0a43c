// A `$b:block` fragment as an array length (`[u8; $b]`): rustc says nothing of it in an
// ordinary item, but proto! prints the fragment's invisible group as bare braces, with the
// user's spans, and `unused_braces` ("unnecessary braces around const expression") fails the
// valid protocol under `#![deny(warnings)]`.
#![deny(warnings)]

macro_rules! block_length {
    ($b:block) => {
        pipes::proto! {
            pub blocks {
                Start: send { Go([u8; $b]) -> ! }
            }
        }
    };
}

block_length!({ 1 + 2 });

// The same fragment in an ordinary item: no warning.
macro_rules! plain {
    ($b:block) => {
        type Plain = [u8; $b];
    };
}

plain!({ 1 + 2 });

fn main() {
    let _: Plain = [0; 3];
    let (_server, client) = blocks::init();
    client.go([0; 3]).unwrap();
}
