//! The front end never panics, whatever it is given: random token soup, arbitrary text, and
//! the corpus mutated at random. Every diagnostic must also point inside the source, since the
//! macro turns those ranges into spans. (The fuzz target in `fuzz/` runs the same property
//! for as long as one likes; this keeps a quick version in every test run.)

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
