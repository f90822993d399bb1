//! `WORKFLOW.md` is prose only: a frontmatter block there competes with `workflow.yaml`.

/// True when the text starts exactly with `---` and the block up to the closing
/// fence parses as YAML (any parse success counts, as in the original).
pub(crate) fn has_frontmatter(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("---") else {
        return false;
    };
    // The opening fence must end its line.
    let Some(rest) = rest
        .strip_prefix('\n')
        .or_else(|| rest.strip_prefix("\r\n"))
        .or(rest.is_empty().then_some(rest))
    else {
        return false;
    };
    let block = match find_closing_fence(rest) {
        Some(end) => &rest[..end],
        None => return false,
    };
    crate::yaml::parse(block).is_ok()
}

/// The byte offset of the line holding the closing `---`.
fn find_closing_fence(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return Some(offset);
        }
        offset += line.len();
    }
    None
}

/// The competing-machines message.
pub(crate) fn competing_message(md: &str, spec_file: &str) -> String {
    format!(
        "{md} declares YAML frontmatter while {spec_file} is the machine spec. WORKFLOW.md is \
         prose only: move anything the frontmatter configures into workflow.yaml and remove \
         the frontmatter block."
    )
}

#[cfg(test)]
mod tests {
    use super::has_frontmatter;

    #[test]
    fn frontmatter_is_detected_only_at_the_very_start() {
        assert!(has_frontmatter("---\ntitle: x\n---\nProse.\n"));
        assert!(has_frontmatter("---\n---\n"));
        assert!(has_frontmatter(
            "---\nJust a rule used as prose\n---\nmore\n"
        ));
        assert!(!has_frontmatter("\n---\ntitle: x\n---\n"));
        assert!(!has_frontmatter("\u{feff}---\ntitle: x\n---\n"));
        assert!(!has_frontmatter("# Title\n\n---\n"));
        assert!(!has_frontmatter("---\na: [unclosed\n---\n"));
    }
}
