//! The front end never panics, whatever it is given: random token soup, arbitrary text, and
//! the corpus mutated at random. Every diagnostic must also point inside the source, since the
//! macro turns those ranges into spans. (The fuzz target in `fuzz/` runs the same property
//! for as long as one likes; this keeps a quick version in every test run.) Rendering never
//! panics either, for any range over any text: tabs, multi-byte chars, CRLF, lines longer
//! than 65,535 columns, ranges at or past the end, reversed or inside a char.

mod common;

use proptest::prelude::*;

/// Runs the whole front end on `source` and checks what comes out.
fn front_end_holds(source: &str) -> Result<(), TestCaseError> {
    match proto_dsl::analyze(source) {
        Ok(analysis) => {
            prop_assert_eq!(analysis.liveness.len(), analysis.file.protocols.len());
            for (protocol, liveness) in analysis.protocols() {
                // A checked protocol has a start state, and the start state is reachable.
                prop_assert!(!protocol.states.is_empty());
                prop_assert_eq!(liveness.reachable.first(), Some(&0));
                let _ = liveness.to_string();
            }
            let _ = analysis.file.outline();
        }
        Err(errors) => {
            prop_assert!(errors.has_errors());
            for d in &errors {
                prop_assert!(d.primary.start <= d.primary.end, "{:?}", d);
                prop_assert!(d.primary.end <= source.len(), "{:?}", d);
                prop_assert!(source.is_char_boundary(d.primary.start), "{:?}", d);
                for (span, _) in &d.notes {
                    prop_assert!(
                        span.end <= source.len() && source.is_char_boundary(span.start),
                        "{:?}",
                        d
                    );
                }
            }
            let rendered = errors.render("fuzz.pipes", source);
            prop_assert!(rendered.starts_with("error"));
        }
    }
    Ok(())
}

/// Every fixture and broken protocol: the seeds of the mutations.
fn corpus() -> Vec<String> {
    let mut files = Vec::new();
    for dir in [common::fixtures(), common::broken()] {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| Some(e.ok()?.path()))
            .collect();
        entries.sort();
        files.extend(
            entries
                .iter()
                .filter_map(|p| std::fs::read_to_string(p).ok()),
        );
    }
    files
}

/// Pieces the grammar cares about, so that random inputs get past the first token.
const TOKENS: &[&str] = &[
    "p",
    "S",
    "T",
    "Msg",
    "send",
    "recv",
    "sned",
    "pub",
    "pub(crate)",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    "[",
    "]",
    ",",
    ":",
    "->",
    "!",
    "#",
    "#[allow(unreachable_states)]",
    "///",
    " doc\n",
    "//",
    "\n",
    "/*",
    "*/",
    "\"",
    "'",
    "'a",
    "r#",
    "u64",
    "Vec<T>",
    "&",
    "::",
    "fn",
    "dyn",
    "+",
    "=",
    "client",
    "type",
    "é",
    "\t",
    " ",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, &'static str),
    Duplicate(usize, usize),
    Swap(usize, usize),
}

fn apply(source: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = source.chars().collect();
    for m in mutations {
        let n = chars.len().max(1);
        match *m {
            Mutation::Delete(at, len) => {
                let at = at % n;
                let end = (at + len % 8).min(chars.len());
                chars.drain(at.min(chars.len())..end);
            }
            Mutation::Insert(at, token) => {
                let at = (at % (chars.len() + 1)).min(chars.len());
                chars.splice(at..at, token.chars());
            }
            Mutation::Duplicate(at, len) => {
                let at = (at % n).min(chars.len());
                let end = (at + len % 40).min(chars.len());
                let copy: Vec<char> = chars[at..end].to_vec();
                chars.splice(at..at, copy);
            }
            Mutation::Swap(a, b) => {
                if !chars.is_empty() {
                    let (a, b) = (a % chars.len(), b % chars.len());
                    chars.swap(a, b);
                }
            }
        }
    }
    chars.into_iter().collect()
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(a, l)| Mutation::Delete(a, l)),
        (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(a, t)| Mutation::Insert(a, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, l)| Mutation::Duplicate(a, l)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
    ]
}

proptest! {
    // 300 cases keep the normal run well under a second; PROTO_DSL_CASES asks for more.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROTO_DSL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_corpus(seed in any::<prop::sample::Index>(), mutations in prop::collection::vec(mutation(), 1..6)) {
        let corpus = corpus();
        let source = apply(&corpus[seed.index(corpus.len())], &mutations);
        front_end_holds(&source)?;
    }

    #[test]
    fn token_soup(tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..80)) {
        front_end_holds(&tokens.concat())?;
    }

    #[test]
    fn arbitrary_text(source in any::<String>()) {
        front_end_holds(&source)?;
    }
}

/// The mutations above must not all be refused: some mutants still compile, or the property
/// would only ever test the error path.
#[test]
fn mutation_keeps_some_sources_valid() {
    let corpus = corpus();
    let valid = corpus
        .iter()
        .filter(|s| {
            proto_dsl::analyze(&apply(s, &[Mutation::Insert(s.chars().count(), "\n")])).is_ok()
        })
        .count();
    assert!(
        valid >= 19,
        "only {valid} fixtures survive a harmless mutation"
    );
}

