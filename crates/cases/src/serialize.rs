//! A case document written back as YAML (`serializeCaseDocument`), the inverse of
//! [`Case::to_json`](crate::Case::to_json): keys in the schema's order (title, description,
//! skip, trigger, variables, workspace, mocks, steps), a multi-line string as a literal
//! block (never folded), any string that would read as something else quoted.
//!
//! ```
//! use serde_json::json;
//! let doc = json!({ "title": "T", "description": "D.", "steps": [{ "send": "yes" }] });
//! let text = archmax_cases::serialize_case(&doc).unwrap();
//! assert_eq!(text, "title: T\ndescription: D.\nsteps:\n  - send: \"yes\"\n");
//! ```

use std::borrow::Cow;

use saphyr::{Mapping, Scalar, ScalarStyle, Yaml, YamlEmitter};
use serde_json::{Map, Value};

use crate::case::parse_case;

/// The top-level keys, in the order they are written: the schema's own.
const ORDER: &[&str] = archmax_spec::case::TOP_KEYS;

/// Keys of a document as read that are not part of the file (`discoverCases`' own).
const NOT_WRITTEN: [&str; 2] = ["file", "id"];

/// The YAML text of case document `doc` (mocks as `{ name | tool, whenInput?, result }`).
/// `Err` names the problem: a document that is not an object, or one whose text is not a
/// valid case (the case parser's message, under `<case>`).
pub fn serialize_case(doc: &Value) -> Result<String, String> {
    let Value::Object(doc) = doc else {
        return Err(format!(
            "<case>: a case document is an object, got {}",
            archmax_spec::signature::value_kind(doc)
        ));
    };
    let mut root = Mapping::new();
    let known = ORDER.iter().filter_map(|k| doc.get(*k).map(|v| (*k, v)));
    // Keys the schema does not know are written after, for the parser to refuse by name.
    let unknown = doc
        .iter()
        .filter(|(k, _)| !ORDER.contains(&k.as_str()) && !NOT_WRITTEN.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), v));
    for (key, value) in known.chain(unknown) {
        if value.is_null() && key != "title" && key != "description" {
            continue;
        }
        let node = match key {
            "mocks" => mocks(value),
            _ => yaml(value),
        };
        root.insert(string(key), node);
    }
    let mut out = String::new();
    let mut emitter = YamlEmitter::new(&mut out);
    emitter.multiline(true);
    emitter
        .dump(&Yaml::Mapping(root))
        .map_err(|e| format!("<case>: cannot write the YAML: {e}"))?;
    let mut text = out
        .strip_prefix("---\n")
        .unwrap_or(&out)
        .trim_end_matches("...")
        .to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    parse_case("<case>", &text)?;
    Ok(text)
}

/// `mocks` as the file spells them: `tool:` for the document's `name`.
fn mocks(value: &Value) -> Yaml<'static> {
    let Value::Array(list) = value else {
        return yaml(value);
    };
    Yaml::Sequence(
        list.iter()
            .map(|mock| match mock {
                Value::Object(m) => {
                    let mut renamed = Map::new();
                    if let Some(name) = m.get("name").or_else(|| m.get("tool")) {
                        renamed.insert("tool".to_string(), name.clone());
                    }
                    for (k, v) in m {
                        if k != "name" && k != "tool" {
                            renamed.insert(k.clone(), v.clone());
                        }
                    }
                    yaml(&Value::Object(renamed))
                }
                other => yaml(other),
            })
            .collect(),
    )
}

fn string(s: &str) -> Yaml<'static> {
    Yaml::Value(Scalar::String(Cow::Owned(s.to_string())))
}

