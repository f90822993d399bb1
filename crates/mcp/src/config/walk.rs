//! The walk over a `.mcp.json` tree: every problem becomes a diagnostic with the
//! file, the dotted field path, the line and the column.
//!
//! The text is read twice: `serde_json` decides whether it is JSON at all (and
//! says where it is not), then `archmax_spec::yaml` (JSON is YAML 1.2) gives the
//! same tree with the position of every key and value. Should the YAML reader
//! refuse a valid JSON text for some corner of YAML, the walk goes on over the
//! JSON value without positions.

use std::path::PathBuf;
use std::time::Duration;

use archmax_spec::Diagnostic;
use archmax_spec::yaml::{self, Entry, Node, Pos, Value};
use reqwest::header::{HeaderName, HeaderValue};

use super::expand::{Lookup, expand};
use super::keys;
use super::{
    DEFAULT_TIMEOUT, HttpTransport, MAX_TIMEOUT_MS, McpConfig, PathAccess, ServerEntry,
    StdioTransport, ToolPaths, Transport,
};
use crate::names;
use crate::secret::{Redactor, Secret};

pub(super) fn parse(
    text: &str,
    file: &str,
    lookup: Lookup<'_>,
) -> (Option<McpConfig>, Vec<Diagnostic>) {
    let mut walk = Walk {
        lookup,
        diags: Vec::new(),
    };
    let config = match read(text) {
        Ok(root) => walk.root(&root),
        Err(d) => {
            walk.diags.push(d);
            None
        }
    };
    let diags: Vec<Diagnostic> = walk.diags.into_iter().map(|d| d.in_file(file)).collect();
    let config = config.filter(|_| !diags.iter().any(Diagnostic::is_error));
    (config, diags)
}

/// The positioned tree of a JSON text, or the diagnostic saying why it is not JSON.
fn read(text: &str) -> Result<Node, Diagnostic> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        // serde_json appends " at line L column C"; the position has its own fields.
        let reason = message
            .rfind(" at line ")
            .map_or(message.as_str(), |at| &message[..at]);
        Diagnostic::error("", format!("invalid JSON: {reason}")).at(known(Pos {
            line: u32::try_from(e.line()).unwrap_or(u32::MAX),
            column: u32::try_from(e.column()).unwrap_or(u32::MAX),
        }))
    })?;
    match yaml::parse(text) {
        Ok(Some(node)) => Ok(node),
        // JSON objects may repeat a key (the last wins in JSON.parse); here that is
        // an error rather than a silent choice.
        Err(e) if e.message.starts_with("duplicate key") => Err(Diagnostic::error(
            "",
            e.message.replace("in one mapping", "in one object"),
        )
        .at(e.pos)),
        Ok(None) | Err(_) => Ok(from_json(&value)),
    }
}

/// A tree without positions (every `Pos` zero, reported as unknown).
fn from_json(value: &serde_json::Value) -> Node {
    use serde_json::Value as J;
    let value = match value {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        J::String(s) => Value::Str(s.clone()),
        J::Array(items) => Value::Seq(items.iter().map(from_json).collect()),
        J::Object(map) => Value::Map(yaml::Map::new(
            map.iter()
                .map(|(k, v)| Entry {
                    key: k.clone(),
                    key_pos: Pos::default(),
                    value: from_json(v),
                })
                .collect(),
        )),
    };
    Node {
        value,
        pos: Pos::default(),
    }
}

fn known(pos: Pos) -> Option<Pos> {
    (pos.line > 0).then_some(pos)
}

/// How a value is shown in a message: as JSON.
fn shown(node: &Node) -> String {
    node.to_json().to_string()
}

fn kind(node: &Node) -> &'static str {
    match node.value {
        Value::Map(_) => "an object",
        Value::Seq(_) => "an array",
        Value::Str(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
    }
}

struct Walk<'a> {
    lookup: Lookup<'a>,
    diags: Vec<Diagnostic>,
}

/// Where the walk is inside one server: the server's name and the field path
/// prefix `mcpServers.<name>`.
struct At<'s> {
    name: &'s str,
    path: String,
}

impl At<'_> {
    fn field(&self, rel: &str) -> String {
        format!("{}.{rel}", self.path)
    }
}

/// What one server's walk collects besides its fields.
#[derive(Default)]
struct Collected {
    redactor: Redactor,
}

