//! The protocol AST: what `parse` builds and `check`, `liveness` and codegen read. Every node
//! carries the byte range of its source text, and Rust fragments carry both their syn value and
//! their range, so that any later stage can point an error at the user's tokens.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

use quote::ToTokens;

/// A byte range into the source that was parsed.
pub type Span = Range<usize>;

/// Everything in one source: a `*.pipes` file or the body of one `proto!` invocation.
#[derive(Debug, Clone)]
pub struct File {
    /// The protocols, in source order.
    pub protocols: Vec<Protocol>,
    /// The whole source.
    pub span: Span,
}

/// A name written by the user (a protocol, state, message or direction word), with its range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// The name as written, including an `r#` prefix if there is one.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

impl Name {
    /// The name without an `r#` prefix: what it means, as opposed to how it was spelled.
    pub fn unraw(&self) -> &str {
        self.text.strip_prefix("r#").unwrap_or(&self.text)
    }

    /// Whether it was written as a raw identifier (`r#type`).
    pub fn is_raw(&self) -> bool {
        self.text.starts_with("r#")
    }
}

/// A doc comment line (`/// text`), to be carried onto the generated item as `#[doc]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    /// The text after `///`, leading space kept, as rustc does for `#[doc]`.
    pub text: String,
    /// The whole comment, `///` included.
    pub span: Span,
}

/// An outer attribute (`#[...]`), to be carried onto the generated item.
#[derive(Debug, Clone)]
pub struct Attribute {
    /// The attribute as syn parsed it.
    pub syn: syn::Attribute,
    /// The whole attribute, `#` included.
    pub span: Span,
}

/// The doc comments and attributes written before a protocol, state or message.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    /// Doc comment lines, in order.
    pub docs: Vec<Doc>,
    /// Attributes other than doc comments, in order (minus any the compiler consumes itself,
    /// such as `#[allow(unreachable_states)]` on a protocol).
    pub attrs: Vec<Attribute>,
}

/// `[attributes] [visibility] name { states }`.
#[derive(Debug, Clone)]
pub struct Protocol {
    /// Docs and attributes for the generated module.
    pub meta: Meta,
    /// Set when the protocol carries `#[allow(unreachable_states)]`: the attribute's range.
    /// The attribute is consumed here, not passed on to rustc, which does not know it.
    pub allow_unreachable: Option<Span>,
    /// Set when the protocol carries `#[wire]` (its sessions can cross processes and
    /// machines): the attribute's range. Consumed here, like `allow_unreachable`.
    pub wire: Option<Span>,
    /// The visibility of the generated module (`Visibility::Inherited` when none was written).
    pub vis: syn::Visibility,
    /// Where the visibility was written, if it was.
    pub vis_span: Option<Span>,
    /// The protocol's name: the name of the generated module.
    pub name: Name,
    /// The states in source order; the first one is the start state.
    pub states: Vec<State>,
    /// The whole protocol, attributes included.
    pub span: Span,
}

impl Protocol {
    /// The index of the state named `name` (the first one, should there be duplicates). A
    /// scan of the states: for a lookup per message, build [`Protocol::state_map`] once.
    pub fn state_index(&self, name: &str) -> Option<usize> {
        self.states.iter().position(|s| s.name.unraw() == name)
    }

    /// Every state's name with its index, as [`Protocol::state_index`] finds them (the first
    /// of duplicates), built in one pass: the stages look up a state per message, and a scan
    /// each time made code generation quadratic in the number of states.
    pub fn state_map(&self) -> HashMap<&str, usize> {
        let mut map = HashMap::with_capacity(self.states.len());
        for (i, state) in self.states.iter().enumerate() {
            map.entry(state.name.unraw()).or_insert(i);
        }
        map
    }

    /// The start state: the first one written. `None` only for an empty protocol, which the
    /// checker rejects.
    pub fn start(&self) -> Option<&State> {
        self.states.first()
    }
}

