//! Broken protocols (`tests/broken/*.pipes`): each must be refused, and its rendered
//! diagnostics are snapshotted, so every message, line and column is reviewed once and then
//! held still.

mod common;

use std::collections::BTreeSet;
use std::ops::Range;

fn render(name: &str) -> (String, proto_dsl::Diagnostics) {
    let path = common::broken().join(format!("{name}.pipes"));
    let source =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match proto_dsl::analyze(&source) {
        Ok(_) => panic!("{name} compiled, but it is broken"),
        Err(errors) => (errors.render(&format!("{name}.pipes"), &source), errors),
    }
}

macro_rules! broken {
    ($($name:ident: $count:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let (rendered, errors) = render(stringify!($name));
                insta::assert_snapshot!(stringify!($name), rendered);
                assert_eq!(errors.len(), $count, "number of errors in {}", stringify!($name));
            }
        )*

        #[test]
        fn every_broken_protocol_is_listed() {
            let listed: BTreeSet<String> = [$(stringify!($name)),*].iter().map(|s| s.to_string()).collect();
            let on_disk: BTreeSet<String> = std::fs::read_dir(common::broken())
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".pipes").map(str::to_string))
                .collect();
            assert_eq!(listed, on_disk);
        }
    };
}

broken! {
    syntax_missing_arrow: 1;
    syntax_missing_comma: 1;
    syntax_unclosed_protocol: 1;
    syntax_bad_next: 1;
    syntax_colon_without_direction: 1;
    syntax_stray_semicolon: 1;
    syntax_unbalanced_payload: 1;
    too_deeply_nested: 1;
    invalid_payload_type: 2;
    invalid_generic_param: 1;
    untranslated_2012_kinds: 2;
    invalid_type_argument: 1;
    invalid_attribute: 1;
    invalid_visibility: 1;
    empty_file: 1;
    empty_protocol: 1;
    duplicate_protocol: 1;
    duplicate_state: 1;
    duplicate_message: 1;
    method_collision: 2;
    endpoint_method_collision: 3;
    method_is_keyword: 2;
    name_is_keyword: 3;
    reserved_state_name: 2;
    undefined_state_typo: 1;
    undefined_state: 1;
    missing_type_arguments: 1;
    extra_type_arguments: 3;
    undeclared_type_parameter: 2;
    undeclared_type_argument: 1;
    duplicate_generic_param: 1;
    messages_without_direction: 1;
    bad_direction_typo: 2;
    bad_direction_word: 1;
    unreachable_states: 1;
    many_errors_at_once: 6;
    raw_names: 2;
    wire_rules: 4;
    wire_with_arguments: 1;
    unnameable_types: 3;
}

/// Each error class of the issue is exercised by some broken protocol above.
#[test]
fn every_error_class_is_covered() {
    let classes = [
        ("undefined_state", "steps to undefined state"),
        ("duplicate_state", "state `Login` is defined more than once"),
        (
            "duplicate_message",
            "message `Hello` is defined more than once",
        ),
        (
            "method_collision",
            "would both send with the method `say_hello`",
        ),
        ("endpoint_method_collision", "which endpoints already have"),
        (
            "missing_type_arguments",
            "with 0 type arguments but the state takes 1",
        ),
        (
            "undeclared_type_parameter",
            "type parameter `T` is not declared on state `Closing`",
        ),
        (
            "messages_without_direction",
            "has messages but no direction",
        ),
        ("bad_direction_typo", "`sned` is not a direction"),
        ("empty_protocol", "protocol `p` has no states"),
        ("unreachable_states", "state `lost` is unreachable"),
        ("reserved_state_name", "a state cannot be called `client`"),
        (
            "syntax_missing_arrow",
            "expected `(` or `->`, found `Start`",
        ),
        ("invalid_payload_type", "invalid type"),
        ("wire_rules", "cannot have a generic state"),
        ("wire_rules", "cannot be called `Wire`"),
        ("wire_rules", "cannot send an endpoint"),
        ("wire_with_arguments", "`#[wire]` takes no arguments"),
        ("unnameable_types", "a payload type cannot name `Self`"),
        ("unnameable_types", "a payload type cannot be `impl Trait`"),
        (
            "unnameable_types",
            "a type argument cannot be left to inference",
        ),
    ];
    for (name, message) in classes {
        let (rendered, _) = render(name);
        assert!(
            rendered.contains(message),
            "{name} should say {message:?}:\n{rendered}"
        );
    }
}

/// Diagnostics come out structured as well as rendered: the macro maps `primary` onto a span.
#[test]
fn diagnostics_carry_byte_ranges() {
    let source = "p { S: send { M -> Nowhere } }";
    let errors = proto_dsl::analyze(source).unwrap_err();
    let error = errors.iter().next().unwrap();
    assert_eq!(&source[error.primary.clone()], "Nowhere");
    assert_eq!(error.severity, proto_dsl::Severity::Error);
}

/// An unreachable state may be allowed on the protocol or on the state itself.
#[test]
fn unreachable_states_can_be_allowed() {
    let on_state = "p { A: send { M -> ! } #[allow(unreachable_states)] B: send { N -> ! } }";
    assert!(proto_dsl::analyze(on_state).is_ok());
    let on_protocol = "#[allow(unreachable_states)] p { A: send { M -> ! } B: send { N -> ! } }";
    assert!(proto_dsl::analyze(on_protocol).is_ok());
    let neither = "p { A: send { M -> ! } B: send { N -> ! } }";
    assert!(proto_dsl::analyze(neither).is_err());
}

