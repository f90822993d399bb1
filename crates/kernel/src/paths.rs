//! Declared path arguments: which arguments of a tool name paths, and how the
//! call uses each (`read`, `list`, `search`, `write`, `remove`, `execute`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::canonical::{Canonical, canonicalize};

/// How a call uses a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Reads the file.
    Read,
    /// Lists the directory.
    List,
    /// Searches under it.
    Search,
    /// Writes it.
    Write,
    /// Removes it.
    Remove,
    /// Executes it.
    Execute,
}

impl Access {
    /// Parses an access name.
    pub fn parse(s: &str) -> Option<Access> {
        Some(match s {
            "read" => Access::Read,
            "list" => Access::List,
            "search" => Access::Search,
            "write" => Access::Write,
            "remove" => Access::Remove,
            "execute" => Access::Execute,
            _ => return None,
        })
    }
    /// True for `write` and `remove`.
    pub fn is_mutating(self) -> bool {
        matches!(self, Access::Write | Access::Remove)
    }
}

/// One declared path argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathArg {
    /// The argument name.
    pub name: String,
    /// How the call uses it.
    pub access: Access,
    /// An argument read instead when this one is absent (built-ins only).
    pub alias: Option<&'static str>,
}

/// The built-in declarations, in declaration order.
fn built_in(tool: &str) -> Option<Vec<PathArg>> {
    let one = |name: &str, access, alias| {
        vec![PathArg {
            name: name.to_string(),
            access,
            alias,
        }]
    };
    Some(match tool {
        "read_file" => one("file_path", Access::Read, Some("path")),
        "write_file" | "edit_file" => one("file_path", Access::Write, Some("path")),
        "ls" => one("path", Access::List, Some("file_path")),
        "glob" | "grep" => one("path", Access::Search, Some("file_path")),
        "archmax_run" => one("file_path", Access::Execute, Some("path")),
        "remove_file" => one("file_path", Access::Remove, None),
        "copy_file" => vec![
            PathArg {
                name: "source".into(),
                access: Access::Read,
                alias: None,
            },
            PathArg {
                name: "destination".into(),
                access: Access::Write,
                alias: None,
            },
        ],
        "move_file" => vec![
            PathArg {
                name: "source".into(),
                access: Access::Remove,
                alias: None,
            },
            PathArg {
                name: "destination".into(),
                access: Access::Write,
                alias: None,
            },
        ],
        _ => return None,
    })
}

/// Why a host declaration is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolPathsError {
    /// A built-in tool was redeclared.
    #[error(
        "Tool '{0}' is a built-in tool; its path arguments are declared by the runtime and cannot be redeclared."
    )]
    BuiltIn(String),
    /// A declaration with no argument.
    #[error("Tool '{0}' declares no path argument; omit its declaration instead.")]
    Empty(String),
    /// An access that does not exist.
    #[error(
        "Tool '{tool}' declares argument '{arg}' with access '{access}'; the accesses are 'read', 'list', 'search', 'write', 'remove', 'execute'."
    )]
    UnknownAccess {
        /// The tool.
        tool: String,
        /// The argument.
        arg: String,
        /// What was written.
        access: String,
    },
}

/// Every tool's declared path arguments: the built-ins plus the host's, built
/// once so a decision only looks them up.
#[derive(Debug, Clone)]
pub struct ToolPaths {
    table: BTreeMap<String, Vec<PathArg>>,
}

/// The built-in tools that declare path arguments.
const BUILT_IN_TOOLS: [&str; 10] = [
    "read_file",
    "write_file",
    "edit_file",
    "ls",
    "glob",
    "grep",
    "archmax_run",
    "remove_file",
    "copy_file",
    "move_file",
];

impl Default for ToolPaths {
    fn default() -> Self {
        let table = BUILT_IN_TOOLS
            .iter()
            .filter_map(|t| built_in(t).map(|d| (t.to_string(), d)))
            .collect();
        ToolPaths { table }
    }
}

impl ToolPaths {
    /// The built-ins only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a host tool's declaration (`{ arg: access }`, in order).
    pub fn declare(&mut self, tool: &str, args: &[(String, String)]) -> Result<(), ToolPathsError> {
        if built_in(tool).is_some() {
            return Err(ToolPathsError::BuiltIn(tool.to_string()));
        }
        if args.is_empty() {
            return Err(ToolPathsError::Empty(tool.to_string()));
        }
        let mut out = Vec::with_capacity(args.len());
        for (arg, access) in args {
            let a = Access::parse(access).ok_or_else(|| ToolPathsError::UnknownAccess {
                tool: tool.to_string(),
                arg: arg.clone(),
                access: access.clone(),
            })?;
            out.push(PathArg {
                name: arg.clone(),
                access: a,
                alias: None,
            });
        }
        self.table.insert(tool.to_string(), out);
        Ok(())
    }

    /// The declaration of `tool`, if it has one.
    pub fn of(&self, tool: &str) -> Option<&[PathArg]> {
        self.table.get(tool).map(Vec::as_slice)
    }

    /// True when `arg` names a path of `tool` (an undeclared tool's `file_path`
    /// counts; a built-in's alias counts).
    pub fn is_path_arg(&self, tool: &str, arg: &str) -> bool {
        match self.of(tool) {
            Some(decl) => decl.iter().any(|p| p.name == arg || p.alias == Some(arg)),
            None => arg == "file_path",
        }
    }
}

/// One path a call names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallPath {
    /// The declared argument it came from.
    pub arg: String,
    /// How the call uses it.
    pub access: Access,
    /// The value as written.
    pub raw: String,
    /// The value canonicalized.
    pub canonical: Canonical,
}

/// The paths a call names, in declaration order (list elements in order), or the
/// first declared argument that holds something other than a path or a list of paths.
pub fn call_paths(decl: &[PathArg], args: &Value) -> Result<Vec<CallPath>, String> {
    let mut out = Vec::new();
    for p in decl {
        let value = match args.get(&p.name) {
            Some(v) if !v.is_null() => Some(v),
            _ => p.alias.and_then(|a| args.get(a)).filter(|v| !v.is_null()),
        };
        let Some(value) = value else { continue };
        let mut push = |s: &str| {
            out.push(CallPath {
                arg: p.name.clone(),
                access: p.access,
                raw: s.to_string(),
                canonical: canonicalize(s),
            })
        };
        match value {
            Value::String(s) => push(s),
            Value::Array(items) if items.iter().all(Value::is_string) => {
                for s in items.iter().filter_map(Value::as_str) {
                    push(s);
                }
            }
            _ => return Err(p.name.clone()),
        }
    }
    Ok(out)
}
