//! Runs one turn of a workspace's workflow against an OpenAI-compatible server:
//! `turn_runner <root> <workflow> <session> <base-url> <message>`. Used by the
//! kill-mid-turn test; prints `done` when the turn ends.

use std::sync::Arc;

use archmax_machine::model::{ModelConfig, OpenAiClient};
use archmax_machine::store::FsStore;
use archmax_machine::{Harness, HarnessOptions, NoEvents, SendInput};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, workflow, session, url, message] = args.as_slice() else {
        return Err("usage: turn_runner <root> <workflow> <session> <base-url> <message>".into());
    };
    let harness = Harness::assemble(HarnessOptions {
        root: root.into(),
        workflow: workflow.clone(),
        model: Arc::new(OpenAiClient::new(ModelConfig::new(url.clone(), "k", "m"))?),
        default_model: "m".into(),
        store: Arc::new(FsStore::new(root)),
        events: Arc::new(NoEvents),
        tools: Vec::new(),
        essential_tools: Vec::new(),
        mounts: None,
        skills: vec!["skills/".into()],
    })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let out = rt.block_on(harness.send(
        session,
        SendInput {
            message: message.clone(),
            ..SendInput::default()
        },
    ))?;
    println!("done {:?}", out.kind);
    Ok(())
}
