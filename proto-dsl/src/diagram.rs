//! Pictures and tables of a protocol for people: an SVG state diagram (laid out here, for
//! rustdoc), a Mermaid state diagram (for Markdown), a Graphviz DOT graph, and a plain-text
//! table with the protocol's liveness. The command line prints them and codegen's `diagram`
//! feature puts the SVG one in the docs.
//!
//! All three read only the AST (and the liveness, for the table), so their output depends on
//! nothing but the protocol and is stable enough to snapshot. Payload types are printed the way
//! rustfmt would write them, whatever the spacing in the source.
//!
//! ```
//! let source = "pingpong { Ping: send { Ping -> Pong } Pong: recv { Pong -> Ping, Stop -> ! } }";
//! let analysis = proto_dsl::analyze(source).unwrap();
//! let (protocol, liveness) = analysis.protocols().next().unwrap();
//! assert!(proto_dsl::diagram::mermaid(protocol).contains("Pong --> [*] : server sends Stop"));
//! assert!(proto_dsl::diagram::dot(protocol).contains("\"Ping\" -> \"Pong\""));
//! assert!(proto_dsl::diagram::svg(protocol).contains(">server: Stop</text>"));
//! assert!(proto_dsl::diagram::explain(protocol, liveness).contains("bounded: yes"));
//! ```

mod svg;

use std::fmt::Write as _;

use quote::ToTokens;

pub use svg::svg;

use crate::ast::{Direction, Message, Next, Protocol, State};
use crate::diagnostic::push_spaces;
use crate::layout::Layout;
use crate::liveness::Liveness;

/// Who sends in a state, as the diagrams say it: protocols are written from the client's side,
/// so `send` means the client sends. `None` for a state without messages.
fn sender(state: &State) -> Option<&'static str> {
    match state.direction {
        _ if state.messages.is_empty() => None,
        Some(Direction::Send) => Some("client"),
        Some(Direction::Recv) => Some("server"),
        None => None,
    }
}

/// A type as rustfmt would write it (`Vec<u8>`, not the token stream's `Vec < u8 >`).
pub(crate) fn type_text(ty: &syn::Type) -> String {
    // prettyplease formats whole files only: wrap the type in an alias and cut it out again.
    let file: syn::File = syn::parse_quote!(type __T = #ty;);
    let text = prettyplease::unparse(&file);
    let text = text
        .trim()
        .trim_start_matches("type __T =")
        .trim_end_matches(';');
    // A very long type wraps over lines; one line reads better in a label.
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `Name(T, U)`, or `Name` without payload.
fn message_text(message: &Message) -> String {
    if message.payload.is_empty() {
        return message.name.unraw().to_string();
    }
    let types: Vec<String> = message.payload.iter().map(|t| type_text(&t.syn)).collect();
    format!("{}({})", message.name.unraw(), types.join(", "))
}

/// `State`, `State<T, U>` or `!`.
pub(crate) fn next_text(next: &Next) -> String {
    match next {
        Next::End { .. } => "!".to_string(),
        Next::State { name, args, .. } if args.is_empty() => name.unraw().to_string(),
        Next::State { name, args, .. } => {
            let args: Vec<String> = args
                .iter()
                .map(|arg| match &arg.syn {
                    syn::GenericArgument::Type(ty) => type_text(ty),
                    other => other.to_token_stream().to_string(),
                })
                .collect();
            format!("{}<{}>", name.unraw(), args.join(", "))
        }
    }
}

/// A state's name as drawn: with its parameters' names (`Open<T>`).
pub(crate) fn state_text(protocol: &Protocol, index: usize) -> String {
    let state = &protocol.states[index];
    let mut text = state.name.unraw().to_string();
    if !state.generics.params.is_empty() {
        let params: Vec<&str> = state
            .generics
            .params
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        let _ = write!(text, "<{}>", params.join(", "));
    }
    text
}

/// One row of a protocol's transition table: what the module docs, `explain`, and the
/// diagrams show, built once here so they cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The index of the state in `Protocol::states`.
    pub state: usize,
    /// Who sends in the state (`client` or `server`); `None` for a state without messages.
    pub sender: Option<&'static str>,
    /// The message with its payload types as rustfmt writes them (`Jump(Vec<String>)`);
    /// `None` for a state without messages (a row that ends the protocol).
    pub message: Option<String>,
    /// The next state with its arguments (`Open<T>`), or `None` for `!` and for a state without
    /// messages.
    pub next: Option<String>,
    /// The index of the next state, when there is one (and it resolves).
    pub next_state: Option<usize>,
}

/// The transition table of a protocol: a row per message, in declaration order, and a row
/// for each state without messages.
pub fn transitions(protocol: &Protocol) -> Vec<Transition> {
    let index_of = protocol.state_map();
    let mut rows = Vec::new();
    for (index, state) in protocol.states.iter().enumerate() {
        let sender = sender(state);
        if state.messages.is_empty() {
            rows.push(Transition {
                state: index,
                sender: None,
                message: None,
                next: None,
                next_state: None,
            });
        }
        for message in &state.messages {
            rows.push(Transition {
                state: index,
                sender,
                message: Some(message_text(message)),
                next: message.next.state_name().map(|_| next_text(&message.next)),
                next_state: message
                    .next
                    .state_name()
                    .and_then(|name| index_of.get(name.unraw()).copied()),
            });
        }
    }
    rows
}

/// Words that Mermaid's state diagram grammar reserves: a state called one of them gets a
/// prefixed id (and its own name as the label), since the seeds' spelling allows lower-case
/// state names such as `end`.
const MERMAID_KEYWORDS: &[&str] = &[
    "as",
    "class",
    "classdef",
    "click",
    "direction",
    "end",
    "hide",
    "left",
    "note",
    "of",
    "right",
    "scale",
    "state",
    "statediagram",
    "statediagram-v2",
    "style",
];

fn mermaid_id(name: &str) -> String {
    if MERMAID_KEYWORDS.contains(&name.to_ascii_lowercase().as_str()) {
        format!("state_{name}")
    } else {
        name.to_string()
    }
}

/// Escapes text for a Mermaid transition label: the grammar ends a label at `:` or `;`, and
/// `<...>` would be taken for HTML, so those become Mermaid's `#...;` entity codes.
fn mermaid_label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ':' => out.push_str("#58;"),
            ';' => out.push_str("#59;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '"' => out.push_str("#quot;"),
            c => out.push(c),
        }
    }
    out
}

