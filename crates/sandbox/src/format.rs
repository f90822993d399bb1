//! Console capture and `archmax_eval` result formatting.

/// The outcome of one `archmax_eval` (or `archmax_run`) evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalRun {
    /// What the model sees: console lines (capped, with `[truncated <N> chars]`), then
    /// `→ <value>` on success or `<Name>: <message>` plus the stack on failure, joined by `\n`;
    /// `(no output)` when there is nothing; `error: <message>` when the code never ran.
    pub text: String,
    /// True when the code threw, timed out, broke a limit or never ran.
    pub is_error: bool,
}

/// Console output captured during one run, capped at a number of characters.
#[derive(Debug, Default)]
pub(crate) struct LogBuf {
    text: String,
    chars: usize,
    dropped: usize,
    cap: usize,
}

impl LogBuf {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    /// Appends one console call's line; what does not fit under the cap is counted as dropped.
    pub(crate) fn push(&mut self, line: &str) {
        let mut entry = String::with_capacity(line.len() + 1);
        entry.push_str(line);
        entry.push('\n');
        let len = entry.chars().count();
        let room = self.cap.saturating_sub(self.chars);
        if len <= room {
            self.text.push_str(&entry);
            self.chars += len;
        } else {
            self.text.extend(entry.chars().take(room));
            self.chars += room;
            self.dropped += len - room;
        }
    }

    /// The captured lines (split on `\n`, empty lines dropped) and the dropped character count.
    pub(crate) fn finish(self) -> (Vec<String>, usize) {
        let lines = self
            .text
            .split('\n')
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        (lines, self.dropped)
    }
}

/// A JavaScript failure, read out of the context as plain strings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct JsFailure {
    pub(crate) name: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) stack: Option<String>,
}

impl JsFailure {
    pub(crate) fn new(name: &str, message: String) -> Self {
        Self {
            name: Some(name.to_owned()),
            message: Some(message),
            stack: None,
        }
    }

    /// `<Name>: <message>` with the original's fallbacks.
    pub(crate) fn headline(&self) -> String {
        let name = self
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or("Error");
        let message = self
            .message
            .as_deref()
            .filter(|m| !m.is_empty())
            .unwrap_or("Unknown error");
        format!("{name}: {message}")
    }

    /// The headline followed by the stack (the eval rendering).
    pub(crate) fn with_stack(&self) -> String {
        let mut out = self.headline();
        if let Some(stack) = self
            .stack
            .as_deref()
            .map(str::trim_end)
            .filter(|s| !s.is_empty())
        {
            out.push('\n');
            out.push_str(stack);
        }
        out
    }

    /// The headline plus the first stack frame in `file` (else the first frame), on one line:
    /// `Error: boom (at hooks/check.js:5:11)`. Used as a hook's rejection reason.
    pub(crate) fn one_line(&self, file: &str) -> String {
        let mut out = self.headline();
        let frames: Vec<&str> = self
            .stack
            .as_deref()
            .unwrap_or("")
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("at "))
            .collect();
        let frame = frames
            .iter()
            .find(|l| l.contains(file))
            .or_else(|| frames.first());
        if let Some(frame) = frame {
            let location = frame
                .rsplit_once('(')
                .map(|(_, loc)| loc.trim_end_matches(')'))
                .unwrap_or_else(|| frame.trim_start_matches("at "));
            out.push_str(&format!(" (at {location})"));
        }
        out
    }
}

/// Caps `text` at `cap` characters, appending `\n[truncated <N> chars]` when it had to cut.
pub(crate) fn truncate(text: &str, cap: usize) -> String {
    let total = text.chars().count();
    if total <= cap {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(cap).collect();
    out.push_str(&format!("\n[truncated {} chars]", total - cap));
    out
}

/// Joins the parts of an eval result the way the original's `formatReplResult` does.
pub(crate) fn format_eval(
    logs: &[String],
    dropped: usize,
    result: &Result<Option<String>, JsFailure>,
    cap: usize,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !logs.is_empty() || dropped > 0 {
        let mut part = logs.join("\n");
        if dropped > 0 {
            if !part.is_empty() {
                part.push('\n');
            }
            part.push_str(&format!("[truncated {dropped} chars]"));
        }
        parts.push(part);
    }
    match result {
        Ok(Some(value)) => parts.push(format!("→ {}", truncate(value, cap))),
        Ok(None) => {}
        Err(failure) => parts.push(failure.with_stack()),
    }
    if parts.is_empty() {
        "(no output)".to_owned()
    } else {
        parts.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_buffer_caps_and_counts() {
        let mut buf = LogBuf::new(10);
        buf.push("abc");
        buf.push("");
        buf.push("defghijk");
        let (lines, dropped) = buf.finish();
        assert_eq!(lines, vec!["abc".to_owned(), "defgh".to_owned()]);
        assert_eq!(dropped, 4);
    }

    #[test]
    fn formats_like_the_original() {
        let logs = vec!["a".to_owned(), "[warn] b".to_owned()];
        assert_eq!(
            format_eval(&logs, 0, &Ok(Some("7".into())), 100),
            "a\n[warn] b\n→ 7"
        );
        assert_eq!(format_eval(&[], 0, &Ok(None), 100), "(no output)");
        assert_eq!(
            format_eval(&logs, 3, &Ok(None), 100),
            "a\n[warn] b\n[truncated 3 chars]"
        );
        let failure = JsFailure {
            name: Some("TypeError".into()),
            message: Some("x is not a function".into()),
            stack: Some("    at <eval> (code.js:2:1)\n".into()),
        };
        assert_eq!(
            format_eval(&[], 0, &Err(failure.clone()), 100),
            "TypeError: x is not a function\n    at <eval> (code.js:2:1)"
        );
        assert_eq!(
            failure.one_line("code.js"),
            "TypeError: x is not a function (at code.js:2:1)"
        );
        assert_eq!(JsFailure::default().headline(), "Error: Unknown error");
        assert_eq!(
            format_eval(&[], 0, &Ok(Some("abcdef".into())), 4),
            "→ abcd\n[truncated 2 chars]"
        );
    }
}