/// Pieces of text that have tripped renderers: tabs, multi-byte and wide chars, every kind of
/// line break, and runs that push a column past `u16::MAX`.
const TEXT: &[&str] = &[
    "a", "S", " ", "\t", "\n", "\r\n", "\r", "é", "日本", "🦀", "\u{301}", "{", "}", "->",
];

fn text() -> impl Strategy<Value = String> {
    // Long runs are rare (they are slow to render in a debug build) and just long enough.
    let piece = prop_oneof![
        60 => prop::sample::select(TEXT).prop_map(str::to_string),
        1 => Just(" ".repeat(66_000)),
        1 => Just("é".repeat(66_000)),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

/// An offset near `len` most of the time, anything at all now and then.
fn offset(len: usize, pick: prop::sample::Index, wild: usize, far: bool) -> usize {
    if far { wild } else { pick.index(len + 2) }
}

/// Renders a diagnostic with a note and a help at `primary` and `note` over `source`, and
/// checks the location line against the source map.
fn rendering_holds(
    source: &str,
    primary: std::ops::Range<usize>,
    note: std::ops::Range<usize>,
) -> Result<(), TestCaseError> {
    let d = proto_dsl::Diagnostic::error("m", primary.clone(), "label")
        .with_note(note, "n")
        .with_help("h");
    // Through `Diagnostics::render`, which renders each one with `Diagnostic::render`.
    let rendered = proto_dsl::Diagnostics(vec![d]).render("r.pipes", source);
    let at = proto_dsl::source::SourceMap::new(source).line_col(primary.start);
    let location = format!("--> r.pipes:{}:{}\n", at.line, at.col);
    prop_assert!(rendered.contains(&location), "{:.300}", rendered);
    prop_assert!(rendered.contains("= help: h\n"));
    // Every line break in the output is one the renderer wrote: a source's `\r` never leaks.
    prop_assert!(!rendered.contains('\r'));
    prop_assert!(rendered.ends_with("error: aborting due to 1 previous error\n"));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROTO_DSL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300),
        ..ProptestConfig::default()
    })]

    #[test]
    fn rendering_any_range(
        source in text(),
        picks in any::<[prop::sample::Index; 4]>(),
        wild in any::<[usize; 4]>(),
        far in any::<[bool; 4]>(),
    ) {
        let at = |i: usize| offset(source.len(), picks[i], wild[i], far[i] && wild[i] % 4 == 0);
        rendering_holds(&source, at(0)..at(1), at(2)..at(3))?;
    }
}

/// The cases named in issue 12, each once, so they run whatever proptest draws.
#[test]
fn rendering_edge_cases() {
    let long = format!("{}x", " ".repeat(66_000));
    let wide = format!("{}x", "é".repeat(66_000));
    let sources = [
        String::new(),
        "\n".to_string(),
        "ab".to_string(),
        "\tp {\t\tS\t}\n".to_string(),
        "é日本🦀\u{301}x\n".to_string(),
        "a\r\nb\r\n\r\nc".to_string(),
        "a\rb".to_string(),
        long.clone(),
        format!("{long}\n{long}\r\n"),
        wide,
        "\n".repeat(10_000),
    ];
    for source in &sources {
        let len = source.len();
        let mut ends = vec![0, len / 2, len, usize::MAX];
        // Long lines are slow to render in a debug build: the ends and middle suffice there.
        if len < 1000 {
            ends.extend([1, len.saturating_sub(1), len + 1]);
        }
        for &start in &ends {
            for &end in &ends {
                let note = end..start;
                rendering_holds(source, start..end, note)
                    .unwrap_or_else(|e| panic!("{e} for {start}..{end} of {:.40?}", source));
            }
        }
    }
}

/// A span at the end of a file without a final line break is shown after its last char, and
/// CRLF sources render like LF ones.
#[test]
fn rendering_at_the_end_and_over_crlf() {
    let d = proto_dsl::Diagnostic::error("m", 2..2, "");
    assert_eq!(
        d.render("f", "ab"),
        "error: m\n --> f:1:3\n  |\n1 | ab\n  |   ^\n"
    );
    assert_eq!(
        d.render("f", ""),
        "error: m\n --> f:1:1\n  |\n1 | \n  | ^\n"
    );
    let lf = proto_dsl::Diagnostic::error("m", 5..6, "x").render("f", "ab\ncd\nef\n");
    let crlf = proto_dsl::Diagnostic::error("m", 6..7, "x").render("f", "ab\r\ncd\r\nef\r\n");
    assert_eq!(lf, crlf);
    assert_eq!(lf, "error: m\n --> f:2:3\n  |\n2 | cd\n  |   ^ x\n");
}

/// The mechanism behind the panic past column 65,535: `format!` widths and precisions given at
/// run time (`{:width$}`, `{:.n$}`) are `u16` and panic beyond. The compiler pads by hand
/// instead (`push_spaces`); this keeps it that way.
#[test]
fn no_runtime_format_widths_in_the_compiler() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offenders = Vec::new();
    // Every file under src, subdirectories (`diagram/`) included.
    let mut dirs = vec![src];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(files.iter().any(|f| f.ends_with("diagram/svg.rs")));
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("$}") {
                offenders.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}
