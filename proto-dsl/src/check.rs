//! The checker: everything that makes a parsed protocol impossible (or unwise) to compile,
//! reported all at once, each at the user's tokens, in protocol words. What it accepts, codegen
//! may rely on: state names resolve and are unique, every state with messages has a direction,
//! type arguments match, method names are distinct, and every state is reachable (or allowed
//! not to be).

use std::collections::{HashMap, HashSet};

use syn::ext::IdentExt;
use syn::visit::Visit;

use crate::ast::{File, Name, Next, Protocol, Span, State};
use crate::diagnostic::{Diagnostic, Diagnostics};

/// Method names every endpoint (or its `Recv` trait) already has: a message whose send method
/// would be called the same is refused.
pub const ENDPOINT_METHODS: &[&str] = &["recv", "try_recv", "recv_timeout"];

/// Names a state cannot take: the generated module holds `mod client` and `mod server`.
pub const RESERVED_STATE_NAMES: &[&str] = &["client", "server"];

/// The generated module's own hidden items (with `#[wire]`, its pump's too). A state's hidden
/// payload enum is `__` and the state's name, so no state may make one of these; names that
/// start with `__` are refused outright, as the generated code's. (The module of aliases of
/// the user's types, `__super`, needs no entry: no state can be called `super`.)
pub const HIDDEN_ITEMS: &[&str] = &[
    "__Buffer",
    "__FromClient",
    "__FromServer",
    "__pipes",
    "__net",
    "__WirePayload",
    "__PumpClient",
    "__PumpServer",
    "__payload",
];

/// The session buffer's hidden field beside the states' slots.
const HIDDEN_FIELD: &str = "_params";

/// Refuses a state or message name the generated code keeps for its own items, if `name` is
/// one; `what` is "state" or "message".
fn hidden_name(errors: &mut Vec<Diagnostic>, name: &Name, what: &str) -> bool {
    let text = name.unraw();
    let help = if text.starts_with("__") {
        "names that start with `__` are the generated code's".to_string()
    } else if what == "state" && HIDDEN_ITEMS.contains(&format!("__{text}").as_str()) {
        format!(
            "the generated module has a hidden `__{text}` of its own, and names each state's hidden payload enum `__` and the state's name"
        )
    } else if what == "state" && text == HIDDEN_FIELD {
        format!("a session's buffer has a hidden field `{HIDDEN_FIELD}` beside the states' slots")
    } else {
        return false;
    };
    errors.push(
        Diagnostic::error(
            format!("a {what} cannot be called `{text}`"),
            name.span.clone(),
            "reserved name",
        )
        .with_help(format!("{help}; rename the {what}")),
    );
    true
}

