//! The state diagram as an SVG picture, for rustdoc: it shows inline HTML, so with the
//! `diagram` feature a generated module's docs draw the protocol rather than print diagram
//! source. No script, no fonts or styles fetched: lines and text in `currentColor`, so the
//! picture follows rustdoc's light and dark themes.
//!
//! The layout is computed here, deterministically, in layers:
//! - states go in rows by their distance from the start state (breadth first, messages in the
//!   order written); states the start cannot reach (allowed by `#[allow(unreachable_states)]`)
//!   follow in rows of their own, drawn dashed;
//! - under each row, a row of labels: every message of the row's states, in order, saying who
//!   sends it and its payload. A line runs from the state to each of its labels;
//! - a message to a state of the next row continues from its label down into that state; a
//!   message that ends the protocol (`-> !`) into a small end mark in the next row; a state
//!   without messages is drawn with a double border;
//! - any other message (back to an earlier row, to its own row, or a loop) leaves its label
//!   downwards, runs up or down a lane of its own at the right of the picture, and comes into
//!   its target from above. Those turns happen in the bands between rows, each at a height of
//!   its own, so no two lines overlap along their length and no line runs through a box.
//!
//! Text is monospace, so its width is known without measuring: boxes fit their text.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt::Write as _;

use crate::ast::{Next, Protocol};

use super::{message_text, sender, state_text};

/// Pixels per character of 12px monospace text (0.6 em, the usual advance of monospace faces).
const CHAR: f64 = 7.2;
const MARGIN: f64 = 16.0;
/// Room left of the start state for the start mark.
const START_ROOM: f64 = 36.0;
const STATE_H: f64 = 30.0;
const LABEL_H: f64 = 20.0;
/// Between a state row and its label row.
const STEM: f64 = 18.0;
/// Least height of a band between a label row and the next state row.
const BAND: f64 = 24.0;
/// Height of each turn (a routed line's horizontal run) inside a band.
const TURN: f64 = 8.0;
/// Horizontal gap between boxes in a row.
const GAP: f64 = 16.0;
/// Distance between lanes, and from the content to the first lane.
const LANE: f64 = 12.0;
const END_R: f64 = 7.0;

/// A box in a row: a state, a message label or an end mark.
#[derive(Debug, Clone)]
struct Item {
    kind: Kind,
    /// Where the row's placement would like its centre.
    want: f64,
    w: f64,
    h: f64,
    x: f64,
    y: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// A state, by index.
    State(usize),
    /// The label of edge `i`.
    Label(usize),
    /// The end mark of edge `i` (`-> !`).
    End(usize),
}

impl Item {
    fn new(kind: Kind, w: f64, h: f64) -> Self {
        Item {
            kind,
            want: 0.0,
            w,
            h,
            x: 0.0,
            y: 0.0,
        }
    }
    fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    fn right(&self) -> f64 {
        self.x + self.w
    }
    fn bottom(&self) -> f64 {
        self.y + self.h
    }
}

/// Where a message goes, as drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Route {
    /// Down into a state of the next row.
    Down(usize),
    /// Down into its own end mark.
    End,
    /// Around through a lane, into a state of any row.
    Lane(usize),
}

/// One message.
#[derive(Debug)]
struct Edge {
    from: usize,
    /// `client: Message(Types)` in full.
    text: String,
    /// What the label shows: the text, cut short if it is long.
    shown: String,
    /// Sent by the server: drawn dashed.
    server: bool,
    route: Route,
    /// For `Lane` routes: the lane, and the turns' heights (set during layout).
    lane: usize,
    exit_y: f64,
    entry_y: f64,
    /// Which of the routed messages into its target this is.
    entry_slot: usize,
}

/// The laid-out picture: rows of boxes alternating states and labels, then the edges.
#[derive(Debug)]
pub(super) struct Layout {
    rows: Vec<Vec<Item>>,
    edges: Vec<Edge>,
    /// Whether the start state reaches each state.
    reachable: Vec<bool>,
    /// Where each item is: row, and index in the row.
    places: HashMap<Kind, (usize, usize)>,
    lanes_x: f64,
    width: f64,
    height: f64,
}

fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR
}

