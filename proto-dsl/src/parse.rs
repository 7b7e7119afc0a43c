//! The parser: source text to AST. pest (driven by `grammar.pest`) finds the structure and the
//! byte ranges; syn parses each Rust fragment (types, generic parameters, type arguments,
//! attributes, visibility). Fragment errors are all collected; a syntax error stops the parse.

use std::num::NonZeroUsize;

use pest::Parser as _;
use pest::iterators::Pair;
use syn::punctuated::Punctuated;

use crate::ast::{
    Attribute, Direction, Doc, File, GenericParam, Generics, Message, Meta, Name, Next, Protocol,
    RustType, Span, State, TypeArg,
};
use crate::diagnostic::{Diagnostic, Diagnostics};

mod grammar {
    //! The pest-generated parser; private, so its `Rule` enum is no part of the API.
    #[derive(pest_derive::Parser)]
    #[grammar = "grammar.pest"]
    pub(crate) struct ProtoParser;
}

use grammar::{ProtoParser, Rule};

/// The deepest bracket nesting accepted. syn parses nested types recursively and has no depth
/// limit of its own, so an absurdly nested input could overflow the stack: it is refused
/// before any parser sees it. Real protocols stay far below this.
pub const MAX_NESTING: usize = 64;

/// pest's budget of rule calls for one parse, at the least: a source gets [`CALLS_PER_BYTE`]
/// for each of its bytes when that is more. It bounds the time a hostile input can take.
pub const CALL_LIMIT: usize = 50_000_000;

/// pest's budget of rule calls per byte of source. Protocols take 3 to 33 calls a byte (the
/// generated 10,000-state one 7, types nested 60 deep 33), so a budget that did not grow with
/// the source refused every protocol past ~7 MB (53,000 generated states); one that grows
/// keeps the time a hostile input can take linear in its size.
pub const CALLS_PER_BYTE: usize = 64;

/// The call budget for a source of `len` bytes.
fn call_limit(len: usize) -> usize {
    CALL_LIMIT.max(len.saturating_mul(CALLS_PER_BYTE))
}

/// The lint name that lets a protocol or a state be unreachable.
pub const ALLOW_UNREACHABLE: &str = "unreachable_states";

/// Parses a source (a `*.pipes` file, or the body of a `proto!` invocation) into its AST.
/// Returns every error found in Rust fragments, or the first syntax error.
pub fn parse(source: &str) -> Result<File, Diagnostics> {
    if let Some(error) = nesting_guard(source) {
        return Err(Diagnostics(vec![error]));
    }
    // The limit is process-wide in pest; setting it on every parse keeps it in force even if
    // another pest user in the process changed it.
    pest::set_call_limit(NonZeroUsize::new(call_limit(source.len())));
    let mut pairs = match ProtoParser::parse(Rule::file, source) {
        Ok(pairs) => pairs,
        Err(error) => return Err(Diagnostics(vec![syntax_error(&error, source)])),
    };
    let mut cx = Cx { errors: Vec::new() };
    let mut protocols = Vec::new();
    if let Some(file) = pairs.next() {
        for pair in file.into_inner() {
            if pair.as_rule() == Rule::protocol {
                protocols.push(cx.protocol(pair));
            }
        }
    }
    if cx.errors.is_empty() {
        Ok(File {
            protocols,
            span: 0..source.len(),
        })
    } else {
        let mut errors = Diagnostics(cx.errors);
        errors.sort();
        Err(errors)
    }
}

/// The range of a pair, less trailing whitespace: pest counts the whitespace it skipped before
/// an optional part that then did not match (`pub bank` gives `pub `).
fn span_of(pair: &Pair<'_, Rule>) -> Span {
    let start = pair.as_span().start();
    start..start + pair.as_str().trim_end().len()
}

fn name_of(pair: &Pair<'_, Rule>) -> Name {
    Name {
        text: pair.as_str().to_string(),
        span: span_of(pair),
    }
}

