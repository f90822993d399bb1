use super::*;

fn lookup(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/u".to_string()),
        "TOKEN" => Some("tok-12345".to_string()),
        "NEWLINE" => Some("a\nb".to_string()),
        _ => None,
    }
}

/// Each diagnostic as `file:line:column field | message`.
fn check(text: &str, expected: &[&str]) {
    let (config, diags) = parse(text, ".mcp.json", &lookup);
    let got: Vec<String> = diags
        .iter()
        .map(|d| {
            format!(
                "{}:{}:{} {} | {}",
                d.file.as_deref().unwrap_or("-"),
                d.line.map_or("-".to_string(), |l| l.to_string()),
                d.column.map_or("-".to_string(), |c| c.to_string()),
                d.field.as_deref().unwrap_or("-"),
                d.message
            )
        })
        .collect();
    assert_eq!(got, expected, "for {text}");
    assert!(config.is_none(), "an error leaves no config: {text}");
}

fn good(text: &str) -> McpConfig {
    let (config, diags) = parse(text, ".mcp.json", &lookup);
    assert_eq!(diags, [], "for {text}");
    config.expect("a config")
}

#[test]
fn reads_stdio_and_http_servers_in_order() {
    let config = good(
        r#"{
  "mcpServers": {
    "fs": {
      "command": "npx",
      "args": ["-y", "server-filesystem", "${HOME}/work", "${ROOT:-.}"],
      "env": { "API_TOKEN": "${TOKEN}", "MODE": "ro" },
      "cwd": "tools",
      "timeoutMs": 5000,
      "paths": { "read_text_file": { "path": "read" }, "move_file": { "source": "remove", "destination": "write" } }
    },
    "tracker": {
      "type": "http",
      "url": "https://tracker.example.com/mcp?key=${TOKEN}",
      "headers": { "Authorization": "Bearer ${TOKEN}" }
    },
    "plain": { "type": "stdio", "command": "node" },
    "cursor-style": { "url": "http://127.0.0.1:3001/mcp" }
  }
}"#,
    );
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fs", "tracker", "plain", "cursor-style"]);

    let fs = &config.servers[0];
    assert_eq!(fs.timeout, Duration::from_millis(5000));
    let Transport::Stdio(s) = &fs.transport else {
        panic!("stdio")
    };
    assert_eq!(s.command, "npx");
    assert_eq!(s.args, ["-y", "server-filesystem", "/home/u/work", "."]);
    assert_eq!(s.env[0].0, "API_TOKEN");
    assert_eq!(s.env[0].1.expose(), "tok-12345");
    assert_eq!(s.cwd, Some(PathBuf::from("tools")));
    assert_eq!(
        fs.paths,
        [
            ToolPaths {
                tool: "read_text_file".into(),
                args: vec![("path".into(), PathAccess::Read)],
            },
            ToolPaths {
                tool: "move_file".into(),
                args: vec![
                    ("source".into(), PathAccess::Remove),
                    ("destination".into(), PathAccess::Write)
                ],
            },
        ]
    );

    let tracker = &config.servers[1];
    assert_eq!(tracker.timeout, DEFAULT_TIMEOUT);
    let Transport::Http(h) = &tracker.transport else {
        panic!("http")
    };
    assert_eq!(h.url, "https://tracker.example.com/mcp?key=tok-12345");
    assert_eq!(h.headers[0].1.expose(), "Bearer tok-12345");
    assert!(matches!(config.servers[2].transport, Transport::Stdio(_)));
    assert!(matches!(config.servers[3].transport, Transport::Http(_)));
    assert!(config.server("plain").is_some());
    assert!(config.server("nope").is_none());
}

#[test]
fn secrets_never_reach_debug_output() {
    let config = good(
        r#"{"mcpServers": {
  "a": {"command": "run", "args": ["--token=${TOKEN}"], "env": {"MODE": "read-only"}},
  "b": {"url": "https://x.example/mcp?k=${TOKEN}", "headers": {"X-Key": "literal-key"}}
}}"#,
    );
    let debug = format!("{config:?}");
    for secret in ["tok-12345", "read-only", "literal-key"] {
        assert!(!debug.contains(secret), "{secret} in {debug}");
    }
    assert!(debug.contains("--token=<redacted>"), "{debug}");
    assert!(
        debug.contains("https://x.example/mcp?k=<redacted>"),
        "{debug}"
    );
    let a = &config.servers[0];
    assert_eq!(
        a.redactor()
            .redact("spawn run --token=tok-12345 (read-only)"),
        "spawn run --token=<redacted> (<redacted>)"
    );
}

