//! A server's tools as the harness offers them: each under its full name
//! `mcp__<server>__<tool>`, with its schema and the compiled argument check.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::names;
use crate::schema::ArgumentCheck;

/// One tool of a server.
pub struct ToolInfo {
    /// `mcp__<server>__<tool>`, what the model calls.
    pub name: String,
    /// The tool's name as the server lists it (what `tools/call` sends).
    pub tool: String,
    /// Its human title, when given.
    pub title: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its `inputSchema` (JSON Schema).
    pub input_schema: Value,
    /// Its `outputSchema`, when given.
    pub output_schema: Option<Value>,
    /// Its annotations (`readOnlyHint`, `destructiveHint`, ...): hints the
    /// specification says a client must not trust for security decisions.
    pub annotations: Option<Value>,
    check: OnceLock<ArgumentCheck>,
}

impl ToolInfo {
    /// Checks `args` against the input schema (compiled on first use).
    pub(crate) fn check(&self, args: &Value) -> Result<(), String> {
        self.check
            .get_or_init(|| ArgumentCheck::compile(&self.input_schema))
            .check(args)
    }
}

impl fmt::Debug for ToolInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolInfo")
            .field("name", &self.name)
            .field("tool", &self.tool)
            .field("title", &self.title)
            .field("description", &self.description)
            .field("input_schema", &self.input_schema)
            .finish_non_exhaustive()
    }
}

/// A tool the server lists that is not offered, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedTool {
    /// The tool's name as the server lists it.
    pub tool: String,
    /// Why.
    pub reason: String,
}

/// A server's tool list, as last read (refreshed after `tools/list_changed`).
#[derive(Debug)]
pub struct ServerTools {
    /// The server.
    pub server: String,
    /// The tools offered, in the server's order.
    pub tools: Vec<ToolInfo>,
    /// The tools not offered.
    pub skipped: Vec<SkippedTool>,
    by_tool: HashMap<String, usize>,
    by_name: HashMap<String, usize>,
}

impl ServerTools {
    /// The tool the server calls `tool`.
    pub fn tool(&self, tool: &str) -> Option<&ToolInfo> {
        self.by_tool.get(tool).and_then(|&i| self.tools.get(i))
    }

    /// The tool whose full name is `name`.
    pub fn by_name(&self, name: &str) -> Option<&ToolInfo> {
        self.by_name.get(name).and_then(|&i| self.tools.get(i))
    }

    /// Names the server's tools: a tool whose name needed no mapping keeps it; a
    /// mapped name that meets another tool's, a name over 64 characters and a
    /// name listed twice are skipped.
    pub(crate) fn build(server: &str, listed: Vec<rmcp::model::Tool>) -> ServerTools {
        let mut skipped = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut named: Vec<(rmcp::model::Tool, String)> = Vec::new();
        for t in listed {
            let tool = t.name.to_string();
            if !seen.insert(tool.clone()) {
                skipped.push(SkippedTool {
                    tool,
                    reason: "the server lists it twice".to_string(),
                });
                continue;
            }
            match names::tool_name(server, &tool) {
                Some(name) => named.push((t, name)),
                None => skipped.push(SkippedTool {
                    reason: if tool.is_empty() {
                        "the server lists a tool with an empty name".to_string()
                    } else {
                        format!(
                            "its name {}{server}{}{} would pass the {} characters a model's tool name may have",
                            names::PREFIX,
                            names::SEPARATOR,
                            names::map_tool(&tool),
                            names::MAX_TOOL_NAME
                        )
                    },
                    tool,
                }),
            }
        }
        // How many tools hold each full name. Names are unique by now, so at most
        // one of them holds it unmapped: that one keeps it.
        let mut holders: HashMap<String, usize> = HashMap::new();
        for (_, name) in &named {
            *holders.entry(name.clone()).or_default() += 1;
        }
        let mut tools = Vec::new();
        for (t, name) in named {
            let exact = names::map_tool(&t.name) == t.name;
            if holders.get(&name).copied().unwrap_or(1) > 1 && !exact {
                skipped.push(SkippedTool {
                    tool: t.name.to_string(),
                    reason: format!(
                        "its name becomes {name}, which another of the server's tools has too"
                    ),
                });
                continue;
            }
            tools.push(ToolInfo {
                name,
                tool: t.name.to_string(),
                title: t.title.clone(),
                description: t.description.as_ref().map(|d| d.to_string()),
                input_schema: Value::Object((*t.input_schema).clone()),
                output_schema: t
                    .output_schema
                    .as_ref()
                    .map(|s| Value::Object((**s).clone())),
                annotations: t
                    .annotations
                    .as_ref()
                    .and_then(|a| serde_json::to_value(a).ok()),
                check: OnceLock::new(),
            });
        }
        let by_tool = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tool.clone(), i))
            .collect();
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        ServerTools {
            server: server.to_string(),
            tools,
            skipped,
            by_tool,
            by_name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools(names: &[&str]) -> Vec<rmcp::model::Tool> {
        names
            .iter()
            .map(|n| {
                serde_json::from_value(json!({"name": n, "inputSchema": {"type": "object"}}))
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn exact_names_win_and_mapped_collisions_are_skipped() {
        let long = "t".repeat(60);
        let built = ServerTools::build(
            "srv",
            tools(&["a.b", "a_b", "x/y", "x.y", "get-sum", &long, "get-sum"]),
        );
        let offered: Vec<&str> = built.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(offered, ["mcp__srv__a_b", "mcp__srv__get-sum"]);
        assert_eq!(
            built.tool("a_b").map(|t| t.name.as_str()),
            Some("mcp__srv__a_b")
        );
        assert_eq!(
            built.by_name("mcp__srv__get-sum").map(|t| t.tool.as_str()),
            Some("get-sum")
        );
        let skipped: Vec<(&str, &str)> = built
            .skipped
            .iter()
            .map(|s| (s.tool.as_str(), s.reason.as_str()))
            .collect();
        let too_long = format!(
            "its name mcp__srv__{long} would pass the 64 characters a model's tool name may have"
        );
        assert_eq!(
            skipped,
            [
                (long.as_str(), too_long.as_str()),
                ("get-sum", "the server lists it twice"),
                (
                    "a.b",
                    "its name becomes mcp__srv__a_b, which another of the server's tools has too"
                ),
                (
                    "x/y",
                    "its name becomes mcp__srv__x_y, which another of the server's tools has too"
                ),
                (
                    "x.y",
                    "its name becomes mcp__srv__x_y, which another of the server's tools has too"
                ),
            ]
        );
    }
}
