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

/// Where the path arguments of a tool that reads the machine's own files (an MCP server's)
/// live: such a tool is given real paths, absolute or relative to its working directory,
/// where the runtime's tools are given workspace paths (`/` is the workspace root). The
/// kernel decides on the workspace path a real path names ([`NativeBase::view`]), and the
/// tool is given that decided path back as a real one ([`NativeBase::native`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeBase {
    /// The workspace root, absolute and `/`-separated, with no trailing `/`: first as the
    /// tool is given paths, then any other spelling of it (its links resolved).
    pub roots: Vec<String>,
    /// The canonical workspace path a relative path is read from (`""`: the root), or
    /// `None` when the tool's working directory is outside the workspace.
    pub cwd: Option<String>,
}

impl NativeBase {
    /// The canonical workspace path `raw` names, or `None` when it names something outside
    /// the workspace (above the root, under another directory, or `~`, the home folder).
    /// Backslashes count as separators.
    pub fn view(&self, raw: &str) -> Option<String> {
        let path = raw.replace('\\', "/");
        if path.starts_with('~') {
            return None;
        }
        let drive = path.as_bytes().get(1) == Some(&b':') && path.as_bytes().get(2) == Some(&b'/');
        let rel = if path.starts_with('/') || drive {
            self.roots.iter().find_map(|r| {
                if path == *r {
                    Some(String::new())
                } else {
                    path.strip_prefix(r.as_str())
                        .and_then(|t| t.strip_prefix('/'))
                        .map(str::to_string)
                }
            })?
        } else {
            match self.cwd.as_deref()? {
                "" => path,
                cwd => format!("{cwd}/{path}"),
            }
        };
        let c = canonicalize(&rel);
        (!c.escapes).then_some(c.path)
    }

    /// The real path of the canonical workspace path `view`.
    pub fn native(&self, view: &str) -> String {
        let root = self.roots.first().map_or("", String::as_str);
        if view.is_empty() {
            root.to_string()
        } else {
            format!("{root}/{view}")
        }
    }
}

/// `args` with each path of the arguments `decl` declares rewritten by `map` (a string, or
/// each string of a list); the first path `map` refuses is returned as written.
fn map_paths(
    decl: &[PathArg],
    mut args: Value,
    map: impl Fn(&str) -> Option<String>,
) -> Result<Value, String> {
    let Value::Object(fields) = &mut args else {
        return Ok(args);
    };
    for p in decl {
        let mut one = |v: &mut Value| -> Result<(), String> {
            if let Value::String(s) = v {
                *s = map(s).ok_or_else(|| s.clone())?;
            }
            Ok(())
        };
        match fields.get_mut(&p.name) {
            Some(Value::Array(items)) => items.iter_mut().try_for_each(&mut one)?,
            Some(v) => one(v)?,
            None => {}
        }
    }
    Ok(args)
}

/// Every tool's declared path arguments: the built-ins plus the host's, built
/// once so a decision only looks them up.
#[derive(Debug, Clone)]
pub struct ToolPaths {
    table: BTreeMap<String, Vec<PathArg>>,
    /// The tools given real paths, and where those live.
    native: BTreeMap<String, NativeBase>,
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
        ToolPaths {
            table,
            native: BTreeMap::new(),
        }
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

    /// Adds the declaration of a tool given real paths under `base` (an MCP server's).
    pub fn declare_native(
        &mut self,
        tool: &str,
        args: &[(String, String)],
        base: NativeBase,
    ) -> Result<(), ToolPathsError> {
        self.declare(tool, args)?;
        self.native.insert(tool.to_string(), base);
        Ok(())
    }

    /// Takes the declarations of `from`'s tools given real paths, but those `except` names.
    pub fn merge_native(&mut self, from: &ToolPaths, except: &dyn Fn(&str) -> bool) {
        for (tool, base) in from.native.iter().filter(|(t, _)| !except(t)) {
            if let Some(decl) = from.table.get(tool) {
                self.table.insert(tool.clone(), decl.clone());
                self.native.insert(tool.clone(), base.clone());
            }
        }
    }

