//! The `pipes-proto` binary end to end: every subcommand on a good protocol (bank) and a broken
//! one, exit statuses, and a snapshot of everything it prints. Files are named relative to
//! proto-dsl's test directory, so the paths in the output are the same on every machine.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `pipes-proto` with `args` (and `stdin`, if given) and returns its exit status and
/// output as one text, for snapshots.
fn run_with_stdin(args: &[&str], stdin: Option<&str>) -> (i32, String) {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto-dsl/tests");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipes-proto"))
        .args(args)
        .current_dir(tests)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let output = child.wait_with_output().unwrap();
    let status = output
        .status
        .code()
        .expect("exits rather than being killed");
    let text = format!(
        "status: {status}\n--- stdout\n{}--- stderr\n{}",
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap()
    );
    (status, text)
}

fn run(args: &[&str]) -> (i32, String) {
    run_with_stdin(args, None)
}

const BANK: &str = "fixtures/bank.pipes";
const BROKEN: &str = "broken/many_errors_at_once.pipes";

macro_rules! snapshots {
    ($($name:ident: [$($arg:expr),*] => $status:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let (status, text) = run(&[$($arg),*]);
                assert_eq!(status, $status, "{text}");
                insta::assert_snapshot!(stringify!($name), text);
            }
        )*
    };
}

snapshots! {
    check_bank: ["check", BANK] => 0;
    expand_bank: ["expand", BANK] => 0;
    graph_dot_bank: ["graph", BANK, "--format", "dot"] => 0;
    graph_mermaid_bank: ["graph", "--format=mermaid", BANK] => 0;
    graph_svg_bank: ["graph", "--format=svg", BANK] => 0;
    explain_bank: ["explain", BANK] => 0;
    check_broken: ["check", BROKEN] => 1;
    expand_broken: ["expand", BROKEN] => 1;
    graph_dot_broken: ["graph", BROKEN, "--format", "dot"] => 1;
    graph_mermaid_broken: ["graph", BROKEN, "--format", "mermaid"] => 1;
    explain_broken: ["explain", BROKEN] => 1;
    // Generic states, awkward payload types (paths, closures, arrays) and an unbounded loop.
    graph_mermaid_kv_store: ["graph", "fixtures/kv_store.pipes", "--format", "mermaid"] => 0;
    graph_dot_kv_store: ["graph", "fixtures/kv_store.pipes", "--format", "dot"] => 0;
    explain_kv_store: ["explain", "fixtures/kv_store.pipes"] => 0;
    explain_pingpong_unbounded: ["explain", "fixtures/pingpong_unbounded.pipes"] => 0;
    usage_error: ["graph", BANK, "--format", "png"] => 2;
    missing_file: ["check", "fixtures/no_such.pipes"] => 1;
}

#[test]
fn expand_follows_the_runtime_and_diagram_options() {
    let (status, default) = run(&["expand", BANK]);
    assert_eq!(status, 0);
    assert!(default.contains("::pipes::__private"));
    assert!(!default.contains("<svg"));
    let (status, text) = run(&["expand", "--runtime", "crate::rt", "--diagram", BANK]);
    assert_eq!(status, 0, "{text}");
    assert!(text.contains("crate::rt::__private"), "{text}");
    assert!(!text.contains("::pipes::"), "{text}");
    assert!(text.contains("<svg xmlns="), "{text}");
    // A usage error, as a bad option is: status 2, rustc's `error:`, the usage.
    for runtime in ["no path", "", "pipes::<u8>"] {
        let (status, text) = run(&["expand", "--runtime", runtime, BANK]);
        assert_eq!(status, 2, "{text}");
        assert!(
            text.contains(&format!(
                "--- stderr\nerror: the runtime `{runtime}` is not a Rust module path"
            )),
            "{text}"
        );
        assert!(text.contains("Usage:"), "{text}");
    }
}

#[test]
fn standard_input_is_read_for_a_dash() {
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../proto-dsl/tests/broken/undefined_state_typo.pipes"),
    )
    .unwrap();
    let (status, text) = run_with_stdin(&["check", "-"], Some(&source));
    assert_eq!(status, 1, "{text}");
    assert!(text.contains(" --> <stdin>:6:"), "{text}");
    let (status, text) = run_with_stdin(&["check", "-"], Some("p { S: send { M -> ! } }"));
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("<stdin>: ok, 1 protocol: p (1 state, 1 message, bounded)"),
        "{text}"
    );
}

#[test]
fn help_and_version_succeed() {
    let (status, text) = run(&["--help"]);
    assert_eq!(status, 0);
    assert!(text.contains("Usage:\n  pipes-proto check FILE"), "{text}");
    let (status, text) = run(&["--version"]);
    assert_eq!(status, 0);
    assert!(
        text.contains(concat!("pipes-proto ", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
}

/// Every subcommand on a protocol whose error (or widest name) lies past column 65,535:
/// rendering pads with `format!` widths nowhere, since those are `u16` and panic beyond.
#[test]
fn columns_past_65535_never_panic() {
    let source = format!("p {{{}S: send {{ M -> Nowhere }} }}\n", " ".repeat(70_000));
    let column = source.find("Nowhere").unwrap() + 1;
    for command in ["check", "expand", "graph", "explain"] {
        let (status, text) = run_with_stdin(&[command, "-"], Some(&source));
        assert_eq!(status, 1, "{command}: {text:.300}");
        assert!(
            text.contains(&format!(" --> <stdin>:1:{column}\n")),
            "{command}: {text:.300}"
        );
    }
    let wide = format!("p {{ S{}: send {{ M -> ! }} }}\n", "x".repeat(70_000));
    for command in ["check", "expand", "graph", "explain"] {
        let (status, text) = run_with_stdin(&[command, "-"], Some(&wide));
        assert_eq!(status, 0, "{command}: {text:.300}");
    }
}

// Inputs that made the CLI panic (status 101, where `--help` documents 0, 1 and 2), from an
// adversarial review (review 4).

const PROTOCOL: &str = "p { A: send { M -> B } B: recv { N -> A } }";

fn protocol_file(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pipes-cli-args-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, PROTOCOL).unwrap();
    path
}

/// `--runtime` with a path that syn accepts as a path but that cannot follow `use`
/// (generic arguments): `Config::expand` panics on its own output
/// (`codegen produces Rust that syn can parse`).
#[test]
fn expand_with_a_generic_runtime_path_is_an_error_not_a_panic() {
    let file = protocol_file("generic_runtime.pipes");
    let output = Command::new(env!("CARGO_BIN_EXE_pipes-proto"))
        .args(["expand", "--runtime", "pipes::<u8>"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        matches!(output.status.code(), Some(1 | 2)),
        "status {:?}: {stderr}",
        output.status
    );
}

/// The same through the library API that build.rs uses: an `Err`, not a panic.
#[test]
fn config_expand_with_a_generic_runtime_path_returns_an_error() {
    let result = std::panic::catch_unwind(|| {
        proto_dsl::Config::new()
            .runtime("pipes::<u8>")
            .expand("p.pipes", PROTOCOL)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    match result {
        Ok(Err(_)) => {}
        Ok(Ok(())) => panic!("generated `use pipes::<u8>::__private` and called it fine"),
        Err(_) => panic!("Config::expand panicked on a runtime path it had accepted"),
    }
}

/// A file name that is not UTF-8 (fine on Linux): `std::env::args()` panics.
#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_an_error_not_a_panic() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let output = Command::new(env!("CARGO_BIN_EXE_pipes-proto"))
        .arg("check")
        .arg(OsStr::from_bytes(b"/nonexistent/\xff.pipes"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
}