/// Refuses sources nested deeper than [`MAX_NESTING`], counting brackets outside comments and
/// literals, and block comments (they nest, and pest recurses on them). A literal or comment
/// the guard misreads must not hide brackets from it, so it lexes them as Rust does: a block
/// comment's inside has no strings, a raw string (`r#"..."#`, what rustc makes of a macro's
/// doc comments) no escapes, and `'"'` is a char, not a string's start.
fn nesting_guard(source: &str) -> Option<Diagnostic> {
    let bytes = source.as_bytes();
    let too_deep = |at: usize| {
        Diagnostic::error(
            format!("brackets nested more than {MAX_NESTING} deep"),
            at..at + 1,
            "too deep",
        )
        .with_help("protocols and their types are never nested this deep; is a bracket left open?")
    };
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let next = bytes.get(i + 1).copied();
        match (bytes[i], next) {
            (b'/', Some(b'/')) => i = skip_line(bytes, i),
            (b'/', Some(b'*')) => {
                let (end, deepest) = skip_block_comment(bytes, i);
                if depth + deepest > MAX_NESTING {
                    return Some(too_deep(i));
                }
                i = end;
            }
            (b'"', _) => i = skip_string(bytes, i + 1),
            (b'r', Some(b'"' | b'#')) if starts_token(bytes, i) => i = skip_raw_string(bytes, i),
            (b'b', Some(b'r')) if starts_token(bytes, i) => i = skip_raw_string(bytes, i + 1),
            (b'\'', _) => i = skip_char(bytes, i),
            (b'-' | b'=', Some(b'>')) => i += 2,
            (b'(' | b'[' | b'{' | b'<', _) => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(too_deep(i));
                }
                i += 1;
            }
            (b')' | b']' | b'}' | b'>', _) => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// Whether the byte at `i` starts a token (no identifier character before it): `r"` is a raw
/// string there, and the end of an identifier elsewhere.
fn starts_token(bytes: &[u8], i: usize) -> bool {
    i == 0
        || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] >= 0x80)
}

/// The index after the line comment at `i`.
fn skip_line(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i] != b'\n' {
        i += 1;
    }
    i
}

/// The index after the block comment at `i` (to the end if it is not closed), and how deep
/// its comments nest.
fn skip_block_comment(bytes: &[u8], mut i: usize) -> (usize, usize) {
    let (mut depth, mut deepest) = (0usize, 0usize);
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1).copied()) {
            (b'/', Some(b'*')) => {
                depth += 1;
                deepest = deepest.max(depth);
                i += 2;
            }
            (b'*', Some(b'/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return (i, deepest);
                }
            }
            _ => i += 1,
        }
    }
    (i, deepest)
}

/// The index after the string whose contents start at `i` (escapes skipped).
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    i + 1
}

/// The index after the raw string whose `r` is at `i` (`r"..."`, `r#"..."#`, ...); just past
/// the `r` if no `"` follows its `#`s (an identifier such as `r#type`).
fn skip_raw_string(bytes: &[u8], i: usize) -> usize {
    let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
    let open = i + 1 + hashes;
    if bytes.get(open) != Some(&b'"') {
        return i + 1;
    }
    let mut j = open + 1;
    while j < bytes.len() {
        if bytes[j] == b'"'
            && bytes[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&b| b == b'#')
                .count()
                == hashes
        {
            return j + 1 + hashes;
        }
        j += 1;
    }
    j
}