#[test]
fn an_empty_server_list_is_fine() {
    assert_eq!(good(r#"{"mcpServers": {}}"#).servers, []);
}

#[test]
fn text_that_is_not_a_config() {
    check(
        "{\"mcpServers\": {\"a\": {\"command\": \"x\",}}}",
        &[".mcp.json:1:38 - | invalid JSON: trailing comma"],
    );
    check(
        "",
        &[".mcp.json:1:0 - | invalid JSON: EOF while parsing a value"],
    );
    check(
        "[1]",
        &[
            r#".mcp.json:1:1 - | a .mcp.json file holds an object, {"mcpServers": {"<name>": {...}}}; found an array"#,
        ],
    );
    check(
        "{\"servers\": {}}",
        &[
            ".mcp.json:1:2 servers | unknown key 'servers'; the known keys are: mcpServers",
            r#".mcp.json:1:1 - | missing 'mcpServers', the servers by name: {"mcpServers": {"<name>": {...}}}"#,
        ],
    );
    check(
        "{\"mcpServers\": []}",
        &[
            ".mcp.json:1:16 mcpServers | 'mcpServers' must be an object of servers by name; found an array",
        ],
    );
    check(
        "{\"mcpServers\": {\"a\": {\"command\": \"x\"},\n \"a\": {}}}",
        &[".mcp.json:2:2 - | duplicate key 'a' in one object"],
    );
}

#[test]
fn server_names() {
    check(
        r#"{"mcpServers": {"a.b": {"command": "x"}, "a__b": {"command": "x"}, "ab_": {"command": "x"}, "abcdefghijklmnopqrstuvwxyz": {"command": "x"}}}"#,
        &[
            ".mcp.json:1:17 mcpServers.a.b | server name 'a.b' holds '.'; a server name may hold only letters, digits, '_' and '-'",
            ".mcp.json:1:42 mcpServers.a__b | server name 'a__b' must not contain '__': it separates the server from the tool in mcp__<server>__<tool>",
            ".mcp.json:1:68 mcpServers.ab_ | server name 'ab_' must not end with '_': the tool names mcp__<server>__<tool> could not be split",
            ".mcp.json:1:93 mcpServers.abcdefghijklmnopqrstuvwxyz | server name 'abcdefghijklmnopqrstuvwxyz' has 26 characters; at most 25, so that mcp__<server>__<tool> keeps 32 of its 64 characters for the tool",
        ],
    );
    check(
        r#"{"mcpServers": {"a": "npx server"}}"#,
        &[".mcp.json:1:22 mcpServers.a | server 'a' must be an object; found a string"],
    );
}

#[test]
fn transports() {
    check(
        r#"{"mcpServers": {"a": {}}}"#,
        &[
            ".mcp.json:1:17 mcpServers.a | server 'a' needs 'command' (a stdio server) or 'url' (a remote server)",
        ],
    );
    check(
        r#"{"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}"#,
        &[
            ".mcp.json:1:17 mcpServers.a | server 'a' has both 'command' (a stdio server) and 'url' (a remote server); keep one",
        ],
    );
    check(
        r#"{"mcpServers": {"a": {"type": "http", "headers": {}}}}"#,
        &[r#".mcp.json:1:17 mcpServers.a | server 'a' of type "http" needs 'url'"#],
    );
    check(
        r#"{"mcpServers": {"a": {"type": "stdio", "args": []}}}"#,
        &[r#".mcp.json:1:17 mcpServers.a | server 'a' of type "stdio" needs 'command'"#],
    );
    check(
        r#"{"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}"#,
        &[
            r#".mcp.json:1:31 mcpServers.a.type | type "sse" (the older HTTP+SSE transport) is not supported: the MCP client library (rmcp 3) has no client for it; use "http" (streamable HTTP) if the server offers it"#,
        ],
    );
    check(
        r#"{"mcpServers": {"a": {"type": "ws", "url": "ws://h"}, "b": {"type": 3, "command": "x"}}}"#,
        &[
            r#".mcp.json:1:31 mcpServers.a.type | 'type' must be "stdio" or "http"; found "ws""#,
            r#".mcp.json:1:69 mcpServers.b.type | 'type' must be "stdio" or "http"; found 3"#,
        ],
    );
    check(
        r#"{"mcpServers": {"a": {"command": "x", "headers": {}, "disabled": true}, "b": {"url": "http://h/mcp", "args": []}}}"#,
        &[
            ".mcp.json:1:39 mcpServers.a.headers | 'headers' does not apply to a stdio server; its keys are: type, command, args, env, cwd, timeoutMs, paths",
            ".mcp.json:1:54 mcpServers.a.disabled | unknown key 'disabled'; the known keys are: type, command, args, env, cwd, timeoutMs, paths",
            ".mcp.json:1:102 mcpServers.b.args | 'args' does not apply to a remote server; its keys are: type, url, headers, timeoutMs, paths",
        ],
    );
}

#[test]
fn stdio_fields() {
    check(
        r#"{"mcpServers": {"a": {"command": ["npx"], "args": "-y", "env": {"A": 1, "B=C": "x"}, "cwd": false}}}"#,
        &[
            ".mcp.json:1:34 mcpServers.a.command | 'command' must be a string; found an array",
            ".mcp.json:1:51 mcpServers.a.args | 'args' must be an array of strings; found a string",
            ".mcp.json:1:70 mcpServers.a.env.A | 'env.A' must be a string; found a number",
            ".mcp.json:1:73 mcpServers.a.env.B=C | 'B=C' is not an environment variable name: it is empty or holds '=' or NUL",
            ".mcp.json:1:93 mcpServers.a.cwd | 'cwd' must be a string; found a boolean",
        ],
    );
    check(
        r#"{"mcpServers": {"a": {"command": " ", "args": ["ok", 8080, null]}}}"#,
        &[
            ".mcp.json:1:34 mcpServers.a.command | 'command' is empty",
            ".mcp.json:1:54 mcpServers.a.args.1 | 'args.1' must be a string; found a number",
            ".mcp.json:1:60 mcpServers.a.args.2 | 'args.2' must be a string; found null",
        ],
    );
}

#[test]
fn references() {
    check(
        r#"{"mcpServers": {"a": {"command": "${BIN}", "args": ["--key", "${API_KEY}"], "env": {"K": "${K:-ok}", "J": "${J}"}, "cwd": "${1X}"}}}"#,
        &[
            ".mcp.json:1:34 mcpServers.a.command | 'command': variable ${BIN} is not set and has no default (set it in the environment or the workspace's .env, or write ${BIN:-default})",
            ".mcp.json:1:62 mcpServers.a.args.1 | 'args.1': variable ${API_KEY} is not set and has no default (set it in the environment or the workspace's .env, or write ${API_KEY:-default})",
            ".mcp.json:1:107 mcpServers.a.env.J | 'env.J': variable ${J} is not set and has no default (set it in the environment or the workspace's .env, or write ${J:-default})",
            ".mcp.json:1:123 mcpServers.a.cwd | 'cwd': '${1X}' is not a variable reference: write ${NAME} or ${NAME:-default}, NAME of letters, digits and '_', not starting with a digit",
        ],
    );
    check(
        r#"{"mcpServers": {"r": {"url": "${BASE}/mcp", "headers": {"Authorization": "Bearer ${SECRET}"}}}}"#,
        &[
            ".mcp.json:1:30 mcpServers.r.url | 'url': variable ${BASE} is not set and has no default (set it in the environment or the workspace's .env, or write ${BASE:-default})",
            ".mcp.json:1:74 mcpServers.r.headers.Authorization | 'headers.Authorization': variable ${SECRET} is not set and has no default (set it in the environment or the workspace's .env, or write ${SECRET:-default})",
        ],
    );
}

#[test]
fn remote_fields() {
    check(
        r#"{"mcpServers": {"r": {"url": "ftp://h/x${TOKEN}", "headers": {"Accept": "x", "Bad Name": "x", "X-Line": "${NEWLINE}"}}, "s": {"url": "not a url"}}}"#,
        &[
            ".mcp.json:1:30 mcpServers.r.url | 'url' must be an http:// or https:// URL; its scheme is 'ftp'",
            ".mcp.json:1:63 mcpServers.r.headers.Accept | header 'Accept' is set by the MCP transport itself",
            ".mcp.json:1:78 mcpServers.r.headers.Bad Name | 'Bad Name' is not a valid HTTP header name",
            ".mcp.json:1:105 mcpServers.r.headers.X-Line | header 'X-Line' holds a character an HTTP header value cannot (a line break or another control character)",
            ".mcp.json:1:134 mcpServers.s.url | 'url' is not a URL: relative URL without a base",
        ],
    );
    check(
        r#"{"mcpServers": {"r": {"url": "http://h/mcp", "headers": ["Authorization: x"]}}}"#,
        &[
            ".mcp.json:1:57 mcpServers.r.headers | 'headers' must be an object of strings; found an array",
        ],
    );
}

#[test]
fn harness_keys() {
    check(
        r#"{"mcpServers": {"a": {"command": "x", "timeoutMs": 0}, "b": {"command": "x", "timeoutMs": 1.5}, "c": {"command": "x", "timeoutMs": "100"}, "d": {"command": "x", "timeoutMs": 86400001}}}"#,
        &[
            ".mcp.json:1:52 mcpServers.a.timeoutMs | 'timeoutMs' must be a whole number of milliseconds from 1 to 86400000; found 0",
            ".mcp.json:1:91 mcpServers.b.timeoutMs | 'timeoutMs' must be a whole number of milliseconds from 1 to 86400000; found 1.5",
            r#".mcp.json:1:132 mcpServers.c.timeoutMs | 'timeoutMs' must be a whole number of milliseconds from 1 to 86400000; found "100""#,
            ".mcp.json:1:175 mcpServers.d.timeoutMs | 'timeoutMs' must be a whole number of milliseconds from 1 to 86400000; found 86400001",
        ],
    );
    check(
        r#"{"mcpServers": {"a": {"command": "x", "paths": ["path"]}, "b": {"command": "x", "paths": {"read": "path", "none": {}, "w": {"path": "readwrite", "to": 1}}}}}"#,
        &[
            r#".mcp.json:1:48 mcpServers.a.paths | 'paths' must be an object, {"<tool>": {"<argument>": "read"}}; found an array"#,
            r#".mcp.json:1:99 mcpServers.b.paths.read | 'paths.read' must be an object of the tool's path arguments, {"<argument>": "read"}; found a string"#,
            ".mcp.json:1:115 mcpServers.b.paths.none | 'paths.none' declares no path argument; omit it instead",
            r#".mcp.json:1:133 mcpServers.b.paths.w.path | 'paths.w.path' must be one of "read", "list", "search", "write", "remove", "execute"; found "readwrite""#,
            r#".mcp.json:1:152 mcpServers.b.paths.w.to | 'paths.w.to' must be one of "read", "list", "search", "write", "remove", "execute"; found 1"#,
        ],
    );
}

#[test]
fn one_bad_server_fails_the_file_and_the_others_are_still_checked() {
    check(
        r#"{"mcpServers": {"ok": {"command": "x"}, "bad": {"command": "x", "timeoutMs": -1}, "also": {"url": 1}}}"#,
        &[
            ".mcp.json:1:78 mcpServers.bad.timeoutMs | 'timeoutMs' must be a whole number of milliseconds from 1 to 86400000; found -1",
            ".mcp.json:1:99 mcpServers.also.url | 'url' must be a string; found a number",
        ],
    );
}

#[test]
fn path_access_names_round_trip() {
    for a in PathAccess::ALL {
        assert_eq!(PathAccess::parse(a.as_str()), Some(a));
    }
    assert_eq!(PathAccess::parse("READ"), None);
}
