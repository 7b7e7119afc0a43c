// A `macro_rules!` fragment that is a negative number (`$l:literal` or `$e:expr` given `-1`)
// is a const argument without braces, as rustc takes it in `S<$l>` and `S<$e>`: proto!'s
// source map prints the fragment's invisible group in parentheses (`Next<(-1)>`), which is no
// generic argument, and the valid protocol is refused ("invalid type argument `( - 1 )`").
#![deny(warnings)]

macro_rules! negative {
    ($name:ident, $l:literal, $e:expr) => {
        pipes::proto! {
            pub $name {
                Start: send { ByLiteral -> Next<$l>, ByExpression -> Next<$e> }
                Next: recv<const N: i32> { Done -> ! }
            }
        }
    };
}

negative!(negatives, -1, -2);

// The same written by hand compiles.
pipes::proto! {
    pub by_hand {
        Start: send { Go -> Next<-1> }
        Next: recv<const N: i32> { Done -> ! }
    }
}

fn main() {
    let (_server, client) = negatives::init();
    let _: negatives::client::Next<-1> = client.by_literal().unwrap();
    let (_server, client) = negatives::init();
    let _: negatives::client::Next<-2> = client.by_expression().unwrap();
    let (_server, client) = by_hand::init();
    let _: by_hand::client::Next<-1> = client.go().unwrap();
}
