//! Placeholder until the full module lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canonical {
    pub path: String,
    pub escapes: bool,
}
pub fn canonicalize(path: &str) -> Canonical {
    let mut stack: Vec<&str> = Vec::new();
    let mut escapes = false;
    for seg in path.trim_start_matches('/').split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if stack.last().is_some_and(|s| *s != "..") {
                    stack.pop();
                } else {
                    stack.push("..");
                    escapes = true;
                }
            }
            s => stack.push(s),
        }
    }
    Canonical {
        path: stack.join("/"),
        escapes,
    }
}
