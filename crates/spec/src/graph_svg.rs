//! A simple layered layout of a [`Graph`] as SVG, so `archmax graph --format svg` needs no
//! Graphviz: each state's rank is its shortest distance from an entry state along
//! transitions (unreachable states go below), states of one rank sit in one row in document
//! order, forward edges are straight lines, edges within a row or back up are curves around
//! the side. Each node is a `<g class="state …" data-state="<slug>">`, so a page can mark the
//! session's position with CSS.

use std::collections::VecDeque;
use std::fmt::Write as _;

use crate::graph::{EdgeKind, Graph, NodeKind};

const CHAR_W: f64 = 7.0;
const LINE_H: f64 = 16.0;
const PAD: f64 = 10.0;
const ROW_GAP: f64 = 90.0;
const COL_GAP: f64 = 120.0;
const MARGIN: f64 = 30.0;
/// Edge labels longer than this are cut (the full text is the edge's `<title>`).
const LABEL_MAX: usize = 34;

struct Placed {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{head}…")
    }
}

/// Where along edge `k` its label sits (0 = source, 1 = target): spread over the forward
/// edges of its source.
fn label_point(g: &Graph, k: usize) -> f64 {
    let Some(e) = g.edges.get(k) else {
        return 0.5;
    };
    let siblings: Vec<usize> = (0..g.edges.len())
        .filter(|i| g.edges[*i].from == e.from)
        .collect();
    let n = siblings.len();
    let at = siblings.iter().position(|i| *i == k).unwrap_or(0);
    if n <= 1 {
        0.5
    } else {
        0.3 + 0.4 * at as f64 / (n - 1) as f64
    }
}

