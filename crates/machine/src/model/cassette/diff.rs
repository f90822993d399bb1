//! Where an asked request parts from the recorded ones: the nearest recorded request, and
//! the first field (a path into the request JSON) where the two differ.

use crate::model::ChatRequest;
use serde_json::Value;

use super::Exchange;

/// Characters of context shown on each side of where two texts part.
const CONTEXT: usize = 40;

/// The longest value shown whole, in characters.
const SHOWN: usize = 120;

/// The recorded exchange most like `asked` (`req` is the same request, for what is not sent):
/// the same role, session and state first, then not yet used, then the most messages equal
/// at the same place, the same model, the same tools. The first recorded on a tie.
pub(super) fn nearest(
    exchanges: &[Exchange],
    req: &ChatRequest,
    asked: &Value,
    used: &[bool],
) -> Option<usize> {
    let messages = asked.get("messages").and_then(Value::as_array);
    let score = |i: usize, e: &Exchange| {
        let equal = match (
            messages,
            e.request.get("messages").and_then(Value::as_array),
        ) {
            (Some(a), Some(b)) => a.iter().zip(b).filter(|(x, y)| x == y).count(),
            _ => 0,
        };
        (
            e.role == req.role,
            e.session == req.session,
            e.state == req.state,
            !used.get(i).copied().unwrap_or(false),
            equal,
            e.request.get("model") == asked.get("model"),
            e.request.get("tools") == asked.get("tools"),
        )
    };
    let mut best: Option<(usize, _)> = None;
    for (i, e) in exchanges.iter().enumerate() {
        let s = score(i, e);
        if best.as_ref().is_none_or(|(_, b)| s > *b) {
            best = Some((i, s));
        }
    }
    best.map(|(i, _)| i)
}

/// The first place `asked` differs from `recorded`, as text: the path, then both values.
pub(super) fn first_difference(recorded: &Value, asked: &Value) -> Option<String> {
    let (path, was, now) = walk(recorded, asked, String::new())?;
    let path = if path.is_empty() {
        "the request".to_string()
    } else {
        path
    };
    Some(match (was, now) {
        (Some(was), Some(now)) => {
            let (was, now) = shown_pair(was, now);
            format!("{path} differs: recorded {was}, asked {now}")
        }
        (None, Some(now)) => format!("{path} was not recorded: asked {}", shown(now)),
        (Some(was), None) => format!("{path} was recorded but not asked: recorded {}", shown(was)),
        (None, None) => format!("{path} differs"),
    })
}

type Difference<'a> = (String, Option<&'a Value>, Option<&'a Value>);

fn walk<'a>(recorded: &'a Value, asked: &'a Value, path: String) -> Option<Difference<'a>> {
    if recorded == asked {
        return None;
    }
    match (recorded, asked) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, was) in a {
                let at = join(&path, key);
                match b.get(key) {
                    Some(now) => {
                        if let Some(d) = walk(was, now, at) {
                            return Some(d);
                        }
                    }
                    None => return Some((at, Some(was), None)),
                }
            }
            b.iter()
                .find(|(key, _)| !a.contains_key(*key))
                .map(|(key, now)| (join(&path, key), None, Some(now)))
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let at = format!("{path}[{i}]");
                match (a.get(i), b.get(i)) {
                    (Some(was), Some(now)) => {
                        if let Some(d) = walk(was, now, at) {
                            return Some(d);
                        }
                    }
                    (was, now) => return Some((at, was, now)),
                }
            }
            None
        }
        _ => Some((path, Some(recorded), Some(asked))),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A value as the diff shows it: JSON, cut to [`SHOWN`] characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN {
        return text;
    }
    let cut: String = text.chars().take(SHOWN).collect();
    format!("{cut}…")
}

/// Two values as the diff shows them; two long texts around where they part.
fn shown_pair(was: &Value, now: &Value) -> (String, String) {
    let (Some(a), Some(b)) = (was.as_str(), now.as_str()) else {
        return (shown(was), shown(now));
    };
    if a.chars().count() <= SHOWN && b.chars().count() <= SHOWN {
        return (shown(was), shown(now));
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let same = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let from = same.saturating_sub(CONTEXT);
    let window = |text: &[char]| {
        let to = (same + CONTEXT).min(text.len());
        let mut out = String::new();
        if from > 0 {
            out.push('…');
        }
        out.extend(&text[from..to]);
        if to < text.len() {
            out.push('…');
        }
        Value::String(out).to_string()
    };
    (
        format!("{} (at character {})", window(&a), same + 1),
        window(&b),
    )
}
