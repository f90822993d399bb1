//! Values that must never be printed: environment values and header values of a
//! server entry, and whatever a `${VAR}` reference put into a field.

use std::fmt;

/// A string the crate never prints: its `Debug` is `"<redacted>"` and it has no
/// `Display`. Read it with [`Secret::expose`] where it is really needed (the
/// child's environment, a request header).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The value itself.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"<redacted>\"")
    }
}

/// What must be cut out of any text the crate produces about one server (error
/// messages, events, the quoted stderr of a child): every environment value,
/// every header value and every value a `${VAR}` reference expanded to.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    values: Vec<String>,
}

/// Shorter values are left alone: cutting every `1` or `on` out of a message
/// would make it unreadable, and a secret that short protects nothing anyway.
const MIN_REDACTED_LEN: usize = 4;

impl Redactor {
    /// Adds a value to cut out.
    pub(crate) fn add(&mut self, value: &str) {
        if value.len() >= MIN_REDACTED_LEN && !self.values.iter().any(|v| v == value) {
            self.values.push(value.to_string());
            // Longest first, so a secret that contains another is cut whole.
            self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// `text` with every secret replaced by `<redacted>`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), "<redacted>");
            }
        }
        out
    }
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} values)", self.values.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret::new("hunter22");
        assert_eq!(format!("{s:?}"), "\"<redacted>\"");
        assert_eq!(s.expose(), "hunter22");
    }

    #[test]
    fn redacts_longest_first_and_skips_short_values() {
        let mut r = Redactor::default();
        r.add("abcd");
        r.add("abcdefgh");
        r.add("on");
        assert_eq!(
            r.redact("x abcdefgh y abcd z on"),
            "x <redacted> y <redacted> z on"
        );
        assert_eq!(format!("{r:?}"), "Redactor(2 values)");
    }
}
