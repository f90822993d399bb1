//! `.env` loading through the whole CLI: the cwd file at start, the root file
//! once the root is known, the real environment always winning.

use std::path::PathBuf;

use archmax_cli::{BufferIo, run};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("archmax-cli-env-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

#[test]
fn root_env_overrides_cwd_env_but_never_the_real_env() {
    let cwd = temp("cwd");
    let root = cwd.join("ws");
    std::fs::create_dir_all(root.join("workflows/w")).expect("create workflow dir");
    std::fs::write(
        root.join("workflows/w/workflow.yaml"),
        "states:\n  a:\n    triggers: { manual: }\n",
    )
    .expect("write spec");
    std::fs::write(cwd.join(".env"), "NO_COLOR=\nFROM_CWD=cwd\nSHARED=cwd\n")
        .expect("write cwd .env");
    // NO_COLOR= in the cwd .env is empty, so it does not turn color off either way.
    std::fs::write(root.join(".env"), "SHARED=root\nREAL=root\n").expect("write root .env");
    let mut io = BufferIo::new(&cwd)
        .with_env("REAL", "real")
        .with_env("ARCHMAX_CLI_NO_BANNER", "1");
    let args: Vec<String> = ["validate", "--root", "ws"].map(String::from).to_vec();
    assert_eq!(run(&args, &mut io), 0, "{}", io.stderr_text());
    assert!(io.stderr_text().starts_with("◆ w\n"));

    let mut env = archmax_cli::Env::new();
    env.load_file(&io, &cwd.join(".env"));
    env.load_file(&io, &root.join(".env"));
    env.load_file(&io, &cwd.join("ws/../ws/.env"));
    assert_eq!(env.get(&io, "FROM_CWD").as_deref(), Some("cwd"));
    assert_eq!(env.get(&io, "SHARED").as_deref(), Some("root"));
    assert_eq!(env.get(&io, "REAL").as_deref(), Some("real"));
    let _ = std::fs::remove_dir_all(cwd);
}
