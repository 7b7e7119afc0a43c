//! The `pipes` protocol compiler as a library: grammar -> parse -> check -> liveness (codegen
//! comes later). It knows nothing of `proc_macro`, so the macro, a command line and build.rs
//! generation can all share it; its AST carries byte ranges, which the macro maps onto spans.

pub mod ast;
pub mod diagnostic;
pub mod parse;
pub mod source;

pub use diagnostic::{Diagnostic, Diagnostics, Severity};
pub use parse::parse;
