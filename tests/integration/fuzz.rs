//! Property test: parsing and validating never panic, on random YAML and on
//! mutations of real specs, and what comes back is self-consistent.

use archmax_spec::workspace::MemFiles;
use archmax_spec::{ValidateOptions, validate_spec, validate_workflow};
use archmax_tests::example_root;

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const TOKENS: &[&str] = &[
    "states:",
    "  a:",
    "    triggers:",
    "{ manual: }",
    "transitions:",
    "- to: b",
    "description:",
    "type: human",
    "before:",
    "after:",
    "{ script: hooks/x.js }",
    "rubric:",
    "instructions:",
    "tools:",
    "allow:",
    "forbid:",
    "[",
    "]",
    "{",
    "}",
    ":",
    "- ",
    "&a",
    "*a",
    "<<:",
    "!!str",
    "~",
    "null",
    "yes",
    "0o17",
    ".inf",
    "-.5",
    "'",
    "\"",
    "|",
    ">-",
    "#",
    "---",
    "...",
    "\t",
    "\r\n",
    "\n",
    "  ",
    "${{x}}",
    "$${{y}}",
    "${{",
    "}}",
    "é",
    "\u{feff}",
    "\u{0}",
    "9999999999999999999999",
    "requires:",
    "locks:",
    "returns:",
    "session:",
];

fn random_yaml(rng: &mut Rng) -> String {
    let n = 1 + rng.below(60);
    (0..n)
        .map(|_| rng.pick(TOKENS))
        .collect::<Vec<_>>()
        .join(if rng.below(2) == 0 { " " } else { "\n" })
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.below(4) {
        if chars.is_empty() {
            break;
        }
        let at = rng.below(chars.len());
        match rng.below(6) {
            0 => {
                let end = (at + rng.below(40)).min(chars.len());
                chars.drain(at..end);
            }
            1 => {
                let t: Vec<char> = rng.pick(TOKENS).chars().collect();
                chars.splice(at..at, t);
            }
            2 => chars[at] = ' ',
            3 => {
                let end = (at + rng.below(200)).min(chars.len());
                let dup: Vec<char> = chars[at..end].to_vec();
                let to = rng.below(chars.len());
                chars.splice(to..to, dup);
            }
            4 => chars.insert(at, '\n'),
            _ => {
                let other = rng.below(chars.len());
                chars.swap(at, other);
            }
        }
    }
    chars.into_iter().collect()
}

fn assert_consistent(text: &str) {
    let v = validate_spec(text);
    assert_eq!(
        v.ok,
        !v.schema.iter().any(|d| d.is_error()),
        "ok disagrees with schema for {text:?}"
    );
    assert_eq!(v.diagnostics.len(), v.schema.len() + v.lint.len());
    if v.ok {
        assert!(v.spec.is_some(), "ok without a spec for {text:?}");
    }
    let lines = text.lines().count() as u32 + 1;
    for d in &v.diagnostics {
        if let Some(l) = d.line {
            assert!(
                l >= 1 && l <= lines.max(1) + 1,
                "line {l} out of range for {text:?}"
            );
        }
    }
}

#[test]
fn random_yaml_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..4000 {
        let text = random_yaml(&mut rng);
        assert_consistent(&text);
    }
}

#[test]
fn mutated_real_specs_never_panic() {
    let root = example_root();
    let specs: Vec<String> = ["order-lookup", "enrich-order"]
        .iter()
        .map(|w| {
            std::fs::read_to_string(root.join(format!("workflows/{w}/workflow.yaml")))
                .expect("example spec")
        })
        .chain(
            std::fs::read_dir(archmax_tests::repo_root().join("tests/corpus"))
                .expect("corpus")
                .filter_map(Result::ok)
                .filter_map(|e| std::fs::read_to_string(e.path()).ok()),
        )
        .collect();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for i in 0..3000 {
        let base = &specs[rng.below(specs.len())];
        let text = mutate(&mut rng, base);
        assert_consistent(&text);
        if i % 10 == 0 {
            // The whole workspace pass, in memory, over the mutated spec.
            let mut files = MemFiles::new();
            files.insert("workflows/m/workflow.yaml", text.clone());
            files.insert(
                "workflows/m/tests/a.test.yaml",
                mutate(
                    &mut rng,
                    "title: t\ndescription: d\nsteps:\n  - send: hi\n  - reachedState: a\n",
                ),
            );
            files.insert(
                "skills/s/SKILL.md",
                mutate(&mut rng, "---\nname: s\ndescription: d\n---\n"),
            );
            let r = validate_workflow(&files, &ValidateOptions::new("m"));
            assert_eq!(r.valid, !r.diagnostics.iter().any(|d| d.is_error()));
        }
    }
}

#[test]
fn pathological_documents_are_errors_not_crashes() {
    let deep_flow = "[".repeat(100_000);
    let deep_block: String = (0..5_000)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    let long_line = format!(
        "instructions: {}\nstates:\n  a:\n    triggers: {{ manual: }}\n",
        "x".repeat(2_000_000)
    );
    for text in [deep_flow.as_str(), deep_block.as_str()] {
        let v = validate_spec(text);
        assert!(!v.ok);
        assert!(
            v.schema[0].message.contains("not a YAML mapping")
                || v.schema[0].message.contains("deeper"),
            "{:?}",
            v.schema[0]
        );
    }
    assert!(validate_spec(&long_line).ok);
}
