//! `runCli`: the `archmax` command line for the npm `bin` shim.

use napi::bindgen_prelude::{Error, Result, spawn_blocking};
use napi_derive::napi;

/// Runs the `archmax` CLI with `args` (the arguments after the program name),
/// writing to the real stdout and stderr. Resolves to the exit code: 0
/// success, 1 failure, 2 usage error. Never exits the process.
#[napi]
pub async fn run_cli(args: Vec<String>) -> Result<i32> {
    spawn_blocking(move || archmax_cli::run(&args, &mut archmax_cli::StdIo::new()))
        .await
        .map_err(|e| Error::from_reason(format!("the CLI stopped unexpectedly: {e}")))
}

/// The `archmax` shim's SIGINT/SIGTERM handler: the first signal while a turn runs cancels
/// it (the CLI reports `turn-cancelled` and a hint) and answers false; a second one, or one
/// while no turn runs, answers true: the shim exits at once.
#[napi(catch_unwind)]
pub fn interrupt_cli() -> bool {
    archmax_cli::interrupt::interrupt() == archmax_cli::interrupt::Interrupt::Exit
}
