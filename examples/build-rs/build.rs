//! Generates `$OUT_DIR/atm.rs` from `protocols/atm.pipes`, as prost-build does for `.proto`
//! files; `src/lib.rs` includes it.

fn main() -> Result<(), proto_dsl::Error> {
    proto_dsl::Config::new()
        .runtime("::pipes")
        .compile(&["protocols/atm.pipes"])
}