/// Rust's strict and reserved keywords (edition 2024). A name that is one cannot become a
/// module, type or method unless written raw (`r#type`); a method name derived from a message
/// name cannot be written raw by the user at all, so it must not be one.
const KEYWORDS: &[&str] = &[
    "_", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue",
    "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
    "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Whether `word` is a Rust keyword.
pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

/// The send method of a message: its name in snake_case (`WhatsYourName` -> `whats_your_name`,
/// `HTTPGet` -> `http_get`; already snake_case names stay as they are). Codegen must use this
/// function, so that the collisions the checker refuses are the ones that would happen.
pub fn method_name(message: &str) -> String {
    let message = message.strip_prefix("r#").unwrap_or(message);
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            // A word starts at an upper-case letter after a lower-case one or a digit
            // (`sayHello`), or at the last capital of an acronym (`HTTPGet` -> `http_get`).
            if prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_is_lower)
            {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Checks a parsed file; `source` is the text it was parsed from (used to point inside Rust
/// fragments). Returns every error found, in source order; an empty result means codegen may
/// proceed.
pub fn check(file: &File, source: &str) -> Diagnostics {
    let mut errors = Vec::new();
    if file.protocols.is_empty() {
        errors.push(
            Diagnostic::error(
                "no protocol to compile",
                file.span.end..file.span.end,
                "expected a protocol",
            )
            .with_help("a protocol looks like `name { Start: send { Hello -> ! } }`"),
        );
    }
    let mut protocols: HashMap<&str, &Name> = HashMap::new();
    for protocol in &file.protocols {
        let name = &protocol.name;
        if let Some(first) = protocols.get(name.unraw()) {
            errors.push(
                Diagnostic::error(
                    format!("the protocol `{}` is defined more than once", name.unraw()),
                    name.span.clone(),
                    "defined again here",
                )
                .with_note(
                    first.span.clone(),
                    format!("`{}` first defined here", name.unraw()),
                ),
            );
        } else {
            protocols.insert(name.unraw(), name);
        }
        keyword_name(&mut errors, name, "protocol");
        // Built once per protocol: looking names up by scanning made the check quadratic.
        let index = protocol.state_map();
        let mut params = HashMap::new();
        for (i, state) in protocol.states.iter().enumerate() {
            for param in &state.generics.params {
                params.entry(param.name.as_str()).or_insert(i);
            }
        }
        ProtocolChecker {
            protocol,
            source,
            errors: &mut errors,
            index,
            params,
        }
        .run();
    }
    for protocol in file.protocols.iter().filter(|p| p.wire.is_some()) {
        wire(file, protocol, &mut errors);
    }
    let mut diagnostics = Diagnostics(errors);
    diagnostics.sort();
    diagnostics
}

/// Names a `#[wire]` protocol's generated module holds besides the states' (its `Wire` type):
/// a state of a wire protocol cannot take them.
pub const WIRE_RESERVED_STATE_NAMES: &[&str] = &["Wire"];

/// What a `#[wire]` protocol must be besides a protocol: no generic states (a session's
/// fingerprint and its payloads' decoders are fixed when the protocol is compiled), no state
/// named like the generated `Wire` type, and no endpoint in a payload (delegation would need a
/// session inside the session; the user opens a second one instead). Payload types that do not
/// serialize are refused by rustc, at the payload, through the generated check.
fn wire(file: &File, protocol: &Protocol, errors: &mut Vec<Diagnostic>) {
    let name = protocol.name.unraw();
    for state in &protocol.states {
        if let Some(span) = &state.generics.span {
            errors.push(
                Diagnostic::error(
                    format!(
                        "the #[wire] protocol `{name}` cannot have a generic state (`{}`)",
                        state.name.unraw()
                    ),
                    span.clone(),
                    "generic parameters of a #[wire] protocol",
                )
                .with_help(
                    "both ends of a remote session must agree on every payload type when they are compiled (the handshake compares a fingerprint of them): write the types out, or leave out #[wire]",
                ),
            );
        }
        if WIRE_RESERVED_STATE_NAMES.contains(&state.name.unraw()) {
            errors.push(
                Diagnostic::error(
                    format!(
                        "a state of the #[wire] protocol `{name}` cannot be called `{}`",
                        state.name.unraw()
                    ),
                    state.name.span.clone(),
                    "reserved name",
                )
                .with_help(format!(
                    "the generated module holds `{name}::Wire`, the protocol as remote sessions name it; rename the state"
                )),
            );
        }
        for message in &state.messages {
            for payload in &message.payload {
                let mut paths = Paths::default();
                paths.visit_type(&payload.syn);
                if let Some((other, state)) =
                    paths.0.iter().find_map(|path| endpoint_of(file, path))
                {
                    let is_wire = file
                        .protocols
                        .iter()
                        .any(|p| p.name.unraw() == other && p.wire.is_some());
                    let mark = if is_wire { "" } else { "mark it #[wire] and " };
                    errors.push(
                        Diagnostic::error(
                            format!(
                                "the #[wire] protocol `{name}` cannot send an endpoint: message `{}` carries the {state} endpoint of `{other}`",
                                message.name.unraw()
                            ),
                            payload.span.clone(),
                            format!("an endpoint of `{other}`"),
                        )
                        .with_help(format!(
                            "an endpoint cannot cross the wire: open a second session of `{other}` ({mark}open it with `node.client::<{other}::Wire>(addr)`) instead of sending its endpoint"
                        )),
                    );
                }
            }
        }
    }
}

/// If `path` names an endpoint type of a protocol in `file` (`other::client::Start`, the
/// protocol's own included: a payload is named as where `proto!` is invoked, where the
/// protocols are modules and `client::Start` is not one of theirs), the protocol's name and
/// which side (with the state).
fn endpoint_of(file: &File, path: &[String]) -> Option<(String, String)> {
    path.windows(3).find_map(|names| {
        let side = names[1].as_str();
        if side != "client" && side != "server" {
            return None;
        }
        let owner = file.protocols.iter().find(|p| p.name.unraw() == names[0])?;
        owner.state_index(&names[2])?;
        Some((
            owner.name.unraw().to_string(),
            format!("{side}'s `{}`", names[2]),
        ))
    })
}

/// Every path in a Rust type, as its segments' names.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.0.push(
            path.segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect(),
        );
        syn::visit::visit_path(self, path);
    }
}

/// Keywords that cannot be raw identifiers either.
const NOT_RAW: &[&str] = &["_", "crate", "self", "Self", "super"];

