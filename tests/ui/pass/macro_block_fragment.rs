// A `$b:block` fragment as an array length (`[u8; $b]`) or a const argument (`Next<$b>`):
// rustc says nothing of either in an ordinary item, but proto! prints the fragment's invisible
// group as bare braces with the user's spans, and `unused_braces` ("unnecessary braces around
// const expression") fails the valid protocol under `#![deny(warnings)]`.
#![deny(warnings)]

macro_rules! block_length {
    ($b:block) => {
        pipes::proto! {
            pub blocks {
                Start: send { Go([u8; $b]) -> Start, Step -> Next<$b> }
                Next: recv<const N: usize> { Done -> ! }
            }
        }
    };
}

block_length!({ 3 });

// The same fragment in ordinary items: no warning.
pub struct Sized<const N: usize>;

macro_rules! plain {
    ($b:block) => {
        type Plain = [u8; $b];
        type PlainArgument = Sized<$b>;
    };
}

plain!({ 3 });

fn main() {
    let _: Plain = [0; 3];
    let _: PlainArgument = Sized::<3>;
    let (_server, client) = blocks::init();
    let _: blocks::client::Next<3> = client.go([0; 3]).unwrap().step().unwrap();
}
