//! Test helpers shared by the integration tests and the benchmark: the generator of large
//! protocols, the fixture paths, and a protocol's generated code as build.rs writes it.

#![allow(dead_code)] // each test crate uses a different part

use std::fmt::Write as _;
use std::path::PathBuf;

/// A protocol of `n` states (`n >= 1`) shaped like real ones: runs of two send states and a
/// recv state, a step to the next state from each, jumps back from every recv state, generic
/// states now and then, and an end. Same-direction steps only go forward, so it is bounded.
pub fn generated_protocol(name: &str, n: usize) -> String {
    let dir = |i: usize| if i % 3 == 2 { "recv" } else { "send" };
    let generic = |i: usize| i % 10 == 5;
    let target = |i: usize| {
        if generic(i) {
            format!("S{i}<u64>")
        } else {
            format!("S{i}")
        }
    };
    let mut out = format!("/// A generated protocol of {n} states.\npub {name} {{\n");
    for i in 0..n {
        let params = if generic(i) {
            "<T: Send + 'static>"
        } else {
            ""
        };
        let _ = writeln!(out, "    /// State {i}.\n    S{i}: {}{params} {{", dir(i));
        let payload = if generic(i) { "T, u64" } else { "u64" };
        if i + 1 < n {
            let _ = writeln!(out, "        Step{i}({payload}) -> {},", target(i + 1));
        } else {
            let _ = writeln!(out, "        Finish({payload}) -> !,");
        }
        if dir(i) == "recv" {
            let jump = (i * 7 + 3) % n;
            let jump = if dir(jump) == "recv" { jump - 1 } else { jump };
            let _ = writeln!(
                out,
                "        Jump{i}(Vec<String>, Option<Box<[u8]>>) -> {},",
                target(jump)
            );
            let _ = writeln!(out, "        Restart -> {},", target(0));
        }
        let _ = writeln!(out, "        Abort(String) -> !,");
        out.push_str("    }\n");
    }
    out.push_str("}\n");
    out
}

/// The directory of the fixture corpus.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The directory of the broken protocols.
pub fn broken() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/broken")
}

/// The code generated for `source` with the runtime at `::pipes`, as build.rs writes it
/// (formatted with prettyplease), with a diagram in each module's docs when `diagrams` asks,
/// whatever the `diagram` feature says.
pub fn expand(source: &str, diagrams: bool) -> String {
    let analysis = proto_dsl::analyze(source).expect("the protocol compiles");
    let tokens = proto_dsl::codegen::generate_with_diagrams(
        &analysis,
        &proto_dsl::codegen::Options {
            runtime: quote::quote!(::pipes),
            source,
            span_at: &|_| proc_macro2::Span::call_site(),
            printed: &|_| None,
        },
        diagrams,
    );
    let file: syn::File = syn::parse2(tokens).expect("generated code parses as Rust");
    prettyplease::unparse(&file)
}
