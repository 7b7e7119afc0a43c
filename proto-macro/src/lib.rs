//! The `proto!` procedural macro: a thin shim that hands its input to `proto-dsl` and turns the
//! result into tokens. The macro itself arrives with the `proto!` issue.
