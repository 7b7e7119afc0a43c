//! Code generation: a checked protocol becomes the module of DESIGN section 3 (`init()`, one
//! enum per state, `client` and `server` endpoint types, send and receive methods, `Recv`
//! impls, docs on every item). Output is built with `quote` only, names everything through the
//! runtime's `__private` module (and the user's types through aliases that name them as the
//! call site does: `payloads.rs`), and depends on nothing but the input, so it is
//! deterministic.
//!
//! Three layouts share one shape (`layout.rs` decides which):
//! - a *buffer* (bounded protocols): one session buffer from `init()` with a slot per state;
//! - *lanes* (unbounded ones): two lanes from `init()`, one per direction, each carrying a
//!   hidden enum of everything its sender sends (`__FromClient`, `__FromServer`);
//! - *packets*: each message in a fresh packet ([`entangle`]), carrying the receiver's
//!   endpoint for the next state, as in 2012 (oneshots, and protocols whose states do not share
//!   one list of generic parameters).
//!
//! With a buffer or lanes, what travels is a hidden payload-only enum per state (`__State`);
//! the receiver builds its next endpoint from its own side of the session (`__arrive`), so no
//! endpoint ever travels and nothing is allocated per message.
//!
//! What is the same for every state (the receive methods, `Recv`, `IntoFuture`, `Debug`) is
//! written once in the runtime and invoked per state with `__endpoints!`; message enums get
//! `Debug` from the `MessageDebug` derive.
//!
//! [`entangle`]: https://docs.rs/pipes (pipes::__private::entangle)

use std::collections::HashMap;
use std::ops::Range;

use proc_macro2::{Group, Ident, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote};

use crate::Analysis;
use crate::ast::{Direction, Message, Name, Next, Protocol, State};
use crate::check::method_name;
use crate::layout::Layout;
use crate::liveness::Liveness;

mod payloads;
mod wire;

/// How to generate: where the runtime is, and where the user's tokens are.
pub struct Options<'a> {
    /// A path to the runtime crate: `$crate` from the macro, `::pipes` from build.rs.
    pub runtime: TokenStream,
    /// The source the analysis was made from (for the transition table in the docs).
    pub source: &'a str,
    /// The span of the user's token at a byte offset of `source`, so errors rustc finds in
    /// generated code point at the protocol as written. `Span::call_site()` outside a macro.
    pub span_at: &'a dyn Fn(usize) -> Span,
    /// What the text at a byte offset of `source` was printed for, when that is not the token
    /// it spells: a macro's input can hold tokens that have no text of their own. `None`
    /// everywhere outside a macro.
    pub printed: &'a dyn Fn(usize) -> Option<Printed>,
}

/// A token of a macro's input that the source spells as something else (see
/// [`Options::printed`]); generated code gets the input's token back.
#[derive(Clone, Debug)]
pub enum Printed {
    /// `(` here opens an invisible group: a `macro_rules!` fragment (`$n:expr` given
    /// `1 + 1`, `$t:ty` given `dyn Any + Sync`) that must stay one operand, as rustc keeps
    /// it. The source writes the group in parentheses where its neighbours need them, so the
    /// protocol compiler parses it with that meaning. Generated code keeps them (rustc reads
    /// a proc macro's invisible groups as if they were not there), spanned as the macro's own
    /// tokens so that `unused_parens` says nothing of parentheses the user did not write.
    /// Or `{` here opens a block fragment (`$b:block`), whose braces get that span too.
    InvisibleGroup,
    /// The identifier here stands for this token, which has no spelling a parser accepts
    /// (`$crate`, written `crate`).
    Token(TokenTree),
}

/// Generates the modules of every protocol in `analysis`. With the `diagram` feature, each
/// module's docs also hold a state diagram, as an inline SVG picture.
pub fn generate(analysis: &Analysis, options: &Options) -> TokenStream {
    generate_with_diagrams(analysis, options, cfg!(feature = "diagram"))
}

/// [`generate`], with the diagrams in the module docs chosen by `diagrams` instead of
/// the `diagram` feature: for build.rs generation, the command line and tests, which decide
/// per call.
pub fn generate_with_diagrams(
    analysis: &Analysis,
    options: &Options,
    diagrams: bool,
) -> TokenStream {
    analysis
        .layouts()
        .map(|(protocol, liveness, layout)| {
            let mut generator = Gen::new(protocol, liveness, layout, options);
            generator.diagram = diagrams;
            generator.module()
        })
        .collect()
}

/// The two ends of a session.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Client,
    Server,
}

impl Side {
    fn module(self) -> Ident {
        match self {
            Side::Client => format_ident!("client"),
            Side::Server => format_ident!("server"),
        }
    }

    fn word(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }

    fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }

    /// Whether this side sends in a state (protocols are written from the client's side).
    fn sends_in(self, state: &State) -> bool {
        matches!(
            (self, state.direction),
            (Side::Client, Some(Direction::Send)) | (Side::Server, Some(Direction::Recv))
        )
    }

    /// The side that sends in a state with messages.
    fn sender_of(state: &State) -> Side {
        if Side::Client.sends_in(state) {
            Side::Client
        } else {
            Side::Server
        }
    }
}

struct Gen<'a> {
    protocol: &'a Protocol,
    /// State names to indices, built once: `Gen::state` runs for every message.
    states: HashMap<&'a str, usize>,
    options: &'a Options<'a>,
    /// `<runtime>::__private`.
    rt: TokenStream,
    /// How sessions travel (see `layout.rs`).
    layout: &'a Layout,
    liveness: &'a Liveness,
    /// Whether the module docs end with a state diagram (SVG).
    diagram: bool,
    /// The aliases that name the user's types as the call site does (see `payloads.rs`).
    payloads: payloads::Payloads,
}

