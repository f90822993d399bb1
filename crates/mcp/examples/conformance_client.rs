//! The client the official MCP conformance suite drives
//! (`@modelcontextprotocol/conformance client --command <this binary>`; the suite
//! appends its test server's URL as the last argument). It does what a tools
//! client does, through [`McpPool`] as the harness uses it: one `http` server at
//! that URL, its tools listed, each tool called once with arguments made from
//! its input schema. A server's elicitation is accepted with an empty answer,
//! which the pool completes with the requested schema's defaults; sampling is
//! declined.
//!
//! `scripts/mcp-conformance.mjs` runs the scenarios that apply to a tools client
//! and fails unless every check passed.
//!
//! ```sh
//! cargo run -p archmax-mcp --example conformance_client -- http://localhost:3000/mcp
//! ```
//!
//! Exit status: 0 when every call answered without error, 1 otherwise, 2 for a
//! usage error.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use archmax_mcp::{CallOptions, ElicitAnswer, McpHost, McpPool, PoolOptions, config};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

/// The name the one server has in the pool.
const SERVER: &str = "conformance";

/// Accepts every elicitation with no field filled in (the pool adds the
/// schema's defaults), declines sampling.
struct AcceptDefaults;

impl McpHost for AcceptDefaults {
    fn elicit<'a>(&'a self, server: &'a str, params: Value) -> BoxFuture<'a, ElicitAnswer> {
        let message = params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        eprintln!("elicitation from {server}: {message}");
        async { ElicitAnswer::Accept(json!({})) }.boxed()
    }

    fn sample<'a>(
        &'a self,
        _server: &'a str,
        _params: Value,
    ) -> BoxFuture<'a, Result<Value, String>> {
        async { Err("this client declines sampling requests".to_string()) }.boxed()
    }
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance_client <server-url>");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start a tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&url)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance client: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str) -> Result<(), String> {
    let text = json!({"mcpServers": {SERVER: {"type": "http", "url": url, "timeoutMs": 20000}}})
        .to_string();
    let (parsed, diagnostics) = config::parse(&text, "conformance .mcp.json", &|_| None);
    let Some(parsed) = parsed else {
        let problems: Vec<String> = diagnostics.iter().map(|d| d.message.clone()).collect();
        return Err(format!(
            "the server URL '{url}' is refused: {}",
            problems.join("; ")
        ));
    };
    let mut options = PoolOptions::new(".");
    options.client_name = "archmax-conformance".to_string();
    options.host = Some(Arc::new(AcceptDefaults));
    let pool = McpPool::new(parsed, options);
    let outcome = exercise(&pool).await;
    pool.shutdown().await;
    outcome
}

/// Lists the tools and calls each once.
async fn exercise(pool: &McpPool) -> Result<(), String> {
    let tools = pool.tools(SERVER).await.map_err(|e| e.to_string())?;
    println!("{} tool(s)", tools.tools.len());
    for skipped in &tools.skipped {
        println!("skipped {}: {}", skipped.tool, skipped.reason);
    }
    let mut failures = Vec::new();
    for tool in &tools.tools {
        let args = arguments_for(&tool.input_schema);
        let options = CallOptions {
            timeout: Some(Duration::from_secs(20)),
            ..CallOptions::default()
        };
        match pool.call(SERVER, &tool.tool, args.clone(), options).await {
            Ok(result) if result.is_error => {
                println!("{}({args}) -> error: {}", tool.tool, result.text);
                failures.push(format!("{} answered isError: {}", tool.tool, result.text));
            }
            Ok(result) => println!("{}({args}) -> {}", tool.tool, result.text),
            Err(e) => {
                println!("{}({args}) -> failed: {e}", tool.tool);
                failures.push(e.to_string());
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

/// Arguments a schema accepts: each required property (and each property with
/// a default) gets its default, its first `enum` value, or a plain value of its
/// type (numbers count up from 2, so a sum shows which argument went where).
fn arguments_for(schema: &Value) -> Value {
    let mut args = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(args);
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut next_number = 2;
    for (name, property) in properties {
        if let Some(default) = property.get("default") {
            args.insert(name.clone(), default.clone());
            continue;
        }
        if !required.contains(&name.as_str()) {
            continue;
        }
        let value = if let Some(first) = property
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            first.clone()
        } else {
            match property.get("type").and_then(Value::as_str) {
                Some("number" | "integer") => {
                    next_number += 1;
                    json!(next_number - 1)
                }
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => arguments_for(property),
                _ => json!("conformance"),
            }
        };
        args.insert(name.clone(), value);
    }
    Value::Object(args)
}
