//! Byte offsets to lines and columns: the one place that knows how a source is laid out in
//! lines, so that diagnostics can say `bank.pipes:4:9`. Offsets past the end or inside a UTF-8
//! sequence are clamped, never trusted.

/// A line and column, both counted from 1; the column counts chars, as rustc's do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    /// The line, from 1.
    pub line: usize,
    /// The column in chars, from 1.
    pub col: usize,
}

/// The line layout of one source text.
#[derive(Debug, Clone)]
pub struct SourceMap<'a> {
    source: &'a str,
    /// Byte offset of the start of each line; the first is always 0.
    line_starts: Vec<usize>,
}

impl<'a> SourceMap<'a> {
    /// Indexes the lines of `source`.
    pub fn new(source: &'a str) -> SourceMap<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        SourceMap {
            source,
            line_starts,
        }
    }

    /// The nearest char boundary at or before `offset`, within the source.
    pub fn clamp(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.source.len());
        while !self.source.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// The line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = self.clamp(offset);
        let index = self
            .line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1);
        let start = self.line_starts.get(index).copied().unwrap_or(0);
        let col = self
            .source
            .get(start..offset)
            .map_or(0, |s| s.chars().count())
            + 1;
        LineCol {
            line: index + 1,
            col,
        }
    }

    /// The text of a line (counted from 1) without its line break, or `""` past the end.
    pub fn line_text(&self, line: usize) -> &'a str {
        let Some(&start) = line.checked_sub(1).and_then(|i| self.line_starts.get(i)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .map_or(self.source.len(), |&next| next - 1);
        let text = self.source.get(start..end).unwrap_or("");
        text.strip_suffix('\r').unwrap_or(text)
    }

    /// The number of lines (a source with no line break has one).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_chars() {
        let map = SourceMap::new("ab\nçd\r\n\nx");
        assert_eq!(map.line_col(0), LineCol { line: 1, col: 1 });
        assert_eq!(map.line_col(2), LineCol { line: 1, col: 3 });
        assert_eq!(map.line_col(3), LineCol { line: 2, col: 1 });
        // `ç` is two bytes but one column.
        assert_eq!(map.line_col(5), LineCol { line: 2, col: 2 });
        assert_eq!(map.line_text(2), "çd");
        assert_eq!(map.line_text(3), "");
        assert_eq!(map.line_text(4), "x");
        assert_eq!(map.line_text(5), "");
        assert_eq!(map.line_count(), 4);
    }

    #[test]
    fn bad_offsets_are_clamped() {
        let map = SourceMap::new("ç");
        assert_eq!(map.line_col(1), LineCol { line: 1, col: 1 });
        assert_eq!(map.line_col(99), LineCol { line: 1, col: 2 });
        assert_eq!(map.line_text(0), "");
    }
}
