//! The `archmax` binary for cargo users; npm users get the same CLI through
//! the addon's `runCli`.

/// As the addon: mimalloc (design/decisions/0075-mimalloc-without-huge-pages.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    watch_signals();
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let code = archmax_cli::run(&args, &mut archmax_cli::StdIo::new());
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// SIGINT and SIGTERM: the first cancels the turn in flight
/// (`archmax_cli::interrupt`), a second (or one with no turn) exits at once with
/// 128 + the signal number, as a shell expects.
#[cfg(unix)]
fn watch_signals() {
    use tokio::signal::unix::{SignalKind, signal};
    let _ = std::thread::Builder::new()
        .name("archmax-signals".into())
        .spawn(|| {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let (Ok(mut int), Ok(mut term)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) else {
                    return;
                };
                loop {
                    let code = tokio::select! {
                        _ = int.recv() => 130,
                        _ = term.recv() => 143,
                    };
                    if archmax_cli::interrupt::interrupt()
                        == archmax_cli::interrupt::Interrupt::Exit
                    {
                        std::process::exit(code);
                    }
                }
            });
        });
}

#[cfg(not(unix))]
fn watch_signals() {}
