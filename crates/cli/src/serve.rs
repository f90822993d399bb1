//! `archmax serve`: the workspace's workflows over HTTP ([`archmax_serve`]), each assembled
//! as `archmax run` assembles it (the `ARCHMAX_*` endpoint, the chosen session store), with
//! the web inbox at `/`. Runs until the process is stopped.

use std::sync::Arc;

use archmax_serve::{ADMINS_VAR, Assemble, DEFAULT_BODY_LIMIT, ServeConfig, TOKENS_VAR, Tokens};

use crate::args::Parsed;
use crate::live::{endpoint, model_config};
use crate::workspace::{resolve_root, workflow_candidates};
use crate::{Cli, Failure};

/// The port when `--port` is not given.
pub(crate) const DEFAULT_PORT: u16 = 8787;

fn number<T: std::str::FromStr>(
    parsed: &Parsed,
    name: &str,
    what: &str,
) -> Result<Option<T>, Failure> {
    match parsed.non_empty(name) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| Failure::Usage(format!("--{name} must be {what}, got '{v}'"))),
    }
}

fn message(f: Failure) -> String {
    match f {
        Failure::Usage(m) | Failure::Command(m) | Failure::Crash(m) => m,
    }
}

/// Serves until stopped; a configuration problem is `Error: …`, exit 1.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    _positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let port = number::<u16>(parsed, "port", "a port number (0 picks a free one)")?
        .unwrap_or(DEFAULT_PORT);
    let body_limit =
        number::<usize>(parsed, "max-body", "a size in bytes")?.unwrap_or(DEFAULT_BODY_LIMIT);
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    let tokens = Tokens::parse(&cli.var(TOKENS_VAR).unwrap_or_default())
        .map_err(|e| Failure::Command(e.to_string()))?;
    let addr = archmax_serve::bind_address(parsed.non_empty("host"), port, &tokens)
        .map_err(|e| Failure::Command(e.to_string()))?;
    let identities = tokens.len();
    let config = config(cli, parsed, root, tokens, body_limit)?;
    let (workflows, store) = (config.workflows.clone(), Arc::clone(&config.store));
    let app = archmax_serve::app(config).map_err(|e| Failure::Command(e.to_string()))?;
    let rt = runtime()?;
    rt.block_on(async {
        let listener = archmax_serve::TcpListener::bind(addr)
            .await
            .map_err(|e| Failure::Command(format!("cannot listen on {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| Failure::Command(format!("cannot listen on {addr}: {e}")))?;
        let access = if identities == 0 {
            format!("no tokens, loopback only (set {TOKENS_VAR} to require them)")
        } else {
            format!("{identities} token(s)")
        };
        cli.err(&format!(
            "archmax serve: listening on http://{local} ({} workflow(s): {}; {} store; {access})\n",
            workflows.len(),
            workflows.join(", "),
            store.kind()
        ));
        let _ = cli.io.stderr().flush();
        archmax_serve::run(listener, app)
            .await
            .map_err(|e| Failure::Command(format!("the server stopped: {e}")))
    })?;
    Ok(0)
}

/// `archmax mcp`: the workspace's workflows as MCP tools over stdin and stdout, until the
/// client closes them. Nothing but MCP messages goes to stdout.
pub(crate) fn mcp(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    _positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    let config = config(cli, parsed, root, Tokens::default(), DEFAULT_BODY_LIMIT)?;
    runtime()?.block_on(async {
        archmax_serve::mcp_stdio(config)
            .await
            .map_err(|e| Failure::Command(e.to_string()))
    })?;
    Ok(0)
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Crash(format!("cannot start the async runtime: {e}")))
}

/// What `serve` and `mcp` serve: every workflow of the workspace at `root`, each assembled
/// as `archmax run` assembles it, over the chosen session store, sharing one set of MCP
/// servers.
fn config(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    root: std::path::PathBuf,
    tokens: Tokens,
    body_limit: usize,
) -> Result<ServeConfig, Failure> {
    let store = match parsed.non_empty("store") {
        Some(url) => Arc::new(crate::store::postgres(url)?),
        None => crate::store::open(cli, &root)?,
    };
    let workflows = workflow_candidates(&root);
    if workflows.is_empty() {
        return Err(Failure::Command(format!(
            "no workflows under {} (each is workflows/<slug>/workflow.yaml)",
            root.join("workflows").display()
        )));
    }
    let config = model_config(cli, &root)?;
    let metrics = Arc::new(archmax_serve::metrics::Metrics::new());
    let model: Arc<dyn archmax_machine::model::Model> = Arc::new(
        archmax_serve::metrics::TimedModel::new(endpoint(&config)?, Arc::clone(&metrics)),
    );
    let (lookup, shared) = (cli.lookup(), Arc::clone(&store));
    // One set of MCP servers for every workflow the server assembles.
    let mcp = archmax_machine::HarnessBuilder::new(&root, "")
        .env(Arc::clone(&lookup))
        .mcp_servers()
        .map_err(|e| crate::assembly::failure(&e))?;
    let at = root.clone();
    let assemble: Assemble = Arc::new(move |workflow, sink| {
        archmax_machine::HarnessBuilder::new(&at, workflow)
            .env(Arc::clone(&lookup))
            .mcp(mcp.clone())
            .store(Arc::clone(&shared))
            .model(archmax_machine::ModelSource::Given(Arc::clone(&model)))
            .events(sink)
            .build()
            .map_err(|e| message(crate::assembly::failure(&e)))
    });
    Ok(ServeConfig {
        root,
        workflows,
        store,
        assemble,
        tokens,
        cors_origin: parsed.non_empty("cors-origin").map(str::to_string),
        metrics,
        body_limit,
        admins: archmax_serve::parse_admins(&cli.var(ADMINS_VAR).unwrap_or_default()),
    })
}
