//! A small glob matcher for the `glob` tool and grep's `glob` filter.
//!
//! Supported: `*` (any run within a segment, dotfiles included), `?` (one
//! character, never `/`), `**` as a whole segment (zero or more segments),
//! classes `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` (negated), braces `{a,b}`
//! (nested allowed; a group without a top-level comma is literal) and `\x`
//! escapes. A leading `/` or `./` of the pattern is ignored. Matching is
//! case-sensitive and works on `/`-separated relative paths.

/// A compiled glob pattern (its brace alternatives, split into segments).
#[derive(Debug, Clone)]
pub struct Glob {
    alternatives: Vec<Vec<String>>,
}

impl Glob {
    /// Compiles `pattern`.
    pub fn new(pattern: &str) -> Self {
        let mut p = pattern;
        loop {
            if let Some(rest) = p.strip_prefix("./") {
                p = rest;
            } else if let Some(rest) = p.strip_prefix('/') {
                p = rest;
            } else {
                break;
            }
        }
        let alternatives = expand_braces(p)
            .into_iter()
            .map(|alt| {
                alt.split('/')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        Glob { alternatives }
    }

    /// True when the relative path `path` matches.
    pub fn is_match(&self, path: &str) -> bool {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        self.alternatives.iter().any(|alt| {
            let pat: Vec<&str> = alt.iter().map(String::as_str).collect();
            match_segments(&pat, &segs)
        })
    }
}

fn match_segments(pat: &[&str], segs: &[&str]) -> bool {
    match pat.split_first() {
        None => segs.is_empty(),
        Some((&"**", rest)) => {
            if rest.is_empty() {
                return true;
            }
            (0..=segs.len()).any(|i| match_segments(rest, &segs[i..]))
        }
        Some((first, rest)) => match segs.split_first() {
            Some((seg, seg_rest)) => {
                *seg != "."
                    && *seg != ".."
                    && match_segment(first, seg)
                    && match_segments(rest, seg_rest)
            }
            None => false,
        },
    }
}

/// One pattern element inside a segment.
#[derive(Debug)]
enum Tok {
    Lit(char),
    Any,
    Star,
    Class {
        negated: bool,
        items: Vec<(char, char)>,
    },
}

fn tokenize(pat: &str) -> Vec<Tok> {
    let chars: Vec<char> = pat.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                toks.push(Tok::Lit(chars[i + 1]));
                i += 2;
            }
            '*' => {
                if !matches!(toks.last(), Some(Tok::Star)) {
                    toks.push(Tok::Star);
                }
                i += 1;
            }
            '?' => {
                toks.push(Tok::Any);
                i += 1;
            }
            '[' => match parse_class(&chars, i) {
                Some((tok, next)) => {
                    toks.push(tok);
                    i = next;
                }
                None => {
                    toks.push(Tok::Lit('['));
                    i += 1;
                }
            },
            _ => {
                toks.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    toks
}

/// Parses a class starting at `chars[start] == '['`; `None` when unclosed.
fn parse_class(chars: &[char], start: usize) -> Option<(Tok, usize)> {
    let mut i = start + 1;
    let negated = matches!(chars.get(i), Some('!') | Some('^'));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    while i < chars.len() {
        let mut c = chars[i];
        if c == ']' && !first {
            return Some((Tok::Class { negated, items }, i + 1));
        }
        first = false;
        if c == '\\' && i + 1 < chars.len() {
            i += 1;
            c = chars[i];
        }
        if i + 2 < chars.len() && chars[i + 1] == '-' && chars[i + 2] != ']' {
            items.push((c, chars[i + 2]));
            i += 3;
        } else {
            items.push((c, c));
            i += 1;
        }
    }
    None
}

fn match_segment(pat: &str, seg: &str) -> bool {
    let toks = tokenize(pat);
    let chars: Vec<char> = seg.chars().collect();
    match_toks(&toks, &chars)
}

fn match_toks(toks: &[Tok], s: &[char]) -> bool {
    // Iterative wildcard matching with single-star backtracking.
    let (mut t, mut c) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while c < s.len() {
        if t < toks.len() {
            match &toks[t] {
                Tok::Star => {
                    star = Some((t, c));
                    t += 1;
                    continue;
                }
                tok if tok_matches(tok, s[c]) => {
                    t += 1;
                    c += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((st, sc)) => {
                t = st + 1;
                c = sc + 1;
                star = Some((st, sc + 1));
            }
            None => return false,
        }
    }
    toks[t..].iter().all(|tok| matches!(tok, Tok::Star))
}

fn tok_matches(tok: &Tok, ch: char) -> bool {
    match tok {
        Tok::Lit(l) => *l == ch,
        Tok::Any => ch != '/',
        Tok::Star => true,
        Tok::Class { negated, items } => {
            let hit = items.iter().any(|(lo, hi)| *lo <= ch && ch <= *hi);
            hit != *negated
        }
    }
}

/// Expands `{a,b}` groups (nested); a group without a top-level comma, or an
/// unclosed one, stays literal.
fn expand_braces(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '{' => {
                if let Some((close, parts)) = split_group(&chars, i) {
                    let prefix: String = chars[..i].iter().collect();
                    let suffix: String = chars[close + 1..].iter().collect();
                    let mut out = Vec::new();
                    for part in parts {
                        for tail in expand_braces(&format!("{part}{suffix}")) {
                            out.push(format!("{prefix}{tail}"));
                        }
                    }
                    return out;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    vec![pattern.to_string()]
}

/// For `{` at `open`: the index of its `}` and the top-level comma parts, when
/// the group closes and has at least one top-level comma.
fn split_group(chars: &[char], open: usize) -> Option<(usize, Vec<String>)> {
    let mut depth = 0usize;
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut i = open + 1;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                current.push(c);
                current.push(chars[i + 1]);
                i += 2;
                continue;
            }
            '{' => depth += 1,
            '}' if depth == 0 => {
                parts.push(current);
                return if parts.len() > 1 {
                    Some((i, parts))
                } else {
                    None
                };
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                i += 1;
                continue;
            }
            _ => {}
        }
        current.push(c);
        i += 1;
    }
    None
}
