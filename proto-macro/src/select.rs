//! `select!`: wait on several endpoints and `match` the message of the one that is ready.
//!
//! Parse: `runtime; endpoint => { Message(bindings) -> next { body }, ..., closed => { body } },
//! ..., timeout(duration) => { body }`. Expand: one `selecti` (or `selecti_timeout`) over all
//! endpoints, then a `match` on the index; the ready endpoint is received from (it cannot block)
//! and its message matched against the arms. `select_async!` (an `async;` after the runtime)
//! awaits `selecti_async` instead, over `&mut` borrows of the endpoints (so its future is
//! `Send` when they are), and has no timeout arm. The arms are a plain `match` on the state's enum,
//! so a forgotten message is rustc's own non-exhaustive-patterns error, at the endpoint.
//!
//! An endpoint written as a place (a variable, a field, a reference to one) is waited on and
//! then received from where it is, so the ones not chosen stay with the caller. Any other
//! expression (`ports.remove(0)`) is evaluated once, first, into a hidden local: waiting on
//! one evaluation and receiving from another would take a different endpoint.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Block, Expr, Pat, Path, Token, braced, parenthesized};

/// The whole invocation.
pub(crate) struct Select {
    runtime: TokenStream,
    /// `select_async!`: wait with `selecti_async(..).await` instead of blocking.
    asynchronous: bool,
    endpoints: Vec<Endpoint>,
    timeout: Option<(Expr, Block)>,
}

/// `endpoint => { arms }`.
struct Endpoint {
    expr: Expr,
    arms: Vec<Arm>,
    closed: Option<Block>,
}

/// `Message(bindings) -> next { body }`, where `next` is a pattern or `!`.
struct Arm {
    message: Path,
    bindings: Option<Vec<Pat>>,
    next: Option<Pat>,
    body: Block,
}

mod kw {
    syn::custom_keyword!(closed);
    syn::custom_keyword!(timeout);
}

impl Parse for Select {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut runtime = TokenStream::new();
        while !input.peek(Token![;]) {
            runtime.extend([input.parse::<proc_macro2::TokenTree>()?]);
        }
        input.parse::<Token![;]>()?;
        let asynchronous = input.peek(Token![async]) && input.peek2(Token![;]);
        if asynchronous {
            input.parse::<Token![async]>()?;
            input.parse::<Token![;]>()?;
        }
        let mut endpoints = Vec::new();
        let mut timeout = None;
        while !input.is_empty() {
            if input.peek(kw::timeout) && input.peek2(syn::token::Paren) {
                let keyword = input.parse::<kw::timeout>()?;
                if asynchronous {
                    // The runtime has no timer: an executor's own does this job.
                    return Err(syn::Error::new(
                        keyword.span,
                        "select_async! has no `timeout(..)` arm: race it against your \
                         executor's timer",
                    ));
                }
                let duration;
                parenthesized!(duration in input);
                let duration: Expr = duration.parse()?;
                input.parse::<Token![=>]>()?;
                timeout = Some((duration, input.parse()?));
                input.parse::<Option<Token![,]>>()?;
                if !input.is_empty() {
                    return Err(input.error("the `timeout(..)` arm comes last"));
                }
                break;
            }
            endpoints.push(input.parse()?);
            input.parse::<Option<Token![,]>>()?;
        }
        if endpoints.is_empty() {
            return Err(syn::Error::new(
                Span::call_site(),
                "select! needs at least one endpoint: `endpoint => { Message -> next { .. } }`",
            ));
        }
        Ok(Select {
            runtime,
            asynchronous,
            endpoints,
            timeout,
        })
    }
}

impl Parse for Endpoint {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let expr = Expr::parse_without_eager_brace(input)?;
        input.parse::<Token![=>]>()?;
        let body;
        braced!(body in input);
        let mut arms = Vec::new();
        let mut closed = None;
        while !body.is_empty() {
            if body.peek(kw::closed) && body.peek2(Token![=>]) {
                body.parse::<kw::closed>()?;
                body.parse::<Token![=>]>()?;
                closed = Some(body.parse()?);
                body.parse::<Option<Token![,]>>()?;
                if !body.is_empty() {
                    return Err(body.error("the `closed` arm comes last in an endpoint's block"));
                }
                break;
            }
            arms.push(body.parse()?);
            body.parse::<Option<Token![,]>>()?;
        }
        Ok(Endpoint { expr, arms, closed })
    }
}