/// Refuses a keyword as the name of a protocol, state or message unless written raw.
fn keyword_name(errors: &mut Vec<Diagnostic>, name: &Name, what: &str) {
    if name.is_raw() && NOT_RAW.contains(&name.unraw()) {
        errors.push(
            Diagnostic::error(
                format!(
                    "`{}` cannot name a {what}, even as a raw identifier",
                    name.text
                ),
                name.span.clone(),
                "not a valid name",
            )
            .with_help(format!("rename the {what}")),
        );
    } else if !name.is_raw() && is_keyword(&name.text) {
        errors.push(
            Diagnostic::error(
                format!("`{}` is a Rust keyword and cannot name a {what}", name.text),
                name.span.clone(),
                "keyword",
            )
            .with_help(format!(
                "rename the {what}, or write it as a raw identifier: `r#{}`",
                name.text
            )),
        );
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely typo.
fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| {
            let distance = if c.eq_ignore_ascii_case(word) {
                0
            } else {
                edit_distance(word, c)
            };
            (distance, c)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// How many state names "did you mean" may measure against missing ones, per protocol: a
/// search measures every state, so without a budget a protocol whose targets are all missing
/// (a prefix changed) took time quadratic in its states. Past the budget the help is the
/// generic one.
const SUGGESTION_BUDGET: usize = 1_000_000;

/// "Did you mean" for missing state names: one search per name, however many messages step
/// to it, and searches only while the budget lasts.
struct Suggestions<'a> {
    found: HashMap<&'a str, Option<&'a str>>,
    /// State names left to measure.
    budget: usize,
}

impl<'a> Suggestions<'a> {
    fn new(budget: usize) -> Self {
        Suggestions {
            found: HashMap::new(),
            budget,
        }
    }

    /// The state of `states` that `missing` probably meant.
    fn of(&mut self, missing: &'a str, states: &'a [State]) -> Option<&'a str> {
        let budget = &mut self.budget;
        *self.found.entry(missing).or_insert_with(|| {
            *budget = budget.checked_sub(states.len())?;
            suggest(missing, states.iter().map(|s| s.name.unraw()))
        })
    }
}

struct ProtocolChecker<'a> {
    protocol: &'a Protocol,
    source: &'a str,
    errors: &'a mut Vec<Diagnostic>,
    /// State name -> index of its first definition.
    index: HashMap<&'a str, usize>,
    /// Generic parameter name -> index of the first state declaring it.
    params: HashMap<&'a str, usize>,
}

