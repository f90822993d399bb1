//! Host tools whose handlers are JS (`createAgent({ tools })`): `agent.js` passes each tool's
//! name, description, schema and path arguments, and dispatches its calls by name.

use std::sync::Arc;

use archmax_machine::tools::BoxFuture;
use archmax_machine::{HostTool, ToolContext};
use napi_derive::napi;
use serde_json::{Value, json};

use crate::callback::{AsyncJsFn, Slot, call_js, take};
use crate::result::{kind, plain_error};
use crate::tool_workspace::{Registered, ToolWorkspaces};

/// A host tool whose handler is JS (dispatched by name in `agent.js`).
struct JsTool {
    name: String,
    description: String,
    schema: Value,
    paths: Option<Vec<(String, String)>>,
    f: Slot<AsyncJsFn>,
    /// Where the call's `context.workspace` is registered while it runs.
    workspaces: Arc<ToolWorkspaces>,
}

impl HostTool for JsTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn schema(&self) -> Value {
        self.schema.clone()
    }
    fn paths(&self) -> Option<Vec<(String, String)>> {
        self.paths.clone()
    }
    fn call<'a>(
        &'a self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'a, std::result::Result<String, String>> {
        let f = take(&self.f);
        let registered = ctx
            .workspace
            .map(|ws| ToolWorkspaces::register(&self.workspaces, ws));
        let input = json!({
            "name": self.name,
            "args": args,
            "sessionId": ctx.session_id,
            "state": ctx.state,
            "callId": ctx.call_id,
            "contextId": registered.as_ref().map(Registered::id),
        })
        .to_string();
        Box::pin(async move {
            // Held until the call settles: the handle is closed with it.
            let _registered = registered;
            let f = f.ok_or_else(|| "the agent was disposed".to_string())?;
            match call_js(f, input, "tool", "tool handler").await? {
                Value::String(text) => Ok(text),
                other => Err(format!(
                    "the tool handler answered {}; expected text",
                    kind(&other)
                )),
            }
        })
    }
}

/// One host tool as `agent.js` passes it (the handler stays in JS).
#[napi(object)]
pub struct NativeToolDef {
    /// The name the model calls.
    pub name: String,
    /// What it does, for the model.
    pub description: Option<String>,
    /// JSON Schema of its arguments.
    #[napi(ts_type = "Record<string, unknown>")]
    pub schema: Option<Value>,
    /// Path arguments: `{ arg: "read" | "write" | … }`.
    #[napi(ts_type = "Record<string, string>")]
    pub paths: Option<Value>,
}

/// The host tools `defs` declare, their calls answered through `f`; a bad `paths` answers
/// `ToolPathsError`.
pub(crate) fn host_tools(
    defs: Vec<NativeToolDef>,
    f: &Slot<AsyncJsFn>,
    workspaces: &Arc<ToolWorkspaces>,
) -> std::result::Result<Vec<Arc<dyn HostTool>>, Value> {
    let mut tools: Vec<Arc<dyn HostTool>> = Vec::new();
    for def in defs {
        let paths = match def.paths {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => {
                let mut out = Vec::new();
                for (arg, access) in m {
                    let Some(access) = access.as_str() else {
                        return Err(plain_error(
                            "ToolPathsError",
                            format!(
                                "Tool '{}': the access of path argument '{arg}' must be a string",
                                def.name
                            ),
                        ));
                    };
                    out.push((arg, access.to_string()));
                }
                Some(out)
            }
            Some(other) => {
                return Err(plain_error(
                    "ToolPathsError",
                    format!(
                        "Tool '{}': 'paths' must be an object, got {}",
                        def.name,
                        kind(&other)
                    ),
                ));
            }
        };
        tools.push(Arc::new(JsTool {
            description: def.description.unwrap_or_default(),
            schema: def
                .schema
                .unwrap_or_else(|| json!({ "type": "object", "properties": {} })),
            name: def.name,
            paths,
            f: Arc::clone(f),
            workspaces: Arc::clone(workspaces),
        }));
    }
    Ok(tools)
}
