//! The settings a harness reads from its environment: the real environment first, then
//! `.env` files (the working directory's, then the workspace's), parsed as dotenv does. One
//! reading for every way in (the CLI, `serve`, the worker, `createAgent`); the process
//! environment is never modified.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A lookup of the real environment (`std::env::var`, or a test's).
pub type RealEnv<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, as a [`RealEnv`] takes it.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Parses dotenv text: `KEY=value`, optional `export `, `KEY: value`, single,
/// double or backtick quotes (double quotes expand `\n` and `\r`; quoted values
/// may span lines), `#` comments. Lines that do not parse are skipped.
pub fn parse(text: &str) -> Vec<(String, String)> {
    let text = text.replace("\r\n", "\n");
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if let Some((pair, next)) = parse_entry(&chars, i) {
            out.push(pair);
            i = next;
        } else {
            i = end_of_line(&chars, i);
        }
    }
    out
}

fn end_of_line(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && chars[i] != '\n' {
        i += 1;
    }
    i + 1
}

fn skip_blank(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
        i += 1;
    }
    i
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'
}

/// One entry starting at line start `i`: the pair and the index after its line.
fn parse_entry(chars: &[char], i: usize) -> Option<((String, String), usize)> {
    let mut i = skip_blank(chars, i);
    let rest: String = chars[i..chars.len().min(i + 7)].iter().collect();
    if rest.starts_with("export") && rest.chars().nth(6).is_some_and(|c| c == ' ' || c == '\t') {
        i = skip_blank(chars, i + 6);
    }
    let key_start = i;
    while i < chars.len() && is_key_char(chars[i]) {
        i += 1;
    }
    if i == key_start {
        return None;
    }
    let key: String = chars[key_start..i].iter().collect();
    i = skip_blank(chars, i);
    match chars.get(i) {
        Some('=') => i += 1,
        Some(':') if chars.get(i + 1).is_some_and(|c| *c == ' ' || *c == '\t') => i += 1,
        _ => return None,
    }
    i = skip_blank(chars, i);
    let quote = chars
        .get(i)
        .copied()
        .filter(|c| matches!(c, '"' | '\'' | '`'));
    if let Some((q, close)) = quote.and_then(|q| closing_quote(chars, i + 1, q).map(|c| (q, c))) {
        let mut value: String = chars[i + 1..close].iter().collect();
        if q == '"' {
            value = value.replace("\\n", "\n").replace("\\r", "\r");
        }
        return Some(((key, value), end_of_line(chars, close + 1)));
    }
    let start = i;
    while i < chars.len() && chars[i] != '\n' && chars[i] != '#' {
        i += 1;
    }
    let value: String = chars[start..i].iter().collect();
    Some(((key, value.trim().to_string()), end_of_line(chars, i)))
}

fn closing_quote(chars: &[char], mut i: usize, q: char) -> Option<usize> {
    while i < chars.len() {
        if chars[i] == '\\' && chars.get(i + 1) == Some(&q) {
            i += 2;
            continue;
        }
        if chars[i] == q {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The environment as a harness sees it: the real environment first, then values loaded
/// from `.env` files.
#[derive(Debug, Clone, Default)]
pub struct Env {
    loaded: BTreeMap<String, String>,
    last_file: Option<PathBuf>,
}

impl Env {
    /// An environment with nothing loaded from `.env` yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads a `.env` file, if present. A variable of the real environment is
    /// never overridden (even when empty); one an earlier `.env` set is. The
    /// file is skipped when it is the one loaded last. Unreadable files are
    /// ignored.
    pub fn load_file(&mut self, real: RealEnv<'_>, path: &Path) {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.last_file.as_deref() == Some(canonical.as_path()) {
            return;
        }
        // A FIFO or a device, or a link out of its folder, is unreadable too.
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return;
        };
        let read = archmax_spec::disk::read_within(
            dir,
            Path::new(name),
            archmax_spec::disk::MAX_AUTHORED_FILE_BYTES,
        );
        let Ok(Some(bytes)) = read else {
            return;
        };
        self.last_file = Some(canonical);
        self.load_text(real, &String::from_utf8_lossy(&bytes));
    }

    /// Loads dotenv text with the precedence of [`Env::load_file`].
    pub fn load_text(&mut self, real: RealEnv<'_>, text: &str) {
        for (key, value) in parse(text) {
            if real(&key).is_none() {
                self.loaded.insert(key, value);
            }
        }
    }

    /// A variable: the real environment, else a loaded `.env` value.
    pub fn get(&self, real: RealEnv<'_>, name: &str) -> Option<String> {
        real(name).or_else(|| self.loaded.get(name).cloned())
    }

    /// The environment of a workspace at `root`: `.env` in `cwd` (when given), then in
    /// `root`, under the real environment `real`.
    pub fn of_workspace(real: RealEnv<'_>, cwd: Option<&Path>, root: &Path) -> Self {
        let mut env = Env::new();
        if let Some(cwd) = cwd {
            env.load_file(real, &cwd.join(".env"));
        }
        env.load_file(real, &root.join(".env"));
        env
    }

    /// A lookup over the process environment and these loaded values, owning what it needs.
    pub fn into_lookup(self) -> Lookup {
        Arc::new(move |name: &str| process_env(name).or_else(|| self.loaded.get(name).cloned()))
    }

    /// The values loaded from `.env` files (real variables excluded).
    pub fn loaded(&self) -> &BTreeMap<String, String> {
        &self.loaded
    }
}

/// A shared lookup of settings by name (the environment with its `.env` values).
pub type Lookup = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

use std::sync::Arc;

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text)
    }

    fn kv(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn dotenv_syntax() {
        let text = "# comment\nA=1\nexport B = two words  # trailing\nC=\"x\\ny\"\nD='a # b'\nE='raw\\n'\n\
                    F=\"multi\nline\"\nbad line\nG: colon\nH=\nI=a#b\n  J = `tick`\n";
        assert_eq!(
            pairs(text),
            vec![
                kv("A", "1"),
                kv("B", "two words"),
                kv("C", "x\ny"),
                kv("D", "a # b"),
                kv("E", "raw\\n"),
                kv("F", "multi\nline"),
                kv("G", "colon"),
                kv("H", ""),
                kv("I", "a"),
                kv("J", "tick"),
            ]
        );
    }

    #[test]
    fn crlf_and_unterminated_quotes() {
        assert_eq!(
            pairs("A=1\r\nB=\"open\r\n"),
            vec![kv("A", "1"), kv("B", "\"open")]
        );
    }

    #[test]
    fn real_env_wins_and_later_files_override_earlier_ones() {
        let real = |name: &str| match name {
            "REAL" => Some(String::new()),
            "BOTH" => Some("real".to_string()),
            _ => None,
        };
        let mut env = Env::new();
        env.load_text(&real, "REAL=cwd\nBOTH=cwd\nONLY_CWD=cwd\nLATER=cwd\n");
        env.load_text(&real, "LATER=root\nREAL=root\n");
        assert_eq!(env.get(&real, "REAL").as_deref(), Some(""));
        assert_eq!(env.get(&real, "BOTH").as_deref(), Some("real"));
        assert_eq!(env.get(&real, "ONLY_CWD").as_deref(), Some("cwd"));
        assert_eq!(env.get(&real, "LATER").as_deref(), Some("root"));
        assert_eq!(env.get(&real, "MISSING"), None);
        assert!(!env.loaded().contains_key("REAL"));
    }
}
