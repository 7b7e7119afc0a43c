//! The fixture crate compiles what is in the fixture directory, all of it (and with the `net`
//! feature, its own `#[wire]` fixtures in `wire/`).

fn stems(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "pipes"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

#[test]
fn every_fixture_file_is_compiled() {
    let mut files = stems(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../proto-dsl/tests/fixtures"
    ));
    if cfg!(feature = "net") {
        files.extend(stems(concat!(env!("CARGO_MANIFEST_DIR"), "/wire")));
    }
    assert_eq!(pipes_fixtures::FIXTURES, files.as_slice());
}
