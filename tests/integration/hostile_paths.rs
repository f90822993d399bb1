//! The hostile-path corpus and its reliability probe: every spelling of a session's own
//! records an attacker might try (`<id>/…`, `./<id>/…`, `sessions/<id>/…`, case and
//! Unicode variants, `_specs`, symbolic links), against every file tool, from every origin
//! (the agent's own calls, a hook's `tools.*`, `archmax_eval` and `archmax_run` scripts).
//!
//! Each attempt aims at a file of its own (a decoy planted in `checkpoints/` or at the
//! store's `_specs/`, or a new name there), so an escape is pinned to the attempt that made
//! it. The probe prints its figures (attempts and escapes per origin) and fails on any
//! escape, on a changed record and on a session that no longer loads. The corpus is
//! deterministic, so CI runs it whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use archmax_machine::OutcomeKind;
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, rt};
use serde_json::{Value, json};

const ID: &str = "g1";
/// What every planted secret holds; a read that returns it escaped.
const SECRET: &str = "TOPSECRET-CONTENT";
/// What every decoy holds until an attacker changes it.
const ORIGINAL: &str = "ORIGINAL";

/// Where a spelling lands if it escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    /// `sessions/<id>/checkpoints/`.
    Checkpoints,
    /// `sessions/_specs/` (shared by every session).
    Specs,
}

/// Every spelling of the two protected folders.
fn prefixes() -> Vec<(&'static str, Area)> {
    use Area::*;
    vec![
        ("checkpoints", Checkpoints),
        ("g1/checkpoints", Checkpoints),
        ("./g1/checkpoints", Checkpoints),
        ("/g1/checkpoints", Checkpoints),
        ("g1//checkpoints", Checkpoints),
        ("g1/./checkpoints", Checkpoints),
        ("scratchpad/../g1/checkpoints", Checkpoints),
        ("g1/scratchpad/../checkpoints", Checkpoints),
        ("g1/g1/../checkpoints", Checkpoints),
        ("g1/g1/checkpoints", Checkpoints),
        ("sessions/g1/checkpoints", Checkpoints),
        ("../g1/checkpoints", Checkpoints),
        ("../sessions/g1/checkpoints", Checkpoints),
        ("G1/checkpoints", Checkpoints),
        ("g1/Checkpoints", Checkpoints),
        ("g1/CHECKPOINTS", Checkpoints),
        ("CHECKPOINTS", Checkpoints),
        ("g1/chec\u{212A}points", Checkpoints),
        ("g1/checkpoint\u{17F}", Checkpoints),
        ("g1/check\u{200C}points", Checkpoints),
        ("\u{FF47}1/checkpoints", Checkpoints),
        ("scratchpad/cplink", Checkpoints),
        ("cpabs", Checkpoints),
        ("_specs", Specs),
        ("g1/_specs", Specs),
        ("./g1/_specs", Specs),
        ("/g1/_specs", Specs),
        ("scratchpad/../g1/_specs", Specs),
        ("g1/../_specs", Specs),
        ("sessions/_specs", Specs),
        ("../_specs", Specs),
        ("g1/_SPECS", Specs),
        ("g1/_Specs", Specs),
        ("_SPECS", Specs),
        ("scratchpad/speclink", Specs),
    ]
}

/// One attempt: which tool, with which arguments, and how to tell it escaped.
#[derive(Debug, Clone)]
struct Attempt {
    n: usize,
    tool: &'static str,
    args: Value,
    area: Area,
    check: Check,
}

#[derive(Debug, Clone, Copy)]
enum Check {
    /// The answer names or shows a planted file (`ls`, `glob`, `grep`, `read_file`).
    Leaks,
    /// A real record's content came back.
    LeaksRecord,
    /// `new-<n>` appeared in the area.
    Creates,
    /// `decoy-<n>` in the area is gone or changed.
    Alters,
    /// `scratchpad/copy-<n>` holds the secret.
    CopiesOut,
}

