//! JavaScript-compatible renderings of JSON values, used wherever a message
//! of the original TypeScript harness embeds `String(v)`, `JSON.stringify(v)`
//! or JS number formatting.

use serde_json::{Map, Value};

/// Renders `n` exactly like JavaScript's `String(n)` (Number::toString with
/// radix 10): shortest round-trip digits, `-0` as `"0"`, `NaN`, `Infinity`,
/// `-Infinity`, plain decimal notation for exponents in `[-7, 21)` and
/// `d.ddde±x` notation outside it.
pub fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_string();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if n == 0.0 {
        return "0".to_string();
    }
    let sign = if n < 0.0 { "-" } else { "" };
    // Rust's `{:e}` prints the shortest round-trip digits as `d.ddde<exp>`.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp_text) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i64 = exp_text.parse().unwrap_or(0);
    let digits = break_tie_to_even(n.abs(), digits, exp);
    let k = digits.len() as i64;
    // JS "n": the position of the decimal point relative to the digits.
    let point = exp + 1;
    let body = if k <= point && point <= 21 {
        let zeros = usize::try_from(point - k).unwrap_or(0);
        format!("{digits}{}", "0".repeat(zeros))
    } else if 0 < point && point <= 21 {
        let split = usize::try_from(point).unwrap_or(0);
        let (int_part, frac_part) = digits.split_at(split.min(digits.len()));
        format!("{int_part}.{frac_part}")
    } else if -6 < point && point <= 0 {
        let zeros = usize::try_from(-point).unwrap_or(0);
        format!("0.{}{digits}", "0".repeat(zeros))
    } else {
        let e = point - 1;
        let exp_sign = if e >= 0 { "+" } else { "-" };
        let (first, rest) = digits.split_at(1.min(digits.len()));
        if rest.is_empty() {
            format!("{first}e{exp_sign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{exp_sign}{}", e.abs())
        }
    };
    format!("{sign}{body}")
}

/// ECMAScript picks, among equally short round-tripping digit strings, the
/// one closest to the exact value and, on an exact tie, the one with an even
/// last digit. Rust's shortest formatting rounds such ties up, so when the
/// exact binary value lies exactly halfway between two `k`-digit candidates
/// that both round-trip, the even candidate is chosen here.
fn break_tie_to_even(x: f64, digits: String, exp: i64) -> String {
    // Any double's exact decimal expansion has at most 767 significant digits.
    let exact = format!("{x:.800e}");
    let Some((mantissa, exp_text)) = exact.split_once('e') else {
        return digits;
    };
    if exp_text.parse::<i64>().ok() != Some(exp) {
        return digits;
    }
    let all: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exact_digits = all.trim_end_matches('0');
    let k = digits.len();
    if exact_digits.len() != k + 1 || !exact_digits.ends_with('5') {
        return digits;
    }
    let low = exact_digits.get(..k).unwrap_or("").to_string();
    let Some(high) = decimal_increment(&low) else {
        return digits;
    };
    let round_trips = |d: &str| -> bool {
        let (first, rest) = d.split_at(1.min(d.len()));
        format!("{first}.{rest}0e{exp}").parse::<f64>().ok() == Some(x)
    };
    // b'0' is even, so an ASCII digit's parity is its byte's parity.
    let even = |d: &str| d.bytes().last().is_some_and(|b| b.is_multiple_of(2));
    let candidate = match (round_trips(&low), round_trips(&high)) {
        (true, true) => {
            if even(&low) {
                low
            } else {
                high
            }
        }
        _ => return digits,
    };
    let trimmed = candidate.trim_end_matches('0');
    if trimmed.is_empty() {
        digits
    } else {
        trimmed.to_string()
    }
}

