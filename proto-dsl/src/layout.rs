//! The session layout: how a protocol's messages travel, decided once here from the protocol
//! and its liveness, and used by code generation, the module docs and `pipes-proto explain`.
//!
//! - A bounded protocol with at least two states that have messages gets one **buffer** per
//!   session, allocated by `init()`, with a slot per such state, reused on every pass (the
//!   liveness rule guarantees a slot is received before it is sent into again).
//! - An unbounded one gets two **lanes** per session, one per direction, allocated by `init()`;
//!   each carries every message its sender can send, and recycles its segments.
//! - Otherwise each message travels in a **packet** of its own: a protocol with a single state
//!   that has messages and no loop (a oneshot: used once, nothing to reuse), or one whose states
//!   do not all share one list of generic parameters (one session type could not name them).

use std::fmt;

use crate::ast::{Next, Protocol};
use crate::liveness::Liveness;

/// How one protocol's sessions are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// One buffer per session, with a slot for each of these states (indices of the states
    /// that have messages, in declaration order).
    Buffer {
        /// The states with a slot.
        slots: Vec<usize>,
    },
    /// Two lanes per session, one per direction.
    Lanes,
    /// A packet per message, and why.
    Packets(WhyPackets),
}

/// Why a protocol's messages travel in packets of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhyPackets {
    /// One state has messages and none loops: a session is used once.
    UsedOnce,
    /// Its states do not all declare one list of generic parameters, passed on unchanged.
    GenericsDiffer,
}

impl Layout {
    /// Decides the layout of `protocol`, given its liveness.
    pub fn of(protocol: &Protocol, liveness: &Liveness) -> Layout {
        if !shares_one_parameter_list(protocol) {
            return Layout::Packets(WhyPackets::GenericsDiffer);
        }
        if !liveness.is_bounded() {
            return Layout::Lanes;
        }
        let slots: Vec<usize> = (0..protocol.states.len())
            .filter(|&i| !protocol.states[i].messages.is_empty())
            .collect();
        if slots.len() < 2 {
            return Layout::Packets(WhyPackets::UsedOnce);
        }
        Layout::Buffer { slots }
    }

    /// One sentence for people, naming `protocol`'s states where it matters.
    pub fn describe(&self, protocol: &Protocol) -> String {
        match self {
            Layout::Buffer { slots } => {
                let names: Vec<String> = slots
                    .iter()
                    .map(|&i| format!("`{}`", protocol.states[i].name.unraw()))
                    .collect();
                format!(
                    "A session lives in one buffer allocated by `init()`, with a slot for each \
                     of {}: messages allocate nothing.",
                    names.join(", ")
                )
            }
            Layout::Lanes => "A session is two lanes allocated by `init()`, one per direction: \
                              messages allocate nothing while the receiver keeps up."
                .to_string(),
            Layout::Packets(WhyPackets::UsedOnce) => {
                "Each message travels in a packet of its own: a session is used once.".to_string()
            }
            Layout::Packets(WhyPackets::GenericsDiffer) => {
                "Each message travels in a packet of its own, since the states do not all \
                 share one list of generic parameters."
                    .to_string()
            }
        }
    }
}

impl fmt::Display for Layout {
    /// A short name: `buffer`, `lanes` or `packets`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layout::Buffer { .. } => "buffer",
            Layout::Lanes => "lanes",
            Layout::Packets(_) => "packets",
        })
    }
}

/// Whether every state declares the same parameters and every transition passes them on
/// unchanged, so one session type (a buffer, or the lanes' message enums) serves the whole
/// session.
fn shares_one_parameter_list(protocol: &Protocol) -> bool {
    let params = |state: &crate::ast::State| -> Vec<String> {
        state
            .generics
            .params
            .iter()
            .map(|p| p.name.clone())
            .collect()
    };
    let Some(first) = protocol.states.first().map(params) else {
        return true;
    };
    protocol.states.iter().all(|state| {
        params(state) == first
            && state.messages.iter().all(|message| match &message.next {
                Next::End { .. } => true,
                Next::State { args, .. } => {
                    args.len() == first.len()
                        && args.iter().zip(&first).all(|(arg, param)| {
                            quote::ToTokens::to_token_stream(&arg.syn).to_string() == *param
                        })
                }
            })
    })
}
