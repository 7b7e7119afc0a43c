// A `macro_rules!` fragment that is a negative number (`$l:literal` or `$e:expr` given `-1`)
// is a const argument without braces, as rustc takes it in `S<$l>` and `S<$e>`: proto!'s
// source map prints the fragment's invisible group in parentheses (`Next<(-1)>`), which is no
// generic argument, and the valid protocol is refused ("invalid type argument `( - 1 )`"), in
// a transition's arguments, a payload type's and a bound's alike.
#![deny(warnings)]

pub struct Fixed<const N: i32>;

pub trait Signed<const N: i32> {}

impl Signed<-1> for u8 {}

macro_rules! negative {
    ($name:ident, $l:literal, $e:expr) => {
        pipes::proto! {
            pub $name {
                Start: send {
                    ByLiteral -> Next<$l>,
                    ByExpression -> Next<$e>,
                    Payload(Fixed<$l>) -> Bounded<u8>,
                }
                Next: recv<const N: i32> { Done -> ! }
                Bounded: recv<T: Signed<$l>> { Value(T) -> ! }
            }
        }
    };
}

negative!(negatives, -1, -2);

// The same written by hand compiles.
pipes::proto! {
    pub by_hand {
        Start: send { Go -> Next<-1>, Payload(Fixed<-1>) -> Bounded<u8> }
        Next: recv<const N: i32> { Done -> ! }
        Bounded: recv<T: Signed<-1>> { Value(T) -> ! }
    }
}

// And the same fragments in ordinary items.
pub struct Next<const N: i32>;

macro_rules! plain {
    ($l:literal, $e:expr) => {
        type ByLiteral = Next<$l>;
        type ByExpression = Next<$e>;
        type Payload = Fixed<$l>;
        fn bounded<T: Signed<$l>>(_: T) {}
    };
}

plain!(-1, -2);

fn main() {
    let _: ByLiteral = Next::<-1>;
    let _: ByExpression = Next::<-2>;
    let _: Payload = Fixed::<-1>;
    bounded(0u8);
    let (_server, client) = negatives::init();
    let _: negatives::client::Next<-1> = client.by_literal().unwrap();
    let (_server, client) = negatives::init();
    let _: negatives::client::Next<-2> = client.by_expression().unwrap();
    let (_server, client) = negatives::init();
    let _: negatives::client::Bounded<u8> = client.payload(Fixed::<-1>).unwrap();
    let (_server, client) = by_hand::init();
    let _: by_hand::client::Next<-1> = client.go().unwrap();
}
