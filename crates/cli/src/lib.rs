//! `archmax-cli`: the `archmax` command line.
//!
//! ```
//! use archmax_cli::{BufferIo, run};
//!
//! let mut io = BufferIo::new(std::env::temp_dir());
//! let code = run(&["help".to_string(), "validate".to_string()], &mut io);
//! assert_eq!(code, 0);
//! assert!(io.stdout_text().starts_with("Usage: archmax validate <workflow> [options]"));
//! ```
//!
//! [`run`] takes the arguments after the program name and an [`Io`], and
//! returns the process exit code: 0 success (a park included), 1 failure, 2 usage error. It never
//! exits the process and touches the process only through the [`Io`].

pub mod args;
mod assembly;
mod cassette;
pub mod checks;
pub mod commands;
mod endpoint;
pub mod flow;
mod graph;
pub mod help;
mod history;
pub mod init;
pub mod interrupt;
mod io;
mod live;
mod outcome;
mod park;
mod preflight;
pub mod raw;
mod record;
mod run;
mod serve;
mod sessions;
pub mod skill;
pub(crate) mod store;
pub mod style;
mod test;
mod tools;
pub mod usage;
mod validate;
mod worker;
pub mod workspace;
mod written;

use std::path::PathBuf;

pub use archmax_machine::env::Env;
pub use io::{BufferIo, Io, StdIo};
pub use style::Style;

use commands::Command;

/// The package version `archmax --version` prints.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How a command failed, before it produced its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A usage error: `Error: <msg> (try: archmax <cmd> --help)`, exit 2.
    Usage(String),
    /// A command error: `Error: <msg>`, exit 1.
    Command(String),
    /// An unexpected error (neither a usage error nor a known runtime
    /// refusal): `archmax failed: Error: <msg>`, exit 1.
    Crash(String),
}

/// What a command sees: the process, the environment with `.env` values, the
/// style and the working directory.
pub(crate) struct Cli<'a> {
    pub io: &'a mut dyn Io,
    pub env: Env,
    pub style: Style,
    pub cwd: PathBuf,
}

impl Cli<'_> {
    /// Writes to stdout; a closed pipe is not the command's failure.
    pub fn out(&mut self, text: &str) {
        let _ = self.io.stdout().write_all(text.as_bytes());
    }
    /// Writes to stderr.
    pub fn err(&mut self, text: &str) {
        let _ = self.io.stderr().write_all(text.as_bytes());
    }
    /// A variable: the real environment, then `.env` values.
    pub fn var(&self, name: &str) -> Option<String> {
        self.env.get(&|n| self.io.env_var(n), name)
    }
    /// The settings as a harness reads them: the real environment, then the `.env` values
    /// loaded so far (an owned snapshot of the loaded ones).
    pub fn lookup(&self) -> archmax_machine::env::Lookup {
        let real = self.io.env_lookup();
        let loaded = self.env.loaded().clone();
        std::sync::Arc::new(move |name: &str| real(name).or_else(|| loaded.get(name).cloned()))
    }
    /// Loads `<root>/.env` once the root is known.
    pub fn load_root_env(&mut self, root: &std::path::Path) {
        let io = &*self.io;
        self.env.load_file(&|n| io.env_var(n), &root.join(".env"));
    }
    /// The session header: `◆ <workflow>`, the directory, an optional model line, a blank line.
    pub fn header(&mut self, workflow: &str, root: &std::path::Path, model: Option<&str>) {
        let s = self.style;
        let mut text = format!(
            "{}\n",
            s.cyan(&s.bold(&format!("{} {workflow}", style::DIAMOND)))
        );
        text.push_str(&format!("  {}  {}\n", s.dim("directory"), root.display()));
        if let Some(model) = model {
            text.push_str(&format!("  {}      {model}\n", s.dim("model")));
        }
        text.push('\n');
        self.err(&text);
    }
}

/// Runs the CLI on `args` (without the program name) and returns the exit code.
pub fn run(args: &[String], io: &mut dyn Io) -> i32 {
    let cwd = match io.cwd() {
        Ok(cwd) => cwd,
        Err(e) => {
            let _ = writeln!(io.stderr(), "Error: cannot read the current directory: {e}");
            return 1;
        }
    };
    let mut env = Env::new();
    env.load_file(&|n| io.env_var(n), &cwd.join(".env"));
    let tty = io.stderr_is_tty();
    let style = Style::decide(env.get(&|n| io.env_var(n), "NO_COLOR").as_deref(), tty);
    let mut cli = Cli {
        io,
        env,
        style,
        cwd,
    };
    if style::banner_enabled(cli.var("ARCHMAX_CLI_NO_BANNER").as_deref(), tty) {
        let banner = style::banner(&style);
        cli.err(&banner);
    }
    let telemetry = start_telemetry(&mut cli);
    let code = match &telemetry {
        Some(t) => tracing::dispatcher::with_default(t.dispatch(), || dispatch(&mut cli, args)),
        None => dispatch(&mut cli, args),
    };
    if let Some(Err(e)) = telemetry
        .as_ref()
        .map(archmax_telemetry::Telemetry::shutdown)
    {
        cli.err(&format!("Warning: {e}\n"));
    }
    let _ = cli.io.stdout().flush();
    let _ = cli.io.stderr().flush();
    code
}

