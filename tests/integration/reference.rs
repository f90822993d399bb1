//! The generated language reference (`docs/workflow-reference.md`) and JSON Schema
//! (`workflow.schema.json`): the table they are written from holds exactly the
//! keys the shape checker accepts, the committed files are what the table writes,
//! and the schema agrees with the parser on every example and corpus document.
//! The case-file schema (`case.schema.json`) is checked the same way against the case
//! checker. `BLESS=1 cargo test -p archmax-tests reference` rewrites the three files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use archmax_spec::reference::{KEYS, OBJECT_DOCS, OBJECTS, SCHEMA_CANNOT_EXPRESS};
use archmax_spec::validate_spec;
use archmax_tests::repo_root;

#[test]
fn the_table_names_every_key_the_parser_accepts_and_no_other() {
    let accepted: BTreeSet<(&str, &str)> = OBJECTS
        .iter()
        .flat_map(|(o, keys)| keys.iter().map(move |k| (*o, *k)))
        .collect();
    let documented: BTreeSet<(&str, &str)> = KEYS.iter().map(|d| (d.object, d.key)).collect();
    let missing: Vec<_> = accepted.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&accepted).collect();
    assert!(
        missing.is_empty(),
        "accepted but not in the reference: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "in the reference but not accepted: {extra:?}"
    );
    assert_eq!(KEYS.len(), documented.len(), "a key is listed twice");
    let objects: Vec<&str> = OBJECTS.iter().map(|(o, _)| *o).collect();
    let sections: Vec<&str> = OBJECT_DOCS.iter().map(|(o, _, _)| *o).collect();
    assert_eq!(objects, sections, "every object has one section, in order");
    for d in KEYS {
        let parsed: Result<serde_json::Value, _> = serde_json::from_str(d.schema);
        assert!(
            parsed.is_ok_and(|v| v.is_object()),
            "{}.{}: bad schema fragment",
            d.object,
            d.key
        );
    }
}

fn check_generated(rel: &str, actual: &str) {
    let path = repo_root().join(rel);
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, actual).expect("write generated file");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == actual,
        "{rel} is not what the reference table writes: run BLESS=1 cargo test -p archmax-tests reference"
    );
}

fn schema_text() -> String {
    let mut s =
        serde_json::to_string_pretty(&archmax_spec::reference::json_schema()).expect("json");
    s.push('\n');
    s
}

#[test]
fn the_committed_reference_is_what_the_table_writes() {
    check_generated(
        "docs/workflow-reference.md",
        &archmax_spec::reference::markdown(),
    );
}

#[test]
fn the_committed_schema_is_what_the_table_writes() {
    check_generated("workflow.schema.json", &schema_text());
}

fn validator() -> jsonschema::Validator {
    let schema: serde_json::Value = serde_json::from_str(&schema_text()).expect("schema json");
    assert!(
        jsonschema::meta::is_valid(&schema),
        "not a valid 2020-12 schema"
    );
    jsonschema::draft202012::new(&schema).expect("schema compiles")
}

/// `Some(passes)` for a YAML mapping, `None` when the text is no single YAML document.
fn schema_accepts(v: &jsonschema::Validator, text: &str) -> Option<bool> {
    let tree = archmax_spec::yaml::parse(text).ok().flatten()?;
    Some(v.is_valid(&tree.to_json()))
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "workflow.yaml")
            || p.parent().is_some_and(|d| d.ends_with("corpus-lint"))
                && p.extension().is_some_and(|x| x == "yaml")
        {
            out.push(p);
        }
    }
}

#[test]
fn every_valid_workflow_passes_the_schema() {
    let v = validator();
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["examples", "tests/corpus-lint", "crates/cli/templates/init"] {
        yaml_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() >= 25,
        "found only {} valid workflows",
        files.len()
    );
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        assert!(
            validate_spec(&text).ok,
            "{}: not a valid workflow",
            f.display()
        );
        let tree = archmax_spec::yaml::parse(&text)
            .ok()
            .flatten()
            .expect("mapping");
        let errors: Vec<String> = v
            .iter_errors(&tree.to_json())
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", f.display());
    }
}

#[test]
fn the_schema_rejects_the_invalid_corpus_except_what_it_cannot_express() {
    let v = validator();
    let dir = repo_root().join("tests/corpus");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    names.sort();
    assert!(names.len() >= 80);
    let mut accepted = Vec::new();
    for n in &names {
        let text = std::fs::read_to_string(dir.join(n)).expect("read");
        if schema_accepts(&v, &text) == Some(true) {
            accepted.push(n.as_str());
        }
    }
    let listed: Vec<&str> = SCHEMA_CANNOT_EXPRESS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        accepted, listed,
        "the corpus documents the schema accepts must be exactly SCHEMA_CANNOT_EXPRESS"
    );
}