/// Row of each state: breadth first from the start, then from each state still unplaced, in
/// the order written. Returns each state's row, the rows' states in the order they were
/// reached, and which states the start reaches.
fn layers(protocol: &Protocol) -> (Vec<usize>, Vec<Vec<usize>>, Vec<bool>) {
    let index = protocol.state_map();
    let n = protocol.states.len();
    let mut layer = vec![usize::MAX; n];
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut reachable = vec![false; n];
    for root in 0..n {
        if root == 1 {
            reachable = layer.iter().map(|&l| l != usize::MAX).collect();
        }
        if layer[root] != usize::MAX || index.get(protocol.states[root].name.unraw()) != Some(&root)
        {
            continue;
        }
        let base = rows.len();
        layer[root] = base;
        rows.push(vec![root]);
        let mut queue = std::collections::VecDeque::from([root]);
        while let Some(u) = queue.pop_front() {
            for message in &protocol.states[u].messages {
                let Some(&v) = message.next.state_name().and_then(|n| index.get(n.unraw())) else {
                    continue;
                };
                if layer[v] == usize::MAX {
                    layer[v] = layer[u] + 1;
                    if rows.len() <= layer[v] {
                        rows.push(Vec::new());
                    }
                    rows[layer[v]].push(v);
                    queue.push_back(v);
                }
            }
        }
    }
    if n == 1 {
        reachable = vec![true];
    }
    (layer, rows, reachable)
}

/// Lays `items` out left to right, each as near its wanted centre as the ones before allow.
fn place_row(items: &mut [Item], left: f64) {
    let mut next = left;
    for item in items.iter_mut() {
        item.x = (item.want - item.w / 2.0).max(next);
        next = item.right() + GAP;
    }
}

impl Layout {
    pub(super) fn new(protocol: &Protocol) -> Layout {
        let index = protocol.state_map();
        let (layer, state_rows, reachable) = layers(protocol);
        let mut edges: Vec<Edge> = Vec::new();
        // Rows: state row r at 2r, its label row at 2r + 1.
        let mut rows: Vec<Vec<Item>> = Vec::new();
        let mut r = 0;
        loop {
            // The state row: states reached from the row above in the order their labels
            // come, end marks among them, then states first reached otherwise.
            let mut states: Vec<Item> = Vec::new();
            // Each state's place in `states`, and per item the labels leading to it (the sum
            // of their centres, and how many): a state reached by several wants their middle.
            let mut placed: HashMap<usize, usize> = HashMap::new();
            let mut wants: Vec<(f64, usize)> = Vec::new();
            if let Some(labels) = rows.last() {
                for label in labels {
                    let Kind::Label(e) = label.kind else { continue };
                    let at = match edges[e].route {
                        Route::Down(v) => *placed.entry(v).or_insert_with(|| {
                            states.push(state_item(protocol, v));
                            wants.push((0.0, 0));
                            states.len() - 1
                        }),
                        Route::End => {
                            states.push(Item::new(Kind::End(e), 2.0 * END_R, 2.0 * END_R));
                            wants.push((0.0, 0));
                            states.len() - 1
                        }
                        Route::Lane(_) => continue,
                    };
                    wants[at].0 += label.cx();
                    wants[at].1 += 1;
                }
            }
            for (item, &(sum, count)) in states.iter_mut().zip(&wants) {
                item.want = sum / count as f64;
            }
            if let Some(row) = state_rows.get(r) {
                for &v in row {
                    if let Entry::Vacant(entry) = placed.entry(v) {
                        entry.insert(states.len());
                        states.push(state_item(protocol, v));
                    }
                }
            }
            if states.is_empty() {
                break;
            }
            let left = MARGIN + if r == 0 { START_ROOM } else { 0.0 };
            place_row(&mut states, left);
            // The label row: every message of this row's states.
            let mut labels = Vec::new();
            for item in &states {
                let Kind::State(u) = item.kind else { continue };
                let state = &protocol.states[u];
                let Some(who) = sender(state) else { continue };
                for message in &state.messages {
                    let route = match message.next {
                        Next::End { .. } => Route::End,
                        Next::State { ref name, .. } => {
                            let v = index[name.unraw()];
                            if layer[v] == layer[u] + 1 {
                                Route::Down(v)
                            } else {
                                Route::Lane(v)
                            }
                        }
                    };
                    let text = format!("{who}: {}", message_text(message));
                    let shown = shorten(&text);
                    let mut label =
                        Item::new(Kind::Label(edges.len()), text_width(&shown) + 12.0, LABEL_H);
                    label.want = item.cx();
                    labels.push(label);
                    edges.push(Edge {
                        from: u,
                        text,
                        shown,
                        server: who == "server",
                        route,
                        lane: 0,
                        exit_y: 0.0,
                        entry_y: 0.0,
                        entry_slot: 0,
                    });
                }
            }
            // The messages of one state are centred, as a group, under it.
            let mut start = 0;
            while start < labels.len() {
                let want = labels[start].want;
                let end = start
                    + labels[start..]
                        .iter()
                        .take_while(|l| l.want == want)
                        .count();
                let group = &mut labels[start..end];
                let total: f64 =
                    group.iter().map(|l| l.w).sum::<f64>() + GAP * (group.len() - 1) as f64;
                let mut x = want - total / 2.0;
                for label in group {
                    label.want = x + label.w / 2.0;
                    x += label.w + GAP;
                }
                start = end;
            }
            place_row(&mut labels, MARGIN);
            rows.push(states);
            rows.push(labels);
            r += 1;
        }
        let mut layout = Layout {
            rows,
            edges,
            reachable,
            places: HashMap::new(),
            lanes_x: 0.0,
            width: 0.0,
            height: 0.0,
        };
        layout.place_vertically();
        for (r, row) in layout.rows.iter().enumerate() {
            for (at, item) in row.iter().enumerate() {
                layout.places.insert(item.kind, (r, at));
            }
        }
        layout
    }

