//! `archmax tools [workflow] [--json]`: every tool the workspace can reach (the runtime's
//! own, sub-workflows, the host tools the workflow names, the tools of its MCP servers,
//! listed by connecting to them) and how each state stands toward it: a governance matrix a
//! reviewer reads before a workflow goes live.

use std::sync::Arc;

use archmax_kernel::{DenyBy, Standing};
use serde_json::{Value, json};

use crate::args::Parsed;
use crate::assembly::{NoModel, failure};
use crate::workspace::{resolve_root, workflow_slot};
use crate::{Cli, Failure};

/// One row: a tool, where it comes from, and each state's standing.
struct Row {
    name: String,
    source: &'static str,
    server: Option<String>,
    standings: Vec<(String, Standing)>,
}

/// Prints the matrix; a workflow that does not load is the loader's error.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    let given = positionals.first().and_then(Option::as_deref);
    let workflow = workflow_slot(given, &root).map_err(Failure::Usage)?;
    cli.load_root_env(&root);
    let json = parsed.flag("json");
    if !json {
        cli.header(&workflow, &root, None);
    }
    let harness = crate::live::builder(cli, &root, &workflow)
        .model(archmax_machine::ModelSource::Given(Arc::new(NoModel)))
        .build()
        .map_err(|e| failure(&e))?;
    let policy = harness.policy();
    let states: Vec<String> = policy.states().into_iter().map(str::to_string).collect();
    // The MCP servers are asked for their tools: a reviewer sees what they offer.
    let mut servers: Vec<(String, Result<usize, String>)> = Vec::new();
    if let Some(mcp) = harness.mcp_tools() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Failure::Crash(format!("cannot start the async runtime: {e}")))?;
        for server in mcp.servers() {
            let entry = format!("{}{server}", archmax_spec::grammar::MCP_PREFIX);
            let problems = rt.block_on(mcp.list(std::slice::from_ref(&entry)));
            let found = mcp.expand(&entry).len();
            servers.push((
                server,
                match problems.into_iter().next() {
                    Some(p) => Err(p),
                    None => Ok(found),
                },
            ));
        }
        rt.block_on(mcp.pool().shutdown());
    }
    let standing = |tool: &str| -> Vec<(String, Standing)> {
        states
            .iter()
            .filter_map(|s| policy.standing(s, tool).map(|st| (s.clone(), st)))
            .collect()
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut push =
        |rows: &mut Vec<Row>, name: String, source: &'static str, server: Option<String>| {
            if !seen.contains(&name) {
                seen.push(name.clone());
                rows.push(Row {
                    standings: standing(&name),
                    name,
                    source,
                    server,
                });
            }
        };
    for b in &archmax_kernel::tools::BUILTINS {
        push(&mut rows, b.name.to_string(), "runtime", None);
    }
    if let Some(mcp) = harness.mcp_tools() {
        for t in mcp.listed() {
            push(&mut rows, t.name.clone(), "mcp", Some(t.server.clone()));
        }
    }
    for name in policy.named_tools() {
        let (source, server) = if name.starts_with(archmax_kernel::tools::WORKFLOW_TOOL_PREFIX) {
            ("sub-workflow", None)
        } else if let Some(server) = archmax_spec::grammar::mcp_server(&name) {
            // A server grant (or a tool the server did not list) keeps its own row.
            ("mcp", Some(server.to_string()))
        } else {
            ("host", None)
        };
        push(&mut rows, name, source, server);
    }
    if json {
        let doc = json!({
            "workflow": workflow,
            "states": states,
            "tools": rows.iter().map(|r| {
                let mut o = json!({
                    "name": r.name,
                    "source": r.source,
                    "states": r.standings.iter().map(|(s, st)| (s.clone(), serde_json::to_value(st).unwrap_or(Value::Null))).collect::<serde_json::Map<_, _>>(),
                });
                if let Some(server) = &r.server {
                    o["server"] = Value::String(server.clone());
                }
                o
            }).collect::<Vec<_>>(),
            "servers": servers.iter().map(|(name, r)| match r {
                Ok(n) => json!({ "name": name, "tools": n }),
                Err(e) => json!({ "name": name, "error": e }),
            }).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::Crash(format!("cannot encode the matrix: {e}")))?;
        cli.out(&format!("{text}\n"));
        return Ok(0);
    }
    cli.out(&render(&states, &rows, &servers));
    Ok(0)
}

/// One cell's word.
fn word(st: &Standing) -> &'static str {
    match st {
        Standing::Always => "always",
        Standing::Granted {
            guard: None,
            except: None,
        } => "allowed",
        Standing::Granted { .. } => "guarded",
        Standing::Forbidden {
            by: DenyBy::Workflow,
        } => "denied*",
        Standing::Forbidden { by: DenyBy::State } => "denied",
        Standing::NotGranted => "·",
    }
}

/// The matrix as text: a column per state, then the guards and the servers.
fn render(states: &[String], rows: &[Row], servers: &[(String, Result<usize, String>)]) -> String {
    let first = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    let widths: Vec<usize> = states.iter().map(|s| s.len().max(8)).collect();
    let mut out = format!("{:first$}", "tool");
    for (s, w) in states.iter().zip(&widths) {
        out.push_str(&format!("  {s:w$}"));
    }
    out = format!("{}\n", out.trim_end());
    let mut notes = Vec::new();
    for r in rows {
        let mut line = format!("{:first$}", r.name);
        for ((state, w), st) in states.iter().zip(&widths).map(|(s, w)| {
            let st = r.standings.iter().find(|(n, _)| n == s).map(|(_, st)| st);
            ((s, w), st)
        }) {
            let cell = st.map_or("·", word);
            line.push_str(&format!("  {cell:w$}"));
            if let Some(Standing::Granted { guard, except }) = st {
                if let Some(g) = guard {
                    notes.push(format!("  {} in {state}: only {g}", r.name));
                }
                if let Some(e) = except {
                    notes.push(format!("  {} in {state}: never {e}", r.name));
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("\nallowed: granted · guarded: granted for some calls (below) · denied: the state's forbid · denied*: forbid_always · always: a control every state has · ·: not granted\n");
    if !notes.is_empty() {
        out.push_str("\nGuards:\n");
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    if !servers.is_empty() {
        out.push_str("\nMCP servers:\n");
        for (name, r) in servers {
            match r {
                Ok(n) => out.push_str(&format!("  {name}: {n} tool(s)\n")),
                Err(e) => out.push_str(&format!("  {name}: could not be listed: {e}\n")),
            }
        }
    }
    out
}
