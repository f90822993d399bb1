//! Typed trigger signatures (validation digest §8): normalisation of a
//! `requires`/`returns` list, its JSON Schema, and value conformance.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::jsfmt::{js_length, js_number_of, js_trim, json_kind, json_string};

/// The signature types, in the documented order.
pub const SIGNATURE_TYPES: [&str; 8] = [
    "string",
    "integer",
    "number",
    "boolean",
    "date",
    "date-time",
    "object",
    "array",
];

/// One normalised signature entry: a name, an optional valid type and an
/// optional non-blank (trimmed) description.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureEntry {
    /// The variable name as declared.
    pub name: String,
    /// One of [`SIGNATURE_TYPES`]; `None` means untyped.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
    /// The trimmed description, when declared and non-blank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Normalises a raw `requires`/`returns` value. Total: a non-list yields no
/// entries; a bare string is an untyped entry; an object keeps `type` only if
/// it is one of [`SIGNATURE_TYPES`] and `description` only if non-blank
/// (trimmed); items that are neither, or objects without a string `name`,
/// are skipped.
pub fn normalize_signature(list: &Value) -> Vec<SignatureEntry> {
    let Value::Array(items) = list else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item {
            Value::String(name) => Some(SignatureEntry {
                name: name.clone(),
                ty: None,
                description: None,
            }),
            Value::Object(map) => {
                let name = map.get("name")?.as_str()?.to_string();
                let ty = map
                    .get("type")
                    .and_then(Value::as_str)
                    .filter(|t| SIGNATURE_TYPES.contains(t))
                    .map(str::to_string);
                let description = map
                    .get("description")
                    .and_then(Value::as_str)
                    .map(js_trim)
                    .filter(|d| !d.is_empty())
                    .map(str::to_string);
                Some(SignatureEntry {
                    name,
                    ty,
                    description,
                })
            }
            _ => None,
        })
        .collect()
}

/// The JSON Schema of a signature: `{type:"object", properties, required}`
/// with one property per entry (`date`/`date-time` as a string with a
/// `format`, untyped as `{}`, the description copied) and every name required.
pub fn signature_json_schema(entries: &[SignatureEntry]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for entry in entries {
        let mut prop = Map::new();
        match entry.ty.as_deref() {
            Some(format @ ("date" | "date-time")) => {
                prop.insert("type".into(), json!("string"));
                prop.insert("format".into(), json!(format));
            }
            Some(t) => {
                prop.insert("type".into(), json!(t));
            }
            None => {}
        }
        if let Some(d) = &entry.description {
            prop.insert("description".into(), json!(d));
        }
        properties.insert(entry.name.clone(), Value::Object(prop));
        required.push(Value::String(entry.name.clone()));
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), Value::Array(required));
    Value::Object(schema)
}

/// Whether a signature issue is a missing value or a non-conforming one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueKind {
    /// The value is not set.
    Missing,
    /// The value is set but does not conform to the declared type.
    Invalid,
}

/// One finding of [`signature_value_issues`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureIssue {
    /// `missing` or `invalid`.
    pub kind: IssueKind,
    /// The entry's name.
    pub name: String,
    /// The declared type (only for `invalid`).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
    /// The JSON kind that arrived (only for `invalid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// The human-readable message.
    pub message: String,
}

/// The phrase naming what a type requires, as used in `'<n>' must be <phrase>`.
pub fn type_phrase(ty: &str) -> &'static str {
    match ty {
        "string" => "a string",
        "integer" => "an integer (a number with no fractional part)",
        "number" => "a number",
        "boolean" => "a boolean (true or false)",
        "date" => "a date (an RFC 3339 full-date, YYYY-MM-DD, naming a real calendar day)",
        "date-time" => {
            "a date-time (an RFC 3339 date-time with an offset, e.g. 2026-03-01T09:30:00Z)"
        }
        "object" => "an object",
        "array" => "an array",
        _ => "a value",
    }
}

/// What kind of JSON value `v` is, as error messages name it (`a string`, `an object`, …).
pub fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// How an arriving value is described in an `invalid` message.
pub fn arrival_text(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::String(s) if js_length(s) <= 40 => format!("a string ({})", json_string(s)),
        Value::String(_) => "a string".to_string(),
        Value::Number(n) => format!("a number ({})", js_number_of(n)),
        Value::Bool(_) => "a boolean".to_string(),
        Value::Object(_) => "an object".to_string(),
        Value::Array(_) => "an array".to_string(),
    }
}