    /// Heights of rows and bands, the turns of routed messages, and the lanes.
    fn place_vertically(&mut self) {
        // Turns per band: band b lies above state row b (b >= 1) and holds the exits of
        // routed messages from label row b - 1, then the entries into state row b.
        let mut state_row: HashMap<usize, usize> = HashMap::new();
        for (r, row) in self.rows.iter().enumerate().step_by(2) {
            for item in row {
                if let Kind::State(v) = item.kind {
                    state_row.insert(v, r / 2);
                }
            }
        }
        // Routed messages into each state so far.
        let mut into_state: HashMap<usize, usize> = HashMap::new();
        let bands = self.rows.len() / 2 + 1;
        let mut exits: Vec<Vec<usize>> = vec![Vec::new(); bands];
        let mut entries: Vec<Vec<usize>> = vec![Vec::new(); bands];
        let mut lanes = 0;
        for label_row in (1..self.rows.len()).step_by(2) {
            for label in &self.rows[label_row] {
                let Kind::Label(e) = label.kind else { continue };
                if let Route::Lane(v) = self.edges[e].route {
                    self.edges[e].lane = lanes;
                    lanes += 1;
                    exits[label_row / 2 + 1].push(e);
                    let slot = into_state.entry(v).or_insert(0);
                    self.edges[e].entry_slot = *slot;
                    *slot += 1;
                    entries[state_row[&v]].push(e);
                }
            }
        }
        let band_height = |b: usize| match exits[b].len() + entries[b].len() {
            // Above the start state, nothing to turn: no band.
            0 if b == 0 => 0.0,
            turns => BAND + TURN * turns as f64,
        };
        let mut y = MARGIN + band_height(0);
        for r in 0..self.rows.len() {
            if r % 2 == 0 {
                let b = r / 2;
                let band_top = y - band_height(b);
                for (slot, &e) in exits[b].iter().chain(&entries[b]).enumerate() {
                    let turn = band_top + BAND / 2.0 + TURN * slot as f64;
                    if slot < exits[b].len() {
                        self.edges[e].exit_y = turn;
                    } else {
                        self.edges[e].entry_y = turn;
                    }
                }
                for item in &mut self.rows[r] {
                    item.y = y + (STATE_H - item.h) / 2.0;
                }
                y += STATE_H + STEM;
            } else {
                for item in &mut self.rows[r] {
                    item.y = y;
                }
                y += LABEL_H + band_height(r / 2 + 1);
            }
        }
        // Exits of the last label row need their band even without a state row below.
        let last_band = self.rows.len() / 2;
        let band_top = y - band_height(last_band);
        for (slot, &e) in exits[last_band].iter().enumerate() {
            self.edges[e].exit_y = band_top + BAND / 2.0 + TURN * slot as f64;
        }
        let content = self
            .rows
            .iter()
            .flatten()
            .map(Item::right)
            .fold(0.0, f64::max);
        self.lanes_x = content + LANE;
        self.width = self.lanes_x + LANE * lanes as f64 + MARGIN;
        let lowest_turn = self.edges.iter().map(|e| e.exit_y).fold(0.0, f64::max);
        let lowest_box = self
            .rows
            .iter()
            .flatten()
            .map(Item::bottom)
            .fold(0.0, f64::max);
        self.height = lowest_turn.max(lowest_box) + MARGIN;
    }

