//! The nesting guard (parse.rs `nesting_guard`) must see every bracket outside comments and
//! literals, or an absurdly nested input reaches pest and syn, which recurse without a depth
//! limit and overflow the stack (the process aborts: no diagnostic). A review (review 7) found
//! three literals that blinded it.
//!
//! Each case runs in a child process (this test binary re-run on one ignored test), so a stack
//! overflow is a failed assertion here, not an aborted test run.

use std::process::Command;

fn depth() -> usize {
    std::env::var("NESTING_DEPTH")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(300)
}

fn deep(prefix: &str) -> String {
    format!(
        "{prefix}p {{ S: send {{ M({}u8{}) -> ! }} }}",
        "(".repeat(depth()),
        ")".repeat(depth())
    )
}

/// A block comment with a lone `"`: the guard scans inside block comments, takes the `"` for
/// the start of a string literal, and skips to the end of the file.
#[test]
#[ignore = "run by the test below, in a child process"]
fn child_quote_in_block_comment() {
    let source = deep("/* a 3.5\" floppy */\n");
    let errors = proto_dsl::parse(&source).unwrap_err();
    assert!(errors.0[0].message.contains("nested more than"), "{errors}");
}

/// A raw string (what rustc makes of every `///` comment a macro receives: `#[doc = r" C:\"]`)
/// ending in a backslash: the guard reads `\"` as an escape and the string as running on.
#[test]
#[ignore = "run by the test below, in a child process"]
fn child_raw_string_ending_in_backslash() {
    let source = deep("#[doc = r\" C:\\\"]\n");
    let errors = proto_dsl::parse(&source).unwrap_err();
    assert!(errors.0[0].message.contains("nested more than"), "{errors}");
}

/// A doc comment with an odd number of `"`, as the macro prints it (`r#" a 3.5" floppy"#`).
#[test]
#[ignore = "run by the test below, in a child process"]
fn child_raw_string_with_a_quote() {
    let source = deep("#[doc = r#\" a 3.5\" floppy\"#]\n");
    let errors = proto_dsl::parse(&source).unwrap_err();
    assert!(errors.0[0].message.contains("nested more than"), "{errors}");
}

fn run_child(name: &str) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{name}: {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn deep_nesting_after_a_quote_in_a_block_comment_is_refused_not_a_stack_overflow() {
    run_child("child_quote_in_block_comment");
}

#[test]
fn deep_nesting_after_a_raw_string_ending_in_a_backslash_is_refused_not_a_stack_overflow() {
    run_child("child_raw_string_ending_in_backslash");
}

#[test]
fn deep_nesting_after_a_doc_comment_with_a_quote_is_refused_not_a_stack_overflow() {
    run_child("child_raw_string_with_a_quote");
}

/// Literals and comments that look like they open something do not count, and a lifetime is
/// not a char: a protocol nested well within the limit behind them parses.
#[test]
fn literals_and_comments_hide_no_brackets_and_count_none() {
    let inner = |depth: usize| format!("{}u8{}", "(".repeat(depth), ")".repeat(depth));
    for prefix in [
        "/* a 3.5\" floppy ((( */\n",
        "#[doc = r\" C:\\\"]\n",
        "#[doc = r#\" a 3.5\" floppy ((( \"#]\n",
        "// (((( \"\n",
        "#[doc = \"(((( \\\" \"]\n",
    ] {
        let source = format!("{prefix}p {{ S: send {{ M({}) -> ! }} }}", inner(40));
        assert!(proto_dsl::parse(&source).is_ok(), "{source}");
    }
    let lifetimes = format!(
        "p {{ S: send<'a> {{ M(&'a {}, char, [char; 2]) -> ! }} }}",
        inner(40)
    );
    assert!(proto_dsl::parse(&lifetimes).is_ok(), "{lifetimes}");
}
