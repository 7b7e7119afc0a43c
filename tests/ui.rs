//! Compile-fail and compile-pass cases: a protocol mistake is an error at the user's tokens,
//! a protocol violation is a type error, and generated code passes strict lints.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
    // `#[wire]` protocols need `pipes::net`.
    if cfg!(feature = "net") {
        cases.compile_fail("tests/ui/wire/*.rs");
        cases.pass("tests/ui/wire_pass/*.rs");
    } else {
        cases.compile_fail("tests/ui/wire_without_net/*.rs");
    }
}