impl<'a> Gen<'a> {
    fn new(
        protocol: &'a Protocol,
        liveness: &'a Liveness,
        layout: &'a Layout,
        options: &'a Options<'a>,
    ) -> Self {
        let mut generator = Gen {
            protocol,
            states: protocol.state_map(),
            options,
            rt: quote!(__pipes),
            layout,
            liveness,
            diagram: false,
            payloads: payloads::Payloads::default(),
        };
        generator.payloads = generator.collect_payloads();
        generator
    }

    /// Whether sessions live in one buffer.
    fn buffered(&self) -> bool {
        matches!(self.layout, Layout::Buffer { .. })
    }

    /// Whether sessions run over two lanes.
    fn lanes(&self) -> bool {
        matches!(self.layout, Layout::Lanes)
    }

    /// Whether messages travel without endpoints in them (a buffer or lanes): what travels is a
    /// hidden payload-only enum per state (`__State`), and the receiver builds its endpoint for
    /// the next state from its own side of the session.
    fn sessioned(&self) -> bool {
        self.buffered() || self.lanes()
    }

    // ----- names and spans

    fn span(&self, range: &Range<usize>) -> Span {
        (self.options.span_at)(range.start)
    }

    fn ident(&self, name: &Name) -> Ident {
        let span = self.span(&name.span);
        match name.text.strip_prefix("r#") {
            Some(raw) => Ident::new_raw(raw, span),
            None => Ident::new(&name.text, span),
        }
    }

    fn state_ident(&self, state: &State) -> Ident {
        self.ident(&state.name)
    }

    /// The hidden payload-only enum that travels in a bounded protocol's slot.
    fn slot_message_ident(&self, state: &State) -> Ident {
        format_ident!(
            "__{}",
            state.name.unraw(),
            span = self.span(&state.name.span)
        )
    }

    fn method_ident(&self, message: &Message) -> Ident {
        Ident::new(
            &method_name(&message.name.text),
            self.span(&message.name.span),
        )
    }

