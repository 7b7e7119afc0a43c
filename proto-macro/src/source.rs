//! The macro's source map: the invocation's tokens printed as text, with the byte range each
//! token landed at, so the compiler's byte ranges map back onto the user's spans.
//!
//! Printing the tokens (rather than reading the original text) works the same whether the
//! input was typed by a user or made by another macro, and keeps every range exact.
//!
//! Two kinds of token have no text that means what they mean, and are printed as text that
//! parses the same way, with a note of what they stand for ([`Printed`]), so that generated
//! code gets the input's own tokens back: an invisible group around a `macro_rules!` fragment
//! that needs one to stay one operand (printed in parentheses), and `$crate` (printed `crate`).

use proc_macro2::{Delimiter, Ident, Spacing, Span, TokenStream, TokenTree};
use proto_dsl::Diagnostic;
use proto_dsl::codegen::Printed;

use crate::delimiters;

/// Printed tokens and where each one is.
pub(crate) struct Source {
    /// The text handed to the protocol compiler.
    pub(crate) text: String,
    /// `(start, end, span)` of every printed token and delimiter, in text order.
    tokens: Vec<(usize, usize, Span)>,
    /// Where the text stands for something else, in text order.
    printed: Vec<(usize, Printed)>,
}

impl Source {
    pub(crate) fn print(stream: TokenStream) -> Source {
        let mut source = Source {
            text: String::new(),
            tokens: Vec::new(),
            printed: Vec::new(),
        };
        source.print_stream(stream, false);
        source
    }

    /// What the text at `offset` stands for, if not for what it spells.
    pub(crate) fn printed(&self, offset: usize) -> Option<Printed> {
        let index = self
            .printed
            .binary_search_by_key(&offset, |&(at, _)| at)
            .ok()?;
        Some(self.printed[index].1.clone())
    }

    fn push(&mut self, text: &str, span: Span) {
        let start = self.text.len();
        self.text.push_str(text);
        self.tokens.push((start, self.text.len(), span));
    }

    /// Prints `stream`; `in_attribute` when it is an attribute's contents, where a fragment
    /// is a meta item, which parentheses would change.
    fn print_stream(&mut self, stream: TokenStream, in_attribute: bool) {
        let mut tokens = stream.into_iter().peekable();
        // Whether the last token was the `#` (or `#!`) of an attribute.
        let mut after_hash = false;
        // The token before this one at this level.
        let mut before: Option<TokenTree> = None;
        while let Some(token) = tokens.next() {
            // `//! text` reaches a macro as the tokens `#![doc = " text"]`. In the protocol
            // language (and so in a `*.pipes` file) `//!` is a plain comment: it is left out
            // here too, so that a file's text means the same inside `proto! { .. }`.
            if is_inner_doc_start(&token, tokens.peek()) {
                let mut lookahead = tokens.clone();
                lookahead.next();
                if lookahead.next().as_ref().is_some_and(is_doc_group) {
                    tokens = lookahead;
                    continue;
                }
            }
            let hash = matches!(&token, TokenTree::Punct(p) if p.as_char() == '#'
                || p.as_char() == '!' && after_hash);
            let this = token.clone();
            match token {
                TokenTree::Group(group) => match delimiters(group.delimiter()) {
                    Some((open, close)) => {
                        let attribute = after_hash && group.delimiter() == Delimiter::Bracket;
                        self.push(open.encode_utf8(&mut [0; 4]), group.span_open());
                        self.text.push(' ');
                        self.print_stream(group.stream(), in_attribute || attribute);
                        self.push(close.encode_utf8(&mut [0; 4]), group.span_close());
                        self.text.push(' ');
                    }
                    None if !in_attribute
                        && needs_grouping(&group.stream(), before.as_ref(), tokens.peek()) =>
                    {
                        self.printed
                            .push((self.text.len(), Printed::InvisibleGroup));
                        self.push("(", group.span_open());
                        self.text.push(' ');
                        self.print_stream(group.stream(), false);
                        self.push(")", group.span_close());
                        self.text.push(' ');
                    }
                    None => {
                        // A block fragment (`$b:block`) keeps its braces, which rustc takes
                        // for the fragment's own: no `unused_braces` on them either.
                        if is_block(&group.stream()) {
                            self.printed
                                .push((self.text.len(), Printed::InvisibleGroup));
                        }
                        self.print_stream(group.stream(), in_attribute)
                    }
                },
                TokenTree::Ident(ident) if ident == "$crate" => {
                    let token = TokenTree::Ident(ident.clone());
                    self.printed.push((self.text.len(), Printed::Token(token)));
                    self.push("crate", ident.span());
                    self.text.push(' ');
                }
                TokenTree::Punct(punct) => {
                    self.push(punct.as_char().encode_utf8(&mut [0; 4]), punct.span());
                    // `->`, `::` and `'a` stay glued, as they were written.
                    if punct.spacing() == Spacing::Alone {
                        self.text.push(' ');
                    }
                }
                TokenTree::Ident(ident) => {
                    self.push(&ident.to_string(), ident.span());
                    self.text.push(' ');
                }
                TokenTree::Literal(literal) => {
                    self.push(&literal.to_string(), literal.span());
                    self.text.push(' ');
                }
            }
            after_hash = hash;
            before = Some(this);
        }
    }

