// A lower-case const parameter whose name a `macro_rules!` was given (`$n:ident`) is refused at
// the name as the user wrote it, where rustc's own `non_upper_case_globals` points: the help
// says to rename it, and the name is the macro's argument, not the macro's `const $n: usize`.

macro_rules! lower {
    ($n:ident) => {
        pipes::proto! {
            p {
                Start: send<const $n: usize> { Data([u8; $n]) -> ! }
            }
        }
    };
}

lower!(len);

fn main() {}