/// Adds one to a string of decimal digits; `None` when it would carry into
/// an extra digit.
fn decimal_increment(d: &str) -> Option<String> {
    let mut bytes = d.as_bytes().to_vec();
    for b in bytes.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

/// Renders a JSON number the way JavaScript would print the double it
/// parses to (integers beyond 2^53 lose precision, as in JS).
pub fn js_number_of(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) => js_number(f),
        None => n.to_string(),
    }
}

/// Renders `v` exactly like JavaScript's `String(v)`: `null` → `"null"`,
/// booleans and numbers as JS prints them, strings as-is, arrays joined with
/// `,` (a `null` element renders as the empty string, nested arrays flatten
/// the JS way) and any object as `"[object Object]"`.
pub fn js_string_of(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Array(items) => join_array(items),
        other => array_element_string(other),
    }
}

fn join_array(items: &[Value]) -> String {
    items
        .iter()
        .map(|item| match item {
            Value::Null => String::new(),
            Value::Array(inner) => join_array(inner),
            other => array_element_string(other),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn array_element_string(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number_of(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => join_array(items),
        Value::Object(_) => "[object Object]".to_string(),
    }
}

/// Quotes and escapes `s` exactly like `JSON.stringify(s)`: only `"`, `\`
/// and control characters are escaped (`\b \f \n \r \t`, else `\u00xx` in
/// lowercase hex); `/` and non-ASCII characters are kept verbatim.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// True when `key` is a JS array index (canonical decimal `0..=2^32-2`);
/// such keys are enumerated first, in ascending numeric order, by JS objects.
fn array_index_key(key: &str) -> Option<u32> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    if n <= u64::from(u32::MAX - 1) {
        u32::try_from(n).ok()
    } else {
        None
    }
}

/// The entries of `map` in JavaScript property-enumeration order: keys that
/// are array indices first (ascending), then the other keys in insertion order.
pub fn js_ordered_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u32, &String, &Value)> = Vec::new();
    let mut named: Vec<(&String, &Value)> = Vec::new();
    for (k, v) in map {
        match array_index_key(k) {
            Some(i) => indexed.push((i, k, v)),
            None => named.push((k, v)),
        }
    }
    indexed.sort_by_key(|(i, _, _)| *i);
    indexed
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .chain(named)
        .collect()
}

/// Compact JSON exactly like `JSON.stringify(v)`: numbers printed as JS
/// prints them (`2.0` → `2`, `1e21` → `1e+21`), strings escaped as
/// [`json_string`], object keys in JS enumeration order (integer-like keys
/// first, then insertion order).
pub fn json_of(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out, js_ordered_entries);
    out
}

/// Writes compact `JSON.stringify`-style JSON, with object entries in the order
/// `order` gives (JS enumeration order for [`json_of`], sorted for the spec hash).
pub fn write_json<F>(v: &Value, out: &mut String, order: F)
where
    F: Fn(&Map<String, Value>) -> Vec<(&String, &Value)> + Copy,
{
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&js_number_of(n)),
        Value::String(s) => out.push_str(&json_string(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out, order);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in order(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&json_string(k));
                out.push(':');
                write_json(item, out, order);
            }
            out.push('}');
        }
    }
}

/// The JSON kind of `v`: `"string"`, `"number"`, `"boolean"`, `"null"`,
/// `"object"` or `"array"`.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// True for the characters JavaScript's `String.prototype.trim` and regex
/// `\s` treat as white space (WhiteSpace + LineTerminator, incl. U+FEFF but
/// not U+0085).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// JavaScript `s.trim()`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// JavaScript `s.trimStart()`.
pub fn js_trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_whitespace)
}

/// JavaScript `s.trimEnd()`.
pub fn js_trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_whitespace)
}