/// A protocol on one line whose undefined target sits past column 65,535: `format!` widths
/// are `u16`, so padding the underline with one used to panic.
fn far_right_source() -> (String, usize) {
    let source = format!("p {{{}S: send {{ M -> Nowhere }} }}\n", " ".repeat(70_000));
    let at = source.find("Nowhere").unwrap();
    (source, at)
}

#[test]
fn errors_past_column_65535_render() {
    let (source, at) = far_right_source();
    let errors = proto_dsl::analyze(&source).unwrap_err();
    let rendered = errors.render("long.pipes", &source);
    assert!(
        rendered.contains(&format!(" --> long.pipes:1:{}\n", at + 1)),
        "{}",
        &rendered[..200]
    );
    let underline = format!(
        "  | {}^^^^^^^ no state `Nowhere` in protocol `p`\n",
        " ".repeat(at)
    );
    assert!(rendered.contains(&underline));

    // Notes and underlines longer than 65,535 columns go the same way.
    let long = Range {
        start: 3,
        end: at + 7,
    };
    let one = proto_dsl::Diagnostic::error("m", at..at + 7, "here").with_note(long, "all of it");
    let rendered = one.render("long.pipes", &source);
    let note = format!("  | {}{}\n", " ".repeat(3), "-".repeat(at + 4));
    assert!(rendered.ends_with(&note));
}

// Two syntax errors that did not say what is wrong, from an adversarial review (review 4).

/// An inner attribute (`#![allow(..)]`, a natural thing to write at the top of a `*.pipes`
/// file or inside `proto!`) gets "expected something else, found `!`".
#[test]
fn an_inner_attribute_says_what_is_expected() {
    let errors = proto_dsl::analyze("#![allow(dead_code)]\np { S: send { M -> ! } }").unwrap_err();
    let message = &errors.iter().next().unwrap().message;
    assert!(!message.contains("something else"), "{message}");
}

/// A lifetime where a message should be: the found token is shown escaped, `\'`.
#[test]
fn a_quote_is_not_shown_escaped() {
    let errors = proto_dsl::analyze("p { S: send { 'a -> ! } }").unwrap_err();
    let message = &errors.iter().next().unwrap().message;
    assert!(!message.contains("\\'"), "{message}");
}

/// Names the generated module keeps for its own hidden items are refused at the user's token,
/// instead of generating code that does not compile (found by review 4: a state `Buffer`
/// clashed with the session's `__Buffer`, states `A` and `__A` made two enums `__A`, a
/// message `__arrive` broke the receive impl, a state `_params` duplicated a buffer field).
#[test]
fn names_the_generated_code_keeps_are_refused_at_their_tokens() {
    for (source, name) in [
        ("p { Buffer: send { M -> ! } }", "Buffer"),
        ("p { FromClient: send { M -> FromClient } }", "FromClient"),
        ("p { pipes: send { M -> ! } }", "pipes"),
        (
            "p { _params: send { M -> B } B: recv { N -> ! } }",
            "_params",
        ),
        ("p { A: send { M -> __A } __A: recv { N -> ! } }", "__A"),
        ("p { A: recv { __arrive -> ! } }", "__arrive"),
        ("p { A: send<T> { __Params(T) -> ! } }", "__Params"),
    ] {
        let errors = proto_dsl::analyze(source).unwrap_err();
        let error = errors
            .iter()
            .find(|d| d.message.contains("cannot be called"))
            .unwrap_or_else(|| {
                panic!(
                    "{source}: {:?}",
                    errors.iter().map(|d| &d.message).collect::<Vec<_>>()
                )
            });
        assert!(
            error.message.contains(&format!("`{name}`")),
            "{}",
            error.message
        );
        assert_eq!(&source[error.primary.clone()], name, "{source}");
    }
    // Names that only look alike are fine.
    assert!(proto_dsl::analyze("p { Buffers: send { M -> _A } _A: recv { Params -> ! } }").is_ok());
}

/// A lifetime a `for<..>` binds in a payload is the payload's own, not a parameter of the
/// state, even when another state declares one of that name (review 7: it was reported as an
/// undeclared "type parameter"). An undeclared lifetime is called a lifetime parameter.
#[test]
fn a_higher_ranked_lifetime_is_not_another_states_parameter() {
    for source in [
        "p { A: send<'a> { M(&'a u8) -> B } B: recv { N(for<'a> fn(&'a u8) -> &'a u8) -> ! } }",
        "p { A: send<'a> { M(&'a u8) -> B } B: recv { N(Box<dyn for<'a> Fn(&'a u8) + Send>) -> ! } }",
    ] {
        if let Err(errors) = proto_dsl::analyze(source) {
            panic!("{}", errors.render("p.pipes", source));
        }
    }
    let undeclared = "p { A: send<'a> { M(&'a u8) -> B } B: recv { N(&'a u8) -> ! } }";
    let errors = proto_dsl::analyze(undeclared).unwrap_err();
    let rendered = errors.render("p.pipes", undeclared);
    assert!(
        rendered.contains("lifetime parameter `'a` is not declared on state `B`"),
        "{rendered}"
    );
}
