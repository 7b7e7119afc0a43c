//! `#[derive(MessageDebug)]`, put on every message enum `proto!` generates: `Debug` when the
//! payloads implement it, and no impl when one does not (std's derive would not compile then).
//!
//! Each field type is bounded with a higher-ranked where clause (`for<'__pipes> Payload:
//! Debug`). A plain `Payload: Debug` on a type without generic parameters is checked where
//! the impl is declared, and is an error if it does not hold; a higher-ranked one is checked
//! only where the impl is used, so the impl simply does not apply. Endpoints in the fields
//! always implement `Debug` (without bounds), so they get no where clause: two of them, as
//! `server::S<'static>` and `server::S<'a>`, would leave rustc two clauses to choose from for
//! one type (E0283).
//!
//! Every variant of an enum may be compiled out (`#[cfg(..)]` on each message of a state): the
//! enum is then empty, and its `fmt` matches on `*self`, since a reference is never empty.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields};

pub fn expand(input: DeriveInput) -> syn::Result<TokenStream> {
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "MessageDebug is for the message enums proto! generates",
        ));
    };
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut predicates: Vec<TokenStream> = where_clause
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default();
    let mut arms = Vec::new();
    for variant in &data.variants {
        let (ident, text) = (&variant.ident, variant.ident.unraw().to_string());
        let cfgs = variant.attrs.iter().filter(|a| a.path().is_ident("cfg"));
        let types = variant
            .fields
            .iter()
            .map(|field| &field.ty)
            .filter(|ty| !is_endpoint(ty));
        predicates.extend(types.map(|ty| quote!(for<'__pipes> #ty: ::core::fmt::Debug)));
        let arm = match &variant.fields {
            Fields::Unit => quote!(#name::#ident => f.write_str(#text)),
            Fields::Unnamed(fields) => {
                let vars: Vec<_> = (0..fields.unnamed.len())
                    .map(|i| format_ident!("f{i}"))
                    .collect();
                quote! {
                    #name::#ident(#(#vars),*) => f.debug_tuple(#text)#(.field(#vars))*.finish()
                }
            }
            Fields::Named(fields) => {
                let idents: Vec<_> = fields
                    .named
                    .iter()
                    .filter_map(|f| f.ident.as_ref())
                    .collect();
                let texts = idents.iter().map(|i| i.unraw().to_string());
                quote! {
                    #name::#ident { #(#idents),* } => {
                        f.debug_struct(#text)#(.field(#texts, #idents))*.finish()
                    }
                }
            }
        };
        arms.push(quote!(#(#cfgs)* #arm,));
    }
    let body = if data.variants.is_empty() {
        quote!(match *self {})
    } else {
        quote!(match self { #(#arms)* })
    };
    Ok(quote! {
        impl #impl_generics ::core::fmt::Debug for #name #ty_generics
        where
            #(#predicates,)*
        {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                #body
            }
        }
    })
}

/// Whether a field's type is the endpoint a message leads to: generated code names it
/// `client::State<..>` or `server::State<..>` (payloads go through aliases of the protocol's
/// own, so a user's `client::Id` never reaches the enum as written).
fn is_endpoint(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    path.qself.is_none()
        && path.path.leading_colon.is_none()
        && path.path.segments.len() == 2
        && ["client", "server"]
            .iter()
            .any(|side| path.path.segments[0].ident == side)
}