fn corpus(origin: usize) -> Vec<Attempt> {
    let mut out = Vec::new();
    let mut push = |tool: &'static str, args: Value, area: Area, check: Check| {
        let n = origin * 10_000 + out.len();
        let args =
            serde_json::from_str(&args.to_string().replace("{n}", &n.to_string())).unwrap_or(args);
        out.push(Attempt {
            n,
            tool,
            args,
            area,
            check,
        });
    };
    for (p, area) in prefixes() {
        push("ls", json!({ "path": p }), area, Check::Leaks);
        push(
            "read_file",
            json!({ "file_path": format!("{p}/secret.txt") }),
            area,
            Check::Leaks,
        );
        if area == Area::Checkpoints {
            for record in ["state.json", "transcript.jsonl"] {
                push(
                    "read_file",
                    json!({ "file_path": format!("{p}/{record}") }),
                    area,
                    Check::LeaksRecord,
                );
            }
        }
        push(
            "grep",
            json!({ "pattern": "TOPSECRET", "path": p }),
            area,
            Check::Leaks,
        );
        push(
            "glob",
            json!({ "pattern": "**", "path": p }),
            area,
            Check::Leaks,
        );
        push(
            "write_file",
            json!({ "file_path": format!("{p}/new-{{n}}"), "content": "FORGED" }),
            area,
            Check::Creates,
        );
        push(
            "edit_file",
            json!({ "file_path": format!("{p}/decoy-{{n}}"), "old_string": ORIGINAL, "new_string": "FORGED" }),
            area,
            Check::Alters,
        );
        push(
            "copy_file",
            json!({ "source": format!("{p}/secret.txt"), "destination": "scratchpad/copy-{n}" }),
            area,
            Check::CopiesOut,
        );
        push(
            "copy_file",
            json!({ "source": "scratchpad/payload.txt", "destination": format!("{p}/new-{{n}}") }),
            area,
            Check::Creates,
        );
        push(
            "move_file",
            json!({ "source": format!("{p}/decoy-{{n}}"), "destination": "scratchpad/moved-{n}" }),
            area,
            Check::Alters,
        );
        push(
            "move_file",
            json!({ "source": "scratchpad/payload-{n}", "destination": format!("{p}/new-{{n}}") }),
            area,
            Check::Creates,
        );
        push(
            "remove_file",
            json!({ "file_path": format!("{p}/decoy-{{n}}") }),
            area,
            Check::Alters,
        );
    }
    out
}

struct Dirs {
    session: PathBuf,
    checkpoints: PathBuf,
    specs: PathBuf,
}

impl Dirs {
    fn new(root: &Path) -> Self {
        let session = root.join("sessions").join(ID);
        Dirs {
            checkpoints: session.join("checkpoints"),
            specs: root.join("sessions/_specs"),
            session,
        }
    }
    fn area(&self, a: Area) -> &Path {
        match a {
            Area::Checkpoints => &self.checkpoints,
            Area::Specs => &self.specs,
        }
    }
}

/// Plants the secrets, one decoy and one payload per attempt, and the links.
fn plant(d: &Dirs, attempts: &[Attempt]) {
    let scratch = d.session.join("scratchpad");
    std::fs::create_dir_all(&scratch).expect("scratchpad");
    for area in [&d.checkpoints, &d.specs] {
        std::fs::create_dir_all(area).expect("area");
        std::fs::write(area.join("secret.txt"), SECRET).expect("secret");
        for a in attempts {
            std::fs::write(area.join(format!("decoy-{}", a.n)), ORIGINAL).expect("decoy");
        }
    }
    std::fs::write(scratch.join("payload.txt"), "FORGED").expect("payload");
    for a in attempts {
        std::fs::write(scratch.join(format!("payload-{}", a.n)), "FORGED").expect("payload");
    }
    std::os::unix::fs::symlink("../checkpoints", scratch.join("cplink")).expect("link");
    std::os::unix::fs::symlink("../../_specs", scratch.join("speclink")).expect("link");
    std::os::unix::fs::symlink(&d.checkpoints, d.session.join("cpabs")).expect("link");
}