/// The telemetry the environment asks for (`OTEL_*`, `ARCHMAX_LOG`; docs/telemetry.md),
/// flushed when the command ends. A setting it cannot use is a warning: the command runs
/// untraced rather than not at all.
fn start_telemetry(cli: &mut Cli<'_>) -> Option<archmax_telemetry::Telemetry> {
    let started = archmax_telemetry::Config::from_env(|k| cli.var(k))
        .and_then(|c| archmax_telemetry::Telemetry::start(&c));
    match started {
        Ok(t) => t,
        Err(e) => {
            cli.err(&format!("Warning: telemetry is off: {e}\n"));
            None
        }
    }
}

fn dispatch(cli: &mut Cli<'_>, args: &[String]) -> i32 {
    let Some(first) = args.first() else {
        cli.err(&format!(
            "{}\nError: a command is required\n",
            help::top_level()
        ));
        return 2;
    };
    if first == "--help" || first == "-h" {
        cli.out(&help::top_level());
        return 0;
    }
    if first == "--version" || first == "-V" {
        cli.out(&format!("archmax {VERSION}\n"));
        return 0;
    }
    let Some(cmd) = commands::find(first) else {
        cli.err(&format!(
            "Error: unknown command '{first}' (try: archmax help)\n"
        ));
        return 2;
    };
    let parsed = match args::parse(&args[1..], &cmd.all_options()) {
        Ok(p) => p,
        Err(msg) => return usage(cli, cmd, &msg),
    };
    if cmd.name == "help" {
        return help_command(cli, cmd, &parsed);
    }
    if parsed.flag("help") {
        cli.out(&help::command(cmd));
        return 0;
    }
    let positionals = match fit_positionals(cmd, parsed.positionals.clone()) {
        Ok(p) => p,
        Err(msg) => return usage(cli, cmd, &msg),
    };
    let outcome = match cmd.name {
        "validate" => validate::run(cli, &parsed, &positionals),
        "graph" => graph::run(cli, &parsed, &positionals),
        "tools" => tools::run(cli, &parsed, &positionals),
        "run" => run::run(cli, &parsed, &positionals),
        "test" => test::run(cli, &parsed, &positionals),
        "sessions"
            if matches!(
                positionals.first().and_then(Option::as_deref),
                Some("history" | "fork")
            ) =>
        {
            history::run(cli, &parsed, &positionals)
        }
        "sessions" => sessions::run(cli, &parsed, &positionals),
        "decide" => park::decide(cli, &parsed, &positionals),
        "reply" => park::reply(cli, &parsed, &positionals),
        "deliver" => park::deliver(cli, &parsed, &positionals),
        "init" => init::run(cli, &parsed, &positionals),
        "skill" => skill::run(cli, &parsed, &positionals),
        "worker" => worker::run(cli, &parsed, &positionals),
        "serve" => serve::run(cli, &parsed, &positionals),
        "mcp" => serve::mcp(cli, &parsed, &positionals),
        _ => preflight::run(cli, cmd, &parsed, &positionals),
    };
    match outcome {
        Ok(code) => code,
        Err(Failure::Usage(msg)) => usage(cli, cmd, &msg),
        Err(Failure::Command(msg)) => {
            cli.err(&format!("Error: {msg}\n"));
            1
        }
        Err(Failure::Crash(msg)) => {
            cli.err(&format!("archmax failed: Error: {msg}\n"));
            1
        }
    }
}

fn usage(cli: &mut Cli<'_>, cmd: &Command, msg: &str) -> i32 {
    cli.err(&format!(
        "Error: {msg} (try: archmax {} --help)\n",
        cmd.name
    ));
    2
}

/// Maps positionals onto the command's slots: a rest slot takes every
/// remaining one (joined with single spaces, trimmed; empty = absent);
/// surplus positionals are a usage error.
fn fit_positionals(cmd: &Command, mut given: Vec<String>) -> Result<Vec<Option<String>>, String> {
    let mut slots = Vec::with_capacity(cmd.positionals.len());
    for slot in cmd.positionals {
        if slot.rest {
            let joined = given.join(" ").trim().to_string();
            given.clear();
            slots.push((!joined.is_empty()).then_some(joined));
        } else if given.is_empty() {
            slots.push(None);
        } else {
            slots.push(Some(given.remove(0)));
        }
    }
    match given.first() {
        Some(surplus) => Err(format!("unexpected argument '{surplus}'")),
        None => Ok(slots),
    }
}

fn help_command(cli: &mut Cli<'_>, cmd: &Command, parsed: &args::Parsed) -> i32 {
    if parsed.flag("help") {
        cli.out(&help::command(cmd));
        return 0;
    }
    if let Some(surplus) = parsed.positionals.get(1) {
        return usage(cli, cmd, &format!("unexpected argument '{surplus}'"));
    }
    match parsed.positionals.first() {
        None => {
            cli.out(&help::top_level());
            0
        }
        Some(name) => match commands::find(name) {
            Some(target) => {
                cli.out(&help::command(target));
                0
            }
            None => {
                cli.err(&format!(
                    "Error: unknown command '{name}' (try: archmax help --help)\n"
                ));
                2
            }
        },
    }
}

#[cfg(test)]
mod tests;
