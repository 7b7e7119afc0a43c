//! The nesting guard (parse.rs `nesting_guard`) must see every bracket outside comments and
//! literals, or an absurdly nested input reaches pest and syn, which recurse without a depth
//! limit and overflow the stack (the process aborts: no diagnostic). A review (review 7) found
//! three literals that blinded it.
//!
//! Each case runs in a child process (this test binary run again for that one test), so a stack
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

/// Runs `body` if this process is the child running `name`; otherwise runs this test binary
/// again for that one test, as that child, and asserts that it ended well: a stack overflow
/// aborts the process, which would otherwise take the whole test run with it.
fn in_a_child(name: &str, body: impl FnOnce()) {
    if std::env::var("NESTING_CHILD").as_deref() == Ok(name) {
        body();
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("NESTING_CHILD", name)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{name}: {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Parses `source` and expects the guard's refusal.
fn refused(source: &str) {
    let errors = proto_dsl::parse(source).unwrap_err();
    assert!(errors.0[0].message.contains("nested more than"), "{errors}");
}

/// A block comment with a lone `"`: the guard scanned inside block comments, took the `"` for
/// the start of a string literal, and skipped to the end of the file.
#[test]
fn deep_nesting_after_a_quote_in_a_block_comment_is_refused_not_a_stack_overflow() {
    in_a_child(
        "deep_nesting_after_a_quote_in_a_block_comment_is_refused_not_a_stack_overflow",
        || refused(&deep("/* a 3.5\" floppy */\n")),
    );
}

/// A raw string (what rustc makes of every `///` comment a macro receives: `#[doc = r" C:\"]`)
/// ending in a backslash: the guard read `\"` as an escape and the string as running on.
#[test]
fn deep_nesting_after_a_raw_string_ending_in_a_backslash_is_refused_not_a_stack_overflow() {
    in_a_child(
        "deep_nesting_after_a_raw_string_ending_in_a_backslash_is_refused_not_a_stack_overflow",
        || refused(&deep("#[doc = r\" C:\\\"]\n")),
    );
}

/// A doc comment with an odd number of `"`, as the macro prints it (`r#" a 3.5" floppy"#`).
#[test]
fn deep_nesting_after_a_doc_comment_with_a_quote_is_refused_not_a_stack_overflow() {
    in_a_child(
        "deep_nesting_after_a_doc_comment_with_a_quote_is_refused_not_a_stack_overflow",
        || refused(&deep("#[doc = r#\" a 3.5\" floppy\"#]\n")),
    );
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