/// The attempts that escaped, given each one's answer.
fn escapes(d: &Dirs, attempts: &[Attempt], answers: &BTreeMap<usize, String>) -> Vec<String> {
    let mut out = Vec::new();
    for a in attempts {
        let answer = answers.get(&a.n).map_or("", String::as_str);
        let area = d.area(a.area);
        let escaped = match a.check {
            Check::Leaks => answer.contains(SECRET) || answer.contains("decoy-"),
            Check::LeaksRecord => {
                answer.contains("archmax_checkpoint") || answer.contains("archmax-session-state")
            }
            Check::Creates => area.join(format!("new-{}", a.n)).exists(),
            Check::Alters => {
                std::fs::read_to_string(area.join(format!("decoy-{}", a.n)))
                    .ok()
                    .as_deref()
                    != Some(ORIGINAL)
            }
            Check::CopiesOut => {
                std::fs::read_to_string(d.session.join(format!("scratchpad/copy-{}", a.n)))
                    .is_ok_and(|t| t.contains(SECRET))
            }
        };
        if escaped {
            let short: String = answer.chars().take(160).collect();
            out.push(format!("#{} {} {} → {short}", a.n, a.tool, a.args));
        }
    }
    out
}

/// The JS that runs `attempts` through `tools.*` and writes every answer to `results`.
fn script(attempts: &[Attempt], results: &str) -> String {
    let list: Vec<Value> = attempts
        .iter()
        .map(|a| json!({ "n": a.n, "fn": camel(a.tool), "args": a.args }))
        .collect();
    format!(
        "const attempts = {};\nconst out = {{}};\nfor (const a of attempts) {{\n  try {{ out[a.n] = String(await tools[a.fn](a.args)) }} catch (e) {{ out[a.n] = 'threw: ' + String(e && e.message) }}\n}}\nawait tools.writeFile({{ file_path: '{results}', content: JSON.stringify(out) }});\n",
        Value::Array(list)
    )
}

fn camel(tool: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in tool.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn read_answers(path: &Path) -> BTreeMap<usize, String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_str()?.to_string())))
        .collect()
}

/// Every file under the protected folders, with its bytes.
fn records(d: &Dirs) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for dir in [&d.checkpoints, &d.specs] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if let Ok(bytes) = std::fs::read(e.path()) {
                out.insert(e.path(), bytes);
            }
        }
    }
    out
}