/// JavaScript `s.length`: the number of UTF-16 code units.
pub fn js_length(s: &str) -> usize {
    s.encode_utf16().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_like_js() {
        assert_eq!(js_number(2.0), "2");
        assert_eq!(js_number(2.5), "2.5");
        assert_eq!(js_number(-0.0), "0");
        assert_eq!(js_number(0.0), "0");
        assert_eq!(js_number(f64::NAN), "NaN");
        assert_eq!(js_number(f64::INFINITY), "Infinity");
        assert_eq!(js_number(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(js_number(1.5e-7), "1.5e-7");
        assert_eq!(js_number(1e-7), "1e-7");
        assert_eq!(js_number(1e-6), "0.000001");
        assert_eq!(js_number(1.5e-6), "0.0000015");
        assert_eq!(js_number(123456789012345680000.0), "123456789012345680000");
        assert_eq!(js_number(1.2345e22), "1.2345e+22");
        assert_eq!(js_number(-1.5), "-1.5");
        assert_eq!(js_number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(js_number(100.0), "100");
        assert_eq!(js_number(123.456), "123.456");
        assert_eq!(js_number(-1e-7), "-1e-7");
        assert_eq!(js_number(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(js_number(5e-324), "5e-324");
        assert_eq!(js_number(9007199254740993.0), "9007199254740992");
        // Exact ties between two shortest candidates go to the even digit.
        assert_eq!(
            js_number(f64::from_bits(0x430887e7db0a8d52)),
            "863103665394090.2"
        );
        assert_eq!(
            js_number(f64::from_bits(0x42d7c91c47992088)),
            "104610121278594.12"
        );
    }

    #[test]
    fn string_of_like_js() {
        assert_eq!(js_string_of(&json!(null)), "null");
        assert_eq!(js_string_of(&json!(true)), "true");
        assert_eq!(js_string_of(&json!(2.0)), "2");
        assert_eq!(js_string_of(&json!(7)), "7");
        assert_eq!(js_string_of(&json!("hi")), "hi");
        assert_eq!(js_string_of(&json!([1, 2])), "1,2");
        assert_eq!(
            js_string_of(&json!([1, [2, [3, null]], null, "x"])),
            "1,2,3,,,x"
        );
        assert_eq!(js_string_of(&json!([])), "");
        assert_eq!(js_string_of(&json!({"a": 1})), "[object Object]");
        assert_eq!(
            js_string_of(&json!([{"a": 1}, true])),
            "[object Object],true"
        );
    }

    #[test]
    fn json_like_stringify() {
        assert_eq!(json_of(&json!({"a": 1})), r#"{"a":1}"#);
        assert_eq!(
            json_of(&json!([1.0, 2.5, null, "x/y"])),
            r#"[1,2.5,null,"x/y"]"#
        );
        assert_eq!(json_of(&json!("é\u{1}\n\"\\")), "\"é\\u0001\\n\\\"\\\\\"");
        assert_eq!(
            json_of(&json!({"b": 1, "1": 2, "a": 3, "0": 4})),
            r#"{"0":4,"1":2,"b":1,"a":3}"#
        );
        assert_eq!(json_of(&json!({"01": 1, "1": 2})), r#"{"1":2,"01":1}"#);
        assert_eq!(json_of(&json!(1e21)), "1e+21");
        assert_eq!(json_of(&json!({})), "{}");
        assert_eq!(json_of(&json!("\u{7f}\u{1f}")), "\"\u{7f}\\u001f\"");
    }

    #[test]
    fn kinds() {
        assert_eq!(json_kind(&json!(null)), "null");
        assert_eq!(json_kind(&json!(false)), "boolean");
        assert_eq!(json_kind(&json!(1)), "number");
        assert_eq!(json_kind(&json!("")), "string");
        assert_eq!(json_kind(&json!([])), "array");
        assert_eq!(json_kind(&json!({})), "object");
    }

    #[test]
    fn trims_like_js() {
        assert_eq!(js_trim("\u{feff} a \u{3000}"), "a");
        assert_eq!(js_trim("\u{85}a"), "\u{85}a");
        assert_eq!(js_trim_start("  a "), "a ");
        assert_eq!(js_trim_end("  a \n"), "  a");
        assert_eq!(js_length("a😀"), 3);
    }
}