    /// The span of the token at or just after `offset`; the last token's past the end.
    pub(crate) fn span_at(&self, offset: usize) -> Span {
        let index = self.tokens.partition_point(|&(_, end, _)| end <= offset);
        self.tokens
            .get(index)
            .or(self.tokens.last())
            .map_or_else(Span::call_site, |&(_, _, span)| span)
    }

    /// A `compile_error!` for a diagnostic, spanning the tokens its range covers.
    pub(crate) fn compile_error(&self, diagnostic: &Diagnostic) -> TokenStream {
        let range = &diagnostic.primary;
        let start = self.span_at(range.start);
        let end = self.span_at(range.end.saturating_sub(1).max(range.start));
        // `compile_error!` has one span and no labels: notes say where they point in words.
        let mut message = diagnostic.message.clone();
        for (range, note) in &diagnostic.notes {
            let at = self.span_at(range.start).start();
            message.push_str(&format!(
                "\nnote: {note} (line {}, column {})",
                at.line,
                at.column + 1
            ));
        }
        if let Some(help) = &diagnostic.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        // `compile_error!` spanning from the first to the last token, as syn's errors do.
        let compile_error = Ident::new("compile_error", start);
        let mut args = proc_macro2::Group::new(
            proc_macro2::Delimiter::Parenthesis,
            quote::quote_spanned!(end=> #message),
        );
        args.set_span(end);
        quote::quote_spanned!(start=> ::core::#compile_error! #args;)
    }
}

/// Whether an invisible group (a `macro_rules!` fragment: rustc keeps `$n:expr` given
/// `1 + 1` one operand) must be printed in parentheses to mean the same where it stands,
/// between the tokens `before` and `after` at its level (`None` at the edge of the enclosing
/// group). Only where needed, so that the text is what a user would write by hand (a `#[wire]`
/// protocol's fingerprint hashes it), and parentheses stand only where they are valid:
/// - a fragment followed by `.`, `?`, a call or an index: those bind to its last token
///   (`$e.len()` with `&[1, 2]`, `$l.pow(2)` with `-1`);
/// - otherwise, between tokens that could bind to a part of it (`$n * 2`, `&'static $t`), an
///   operator expression or a type of several bounds (`dyn Any + Sync`).
///
/// Anything else (one token, a path, a call, a visibility, a fragment between commas or
/// brackets: `Next<$l>` with `-1`) is printed as it is.
fn needs_grouping(
    stream: &TokenStream,
    before: Option<&TokenTree>,
    after: Option<&TokenTree>,
) -> bool {
    if stream.clone().into_iter().nth(1).is_none() || too_deep(stream) {
        // One token needs no grouping; a fragment too deep for the protocol compiler's
        // nesting guard is left to the guard, which refuses it, before syn recurses into it.
        return false;
    }
    if after.is_some_and(is_postfix) {
        return true;
    }
    let open = |token: Option<&TokenTree>, ends: &[char]| match token {
        None => true,
        Some(TokenTree::Punct(punct)) => ends.contains(&punct.as_char()),
        Some(_) => false,
    };
    if open(before, &[',', ';', '<', ':', '=']) && open(after, &[',', ';', '>']) {
        return false;
    }
    if let Ok(ty) = syn::parse2::<syn::Type>(stream.clone()) {
        return match ty {
            syn::Type::TraitObject(ty) => ty.bounds.len() > 1,
            syn::Type::ImplTrait(ty) => ty.bounds.len() > 1,
            _ => false,
        };
    }
    matches!(
        syn::parse2::<syn::Expr>(stream.clone()),
        Ok(syn::Expr::Binary(_)
            | syn::Expr::Unary(_)
            | syn::Expr::Reference(_)
            | syn::Expr::Cast(_)
            | syn::Expr::Range(_)
            | syn::Expr::RawAddr(_)
            | syn::Expr::Assign(_)
            | syn::Expr::Closure(_)
            | syn::Expr::Let(_))
    )
}

/// Whether `token` binds to the token before it tighter than any operator: a method call or
/// field (`.`), `?`, a call or an index.
fn is_postfix(token: &TokenTree) -> bool {
    match token {
        TokenTree::Punct(punct) => matches!(punct.as_char(), '.' | '?'),
        TokenTree::Group(group) => {
            matches!(
                group.delimiter(),
                Delimiter::Parenthesis | Delimiter::Bracket
            )
        }
        _ => false,
    }
}

/// Whether `stream` nests brackets (angle brackets too) deeper than the protocol compiler
/// takes ([`proto_dsl::parse::MAX_NESTING`]), which syn would recurse into without a limit.
fn too_deep(stream: &TokenStream) -> bool {
    fn deeper(stream: TokenStream, mut at: usize) -> bool {
        // Checked before going in, so this recursion stops at the limit too.
        if at > proto_dsl::parse::MAX_NESTING {
            return true;
        }
        for token in stream {
            match token {
                TokenTree::Group(group) if deeper(group.stream(), at + 1) => return true,
                TokenTree::Punct(punct) if punct.as_char() == '<' => at += 1,
                TokenTree::Punct(punct) if punct.as_char() == '>' => at = at.saturating_sub(1),
                _ => {}
            }
            if at > proto_dsl::parse::MAX_NESTING {
                return true;
            }
        }
        false
    }
    deeper(stream.clone(), 0)
}

/// Whether `stream` is one block, `{ .. }`.
fn is_block(stream: &TokenStream) -> bool {
    let mut trees = stream.clone().into_iter();
    matches!(
        (trees.next(), trees.next()),
        (Some(TokenTree::Group(group)), None) if group.delimiter() == Delimiter::Brace
    )
}

/// Whether `token` and `next` are the `#!` of an inner attribute.
fn is_inner_doc_start(token: &TokenTree, next: Option<&TokenTree>) -> bool {
    matches!(
        (token, next),
        (TokenTree::Punct(hash), Some(TokenTree::Punct(bang)))
            if hash.as_char() == '#' && bang.as_char() == '!'
    )
}

/// Whether `token` is the `[doc = "..."]` of a doc comment.
fn is_doc_group(token: &TokenTree) -> bool {
    let TokenTree::Group(group) = token else {
        return false;
    };
    let mut inner = group.stream().into_iter();
    group.delimiter() == proc_macro2::Delimiter::Bracket
        && matches!(inner.next(), Some(TokenTree::Ident(ident)) if ident == "doc")
        && matches!(inner.next(), Some(TokenTree::Punct(eq)) if eq.as_char() == '=')
}