#[test]
fn no_spelling_of_a_sessions_records_reaches_them_from_any_origin() {
    let agent = corpus(1);
    let hook = corpus(2);
    let eval = corpus(3);
    let run = corpus(4);
    let spec = "settings: { maxPtcCalls: null, timeoutMs: 120000, maxResultChars: 100000 }\n\
        skills:\n  allow_always: [probe]\n\
        states:\n  draft:\n    triggers: { manual: }\n    instructions: Work.\n    after: { script: hooks/probe.js }\n    on_error: failed\n    transitions: [{ to: done, description: Finished. }]\n  done:\n    instructions: Say so.\n  failed:\n    instructions: Explain.\n";
    let hook_js = format!(
        "export default async ({{ tools }}) => {{\n{}  return ok()\n}}\n",
        script(&hook, "scratchpad/answers-hook.json")
    );
    let run_js = script(&run, "scratchpad/answers-run.json");
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", spec),
        ("workflows/orders/hooks/probe.js", &hook_js),
        (
            "skills/probe/SKILL.md",
            "---\nname: probe\ndescription: Probes the workspace.\n---\n\n# Probe\n",
        ),
        ("skills/probe/scripts/probe.js", &run_js),
    ]);
    let d = Dirs::new(ws.root());

    let mut calls: Vec<(String, &str, Value)> = agent
        .iter()
        .map(|a| (format!("call-{}", a.n), a.tool, a.args.clone()))
        .collect();
    calls.push((
        "eval".into(),
        "archmax_eval",
        json!({ "code": script(&eval, "scratchpad/answers-eval.json") }),
    ));
    calls.push((
        "run".into(),
        "archmax_run",
        json!({ "file_path": "skills/probe/scripts/probe.js" }),
    ));
    // The headline attack: forge the checkpoint and skip ahead.
    calls.push((
        "forge-rm".into(),
        "remove_file",
        json!({ "file_path": "g1/checkpoints/state.json" }),
    ));
    calls.push((
        "forge-rm-transcript".into(),
        "remove_file",
        json!({ "file_path": "g1/checkpoints/transcript.jsonl" }),
    ));
    let server = InProcessModel::new(vec![
        Reply::text("Hello."),
        Reply::tool_calls(
            calls
                .iter()
                .map(|(id, t, a)| (id.as_str(), *t, a.clone()))
                .collect(),
        ),
        Reply::tool_calls(vec![(
            "adv",
            "archmax_advance",
            json!({ "to": "done", "reason": "ready" }),
        )]),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let first = archmax_tests::send(&h, ID, "hello");
    assert_eq!(first.state, "draft");
    let mut all: Vec<Attempt> = Vec::new();
    for c in [&agent, &hook, &eval, &run] {
        all.extend(c.iter().cloned());
    }
    plant(&d, &all);
    let transcript_before =
        std::fs::read(d.checkpoints.join("transcript.jsonl")).expect("transcript");
    let specs_before: BTreeMap<PathBuf, Vec<u8>> = records(&d)
        .into_iter()
        .filter(|(p, _)| p.starts_with(&d.specs))
        .collect();

    let out = rt().block_on(h.send(
        ID,
        archmax_machine::SendInput {
            message: "go".into(),
            ..Default::default()
        },
    ));

    let requests = server.requests();
    let mut agent_answers = BTreeMap::new();
    if let Some(req) = requests.get(2) {
        for m in req["messages"].as_array().into_iter().flatten() {
            if m["role"] != "tool" {
                continue;
            }
            let id = m["tool_call_id"].as_str().unwrap_or_default();
            if let Some(n) = id.strip_prefix("call-").and_then(|n| n.parse().ok()) {
                agent_answers.insert(n, m["content"].as_str().unwrap_or_default().to_string());
            }
        }
    }
    let scratch = d.session.join("scratchpad");
    let mut failures = Vec::new();
    let mut report = Vec::new();
    for (origin, attempts, answers) in [
        ("agent", &agent, agent_answers),
        (
            "hook tools.*",
            &hook,
            read_answers(&scratch.join("answers-hook.json")),
        ),
        (
            "archmax_eval",
            &eval,
            read_answers(&scratch.join("answers-eval.json")),
        ),
        (
            "archmax_run",
            &run,
            read_answers(&scratch.join("answers-run.json")),
        ),
    ] {
        let found = escapes(&d, attempts, &answers);
        report.push(format!(
            "{origin}: {} attempts, {} answered, {} escapes",
            attempts.len(),
            answers.len(),
            found.len()
        ));
        if answers.len() != attempts.len() {
            failures.push(format!(
                "{origin}: only {} of {} attempts answered",
                answers.len(),
                attempts.len()
            ));
        }
        failures.extend(found.into_iter().map(|e| format!("{origin}: {e}")));
    }
    let transcript_after =
        std::fs::read(d.checkpoints.join("transcript.jsonl")).unwrap_or_default();
    if !transcript_after.starts_with(&transcript_before) {
        failures.push("transcript.jsonl lost its earlier lines".into());
    }
    for (path, bytes) in &specs_before {
        if std::fs::read(path).ok().as_ref() != Some(bytes) {
            failures.push(format!("{} changed", path.display()));
        }
    }
    for (path, bytes) in records(&d) {
        // The transcript records the calls, payloads included.
        let transcript = path.ends_with("transcript.jsonl");
        if !transcript && String::from_utf8_lossy(&bytes).contains("FORGED") {
            failures.push(format!("{} holds forged bytes", path.display()));
        }
    }
    let reloaded = h.session_state(ID);
    match &reloaded {
        Ok(Some(s)) if s.workflow_state == "done" => {}
        other => failures.push(format!("the session does not load as 'done': {other:?}")),
    }
    match &out {
        Ok(o) if o.kind == OutcomeKind::Completed => {}
        other => failures.insert(0, format!("the turn did not complete: {other:?}")),
    }
    eprintln!(
        "hostile-path probe: {} attempts, {} escapes or failures\n  {}",
        agent.len() + hook.len() + eval.len() + run.len(),
        failures.len(),
        report.join("\n  ")
    );
    assert!(
        failures.is_empty(),
        "{} escapes or failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
