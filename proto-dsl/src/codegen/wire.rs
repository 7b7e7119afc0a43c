//! What a `#[wire]` protocol adds to its module: the `Wire` type remote sessions name it by,
//! its fingerprint, and the pump for each side, which holds that side's endpoint and moves
//! each message between it and the wire. The pump's machinery is the same for every protocol
//! and lives in `pipes_net::__private` (reached as `<runtime>::net`): generated here is only
//! what is specific to the protocol, one match arm per message and side.
//!
//! Payload types reach serde only through the module's `__payload::<T>()` (for forwarding and
//! decoding alike), with `T` spanned at the user's token, so a payload that cannot cross the
//! wire is an error at that payload, worded by the module's `__WirePayload` trait, which names
//! the protocol. (One call site shape for both, so rustc reports the error once.)

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::{Gen, Side};
use crate::ast::{Message, Next, State};

impl Gen<'_> {
    /// The wire items of the protocol, or nothing if it is not `#[wire]`.
    pub(super) fn wire(&self) -> TokenStream {
        let Some(wire_span) = &self.protocol.wire else {
            return quote!();
        };
        let runtime = &self.options.runtime;
        // Spanned at `#[wire]`: without the `net` feature, the error is there.
        let net = Ident::new("net", self.span(wire_span));
        let name = self.protocol.name.unraw();
        let message = format!(
            "`{{Self}}` cannot cross the wire: every payload of the #[wire] protocol `{name}` \
             must be Serialize + DeserializeOwned + Send + 'static"
        );
        let label = format!("a payload of the #[wire] protocol `{name}`");
        let note = "an endpoint (of a protocol, a stream or a oneshot) cannot cross the wire: \
                    open a second session of its protocol instead";
        let fingerprint = crate::fingerprint::fingerprint(self.protocol)
            .into_iter()
            .map(Literal::u8_unsuffixed);
        let unbounded = !self.liveness.is_bounded();
        // A bounded protocol's states hold a message each at most: so many can be in flight.
        let in_flight = if unbounded {
            0
        } else {
            let holding = self
                .protocol
                .states
                .iter()
                .filter(|s| !s.messages.is_empty());
            u32::try_from(holding.count()).unwrap_or(u32::MAX)
        };
        let in_flight = Literal::u32_unsuffixed(in_flight);
        let start = &self.protocol.states[0];
        let start_name = self.state_ident(start);
        // The pump holds the other side's endpoint for the start state.
        let entry = |user: Side| {
            let index = match user {
                Side::Client => quote!(1),
                Side::Server => quote!(0),
            };
            if start.messages.is_empty() {
                return quote!((init().#index, __net::idle(session)));
            }
            let pump = Self::pump_ident(user.other());
            // Both ends report their takes before either is used, so the user's `writable`
            // and the pump's `room` see every message (`pipes-net`'s `writable.rs`).
            let report = unbounded.then(|| {
                quote! {
                    let (server, client) =
                        (__net::report(server, &session), __net::report(client, &session));
                }
            });
            let (held, given) = (
                format_ident!("{}", user.other().word()),
                format_ident!("{}", user.word()),
            );
            quote! {
                let (server, client) = init();
                #report
                (#given, __net::pump(#pump::#start_name(#held), session))
            }
        };
        let (client_entry, server_entry) = (entry(Side::Client), entry(Side::Server));
        let doc = format!(
            " `{name}` across processes and machines (the protocol is `#[wire]`): name it to \
             open remote sessions, `node.client::<{name}::Wire>(addr)` for a \
             `client::{start}` whose peer is remote, `node.incoming::<{name}::Wire>()` for \
             the `server::{start}` of each session peers open. A pump on the node's runtime \
             moves each message between the wire and the endpoint's local peer.",
            start = start.name.unraw()
        );
        let pumps = [Side::Client, Side::Server].map(|side| self.pump(side));
        // Spanned at `#[wire]`, so the notes of a payload's error point there.
        let check = quote_spanned! {self.span(wire_span)=>
            #[doc = " Every payload of the protocol: what can cross the wire, with an error that names the protocol."]
            #[doc(hidden)]
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            pub trait __WirePayload: __net::WirePayload {}

            impl<T: __net::WirePayload> __WirePayload for T {}

            #[doc = " How a payload type crosses the wire: the check, at the payload's type, that it can."]
            #[doc(hidden)]
            #[inline]
            pub fn __payload<T: __WirePayload>() -> __net::Payload<T> {
                __net::payload::<T>()
            }

        };
        quote! {
            use #runtime::#net::__private as __net;

            #[doc = #doc]
            pub enum Wire {}

            #check

            impl __net::WireProtocol for Wire {
                const PROTOCOL: __net::Protocol = __net::Protocol {
                    name: #name,
                    fingerprint: &[#(#fingerprint),*],
                    unbounded: #unbounded,
                    in_flight: #in_flight,
                };
                type Client = client::#start_name;
                type Server = server::#start_name;

                fn client(session: __net::RawSession) -> (client::#start_name, __net::PumpTask) {
                    #client_entry
                }

                fn server(session: __net::RawSession) -> (server::#start_name, __net::PumpTask) {
                    #server_entry
                }
            }

            #(#pumps)*
        }
    }

    /// `__PumpClient` or `__PumpServer`: the pump that holds `side`'s endpoints.
    fn pump_ident(side: Side) -> Ident {
        match side {
            Side::Client => format_ident!("__PumpClient"),
            Side::Server => format_ident!("__PumpServer"),
        }
    }

    /// The pump holding `side`'s endpoints (the user holds the other side's): an enum of its
    /// endpoint in each state with messages, and its step.
    fn pump(&self, side: Side) -> TokenStream {
        let pump = Self::pump_ident(side);
        let module = side.module();
        let states: Vec<(usize, &State)> = self
            .protocol
            .states
            .iter()
            .enumerate()
            .filter(|(_, state)| !state.messages.is_empty())
            .collect();
        let variants = states.iter().map(|(_, state)| {
            let name = self.state_ident(state);
            quote!(#name(#module::#name))
        });
        let arms = states.iter().map(|&(index, state)| {
            let name = self.state_ident(state);
            let index = index as u32;
            let body = if side.sends_in(state) {
                self.off_the_wire(index, state)
            } else {
                self.onto_the_wire(index, state)
            };
            quote!(Self::#name(endpoint) => #body,)
        });
        // `cause` is unused in a pump with no states (a start state with no messages).
        let cause = if states.is_empty() {
            format_ident!("_cause")
        } else {
            format_ident!("cause")
        };
        let closes = states.iter().map(|(_, state)| {
            let name = self.state_ident(state);
            quote!(Self::#name(endpoint) => __net::CloseWith::close_with(endpoint, #cause),)
        });
        let doc = format!(
            " The pump of a remote session whose local {} endpoint it holds.",
            side.word()
        );
        quote! {
            #[doc = #doc]
            #[doc(hidden)]
            #[allow(dead_code)]
            pub enum #pump { #(#variants,)* }

            impl __net::PumpState for #pump {
                async fn step(self, pump: &mut __net::Pump) -> __net::Option<Self> {
                    match self { #(#arms)* }
                }

                fn close_with(self, #cause: __net::Cause) {
                    match self { #(#closes)* }
                }
            }
        }
    }

    /// What a step returns after moving `message`: the pump in the next state, built from the
    /// endpoint `next`, or `None` when the protocol ends there.
    fn pump_next(&self, message: &Message, next: TokenStream) -> TokenStream {
        match &message.next {
            Next::State { name, .. } if !self.state(name).messages.is_empty() => {
                let name = self.ident(name);
                quote!(__net::Some(Self::#name(#next)))
            }
            _ => quote!(__net::None),
        }
    }

    /// The user's side sends in `state`: receive from the local endpoint, forward.
    fn onto_the_wire(&self, index: u32, state: &State) -> TokenStream {
        let name = self.state_ident(state);
        let arms = state.messages.iter().enumerate().map(|(m, message)| {
            let m = m as u32;
            let variant = self.ident(&message.name);
            let attrs = self.cfg_attrs(&message.meta);
            let vars = Self::payload_vars(message);
            let fields = vars
                .iter()
                .zip(self.payload_types(message))
                .map(|(var, ty)| quote!(&__payload::<#ty>().field(&#var)));
            let next = match &message.next {
                Next::End { .. } => None,
                Next::State { name, .. } if self.state(name).messages.is_empty() => Some(quote!(_)),
                Next::State { .. } => Some(quote!(next)),
            };
            let pattern_fields: Vec<TokenStream> =
                vars.iter().map(|v| quote!(#v)).chain(next).collect();
            let pattern = if pattern_fields.is_empty() {
                quote!(#name::#variant)
            } else {
                quote!(#name::#variant(#(#pattern_fields),*))
            };
            // The endpoint for the next state, held so that a failed send closes it with the
            // failure's cause (the user receives on its dual next).
            let (hold, next) = match &message.next {
                Next::State { name, .. } if !self.state(name).messages.is_empty() => (
                    quote!(let next = pump.hold(next);),
                    quote!(next.into_inner()),
                ),
                _ => (quote!(), quote!(next)),
            };
            let after = self.pump_next(message, next);
            // The payloads are dropped before the step returns the endpoint for the next state:
            // if a payload's `Drop` panics there, the endpoint is still a local, which the
            // unwinding drops (closing the user's side); a return value being built when a
            // local's drop panics is leaked instead (rust-lang/rust#47949).
            // (Payloads that are `Copy` make rustc's `dropping_copy_types` lint, which build.rs
            // output gets as hand-written code does.)
            let drop_payloads = (!vars.is_empty()).then(|| {
                quote! {
                    #[allow(dropping_copy_types)]
                    ::core::mem::drop((#(#vars,)*));
                }
            });
            quote! {
                #attrs
                #pattern => {
                    #hold
                    let frame = pump.encode(#index, #m, &[#(#fields),*])?;
                    pump.send(frame).await?;
                    #drop_payloads
                    #after
                }
            }
        });
        quote! {
            match pump.local(endpoint).await? {
                #(#arms)*
            }
        }
    }

    /// The remote side sends in `state`: receive from the wire, check, decode, send locally.
    fn off_the_wire(&self, index: u32, state: &State) -> TokenStream {
        let count = state.messages.len() as u32;
        let arms = state.messages.iter().enumerate().map(|(m, message)| {
            let m = m as u32;
            let method = self.method_ident(message);
            let attrs = self.cfg_attrs(&message.meta);
            let vars = Self::payload_vars(message);
            let takes = vars
                .iter()
                .zip(self.payload_types(message))
                .map(|(var, ty)| quote!(let #var = pump.take(__payload::<#ty>())?;));
            let after = self.pump_next(message, quote!(next));
            let next = match &message.next {
                Next::State { name, .. } if !self.state(name).messages.is_empty() => quote!(next),
                _ => quote!(_),
            };
            quote! {
                #attrs
                #m => {
                    #(#takes)*
                    pump.done()?;
                    let #next = pump.deliver(endpoint.into_inner().#method(#(#vars),*))?;
                    #after
                }
            }
        });
        // An unbounded protocol's pump receives only as fast as the user reads (`Pump::room`).
        let room = (!self.liveness.is_bounded())
            .then(|| quote!(let endpoint = pump.room(endpoint).await;));
        // Every message compiled out with `#[cfg]` leaves the held endpoint unused.
        let allow = Self::has_cfg(state).then(|| quote!(#[allow(unused_variables)]));
        quote! {{
            #room
            #allow
            let endpoint = pump.hold(endpoint);
            match pump.remote(#index, #count).await? {
                #(#arms)*
                // `remote` let through only indexes of this state's messages: one without an
                // arm was compiled out with `#[cfg]` (a violation, not a clean end).
                _ => pump.compiled_out(),
            }
        }}
    }
}