/// True when `v` conforms to the signature type `ty` (no coercion; typed
/// entries never accept `null`). An unknown type accepts anything.
pub fn conforms(ty: &str, v: &Value) -> bool {
    match ty {
        "string" => v.is_string(),
        "integer" => v
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0),
        "number" => v.as_f64().is_some_and(f64::is_finite),
        "boolean" => v.is_boolean(),
        "date" => v.as_str().is_some_and(is_full_date),
        "date-time" => v.as_str().is_some_and(is_date_time),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => true,
    }
}

fn is_leap(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Parses exactly `n` ASCII digits at the start of `s`.
fn digits(s: &[u8], n: usize) -> Option<u32> {
    let part = s.get(..n)?;
    part.iter().try_fold(0u32, |acc, b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

/// `YYYY-MM-DD` naming a real day; returns the rest of the input.
fn parse_date(s: &[u8]) -> Option<&[u8]> {
    let year = digits(s, 4)?;
    if s.get(4) != Some(&b'-') {
        return None;
    }
    let month = digits(s.get(5..)?, 2)?;
    if s.get(7) != Some(&b'-') {
        return None;
    }
    let day = digits(s.get(8..)?, 2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    s.get(10..)
}

/// True for an RFC 3339 full-date `YYYY-MM-DD` naming a real calendar day.
pub fn is_full_date(s: &str) -> bool {
    parse_date(s.as_bytes()).is_some_and(<[u8]>::is_empty)
}

/// True for `YYYY-MM-DD[Tt]hh:mm:ss(.frac)?(Z|z|±hh:mm)` with a real day,
/// hour ≤ 23, minute ≤ 59, second ≤ 60 and an offset of hour ≤ 23, minute ≤ 59.
pub fn is_date_time(s: &str) -> bool {
    check_date_time(s.as_bytes()).is_some()
}

fn check_date_time(s: &[u8]) -> Option<()> {
    let rest = parse_date(s)?;
    if !matches!(rest.first(), Some(b'T' | b't')) {
        return None;
    }
    let hour = digits(rest.get(1..)?, 2)?;
    if rest.get(3) != Some(&b':') {
        return None;
    }
    let minute = digits(rest.get(4..)?, 2)?;
    if rest.get(6) != Some(&b':') {
        return None;
    }
    let second = digits(rest.get(7..)?, 2)?;
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = rest.get(9..)?;
    if rest.first() == Some(&b'.') {
        let frac_len = rest
            .iter()
            .skip(1)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if frac_len == 0 {
            return None;
        }
        rest = rest.get(1 + frac_len..)?;
    }
    match rest.first() {
        Some(b'Z' | b'z') if rest.len() == 1 => Some(()),
        Some(b'+' | b'-') if rest.len() == 6 => {
            let oh = digits(rest.get(1..)?, 2)?;
            if rest.get(3) != Some(&b':') {
                return None;
            }
            let om = digits(rest.get(4..)?, 2)?;
            (oh <= 23 && om <= 59).then_some(())
        }
        _ => None,
    }
}

/// Checks `values` against `entries`: at most one issue per entry, in
/// declaration order. A key absent from `values` is `missing`; a typed entry
/// whose value does not conform is `invalid`; untyped entries accept any
/// present value, including `null`.
pub fn signature_value_issues(
    entries: &[SignatureEntry],
    values: &Map<String, Value>,
) -> Vec<SignatureIssue> {
    let mut issues = Vec::new();
    for entry in entries {
        let Some(value) = values.get(&entry.name) else {
            issues.push(SignatureIssue {
                kind: IssueKind::Missing,
                name: entry.name.clone(),
                ty: None,
                found: None,
                message: format!("'{}' is not set", entry.name),
            });
            continue;
        };
        let Some(ty) = entry.ty.as_deref() else {
            continue;
        };
        if conforms(ty, value) {
            continue;
        }
        issues.push(SignatureIssue {
            kind: IssueKind::Invalid,
            name: entry.name.clone(),
            ty: Some(ty.to_string()),
            found: Some(json_kind(value).to_string()),
            message: format!(
                "'{}' must be {}, but {} arrived",
                entry.name,
                type_phrase(ty),
                arrival_text(value)
            ),
        });
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, ty: Option<&str>) -> SignatureEntry {
        SignatureEntry {
            name: name.to_string(),
            ty: ty.map(str::to_string),
            description: None,
        }
    }

    fn values(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn normalizes() {
        let list = json!([
            "a",
            {"name": "b", "type": "integer", "description": "  The b.  "},
            {"name": "c", "type": "bogus", "description": "   "},
            {"type": "string"},
            {"name": 3},
            42,
            null,
            ["x"]
        ]);
        let got = normalize_signature(&list);
        assert_eq!(
            got,
            vec![
                entry("a", None),
                SignatureEntry {
                    name: "b".into(),
                    ty: Some("integer".into()),
                    description: Some("The b.".into())
                },
                entry("c", None),
            ]
        );
        assert!(normalize_signature(&json!({"a": 1})).is_empty());
        assert!(normalize_signature(&json!(null)).is_empty());
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            r#"[{"name":"a"},{"name":"b","type":"integer","description":"The b."},{"name":"c"}]"#
        );
    }

    #[test]
    fn json_schema() {
        assert_eq!(
            signature_json_schema(&[]).to_string(),
            r#"{"type":"object","properties":{},"required":[]}"#
        );
        let entries = vec![
            entry("a", None),
            SignatureEntry {
                name: "d".into(),
                ty: Some("date".into()),
                description: Some("When".into()),
            },
            entry("t", Some("date-time")),
            entry("n", Some("integer")),
        ];
        assert_eq!(
            signature_json_schema(&entries).to_string(),
            r#"{"type":"object","properties":{"a":{},"d":{"type":"string","format":"date","description":"When"},"t":{"type":"string","format":"date-time"},"n":{"type":"integer"}},"required":["a","d","t","n"]}"#
        );
    }

    #[test]
    fn missing_and_untyped() {
        let entries = vec![
            entry("a", None),
            entry("b", None),
            entry("c", Some("string")),
        ];
        let issues = signature_value_issues(&entries, &values(json!({"b": null})));
        assert_eq!(issues.len(), 2);
        assert_eq!(issues[0].message, "'a' is not set");
        assert_eq!(issues[1].message, "'c' is not set");
        assert_eq!(
            serde_json::to_string(&issues[0]).unwrap(),
            r#"{"kind":"missing","name":"a","message":"'a' is not set"}"#
        );
    }

    fn message(ty: &str, v: Value) -> Option<String> {
        let entries = vec![entry("n", Some(ty))];
        let mut map = Map::new();
        map.insert("n".into(), v);
        signature_value_issues(&entries, &map)
            .into_iter()
            .next()
            .map(|i| i.message)
    }

    #[test]
    fn invalid_messages() {
        assert_eq!(
            message("integer", json!("4")).as_deref(),
            Some(
                "'n' must be an integer (a number with no fractional part), but a string (\"4\") arrived"
            )
        );
        assert_eq!(
            message("integer", json!(2.5)).as_deref(),
            Some(
                "'n' must be an integer (a number with no fractional part), but a number (2.5) arrived"
            )
        );
        assert_eq!(
            message("string", json!(null)).as_deref(),
            Some("'n' must be a string, but null arrived")
        );
        assert_eq!(
            message("number", json!(true)).as_deref(),
            Some("'n' must be a number, but a boolean arrived")
        );
        assert_eq!(
            message("boolean", json!("true")).as_deref(),
            Some("'n' must be a boolean (true or false), but a string (\"true\") arrived")
        );
        assert_eq!(
            message("date", json!("1900-02-29")).as_deref(),
            Some(
                "'n' must be a date (an RFC 3339 full-date, YYYY-MM-DD, naming a real calendar day), but a string (\"1900-02-29\") arrived"
            )
        );
        assert_eq!(
            message("date-time", json!("2026-03-01 09:30:00Z")).as_deref(),
            Some(
                "'n' must be a date-time (an RFC 3339 date-time with an offset, e.g. 2026-03-01T09:30:00Z), but a string (\"2026-03-01 09:30:00Z\") arrived"
            )
        );
        assert_eq!(
            message("object", json!([])).as_deref(),
            Some("'n' must be an object, but an array arrived")
        );
        assert_eq!(
            message("array", json!({})).as_deref(),
            Some("'n' must be an array, but an object arrived")
        );
        let long = "x".repeat(41);
        assert_eq!(
            message("number", json!(long)).as_deref(),
            Some("'n' must be a number, but a string arrived")
        );
        let forty = "x".repeat(40);
        assert_eq!(
            message("number", json!(forty)),
            Some(format!(
                "'n' must be a number, but a string (\"{forty}\") arrived"
            ))
        );
        assert_eq!(
            message("string", json!(1e21)).as_deref(),
            Some("'n' must be a string, but a number (1e+21) arrived")
        );
        assert_eq!(
            message("string", json!(3.0)).as_deref(),
            Some("'n' must be a string, but a number (3) arrived")
        );
    }

    #[test]
    fn invalid_issue_shape() {
        let entries = vec![entry("n", Some("integer"))];
        let issues = signature_value_issues(&entries, &values(json!({"n": "4"})));
        assert_eq!(
            serde_json::to_string(&issues).unwrap(),
            r#"[{"kind":"invalid","name":"n","type":"integer","found":"string","message":"'n' must be an integer (a number with no fractional part), but a string (\"4\") arrived"}]"#
        );
    }

    #[test]
    fn conformance() {
        assert!(conforms("string", &json!("")));
        assert!(conforms("integer", &json!(-0.0)));
        assert!(conforms("integer", &json!(3.0)));
        assert!(conforms("integer", &json!(12)));
        assert!(!conforms("integer", &json!(1.5)));
        assert!(conforms("number", &json!(1.5)));
        assert!(!conforms("number", &json!("1")));
        assert!(conforms("boolean", &json!(false)));
        assert!(!conforms("boolean", &json!(0)));
        assert!(conforms("object", &json!({})));
        assert!(!conforms("object", &json!(null)));
        assert!(conforms("array", &json!([])));
        for ty in SIGNATURE_TYPES {
            assert!(!conforms(ty, &json!(null)), "{ty}");
        }
    }

    #[test]
    fn dates() {
        for ok in [
            "2000-02-29",
            "2024-02-29",
            "2026-12-31",
            "0000-01-01",
            "2026-04-30",
        ] {
            assert!(is_full_date(ok), "{ok}");
        }
        for bad in [
            "1900-02-29",
            "2023-02-29",
            "2026-04-31",
            "2026-13-01",
            "2026-00-10",
            "2026-01-00",
            "2026-1-01",
            "26-01-01",
            "2026-01-01 ",
            "2026-01-01\n",
            "2026/01/01",
            "２０２６-01-01",
        ] {
            assert!(!is_full_date(bad), "{bad:?}");
        }
    }

    #[test]
    fn date_times() {
        for ok in [
            "2026-03-01T09:30:00Z",
            "2026-03-01t09:30:00z",
            "2026-03-01T23:59:60+23:59",
            "2026-03-01T09:30:00.123456-05:00",
            "2000-02-29T00:00:00+00:00",
        ] {
            assert!(is_date_time(ok), "{ok}");
        }
        for bad in [
            "2026-03-01 09:30:00Z",
            "2026-03-01T09:30:00",
            "2026-03-01T24:00:00Z",
            "2026-03-01T09:60:00Z",
            "2026-03-01T09:30:61Z",
            "2026-03-01T09:30:00+24:00",
            "2026-03-01T09:30:00+05:60",
            "2026-03-01T09:30:00.Z",
            "2026-03-01T09:30Z",
            "1900-02-29T00:00:00Z",
            "2026-03-01T09:30:00+0500",
            "2026-03-01T09:30:00ZZ",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }
}

/// A trigger's signature: what a caller reads about an entry.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export, optional_fields)]
pub struct TriggerSignature {
    /// What calling the entry does (trimmed; absent when blank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Inputs a firing must supply.
    #[ts(type = "Array<{ name: string, type?: string, description?: string }>")]
    pub requires: Vec<SignatureEntry>,
    /// Outputs the run owes its caller.
    #[ts(type = "Array<{ name: string, type?: string, description?: string }>")]
    pub returns: Vec<SignatureEntry>,
}

/// The declaration of trigger `id` in a parsed spec (as JSON); when two states
/// declare it, the later one wins. `Some(None)` = declared with a null value.
fn trigger_declaration<'a>(spec: &'a Value, id: &str) -> Option<Option<&'a Value>> {
    let states = spec.get("states")?.as_object()?;
    states
        .values()
        .filter_map(|s| s.get("triggers")?.as_object()?.get(id))
        .next_back()
        .map(|d| if d.is_null() { None } else { Some(d) })
}

/// The signature of trigger `id`, or `None` when no state declares it.
pub fn signature_for_trigger(spec: &Value, id: &str) -> Option<TriggerSignature> {
    let decl = trigger_declaration(spec, id)?;
    let empty = Value::Null;
    let decl = decl.unwrap_or(&empty);
    let description = decl
        .get("description")
        .and_then(Value::as_str)
        .map(js_trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    Some(TriggerSignature {
        description,
        requires: normalize_signature(decl.get("requires").unwrap_or(&empty)),
        returns: normalize_signature(decl.get("returns").unwrap_or(&empty)),
    })
}

/// The session id a firing of `trigger_id` belongs to: its declaration's
/// `session:` path read over `variables`; `None` when nothing resolves.
pub fn session_id_for_trigger(spec: &Value, trigger_id: &str, variables: &Value) -> Option<String> {
    let path = trigger_declaration(spec, trigger_id)??
        .get("session")?
        .as_str()?;
    let segments: Vec<String> = js_trim(path).split('.').map(str::to_string).collect();
    crate::grammar::resolve_path(variables, &segments)
        .and_then(crate::grammar::session_id_from_value)
}

/// Where a firing of trigger `id` carries its words: the declaration's `message:` path,
/// or `false` for a trigger whose firings carry none. `None` when the trigger is not
/// declared or declares no `message:`. Host-resolved: the runtime never acts on it.
pub fn message_path_for_trigger(spec: &Value, id: &str) -> Option<Value> {
    trigger_declaration(spec, id)??
        .get("message")
        .filter(|m| m.is_string() || m.as_bool() == Some(false))
        .cloned()
}

/// The access connection trigger `id` names (`connection:`), for the host. `None` when
/// the trigger is not declared or names none.
pub fn connection_for_trigger(spec: &Value, id: &str) -> Option<String> {
    trigger_declaration(spec, id)??
        .get("connection")?
        .as_str()
        .map(str::to_string)
}

#[cfg(test)]
mod trigger_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_later_state_wins_and_null_declarations_are_empty() {
        let spec = json!({"states": {
            "a": {"triggers": {"manual": null, "mail": {"description": "  first  "}}},
            "b": {"triggers": {"mail": {"description": " Mail in. ", "session": "msg.thread",
                   "requires": ["x", {"name": "due", "type": "date"}]}}}
        }});
        let manual = signature_for_trigger(&spec, "manual").expect("declared");
        assert_eq!(
            manual,
            TriggerSignature {
                description: None,
                requires: vec![],
                returns: vec![]
            }
        );
        let mail = signature_for_trigger(&spec, "mail").expect("declared");
        assert_eq!(mail.description.as_deref(), Some("Mail in."));
        assert_eq!(mail.requires.len(), 2);
        assert_eq!(mail.requires[1].ty.as_deref(), Some("date"));
        assert!(signature_for_trigger(&spec, "nope").is_none());
        let vars = json!({"msg": {"thread": "T-9"}});
        assert_eq!(
            session_id_for_trigger(&spec, "mail", &vars).as_deref(),
            Some("T-9")
        );
        assert_eq!(session_id_for_trigger(&spec, "mail", &json!({})), None);
        assert_eq!(message_path_for_trigger(&spec, "manual"), None);
        assert_eq!(connection_for_trigger(&spec, "nope"), None);
        assert_eq!(session_id_for_trigger(&spec, "manual", &vars), None);
    }
}

#[cfg(test)]
mod host_key_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn message_and_connection_are_read_back_as_declared() {
        let spec = json!({"states": {"intake": {"triggers": {
            "slack-message": { "session": "triggers.-1.threadId", "message": "triggers.-1.text", "connection": "acme-slack", "piece": "slack" },
            "tick": { "message": false },
            "manual": null
        }}}});
        assert_eq!(
            message_path_for_trigger(&spec, "slack-message"),
            Some(json!("triggers.-1.text"))
        );
        assert_eq!(
            connection_for_trigger(&spec, "slack-message").as_deref(),
            Some("acme-slack")
        );
        assert_eq!(message_path_for_trigger(&spec, "tick"), Some(json!(false)));
        assert_eq!(connection_for_trigger(&spec, "tick"), None);
        assert_eq!(message_path_for_trigger(&spec, "manual"), None);
        assert_eq!(message_path_for_trigger(&spec, "undeclared"), None);
    }
}