impl Parse for Arm {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let message: Path = input.parse()?;
        let bindings = if input.peek(syn::token::Paren) {
            let content;
            parenthesized!(content in input);
            let pats = content.parse_terminated(Pat::parse_single, Token![,])?;
            Some(pats.into_iter().collect())
        } else {
            None
        };
        input.parse::<Token![->]>()?;
        // `-> name`, `-> mut name`, `-> _` or `-> !`: a name, not a full pattern, because a
        // pattern followed by the body's braces would parse as a struct pattern.
        let next = if input.peek(Token![!]) {
            input.parse::<Token![!]>()?;
            None
        } else if input.peek(Token![_]) {
            let underscore: Token![_] = input.parse()?;
            Some(Pat::Wild(syn::PatWild {
                attrs: Vec::new(),
                underscore_token: underscore,
            }))
        } else {
            let mutability: Option<Token![mut]> = input.parse()?;
            let ident: syn::Ident = input.parse().map_err(|error| {
                syn::Error::new(
                    error.span(),
                    "expected the name for the next state's endpoint, `_`, or `!`",
                )
            })?;
            Some(Pat::Ident(syn::PatIdent {
                attrs: Vec::new(),
                by_ref: None,
                mutability,
                ident,
                subpat: None,
            }))
        };
        let body = input.parse()?;
        Ok(Arm {
            message,
            bindings,
            next,
            body,
        })
    }
}

/// Whether evaluating `expr` again gives the same endpoint and does nothing else: a place, or
/// a reference to one.
fn is_place(expr: &Expr) -> bool {
    match expr {
        Expr::Path(_) => true,
        Expr::Field(field) => is_place(&field.base),
        Expr::Paren(paren) => is_place(&paren.expr),
        Expr::Reference(reference) => is_place(&reference.expr),
        Expr::Unary(unary) => matches!(unary.op, syn::UnOp::Deref(_)) && is_place(&unary.expr),
        Expr::Index(index) => {
            is_place(&index.expr) && matches!(*index.index, Expr::Lit(_) | Expr::Path(_))
        }
        _ => false,
    }
}

