//! `parseCodeDescription(source)` (validation digest §7): the description a
//! hook or script carries in a leading `/** … */` doc block.

use crate::jsfmt::{js_trim, js_trim_end, js_trim_start};

/// Extracts the leading doc-block description of `source`, or `None`.
///
/// Steps: strip a leading BOM; CRLF → LF; trim leading white space; the text
/// must start with `/**` not immediately followed by `/`, and the block runs
/// to the first `*/`; each body line loses leading white space, then any run
/// of `*`, then one optional space, then trailing white space; the first line
/// beginning with `@` ends the description; lines are joined with `\n` and
/// trimmed; an empty result is `None`.
pub fn parse_code_description(source: &str) -> Option<String> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let normalized = source.replace("\r\n", "\n");
    let text = js_trim_start(&normalized);
    let after_open = text.strip_prefix("/**")?;
    if after_open.starts_with('/') {
        return None;
    }
    let close = after_open.find("*/")?;
    let body = after_open.get(..close)?;
    let mut lines = Vec::new();
    for line in body.split('\n') {
        let line = js_trim_start(line).trim_start_matches('*');
        let line = line.strip_prefix(' ').unwrap_or(line);
        let line = js_trim_end(line);
        if line.starts_with('@') {
            break;
        }
        lines.push(line);
    }
    let joined = lines.join("\n");
    let description = js_trim(&joined);
    if description.is_empty() {
        None
    } else {
        Some(description.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Option<String> {
        parse_code_description(s)
    }

    #[test]
    fn single_line_after_blank_lines() {
        assert_eq!(
            parse("\n\n/** Checks refund limits. */\nexport default () => {};").as_deref(),
            Some("Checks refund limits.")
        );
    }

    #[test]
    fn multi_paragraph_keeps_blank_line() {
        let src = "/**\n * First line.\n *\n * Second paragraph.\n */\nexport default 1;";
        assert_eq!(
            parse(src).as_deref(),
            Some("First line.\n\nSecond paragraph.")
        );
    }

    #[test]
    fn tag_truncates() {
        let src = "/**\n * Does the thing.\n * @param x the x\n * More text.\n */";
        assert_eq!(parse(src).as_deref(), Some("Does the thing."));
    }

    #[test]
    fn bom_and_crlf() {
        let src = "\u{feff}/**\r\n * Line one.\r\n * Line two.   \r\n */\r\n";
        assert_eq!(parse(src).as_deref(), Some("Line one.\nLine two."));
    }

    #[test]
    fn star_runs_and_one_space() {
        let src = "/**\n * Title\n ***   indented\n *\tTabbed\n */";
        assert_eq!(parse(src).as_deref(), Some("Title\n  indented\n\tTabbed"));
        assert_eq!(parse("/**   lead */").as_deref(), Some("lead"));
    }

    #[test]
    fn null_cases() {
        for src in [
            "// Checks refund limits.",
            "/* Checks refund limits. */",
            "export default 1;\n/** Late. */",
            "/***/",
            "/**/",
            "/**\n *\n */",
            "/**\n * @param x\n */",
            "",
            "   \n  ",
            "/** never closed",
        ] {
            assert_eq!(parse(src), None, "{src:?}");
        }
    }
}
