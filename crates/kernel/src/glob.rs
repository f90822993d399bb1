//! Placeholder until the full module lands.
#[derive(Debug, Clone)]
pub struct Glob {
    m: Option<globset::GlobMatcher>,
    raw: String,
}
impl Glob {
    pub fn new(pattern: &str) -> Glob {
        let p = pattern.trim_start_matches('/');
        let p = p.strip_prefix("./").unwrap_or(p);
        let m = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .ok()
            .map(|g| g.compile_matcher());
        Glob {
            m,
            raw: p.to_string(),
        }
    }
    pub fn is_match(&self, value: &str) -> bool {
        if self.raw.is_empty() {
            return value.is_empty();
        }
        if let Some(base) = self.raw.strip_suffix("/**") {
            if value == base {
                return true;
            }
        }
        self.m.as_ref().is_some_and(|m| m.is_match(value))
    }
}
pub fn escape_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if "\\*?[]{}()!+@|^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