impl Select {
    pub(crate) fn expand(&self) -> TokenStream {
        let rt = &self.runtime;
        // Mixed-site names cannot capture or shadow the user's variables in arm bodies.
        let message = Ident::new("message", Span::mixed_site());
        let closed_error = Ident::new("closed", Span::mixed_site());
        // Each endpoint as the expansion names it: the user's place, or a hidden local that
        // holds the one evaluation of any other expression.
        let mut locals = Vec::new();
        let places: Vec<TokenStream> = self
            .endpoints
            .iter()
            .enumerate()
            .map(|(index, endpoint)| {
                let expr = &endpoint.expr;
                if is_place(expr) {
                    return quote!(#expr);
                }
                let local = Ident::new(&format!("endpoint{index}"), Span::mixed_site());
                locals.push(quote_spanned! {expr.span()=>
                    #[allow(unused_mut)]
                    let mut #local = #expr;
                });
                quote_spanned!(expr.span()=> #local)
            })
            .collect();
        let refs = places
            .iter()
            .map(|place| quote_spanned!(place.span()=> &#place as &dyn #rt::select::Selectable));
        // The async wait borrows each endpoint exclusively, in a list that keeps every
        // endpoint's type, `(&mut a, (&mut b, ()))`: the future is then `Send` exactly when
        // the endpoints are (a shared borrow of an endpoint never is), so it runs in a task of
        // a multi-threaded executor. Each borrow checks its endpoint at the user's token.
        let list = places.iter().rev().fold(quote!(()), |rest, place| {
            let borrow = quote_spanned!(place.span()=> #rt::__private::selectable(&mut #place));
            quote!((#borrow, #rest))
        });
        let ready = match &self.timeout {
            None if self.asynchronous => {
                quote!(::core::option::Option::Some(#rt::select::selecti_async(#list).await))
            }
            None => quote!(::core::option::Option::Some(#rt::select::selecti(&[#(#refs),*]))),
            Some((duration, _)) => quote!(#rt::select::selecti_timeout(&[#(#refs),*], #duration)),
        };
        let branches =
            self.endpoints
                .iter()
                .zip(&places)
                .enumerate()
                .map(|(index, (endpoint, place))| {
                    let expr = &endpoint.expr;
                    let arms = endpoint.arms.iter().map(Arm::expand);
                    let closed = match &endpoint.closed {
                        Some(body) => quote!(::core::result::Result::Err(_) => #body),
                        None => quote! {
                            ::core::result::Result::Err(#closed_error) => {
                                ::core::panic!("select!: {}", #closed_error)
                            }
                        },
                    };
                    let checks = endpoint.arms.iter().map(|arm| arm.check(rt, &message));
                    // rustc reports a forgotten message at the scrutinee, and a moved endpoint
                    // at the receive: both at the user's endpoint, not the whole invocation.
                    let scrutinee = Ident::new("message", expr.span().resolved_at(message.span()));
                    let message_match = quote_spanned! {expr.span()=>
                        {
                            #(#checks)*
                            match #scrutinee {
                                #(#arms)*
                            }
                        }
                    };
                    // A call whose every token is at the endpoint (`$crate` cannot be moved),
                    // so a moved endpoint is reported there.
                    let function = Ident::new("receive", expr.span().resolved_at(message.span()));
                    let receive = quote_spanned!(expr.span()=> #function(#place));
                    quote! {
                        ::core::option::Option::Some(#index) => {
                            let #function = #rt::Recv::recv;
                            match #receive {
                                ::core::result::Result::Ok(#message) => #message_match,
                                #closed
                            }
                        }
                    }
                });
        let timeout = match &self.timeout {
            Some((_, body)) => quote!(::core::option::Option::None => #body,),
            None => quote!(),
        };
        let matched = quote! {
            match #ready {
                #(#branches)*
                #timeout
                _ => ::core::unreachable!("select!: no such endpoint"),
            }
        };
        if locals.is_empty() {
            matched
        } else {
            quote!({ #(#locals)* #matched })
        }
    }
}

impl Arm {
    /// The arm's pattern and body. The pattern is spanned at the arm's message, so that rustc's
    /// errors about it (a message of another state) point at the arm. A `..` stands before the
    /// next state's endpoint: with as many bindings as the payload (which [`Arm::check`]
    /// makes sure of) it matches nothing, and with too few it keeps rustc from counting the
    /// endpoint's field in an error of its own.
    fn expand(&self) -> TokenStream {
        let (message, body) = (&self.message, &self.body);
        let bindings = self.bindings.iter().flatten();
        let rest = self.has_rest();
        let pattern = match (&self.bindings, &self.next) {
            (None, None) => quote_spanned!(message.span()=> #message { .. }),
            // The user's own `..` stands for whatever payload is left.
            (_, Some(next)) if rest => {
                quote_spanned!(message.span()=> #message(#(#bindings,)* #next))
            }
            (_, Some(next)) => quote_spanned!(message.span()=> #message(#(#bindings,)* .., #next)),
            (Some(_), None) => quote_spanned!(message.span()=> #message(#(#bindings),*)),
        };
        // The `..` is not the user's, but it carries their span: clippy would take it for
        // theirs (`Item(_, _)` would read as `Item(_, _, .., next)`).
        let allow = (self.next.is_some() && !rest)
            .then(|| quote!(#[allow(clippy::unneeded_wildcard_pattern)]));
        quote!(#allow #pattern => #body)
    }

    /// Whether the user's bindings hold a `..`: then they bind any number of payload values.
    fn has_rest(&self) -> bool {
        self.bindings
            .iter()
            .flatten()
            .any(|pat| matches!(pat, Pat::Rest(_)))
    }

    /// A check, at the arm's message, that an arm of a message leading to a state binds as
    /// many payload values as the message carries, and that the message is one of the
    /// endpoint's state (see the runtime's `arm.rs`): rustc's own errors would count the
    /// endpoint field of the message's variant. `received` is the message received, whose
    /// type fixes a generic state's parameters. Arms that end the protocol (`-> !`) need no
    /// check: their variants have no endpoint field. The check's names are mixed-site (they
    /// cannot meet the user's) and located at the arm's message, where its errors point.
    fn check(&self, rt: &TokenStream, received: &Ident) -> TokenStream {
        // A `..` binds any number: then rustc's own errors are all there is.
        if self.next.is_none() || self.has_rest() {
            return quote!();
        }
        let message = &self.message;
        let at_arm = message.span().resolved_at(Span::mixed_site());
        let mut count =
            proc_macro2::Literal::usize_unsuffixed(self.bindings.as_ref().map_or(0, Vec::len));
        count.set_span(at_arm);
        let check = Ident::new("__pipes_arm_leads_on", at_arm);
        let received = Ident::new(&received.to_string(), at_arm);
        // Every token of the call at the same span: rustc reports an unmet bound at the whole
        // call, which is the arm's message only if its first and last tokens agree.
        quote_spanned! {at_arm=>
            {
                use #rt::__private::arm_leads_on as #check;
                #check::<#count, _, _, _, _>(#message, &#received);
            }
        }
    }
}