    fn state(&self, name: &Name) -> &'a State {
        let index = self
            .states
            .get(name.unraw())
            .expect("checked: every target state exists");
        &self.protocol.states[*index]
    }

    fn text(&self, range: &Range<usize>) -> &'a str {
        self.options.source.get(range.clone()).unwrap_or("")
    }

    // ----- generics

    /// `<T: Bound, ...>` as declared, for impls and `init`.
    fn impl_generics(&self, state: &State) -> TokenStream {
        let generics = &state.generics;
        let params = generics
            .params
            .iter()
            .map(|param| self.respan(param.syn.to_token_stream(), &param.span));
        if generics.params.is_empty() {
            quote!()
        } else {
            quote!(<#(#params),*>)
        }
    }

    /// `<T, ...>` without bounds, for type definitions (bounds belong on impls); but for
    /// `?Sized`, which relaxes a default instead of adding a bound.
    fn decl_generics(&self, state: &State) -> TokenStream {
        let params = state.generics.params.iter().map(|param| match &param.syn {
            syn::GenericParam::Type(t) if is_unsized(t) => {
                let ident = &t.ident;
                quote!(#ident: ?Sized)
            }
            syn::GenericParam::Type(t) => t.ident.to_token_stream(),
            syn::GenericParam::Lifetime(l) => l.lifetime.to_token_stream(),
            // As written: its type may hold a macro's `$crate`, which only `respan` gives back.
            syn::GenericParam::Const(_) => self.respan(param.syn.to_token_stream(), &param.span),
        });
        if state.generics.params.is_empty() {
            // Written out, so the generics of a state's enum and types are the macro's tokens:
            // left out, rustc would place them just after the user's state name and, for a
            // misspelt payload type, suggest declaring it as a parameter there (`Open<Strng>:
            // send`, which is no protocol).
            quote!(<>)
        } else {
            quote!(<#(#params),*>)
        }
    }

    /// `<T, ...>`, the state's parameters used as arguments.
    fn ty_generics(&self, state: &State) -> TokenStream {
        let (_, ty_generics, _) = state.generics.syn.split_for_impl();
        ty_generics.to_token_stream()
    }

    /// The type arguments of a transition, `<u32, T>`, as written.
    fn next_args(&self, message: &Message) -> TokenStream {
        match &message.next {
            Next::State { args, .. } if !args.is_empty() => {
                let args = args.iter().map(|arg| match &arg.syn {
                    syn::GenericArgument::Type(ty) => self.user_type(ty, &arg.span),
                    other => self.respan(other.to_token_stream(), &arg.span),
                });
                quote!(<#(#args),*>)
            }
            _ => quote!(),
        }
    }

    /// A `PhantomData` type that uses every parameter, for types that hold no packet.
    fn phantom(&self, state: &State) -> TokenStream {
        let rt = &self.rt;
        let uses = state
            .generics
            .syn
            .params
            .iter()
            .filter_map(|param| match param {
                // A tuple field and a return type must be sized: a pointer to `T` is, and uses
                // `T` the same way.
                syn::GenericParam::Type(t) if is_unsized(t) => {
                    let ident = &t.ident;
                    Some(quote!(*const #ident))
                }
                syn::GenericParam::Type(t) => Some(t.ident.to_token_stream()),
                syn::GenericParam::Lifetime(l) => {
                    let lifetime = &l.lifetime;
                    Some(quote!(&#lifetime ()))
                }
                syn::GenericParam::Const(_) => None,
            });
        quote!(#rt::PhantomData<fn() -> (#(#uses,)*)>)
    }

    // ----- types seen from the protocol module

    /// `client::State<args>`: a side's endpoint for the state a message leads to.
    fn next_endpoint_ty(&self, side: Side, message: &Message) -> Option<TokenStream> {
        let Next::State { name, .. } = &message.next else {
            return None;
        };
        let (module, state, args) = (side.module(), self.ident(name), self.next_args(message));
        Some(quote!(#module::#state #args))
    }

    /// The payload types of a message, as the module names them (see `payloads.rs`).
    fn payload_types(&self, message: &Message) -> Vec<TokenStream> {
        message
            .payload
            .iter()
            .map(|ty| self.user_type(&ty.syn, &ty.span))
            .collect()
    }

    /// What a failed send hands back: `()`, the one value, or a tuple.
    fn payload_tuple_ty(&self, message: &Message) -> TokenStream {
        match self.payload_types(message).as_slice() {
            [one] => one.clone(),
            many => quote!((#(#many),*)),
        }
    }

    fn payload_vars(message: &Message) -> Vec<Ident> {
        (0..message.payload.len())
            .map(|i| format_ident!("p{}", i))
            .collect()
    }

    fn payload_tuple(message: &Message) -> TokenStream {
        match Self::payload_vars(message).as_slice() {
            [one] => one.to_token_stream(),
            many => quote!((#(#many),*)),
        }
    }

    // ----- docs

    fn docs(&self, meta: &crate::ast::Meta) -> TokenStream {
        let docs = meta.docs.iter().map(|doc| {
            let text = &doc.text;
            quote!(#[doc = #text])
        });
        quote!(#(#docs)*)
    }

    fn attrs(&self, meta: &crate::ast::Meta) -> TokenStream {
        let attrs = meta
            .attrs
            .iter()
            .map(|attr| self.respan(attr.syn.to_token_stream(), &attr.span));
        quote!(#(#attrs)*)
    }

    /// The user's `#[cfg]`s alone, for what is generated per message besides its variant and
    /// its send method (hidden enums' variants, match arms): other attributes (`#[deprecated]`,
    /// `#[doc = ..]`) are the user's items' own, and on a match arm rustc warns of them.
    fn cfg_attrs(&self, meta: &crate::ast::Meta) -> TokenStream {
        let attrs = meta
            .attrs
            .iter()
            .filter(|attr| attr.syn.path().is_ident("cfg"))
            .map(|attr| self.respan(attr.syn.to_token_stream(), &attr.span));
        quote!(#(#attrs)*)
    }

    /// Whether a message of `state` is under `#[cfg]`: it may be compiled out, and code
    /// written for all of them may then leave a variable unused or a pattern unreachable,
    /// which rustc lints in build.rs output (no macro expansion quiets it there).
    fn has_cfg(state: &State) -> bool {
        state.messages.iter().any(|message| {
            message
                .meta
                .attrs
                .iter()
                .any(|attr| attr.syn.path().is_ident("cfg"))
        })
    }

    /// The user's docs, or `fallback` when there are none.
    fn docs_or(&self, meta: &crate::ast::Meta, fallback: String) -> TokenStream {
        if meta.docs.is_empty() {
            let fallback = format!(" {fallback}");
            quote!(#[doc = #fallback])
        } else {
            self.docs(meta)
        }
    }

    fn leads_to(&self, message: &Message) -> String {
        match &message.next {
            Next::End { .. } => "ends the protocol".to_string(),
            Next::State { .. } => {
                format!("leads to `{}`", crate::diagram::next_text(&message.next))
            }
        }
    }

    /// The module docs: the user's, then a table of states and transitions (and a diagram of
    /// them, if asked for).
    fn module_docs(&self) -> TokenStream {
        let protocol = self.protocol;
        let name = protocol.name.unraw();
        let mut table = format!(
            "\n\n# Protocol `{name}`\n\nWritten from the client's side; `init()` returns the \
             server's and the client's endpoints for the start state `{}`. {}\n\n\
             | State | Sent by | Message | Next |\n|---|---|---|---|\n",
            protocol.states[0].name.unraw(),
            self.layout.describe(protocol)
        );
        for row in crate::diagram::transitions(protocol) {
            let state = protocol.states[row.state].name.unraw();
            // A `|` would end the table cell.
            let cell = |text: &str| format!("`{}`", text.replace('|', "\\|"));
            match (row.sender, row.message) {
                (Some(sender), Some(message)) => table.push_str(&format!(
                    "| `{state}` | {sender} | {} | {} |\n",
                    cell(&message),
                    cell(row.next.as_deref().unwrap_or("!"))
                )),
                _ => table.push_str(&format!("| `{state}` | - | (ends) | |\n")),
            }
        }
        if self.diagram {
            // Inline HTML, which rustdoc shows as a picture: a blank line before it, none in it.
            table.push_str(&format!("\n{}\n", crate::diagram::svg(protocol)));
        }
        let docs = self.docs(&protocol.meta);
        let generated = if protocol.meta.docs.is_empty() {
            format!(" The `{name}` protocol.{table}")
        } else {
            table
        };
        quote!(#docs #[doc = #generated])
    }

    // ----- the module

    fn module(&self) -> TokenStream {
        let protocol = self.protocol;
        let (vis, name) = (&protocol.vis, self.ident(&protocol.name));
        let runtime = &self.options.runtime;
        let docs = self.module_docs();
        let attrs = self.attrs(&protocol.meta);
        let init = self.init();
        let enums = protocol.states.iter().map(|state| self.message_enum(state));
        let buffer = self.buffer();
        let endpoints = |side: Side| {
            let module = side.module();
            let doc = format!(
                " The {}'s endpoints, one per state: each is used once, and sending or \
                 receiving returns the endpoint for the next state.",
                side.word()
            );
            let types = protocol
                .states
                .iter()
                .map(|state| self.endpoint_type(side, state));
            quote! {
                #[doc = #doc]
                pub mod #module {
                    use super::__pipes;
                    #(#types)*
                }
            }
        };
        let (client, server) = (endpoints(Side::Client), endpoints(Side::Server));
        let impls = protocol
            .states
            .iter()
            .map(|state| self.endpoint_impls(state));
        let wire = self.wire();
        let payloads = self.payload_module();
        quote! {
            #docs
            #attrs
            #[allow(non_camel_case_types, non_snake_case, deprecated, clippy::all)]
            #vis mod #name {
                // For what names things besides the user's types (`__super`): bounds,
                // const parameters' types, attributes.
                #[allow(unused_imports)]
                use super::*;
                use #runtime::__private as __pipes;
                #payloads

                #init
                #(#enums)*
                #buffer
                #client
                #server
                #(#impls)*
                #wire
            }
        }
    }

    /// `init()`: a new session, `(server, client)` as in the tutorial.
    fn init(&self) -> TokenStream {
        let rt = &self.rt;
        let start = &self.protocol.states[0];
        let (state, impl_generics, ty_generics) = (
            self.state_ident(start),
            self.impl_generics(start),
            self.ty_generics(start),
        );
        let doc = format!(
            " Starts a session of `{}`: returns the server's and the client's endpoints for the \
             start state `{}`.",
            self.protocol.name.unraw(),
            start.name.unraw()
        );
        let body = if start.messages.is_empty() {
            quote!((server::#state(#rt::PhantomData), client::#state(#rt::PhantomData)))
        } else if self.lanes() {
            let (server, client) = (
                self.endpoint_in_session(Side::Server, start, &format_ident!("server")),
                self.endpoint_in_session(Side::Client, start, &format_ident!("client")),
            );
            quote! {
                let (server, client) = #rt::duplex();
                (#server, #client)
            }
        } else if self.buffered() {
            let slots = self.slot_states().map(|state| {
                let field = self.state_ident(state);
                quote!(#field: #rt::Slot::new())
            });
            let (server, client) = (
                self.endpoint_in_session(Side::Server, start, &format_ident!("server")),
                self.endpoint_in_session(Side::Client, start, &format_ident!("client")),
            );
            // Each slot is sent by one side and received by the other, never sent twice before
            // it is received: the runtime checks that (a misuse panics) rather than trusting
            // it, since whatever generated code calls, user code can call too.
            quote! {
                let slots = __Buffer {
                    #(#slots,)*
                    _params: #rt::PhantomData,
                };
                let (server, client) = #rt::session(slots);
                (#server, #client)
            }
        } else {
            let (server, client) = (
                self.endpoint_of_pair(Side::Server, start),
                self.endpoint_of_pair(Side::Client, start),
            );
            quote! {
                let (send, recv) = #rt::entangle();
                (#server, #client)
            }
        };
        quote! {
            #[doc = #doc]
            #[must_use]
            pub fn init #impl_generics () -> (server::#state #ty_generics, client::#state #ty_generics) {
                #body
            }
        }
    }

    /// A side's endpoint built from a fresh `(send, recv)` pair of packets.
    fn endpoint_of_pair(&self, side: Side, state: &State) -> TokenStream {
        let (module, name) = (side.module(), self.state_ident(state));
        let packet = if side.sends_in(state) {
            quote!(send)
        } else {
            quote!(recv)
        };
        quote!(#module::#name(#packet))
    }

    /// A side's endpoint built from its side of the session: its share of the buffer, or its
    /// lanes.
    fn endpoint_in_session(&self, side: Side, state: &State, session: &Ident) -> TokenStream {
        let (module, name) = (side.module(), self.state_ident(state));
        if self.lanes() {
            return quote!(#module::#name(#session));
        }
        let method = if side.sends_in(state) {
            quote!(sender)
        } else {
            quote!(receiver)
        };
        quote!(#module::#name(#session.#method(|buffer| &buffer.#name)))
    }

    /// The states that have a slot in the session buffer: those with messages.
    fn slot_states(&self) -> impl Iterator<Item = &'a State> {
        self.protocol
            .states
            .iter()
            .filter(|state| !state.messages.is_empty())
    }

    /// The enum of a state's messages, as its receiver gets them.
    fn message_enum(&self, state: &State) -> TokenStream {
        if state.messages.is_empty() {
            return quote!();
        }
        let rt = &self.rt;
        let name = self.state_ident(state);
        let generics = self.decl_generics(state);
        let receiver = Side::sender_of(state).other();
        let doc = format!(
            " The messages of state `{}`, as the {} receives them: each with its payload and \
             the {}'s endpoint for the next state.",
            state.name.unraw(),
            receiver.word(),
            receiver.word()
        );
        let docs = self.docs(&state.meta);
        let attrs = self.attrs(&state.meta);
        let mut used = String::new();
        let variants: Vec<TokenStream> = state
            .messages
            .iter()
            .map(|message| {
                let variant = self.ident(&message.name);
                let fallback = format!("`{}`: {}.", message.name.unraw(), self.leads_to(message));
                let docs = self.docs_or(&message.meta, fallback);
                let attrs = self.attrs(&message.meta);
                let payload = self.payload_types(message);
                let next = self.next_endpoint_ty(receiver, message);
                let fields: Vec<TokenStream> = payload.into_iter().chain(next).collect();
                // Parentheses at the message's name (in the macro's context) make the
                // variant's span the message, for rustc's "variant defined here".
                let at_message = Span::call_site().located_at(variant.span());
                let fields = if fields.is_empty() {
                    quote!()
                } else {
                    quote::quote_spanned!(at_message=> (#(#fields),*))
                };
                used.push_str(&format!(" {fields} "));
                quote!(#docs #attrs #variant #fields)
            })
            .collect();
        // A type or lifetime parameter no variant uses would not compile (E0392): an
        // uninhabited hidden variant uses them all, and matches may leave it out. A message
        // under `#[cfg]` may be the only one to use one, so then it is always there.
        let cfg = Self::has_cfg(state);
        let unused = state.generics.syn.params.iter().any(|param| {
            let name = match param {
                syn::GenericParam::Type(t) => t.ident.to_string(),
                syn::GenericParam::Lifetime(l) => l.lifetime.ident.to_string(),
                syn::GenericParam::Const(_) => return false,
            };
            cfg || !used
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == name)
        });
        let params = unused.then(|| {
            let phantom = self.phantom(state);
            quote!(#[doc(hidden)] __Params(#phantom, #rt::Infallible))
        });
        let variants = variants.into_iter().chain(params);

        // No endpoint is ever in an unreachable state (allowed with `unreachable_states`), so
        // with a buffer or lanes nothing builds its enum.
        let index = self.states[state.name.unraw()];
        let unreachable = (!self.liveness.is_reachable(index)).then(|| quote!(#[allow(dead_code)]));
        let slot_enum = self.sessioned().then(|| {
            let unreachable = &unreachable;
            let slot_name = self.slot_message_ident(state);
            let variants = state.messages.iter().map(|message| {
                let variant = self.ident(&message.name);
                let attrs = self.cfg_attrs(&message.meta);
                let payload = self.payload_types(message);
                if payload.is_empty() {
                    quote!(#attrs #variant)
                } else {
                    quote!(#attrs #variant(#(#payload),*))
                }
            });
            // A state's messages need not use every parameter: an uninhabited variant does.
            let params = (!state.generics.params.is_empty()).then(|| {
                let phantom = self.phantom(state);
                quote!(__Params(#phantom, #rt::Infallible),)
            });
            quote! {
                #[doc(hidden)]
                #unreachable
                pub enum #slot_name #generics { #(#variants,)* #params }
            }
        });
        quote! {
            #[doc = #doc]
            #docs
            #attrs
            #[derive(#rt::MessageDebug)]
            #unreachable
            pub enum #name #generics { #(#variants),* }
            #slot_enum
        }
    }

    /// The session buffer of a bounded protocol (a slot per state with messages), or the
    /// messages of an unbounded one's lanes.
    fn buffer(&self) -> TokenStream {
        if self.lanes() {
            let (client, server) = (self.lane_enum(Side::Client), self.lane_enum(Side::Server));
            return quote!(#client #server);
        }
        if !self.buffered() {
            return quote!();
        }
        let rt = &self.rt;
        let start = &self.protocol.states[0];
        let (generics, ty_generics) = (self.decl_generics(start), self.ty_generics(start));
        let fields = self.slot_states().map(|state| {
            let (name, slot) = (self.state_ident(state), self.slot_message_ident(state));
            let sender = match Side::sender_of(state) {
                Side::Client => format_ident!("SentByClient"),
                Side::Server => format_ident!("SentByServer"),
            };
            quote!(#name: #rt::Slot<#slot #ty_generics, #rt::#sender>)
        });
        let closes = self.slot_states().map(|state| {
            let name = self.state_ident(state);
            quote!(closer.close(&self.#name);)
        });
        let phantom = self.phantom(start);
        quote! {
            #[doc(hidden)]
            pub struct __Buffer #generics {
                #(#fields,)*
                _params: #phantom,
            }
            // No bounds: endpoint types name `__Buffer<T>` for every `T`.
            impl #generics #rt::Slots for __Buffer #ty_generics {
                fn close(&self, closer: &#rt::Closer<'_>) {
                    #(#closes)*
                }
            }
        }
    }

    /// The enum of every message `side` sends, for an unbounded protocol's lane: a variant
    /// per state it sends in, holding that state's `__State` enum. With generic parameters, an
    /// uninhabited variant uses them all (a side may send in no generic state).
    fn lane_enum(&self, side: Side) -> TokenStream {
        let rt = &self.rt;
        let start = &self.protocol.states[0];
        let (generics, ty_generics) = (self.decl_generics(start), self.ty_generics(start));
        let name = Self::lane_ident(side);
        let variants = self.lane_states(side).map(|state| {
            let (variant, slot) = (self.state_ident(state), self.slot_message_ident(state));
            quote!(#variant(#slot #ty_generics))
        });
        let params = (!start.generics.params.is_empty()).then(|| {
            let phantom = self.phantom(start);
            quote!(__Params(#phantom, #rt::Infallible),)
        });
        quote! {
            #[doc(hidden)]
            pub enum #name #generics { #(#variants,)* #params }
        }
    }

    /// `__FromClient` or `__FromServer`: the enum of what `side` sends over its lane.
    fn lane_ident(side: Side) -> Ident {
        match side {
            Side::Client => format_ident!("__FromClient"),
            Side::Server => format_ident!("__FromServer"),
        }
    }

    /// The states with messages that `side` sends in.
    fn lane_states(&self, side: Side) -> impl Iterator<Item = &'a State> {
        self.slot_states()
            .filter(move |state| Side::sender_of(state) == side)
    }

    /// Whether `side`'s lane enum has variants other than `state`'s, so a match on it needs a
    /// catch-all arm.
    fn lane_shared(&self, side: Side) -> bool {
        self.lane_states(side).count() > 1 || !self.protocol.states[0].generics.params.is_empty()
    }

    /// `__FromClient::State(inner)` for lanes; `inner` itself otherwise.
    fn in_lane(&self, state: &State, inner: TokenStream) -> TokenStream {
        if !self.lanes() {
            return inner;
        }
        let (lane, variant) = (
            Self::lane_ident(Side::sender_of(state)),
            self.state_ident(state),
        );
        quote!(#lane::#variant(#inner))
    }

    /// A side's endpoint type for a state: a packet (or slot) end, or a marker for a state
    /// with no messages.
    fn endpoint_type(&self, side: Side, state: &State) -> TokenStream {
        let rt = &self.rt;
        let name = self.state_ident(state);
        let generics = self.decl_generics(state);
        let ty_generics = self.ty_generics(state);
        let state_docs = self.docs(&state.meta);
        let what = if state.messages.is_empty() {
            "it has no messages: the protocol is over".to_string()
        } else if side.sends_in(state) {
            let methods: Vec<String> = state
                .messages
                .iter()
                .map(|m| format!("`{}`", method_name(&m.name.text)))
                .collect();
            format!("it sends one of {}", methods.join(", "))
        } else {
            "it receives with `recv`, `try_recv`, `recv_timeout` or `recv_async` (or `.await`)"
                .to_string()
        };
        let doc = format!(
            " The {}'s endpoint in state `{}`: {}.",
            side.word(),
            state.name.unraw(),
            what
        );
        let field = if state.messages.is_empty() {
            self.phantom(state)
        } else {
            let message = if self.buffered() {
                let slot = self.slot_message_ident(state);
                quote!(super::#slot #ty_generics, super::__Buffer #ty_generics)
            } else {
                quote!(super::#name #ty_generics)
            };
            if self.lanes() {
                let (sends, receives) = (Self::lane_ident(side), Self::lane_ident(side.other()));
                quote!(#rt::Duplex<super::#sends #ty_generics, super::#receives #ty_generics>)
            } else {
                match (self.buffered(), side.sends_in(state)) {
                    (false, true) => quote!(#rt::SendPacket<#message>),
                    (false, false) => quote!(#rt::RecvPacket<#message>),
                    (true, true) => quote!(#rt::SendSlot<#message>),
                    (true, false) => quote!(#rt::RecvSlot<#message>),
                }
            }
        };
        // The struct's span is the state's name, for rustc's "method not found for this
        // struct"; still the macro's, so lints such as `dead_code` keep treating it as such.
        let at_state = Span::call_site().located_at(name.span());
        let (head, semi) = (
            quote::quote_spanned!(at_state=> pub struct),
            quote::quote_spanned!(at_state=> ;),
        );
        quote! {
            #[doc = #doc]
            #state_docs
            #head #name #generics (pub(super) #field) #semi
        }
    }

    /// The methods of both endpoints of a state, and their trait impls.
    fn endpoint_impls(&self, state: &State) -> TokenStream {
        let endpoints = self.endpoints_macro(state);
        if state.messages.is_empty() {
            return endpoints;
        }
        let name = self.state_ident(state);
        let (impl_generics, ty_generics) = (self.impl_generics(state), self.ty_generics(state));
        let sends = state
            .messages
            .iter()
            .map(|message| self.send_method(state, message));
        let sender_module = Side::sender_of(state).module();
        let arrival = self.sessioned().then(|| self.arrival(state));
        quote! {
            impl #impl_generics #sender_module::#name #ty_generics {
                #(#sends)*
            }
            #endpoints
            #arrival
        }
    }

    /// What the runtime writes once for every state's endpoints (`Debug`; for the receiving
    /// one its `RecvEndpoint` impl, its receive methods and `IntoFuture`), invoked with what is
    /// specific to this state: its generics, its names, which side receives in it, and for a
    /// session buffer the hidden enum that travels in its slot.
    fn endpoints_macro(&self, state: &State) -> TokenStream {
        let rt = &self.rt;
        let name = self.state_ident(state);
        let generics = if state.generics.params.is_empty() {
            quote!()
        } else {
            let (impl_generics, decl_generics) =
                (self.impl_generics(state), self.decl_generics(state));
            quote!([#impl_generics] [#decl_generics])
        };
        let args = (!state.generics.params.is_empty()).then(|| {
            let ty_generics = self.ty_generics(state);
            quote!([#ty_generics])
        });
        let (protocol, state_name) = (self.protocol.name.unraw(), state.name.unraw());
        let receives = (!state.messages.is_empty()).then(|| {
            let side = Side::sender_of(state).other().module();
            if self.lanes() {
                return quote!(, #side receives over lanes);
            }
            let slot = self.buffered().then(|| self.slot_message_ident(state));
            quote!(, #side receives #slot)
        });
        quote! {
            #rt::endpoints!(impl #generics #name #args, #protocol, #state_name #receives);
        }
    }

    /// The send method of one message.
    fn send_method(&self, state: &State, message: &Message) -> TokenStream {
        let rt = &self.rt;
        let sender = Side::sender_of(state);
        let receiver = sender.other();
        let method = self.method_ident(message);
        let variant = self.ident(&message.name);
        let enum_name = if self.sessioned() {
            self.slot_message_ident(state)
        } else {
            self.state_ident(state)
        };
        let vars = Self::payload_vars(message);
        let params = vars
            .iter()
            .zip(self.payload_types(message))
            .map(|(var, ty)| quote!(#var: #ty));
        let handed_back = self.payload_tuple_ty(message);
        let returns = self
            .next_endpoint_ty(sender, message)
            .unwrap_or_else(|| quote!(()));
        let fallback = format!(
            "Sends `{}`: {}. If the {} is gone, the payload is handed back in the error.",
            message.name.unraw(),
            self.leads_to(message),
            receiver.word()
        );
        let docs = self.docs_or(&message.meta, fallback);
        let attrs = self.attrs(&message.meta);
        let next = match &message.next {
            Next::State { name, .. } => Some(self.state(name)),
            Next::End { .. } => None,
        };
        // What goes in the packet, and what the sender keeps. A packet for the next state is
        // made by `send_with`: one end travels in the message, the other is `Ok`'s.
        let (receiver_module, sender_module) = (receiver.module(), sender.module());
        let (entangled, sent, kept) = match next {
            None => (false, quote!(), quote!(())),
            Some(next) if next.messages.is_empty() => {
                let next_name = self.state_ident(next);
                (
                    false,
                    quote!(#receiver_module::#next_name(#rt::PhantomData)),
                    quote!(#sender_module::#next_name(#rt::PhantomData)),
                )
            }
            Some(next) => {
                let next_name = self.state_ident(next);
                (
                    true,
                    quote!(#receiver_module::#next_name(next)),
                    quote!(#sender_module::#next_name(next)),
                )
            }
        };
        let fields: Vec<TokenStream> = vars
            .iter()
            .map(|var| var.to_token_stream())
            .chain((!self.sessioned() && !sent.is_empty()).then_some(sent))
            .collect();
        let message_value = if fields.is_empty() {
            quote!(#enum_name::#variant)
        } else {
            quote!(#enum_name::#variant(#(#fields),*))
        };
        let back_pattern = if vars.is_empty() {
            quote!(#enum_name::#variant { .. })
        } else if self.sessioned() {
            quote!(#enum_name::#variant(#(#vars),*))
        } else {
            quote!(#enum_name::#variant(#(#vars,)* ..))
        };
        let (message_value, back_pattern) = (
            self.in_lane(state, message_value),
            self.in_lane(state, back_pattern),
        );
        let back = Self::payload_tuple(message);
        // Written for the messages before `#[cfg]` runs: if it leaves one, the arm is
        // unreachable.
        let allow = Self::has_cfg(state).then(|| quote!(#[allow(unreachable_patterns)]));
        let other_variants = (state.messages.len() > 1
            || (self.lanes() && self.lane_shared(sender)))
        .then(|| quote!(#allow #rt::Err(_) => #rt::unreachable_message(),));
        let body = if self.sessioned() {
            let kept = match next {
                None => quote!(session.finish()),
                Some(next) if next.messages.is_empty() => quote!({
                    session.finish();
                    #kept
                }),
                Some(next) => self.endpoint_in_session(sender, next, &format_ident!("session")),
            };
            quote! {
                match self.0.send(#message_value) {
                    #rt::Ok(session) => #rt::Ok(#kept),
                    #rt::Err(#back_pattern) => #rt::Err(#rt::SendError(#back)),
                    #other_variants
                }
            }
        } else if entangled {
            quote! {
                match self.0.send_with(|next| #message_value) {
                    #rt::Ok(next) => #rt::Ok(#kept),
                    #rt::Err(#back_pattern) => #rt::Err(#rt::SendError(#back)),
                    #other_variants
                }
            }
        } else {
            quote! {
                match self.0.send(#message_value) {
                    #rt::Ok(()) => #rt::Ok(#kept),
                    #rt::Err(#back_pattern) => #rt::Err(#rt::SendError(#back)),
                    #other_variants
                }
            }
        };
        quote! {
            #docs
            #attrs
            pub fn #method(self, #(#params),*) -> #rt::Result<#returns, #rt::SendError<#handed_back>> {
                #body
            }
        }
    }

    /// For a buffer or lanes: what arrived and the receiver's side of the session become the
    /// user's enum, with the receiver's next endpoint built from its side.
    fn arrival(&self, state: &State) -> TokenStream {
        let rt = &self.rt;
        let name = self.state_ident(state);
        let slot = self.slot_message_ident(state);
        let (impl_generics, ty_generics) = (self.impl_generics(state), self.ty_generics(state));
        let receiver = Side::sender_of(state).other();
        let session = format_ident!("session");
        let arms = state.messages.iter().map(|message| {
            let variant = self.ident(&message.name);
            let attrs = self.cfg_attrs(&message.meta);
            let vars = Self::payload_vars(message);
            let pattern = if vars.is_empty() {
                quote!(#slot::#variant)
            } else {
                quote!(#slot::#variant(#(#vars),*))
            };
            let pattern = self.in_lane(state, pattern);
            let next = match &message.next {
                Next::End { .. } => None,
                Next::State { name, .. } => Some(self.state(name)),
            };
            let (finish, fields) = match next {
                None => (
                    quote!(session.finish();),
                    vars.iter().map(|v| quote!(#v)).collect(),
                ),
                Some(next) if next.messages.is_empty() => {
                    let (module, next_name) = (receiver.module(), self.state_ident(next));
                    let mut fields: Vec<TokenStream> = vars.iter().map(|v| quote!(#v)).collect();
                    fields.push(quote!(#module::#next_name(#rt::PhantomData)));
                    (quote!(session.finish();), fields)
                }
                Some(next) => {
                    let mut fields: Vec<TokenStream> = vars.iter().map(|v| quote!(#v)).collect();
                    fields.push(self.endpoint_in_session(receiver, next, &session));
                    (quote!(), fields)
                }
            };
            let value = if fields.is_empty() {
                quote!(#name::#variant)
            } else {
                quote!(#name::#variant(#(#fields),*))
            };
            quote!(#attrs #pattern => { #finish #value })
        });
        // In a lane, what arrives is one of everything the sender sends; the endpoint's type
        // says which state the receiver is in, so only that state's messages can arrive.
        let (arrived, others) = if self.lanes() {
            let sender = Side::sender_of(state);
            let (lane, receives) = (Self::lane_ident(sender), Self::lane_ident(receiver));
            (
                quote!((#lane #ty_generics, #rt::Duplex<#receives #ty_generics, #lane #ty_generics>)),
                self.lane_shared(sender).then(|| {
                    let allow =
                        Self::has_cfg(state).then(|| quote!(#[allow(unreachable_patterns)]));
                    quote!(#allow _ => #rt::unreachable_message(),)
                }),
            )
        } else {
            (
                quote!((#slot #ty_generics, #rt::Session<__Buffer #ty_generics>)),
                None,
            )
        };
        // Every message compiled out leaves the session unused.
        let allow = Self::has_cfg(state).then(|| quote!(#[allow(unused_variables)]));
        quote! {
            impl #impl_generics #name #ty_generics {
                #allow
                fn __arrive((message, session): #arrived) -> Self {
                    match message {
                        #(#arms)*
                        #others
                    }
                }
            }
        }
    }
}

/// A cursor over the source text of one Rust fragment, for [`Gen::respan`]: it finds where
/// each token of the fragment was written.
///
/// Why walk the text: a fragment reaches codegen as a syn value parsed from a string, so its
/// tokens carry `Span::call_site()` and no offsets (proc_macro2 keeps source locations only
/// outside a macro, under its `span-locations` feature, and never inside one). The syn value's
/// tokens come in the order they were written, so this cursor steps through the fragment's
/// text beside them, skipping whitespace and comments, and checks that each token's text is
/// the next thing written: then the token gets the span of the user's token at that offset.
/// The one difference allowed is a 2012 kind, which the parser spells in today's words by
/// absolute path (`send` becomes `::core::marker::Send`): the path's tokens all get the kind's
/// span, and the user's token is still the one to blame. Should the two ever disagree otherwise, the cursor stops trusting the text and the
/// rest of the fragment gets the span of its first token: a coarse error, never one at a
/// wrong token.
struct FragmentText<'s> {
    text: &'s str,
    /// Where the cursor is in `text`.
    pos: usize,
    /// The fragment's offset in the whole source.
    base: usize,
    /// Whether every token so far was found where expected.
    in_step: bool,
}

impl FragmentText<'_> {
    /// Skips whitespace and comments (`//` to the end of the line, nested `/* */`).
    fn skip_trivia(&mut self) {
        loop {
            let rest = &self.text[self.pos..];
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else if trimmed.starts_with("/*") {
                let mut depth = 0usize;
                let mut i = 0;
                let bytes = trimmed.as_bytes();
                while i < bytes.len() {
                    match (bytes[i], bytes.get(i + 1)) {
                        (b'/', Some(b'*')) => {
                            depth += 1;
                            i += 2;
                        }
                        (b'*', Some(b'/')) => {
                            depth -= 1;
                            i += 2;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => i += 1,
                    }
                }
                self.pos += i;
            } else {
                return;
            }
        }
    }

    /// The source offset of `token`'s text if it is written next, stepping over it.
    fn take(&mut self, token: &str, is_ident: bool) -> Option<usize> {
        if !self.in_step {
            return None;
        }
        self.skip_trivia();
        let rest = &self.text[self.pos..];
        // The parser writes a 2012 kind as an absolute path (`send` as `::core::marker::Send`):
        // the path's prefix stands where the kind is written, without stepping over it.
        if matches!(token, ":" | "core" | "marker") && starts_with_kind(rest) {
            return Some(self.base + self.pos);
        }
        let written = if is_ident {
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
                .unwrap_or(rest.len());
            rest[..len].eq_ignore_ascii_case(token).then_some(len)
        } else {
            rest.starts_with(token).then_some(token.len())
        };
        match written {
            Some(len) => {
                let at = self.base + self.pos;
                self.pos += len;
                Some(at)
            }
            None => {
                self.in_step = false;
                None
            }
        }
    }
}

/// Whether `text` starts with a 2012 kind ([`KINDS_2012`](crate::parse::KINDS_2012)) as a
/// whole word.
fn starts_with_kind(text: &str) -> bool {
    crate::parse::KINDS_2012.iter().any(|(kind, _)| {
        text.strip_prefix(kind)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

impl Gen<'_> {
    /// The tokens of a Rust fragment written at `range` of the source, each with the span of
    /// the user's token it was written as, so that rustc's errors about a payload type, a
    /// bound or a type argument point at the very token at fault (`Strng` in
    /// `HashMap<String, Strng>`) and its suggestions replace that token alone.
    fn respan(&self, tokens: TokenStream, range: &Range<usize>) -> TokenStream {
        let mut text = FragmentText {
            text: self.text(range),
            pos: 0,
            base: range.start,
            in_step: true,
        };
        self.respan_stream(tokens, &mut text, self.span(range))
    }

    fn respan_stream(
        &self,
        tokens: TokenStream,
        text: &mut FragmentText<'_>,
        first: Span,
    ) -> TokenStream {
        let span_of = |at: Option<usize>| at.map_or(first, |at| (self.options.span_at)(at));
        tokens
            .into_iter()
            .map(|token| match token {
                TokenTree::Group(group) => {
                    let delimiters = match group.delimiter() {
                        proc_macro2::Delimiter::Parenthesis => Some(("(", ")")),
                        proc_macro2::Delimiter::Bracket => Some(("[", "]")),
                        proc_macro2::Delimiter::Brace => Some(("{", "}")),
                        proc_macro2::Delimiter::None => None,
                    };
                    let open = delimiters.and_then(|(open, _)| text.take(open, false));
                    let stream = self.respan_stream(group.stream(), text, first);
                    if let Some((_, close)) = delimiters {
                        text.take(close, false);
                    }
                    // A group has one span here (joining the two delimiters' spans needs a
                    // nightly compiler): its opening delimiter's.
                    let mut span = span_of(open);
                    if let Some(Printed::InvisibleGroup) = open.and_then(self.options.printed) {
                        span = Span::call_site().located_at(span);
                    }
                    let mut new = Group::new(group.delimiter(), stream);
                    new.set_span(span);
                    TokenTree::Group(new)
                }
                TokenTree::Ident(mut ident) => {
                    let at = text.take(&ident.to_string(), true);
                    if let Some(Printed::Token(token)) = at.and_then(self.options.printed) {
                        return token;
                    }
                    ident.set_span(span_of(at));
                    TokenTree::Ident(ident)
                }
                TokenTree::Punct(mut punct) => {
                    let char = punct.as_char();
                    punct.set_span(span_of(text.take(char.encode_utf8(&mut [0; 4]), false)));
                    TokenTree::Punct(punct)
                }
                TokenTree::Literal(mut literal) => {
                    literal.set_span(span_of(text.take(&literal.to_string(), false)));
                    TokenTree::Literal(literal)
                }
            })
            .collect()
    }
}

/// Whether a type parameter is declared `?Sized`.
fn is_unsized(param: &syn::TypeParam) -> bool {
    param.bounds.iter().any(|bound| {
        matches!(bound, syn::TypeParamBound::Trait(t) if matches!(t.modifier, syn::TraitBoundModifier::Maybe(_)))
    })
}
