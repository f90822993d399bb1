//! The SVG of a [`Graph`], so `archmax graph --format svg` needs no Graphviz: laid out by
//! [`crate::graph_layout`] (a layered layout in which each edge label is a box of its own,
//! so labels never overlap each other or a state, and all lie inside the `viewBox`), each
//! edge drawn from its source through its label to its target. Each node is a
//! `<g class="state …" data-state="<slug>">`, so a page can mark the session's position with
//! CSS; each label is a `<rect class="label">` under its text, wrapped in `<tspan>` lines.

use std::fmt::Write as _;

use crate::graph_layout::{LABEL_LINE_H, MARGIN, Rect, layout};
use crate::graph_model::{EdgeKind, Graph, NodeKind};

const LINE_H: f64 = 16.0;
const PAD: f64 = 10.0;

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The path of an edge from `a` to `b` through the label box `via`, or straight: into the
/// label on the side facing `a`, out of it on the side facing `b`.
fn edge_path(a: &Rect, b: &Rect, via: Option<&Rect>) -> String {
    match via {
        Some(l) => {
            let (x1, y1) = a.exit_toward(l.cx(), l.cy());
            let (lx1, ly1) = l.exit_toward(a.cx(), a.cy());
            let (lx2, ly2) = l.exit_toward(b.cx(), b.cy());
            let (x2, y2) = b.exit_toward(l.cx(), l.cy());
            format!("M{x1:.1},{y1:.1} L{lx1:.1},{ly1:.1} M{lx2:.1},{ly2:.1} L{x2:.1},{y2:.1}")
        }
        None if a == b => {
            // A loop on the box's right side.
            let (x, y) = (a.x + a.w, a.cy());
            format!(
                "M{x:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {x:.1},{:.1}",
                y - 6.0,
                x + 24.0,
                y - 14.0,
                x + 24.0,
                y + 14.0,
                y + 6.0
            )
        }
        None => {
            let (x1, y1) = a.exit_toward(b.cx(), b.cy());
            let (x2, y2) = b.exit_toward(a.cx(), a.cy());
            format!("M{x1:.1},{y1:.1} L{x2:.1},{y2:.1}")
        }
    }
}

/// The SVG document of `g`.
pub(crate) fn render(g: &Graph) -> String {
    let laid = layout(g);
    let (width, height) = (laid.width, laid.height);
    let placed = &laid.nodes;
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
            MARGIN + 12.0,
            xml(t)
        );
    }
    // Entry markers: a small circle above each entry state.
    for (i, n) in g.nodes.iter().enumerate() {
        let Some(p) = placed.get(i).filter(|_| n.entry) else {
            continue;
        };
        let cx = p.cx();
        let _ = writeln!(
            out,
            "<circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#2d3748\"/><line x1=\"{cx:.1}\" y1=\"{:.1}\" x2=\"{cx:.1}\" y2=\"{:.1}\" stroke=\"#4a5568\" marker-end=\"url(#arrow)\"/>",
            p.y - 22.0,
            p.y - 18.0,
            p.y
        );
    }
    for (k, e) in g.edges.iter().enumerate() {
        let (Some(a), Some(b)) = (placed.get(e.from), placed.get(e.to)) else {
            continue;
        };
        let label = laid.labels.get(k).and_then(Option::as_ref);
        let path = edge_path(a, b, label.map(|l| &l.at));
        let (stroke, dash) = match e.kind {
            EdgeKind::Transition => ("#4a5568", ""),
            EdgeKind::OnError => ("#c53030", " stroke-dasharray=\"6 4\""),
        };
        out.push_str("<g class=\"edge\">");
        if let Some(full) = Graph::edge_label(e) {
            let _ = write!(out, "<title>{}</title>", xml(&full));
        }
        let _ = write!(
            out,
            "<path d=\"{path}\" fill=\"none\" stroke=\"{stroke}\"{dash} marker-end=\"url(#arrow)\"/>"
        );
        if let Some(l) = label {
            let r = &l.at;
            let _ = write!(
                out,
                "<rect class=\"label\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" fill=\"#ffffff\" stroke=\"#e2e8f0\"/><text text-anchor=\"middle\" font-size=\"10\" fill=\"{stroke}\">",
                r.x, r.y, r.w, r.h,
            );
            for (j, line) in l.lines.iter().enumerate() {
                let _ = write!(
                    out,
                    "<tspan x=\"{:.1}\" y=\"{:.1}\">{}</tspan>",
                    r.cx(),
                    r.y + 2.0 + LABEL_LINE_H * (j as f64 + 0.78),
                    xml(line)
                );
            }
            out.push_str("</text>");
        }
        out.push_str("</g>\n");
    }
    for (i, n) in g.nodes.iter().enumerate() {
        let Some(p) = placed.get(i) else {
            continue;
        };
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
        assert!(y_of("orphan") >= 0.0, "an unreachable state is drawn too");
        // Every labelled edge has its label box.
        assert_eq!(svg.matches("<rect class=\"label\"").count(), 3);
    }
}