impl Walk<'_> {
    fn error(&mut self, field: &str, pos: Pos, message: impl Into<String>) {
        self.diags
            .push(Diagnostic::error(field, message).at(known(pos)));
    }

    fn root(&mut self, root: &Node) -> Option<McpConfig> {
        let Some(entries) = root.as_map() else {
            self.error(
                "",
                root.pos,
                format!(
                    "a .mcp.json file holds an object, {{\"mcpServers\": {{\"<name>\": {{...}}}}}}; found {}",
                    kind(root)
                ),
            );
            return None;
        };
        for e in entries
            .iter()
            .filter(|e| !keys::ROOT.contains(&e.key.as_str()))
        {
            self.unknown_key(&e.key, e, keys::ROOT);
        }
        let Some(servers) = root.entry("mcpServers") else {
            self.error(
                "",
                root.pos,
                "missing 'mcpServers', the servers by name: {\"mcpServers\": {\"<name>\": {...}}}",
            );
            return None;
        };
        let Some(servers) = servers.value.as_map() else {
            self.error(
                "mcpServers",
                servers.value.pos,
                format!(
                    "'mcpServers' must be an object of servers by name; found {}",
                    kind(&servers.value)
                ),
            );
            return None;
        };
        let mut config = McpConfig::default();
        for e in servers {
            if let Some(server) = self.server(e) {
                config.servers.push(server);
            }
        }
        Some(config)
    }

    fn unknown_key(&mut self, field: &str, e: &Entry, known: &[&str]) {
        self.error(
            field,
            e.key_pos,
            format!(
                "unknown key '{}'; the known keys are: {}",
                e.key,
                known.join(", ")
            ),
        );
    }

    fn server(&mut self, e: &Entry) -> Option<ServerEntry> {
        let at = At {
            name: &e.key,
            path: format!("mcpServers.{}", e.key),
        };
        let name_ok = match names::server_name_problem(at.name) {
            Some(problem) => {
                self.error(&at.path, e.key_pos, problem);
                false
            }
            None => true,
        };
        let body = &e.value;
        if body.as_map().is_none() {
            self.error(
                &at.path,
                body.pos,
                format!(
                    "server '{}' must be an object; found {}",
                    at.name,
                    kind(body)
                ),
            );
            return None;
        }
        let is_stdio = self.transport_kind(&at, e)?;
        let known = if is_stdio { keys::STDIO } else { keys::HTTP };
        for k in body.as_map().into_iter().flatten() {
            if !known.contains(&k.key.as_str()) {
                self.foreign_key(&at, k, is_stdio);
            }
        }
        let mut collected = Collected::default();
        let before = self.diags.len();
        let transport = if is_stdio {
            self.stdio(&at, body, &mut collected).map(Transport::Stdio)
        } else {
            self.http(&at, body, &mut collected).map(Transport::Http)
        };
        let timeout = self.timeout(&at, body);
        let paths = self.paths(&at, body);
        let clean = name_ok && self.diags.len() == before;
        Some(ServerEntry {
            name: at.name.to_string(),
            transport: transport?,
            timeout: timeout?,
            paths: paths?,
        })
        .filter(|_| clean)
    }

    /// True for stdio, false for http; `None` (after the diagnostic) when the
    /// server's kind cannot be told.
    fn transport_kind(&mut self, at: &At<'_>, e: &Entry) -> Option<bool> {
        let body = &e.value;
        let command = body.get("command").is_some();
        let url = body.get("url").is_some();
        let ty = match body.get("type") {
            None => None,
            Some(t) => match t.as_str() {
                Some(s @ ("stdio" | "http")) => Some(s),
                Some("sse") => {
                    self.error(
                        &at.field("type"),
                        t.pos,
                        "type \"sse\" (the older HTTP+SSE transport) is not supported: the MCP client library (rmcp 3) has no client for it; use \"http\" (streamable HTTP) if the server offers it",
                    );
                    return None;
                }
                _ => {
                    self.error(
                        &at.field("type"),
                        t.pos,
                        format!("'type' must be \"stdio\" or \"http\"; found {}", shown(t)),
                    );
                    return None;
                }
            },
        };
        let name = at.name;
        if command && url {
            self.error(
                &at.path,
                e.key_pos,
                format!(
                    "server '{name}' has both 'command' (a stdio server) and 'url' (a remote server); keep one"
                ),
            );
            return None;
        }
        match (ty, command, url) {
            (Some("stdio"), true, _) | (None, true, _) => Some(true),
            (Some("http"), _, true) | (None, _, true) => Some(false),
            (Some("stdio"), ..) => {
                self.error(
                    &at.path,
                    e.key_pos,
                    format!("server '{name}' of type \"stdio\" needs 'command'"),
                );
                None
            }
            (Some(_), ..) => {
                self.error(
                    &at.path,
                    e.key_pos,
                    format!("server '{name}' of type \"http\" needs 'url'"),
                );
                None
            }
            (None, false, false) => {
                self.error(
                    &at.path,
                    e.key_pos,
                    format!(
                        "server '{name}' needs 'command' (a stdio server) or 'url' (a remote server)"
                    ),
                );
                None
            }
        }
    }

    fn foreign_key(&mut self, at: &At<'_>, k: &Entry, is_stdio: bool) {
        let (own, other, kind) = if is_stdio {
            (keys::STDIO, keys::HTTP, "a stdio server")
        } else {
            (keys::HTTP, keys::STDIO, "a remote server")
        };
        let message = if other.contains(&k.key.as_str()) {
            format!(
                "'{}' does not apply to {kind}; its keys are: {}",
                k.key,
                own.join(", ")
            )
        } else {
            format!(
                "unknown key '{}'; the known keys are: {}",
                k.key,
                own.join(", ")
            )
        };
        self.error(&at.field(&k.key), k.key_pos, message);
    }

    /// A string field with its references expanded.
    fn text(
        &mut self,
        at: &At<'_>,
        rel: &str,
        node: &Node,
        collected: &mut Collected,
    ) -> Option<String> {
        let field = at.field(rel);
        let Some(s) = node.as_str() else {
            self.error(
                &field,
                node.pos,
                format!("'{rel}' must be a string; found {}", kind(node)),
            );
            return None;
        };
        let mut expanded = Vec::new();
        let out = expand(s, self.lookup, &mut expanded);
        for v in &expanded {
            collected.redactor.add(v);
        }
        match out {
            Ok(v) => Some(v),
            Err(message) => {
                self.error(&field, node.pos, format!("'{rel}': {message}"));
                None
            }
        }
    }

    fn stdio(
        &mut self,
        at: &At<'_>,
        body: &Node,
        collected: &mut Collected,
    ) -> Option<StdioTransport> {
        let command = body
            .get("command")
            .and_then(|n| self.text(at, "command", n, collected).map(|c| (c, n.pos)));
        if let Some((c, pos)) = &command
            && c.trim().is_empty()
        {
            self.error(&at.field("command"), *pos, "'command' is empty");
        }
        let mut args = Some(Vec::new());
        if let Some(node) = body.get("args") {
            match node.as_seq() {
                Some(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let a = self.text(at, &format!("args.{i}"), item, collected);
                        match (a, args.as_mut()) {
                            (Some(a), Some(list)) => list.push(a),
                            _ => args = None,
                        }
                    }
                }
                None => {
                    self.error(
                        &at.field("args"),
                        node.pos,
                        format!("'args' must be an array of strings; found {}", kind(node)),
                    );
                    args = None;
                }
            }
        }
        let env = self.string_map(at, body, "env", collected);
        for v in env.iter().flatten() {
            collected.redactor.add(v.1.expose());
        }
        for e in body.get("env").and_then(Node::as_map).into_iter().flatten() {
            let k = &e.key;
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                self.error(
                    &at.field(&format!("env.{k}")),
                    e.key_pos,
                    format!(
                        "'{k}' is not an environment variable name: it is empty or holds '=' or NUL"
                    ),
                );
            }
        }
        let cwd = match body.get("cwd") {
            None => Some(None),
            Some(n) => self
                .text(at, "cwd", n, collected)
                .map(|c| Some(PathBuf::from(c))),
        };
        Some(StdioTransport {
            command: command?.0,
            args: args?,
            env: env?,
            cwd: cwd?,
            redactor: std::mem::take(&mut collected.redactor),
        })
    }

    fn http(
        &mut self,
        at: &At<'_>,
        body: &Node,
        collected: &mut Collected,
    ) -> Option<HttpTransport> {
        let url_node = body.get("url")?;
        let url = self.text(at, "url", url_node, collected);
        if let Some(u) = &url {
            // The expanded URL may carry a secret: messages name the field, not it.
            match reqwest::Url::parse(u) {
                Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {}
                Ok(parsed) => self.error(
                    &at.field("url"),
                    url_node.pos,
                    format!(
                        "'url' must be an http:// or https:// URL; its scheme is '{}'",
                        parsed.scheme()
                    ),
                ),
                Err(e) => self.error(
                    &at.field("url"),
                    url_node.pos,
                    format!("'url' is not a URL: {e}"),
                ),
            }
        }
        let headers = self.string_map(at, body, "headers", collected);
        if let Some(headers) = &headers {
            for (k, v) in headers {
                collected.redactor.add(v.expose());
                self.header(at, body, k, v);
            }
        }
        Some(HttpTransport {
            url: url?,
            headers: headers?,
            redactor: std::mem::take(&mut collected.redactor),
        })
    }

    fn header(&mut self, at: &At<'_>, body: &Node, name: &str, value: &Secret) {
        let field = at.field(&format!("headers.{name}"));
        let entry = body.get("headers").and_then(|n| n.entry(name));
        let key_pos = entry.map_or(Pos::default(), |e| e.key_pos);
        if HeaderName::from_bytes(name.as_bytes()).is_err() {
            self.error(
                &field,
                key_pos,
                format!("'{name}' is not a valid HTTP header name"),
            );
        } else if keys::RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            self.error(
                &field,
                key_pos,
                format!("header '{name}' is set by the MCP transport itself"),
            );
        }
        if HeaderValue::from_str(value.expose()).is_err() {
            let pos = entry.map_or(Pos::default(), |e| e.value.pos);
            self.error(
                &field,
                pos,
                format!(
                    "header '{name}' holds a character an HTTP header value cannot (a line break or another control character)"
                ),
            );
        }
    }

    /// `env` or `headers`: an object of strings, each expanded.
    fn string_map(
        &mut self,
        at: &At<'_>,
        body: &Node,
        key: &str,
        collected: &mut Collected,
    ) -> Option<Vec<(String, Secret)>> {
        let Some(node) = body.get(key) else {
            return Some(Vec::new());
        };
        let Some(entries) = node.as_map() else {
            self.error(
                &at.field(key),
                node.pos,
                format!("'{key}' must be an object of strings; found {}", kind(node)),
            );
            return None;
        };
        let mut out = Some(Vec::with_capacity(entries.len()));
        for e in entries {
            let v = self.text(at, &format!("{key}.{}", e.key), &e.value, collected);
            match (v, out.as_mut()) {
                (Some(v), Some(list)) => list.push((e.key.clone(), Secret::new(v))),
                _ => out = None,
            }
        }
        out
    }

    fn timeout(&mut self, at: &At<'_>, body: &Node) -> Option<Duration> {
        let Some(node) = body.get(keys::TIMEOUT_MS) else {
            return Some(DEFAULT_TIMEOUT);
        };
        let ms = match node.value {
            Value::Number(n) if n.fract() == 0.0 && (1.0..=MAX_TIMEOUT_MS as f64).contains(&n) => {
                // Whole and within range: exact.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Some(n as u64)
            }
            _ => None,
        };
        if ms.is_none() {
            self.error(
                &at.field(keys::TIMEOUT_MS),
                node.pos,
                format!(
                    "'timeoutMs' must be a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}; found {}",
                    shown(node)
                ),
            );
        }
        ms.map(Duration::from_millis)
    }

    fn paths(&mut self, at: &At<'_>, body: &Node) -> Option<Vec<ToolPaths>> {
        let Some(node) = body.get(keys::PATHS) else {
            return Some(Vec::new());
        };
        let Some(tools) = node.as_map() else {
            self.error(
                &at.field(keys::PATHS),
                node.pos,
                format!(
                    "'paths' must be an object, {{\"<tool>\": {{\"<argument>\": \"read\"}}}}; found {}",
                    kind(node)
                ),
            );
            return None;
        };
        let mut out = Some(Vec::with_capacity(tools.len()));
        for t in tools {
            let decl = self.tool_paths(at, t);
            match (decl, out.as_mut()) {
                (Some(d), Some(list)) => list.push(d),
                _ => out = None,
            }
        }
        out
    }

    fn tool_paths(&mut self, at: &At<'_>, t: &Entry) -> Option<ToolPaths> {
        let rel = format!("{}.{}", keys::PATHS, t.key);
        let Some(args) = t.value.as_map() else {
            self.error(
                &at.field(&rel),
                t.value.pos,
                format!(
                    "'{rel}' must be an object of the tool's path arguments, {{\"<argument>\": \"read\"}}; found {}",
                    kind(&t.value)
                ),
            );
            return None;
        };
        if args.is_empty() {
            self.error(
                &at.field(&rel),
                t.value.pos,
                format!("'{rel}' declares no path argument; omit it instead"),
            );
            return None;
        }
        let mut out = Some(Vec::with_capacity(args.len()));
        for a in args {
            let access = a.value.as_str().and_then(PathAccess::parse);
            if access.is_none() {
                let names: Vec<String> = PathAccess::ALL
                    .iter()
                    .map(|x| format!("\"{}\"", x.as_str()))
                    .collect();
                self.error(
                    &at.field(&format!("{rel}.{}", a.key)),
                    a.value.pos,
                    format!(
                        "'{rel}.{}' must be one of {}; found {}",
                        a.key,
                        names.join(", "),
                        shown(&a.value)
                    ),
                );
            }
            match (access, out.as_mut()) {
                (Some(x), Some(list)) => list.push((a.key.clone(), x)),
                _ => out = None,
            }
        }
        Some(ToolPaths {
            tool: t.key.clone(),
            args: out?,
        })
    }
}
