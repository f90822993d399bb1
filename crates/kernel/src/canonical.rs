//! Path canonicalization (kernel digest §5.1).
//!
//! Used for every zone/mount/skill decision and for every path argument
//! matched against a guard (0.9.0 delta D8: only path arguments).

/// The canonical form of a path, plus whether it climbs above the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canonical {
    /// Segments joined with `/`; no leading `/`, no empty or `.` segments,
    /// `..` only as a leading run. `""` is the root.
    pub path: String,
    /// True when some `..` could not be cancelled (the path leaves the root).
    pub escapes: bool,
}

/// Canonicalizes `path` exactly per §5.1: every leading `/` is stripped,
/// the path is split on `/`, empty and `.` segments are dropped, `..` pops
/// the previous segment unless the stack is empty or ends in `..` (then the
/// `..` is kept and `escapes` is set), and the rest is joined with `/`.
/// Backslashes are ordinary characters.
pub fn canonicalize(path: &str) -> Canonical {
    if is_already_canonical(path) {
        return Canonical {
            path: path.to_string(),
            escapes: false,
        };
    }
    let mut stack: Vec<&str> = Vec::new();
    let mut escapes = false;
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if matches!(stack.last(), Some(last) if *last != "..") {
                    stack.pop();
                } else {
                    stack.push("..");
                    escapes = true;
                }
            }
            other => stack.push(other),
        }
    }
    Canonical {
        path: stack.join("/"),
        escapes,
    }
}

/// Fast check: no empty, `.` or `..` segment (so nothing to rewrite).
fn is_already_canonical(path: &str) -> bool {
    path.is_empty() || path.split('/').all(|seg| !matches!(seg, "" | "." | ".."))
}

/// The first `/`-segment of an already canonical path (`""` for the root).
pub fn first_segment(canonical: &str) -> &str {
    canonical
        .split_once('/')
        .map_or(canonical, |(first, _)| first)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn c(p: &str) -> (String, bool) {
        let r = canonicalize(p);
        (r.path, r.escapes)
    }

    #[test]
    fn digest_examples() {
        assert_eq!(c("/a/b"), ("a/b".to_string(), false));
        assert_eq!(c(".//a//b"), ("a/b".to_string(), false));
        assert_eq!(c("a/../b"), ("b".to_string(), false));
        assert_eq!(
            c("run/scratch/../../output/x"),
            ("output/x".to_string(), false)
        );
        assert_eq!(c("../victim"), ("../victim".to_string(), true));
        assert_eq!(c("a/../../b"), ("../b".to_string(), true));
        assert_eq!(c("/"), (String::new(), false));
        assert_eq!(c("./"), (String::new(), false));
        assert_eq!(c(""), (String::new(), false));
    }

    #[test]
    fn more_cases() {
        assert_eq!(c("a/b"), ("a/b".to_string(), false));
        assert_eq!(c("///a"), ("a".to_string(), false));
        assert_eq!(c("a/b/"), ("a/b".to_string(), false));
        assert_eq!(c("../../x"), ("../../x".to_string(), true));
        assert_eq!(c("a/.."), (String::new(), false));
        assert_eq!(c(".."), ("..".to_string(), true));
        assert_eq!(c("a\\..\\b"), ("a\\..\\b".to_string(), false));
        assert_eq!(c("https://x.com/y"), ("https:/x.com/y".to_string(), false));
        assert_eq!(c("..."), ("...".to_string(), false));
        assert_eq!(
            c("secrets/../secrets/key"),
            ("secrets/key".to_string(), false)
        );
    }

    #[test]
    fn first_segments() {
        assert_eq!(first_segment("a/b/c"), "a");
        assert_eq!(first_segment("a"), "a");
        assert_eq!(first_segment(""), "");
        assert_eq!(first_segment("../x"), "..");
    }
}
