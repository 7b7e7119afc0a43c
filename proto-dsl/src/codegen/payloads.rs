//! Where the user's types are named. The generated module holds names of its own (a type per
//! state, `client`, `server`), which would shadow the user's if payload types were written
//! in it: a payload `Login` in a state `Login` would be the state's enum. So each distinct
//! payload type, and each type argument of a transition, is written once, as a private alias
//! in a hidden module `__super` inside the generated one, which sees what the module `proto!`
//! is invoked in sees (`use super::super::*`) and nothing generated; the generated items name
//! the alias, `__super::__0<T>`.
//!
//! - An alias takes exactly the state's parameters its type mentions (an unused one would be
//!   E0091), found in the type's paths, lifetimes and, for a macro, its tokens.
//! - A leading `super` is one module further up from `__super` than from the call site, so
//!   it is written `super::super::super`; `self::` reaches the call site's items through the
//!   glob.
//! - A bare parameter (`T`) is written as is: there is nothing to look up.
//! - The aliases are private, so rustdoc shows the aliased types in their place.
//!
//! `__super` cannot collide with a state's hidden enum (`__` and the state's name): no state
//! can be called `super`.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Group, Ident, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote};
use syn::visit::Visit;

use super::Gen;
use crate::ast::{GenericParam, Message, Next, State};

/// The hidden module that names the user's types as the call site does.
const MODULE: &str = "__super";

/// The aliases of one protocol's types, and which one each written type uses.
#[derive(Default)]
pub(super) struct Payloads {
    /// `type __0<T> = Vec<T>;`, one per distinct type (and set of `#[cfg]`s), in the order
    /// first written.
    aliases: Vec<TokenStream>,
    /// By the offset a type was written at: its alias and the parameters it passes.
    at: HashMap<usize, (Ident, TokenStream)>,
    /// Whether a type names the protocol's own module (`bank::client::Login`): `__super` then
    /// names it itself, as the call site does, since a protocol declared in a function body is
    /// out of the glob's reach (the glob sees the function's module, not its body).
    names_own_module: bool,
}

impl Gen<'_> {
    /// Aliases every payload type and type argument of the protocol.
    pub(super) fn collect_payloads(&self) -> Payloads {
        let mut payloads = Payloads::default();
        let mut seen: HashMap<String, (Ident, TokenStream)> = HashMap::new();
        for state in &self.protocol.states {
            for message in &state.messages {
                let cfgs = self.cfgs(message);
                let types = message.payload.iter().map(|ty| (&ty.syn, &ty.span));
                for (ty, range) in types.chain(self.aliased_args(message)) {
                    if is_parameter(ty, &state.generics.syn) {
                        continue;
                    }
                    let mentioned = Mentioned::of(ty);
                    payloads.names_own_module |= mentioned.0.contains(self.protocol.name.unraw());
                    let params = used_parameters(&mentioned, state);
                    let (decl, args) = self.alias_generics(&params);
                    // Keyed by the tokens as generated, not as parsed: a macro's `$crate::X`
                    // is printed `crate::X` for the parser, and is not the invoker's `crate::X`.
                    let written = from_call_site(self.respan(ty.to_token_stream(), range));
                    let key = format!("{cfgs} {written} {decl}");
                    let alias = seen.entry(key).or_insert_with(|| {
                        let name = format_ident!("__{}", payloads.aliases.len());
                        payloads.aliases.push(quote! {
                            #cfgs
                            pub(super) type #name #decl = #written;
                        });
                        (name, args)
                    });
                    payloads.at.insert(range.start, alias.clone());
                }
            }
        }
        payloads
    }

    /// The `#[cfg]`s of a message, which its aliases need too: a type may exist only under
    /// them.
    fn cfgs(&self, message: &Message) -> TokenStream {
        let cfgs = message
            .meta
            .attrs
            .iter()
            .filter(|attr| attr.syn.path().is_ident("cfg"))
            .map(|attr| attr.syn.to_token_stream());
        quote!(#(#cfgs)*)
    }

    /// The type arguments of a message's transition that stand for a type parameter of the
    /// target (a const argument written as a path stays as written: it is not a type).
    fn aliased_args<'m>(
        &self,
        message: &'m Message,
    ) -> impl Iterator<Item = (&'m syn::Type, &'m std::ops::Range<usize>)> {
        let (args, target) = match &message.next {
            Next::State { name, args, .. } => (args.as_slice(), Some(self.state(name))),
            Next::End { .. } => (&[][..], None),
        };
        let params = target.map(|state| &state.generics.syn.params);
        args.iter()
            .zip(params.into_iter().flatten())
            .filter_map(|(arg, param)| match (&arg.syn, param) {
                (syn::GenericArgument::Type(ty), syn::GenericParam::Type(_)) => {
                    Some((ty, &arg.span))
                }
                _ => None,
            })
    }

    /// The module of aliases, or nothing when the protocol carries no types.
    pub(super) fn payload_module(&self) -> TokenStream {
        let aliases = &self.payloads.aliases;
        if aliases.is_empty() {
            return quote!();
        }
        let module = format_ident!("{MODULE}");
        let own = self.payloads.names_own_module.then(|| {
            let name = self.ident(&self.protocol.name);
            quote!(use super::{self as #name};)
        });
        quote! {
            /// The user's types, named as where `proto!` is invoked.
            #[allow(dead_code, unused_imports)]
            mod #module {
                use super::super::*;
                #own
                #(#aliases)*
            }
        }
    }

    /// A type written at `range` (a payload, or a type argument), as the generated items name
    /// it: its alias, spanned from the type's first token to its last, so that rustc's errors
    /// about it underline the type as written.
    pub(super) fn user_type(&self, ty: &syn::Type, range: &std::ops::Range<usize>) -> TokenStream {
        let Some((alias, args)) = self.payloads.at.get(&range.start) else {
            return self.respan(ty.to_token_stream(), range);
        };
        let first = self.span(range);
        let last = (self.options.span_at)(range.end.saturating_sub(1).max(range.start));
        let module = Ident::new(MODULE, first);
        let alias = Ident::new(&alias.to_string(), first);
        let tokens: Vec<TokenTree> = quote!(#module::#alias #args).into_iter().collect();
        let count = tokens.len();
        tokens
            .into_iter()
            .enumerate()
            .map(|(i, token)| respanned(token, if i + 1 == count { last } else { first }))
            .collect()
    }
}

/// `token` with `span`, its contents too if it is a group.
fn respanned(token: TokenTree, span: Span) -> TokenTree {
    match token {
        TokenTree::Group(group) => {
            let stream = group
                .stream()
                .into_iter()
                .map(|token| respanned(token, span))
                .collect();
            let mut new = Group::new(group.delimiter(), stream);
            new.set_span(span);
            TokenTree::Group(new)
        }
        mut token => {
            token.set_span(span);
            token
        }
    }
}

/// Whether `ty` is one of the state's parameters, alone.
fn is_parameter(ty: &syn::Type, generics: &syn::Generics) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    let Some(ident) = path.path.get_ident().filter(|_| path.qself.is_none()) else {
        return false;
    };
    generics.params.iter().any(|param| match param {
        syn::GenericParam::Type(t) => t.ident == *ident,
        syn::GenericParam::Const(c) => c.ident == *ident,
        syn::GenericParam::Lifetime(_) => false,
    })
}

