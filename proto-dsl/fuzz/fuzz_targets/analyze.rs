//! Fuzz target: the whole front end (parse, check, liveness, rendering) on arbitrary input.
//! It must never panic, and every diagnostic must point inside the source.
//!
//! `cargo +nightly fuzz run analyze fuzz/seeds` from `proto-dsl/` (seeds: `tests/fixtures` and
//! `tests/broken` copied into `fuzz/seeds`, see `fuzz/README.md`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    match proto_dsl::analyze(source) {
        Ok(analysis) => {
            for (protocol, liveness) in analysis.protocols() {
                assert_eq!(
                    liveness.reachable.first(),
                    Some(&0),
                    "{}",
                    protocol.name.text
                );
                let _ = liveness.to_string();
            }
            let _ = analysis.file.outline();
        }
        Err(errors) => {
            for d in &errors {
                assert!(
                    d.primary.start <= d.primary.end && d.primary.end <= source.len(),
                    "{d:?}"
                );
                assert!(source.is_char_boundary(d.primary.start), "{d:?}");
            }
            let _ = errors.render("fuzz.pipes", source);
        }
    }
});
