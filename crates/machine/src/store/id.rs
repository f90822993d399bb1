//! Session ids: validation (runtime §2.1, cli §10, kernel §7.4) and child ids (runtime §6.5).

use std::collections::BTreeSet;
use std::fmt;

/// Session areas reserved at the workspace root (kernel §7.4); a session id may not start with one.
pub const RESERVED_AREAS: [&str; 6] = [
    "checkpoints",
    "artifacts",
    "_specs",
    "large_tool_results",
    "conversation_history",
    "scratchpad",
];

/// The default session id (runtime §2.1).
pub const DEFAULT_SESSION_ID: &str = "__default__";

/// Separator between a parent id and a child identity (runtime §6.5).
pub const CHILD_SEPARATOR: char = '~';

/// Why a raw session id was refused. `Display` is the exact reason text of cli §10.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionIdReason {
    /// Empty after stripping leading `/`.
    Empty,
    /// Absolute path or a `..` segment.
    Traversal,
    /// First segment is a session area or an authored mount.
    Reserved(String),
}

impl fmt::Display for SessionIdReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("it must not be empty"),
            Self::Traversal => f.write_str(
                "it must stay within the session zone (no absolute paths or '..' traversal)",
            ),
            Self::Reserved(seg) => write!(
                f,
                "'{seg}' is reserved at the workspace root (a session area or an authored mount)"
            ),
        }
    }
}

/// A refused session id. `Display` is the runtime form
/// `Invalid session id "{id}": {reason}.`; [`SessionIdError::cli_message`] gives the CLI form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid session id \"{raw}\": {reason}.")]
pub struct SessionIdError {
    raw: String,
    reason: SessionIdReason,
}

impl SessionIdError {
    /// The id as it was given (before stripping leading `/`).
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// Why it was refused.
    pub fn reason(&self) -> &SessionIdReason {
        &self.reason
    }

    /// The CLI message (after `Error: `, cli §10):
    /// `invalid session id '<id>' - <reason>. Use one from 'archmax sessions'.`
    pub fn cli_message(&self) -> String {
        format!(
            "invalid session id '{}' - {}. Use one from 'archmax sessions'.",
            self.raw, self.reason
        )
    }
}

/// The reserved first segments in force: the session areas plus authored mount names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdRules {
    reserved: BTreeSet<String>,
}

impl Default for IdRules {
    fn default() -> Self {
        Self {
            reserved: RESERVED_AREAS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

impl IdRules {
    /// The CLI-stage rules: only the session areas are reserved.
    pub fn new() -> Self {
        Self::default()
    }

    /// The runtime rules: the session areas plus the first segment of each declared mount
    /// (leading `/` stripped, segments split on `/` or `\`).
    pub fn with_mounts<I, S>(mounts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut rules = Self::default();
        for mount in mounts {
            let trimmed = mount.as_ref().trim_start_matches('/');
            if let Some(first) = trimmed.split(['/', '\\']).next()
                && !first.is_empty()
            {
                rules.reserved.insert(first.to_owned());
            }
        }
        rules
    }

    /// Whether `segment` is a reserved first segment.
    pub fn is_reserved(&self, segment: &str) -> bool {
        self.reserved.contains(segment)
    }

    /// Validate `raw` under these rules.
    pub fn parse(&self, raw: &str) -> Result<SessionId, SessionIdError> {
        let refuse = |reason| SessionIdError {
            raw: raw.to_owned(),
            reason,
        };
        let id = raw.trim_start_matches('/');
        if id.is_empty() {
            return Err(refuse(SessionIdReason::Empty));
        }
        if is_absolute(id) || id.split(['/', '\\']).any(|seg| seg == "..") {
            return Err(refuse(SessionIdReason::Traversal));
        }
        let first = id.split(['/', '\\']).next().unwrap_or(id);
        if self.is_reserved(first) {
            return Err(refuse(SessionIdReason::Reserved(first.to_owned())));
        }
        Ok(SessionId(id.to_owned()))
    }
}

/// Absolute after the leading `/` were stripped: a leading `\` or a drive prefix (`C:\`, `C:/`).
fn is_absolute(id: &str) -> bool {
    match id.as_bytes() {
        [b'\\', ..] => true,
        [drive, b':', b'/' | b'\\', ..] => drive.is_ascii_alphabetic(),
        _ => false,
    }
}

/// A validated session id (leading `/` stripped). Child ids read `{parent}~{state}:{workflow}:{ordinal}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// Validate `raw` with the CLI-stage rules (session areas only); see [`IdRules::with_mounts`]
    /// for the runtime rules that also reserve mount names.
    pub fn parse(raw: &str) -> Result<Self, SessionIdError> {
        IdRules::default().parse(raw)
    }

    /// Validate `raw` with the given rules.
    pub fn parse_with(raw: &str, rules: &IdRules) -> Result<Self, SessionIdError> {
        rules.parse(raw)
    }

    /// The default session id `__default__`.
    pub fn default_id() -> Self {
        Self(DEFAULT_SESSION_ID.to_owned())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The parent of a child id, if this is one.
    pub fn parent(&self) -> Option<SessionId> {
        parent_of(&self.0).map(|p| SessionId(p.to_owned()))
    }

    /// The outermost ancestor (the id itself when it is not a child).
    pub fn root(&self) -> SessionId {
        let mut cur = self.0.as_str();
        while let Some(p) = parent_of(cur) {
            cur = p;
        }
        SessionId(cur.to_owned())
    }

    /// The child id `{self}~{state}:{workflow}:{ordinal}`; `None` when `state` or `workflow`
    /// is empty or holds `~`, `:`, `/` or `\`.
    pub fn child(&self, state: &str, workflow: &str, ordinal: u64) -> Option<SessionId> {
        let ok = |s: &str| !s.is_empty() && !s.contains(['~', ':', '/', '\\']);
        (ok(state) && ok(workflow))
            .then(|| SessionId(format!("{}~{state}:{workflow}:{ordinal}", self.0)))
    }

    /// Whether `other` is a descendant of this session (`{self}~identity(~identity)*`).
    pub fn is_ancestor_of(&self, other: &str) -> bool {
        is_descendant(&self.0, other)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SessionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A child identity `{state}:{workflow}:{ordinal}` (regex `^[^~:]+:[^~:]+:\d+$`).
pub fn is_child_identity(s: &str) -> bool {
    let mut parts = s.split(':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(state), Some(workflow), Some(ordinal), None) => {
            !state.is_empty()
                && !workflow.is_empty()
                && !state.contains('~')
                && !workflow.contains('~')
                && !ordinal.is_empty()
                && ordinal.bytes().all(|b| b.is_ascii_digit())
        }
        _ => false,
    }
}

/// The parent of a child id `{parent}~{state}:{workflow}:{ordinal}`: the text before the last
/// `~` when what follows it is a child identity and the parent is non-empty.
pub fn parent_of(id: &str) -> Option<&str> {
    let (parent, identity) = id.rsplit_once(CHILD_SEPARATOR)?;
    (!parent.is_empty() && is_child_identity(identity)).then_some(parent)
}

/// Whether `candidate` is `{ancestor}~identity(~identity)*`, i.e. a descendant session id.
pub fn is_descendant(ancestor: &str, candidate: &str) -> bool {
    candidate
        .strip_prefix(ancestor)
        .and_then(|rest| rest.strip_prefix(CHILD_SEPARATOR))
        .is_some_and(|chain| chain.split(CHILD_SEPARATOR).all(is_child_identity))
}
