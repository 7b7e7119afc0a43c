//! The `pipes` protocol compiler as a library: grammar -> parse -> check -> liveness ->
//! codegen. It knows nothing of `proc_macro`, so the macro, a command line and build.rs
//! generation can all share it; its AST carries byte ranges, which the macro maps onto spans.
//!
//! One stage per module, in pipeline order:
//! - `grammar.pest`: the language, rule by rule;
//! - [`parse`](mod@parse): text to [`ast`] with byte ranges, Rust fragments parsed by syn;
//! - [`check`]: every error at once, in protocol words;
//! - [`liveness`]: reachability, ending and boundedness;
//! - [`layout`]: how sessions travel (a buffer, two lanes, or a packet per message), decided
//!   once for codegen, the docs and `explain`;
//! - [`diagnostic`] and [`source`]: structured diagnostics and their rustc-style rendering;
//! - [`codegen`]: the generated modules, as tokens (with [`fingerprint`] for `#[wire]`
//!   protocols).
//!
//! Beside the pipeline: [`diagram`] draws a protocol (SVG, Mermaid, DOT) and tabulates it, and
//! [`config`] is build.rs generation ([`Config`], [`compile_protocols`]).
//!
//! The `diagram` feature adds a state diagram (an inline SVG picture) to every generated
//! module's docs.
//!
//! [`analyze`] runs them all:
//!
//! ```
//! let source = "pingpong { Ping: send { Ping -> Pong } Pong: recv { Pong -> Ping } }";
//! let analysis = proto_dsl::analyze(source).unwrap();
//! assert!(analysis.liveness[0].is_bounded());
//!
//! let errors = proto_dsl::analyze("p { S: sned { M -> ! } }").unwrap_err();
//! assert!(errors.render("p.pipes", "p { S: sned { M -> ! } }").contains(" --> p.pipes:1:8"));
//! ```

pub mod ast;
pub mod check;
pub mod codegen;
pub mod config;
pub mod diagnostic;
pub mod diagram;
pub mod fingerprint;
pub mod layout;
pub mod liveness;
pub mod parse;
pub mod source;

pub use config::{Config, Error, compile_protocols};
pub use diagnostic::{Diagnostic, Diagnostics, Severity};
pub use liveness::Liveness;
pub use parse::parse;

/// A checked source, ready for code generation.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The AST. Every name resolves, every state with messages has a direction, and every
    /// state is reachable or allowed not to be.
    pub file: ast::File,
    /// Liveness of each protocol, in the order of `file.protocols`.
    pub liveness: Vec<Liveness>,
    /// The session layout of each protocol, in the same order.
    pub layouts: Vec<layout::Layout>,
    /// Diagnostics that do not stop compilation (warnings); empty today.
    pub warnings: Diagnostics,
}

impl Analysis {
    /// Each protocol with its liveness.
    pub fn protocols(&self) -> impl Iterator<Item = (&ast::Protocol, &Liveness)> {
        self.file.protocols.iter().zip(&self.liveness)
    }

    /// Each protocol with its liveness and layout.
    pub fn layouts(&self) -> impl Iterator<Item = (&ast::Protocol, &Liveness, &layout::Layout)> {
        self.protocols()
            .zip(&self.layouts)
            .map(|((protocol, liveness), layout)| (protocol, liveness, layout))
    }
}

/// Parses, checks and analyses a source: the whole front end. Errors come back all together
/// (or the first syntax error, which stops parsing); render them with
/// [`Diagnostics::render`], or map their ranges onto spans.
pub fn analyze(source: &str) -> Result<Analysis, Diagnostics> {
    let file = parse(source)?;
    let diagnostics = check::check(&file, source);
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    let liveness: Vec<Liveness> = file.protocols.iter().map(liveness::analyze).collect();
    let layouts = file
        .protocols
        .iter()
        .zip(&liveness)
        .map(|(protocol, liveness)| layout::Layout::of(protocol, liveness))
        .collect();
    Ok(Analysis {
        file,
        liveness,
        layouts,
        warnings: diagnostics,
    })
}