#[test]
fn the_case_schema_names_every_key_and_step_the_case_checker_knows() {
    use archmax_spec::case::{ACTIONS, ASSERTIONS, TOP_KEYS};
    use archmax_spec::reference::{CASE_KEYS, STEP_KEYS};
    let keys: Vec<&str> = CASE_KEYS.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, TOP_KEYS);
    let steps: Vec<&str> = STEP_KEYS.iter().map(|(k, _)| *k).collect();
    let known: Vec<&str> = ACTIONS.iter().chain(ASSERTIONS).copied().collect();
    assert_eq!(steps, known);
    for (k, s) in CASE_KEYS.iter().chain(STEP_KEYS) {
        let parsed: Result<serde_json::Value, _> = serde_json::from_str(s);
        assert!(
            parsed.is_ok_and(|v| v.is_object()),
            "{k}: bad schema fragment"
        );
    }
}

fn case_text() -> String {
    let mut s =
        serde_json::to_string_pretty(&archmax_spec::reference::case_json_schema()).expect("json");
    s.push('\n');
    s
}

#[test]
fn the_committed_case_schema_is_what_the_table_writes() {
    check_generated("case.schema.json", &case_text());
}

fn case_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            case_files(&p, out);
        } else if p.to_string_lossy().ends_with(".test.yaml") {
            out.push(p);
        }
    }
}

#[test]
fn case_files_pass_the_case_schema_exactly_when_the_case_checker_accepts_their_shape() {
    let schema: serde_json::Value = serde_json::from_str(&case_text()).expect("json");
    assert!(jsonschema::meta::is_valid(&schema));
    let v = jsonschema::draft202012::new(&schema).expect("compiles");
    let mut files = Vec::new();
    for dir in ["examples", "crates/cli/templates/init"] {
        case_files(&repo_root().join(dir), &mut files);
    }
    assert!(files.len() >= 3, "found {} case files", files.len());
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        assert!(
            archmax_spec::case::check_case(&text).is_ok(),
            "{}",
            f.display()
        );
        assert_eq!(schema_accepts(&v, &text), Some(true), "{}", f.display());
    }
    let ok = "title: t\ndescription: d\nsteps:\n  - send: hi\n";
    assert_eq!(schema_accepts(&v, ok), Some(true));
    for bad in [
        "title: t\ndescription: d\nsteps:\n  - send: hi\nextra: 1\n",
        "title: t\nsteps:\n  - send: hi\n",
        "title: t\ndescription: d\nsteps:\n  - send: hi\n    succeeded: true\n",
        "title: t\ndescription: d\nsteps:\n  - send: hi\n  - landed: done\n",
        "title: t\ndescription: d\nsteps:\n  - send: hi\n  - succeeded: yes please\n",
        "title: t\ndescription: d\nsteps:\n  - decide: { comment: ok }\n",
        "title: t\ndescription: d\nsteps:\n  - send: hi\n  - grade: { closedQA: good, atLeast: 2 }\n",
        "title: t\ndescription: d\nvariables: { Order: 1 }\nsteps:\n  - send: hi\n",
    ] {
        assert!(
            archmax_spec::case::check_case(bad).is_err(),
            "the checker accepts {bad}"
        );
        assert_eq!(
            schema_accepts(&v, bad),
            Some(false),
            "the schema accepts {bad}"
        );
    }
}

/// The texts the reference quotes in backticks with a space in them are messages: each
/// piece between `…` must be printed by the spec crate, so a reworded message fails here
/// until the reference says what the parser says.
#[test]
fn the_messages_the_reference_quotes_are_the_parsers() {
    let mut source = String::new();
    let mut dirs = vec![repo_root().join("crates/spec/src")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).expect("src").filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() && !p.ends_with("reference") {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                source.push_str(&std::fs::read_to_string(&p).expect("read"));
            }
        }
    }
    // Messages are split over source lines with `\` continuations; compare on single spaces,
    // with the escapes of string literals (quotes) and of `format!` (braces) undone.
    let flat: String = source
        .replace("\\\n", " ")
        .replace("\\\"", "\"")
        .replace("{{", "{")
        .replace("}}", "}")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut checked = 0;
    let mut unknown = Vec::new();
    for d in KEYS {
        for (i, quoted) in d.rules.split('`').enumerate() {
            if i % 2 == 0 || !quoted.contains(' ') {
                continue;
            }
            for piece in quoted.split('…').map(str::trim).filter(|p| p.len() > 3) {
                if !flat.contains(piece) {
                    unknown.push(format!("{}.{}: `{piece}`", d.object, d.key));
                }
                checked += 1;
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "quoted but never printed by the parser: {unknown:#?}"
    );
    assert!(checked >= 30, "only {checked} quoted messages");
}
