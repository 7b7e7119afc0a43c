//! The `pipes` protocol compiler as a library: it knows nothing of `proc_macro`, so the macro,
//! a command line and build.rs generation can all share it. Its stages arrive with the
//! protocol-language issue (grammar -> parse -> check -> liveness -> codegen).
