//! Session ids: the one rule for which ids are accepted (runtime §2.1, cli §10, kernel §7.4),
//! the storage key every store names a session by, and child ids (runtime §6.5).
//!
//! An id is accepted as the original accepts it (not empty once leading `/` are stripped, no
//! `..` segment, no reserved first segment) and refused besides when no storage can keep it
//! apart from another session: made of dots alone, holding a control or bidirectional-
//! formatting character, or too long to name a folder. Every store builds its paths and keys
//! from [`SessionId::key`], never from the id: the key is one path segment that no other id
//! shares on any file system (case-insensitive and normalising ones included), so `a/b` is a
//! folder of its own beside `a`, and `p1/`, `./p1` and `p1` are three sessions.

use std::borrow::Cow;
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

/// The longest storage key, in bytes: the longest file name of common file systems.
pub const MAX_KEY_BYTES: usize = 255;

/// Why a raw session id was refused. `Display` is the reason text (cli §10 for the first three).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionIdReason {
    /// Empty (or only whitespace) after stripping leading `/`.
    Empty,
    /// Absolute path or a `..` segment.
    Traversal,
    /// First segment is a session area or an authored mount.
    Reserved(String),
    /// Made of dots alone (`.`, `...`): it would name the sessions folder or an alias of it.
    Dots,
    /// Holds a control character or a bidirectional-formatting one (which make an id look
    /// like another): the character and its position (1-based, in characters).
    Unprintable {
        /// The character.
        ch: char,
        /// Its position, 1-based.
        at: usize,
    },
    /// Its storage key would be longer than [`MAX_KEY_BYTES`].
    TooLong {
        /// The key's length in bytes.
        bytes: usize,
    },
    /// A sub-workflow session's id (`<parent>~<state>:<workflow>:<n>`) that no caller has
    /// started: a host may continue a child, never make one (a child works in its root
    /// session's files).
    ChildNotStarted {
        /// The id's parent.
        parent: String,
    },
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
            Self::Dots => f.write_str("it must not be made of dots alone"),
            Self::Unprintable { ch, at } => write!(
                f,
                "it must not contain control or bidirectional-formatting characters (U+{:04X} at character {at})",
                u32::from(*ch)
            ),
            Self::TooLong { bytes } => write!(
                f,
                "it is too long: stored, it takes {bytes} bytes, at most {MAX_KEY_BYTES} \
                 (a character other than a-z, 0-9 and - _ . ~ @ + = , takes 2 to 12)"
            ),
            Self::ChildNotStarted { parent } => write!(
                f,
                "it names a sub-workflow session of '{}' that its caller has not started",
                shown(parent)
            ),
        }
    }
}

/// A refused session id. `Display` is the runtime form
/// `Invalid session id "{id}": {reason}.`; [`SessionIdError::cli_message`] gives the CLI form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid session id \"{}\": {reason}.", shown(raw))]
pub struct SessionIdError {
    raw: String,
    reason: SessionIdReason,
}

