//! Where the SVG diagram puts each state and each edge's label: a layered (Sugiyama) layout
//! by `rust-sugiyama` (cycles broken, ranks assigned, crossings reduced, coordinates by
//! Brandes–Köpf), in which every label is a vertex of its own between its edge's two states.
//! The layout keeps vertices of one rank apart by their widths and stacks ranks by their
//! heights, so no two labels overlap, no label overlaps a state, and everything lies inside
//! the computed width and height.

use std::panic::{AssertUnwindSafe, catch_unwind};

use rust_sugiyama::configure::{Config, RankingType};

use crate::graph_model::Graph;

/// Width of one character of a state's text (12 px sans-serif), and the line height.
const CHAR_W: f64 = 7.0;
const LINE_H: f64 = 16.0;
/// Padding inside a state's box.
const PAD: f64 = 10.0;
/// Width of one character of a label (10 px sans-serif), and the height of one of its lines.
pub(crate) const LABEL_CHAR_W: f64 = 6.0;
pub(crate) const LABEL_LINE_H: f64 = 12.0;
/// A label is wrapped at spaces into lines of at most this many characters, at most
/// [`LABEL_LINES`] of them; what is left is cut with `…` (the full text is the edge's `<title>`).
pub(crate) const LABEL_LINE_MAX: usize = 26;
pub(crate) const LABEL_LINES: usize = 2;
/// The least space between two vertices, across and down (room for an entry marker).
const SPACING: f64 = 30.0;
/// Around the drawing; above it, the title, and room for the entry markers.
pub(crate) const MARGIN: f64 = 24.0;
const TITLE_H: f64 = 30.0;
const MARKER_H: f64 = 28.0;
/// Between the drawings of disconnected parts of the workflow.
const PART_GAP: f64 = 40.0;

/// A box, by its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    pub fn cy(&self) -> f64 {
        self.y + self.h / 2.0
    }

    /// Where the line from the box's centre toward `(tx, ty)` leaves the box.
    pub fn exit_toward(&self, tx: f64, ty: f64) -> (f64, f64) {
        let (cx, cy) = (self.cx(), self.cy());
        let (dx, dy) = (tx - cx, ty - cy);
        if dx.abs() < f64::EPSILON && dy.abs() < f64::EPSILON {
            return (cx, cy);
        }
        let sx = if dx.abs() > f64::EPSILON {
            (self.w / 2.0) / dx.abs()
        } else {
            f64::INFINITY
        };
        let sy = if dy.abs() > f64::EPSILON {
            (self.h / 2.0) / dy.abs()
        } else {
            f64::INFINITY
        };
        let s = sx.min(sy);
        (cx + dx * s, cy + dy * s)
    }
}

/// One edge's label as drawn: its lines and its box.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Label {
    pub lines: Vec<String>,
    pub at: Rect,
}

/// The laid-out diagram: a box per state and per labelled edge, in the graph's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    pub nodes: Vec<Rect>,
    pub labels: Vec<Option<Label>>,
    pub width: f64,
    pub height: f64,
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", head.trim_end())
    }
}

/// `text` in lines of at most [`LABEL_LINE_MAX`] characters, broken at spaces (a longer word
/// is cut), at most [`LABEL_LINES`] lines, the last cut with `…` when text is left over.
pub(crate) fn wrap(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut words = text.split_whitespace().peekable();
    while let Some(word) = words.next() {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > LABEL_LINE_MAX {
            if lines.len() + 1 == LABEL_LINES {
                line.push(' ');
                line.push_str(word);
                for rest in words.by_ref() {
                    line.push(' ');
                    line.push_str(rest);
                }
                break;
            }
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.into_iter().map(|l| cut(&l, LABEL_LINE_MAX)).collect()
}

/// The size of state `i`'s box.
fn node_size(g: &Graph, i: usize) -> (f64, f64) {
    let lines = g.node_lines(i);
    let longest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let w = (longest as f64 * CHAR_W + 2.0 * PAD).max(90.0);
    (w, lines.len() as f64 * LINE_H + 2.0 * PAD)
}

/// The lines and size of a label.
fn label_of(text: &str) -> (Vec<String>, (f64, f64)) {
    let lines = wrap(text);
    let longest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let w = longest as f64 * LABEL_CHAR_W + 8.0;
    (lines.clone(), (w, lines.len() as f64 * LABEL_LINE_H + 4.0))
}

/// Which edges lead back: found by a depth-first walk from the entry states (then from any
/// state not reached), an edge is a back edge when it returns to a state on the walk's
/// current path (a self-loop included). Without them the graph has no cycle.
fn back_edges(g: &Graph) -> Vec<bool> {
    let n = g.nodes.len();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in g.edges.iter().enumerate() {
        if let Some(list) = out.get_mut(e.from) {
            list.push(k);
        }
    }
    let mut back = vec![false; g.edges.len()];
    // 0: not seen, 1: on the current path, 2: done.
    let mut mark = vec![0u8; n];
    let starts = g
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| node.entry)
        .map(|(i, _)| i)
        .chain(0..n);
    for start in starts {
        if mark.get(start) != Some(&0) {
            continue;
        }
        mark[start] = 1;
        // The path: each state with the position of its next edge to follow.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some((at, next)) = path.last_mut() {
            let Some(&k) = out.get(*at).and_then(|l| l.get(*next)) else {
                mark[*at] = 2;
                path.pop();
                continue;
            };
            *next += 1;
            let to = g.edges[k].to;
            match mark.get(to) {
                Some(0) => {
                    mark[to] = 1;
                    path.push((to, 0));
                }
                Some(1) => back[k] = true,
                _ => {}
            }
        }
    }
    back
}