    fn find(&self, kind: &Kind) -> &Item {
        let (row, at) = self.places[kind];
        &self.rows[row][at]
    }

    /// Every box, for checks that none overlap.
    #[cfg(test)]
    pub(super) fn boxes(&self) -> Vec<(f64, f64, f64, f64)> {
        self.rows
            .iter()
            .flatten()
            .map(|i| (i.x, i.y, i.w, i.h))
            .collect()
    }

    pub(super) fn render(&self, protocol: &Protocol) -> String {
        let name = protocol.name.unraw();
        let arrow = format!("pipes-arrow-{name}");
        let mut out = String::new();
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
             viewBox=\"0 0 {w:.0} {h:.0}\" role=\"img\" aria-label=\"state diagram of protocol \
             {name}\" font-family=\"monospace\" font-size=\"12\" style=\"max-width: 100%; \
             height: auto\">",
            w = self.width,
            h = self.height,
            name = escape(name),
        );
        let _ = writeln!(out, "<title>protocol {}</title>", escape(name));
        let _ = writeln!(
            out,
            "<defs><marker id=\"{arrow}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
             markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" \
             fill=\"currentColor\"/></marker></defs>"
        );
        // The start mark.
        let start = self.find(&Kind::State(0));
        let _ = writeln!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"currentColor\"/>",
            start.x - START_ROOM + 8.0,
            start.y + start.h / 2.0
        );
        let _ = writeln!(
            out,
            "<path d=\"M{:.1},{:.1} H{:.1}\" fill=\"none\" stroke=\"currentColor\" \
             marker-end=\"url(#{arrow})\"/>",
            start.x - START_ROOM + 13.0,
            start.y + start.h / 2.0,
            start.x
        );
        for (e, edge) in self.edges.iter().enumerate() {
            let from = self.find(&Kind::State(edge.from));
            let label = self.find(&Kind::Label(e));
            let dash = if edge.server {
                " stroke-dasharray=\"5 3\""
            } else {
                ""
            };
            // State to label: a straight stem, no arrow, so a state's messages fan out from it.
            let _ = writeln!(
                out,
                "<path d=\"M{:.1},{:.1} L{:.1},{:.1}\" fill=\"none\" stroke=\"currentColor\"{dash}/>",
                from.cx(),
                from.bottom(),
                label.cx(),
                label.y
            );
            let path = match edge.route {
                Route::Down(v) => {
                    let to = self.find(&Kind::State(v));
                    curve(label.cx(), label.bottom(), to.cx(), to.y)
                }
                Route::End => {
                    let to = self.find(&Kind::End(e));
                    curve(label.cx(), label.bottom(), to.cx(), to.y)
                }
                Route::Lane(v) => {
                    let to = self.find(&Kind::State(v));
                    let lane = self.lanes_x + LANE * edge.lane as f64;
                    // Into the target's top, right of centre, where no message from the row
                    // above comes in; each entry at its own place.
                    let x = (to.cx() + 10.0 + 8.0 * edge.entry_slot as f64).min(to.right() - 4.0);
                    format!(
                        "M{:.1},{:.1} V{:.1} H{lane:.1} V{:.1} H{x:.1} V{:.1}",
                        label.cx(),
                        label.bottom(),
                        edge.exit_y,
                        edge.entry_y,
                        to.y
                    )
                }
            };
            let _ = writeln!(
                out,
                "<path d=\"{path}\" fill=\"none\" stroke=\"currentColor\"{dash} \
                 marker-end=\"url(#{arrow})\"/>"
            );
        }
        for item in self.rows.iter().flatten() {
            match item.kind {
                Kind::State(v) => {
                    let state = &protocol.states[v];
                    let dash = if !self.reachable[v] {
                        " stroke-dasharray=\"4 3\""
                    } else {
                        ""
                    };
                    let _ = writeln!(
                        out,
                        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"6\" \
                         fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\"{dash}/>",
                        item.x, item.y, item.w, item.h
                    );
                    if state.messages.is_empty() {
                        let _ = writeln!(
                            out,
                            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
                             rx=\"4\" fill=\"none\" stroke=\"currentColor\"/>",
                            item.x + 3.0,
                            item.y + 3.0,
                            item.w - 6.0,
                            item.h - 6.0
                        );
                    }
                    let _ = writeln!(
                        out,
                        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" \
                         dominant-baseline=\"central\" fill=\"currentColor\" font-size=\"13\" \
                         font-weight=\"bold\">{}</text>",
                        item.cx(),
                        item.y + item.h / 2.0,
                        escape(&state_text(protocol, v))
                    );
                }
                Kind::Label(e) => {
                    // The full text as a tooltip: the label may be cut short.
                    let _ = writeln!(out, "<g><title>{}</title>", escape(&self.edges[e].text));
                    let _ = writeln!(
                        out,
                        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" \
                         fill=\"currentColor\" fill-opacity=\"0.08\" stroke=\"none\"/>",
                        item.x, item.y, item.w, item.h
                    );
                    let _ = writeln!(
                        out,
                        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" \
                         dominant-baseline=\"central\" fill=\"currentColor\">{}</text>",
                        item.cx(),
                        item.y + item.h / 2.0,
                        escape(&self.edges[e].shown)
                    );
                    out.push_str("</g>\n");
                }
                Kind::End(_) => {
                    let (cx, cy) = (item.cx(), item.y + item.h / 2.0);
                    let _ = writeln!(
                        out,
                        "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{END_R:.1}\" fill=\"none\" \
                         stroke=\"currentColor\"/>"
                    );
                    let _ = writeln!(
                        out,
                        "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{:.1}\" fill=\"currentColor\"/>",
                        END_R - 3.0
                    );
                }
            }
        }
        out.push_str("</svg>");
        out
    }
}