/// Who sends in a state, seen from the client (protocols are written from the client's side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// `send`: the client sends, the server receives.
    Send,
    /// `recv`: the client receives, the server sends.
    Recv,
}

impl Direction {
    /// The word that spells it in the language.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Recv => "recv",
        }
    }

    /// The direction the server sees.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::Send => Direction::Recv,
            Direction::Recv => Direction::Send,
        }
    }
}

/// `Name: direction<generics> { messages }`.
#[derive(Debug, Clone)]
pub struct State {
    /// Docs and attributes for the generated types of this state.
    pub meta: Meta,
    /// Set when the state carries `#[allow(unreachable_states)]`: the attribute's range.
    pub allow_unreachable: Option<Span>,
    /// The state's name: the name of its endpoint types and of its message enum.
    pub name: Name,
    /// The direction word as written, if one was (`send`, `recv`, or a misspelling the
    /// checker reports).
    pub direction_word: Option<Name>,
    /// The direction, when the word is `send` or `recv`. After a successful check, every state
    /// with messages has one; a state without messages may have none (it ends the protocol).
    pub direction: Option<Direction>,
    /// Generic parameters of the state.
    pub generics: Generics,
    /// The messages allowed in this state, in source order.
    pub messages: Vec<Message>,
    /// The whole state, attributes included.
    pub span: Span,
}

/// A state's generic parameters.
#[derive(Debug, Clone)]
pub struct Generics {
    /// The parameters as one syn value, ready to be spliced into generated items (no where
    /// clause: the language has none).
    pub syn: syn::Generics,
    /// Each parameter with its range, in order (the same order as `syn.params`).
    pub params: Vec<GenericParam>,
    /// The range of `<...>`, if written.
    pub span: Option<Span>,
}

impl Generics {
    /// No parameters.
    pub fn empty() -> Generics {
        Generics {
            syn: syn::Generics::default(),
            params: Vec::new(),
            span: None,
        }
    }

    /// Whether a type or const parameter of this name is declared.
    pub fn declares(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.name == name)
    }
}

/// One generic parameter: `T: Send`, `'a`, `const N: usize`.
#[derive(Debug, Clone)]
pub struct GenericParam {
    /// The parameter as syn parsed it.
    pub syn: syn::GenericParam,
    /// Its name (`T`, `'a`, `N`).
    pub name: String,
    /// The whole parameter, bounds included.
    pub span: Span,
}

/// `Name[(Type, ...)] -> Next`.
#[derive(Debug, Clone)]
pub struct Message {
    /// Docs and attributes for the generated enum variant and send method.
    pub meta: Meta,
    /// The message's name: its enum variant; the send method is its snake_case form.
    pub name: Name,
    /// Payload types, in order.
    pub payload: Vec<RustType>,
    /// Where the message leads.
    pub next: Next,
    /// The whole message, attributes included.
    pub span: Span,
}

/// A Rust type written in the protocol (a payload type).
#[derive(Debug, Clone)]
pub struct RustType {
    /// The type as syn parsed it. It names things as seen where the macro is invoked.
    pub syn: syn::Type,
    /// Where it was written.
    pub span: Span,
}

/// A type (or lifetime or const) argument to a generic target state: the `T` of `-> Open<T>`.
#[derive(Debug, Clone)]
pub struct TypeArg {
    /// The argument as syn parsed it.
    pub syn: syn::GenericArgument,
    /// Where it was written.
    pub span: Span,
}

/// Where a message leads.
#[derive(Debug, Clone)]
pub enum Next {
    /// `-> !`: the protocol ends; no endpoint comes back.
    End {
        /// The range of `!`.
        span: Span,
    },
    /// `-> State` or `-> State<Args>`.
    State {
        /// The target state's name.
        name: Name,
        /// Its type arguments, in order.
        args: Vec<TypeArg>,
        /// The range of `<...>`, if written.
        args_span: Option<Span>,
    },
}

