// A type nested deeper than the protocol language takes, given to a `macro_rules!` as a `$t:ty`
// fragment (rustc's own parser takes it: `type T = $t;` compiles), is refused by proto!'s
// nesting guard, as the same type written in the invocation is ("brackets nested more than
// 64 deep"). proto!'s source map hands the fragment to syn first (`needs_grouping` parses every
// invisible group as a type, then as an expression), syn recurses without a limit, and the
// macro overflows its stack: rustc dies with SIGSEGV.

macro_rules! deep {
    ($t:ty) => {
        pipes::proto! {
            deep {
                Start: send { Go($t) -> ! }
            }
        }
    };
}

deep!(
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<
    u8
    >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>
    >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>
    >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>
    >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>
);

fn main() {}
