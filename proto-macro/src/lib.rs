//! The `proto!` procedural macro: a thin shim over `proto-dsl`. It prints the invocation's
//! tokens as text (remembering where each token landed), runs the protocol compiler on that
//! text, and maps every byte range the compiler reports back onto the user's tokens.
//!
//! Users call `pipes::proto!`, a `macro_rules!` in the runtime that forwards here with `$crate`
//! first, so generated code reaches the runtime however the dependency is named.

use proc_macro::TokenStream;
use proc_macro2::{Delimiter, Ident, Span, TokenStream as TokenStream2, TokenTree};
use quote::quote;

mod debug;
mod select;
mod source;

#[cfg(test)]
mod expansion_tests;

use source::Source;

/// Waits on several endpoints and matches the ready one's message. Called as
/// `select_impl! { $crate; endpoint => { arms }, ... }` by the runtime's `select!`.
#[proc_macro]
pub fn select_impl(input: TokenStream) -> TokenStream {
    match syn::parse::<select::Select>(input) {
        Ok(select) => select.expand().into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// `Debug` for a message enum of `proto!`, when its payloads implement `Debug`. Used by
/// generated code as `#[derive(__pipes::MessageDebug)]`; not a public API.
#[proc_macro_derive(MessageDebug)]
pub fn message_debug(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input).and_then(debug::expand) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// Compiles a protocol into a module of typed endpoints. Called as
/// `proto_impl! { $crate; protocols... }` by the runtime's `proto!`; see the `pipes` docs.
#[proc_macro]
pub fn proto_impl(input: TokenStream) -> TokenStream {
    let input = TokenStream2::from(input);
    let mut tokens = input.into_iter();
    let mut runtime = TokenStream2::new();
    for token in tokens.by_ref() {
        match &token {
            TokenTree::Punct(p) if p.as_char() == ';' => break,
            _ => runtime.extend([token]),
        }
    }
    expand(runtime, tokens.collect()).into()
}

fn expand(runtime: TokenStream2, body: TokenStream2) -> TokenStream2 {
    let source = Source::print(body);
    let span_at = |offset: usize| source.span_at(offset);
    let printed = |offset: usize| source.printed(offset);
    match proto_dsl::analyze(&source.text) {
        Ok(analysis) => proto_dsl::codegen::generate(
            &analysis,
            &proto_dsl::codegen::Options {
                runtime,
                source: &source.text,
                span_at: &span_at,
                printed: &printed,
            },
        ),
        Err(diagnostics) => {
            let errors = diagnostics.iter().map(|d| source.compile_error(d));
            // Stub modules keep `protocol::...` paths in user code from adding errors of
            // their own on top of the real ones.
            let mut stubs = TokenStream2::new();
            if let Ok(file) = proto_dsl::parse(&source.text) {
                let mut named = std::collections::BTreeSet::new();
                for protocol in &file.protocols {
                    let name = protocol.name.unraw();
                    if proto_dsl::check::is_keyword(name) || !named.insert(name) {
                        continue;
                    }
                    let (vis, name) = (&protocol.vis, Ident::new_raw(name, Span::call_site()));
                    stubs.extend(quote!(#[allow(dead_code)] #vis mod #name {}));
                }
            }
            quote!(#(#errors)* #stubs)
        }
    }
}

/// Whether a group's delimiters print as characters.
fn delimiters(delimiter: Delimiter) -> Option<(char, char)> {
    match delimiter {
        Delimiter::Parenthesis => Some(('(', ')')),
        Delimiter::Brace => Some(('{', '}')),
        Delimiter::Bracket => Some(('[', ']')),
        Delimiter::None => None,
    }
}