    /// Where `tool`'s paths live, when it is given real paths.
    pub fn native(&self, tool: &str) -> Option<&NativeBase> {
        self.native.get(tool)
    }

    /// The arguments of a call of a tool given real paths, each declared path rewritten as
    /// the workspace path it names, for the kernel to decide on; the first path outside the
    /// workspace is returned as written instead. Other tools' arguments are returned as
    /// they are.
    pub fn workspace_args(&self, tool: &str, args: Value) -> Result<Value, String> {
        match (self.native.get(tool), self.table.get(tool)) {
            (Some(base), Some(decl)) => map_paths(decl, args, |p| base.view(p)),
            _ => Ok(args),
        }
    }

    /// The decided arguments of a call of a tool given real paths, each declared path
    /// (a workspace path) rewritten as the real path the tool is given.
    pub fn native_args(&self, tool: &str, args: Value) -> Value {
        match (self.native.get(tool), self.table.get(tool)) {
            (Some(base), Some(decl)) => {
                let back = map_paths(decl, args.clone(), |p| {
                    Some(base.native(&canonicalize(p).path))
                });
                back.unwrap_or(args)
            }
            _ => args,
        }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_real_path_names_the_workspace_path_under_one_of_the_roots_spellings() {
        let base = NativeBase {
            roots: vec!["/ws".into(), "/private/ws".into()],
            cwd: Some("tools".into()),
        };
        for (raw, want) in [
            ("/ws/notes/a.txt", Some("notes/a.txt")),
            ("/private/ws/notes/../b.txt", Some("b.txt")),
            ("/ws", Some("")),
            ("a.txt", Some("tools/a.txt")),
            ("../a.txt", Some("a.txt")),
            ("../../a.txt", None),
            ("/ws/../etc/passwd", None),
            ("/wsx/a.txt", None),
            ("/etc/passwd", None),
            ("~/secret", None),
            ("C:/ws/a.txt", None),
            ("\\ws\\notes\\a.txt", Some("notes/a.txt")),
        ] {
            assert_eq!(base.view(raw).as_deref(), want, "{raw}");
        }
        let outside = NativeBase {
            roots: vec!["/ws".into()],
            cwd: None,
        };
        assert_eq!(outside.view("a.txt"), None);
        assert_eq!(outside.view("/ws/a.txt").as_deref(), Some("a.txt"));
        assert_eq!(base.native("notes/a.txt"), "/ws/notes/a.txt");
        assert_eq!(base.native(""), "/ws");
    }

    #[test]
    fn a_native_tools_arguments_go_to_workspace_paths_and_back() {
        let mut paths = ToolPaths::new();
        let base = NativeBase {
            roots: vec!["/ws".into()],
            cwd: Some(String::new()),
        };
        paths
            .declare_native(
                "mcp__fs__move",
                &[
                    ("from".into(), "remove".into()),
                    ("to".into(), "write".into()),
                ],
                base,
            )
            .unwrap();
        let view = paths
            .workspace_args(
                "mcp__fs__move",
                json!({ "from": "/ws/a", "to": ["b", "/ws/c/../d"], "n": 1 }),
            )
            .unwrap();
        assert_eq!(view, json!({ "from": "a", "to": ["b", "d"], "n": 1 }));
        assert_eq!(
            paths.native_args("mcp__fs__move", view),
            json!({ "from": "/ws/a", "to": ["/ws/b", "/ws/d"], "n": 1 })
        );
        assert_eq!(
            paths.workspace_args("mcp__fs__move", json!({ "from": "/etc/x" })),
            Err("/etc/x".to_string())
        );
        // A tool given workspace paths is left alone.
        assert_eq!(
            paths.workspace_args("read_file", json!({ "file_path": "/etc/x" })),
            Ok(json!({ "file_path": "/etc/x" }))
        );
    }
}