/// A Mermaid state diagram (`stateDiagram-v2`) of the protocol, without the Markdown fence:
/// `[*]` marks the start and the end (`!`, or a state without messages), and every transition
/// is labelled with who sends the message and its payload types.
pub fn mermaid(protocol: &Protocol) -> String {
    let mut out = String::from("stateDiagram-v2\n");
    for state in &protocol.states {
        let id = mermaid_id(state.name.unraw());
        if id != state.name.unraw() {
            let _ = writeln!(out, "    state \"{}\" as {id}", state.name.unraw());
        }
    }
    if let Some(start) = protocol.start() {
        let _ = writeln!(out, "    [*] --> {}", mermaid_id(start.name.unraw()));
    }
    for row in transitions(protocol) {
        let from = mermaid_id(protocol.states[row.state].name.unraw());
        let (Some(who), Some(message)) = (row.sender, &row.message) else {
            let _ = writeln!(out, "    {from} --> [*]");
            continue;
        };
        let to = match row.next_state {
            Some(next) => mermaid_id(protocol.states[next].name.unraw()),
            None => "[*]".to_string(),
        };
        let label = mermaid_label(&format!("{who} sends {message}"));
        let _ = writeln!(out, "    {from} --> {to} : {label}");
    }
    out
}

/// Escapes text for a double-quoted DOT string.
fn dot_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A Graphviz DOT graph of the protocol: states are boxes, a point marks the start and a
/// double circle `!` the end; edges are messages labelled with their sender and payload, solid
/// when the client sends and dashed when the server does.
pub fn dot(protocol: &Protocol) -> String {
    // Ids are quoted, and the start and end ones cannot be Rust identifiers, so no state name
    // can collide with them or with DOT keywords (`node`, `edge`, `graph`).
    const START: &str = "\"(start)\"";
    const END: &str = "\"!\"";
    let name = protocol.name.unraw();
    let mut out = format!("digraph {} {{\n", dot_string(name));
    let _ = writeln!(
        out,
        "    label={}; labelloc=t;",
        dot_string(&format!("protocol {name}"))
    );
    out.push_str("    rankdir=LR;\n");
    out.push_str("    node [shape=box, style=rounded];\n");
    let _ = writeln!(out, "    {START} [shape=point, label=\"\"];");
    let _ = writeln!(out, "    {END} [shape=doublecircle, label=\"!\"];");
    for state in &protocol.states {
        let _ = writeln!(out, "    {};", dot_string(state.name.unraw()));
    }
    if let Some(start) = protocol.start() {
        let _ = writeln!(out, "    {START} -> {};", dot_string(start.name.unraw()));
    }
    for row in transitions(protocol) {
        let from = dot_string(protocol.states[row.state].name.unraw());
        let (Some(who), Some(message)) = (row.sender, &row.message) else {
            let _ = writeln!(out, "    {from} -> {END};");
            continue;
        };
        let style = if who == "client" { "solid" } else { "dashed" };
        let to = match row.next_state {
            Some(next) => dot_string(protocol.states[next].name.unraw()),
            None => END.to_string(),
        };
        let label = dot_string(&format!("{who}: {message}"));
        let _ = writeln!(out, "    {from} -> {to} [label={label}, style={style}];");
    }
    out.push_str("}\n");
    out
}