impl ProtocolChecker<'_> {
    fn run(mut self) {
        let p = self.protocol;
        if p.states.is_empty() {
            self.errors.push(
                Diagnostic::error(format!("protocol `{}` has no states", p.name.unraw()), p.name.span.clone(), "empty protocol")
                    .with_help("the first state is where the protocol starts, e.g. `Start: send { Hello -> ! }`"),
            );
            return;
        }
        let mut first_of: HashMap<&str, &State> = HashMap::new();
        for state in &p.states {
            match first_of.get(state.name.unraw()) {
                Some(first) => self.errors.push(
                    Diagnostic::error(
                        format!(
                            "the state `{}` is defined more than once in protocol `{}`",
                            state.name.unraw(),
                            p.name.unraw()
                        ),
                        state.name.span.clone(),
                        "defined again here",
                    )
                    .with_note(
                        first.name.span.clone(),
                        format!("`{}` first defined here", state.name.unraw()),
                    ),
                ),
                None => {
                    first_of.insert(state.name.unraw(), state);
                }
            }
            self.state(state);
        }
        let resolved = self.transitions();
        if resolved {
            self.reachability();
        }
    }

    fn state(&mut self, state: &State) {
        let name = state.name.unraw();
        if RESERVED_STATE_NAMES.contains(&name) {
            self.errors.push(
                Diagnostic::error(
                    format!("a state cannot be called `{name}`"),
                    state.name.span.clone(),
                    "reserved name",
                )
                .with_help("the generated module already holds `mod client` and `mod server`; rename the state"),
            );
        } else if !hidden_name(self.errors, &state.name, "state") {
            keyword_name(self.errors, &state.name, "state");
        }
        match (&state.direction_word, state.direction) {
            (Some(word), None) => {
                let help = match suggest(&word.text, ["send", "recv"]) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "`send`: the client sends in this state; `recv`: the client receives".to_string(),
                };
                self.errors.push(
                    Diagnostic::error(
                        format!("`{}` is not a direction", word.text),
                        word.span.clone(),
                        "expected `send` or `recv`",
                    )
                    .with_help(help),
                );
            }
            (None, _) if !state.messages.is_empty() => self.errors.push(
                Diagnostic::error(
                    format!("state `{name}` has messages but no direction"),
                    state.name.span.clone(),
                    "missing `: send` or `: recv`",
                )
                .with_help(format!(
                    "write `{name}: send` if the client sends these messages, `{name}: recv` if it receives them"
                )),
            ),
            _ => {}
        }
        self.derived_debug(state);
        let mut params: HashMap<&str, &Span> = HashMap::new();
        for param in &state.generics.params {
            if let Some(first) = params.insert(&param.name, &param.span) {
                self.errors.push(
                    Diagnostic::error(
                        format!(
                            "the parameter `{}` is declared twice on state `{name}`",
                            param.name
                        ),
                        param.span.clone(),
                        "declared again here",
                    )
                    .with_note(
                        first.clone(),
                        format!("`{}` first declared here", param.name),
                    ),
                );
            }
            self.parameter_rules(param);
            self.type_parameter_named_like(state, param);
            self.bounds_naming_states(state, param);
        }
        self.messages(state);
        self.undeclared_parameters(state);
        self.unnameable_types(state);
    }

    /// A type parameter named like its own state (`Item: send<Item>`) shadows the state's
    /// enum in the generated impls, which name the enum with its arguments (`Item<Item>`):
    /// rustc's E0109 at the whole invocation. A parameter named like another state is fine:
    /// generated code names other states' endpoints by path (`server::Other`).
    fn type_parameter_named_like(&mut self, state: &State, param: &crate::ast::GenericParam) {
        let syn::GenericParam::Type(ty) = &param.syn else {
            return;
        };
        let name = ty.ident.unraw().to_string();
        if name != state.name.unraw() {
            return;
        }
        let at = occurrences(self.source, &param.span, &name).remove(0);
        self.errors.push(
            Diagnostic::error(
                format!("the type parameter `{name}` has the name of its state"),
                at,
                "also the name of this state",
            )
            .with_note(
                state.name.span.clone(),
                format!("state `{name}` is declared here"),
            )
            .with_help("rename the parameter or the state"),
        );
    }

    /// A parameter's bounds and a const parameter's type are written inside the generated
    /// module, where a state's enum shadows a type or trait of the same name (`T: Sync` with a
    /// state `Sync`, `const N: u8` with a state `u8`): rustc then refuses them with errors
    /// about the enum. Refused here, at the name, saying why; a path from the crate root
    /// (`::core::marker::Sync`) is not shadowed.
    fn bounds_naming_states(&mut self, state: &State, param: &crate::ast::GenericParam) {
        let mut first = FirstSegments::default();
        match &param.syn {
            syn::GenericParam::Type(ty) => {
                for bound in &ty.bounds {
                    first.visit_type_param_bound(bound);
                }
            }
            syn::GenericParam::Const(constant) => first.visit_type(&constant.ty),
            syn::GenericParam::Lifetime(_) => {}
        }
        // The state's own parameters shadow states in turn (`<U, T: Into<U>>`).
        let own = |name: &str| state.generics.params.iter().any(|p| p.name == name);
        let mut seen = HashSet::new();
        for name in first.names {
            if own(&name) || !seen.insert(name.clone()) {
                continue;
            }
            let Some(&named) = self.index.get(name.as_str()) else {
                continue;
            };
            for at in occurrences(self.source, &param.span, &name) {
                self.errors.push(
                    Diagnostic::error(
                        format!("`{name}` in the parameter `{}` names the state `{name}`", param.name),
                        at,
                        "a state of this protocol here",
                    )
                    .with_note(
                        self.protocol.states[named].name.span.clone(),
                        format!("state `{name}` is declared here"),
                    )
                    .with_help(
                        "bounds and const parameter types are named inside the protocol's module, where its states shadow other names: rename the state, or write the path from the crate root (as `::core::marker::Sync`)",
                    ),
                );
            }
        }
    }

    /// A const parameter is a value in scope of every generated method, where a pattern of
    /// the same name would match it instead of binding the method's own local (`p0`, `f`,
    /// `next`, ...), and no span hygiene keeps the two apart. Generated locals always have a
    /// lower-case letter, so a name without one, as Rust's style asks of constants, is safe.
    ///
    /// A default (`T = u8`) is refused too: every transition passes all of a state's
    /// arguments, and rustc refuses defaults on the generated impls.
    fn parameter_rules(&mut self, param: &crate::ast::GenericParam) {
        let has_default = match &param.syn {
            syn::GenericParam::Type(ty) => ty.default.is_some(),
            syn::GenericParam::Const(constant) => constant.default.is_some(),
            syn::GenericParam::Lifetime(_) => false,
        };
        if has_default {
            self.errors.push(
                Diagnostic::error(
                    format!("the parameter `{}` has a default", param.name),
                    param.span.clone(),
                    "a state's parameter takes no default",
                )
                .with_help(
                    "remove the default: every transition to the state passes all of its arguments",
                ),
            );
        }
        let syn::GenericParam::Const(constant) = &param.syn else {
            return;
        };
        let name = constant.ident.unraw().to_string();
        // At the name, where rustc's `non_upper_case_globals` points too (through a macro,
        // the name may be the user's token while `const` is the macro's).
        let at = occurrences(self.source, &param.span, &name).remove(0);
        if name.chars().any(char::is_lowercase) {
            self.errors.push(
                Diagnostic::error(
                    format!("the const parameter `{name}` has a lower-case name"),
                    at.clone(),
                    "generated code would take its own locals for this constant",
                )
                .with_help(format!(
                    "name it `{}`, in upper case as Rust's style asks of constants",
                    upper_snake_case(&name)
                )),
            );
        }
        // A state's endpoint is a type of that name in the same module: rustc then reads the
        // parameter's uses as the type (E0747, at the whole invocation).
        if let Some(&state) = self.index.get(name.as_str()) {
            self.errors.push(
                Diagnostic::error(
                    format!("the const parameter `{name}` has the name of a state"),
                    at,
                    "also a state of this protocol",
                )
                .with_note(
                    self.protocol.states[state].name.span.clone(),
                    format!("state `{name}` is declared here"),
                )
                .with_help("rename the parameter or the state"),
            );
        }
    }

    fn messages(&mut self, state: &State) {
        let mut by_name: HashMap<&str, &Name> = HashMap::new();
        let mut by_method: HashMap<String, &Name> = HashMap::new();
        for message in &state.messages {
            let name = &message.name;
            if let Some(first) = by_name.get(name.unraw()) {
                self.errors.push(
                    Diagnostic::error(
                        format!(
                            "the message `{}` is defined more than once in state `{}`",
                            name.unraw(),
                            state.name.unraw()
                        ),
                        name.span.clone(),
                        "defined again here",
                    )
                    .with_note(
                        first.span.clone(),
                        format!("`{}` first defined here", name.unraw()),
                    ),
                );
                continue;
            }
            by_name.insert(name.unraw(), name);
            if !hidden_name(self.errors, name, "message") {
                keyword_name(self.errors, name, "message");
            }
            let method = method_name(&name.text);
            if let Some(first) = by_method.get(&method) {
                self.errors.push(
                    Diagnostic::error(
                        format!(
                            "messages `{}` and `{}` in state `{}` would both send with the method `{method}`",
                            first.unraw(),
                            name.unraw(),
                            state.name.unraw()
                        ),
                        name.span.clone(),
                        format!("method `{method}` again"),
                    )
                    .with_note(first.span.clone(), format!("`{}` already takes `{method}`", first.unraw()))
                    .with_help("rename one of the messages"),
                );
                continue;
            }
            if ENDPOINT_METHODS.contains(&method.as_str()) {
                self.errors.push(
                    Diagnostic::error(
                        format!("message `{}` would send with the method `{method}`, which endpoints already have", name.unraw()),
                        name.span.clone(),
                        "collides with an endpoint method",
                    )
                    .with_help(format!("endpoints reserve {}; rename the message", quoted_list(ENDPOINT_METHODS))),
                );
            } else if is_keyword(&method) && !is_keyword(&name.text) {
                self.errors.push(
                    Diagnostic::error(
                        format!("message `{}` would send with the method `{method}`, which is a Rust keyword", name.unraw()),
                        name.span.clone(),
                        format!("method `{method}`"),
                    )
                    .with_help("rename the message"),
                );
            }
            by_method.insert(method, name);
        }
    }

    /// Type parameters of other states used in this one without being declared here: the
    /// generated items of this state would not have them in scope. A name that no state
    /// declares is taken for a type of the user's (payload types resolve where the macro is
    /// invoked), so it is left to rustc.
    fn undeclared_parameters(&mut self, state: &State) {
        if self.params.keys().all(|name| state.generics.declares(name)) {
            return;
        }
        let mut fragments: Vec<(Span, Names)> = Vec::new();
        for message in &state.messages {
            for ty in &message.payload {
                let mut names = Names::default();
                names.visit_type(&ty.syn);
                fragments.push((ty.span.clone(), names));
            }
            if let Next::State { args, .. } = &message.next {
                for arg in args {
                    let mut names = Names::default();
                    names.visit_generic_argument(&arg.syn);
                    fragments.push((arg.span.clone(), names));
                }
            }
        }
        for (span, names) in fragments {
            let mut reported = HashSet::new();
            for used in &names.0 {
                if state.generics.declares(used) {
                    continue;
                }
                let Some(owner) = self
                    .params
                    .get(used.as_str())
                    .map(|&i| &self.protocol.states[i])
                else {
                    continue;
                };
                if !reported.insert(used.clone()) {
                    continue;
                }
                let declared = owner
                    .generics
                    .params
                    .iter()
                    .find(|p| &p.name == used)
                    .map(|p| p.span.clone());
                for at in occurrences(self.source, &span, used) {
                    let mut error = Diagnostic::error(
                        format!(
                            "{} parameter `{used}` is not declared on state `{}`",
                            if used.starts_with('\'') {
                                "lifetime"
                            } else {
                                "type"
                            },
                            state.name.unraw()
                        ),
                        at,
                        "not declared on this state",
                    )
                    .with_help(format!(
                        "declare it on the state: `{}<{used}>`",
                        state.name.unraw()
                    ));
                    if let Some(declared) = &declared {
                        error = error.with_note(
                            declared.clone(),
                            format!("`{used}` is a parameter of state `{}`", owner.name.unraw()),
                        );
                    }
                    self.errors.push(error);
                }
            }
        }
    }

    /// Payload types and type arguments that name no type where `proto!` is invoked, where
    /// they are looked up (`Self`), or that no item may hold (`impl Trait`, `_`): refused
    /// here, in protocol words, since rustc would report them at the hidden type aliases that
    /// name the user's types in the generated module (`impl Trait` as an unstable feature).
    fn unnameable_types(&mut self, state: &State) {
        for message in &state.messages {
            for ty in &message.payload {
                if let Some(what) = unsized_type(&ty.syn) {
                    self.errors.push(
                        Diagnostic::error(
                            "a payload type must have a size known at compile time",
                            ty.span.clone(),
                            format!("{what} has no fixed size"),
                        )
                        .with_help(
                            "send an owned or boxed form (`String`, `Vec<T>`, `Box<[T]>`, \
                             `Box<dyn Trait>`) or a reference (`&'static str`)",
                        ),
                    );
                }
            }
            let payloads = message
                .payload
                .iter()
                .map(|ty| ("a payload type", &ty.span, Unnameable::of_type(&ty.syn)));
            let args = match &message.next {
                Next::State { args, .. } => args.as_slice(),
                Next::End { .. } => &[],
            };
            let args = args.iter().map(|arg| {
                let mut found = Unnameable::default();
                found.visit_generic_argument(&arg.syn);
                ("a type argument", &arg.span, found)
            });
            for (what, span, found) in payloads.chain(args) {
                if found.self_type {
                    for at in occurrences(self.source, span, "Self") {
                        self.errors.push(
                            Diagnostic::error(format!("{what} cannot name `Self`"), at, "`Self` is no type here")
                                .with_help("the types of a protocol are named as where `proto!` is invoked, outside any impl; write the type out"),
                        );
                    }
                }
                if let Some(bounds) = &found.impl_trait {
                    for at in occurrences(self.source, span, "impl") {
                        self.errors.push(
                            Diagnostic::error(format!("{what} cannot be `impl Trait`"), at, "`impl Trait` here")
                                .with_help(format!(
                                    "give the state a type parameter to use in its place: `{}: {}<T: {bounds}>`",
                                    state.name.unraw(),
                                    state.direction.map_or("send", |d| d.word()),
                                )),
                        );
                    }
                }
                if found.infer {
                    for at in occurrences(self.source, span, "_") {
                        self.errors.push(
                            Diagnostic::error(
                                format!("{what} cannot be left to inference"),
                                at,
                                "`_` here",
                            )
                            .with_help("write the type out"),
                        );
                    }
                }
            }
        }
    }

    /// Checks every `-> State<Args>`; returns whether all targets resolved.
    fn transitions(&mut self) -> bool {
        let p = self.protocol;
        let mut resolved = true;
        let mut suggestions = Suggestions::new(SUGGESTION_BUDGET);
        for state in &p.states {
            for message in &state.messages {
                let Next::State {
                    name,
                    args,
                    args_span,
                } = &message.next
                else {
                    continue;
                };
                let Some(&index) = self.index.get(name.unraw()) else {
                    resolved = false;
                    let mut error = Diagnostic::error(
                        format!(
                            "message `{}` steps to undefined state `{}`",
                            message.name.unraw(),
                            name.unraw()
                        ),
                        name.span.clone(),
                        format!(
                            "no state `{}` in protocol `{}`",
                            name.unraw(),
                            p.name.unraw()
                        ),
                    );
                    error = match suggestions.of(name.unraw(), &p.states) {
                        Some(s) => error.with_help(format!("did you mean `{s}`?")),
                        None => {
                            error.with_help("define the state, or end the protocol with `-> !`")
                        }
                    };
                    self.errors.push(error);
                    continue;
                };
                let target = &p.states[index];
                let wanted = target.generics.params.len();
                if args.len() != wanted {
                    let at = args_span.clone().unwrap_or_else(|| name.span.clone());
                    let declared = target
                        .generics
                        .span
                        .clone()
                        .unwrap_or_else(|| target.name.span.clone());
                    self.errors.push(
                        Diagnostic::error(
                            format!(
                                "message `{}` steps to `{}` with {} but the state takes {}",
                                message.name.unraw(),
                                name.unraw(),
                                plural(args.len(), "type argument"),
                                wanted
                            ),
                            at,
                            format!("expected {}", plural(wanted, "type argument")),
                        )
                        .with_note(
                            declared,
                            format!(
                                "`{}` is declared here with {}",
                                name.unraw(),
                                plural(wanted, "parameter")
                            ),
                        ),
                    );
                }
            }
        }
        resolved
    }

    /// Every state must be reachable from the start state, unless allowed. Only run when all
    /// targets resolve, so that a misspelled target is not also reported as an unreachable state.
    fn reachability(&mut self) {
        let p = self.protocol;
        let mut seen = vec![false; p.states.len()];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for message in &p.states[i].messages {
                if let Some(&j) = message
                    .next
                    .state_name()
                    .and_then(|n| self.index.get(n.unraw()))
                    && !seen[j]
                {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        let start = &p.states[0];
        for (i, state) in p.states.iter().enumerate().filter(|(i, _)| !seen[*i]) {
            // Duplicates resolve to the first definition and are reported already.
            if p.allow_unreachable.is_some()
                || state.allow_unreachable.is_some()
                || self.index.get(state.name.unraw()) != Some(&i)
            {
                continue;
            }
            self.errors.push(
                Diagnostic::error(
                    format!("state `{}` is unreachable", state.name.unraw()),
                    state.name.span.clone(),
                    format!("no message leads here from the start state `{}`", start.name.unraw()),
                )
                .with_note(start.name.span.clone(), format!("protocol `{}` starts here", p.name.unraw()))
                .with_help("remove the state, or allow it with `#[allow(unreachable_states)]` on the state or the protocol"),
            );
        }
    }

    /// Refuses `Debug` in a `#[derive(..)]` on a state: the state's attributes go on its
    /// message enum, which `proto!` derives `Debug` for already (when the payloads implement
    /// it), so a second impl would conflict.
    fn derived_debug(&mut self, state: &State) {
        for attr in &state.meta.attrs {
            let derives_debug = derived(&attr.syn.meta)
                .iter()
                .any(|path| path.segments.last().is_some_and(|s| s.ident == "Debug"));
            if !derives_debug {
                continue;
            }
            let at = occurrences(self.source, &attr.span, "Debug")
                .pop()
                .unwrap_or_else(|| attr.span.clone());
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "the message enum of state `{}` already implements `Debug`",
                        state.name.unraw()
                    ),
                    at,
                    "derived a second time here",
                )
                .with_help(
                    "`proto!` gives every message enum `Debug` when its payloads implement it; \
                     remove `Debug` from this derive",
                ),
            );
        }
    }
}