/// A JSON value as a YAML node; numbers in JSON's spelling, which the core schema reads back.
fn yaml(value: &Value) -> Yaml<'static> {
    match value {
        Value::Null => Yaml::Value(Scalar::Null),
        Value::Bool(b) => Yaml::Value(Scalar::Boolean(*b)),
        Value::Number(n) => {
            Yaml::Representation(Cow::Owned(n.to_string()), ScalarStyle::Plain, None)
        }
        Value::String(s) => string(s),
        Value::Array(items) => Yaml::Sequence(items.iter().map(yaml).collect()),
        Value::Object(m) => {
            let mut out = Mapping::new();
            for (k, v) in m {
                out.insert(string(k), yaml(v));
            }
            Yaml::Mapping(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every case file of the repository: the example's and the fixtures'.
    fn case_files() -> Vec<std::path::PathBuf> {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().to_string();
                if p.is_dir() {
                    if !matches!(
                        name.as_str(),
                        "node_modules" | "target" | ".git" | "sessions"
                    ) {
                        walk(&p, out);
                    }
                } else if name.ends_with(".test.yaml") || name.ends_with(".test.yml") {
                    out.push(p);
                }
            }
        }
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut out = Vec::new();
        for dir in ["examples", "tests", "crates", "__test__"] {
            walk(&repo.join(dir), &mut out);
        }
        out.sort();
        out
    }

    fn round_trip(doc: &Value) -> Value {
        let text = match serialize_case(doc) {
            Ok(t) => t,
            Err(e) => panic!("{e}\n{doc}"),
        };
        match parse_case("<case>", &text) {
            Ok(c) => c.to_json(),
            Err(e) => panic!("{e}\n{text}"),
        }
    }

    #[test]
    fn every_case_file_of_the_repository_reads_back_as_it_was_read() {
        let files = case_files();
        assert!(files.len() >= 4, "{files:?}");
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let Ok(case) = parse_case("f", &text) else {
                continue;
            };
            let doc = case.to_json();
            assert_eq!(round_trip(&doc), doc, "{}", path.display());
        }
    }

    #[test]
    fn strings_that_would_read_as_something_else_are_quoted() {
        let tricky = [
            "yes",
            "no",
            "true",
            "123",
            "1.5e3",
            "0x1F",
            ".inf",
            "a: b",
            "  leading",
            "trailing  ",
            "# not a comment",
            "a #b",
            "first line\nsecond line\n",
            "two\nlines",
            "trailing newlines\n\n",
            "  indented\nblock",
            "---\nmarker",
            "héllo — ünïcode ✓ 日本",
            "",
            "null",
            "~",
            "- dash",
            "[flow]",
            "{flow}",
            "'single'",
            "\"double\"",
            "tab\there",
            "*alias",
            "&anchor",
            "!tag",
            "%directive",
            "@at",
            "`tick`",
        ];
        for s in tricky {
            // An empty `send` is not a case (the schema refuses it); the rest carry it.
            let message = if s.is_empty() { "hi" } else { s };
            let doc = json!({
                "title": "Quoting",
                "description": "Strings survive.",
                "variables": { "v": s, "n": 3, "f": 84.5, "b": false, "z": null },
                "steps": [{ "send": message }, { "reply": { "includes": s } }],
            });
            let back = round_trip(&doc);
            assert_eq!(back["steps"][0]["send"], json!(message), "{s:?}");
            assert_eq!(back["variables"], doc["variables"], "{s:?}");
            assert_eq!(back["steps"][1], doc["steps"][1], "{s:?}");
        }
    }

    #[test]
    fn keys_are_written_in_the_schema_order_and_mocks_name_their_tool() {
        let doc = json!({
            "steps": [{ "send": "hi" }, { "succeeded": true }],
            "mocks": [{ "name": "crm", "whenInput": { "id": "A" }, "result": { "ok": true } }],
            "file": "workflows/w/tests/a.test.yaml",
            "id": "a",
            "description": "Asks.",
            "title": "A case",
            "trigger": { "id": "email" },
        });
        assert_eq!(
            serialize_case(&doc).unwrap(),
            "title: A case\ndescription: Asks.\ntrigger:\n  id: email\nmocks:\n  - tool: crm\n    whenInput:\n      id: A\n    result:\n      ok: true\nsteps:\n  - send: hi\n  - succeeded: true\n"
        );
    }

    #[test]
    fn a_document_that_is_not_a_case_is_refused_naming_the_problem() {
        let e = serialize_case(&json!({ "title": "T", "steps": [] })).unwrap_err();
        assert!(e.starts_with("<case>: "), "{e}");
        assert!(e.contains("'description' is required"), "{e}");
        let e = serialize_case(
            &json!({ "title": "T", "description": "D.", "version": 1, "steps": [{ "send": "x" }] }),
        )
        .unwrap_err();
        assert!(e.contains("unknown key 'version'"), "{e}");
        assert_eq!(
            serialize_case(&json!([1])).unwrap_err(),
            "<case>: a case document is an object, got an array"
        );
    }
}
