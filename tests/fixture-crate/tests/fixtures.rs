//! The fixture crate compiles what is in the fixture directory, all of it.

#[test]
fn every_fixture_file_is_compiled() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../proto-dsl/tests/fixtures"
    );
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "pipes"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(pipes_fixtures::FIXTURES, files.as_slice());
}