/// An id as messages show it: control and bidirectional-formatting characters escaped, so
/// a refusal cannot rewrite the line it is printed on.
fn shown(raw: &str) -> Cow<'_, str> {
    if !raw.chars().any(unprintable) {
        return Cow::Borrowed(raw);
    }
    Cow::Owned(
        raw.chars()
            .map(|c| {
                if unprintable(c) {
                    format!("\\u{{{:x}}}", u32::from(c))
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

impl SessionIdError {
    /// The refusal of `id`, a child id whose session its caller has not started.
    pub fn child_not_started(id: &SessionId) -> Self {
        SessionIdError {
            raw: id.as_str().to_owned(),
            reason: SessionIdReason::ChildNotStarted {
                parent: id.parent().map(|p| p.0).unwrap_or_default(),
            },
        }
    }

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
            shown(&self.raw),
            self.reason
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
        if id.trim().is_empty() {
            return Err(refuse(SessionIdReason::Empty));
        }
        if let Some((at, ch)) = id.chars().enumerate().find(|(_, c)| unprintable(*c)) {
            return Err(refuse(SessionIdReason::Unprintable { ch, at: at + 1 }));
        }
        if is_absolute(id) || id.split(['/', '\\']).any(|seg| seg == "..") {
            return Err(refuse(SessionIdReason::Traversal));
        }
        if id.bytes().all(|b| b == b'.') {
            return Err(refuse(SessionIdReason::Dots));
        }
        let first = id.split(['/', '\\']).next().unwrap_or(id);
        if self.is_reserved(first) {
            return Err(refuse(SessionIdReason::Reserved(first.to_owned())));
        }
        let bytes = storage_key(id).len();
        if bytes > MAX_KEY_BYTES {
            return Err(refuse(SessionIdReason::TooLong { bytes }));
        }
        Ok(SessionId(id.to_owned()))
    }
}

/// A control character (C0, DEL, C1) or a bidirectional-formatting one (the marks, embeddings,
/// overrides and isolates), or a line or paragraph separator.
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
                | '\u{2028}' | '\u{2029}'
        )
}

/// Absolute after the leading `/` were stripped: a leading `\` or a drive prefix (`C:\`, `C:/`).
fn is_absolute(id: &str) -> bool {
    match id.as_bytes() {
        [b'\\', ..] => true,
        [drive, b':', b'/' | b'\\', ..] => drive.is_ascii_alphabetic(),
        _ => false,
    }
}

/// Characters a key keeps as they are, besides `a-z` and `0-9` (and `.` inside a key).
const KEPT: &[u8] = b"-_~@+=,";

/// Names Windows gives to devices, whatever the case and extension.
const WINDOWS_DEVICES: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// The storage key of a session id: the one path segment (folder name, key prefix) a store
/// names the session by. `a-z`, `0-9`, `-_~@+=,` and inner dots stay as they are, so common
/// ids (`session-<uuid>`, `t-1.2`) are their own key; an uppercase letter becomes `!` and the
/// letter in lowercase (no two keys differ only in case); every other byte (`/`, `\`, `:`,
/// `%`, `!`, a space, a leading or trailing dot, any non-ASCII character) becomes `%XX`, and
/// so does the first letter of a Windows device name. Distinct ids have distinct keys
/// ([`id_of_key`] reverses it).
pub fn storage_key(id: &str) -> Cow<'_, str> {
    let bytes = id.as_bytes();
    let last = bytes.len().saturating_sub(1);
    let plain = |i: usize, b: u8| {
        b.is_ascii_lowercase()
            || b.is_ascii_digit()
            || KEPT.contains(&b)
            || (b == b'.' && i != 0 && i != last)
    };
    let device = is_windows_device(id);
    if !device && bytes.iter().enumerate().all(|(i, &b)| plain(i, b)) {
        return Cow::Borrowed(id);
    }
    let mut key = String::with_capacity(id.len() + 8);
    for (i, &b) in bytes.iter().enumerate() {
        if device && i == 0 {
            escape(&mut key, b);
        } else if plain(i, b) {
            key.push(char::from(b));
        } else if b.is_ascii_uppercase() {
            key.push('!');
            key.push(char::from(b.to_ascii_lowercase()));
        } else {
            escape(&mut key, b);
        }
    }
    Cow::Owned(key)
}

fn escape(key: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    key.push('%');
    key.push(char::from(HEX[usize::from(b >> 4)]));
    key.push(char::from(HEX[usize::from(b & 0xF)]));
}

/// `con`, `NUL.txt`, `Com1.x`: a name Windows keeps for a device, whatever follows a dot.
fn is_windows_device(id: &str) -> bool {
    let stem = id.split('.').next().unwrap_or(id);
    WINDOWS_DEVICES
        .iter()
        .any(|d| d.eq_ignore_ascii_case(stem.trim_end_matches(' ')))
}

/// The session id a storage key names, `None` when `key` is not one [`storage_key`] makes
/// (a store then skips it when listing).
pub fn id_of_key(key: &str) -> Option<String> {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'!' => {
                let next = *bytes.get(i + 1)?;
                if !next.is_ascii_lowercase() {
                    return None;
                }
                out.push(next.to_ascii_uppercase());
                i += 2;
            }
            b'%' => {
                let hex = key.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    let id = String::from_utf8(out).ok()?;
    // Only the key's own spelling: `%41` and `!a` must not both name `A`.
    (storage_key(&id) == key).then_some(id)
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

    /// The session a storage key names, if it names one a store may hold.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::parse(&id_of_key(key)?).ok()
    }

    /// The default session id `__default__`.
    pub fn default_id() -> Self {
        Self(DEFAULT_SESSION_ID.to_owned())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The storage key ([`storage_key`]): the one path segment or key a store names this
    /// session by. Borrowed for ids that are their own key.
    pub fn key(&self) -> Cow<'_, str> {
        storage_key(&self.0)
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
    /// is empty or holds `~`, `:`, `/` or `\`, or when the child's key would be too long.
    pub fn child(&self, state: &str, workflow: &str, ordinal: u64) -> Option<SessionId> {
        let ok = |s: &str| !s.is_empty() && !s.contains(['~', ':', '/', '\\']);
        (ok(state) && ok(workflow))
            .then(|| SessionId(format!("{}~{state}:{workflow}:{ordinal}", self.0)))
            .filter(|child| child.key().len() <= MAX_KEY_BYTES)
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