/// What liveness found (reachable states, whether a session can end, whether the protocol is
/// bounded) and the session layout that follows, then a plain-text table of the protocol: state, who sends, message, next state,
/// one row per message.
pub fn explain(protocol: &Protocol, liveness: &Liveness) -> String {
    let mut rows: Vec<[String; 4]> = vec![[
        "state".to_string(),
        "sent by".to_string(),
        "message".to_string(),
        "next".to_string(),
    ]];
    let mut previous = None;
    for row in transitions(protocol) {
        // Parameter names only (`Idle<K, V>`): bounds would crowd the table, and the
        // `next` column names states the same way.
        let mut name = state_text(protocol, row.state);
        if !liveness.is_reachable(row.state) {
            name.push_str(" (unreachable)");
        }
        let Some(message) = row.message else {
            rows.push([
                name,
                "-".into(),
                "(ends the protocol)".into(),
                String::new(),
            ]);
            continue;
        };
        // The state and sender are written on its first row only, so states stand out.
        let first = previous.replace(row.state) != Some(row.state);
        let (state_cell, who_cell) = if first {
            (name, row.sender.unwrap_or("-").to_string())
        } else {
            (String::new(), String::new())
        };
        rows.push([
            state_cell,
            who_cell,
            message,
            row.next.unwrap_or_else(|| "!".to_string()),
        ]);
    }
    let mut widths = [0; 4];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    // Liveness's report opens with `protocol <name>`, a heading for the table below it.
    let layout = Layout::of(protocol, liveness);
    let mut out = format!(
        "{liveness}  layout: {layout}. {}\n\n",
        layout.describe(protocol)
    );
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                // Not `{cell:width$}`: a cell can be wider than `format!`'s `u16` widths.
                push_spaces(&mut line, width.saturating_sub(cell.chars().count()) + 2);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(source: &str) -> (Protocol, Liveness) {
        let analysis = crate::analyze(source).unwrap();
        (
            analysis.file.protocols[0].clone(),
            analysis.liveness[0].clone(),
        )
    }

    #[test]
    fn payload_types_are_printed_as_rustfmt_would() {
        let (p, _) = protocol("p { S: send { M(Vec < u8 >, & 'static str, [u8 ; 4]) -> ! } }");
        assert_eq!(
            message_text(&p.states[0].messages[0]),
            "M(Vec<u8>, &'static str, [u8; 4])"
        );
    }

    #[test]
    fn mermaid_escapes_what_its_grammar_would_misread() {
        let (p, _) = protocol("p { end: send { M(std::vec::Vec<u8>) -> end, Stop -> ! } }");
        let text = mermaid(&p);
        assert!(text.contains("state \"end\" as state_end\n"), "{text}");
        assert!(
            text.contains(
                "state_end --> state_end : client sends M(std#58;#58;vec#58;#58;Vec#lt;u8#gt;)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("state_end --> [*] : client sends Stop\n"),
            "{text}"
        );
    }

    #[test]
    fn dot_quotes_ids_and_styles_edges_by_sender() {
        let (p, _) = protocol(
            "p { node: send { Ask(String) -> Answer } Answer: recv { Say(&'static str) -> ! } }",
        );
        let text = dot(&p);
        assert!(
            text.contains("\"node\" -> \"Answer\" [label=\"client: Ask(String)\", style=solid];"),
            "{text}"
        );
        assert!(
            text.contains(
                "\"Answer\" -> \"!\" [label=\"server: Say(&'static str)\", style=dashed];"
            ),
            "{text}"
        );
    }

    #[test]
    fn explain_marks_unreachable_states_and_message_less_ones() {
        let (p, l) = protocol(
            "p { A: send { Go -> B } B {} #[allow(unreachable_states)] C: recv { Back -> A } }",
        );
        assert_eq!(
            explain(&p, &l),
            "protocol p\n  reachable: A, B\n  unreachable: C\n  can end: yes\n  \
             bounded: yes\n  layout: buffer. A session lives in one buffer allocated by \
             `init()`, with a slot for each of `A`, `C`: messages allocate nothing.\n\n\
             state            sent by  message              next\n\
             A                client   Go                   B\n\
             B                -        (ends the protocol)\n\
             C (unreachable)  server   Back                 A\n"
        );
    }
}