impl Next {
    /// The target state's name, unless the message ends the protocol.
    pub fn state_name(&self) -> Option<&Name> {
        match self {
            Next::End { .. } => None,
            Next::State { name, .. } => Some(name),
        }
    }

    /// The whole target (`!`, `State` or `State<Args>`).
    pub fn span(&self) -> Span {
        match self {
            Next::End { span } => span.clone(),
            Next::State {
                name,
                args_span: Some(args),
                ..
            } => name.span.start..args.end,
            Next::State { name, .. } => name.span.clone(),
        }
    }
}

/// Tokens of a syn value, as one line: how the AST dump shows Rust fragments.
fn tokens(value: &impl ToTokens) -> String {
    value.to_token_stream().to_string()
}

impl File {
    /// An indented outline of the AST with every range: stable, readable, and meant for
    /// snapshots and for debugging the parser (`Debug` output of syn values is unreadable).
    pub fn outline(&self) -> String {
        let mut out = String::new();
        for p in &self.protocols {
            p.outline_into(&mut out);
        }
        out
    }
}

fn meta_outline(meta: &Meta, indent: &str, out: &mut String) {
    for d in &meta.docs {
        let _ = writeln!(out, "{indent}doc {:?} @{:?}", d.text, d.span);
    }
    for a in &meta.attrs {
        let _ = writeln!(out, "{indent}attr {} @{:?}", tokens(&a.syn), a.span);
    }
}

impl Protocol {
    fn outline_into(&self, out: &mut String) {
        meta_outline(&self.meta, "", out);
        if let Some(span) = &self.allow_unreachable {
            let _ = writeln!(out, "allow unreachable_states @{span:?}");
        }
        if let Some(span) = &self.wire {
            let _ = writeln!(out, "wire @{span:?}");
        }
        let vis = match &self.vis_span {
            Some(span) => format!("{} @{span:?} ", tokens(&self.vis)),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "protocol {vis}{} @{:?} span {:?}",
            self.name.text, self.name.span, self.span
        );
        for s in &self.states {
            meta_outline(&s.meta, "  ", out);
            let dir = match (&s.direction_word, s.direction) {
                (Some(w), Some(d)) => format!(": {} @{:?}", d.word(), w.span),
                (Some(w), None) => format!(": {:?} (not a direction) @{:?}", w.text, w.span),
                (None, _) => ": (no direction)".to_string(),
            };
            let _ = writeln!(
                out,
                "  state {} @{:?} {dir} span {:?}",
                s.name.text, s.name.span, s.span
            );
            for g in &s.generics.params {
                let _ = writeln!(
                    out,
                    "    param {} = {} @{:?}",
                    g.name,
                    tokens(&g.syn),
                    g.span
                );
            }
            for m in &s.messages {
                meta_outline(&m.meta, "    ", out);
                let _ = writeln!(
                    out,
                    "    message {} @{:?} span {:?}",
                    m.name.text, m.name.span, m.span
                );
                for t in &m.payload {
                    let _ = writeln!(out, "      payload {} @{:?}", tokens(&t.syn), t.span);
                }
                match &m.next {
                    Next::End { span } => {
                        let _ = writeln!(out, "      -> ! @{span:?}");
                    }
                    Next::State { name, args, .. } => {
                        let _ = writeln!(out, "      -> {} @{:?}", name.text, name.span);
                        for a in args {
                            let _ = writeln!(out, "        arg {} @{:?}", tokens(&a.syn), a.span);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn state_map_finds_what_state_index_finds() {
        // Duplicates parse (the checker reports them): the first definition wins in both.
        let file =
            crate::parse("p { A: send { M -> B } B: recv { N -> A } A: send { O -> ! } }").unwrap();
        let protocol = &file.protocols[0];
        let map = protocol.state_map();
        assert_eq!(map.len(), 2);
        for name in ["A", "B", "C"] {
            assert_eq!(map.get(name).copied(), protocol.state_index(name), "{name}");
        }
    }
}