/// The index after the char literal at `i` (`'x'`, `'\''`, `'\u{..}'`), or after the `'` of a
/// lifetime.
fn skip_char(bytes: &[u8], i: usize) -> usize {
    match bytes.get(i + 1) {
        Some(b'\\') => {
            let mut j = i + 3;
            while j < bytes.len() && bytes[j] != b'\'' {
                j += 1;
            }
            j + 1
        }
        Some(&first) => {
            // One character (its UTF-8 length from its first byte), then the closing quote;
            // else the `'` of a lifetime.
            let len = match first {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            if bytes.get(i + 1 + len) == Some(&b'\'') {
                i + 2 + len
            } else {
                i + 1
            }
        }
        None => i + 1,
    }
}

/// What a grammar rule is called in an "expected ..." message; `None` for the pieces of Rust
/// fragments, which would only drown the useful alternatives.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::protocol => "a protocol",
        Rule::visibility | Rule::kw_pub => "`pub`",
        Rule::name => "a name",
        Rule::open_brace => "`{`",
        Rule::close_brace => "`}`",
        Rule::state => "a state",
        Rule::direction => "`send` or `recv`",
        Rule::generics => "`<`",
        Rule::generic_param => "a generic parameter",
        Rule::message => "a message",
        Rule::payload => "`(`",
        Rule::rust_type => "a type",
        Rule::arrow => "`->`",
        Rule::end => "`!`",
        Rule::target => "a state name",
        Rule::type_args => "`<`",
        Rule::generic_arg => "a type argument",
        Rule::close_angle => "`>`",
        Rule::close_paren => "`)`",
        Rule::doc_comment | Rule::doc_text => "a doc comment",
        Rule::attribute => "an attribute",
        Rule::bracket_group => "`[`",
        Rule::comma => "`,`",
        Rule::EOI => "end of input",
        _ => return None,
    })
}

/// The token found where the parser gave up, for "found ..." and for the caret's width.
fn found_at(source: &str, pos: usize) -> (Span, String) {
    let rest = source.get(pos..).unwrap_or("");
    let Some(first) = rest.chars().next() else {
        return (pos..pos, "end of input".to_string());
    };
    let len = if first.is_alphanumeric() || first == '_' {
        rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len())
    } else if rest.starts_with("->") {
        2
    } else {
        first.len_utf8()
    };
    let token = &rest[..len];
    // Escaped only where it would not print (`\n`, a control character); a quote stays `'`.
    let shown = if token.chars().any(char::is_control) {
        token.escape_debug().to_string()
    } else {
        token.to_string()
    };
    (pos..pos + len, format!("`{shown}`"))
}

fn syntax_error(error: &pest::error::Error<Rule>, source: &str) -> Diagnostic {
    use pest::error::{ErrorVariant, InputLocation};
    let pos = match error.location {
        InputLocation::Pos(pos) => pos,
        InputLocation::Span((start, _)) => start,
    };
    let (span, found) = found_at(source, pos);
    // `#!` is an inner attribute, which the protocol language has no place for: say so, rather
    // than that a `[` was expected.
    if source[..pos].ends_with('#') && source[pos..].starts_with('!') {
        return Diagnostic::error(
            "inner attributes (`#![...]`) are not allowed here".to_string(),
            pos - 1..pos + 1,
            "an inner attribute".to_string(),
        )
        .with_help("put an outer attribute (`#[...]`) on the protocol, a state or a message");
    }
    match &error.variant {
        ErrorVariant::ParsingError { positives, .. } => {
            // Inside a fragment any token would do, but the closing delimiter is what is missing.
            let closing = positives
                .iter()
                .any(|r| matches!(r, Rule::close_angle | Rule::close_paren));
            // Where `!` would do, a name can only be a target state.
            let target = positives.contains(&Rule::end);
            let mut expected: Vec<&str> = Vec::new();
            for rule in positives {
                let text = match (rule, describe(*rule)) {
                    (Rule::name | Rule::bracket_group, _) if closing => continue,
                    (Rule::name, _) if target => "a state name",
                    (_, Some(text)) => text,
                    (_, None) => continue,
                };
                if !expected.contains(&text) {
                    expected.push(text);
                }
            }
            let list = match expected.as_slice() {
                [] => "something else".to_string(),
                [one] => (*one).to_string(),
                [init @ .., last] => format!("{} or {last}", init.join(", ")),
            };
            Diagnostic::error(
                format!("expected {list}, found {found}"),
                span,
                format!("expected {list}"),
            )
        }
        ErrorVariant::CustomError { message } => {
            Diagnostic::error(format!("the parser gave up: {message}"), span, "here")
                .with_help("the input is too large or too deeply nested to parse")
        }
    }
}

