//! The `archmax` binary for cargo users; npm users get the same CLI through
//! the addon's `runCli`.

/// As the addon: mimalloc (docs/decisions.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let code = archmax_cli::run(&args, &mut archmax_cli::StdIo::new());
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