/// The longest label drawn, in characters: the table above the picture in the module docs has
/// every payload type in full, and one long type would otherwise stretch the whole picture.
const LABEL_CHARS: usize = 40;

/// `text`, cut to [`LABEL_CHARS`] with an ellipsis if longer.
fn shorten(text: &str) -> String {
    if text.chars().count() <= LABEL_CHARS {
        return text.to_string();
    }
    let mut short: String = text.chars().take(LABEL_CHARS - 1).collect();
    short.push('…');
    short
}

fn state_item(protocol: &Protocol, v: usize) -> Item {
    let text = state_text(protocol, v);
    Item::new(
        Kind::State(v),
        text_width(&text) * 13.0 / 12.0 + 24.0,
        STATE_H,
    )
}

/// A vertical S-curve from one point down to another.
fn curve(x1: f64, y1: f64, x2: f64, y2: f64) -> String {
    let mid = (y1 + y2) / 2.0;
    if (x1 - x2).abs() < 0.05 {
        return format!("M{x1:.1},{y1:.1} V{y2:.1}");
    }
    format!("M{x1:.1},{y1:.1} C{x1:.1},{mid:.1} {x2:.1},{mid:.1} {x2:.1},{y2:.1}")
}

/// Escapes text for SVG (XML) content and attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The protocol's state diagram as an inline SVG element (no blank line inside, so Markdown
/// keeps it one HTML block).
pub fn svg(protocol: &Protocol) -> String {
    Layout::new(protocol).render(protocol)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(source: &str) -> Protocol {
        crate::analyze(source).unwrap().file.protocols[0].clone()
    }

    /// Every protocol of the corpus, the 200-state one included.
    fn corpus() -> Vec<Protocol> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        paths.sort();
        paths
            .iter()
            .flat_map(|path| {
                let source = std::fs::read_to_string(path).unwrap();
                crate::analyze(&source).unwrap().file.protocols
            })
            .collect()
    }

    #[test]
    fn no_two_boxes_overlap_and_every_state_and_message_is_drawn_once() {
        for p in corpus() {
            let layout = Layout::new(&p);
            let boxes = layout.boxes();
            for (i, a) in boxes.iter().enumerate() {
                for b in &boxes[i + 1..] {
                    let apart = a.0 + a.2 <= b.0
                        || b.0 + b.2 <= a.0
                        || a.1 + a.3 <= b.1
                        || b.1 + b.3 <= a.1;
                    assert!(apart, "{}: {a:?} overlaps {b:?}", p.name.text);
                }
            }
            let items: Vec<&Item> = layout.rows.iter().flatten().collect();
            for v in 0..p.states.len() {
                let drawn = items.iter().filter(|i| i.kind == Kind::State(v)).count();
                assert_eq!(drawn, 1, "{}: state {v}", p.name.text);
            }
            let messages: usize = p.states.iter().map(|s| s.messages.len()).sum();
            let labels = items
                .iter()
                .filter(|i| matches!(i.kind, Kind::Label(_)))
                .count();
            assert_eq!(labels, messages, "{}", p.name.text);
            // Lanes run right of every box, and the picture holds them all.
            let right = items.iter().map(|i| i.right()).fold(0.0, f64::max);
            assert!(layout.lanes_x > right, "{}", p.name.text);
            let lowest = items.iter().map(|i| i.bottom()).fold(0.0, f64::max);
            assert!(layout.width > right && layout.height > lowest);
            for edge in &layout.edges {
                if let Route::Lane(_) = edge.route {
                    let label = layout.find(&Kind::Label(
                        layout
                            .edges
                            .iter()
                            .position(|e| std::ptr::eq(e, edge))
                            .unwrap(),
                    ));
                    assert!(edge.exit_y > label.bottom() && edge.exit_y < layout.height);
                }
            }
        }
    }

    #[test]
    fn the_svg_is_one_html_block_for_markdown() {
        for p in corpus() {
            let text = svg(&p);
            assert!(text.starts_with("<svg ") && text.ends_with("</svg>"));
            // A blank line would end the HTML block and let Markdown read the rest.
            assert!(!text.contains("\n\n"), "{}", p.name.text);
            assert!(!text.contains("<script"));
        }
    }

    #[test]
    fn text_is_escaped() {
        let p = protocol("p { S: send { M(Vec<&'static str>, Tag<\"x\">) -> ! } }");
        let text = svg(&p);
        assert!(
            text.contains(
                ">client: M(Vec&lt;&amp;'static str&gt;, Tag&lt;&quot;x&quot;&gt;)</text>"
            ),
            "{text}"
        );
    }

    #[test]
    fn long_labels_are_cut_and_keep_their_full_text_as_a_tooltip() {
        let long = "std::collections::HashMap<String, Vec<(u64, u64)>>";
        let p = protocol(&format!("p {{ S: send {{ M({long}) -> ! }} }}"));
        let text = svg(&p);
        let full = format!("client: M({long})");
        assert!(
            text.contains(&format!("<title>{}</title>", escape(&full))),
            "{text}"
        );
        let shown: String = full.chars().take(LABEL_CHARS - 1).collect();
        assert!(
            text.contains(&format!(">{}…</text>", escape(&shown))),
            "{text}"
        );
        assert_eq!(shorten("client: M"), "client: M");
    }

    #[test]
    fn rows_follow_the_distance_from_the_start() {
        let p = protocol(
            "p { A: send { ToC -> C, ToB -> B } B: recv { Back -> A } C: recv { ToD -> D } \
             D: send { Stop -> ! } }",
        );
        let (layer, rows, reachable) = layers(&p);
        assert_eq!(layer, [0, 1, 1, 2]);
        // In the order the messages reach them, not the order written.
        assert_eq!(rows, [vec![0], vec![2, 1], vec![3]]);
        assert_eq!(reachable, [true; 4]);
    }

    #[test]
    fn unreachable_states_are_dashed_and_states_without_messages_double() {
        let p = protocol(
            "p { A: send { Go -> Done } Done {} #[allow(unreachable_states)] Old: recv { Back -> A } }",
        );
        let (layer, _, reachable) = layers(&p);
        assert_eq!(layer, [0, 1, 2]);
        assert_eq!(reachable, [true, true, false]);
        let text = svg(&p);
        let rect_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("<rect")).collect();
        // A, Done (two borders), Old (dashed), and the two labels' backgrounds.
        assert_eq!(rect_lines.len(), 6, "{text}");
        assert_eq!(
            rect_lines
                .iter()
                .filter(|l| l.contains("stroke-dasharray"))
                .count(),
            1
        );
    }
}
