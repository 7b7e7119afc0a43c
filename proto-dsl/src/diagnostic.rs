//! Diagnostics: what every stage reports, as data (byte ranges, for the macro to map onto
//! spans) and as rustc-style text (for files and the command line).

use std::fmt;
use std::ops::Range;

use crate::source::SourceMap;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The protocol cannot be compiled.
    Error,
    /// The protocol compiles, but something is probably not what was meant.
    Warning,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem, located at the user's tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, in protocol words (`message `Deposit` steps to undefined state ...`).
    pub message: String,
    /// The byte range the problem is reported at.
    pub primary: Range<usize>,
    /// A short text shown under the primary range (may be empty).
    pub label: String,
    /// Further ranges that explain it (`first defined here`), each with its text.
    pub notes: Vec<(Range<usize>, String)>,
    /// Advice without a range (`did you mean `Connected`?`).
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error at `primary` with a label under it.
    pub fn error(
        message: impl Into<String>,
        primary: Range<usize>,
        label: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            primary,
            label: label.into(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// Adds a note at a second range.
    pub fn with_note(mut self, span: Range<usize>, text: impl Into<String>) -> Diagnostic {
        self.notes.push((span, text.into()));
        self
    }

    /// Sets the help line.
    pub fn with_help(mut self, text: impl Into<String>) -> Diagnostic {
        self.help = Some(text.into());
        self
    }

    /// Renders it the way rustc does, for a source called `file_name`:
    ///
    /// ```text
    /// error: message `Deposit` steps to undefined state `Conected`
    ///  --> bank.pipes:4:25
    ///   |
    /// 4 |         Deposit(u64) -> Conected,
    ///   |                         ^^^^^^^^ no state named `Conected` in protocol `bank`
    ///   |
    ///   = help: did you mean `Connected`?
    /// ```
    pub fn render(&self, file_name: &str, source: &str) -> String {
        self.render_in(&SourceMap::new(source), file_name)
    }

    fn render_in(&self, map: &SourceMap<'_>, file_name: &str) -> String {
        let width = std::iter::once(&self.primary)
            .chain(self.notes.iter().map(|(span, _)| span))
            .map(|span| map.line_col(span.start).line.to_string().len())
            .max()
            .unwrap_or(1);
        let mut out = format!("{}: {}\n", self.severity.word(), self.message);
        snippet(
            &mut out,
            map,
            file_name,
            &self.primary,
            '^',
            &self.label,
            width,
        );
        if let Some(help) = &self.help {
            push_spaces(&mut out, width);
            out.push_str(" |\n");
            push_spaces(&mut out, width);
            out.push_str(&format!(" = help: {help}\n"));
        }
        for (span, text) in &self.notes {
            out.push_str(&format!("note: {text}\n"));
            snippet(&mut out, map, file_name, span, '-', "", width);
        }
        out
    }
}

/// Writes ` --> file:line:col`, the source line and the underline.
fn snippet(
    out: &mut String,
    map: &SourceMap<'_>,
    file_name: &str,
    span: &Range<usize>,
    mark: char,
    label: &str,
    width: usize,
) {
    let start = map.line_col(span.start);
    let end = map.line_col(span.end.max(span.start));
    let text = map.line_text(start.line);
    // Tabs would make the underline drift, so both lines show them as four spaces. Other
    // control chars (a lone `\r` sends a terminal back to the start of the line) show as
    // their control pictures, as rustc does: one column each, like the char they stand for.
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => shown.push_str("    "),
            '\0'..='\u{1f}' => shown.extend(char::from_u32(0x2400 + c as u32)),
            '\u{7f}' => shown.push('\u{2421}'),
            c => shown.push(c),
        }
    }
    let display_width = |chars: usize| -> usize {
        text.chars()
            .take(chars)
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum()
    };
    let pad = display_width(start.col - 1);
    // A range that runs onto later lines is underlined to the end of its first line.
    let end_col = if end.line == start.line {
        end.col
    } else {
        text.chars().count() + 1
    };
    let marks = display_width(end_col - 1).saturating_sub(pad).max(1);
    push_spaces(out, width);
    out.push_str(&format!("--> {file_name}:{}:{}\n", start.line, start.col));
    push_spaces(out, width);
    out.push_str(" |\n");
    let number = start.line.to_string();
    push_spaces(out, width.saturating_sub(number.len()));
    out.push_str(&format!("{number} | {shown}\n"));
    push_spaces(out, width);
    out.push_str(" | ");
    push_spaces(out, pad);
    out.extend(std::iter::repeat_n(mark, marks));
    if !label.is_empty() {
        out.push(' ');
        out.push_str(label);
    }
    out.push('\n');
}

/// Appends `n` spaces. Text is padded with this, never with a `format!` width (`{:n$}`):
/// those are `u16`, and a column past 65,535 (one long line) made rendering panic.
pub(crate) fn push_spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

impl fmt::Display for Diagnostic {
    /// Just the severity and message: rendering the location needs the source.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity.word(), self.message)
    }
}

/// The diagnostics of one run, in source order. A stage that returns them as its error found
/// at least one error among them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Whether any of them is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Iterates over them.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }

    /// Renders all of them rustc-style, separated by blank lines, followed by rustc's summary
    /// line (`error: aborting due to 2 previous errors`) when there are errors.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        // One map for all of them: building it scans the whole source, and a map per
        // diagnostic made rendering quadratic (3,333 errors in a 1.3 MB source took seconds).
        let map = SourceMap::new(source);
        let mut out: Vec<String> = self
            .0
            .iter()
            .map(|d| d.render_in(&map, file_name))
            .collect();
        let errors = self
            .0
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        match errors {
            0 => {}
            1 => out.push("error: aborting due to 1 previous error\n".to_string()),
            n => out.push(format!("error: aborting due to {n} previous errors\n")),
        }
        out.join("\n")
    }

    /// Sorts them by position, keeping the order of those at the same position.
    pub(crate) fn sort(&mut self) {
        self.0.sort_by_key(|d| (d.primary.start, d.primary.end));
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for Diagnostics {
    /// One line per diagnostic, severity and message only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_rustc_with_tabs_and_notes() {
        let source = "a {\n\tB: send { X -> C }\n}\n";
        let c = source.find("C }").unwrap();
        let b = source.find('B').unwrap();
        let d = Diagnostic::error(
            "message `X` steps to undefined state `C`",
            c..c + 1,
            "no state `C`",
        )
        .with_note(b..b + 1, "the state")
        .with_help("define it");
        let text = d.render("t.pipes", source);
        assert_eq!(
            text,
            "error: message `X` steps to undefined state `C`\n \
             --> t.pipes:2:17\n  |\n2 |     B: send { X -> C }\n  |                    ^ no state `C`\n  |\n  \
             = help: define it\nnote: the state\n --> t.pipes:2:2\n  |\n2 |     B: send { X -> C }\n  |     -\n"
        );
    }

    #[test]
    fn empty_and_out_of_range_spans_still_render() {
        // Reversed and past the end: what a buggy caller might pass.
        let d = Diagnostic::error("m", Range { start: 50, end: 40 }, "");
        let text = d.render("f", "ab");
        assert_eq!(text, "error: m\n --> f:1:3\n  |\n1 | ab\n  |   ^\n");
    }
}