/// The traits an attribute derives: `derive(..)`'s, also under `cfg_attr(predicate, ..)`.
fn derived(meta: &syn::Meta) -> Vec<syn::Path> {
    type List<T> = syn::punctuated::Punctuated<T, syn::Token![,]>;
    let syn::Meta::List(list) = meta else {
        return Vec::new();
    };
    if list.path.is_ident("derive") {
        list.parse_args_with(List::<syn::Path>::parse_terminated)
            .map(|paths| paths.into_iter().collect())
            .unwrap_or_default()
    } else if list.path.is_ident("cfg_attr") {
        let metas = list
            .parse_args_with(List::<syn::Meta>::parse_terminated)
            .unwrap_or_default();
        metas.iter().skip(1).flat_map(derived).collect()
    } else {
        Vec::new()
    }
}

fn quoted_list(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Single-segment paths and lifetimes used in a Rust fragment: the names that could be
/// generic parameters. A lifetime a `for<..>` binds around it is not one.
#[derive(Default)]
struct Names(Vec<String>, Vec<String>);

impl Names {
    /// Visits `node` with the lifetimes `binder` binds in scope.
    fn binding(&mut self, binder: Option<&syn::BoundLifetimes>, visit: impl FnOnce(&mut Self)) {
        let bound = self.1.len();
        if let Some(binder) = binder {
            for param in &binder.lifetimes {
                if let syn::GenericParam::Lifetime(param) = param {
                    self.1.push(param.lifetime.to_string());
                }
            }
        }
        visit(self);
        self.1.truncate(bound);
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none()
            && path.segments.len() == 1
            && let Some(segment) = path.segments.first()
        {
            self.0.push(segment.ident.to_string());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
        let name = lifetime.to_string();
        if !self.1.contains(&name) {
            self.0.push(name);
        }
    }

    fn visit_type_bare_fn(&mut self, function: &'ast syn::TypeBareFn) {
        self.binding(function.lifetimes.as_ref(), |names| {
            syn::visit::visit_type_bare_fn(names, function);
        });
    }

    fn visit_trait_bound(&mut self, bound: &'ast syn::TraitBound) {
        self.binding(bound.lifetimes.as_ref(), |names| {
            syn::visit::visit_trait_bound(names, bound);
        });
    }
}

/// What [`ProtocolChecker::unnameable_types`] refuses, found in a Rust fragment (not inside
/// a macro's tokens: what a macro makes of them is rustc's to judge).
#[derive(Default)]
struct Unnameable {
    self_type: bool,
    /// The bounds of the first `impl Trait`, as written.
    impl_trait: Option<String>,
    infer: bool,
}

impl Unnameable {
    fn of_type(ty: &syn::Type) -> Unnameable {
        let mut found = Unnameable::default();
        found.visit_type(ty);
        found
    }
}

impl<'ast> Visit<'ast> for Unnameable {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.first().is_some_and(|s| s.ident == "Self")
        {
            self.self_type = true;
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_type_impl_trait(&mut self, ty: &'ast syn::TypeImplTrait) {
        if self.impl_trait.is_none() {
            let text = crate::diagram::type_text(&syn::Type::ImplTrait(ty.clone()));
            self.impl_trait = Some(text.trim_start_matches("impl ").to_string());
        }
        syn::visit::visit_type_impl_trait(self, ty);
    }

    fn visit_type_infer(&mut self, _: &'ast syn::TypeInfer) {
        self.infer = true;
    }
}

/// The first segment of every path that does not start at the crate root (`::`), in a
/// parameter's bounds or a const parameter's type: the names looked up in the generated
/// module.
#[derive(Default)]
struct FirstSegments {
    names: Vec<String>,
}

impl<'ast> Visit<'ast> for FirstSegments {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none()
            && let Some(first) = path.segments.first()
        {
            self.names.push(first.ident.unraw().to_string());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, _: &'ast syn::Macro) {
        // What a macro makes of its tokens is rustc's to judge.
    }
}

/// Where `name` occurs as a whole token within `span` of the source: syn values carry no
/// positions here (they may have been parsed inside a proc macro), so the text is searched.
/// Falls back to the whole fragment if the text does not show it.
/// `myLen` as a constant's name: `MY_LEN`, as rustc's `non_upper_case_globals` suggests.
fn upper_snake_case(name: &str) -> String {
    let mut out = String::new();
    let mut lower_before = false;
    for c in name.chars() {
        if c.is_uppercase() && lower_before {
            out.push('_');
        }
        lower_before = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_uppercase());
    }
    out
}

fn occurrences(source: &str, span: &Span, name: &str) -> Vec<Span> {
    let Some(text) = source.get(span.clone()) else {
        return vec![span.clone()];
    };
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for (i, _) in text.match_indices(name) {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        let lifetime_prefix = !name.starts_with('\'') && before == Some('\'');
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) || lifetime_prefix {
            continue;
        }
        // `a::T` is not the parameter `T`.
        if text[..i].trim_end().ends_with("::") {
            continue;
        }
        found.push(span.start + i..span.start + i + name.len());
    }
    if found.is_empty() {
        found.push(span.clone());
    }
    found
}

/// What a payload type written as `str`, a slice `[T]` or a bare trait object names, if it is
/// one: a message holds its payloads by value, so rustc would refuse it with errors at the
/// whole invocation (the generated enum and methods), not at the type.
fn unsized_type(ty: &syn::Type) -> Option<&'static str> {
    match ty {
        syn::Type::Paren(inner) => unsized_type(&inner.elem),
        syn::Type::Group(inner) => unsized_type(&inner.elem),
        syn::Type::Slice(_) => Some("a slice"),
        syn::Type::TraitObject(_) => Some("a trait object"),
        syn::Type::Path(path) if path.qself.is_none() && path.path.is_ident("str") => Some("`str`"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_are_snake_case() {
        assert_eq!(method_name("WhatsYourName"), "whats_your_name");
        assert_eq!(method_name("HTTPGet"), "http_get");
        assert_eq!(method_name("insufficient_funds"), "insufficient_funds");
        assert_eq!(method_name("Send"), "send");
        assert_eq!(method_name("Money2Go"), "money2_go");
        assert_eq!(method_name("r#Type"), "type");
        assert_eq!(method_name("sayHello"), "say_hello");
    }

    #[test]
    fn a_wire_payload_is_an_endpoint_only_through_its_protocols_name() {
        // Payloads are named as where `proto!` is invoked: `client::Login` there is the
        // user's module, whatever the protocol's states are called.
        let source = "#[wire] bank { Login: send { Login(client::Login) -> ! } }";
        assert!(crate::analyze(source).is_ok());
        let source = "#[wire] bank { Login: send { Login(bank::client::Login) -> ! } }";
        let errors = crate::analyze(source).unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| e.message.contains("cannot send an endpoint")),
            "{errors:?}"
        );
    }

    #[test]
    fn suggestions_need_a_close_candidate() {
        assert_eq!(suggest("sned", ["send", "recv"]), Some("send"));
        assert_eq!(suggest("Send", ["send", "recv"]), Some("send"));
        assert_eq!(suggest("xyz", ["send", "recv"]), None);
        assert_eq!(
            suggest("Conected", ["Login", "Connected"]),
            Some("Connected")
        );
    }

    #[test]
    fn suggestions_search_once_per_name_within_the_budget() {
        let file =
            crate::parse("p { A1: send { M -> ! } B1: send { M -> ! } C1: send { M -> ! } }")
                .unwrap();
        let states = &file.protocols[0].states;
        // Room for two searches of three states.
        let mut suggestions = Suggestions::new(7);
        assert_eq!(suggestions.of("A2", states), Some("A1"));
        assert_eq!(suggestions.of("B2", states), Some("B1"));
        assert_eq!(suggestions.of("C2", states), None);
        // Names already searched keep their answer, and cost nothing.
        assert_eq!(suggestions.of("A2", states), Some("A1"));
        assert_eq!(suggestions.budget, 1);
    }

    #[test]
    fn constant_names_are_suggested_as_rustc_does() {
        assert_eq!(upper_snake_case("p0"), "P0");
        assert_eq!(upper_snake_case("myLen"), "MY_LEN");
        assert_eq!(upper_snake_case("max_len"), "MAX_LEN");
        assert_eq!(upper_snake_case("x2Y"), "X2_Y");
    }

    #[test]
    fn occurrences_find_whole_tokens_only() {
        let src = "Vec<T>, Tx, a::T, &'T u8, T";
        let spans = occurrences(src, &(0..src.len()), "T");
        assert_eq!(spans, vec![4..5, 26..27]);
    }
}
