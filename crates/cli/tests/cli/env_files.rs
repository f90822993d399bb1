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
    let real = |name: &str| io.env.get(name).cloned();
    env.load_file(&real, &cwd.join(".env"));
    env.load_file(&real, &root.join(".env"));
    env.load_file(&real, &cwd.join("ws/../ws/.env"));
    assert_eq!(env.get(&real, "FROM_CWD").as_deref(), Some("cwd"));
    assert_eq!(env.get(&real, "SHARED").as_deref(), Some("root"));
    assert_eq!(env.get(&real, "REAL").as_deref(), Some("real"));
    let _ = std::fs::remove_dir_all(cwd);
}

/// The loopback rule is the harness's one: `archmax run` needs no key for an endpoint written
/// `http://127.1:<port>/v1` or `http://[0:0:0:0:0:0:0:1]:<port>/v1`, as `createAgent`'s model
/// factory settings do not.
#[test]
fn an_endpoint_on_this_machine_needs_no_key_however_its_address_is_written() {
    use crate::scripted::{Reply, ScriptedServer};
    let root = temp("loopback");
    std::fs::create_dir_all(root.join("workflows/w")).expect("create workflow dir");
    std::fs::write(
        root.join("workflows/w/workflow.yaml"),
        "states:\n  a:\n    triggers: { manual: }\n",
    )
    .expect("write spec");
    let server = ScriptedServer::start(vec![Reply::text("Hi.")]).expect("server");
    let port = server.addr().port();
    let run_at = |url: String| {
        let mut io = BufferIo::new(&root)
            .with_env("ARCHMAX_CLI_NO_BANNER", "1")
            .with_env("ARCHMAX_API_BASE_URL", &url)
            .with_env("ARCHMAX_MODEL", "m");
        let args: Vec<String> = ["run", "w", "hello"].map(String::from).to_vec();
        let code = run(&args, &mut io);
        (code, io.stderr_text())
    };
    let (code, err) = run_at(format!("http://127.1:{port}/v1"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(server.requests().len(), 1);
    // Nothing listens on ::1 here: the call fails, but not for want of a key.
    let (_, err) = run_at(format!("http://[0:0:0:0:0:0:0:1]:{port}/v1"));
    assert!(!err.contains("ARCHMAX_API_KEY"), "{err}");
    let (code, err) = run_at(format!("http://127.0.0.1.example:{port}/v1"));
    assert_eq!(code, 1);
    assert!(err.contains("ARCHMAX_API_KEY"), "{err}");
    let _ = std::fs::remove_dir_all(root);
}