/// The rank of every node: BFS distance from the entries over transitions.
fn ranks(g: &Graph) -> Vec<usize> {
    let n = g.nodes.len();
    let mut rank = vec![usize::MAX; n];
    let mut queue = VecDeque::new();
    for (i, node) in g.nodes.iter().enumerate() {
        if node.entry {
            rank[i] = 0;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        for e in g.edges.iter().filter(|e| e.from == i) {
            if rank[e.to] == usize::MAX {
                rank[e.to] = rank[i] + 1;
                queue.push_back(e.to);
            }
        }
    }
    let deepest = rank.iter().filter(|r| **r != usize::MAX).max().copied();
    let below = deepest.map_or(0, |d| d + 1);
    for r in &mut rank {
        if *r == usize::MAX {
            *r = below;
        }
    }
    rank
}

fn layout(g: &Graph) -> (Vec<Placed>, f64, f64) {
    let rank = ranks(g);
    let rows = rank.iter().max().map_or(0, |m| m + 1);
    let sizes: Vec<(f64, f64)> = (0..g.nodes.len())
        .map(|i| {
            let lines = g.node_lines(i);
            let longest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(1);
            let w = (longest as f64 * CHAR_W + 2.0 * PAD).max(90.0);
            (w, lines.len() as f64 * LINE_H + 2.0 * PAD)
        })
        .collect();
    let mut row_width = vec![0.0f64; rows];
    let mut row_height = vec![0.0f64; rows];
    for (i, (w, h)) in sizes.iter().enumerate() {
        let r = rank[i];
        if row_width[r] > 0.0 {
            row_width[r] += COL_GAP;
        }
        row_width[r] += w;
        row_height[r] = row_height[r].max(*h);
    }
    let width = row_width.iter().copied().fold(0.0, f64::max) + 2.0 * MARGIN + 160.0;
    let mut row_y = vec![MARGIN + 40.0; rows];
    for r in 1..rows {
        row_y[r] = row_y[r - 1] + row_height[r - 1] + ROW_GAP;
    }
    let height = row_y.last().copied().unwrap_or(MARGIN)
        + row_height.last().copied().unwrap_or(0.0)
        + MARGIN;
    let mut cursor: Vec<f64> = row_width.iter().map(|w| (width - w) / 2.0).collect();
    let placed = sizes
        .iter()
        .enumerate()
        .map(|(i, (w, h))| {
            let r = rank[i];
            let x = cursor[r];
            cursor[r] += w + COL_GAP;
            Placed {
                x,
                y: row_y[r] + (row_height[r] - h) / 2.0,
                w: *w,
                h: *h,
            }
        })
        .collect();
    (placed, width, height)
}

/// The SVG document of `g`.
pub(crate) fn render(g: &Graph) -> String {
    let (placed, width, height) = layout(g);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width:.0} {height:.0}\" width=\"{width:.0}\" height=\"{height:.0}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    out.push_str(
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#4a5568\"/></marker></defs>\n",
    );
    out.push_str("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    if let Some(t) = &g.title {
        let _ = writeln!(
            out,
            "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{}</text>",
            width / 2.0,
            MARGIN,
            xml(t)
        );
    }
    // Entry markers: a small circle above each entry state.
    for (i, n) in g.nodes.iter().enumerate() {
        if n.entry {
            let p = &placed[i];
            let cx = p.x + p.w / 2.0;
            let _ = writeln!(
                out,
                "<circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"#2d3748\"/><line x1=\"{cx:.1}\" y1=\"{:.1}\" x2=\"{cx:.1}\" y2=\"{:.1}\" stroke=\"#4a5568\" marker-end=\"url(#arrow)\"/>",
                p.y - 28.0,
                p.y - 23.0,
                p.y
            );
        }
    }
    for (k, e) in g.edges.iter().enumerate() {
        let (a, b) = (&placed[e.from], &placed[e.to]);
        let forward = b.y > a.y + a.h;
        let same_row = (a.y + a.h / 2.0 - b.y - b.h / 2.0).abs() < 1.0;
        let (path, lx, ly) = if forward {
            let (x1, y1) = (a.x + a.w / 2.0, a.y + a.h);
            let (x2, y2) = (b.x + b.w / 2.0, b.y);
            // Labels of one source's edges sit at different points along them, so a fan of
            // edges does not stack its labels at one height.
            let t = label_point(g, k);
            (
                format!("M{x1:.1},{y1:.1} L{x2:.1},{y2:.1}"),
                x1 + (x2 - x1) * t,
                y1 + (y2 - y1) * t,
            )
        } else if same_row {
            // Same row: side to side, parallel edges a few pixels apart.
            let off = ((k % 3) as f64 - 1.0) * 7.0;
            let (x1, x2) = if b.x > a.x {
                (a.x + a.w, b.x)
            } else {
                (a.x, b.x + b.w)
            };
            let (y1, y2) = (a.y + a.h / 2.0 + off, b.y + b.h / 2.0 + off);
            (
                format!("M{x1:.1},{y1:.1} L{x2:.1},{y2:.1}"),
                (x1 + x2) / 2.0,
                y1 - 8.0,
            )
        } else {
            // Around the right side: out of the source's right, into the target's right.
            let bend = 60.0 + 14.0 * (k % 4) as f64;
            let (x1, y1) = (a.x + a.w, a.y + a.h / 2.0);
            let (x2, y2) = (b.x + b.w, b.y + b.h / 2.0);
            let cx = x1.max(x2) + bend;
            (
                format!("M{x1:.1},{y1:.1} C{cx:.1},{y1:.1} {cx:.1},{y2:.1} {x2:.1},{y2:.1}"),
                cx - bend / 4.0,
                (y1 + y2) / 2.0,
            )
        };
        let (stroke, dash) = match e.kind {
            EdgeKind::Transition => ("#4a5568", ""),
            EdgeKind::OnError => ("#c53030", " stroke-dasharray=\"6 4\""),
        };
        let label = Graph::edge_label(e);
        out.push_str("<g class=\"edge\">");
        if let Some(l) = &label {
            let _ = write!(out, "<title>{}</title>", xml(l));
        }
        let _ = write!(
            out,
            "<path d=\"{path}\" fill=\"none\" stroke=\"{stroke}\"{dash} marker-end=\"url(#arrow)\"/>"
        );
        if let Some(l) = &label {
            // Between two states of a row there is only the column gap.
            let max = if same_row && !forward { 18 } else { LABEL_MAX };
            let shown = cut(l, max);
            let w = shown.chars().count() as f64 * 6.0 + 8.0;
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"16\" fill=\"#ffffff\" opacity=\"0.9\"/><text x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\" fill=\"{stroke}\">{}</text>",
                lx - w / 2.0,
                ly - 11.0,
                ly + 1.0,
                xml(&shown)
            );
        }
        out.push_str("</g>\n");
    }
    for (i, n) in g.nodes.iter().enumerate() {
        let p = &placed[i];
        let (class, fill, stroke) = match n.kind {
            NodeKind::Agent => ("agent", "#ebf4ff", "#2b6cb0"),
            NodeKind::Human => ("human", "#fff4d6", "#b7791f"),
            NodeKind::Terminal => ("terminal", "#e6f4ea", "#2f855a"),
        };
        let _ = write!(
            out,
            "<g class=\"state {class}\" data-state=\"{}\">",
            xml(&n.slug)
        );
        let shape = match n.kind {
            NodeKind::Human => {
                let c = 12.0;
                format!(
                    "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\"",
                    p.x + c,
                    p.y,
                    p.x + p.w - c,
                    p.y,
                    p.x + p.w,
                    p.y + p.h / 2.0,
                    p.x + p.w - c,
                    p.y + p.h,
                    p.x + c,
                    p.y + p.h,
                    p.x,
                    p.y + p.h / 2.0
                )
            }
            NodeKind::Agent => format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"6\"",
                p.x, p.y, p.w, p.h
            ),
            NodeKind::Terminal => format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"{:.1}\"",
                p.x,
                p.y,
                p.w,
                p.h,
                p.h / 2.0
            ),
        };
        let width = if n.kind == NodeKind::Terminal {
            "2.5"
        } else {
            "1.5"
        };
        let _ = write!(
            out,
            "{shape} fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>"
        );
        for (j, line) in g.node_lines(i).iter().enumerate() {
            let weight = if j == 0 { " font-weight=\"bold\"" } else { "" };
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\"{weight}>{}</text>",
                p.x + p.w / 2.0,
                p.y + PAD + LINE_H * (j as f64 + 0.75),
                xml(line)
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use crate::graph::{Format, Graph};

    const SPEC: &str = "states:\n  a:\n    triggers:\n      manual:\n    instructions: A.\n    transitions:\n      - to: b\n        description: \"<go> & on\"\n  b:\n    type: human\n    instructions: B.\n    transitions:\n      - to: a\n        description: Again.\n      - to: c\n        description: Done.\n  c:\n    instructions: C.\n  orphan:\n    instructions: O.\n";

    #[test]
    fn every_state_is_a_group_in_rank_order_with_escaped_text() {
        let wf = crate::parse_machine_spec(SPEC).expect("parses");
        let svg = Graph::of(&wf).render(Format::Svg);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        for (slug, class) in [
            ("a", "agent"),
            ("b", "human"),
            ("c", "terminal"),
            ("orphan", "terminal"),
        ] {
            assert!(
                svg.contains(&format!(
                    "<g class=\"state {class}\" data-state=\"{slug}\">"
                )),
                "{slug} as {class}"
            );
        }
        assert!(svg.contains("&lt;go&gt; &amp; on"));
        assert!(!svg.contains("<go>"));
        let y_of = |slug: &str| -> f64 {
            let at = svg
                .find(&format!("data-state=\"{slug}\">"))
                .expect("the state is drawn");
            let rest = &svg[at..];
            let y = rest.find(" y=\"").expect("a y") + 4;
            let end = rest[y..].find('"').expect("closing quote") + y;
            rest[y..end].parse().expect("a number")
        };
        assert!(y_of("a") < y_of("b"));
        assert!(y_of("b") < y_of("c"));
        assert!(y_of("c") < y_of("orphan"), "unreachable states go below");
        // The back edge b → a curves (a cubic path), the forward ones are lines.
        assert!(svg.contains(" C"));
    }
}