/// The state's parameters that a type mentions, in the order the state declares them.
fn used_parameters<'s>(names: &Mentioned, state: &'s State) -> Vec<&'s GenericParam> {
    let params = state.generics.params.iter();
    params
        .filter(|param| names.0.contains(&param.name))
        .collect()
}

impl Gen<'_> {
    /// `<T, 'a, const N: usize>` to declare an alias with, and `<T, 'a, N>` to name it with;
    /// both empty without parameters. A const parameter is declared as written (its type may
    /// hold a macro's `$crate`, which only `respan` gives back).
    fn alias_generics(&self, params: &[&GenericParam]) -> (TokenStream, TokenStream) {
        if params.is_empty() {
            return (quote!(), quote!());
        }
        let decl = params.iter().map(|param| match &param.syn {
            syn::GenericParam::Type(t) => t.ident.to_token_stream(),
            syn::GenericParam::Lifetime(l) => l.lifetime.to_token_stream(),
            syn::GenericParam::Const(_) => {
                from_call_site(self.respan(param.syn.to_token_stream(), &param.span))
            }
        });
        let args = params.iter().map(|param| parameter_name(&param.syn));
        (quote!(<#(#decl),*>), quote!(<#(#args),*>))
    }
}

/// A parameter's name, as an argument: `T`, `'a`, `N`.
fn parameter_name(param: &syn::GenericParam) -> TokenStream {
    match param {
        syn::GenericParam::Type(t) => t.ident.to_token_stream(),
        syn::GenericParam::Lifetime(l) => l.lifetime.to_token_stream(),
        syn::GenericParam::Const(c) => c.ident.to_token_stream(),
    }
}

/// What could name a parameter in a type: the first segment of each relative path, each
/// lifetime, and every identifier and lifetime in a macro's tokens (what a macro makes of
/// them cannot be known here).
#[derive(Default)]
struct Mentioned(HashSet<String>);

impl<'ast> Visit<'ast> for Mentioned {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none()
            && let Some(first) = path.segments.first()
        {
            self.0.insert(first.ident.to_string());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
        self.0.insert(lifetime.to_string());
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

impl Mentioned {
    fn of(ty: &syn::Type) -> Mentioned {
        let mut names = Mentioned::default();
        names.visit_type(ty);
        names
    }

    fn tokens(&mut self, tokens: TokenStream) {
        // A lifetime is a `'` and an identifier.
        let mut quote = false;
        for token in tokens {
            match token {
                TokenTree::Punct(punct) if punct.as_char() == '\'' => {
                    quote = true;
                    continue;
                }
                TokenTree::Ident(ident) if quote => {
                    self.0.insert(format!("'{ident}"));
                }
                TokenTree::Ident(ident) => {
                    self.0.insert(ident.to_string());
                }
                TokenTree::Group(group) => self.tokens(group.stream()),
                _ => {}
            }
            quote = false;
        }
    }
}

/// A type's tokens as `__super` must read them: a path that starts with `super` starts two
/// modules further up (`__super`, then the generated module), so that it means what it
/// meant at the call site. Inside a macro's tokens too, where it is most likely a path.
fn from_call_site(tokens: TokenStream) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    for token in tokens {
        match token {
            TokenTree::Ident(ident) if ident == "super" && !after_path_separator(&out) => {
                let span = ident.span();
                let up = quote::quote_spanned!(span=> super::super::);
                out.extend(up);
                out.push(TokenTree::Ident(ident));
            }
            TokenTree::Group(group) => {
                let mut new = Group::new(group.delimiter(), from_call_site(group.stream()));
                new.set_span(group.span());
                out.push(TokenTree::Group(new));
            }
            token => out.push(token),
        }
    }
    out.into_iter().collect()
}

/// Whether the tokens so far end with `::`.
fn after_path_separator(tokens: &[TokenTree]) -> bool {
    matches!(
        tokens,
        [.., TokenTree::Punct(a), TokenTree::Punct(b)] if a.as_char() == ':' && b.as_char() == ':'
    )
}