/// Lays `g` out. Vertices `0..n` are the states, `n..` the labels, one per labelled edge.
///
/// The layout is handed a graph without cycles: each back edge ([`back_edges`]) is given to it
/// reversed (the drawing keeps its direction), so the entry states stay on top and a loop
/// back (a `refine`, a retry) is the edge that goes up, as a reader expects.
pub(crate) fn layout(g: &Graph) -> Layout {
    let n = g.nodes.len();
    let back = back_edges(g);
    let mut sizes: Vec<(f64, f64)> = (0..n).map(|i| node_size(g, i)).collect();
    let mut texts: Vec<Option<(Vec<String>, usize)>> = vec![None; g.edges.len()];
    let mut links: Vec<(u32, u32)> = Vec::new();
    for (k, e) in g.edges.iter().enumerate() {
        match Graph::edge_label(e) {
            Some(text) => {
                let (shown, size) = label_of(&text);
                let v = sizes.len();
                sizes.push(size);
                texts[k] = Some((shown, v));
                let (a, b) = if back[k] {
                    (e.to, e.from)
                } else {
                    (e.from, e.to)
                };
                links.push((a as u32, v as u32));
                // A loop's label hangs below its state.
                if a != b {
                    links.push((v as u32, b as u32));
                }
            }
            None if e.from == e.to => {}
            None if back[k] => links.push((e.to as u32, e.from as u32)),
            None => links.push((e.from as u32, e.to as u32)),
        }
    }
    let vertices: Vec<(u32, (f64, f64))> = sizes
        .iter()
        .enumerate()
        .map(|(i, s)| (i as u32, *s))
        .collect();
    let config = Config {
        vertex_spacing: SPACING,
        ranking_type: RankingType::Up,
        ..Config::default()
    };
    // The crate asserts its own invariants with panics; a failure leaves every vertex unplaced,
    // and the row below the drawing takes them.
    let parts = catch_unwind(AssertUnwindSafe(|| {
        rust_sugiyama::from_vertices_and_edges(&vertices, &links, &config)
    }))
    .unwrap_or_default();

    let mut boxes: Vec<Option<Rect>> = vec![None; sizes.len()];
    let top = MARGIN + MARKER_H + if g.title.is_some() { TITLE_H } else { 0.0 };
    let mut left = MARGIN;
    let mut bottom = top;
    for (part, _, _) in parts {
        let placed: Vec<(usize, Rect)> = part
            .into_iter()
            .filter_map(|(v, (cx, cy))| {
                let (w, h) = *sizes.get(v)?;
                Some((
                    v,
                    Rect {
                        x: cx - w / 2.0,
                        y: cy - h / 2.0,
                        w,
                        h,
                    },
                ))
            })
            .collect();
        let Some(min_x) = placed.iter().map(|(_, r)| r.x).reduce(f64::min) else {
            continue;
        };
        let min_y = placed
            .iter()
            .map(|(_, r)| r.y)
            .fold(f64::INFINITY, f64::min);
        let mut right = left;
        for (v, r) in placed {
            let moved = Rect {
                x: r.x - min_x + left,
                y: r.y - min_y + top,
                ..r
            };
            right = right.max(moved.x + moved.w);
            bottom = bottom.max(moved.y + moved.h);
            if let Some(slot) = boxes.get_mut(v) {
                *slot = Some(moved);
            }
        }
        left = right + PART_GAP;
    }
    // Whatever the layout did not place goes in one row below it.
    let row_y = if boxes.iter().any(Option::is_some) {
        bottom + SPACING
    } else {
        top
    };
    let mut row_x = MARGIN;
    for (v, slot) in boxes.iter_mut().enumerate() {
        if slot.is_none() {
            let (w, h) = sizes[v];
            *slot = Some(Rect {
                x: row_x,
                y: row_y,
                w,
                h,
            });
            row_x += w + SPACING;
        }
    }
    let rects: Vec<Rect> = boxes.into_iter().flatten().collect();
    let right = rects.iter().map(|r| r.x + r.w).fold(MARGIN, f64::max);
    let lowest = rects.iter().map(|r| r.y + r.h).fold(top, f64::max);
    let title_w = g
        .title
        .as_deref()
        .map_or(0.0, |t| t.chars().count() as f64 * 9.0);
    let width = (right + MARGIN).max(title_w + 2.0 * MARGIN);
    // Centre the drawing under a title wider than it.
    let shift = (width - (right + MARGIN)) / 2.0;
    let rects: Vec<Rect> = rects
        .into_iter()
        .map(|r| Rect {
            x: r.x + shift,
            ..r
        })
        .collect();
    let labels = texts
        .into_iter()
        .map(|t| {
            t.and_then(|(text, v)| {
                rects.get(v).map(|at| Label {
                    lines: text,
                    at: at.to_owned(),
                })
            })
        })
        .collect();
    Layout {
        nodes: rects.iter().take(n).copied().collect(),
        labels,
        width,
        height: lowest + MARGIN,
    }
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn labels_wrap_at_spaces_into_two_lines_and_cut_the_rest() {
        assert_eq!(wrap("on_error"), ["on_error"]);
        assert_eq!(
            wrap("approve: Approve the refund as proposed."),
            ["approve: Approve the", "refund as proposed."]
        );
        assert_eq!(
            wrap("The customer asks about an existing order: where it is, when it arrives"),
            ["The customer asks about an", "existing order: where it…"]
        );
        assert_eq!(
            wrap("a_single_word_much_longer_than_a_line_can_hold"),
            ["a_single_word_much_longer…"]
        );
    }
}
