//! `archmax graph --format svg` draws every edge label where it can be read: no two label
//! boxes intersect, none covers a state, and every one lies inside the `viewBox`. Checked on
//! the SVG text itself, parsed as XML, for the example's `order-lookup`, the workflow
//! `archmax init` writes, and a workflow of twenty states.
#![allow(clippy::panic)]

use std::fmt::Write as _;

use archmax_spec::graph::{Format, Graph};

#[derive(Debug, Clone, Copy)]
struct Box {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Box {
    fn overlaps(&self, o: &Box) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
    fn inside(&self, v: &Box) -> bool {
        self.x >= v.x
            && self.y >= v.y
            && self.x + self.w <= v.x + v.w
            && self.y + self.h <= v.y + v.h
    }
}

fn num(node: roxmltree::Node, name: &str) -> f64 {
    node.attribute(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("<{}> has a numeric {name}", node.tag_name().name()))
}

fn rect_box(node: roxmltree::Node) -> Box {
    Box {
        x: num(node, "x"),
        y: num(node, "y"),
        w: num(node, "width"),
        h: num(node, "height"),
    }
}

/// The bounding box of a state's shape (a rect, or the human state's polygon).
fn state_box(g: roxmltree::Node) -> Box {
    let shape = g
        .children()
        .find(|c| c.is_element() && matches!(c.tag_name().name(), "rect" | "polygon"))
        .expect("a state has a shape");
    if shape.tag_name().name() == "rect" {
        return rect_box(shape);
    }
    let points: Vec<(f64, f64)> = shape
        .attribute("points")
        .expect("points")
        .split_whitespace()
        .filter_map(|p| p.split_once(','))
        .map(|(x, y)| (x.parse().expect("x"), y.parse().expect("y")))
        .collect();
    let (x0, x1) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (y0, y1) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    Box {
        x: x0,
        y: y0,
        w: x1 - x0,
        h: y1 - y0,
    }
}

/// Checks one workflow's SVG and answers how many labels it drew.
fn check(name: &str, yaml: &str) -> usize {
    let wf =
        archmax_spec::parse_machine_spec(yaml).unwrap_or_else(|e| panic!("{name} parses: {e:?}"));
    let graph = Graph::of(&wf);
    let svg = graph.render(Format::Svg);
    let doc =
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{name}: the SVG is XML: {e}"));
    let root = doc.root_element();
    let view: Vec<f64> = root
        .attribute("viewBox")
        .expect("a viewBox")
        .split_whitespace()
        .map(|v| v.parse().expect("a number"))
        .collect();
    let view = Box {
        x: view[0],
        y: view[1],
        w: view[2],
        h: view[3],
    };
    let labels: Vec<(String, Box)> = root
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("class") == Some("label"))
        .map(|r| {
            let lines: Vec<String> = r
                .next_sibling_element()
                .map(|t| {
                    t.children()
                        .filter(|c| c.has_tag_name("tspan"))
                        .map(|l| l.text().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default();
            (lines.join("\n"), rect_box(r))
        })
        .collect();
    let states: Vec<(String, Box)> = root
        .descendants()
        .filter(|n| {
            n.has_tag_name("g")
                && n.attribute("class")
                    .is_some_and(|c| c.starts_with("state "))
        })
        .map(|g| {
            (
                g.attribute("data-state").unwrap_or_default().to_string(),
                state_box(g),
            )
        })
        .collect();
    assert_eq!(
        states.len(),
        graph.nodes.len(),
        "{name}: every state is drawn"
    );
    let labelled = graph
        .edges
        .iter()
        .filter(|e| Graph::edge_label(e).is_some())
        .count();
    assert_eq!(
        labels.len(),
        labelled,
        "{name}: every labelled edge has its label"
    );
    for (i, (text, a)) in labels.iter().enumerate() {
        assert!(
            a.inside(&view),
            "{name}: label '{text}' {a:?} lies outside the viewBox {view:?}"
        );
        // The text fits its box (at most 6 px a character of the 10 px font, 12 px a line).
        assert!(!text.is_empty(), "{name}: a label has text");
        for line in text.lines() {
            assert!(
                line.chars().count() as f64 * 6.0 <= a.w,
                "{name}: '{line}' fits its box"
            );
        }
        assert!(
            text.lines().count() as f64 * 12.0 <= a.h,
            "{name}: '{text}' fits its box"
        );
        for (other, b) in &labels[i + 1..] {
            assert!(
                !a.overlaps(b),
                "{name}: labels '{text}' {a:?} and '{other}' {b:?} overlap"
            );
        }
        for (slug, s) in &states {
            assert!(
                !a.overlaps(s),
                "{name}: label '{text}' {a:?} covers the state '{slug}' {s:?}"
            );
        }
    }
    for (slug, s) in &states {
        assert!(
            s.inside(&view),
            "{name}: state '{slug}' {s:?} lies outside the viewBox {view:?}"
        );
    }
    labels.len()
}

fn read(path: &str) -> String {
    let at = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&at).unwrap_or_else(|e| panic!("{at}: {e}"))
}

#[test]
fn the_examples_order_lookup_labels_never_overlap_or_clip() {
    let drawn = check(
        "order-lookup",
        &read("examples/customer-support/workflows/order-lookup/workflow.yaml"),
    );
    assert_eq!(drawn, 10, "on_error and refine included");
}

#[test]
fn the_init_workflows_labels_never_overlap_or_clip() {
    let drawn = check(
        "hello",
        &read("crates/cli/templates/init/workflows/hello/workflow.yaml"),
    );
    assert_eq!(drawn, 3);
}

/// Twenty states: a main line, a human review every fifth state (approve on, refine back,
/// reject out), `on_error` routes to a shared handler, and long descriptions.
fn twenty_states() -> String {
    let mut y = String::from("title: Twenty states of a long process\nstates:\n");
    for i in 1..=20 {
        let _ = writeln!(y, "  s{i:02}:");
        if i == 1 {
            y.push_str("    triggers: { manual: }\n");
        }
        if i % 5 == 0 && i < 20 {
            let _ = writeln!(
                y,
                "    type: human\n    title: Review step {i}\n    instructions: Review it.\n    transitions:"
            );
            let _ = writeln!(
                y,
                "      - {{ to: s{:02}, type: approve, description: Approve step {i} as proposed and go on. }}",
                i + 1
            );
            let _ = writeln!(
                y,
                "      - {{ to: s{:02}, type: refine, description: Send it back with a comment. }}",
                i - 1
            );
            y.push_str("      - { to: s20, type: reject, description: Stop here. }\n");
            continue;
        }
        let _ = writeln!(
            y,
            "    title: Step number {i} of the process\n    instructions: Work on step {i}."
        );
        if i == 20 {
            continue;
        }
        y.push_str("    transitions:\n");
        let _ = writeln!(
            y,
            "      - {{ to: s{:02}, description: The work of step {i} is done and written down. }}",
            i + 1
        );
        if i % 3 == 0 && i + 3 <= 20 {
            let _ = writeln!(
                y,
                "      - {{ to: s{:02}, description: Nothing to do in the next steps. }}",
                i + 3
            );
        }
        if i % 4 == 0 {
            let _ = writeln!(
                y,
                "      - {{ to: s02, description: Start over from the second step. }}"
            );
        }
        if i % 6 == 1 && i > 1 {
            y.push_str("    on_error: s20\n");
        }
    }
    y
}

#[test]
fn a_twenty_state_workflows_labels_never_overlap_or_clip() {
    let yaml = twenty_states();
    let drawn = check("twenty", &yaml);
    assert!(drawn >= 25, "{drawn} labels");
}