/// The parse in progress: the errors found so far in Rust fragments.
struct Cx {
    errors: Vec<Diagnostic>,
}

impl Cx {
    /// Parses a Rust fragment with syn, reporting failure at the fragment.
    fn syn<T: syn::parse::Parse>(&mut self, pair: &Pair<'_, Rule>, what: &str) -> Option<T> {
        self.syn_with(pair, what, T::parse)
    }

    fn syn_with<T>(
        &mut self,
        pair: &Pair<'_, Rule>,
        what: &str,
        parser: impl syn::parse::Parser<Output = T>,
    ) -> Option<T> {
        match parser.parse_str(pair.as_str()) {
            Ok(value) => Some(value),
            Err(error) => {
                self.errors.push(Diagnostic::error(
                    format!("invalid {what} `{}`: {error}", pair.as_str()),
                    span_of(pair),
                    format!("not a valid {what}"),
                ));
                None
            }
        }
    }

    fn meta(&mut self, meta: &mut Meta, pair: &Pair<'_, Rule>) {
        match pair.as_rule() {
            Rule::doc_comment => {
                let text = pair.clone().into_inner().next().map_or("", |t| t.as_str());
                meta.docs.push(Doc {
                    text: text.to_string(),
                    span: span_of(pair),
                });
            }
            Rule::attribute => {
                if let Some(attrs) = self.syn_with(pair, "attribute", syn::Attribute::parse_outer) {
                    for syn in attrs {
                        // `#[doc = "..."]` is a doc comment as tokens (what a macro receives
                        // for `///`): keep it with the docs.
                        if let Some(text) = doc_text(&syn) {
                            meta.docs.push(Doc {
                                text,
                                span: span_of(pair),
                            });
                        } else {
                            meta.attrs.push(Attribute {
                                syn,
                                span: span_of(pair),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn protocol(&mut self, pair: Pair<'_, Rule>) -> Protocol {
        let span = span_of(&pair);
        let mut meta = Meta::default();
        let mut vis = syn::Visibility::Inherited;
        let mut vis_span = None;
        let mut name = Name {
            text: String::new(),
            span: span.clone(),
        };
        let mut states = Vec::new();
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::doc_comment | Rule::attribute => self.meta(&mut meta, &inner),
                Rule::visibility => {
                    if let Some(v) = self.syn(&inner, "visibility") {
                        vis = v;
                    }
                    vis_span = Some(span_of(&inner));
                }
                Rule::name => name = name_of(&inner),
                Rule::state => states.push(self.state(inner)),
                _ => {}
            }
        }
        let allow_unreachable = take_allow_unreachable(&mut meta);
        let wire = self.take_wire(&mut meta);
        Protocol {
            meta,
            allow_unreachable,
            wire,
            vis,
            vis_span,
            name,
            states,
            span,
        }
    }

    fn state(&mut self, pair: Pair<'_, Rule>) -> State {
        let span = span_of(&pair);
        let mut meta = Meta::default();
        let mut name = Name {
            text: String::new(),
            span: span.clone(),
        };
        let mut direction_word = None;
        let mut generics = Generics::empty();
        let mut messages = Vec::new();
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::doc_comment | Rule::attribute => self.meta(&mut meta, &inner),
                Rule::name => name = name_of(&inner),
                Rule::direction => direction_word = Some(name_of(&inner)),
                Rule::generics => generics = self.generics(inner),
                Rule::message => messages.push(self.message(inner)),
                _ => {}
            }
        }
        let direction = direction_word.as_ref().and_then(|w| match w.text.as_str() {
            "send" => Some(Direction::Send),
            "recv" => Some(Direction::Recv),
            _ => None,
        });
        let allow_unreachable = take_allow_unreachable(&mut meta);
        State {
            meta,
            allow_unreachable,
            name,
            direction_word,
            direction,
            generics,
            messages,
            span,
        }
    }

    fn generics(&mut self, pair: Pair<'_, Rule>) -> Generics {
        let span = span_of(&pair);
        let mut params = Vec::new();
        for inner in pair
            .into_inner()
            .filter(|p| p.as_rule() == Rule::generic_param)
        {
            if let Some(error) = untranslated_2012_kind(inner.as_str(), inner.as_span().start()) {
                self.errors.push(error);
                continue;
            }
            if let Some(mut syn) = self.syn::<syn::GenericParam>(&inner, "generic parameter") {
                spell_2012_kinds(&mut syn);
                let name = match &syn {
                    syn::GenericParam::Type(t) => t.ident.to_string(),
                    syn::GenericParam::Lifetime(l) => l.lifetime.to_string(),
                    syn::GenericParam::Const(c) => c.ident.to_string(),
                };
                params.push(GenericParam {
                    syn,
                    name,
                    span: span_of(&inner),
                });
            }
        }
        let syn = syn::Generics {
            lt_token: Some(Default::default()),
            params: params
                .iter()
                .map(|p| p.syn.clone())
                .collect::<Punctuated<_, syn::Token![,]>>(),
            gt_token: Some(Default::default()),
            where_clause: None,
        };
        Generics {
            syn,
            params,
            span: Some(span),
        }
    }

    fn message(&mut self, pair: Pair<'_, Rule>) -> Message {
        let span = span_of(&pair);
        let mut meta = Meta::default();
        let mut name = Name {
            text: String::new(),
            span: span.clone(),
        };
        let mut payload = Vec::new();
        let mut next = Next::End { span: span.clone() };
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::doc_comment | Rule::attribute => self.meta(&mut meta, &inner),
                Rule::name => name = name_of(&inner),
                Rule::payload => {
                    for ty in inner
                        .into_inner()
                        .filter(|p| p.as_rule() == Rule::rust_type)
                    {
                        if let Some(syn) = self.syn::<syn::Type>(&ty, "type") {
                            payload.push(RustType {
                                syn,
                                span: span_of(&ty),
                            });
                        }
                    }
                }
                Rule::end => {
                    next = Next::End {
                        span: span_of(&inner),
                    }
                }
                Rule::target => next = self.target(inner),
                _ => {}
            }
        }
        Message {
            meta,
            name,
            payload,
            next,
            span,
        }
    }

    fn target(&mut self, pair: Pair<'_, Rule>) -> Next {
        let mut name = Name {
            text: String::new(),
            span: span_of(&pair),
        };
        let mut args = Vec::new();
        let mut args_span = None;
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::name => name = name_of(&inner),
                Rule::type_args => {
                    args_span = Some(span_of(&inner));
                    for arg in inner
                        .into_inner()
                        .filter(|p| p.as_rule() == Rule::generic_arg)
                    {
                        if let Some(syn) = self.syn::<syn::GenericArgument>(&arg, "type argument") {
                            args.push(TypeArg {
                                syn,
                                span: span_of(&arg),
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        Next::State {
            name,
            args,
            args_span,
        }
    }
}

/// The 2012 kinds that a bound may still be written as, and the trait each means today. The
/// seed's `Stream:send<T:send>` is written this way. Only the lower-case kinds of 2012 are
/// translated: no trait of today is spelled so, while a capitalised `Owned` or `Const` may be
/// a trait of the user's own.
///
/// | 2012 bound | today | why |
/// |---|---|---|
/// | `send` | `Send` | "sendable": may move to another task |
/// | `copy` | `Copy` | "copyable": the 2012 kind copied implicitly |
///
/// The other lower-case kinds are errors at the kind, with a help naming today's choices
/// (`untranslated_2012_kind`): `const` (deeply immutable; later `Freeze`, now gone) has no
/// exact modern meaning, and `owned` meant "holds no borrowed pointers" (today's `'static`)
/// until 0.6 reused `Owned` for sendable types (today's `Send`). Guessing either would
/// compile a protocol that means something its author may not have meant.
pub const KINDS_2012: [(&str, &str); 2] = [("send", "Send"), ("copy", "Copy")];

/// A bound in `param` (written at `start`) that is a 2012 kind this language does not
/// translate ([`KINDS_2012`]): an error at the kind, in place of rustc's "cannot find trait
/// `owned`" (which the checker would have let through) or syn's "expected identifier" for
/// `const`.
fn untranslated_2012_kind(param: &str, start: usize) -> Option<Diagnostic> {
    // The bounds follow the first lone `:` (not one of a path's `::`).
    let bytes = param.as_bytes();
    let colon = (0..bytes.len()).find(|&i| {
        bytes[i] == b':' && bytes.get(i + 1) != Some(&b':') && (i == 0 || bytes[i - 1] != b':')
    })?;
    let mut at = colon + 1;
    for bound in param[colon + 1..].split('+') {
        let word = bound.trim();
        let offset = start + at + bound.find(word).unwrap_or(0);
        at += bound.len() + 1;
        let help = match word {
            "owned" => {
                "write `'static` (what `owned` meant in 2012: it holds no borrowed pointers) \
                 or `Send` (what `Owned` meant from Rust 0.6 on)"
            }
            "const" => {
                "it meant \"deeply immutable\", which no trait of today says; `Sync` (shared \
                 between threads by reference) is the nearest"
            }
            _ => continue,
        };
        return Some(
            Diagnostic::error(
                format!("`{word}` is a 2012 kind with no one meaning today"),
                offset..offset + word.len(),
                "a 2012 kind",
            )
            .with_help(help),
        );
    }
    None
}

/// Rewrites a parameter's bounds written as a 2012 kind ([`KINDS_2012`]) to today's trait, by
/// absolute path (`send` becomes `::core::marker::Send`): inside the generated module a bare
/// `Send` would name a state called `Send`. The identifier keeps its place at the end of the
/// path, so codegen still finds the user's token for it (`FragmentText` lets the path's prefix
/// stand on the kind).
fn spell_2012_kinds(param: &mut syn::GenericParam) {
    let syn::GenericParam::Type(param) = param else {
        return;
    };
    for bound in &mut param.bounds {
        let syn::TypeParamBound::Trait(bound) = bound else {
            continue;
        };
        let path = &mut bound.path;
        if bound.lifetimes.is_some()
            || !matches!(bound.modifier, syn::TraitBoundModifier::None)
            || path.leading_colon.is_some()
            || path.segments.len() != 1
            || !path.segments[0].arguments.is_none()
        {
            continue;
        }
        let ident = &path.segments[0].ident;
        if let Some((_, today)) = KINDS_2012.iter().find(|(kind, _)| ident == kind) {
            let today = syn::Ident::new(today, ident.span());
            *path = syn::parse_quote!(::core::marker::#today);
        }
    }
}

/// The attribute that lets a protocol's sessions cross processes and machines.
pub const WIRE: &str = "wire";

impl Cx {
    /// Takes `#[wire]` out of a protocol's attributes (rustc does not know it) and returns
    /// where it was written. `#[wire]` takes no arguments.
    fn take_wire(&mut self, meta: &mut Meta) -> Option<Span> {
        let mut found = None;
        for attr in std::mem::take(&mut meta.attrs) {
            if !attr.syn.path().is_ident(WIRE) {
                meta.attrs.push(attr);
                continue;
            }
            if !matches!(attr.syn.meta, syn::Meta::Path(_)) {
                self.errors.push(
                    Diagnostic::error(
                        "`#[wire]` takes no arguments",
                        attr.span.clone(),
                        "written with arguments here",
                    )
                    .with_help("write `#[wire]` alone"),
                );
            }
            found = Some(attr.span);
        }
        found
    }
}

/// Takes `unreachable_states` out of the `#[allow(...)]` attributes (rustc does not know that
/// lint, so it must not reach the generated code) and returns where it was written.
fn take_allow_unreachable(meta: &mut Meta) -> Option<Span> {
    let mut found = None;
    let mut kept = Vec::with_capacity(meta.attrs.len());
    for mut attr in std::mem::take(&mut meta.attrs) {
        if attr.syn.path().is_ident("allow") {
            let lints = attr
                .syn
                .parse_args_with(Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                .unwrap_or_default();
            if lints.iter().any(|l| l.is_ident(ALLOW_UNREACHABLE)) {
                found = Some(attr.span.clone());
                let rest: Vec<&syn::Path> = lints
                    .iter()
                    .filter(|l| !l.is_ident(ALLOW_UNREACHABLE))
                    .collect();
                if rest.is_empty() {
                    continue;
                }
                attr.syn = syn::parse_quote!(#[allow(#(#rest),*)]);
            }
        }
        kept.push(attr);
    }
    meta.attrs = kept;
    found
}

/// The text of a `#[doc = "..."]` attribute.
fn doc_text(attr: &syn::Attribute) -> Option<String> {
    let syn::Meta::NameValue(meta) = &attr.meta else {
        return None;
    };
    if !meta.path.is_ident("doc") {
        return None;
    }
    match &meta.value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) => Some(text.value()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_budget_grows_with_the_source() {
        assert_eq!(call_limit(0), CALL_LIMIT);
        assert_eq!(call_limit(500_000), CALL_LIMIT);
        // A 100,000-state protocol of the generator in `tests/common` is 13.8 MB.
        assert_eq!(call_limit(13_800_000), 883_200_000);
        assert_eq!(call_limit(usize::MAX), usize::MAX);
    }

    #[test]
    fn nesting_guard_counts_brackets_but_not_comments_or_strings() {
        let deep = format!(
            "p {{ S: send {{ M({}u8{}) -> ! }} }}",
            "(".repeat(70),
            ")".repeat(70)
        );
        let error = parse(&deep).unwrap_err();
        assert!(
            error.0[0].message.contains("nested more than 64"),
            "{error}"
        );
        let commented = format!(
            "/// {}\np {{ S: send {{ M(\"{}\") -> ! }} }}",
            "(".repeat(70),
            "[".repeat(70)
        );
        // The string is not a type, so syn refuses it, but the guard let it through.
        let error = parse(&commented).unwrap_err();
        assert!(error.0[0].message.starts_with("invalid type"), "{error}");
    }

    #[test]
    fn the_2012_kinds_are_spelled_as_today() {
        let file = parse(
            "p { S: send<T: send, U: copy + Clone, V: ::send, W: Owned, X: send<u8>> { M -> ! } }",
        )
        .unwrap();
        let params: Vec<String> = file.protocols[0].states[0]
            .generics
            .params
            .iter()
            .map(|p| {
                let syn = &p.syn;
                quote::quote!(#syn).to_string()
            })
            .collect();
        // A kind becomes an absolute path (a state may be called `Send`); a path, a
        // capitalised name or one with arguments is the user's own trait.
        assert_eq!(
            params,
            [
                "T : :: core :: marker :: Send",
                "U : :: core :: marker :: Copy + Clone",
                "V : :: send",
                "W : Owned",
                "X : send < u8 >"
            ]
        );
    }

    #[test]
    fn the_2012_kinds_without_one_meaning_today_are_errors_at_the_kind() {
        for (source, kind) in [
            ("p { S: send<T: Clone + owned> { M(T) -> ! } }", "owned"),
            ("p { S: send<T:const> { M(T) -> ! } }", "const"),
        ] {
            let errors = parse(source).unwrap_err();
            assert_eq!(errors.0.len(), 1, "{errors}");
            let error = &errors.0[0];
            assert_eq!(&source[error.primary.clone()], kind);
            assert!(error.help.is_some());
        }
        // As a path or a trait's name, they are the user's.
        parse("p { S: send<T: my::owned + Owned, U: Const> { M(T, U) -> ! } }").unwrap();
    }

    #[test]
    fn allow_unreachable_is_consumed_and_other_lints_kept() {
        let file =
            parse("#[allow(unreachable_states, dead_code)] p { S: send { M -> ! } }").unwrap();
        let p = &file.protocols[0];
        assert_eq!(p.allow_unreachable, Some(0..39));
        assert_eq!(p.meta.attrs.len(), 1);
        let attr = &p.meta.attrs[0].syn;
        assert_eq!(quote::quote!(#attr).to_string(), "# [allow (dead_code)]");
    }
}
