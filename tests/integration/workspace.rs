//! `validate_workflow` over real files: every cross-file pass.

use archmax_spec::workspace::{MountDecl, MountKind};
use archmax_spec::{DiskFiles, Severity, ValidateOptions, validate_workflow};
use archmax_tests::TempWorkspace;

/// (severity, field, file, message) of every diagnostic.
fn check(files: &[(&str, &str)], opts: ValidateOptions) -> Vec<(Severity, String, String, String)> {
    let ws = TempWorkspace::new(files);
    let r = validate_workflow(&DiskFiles::new(ws.root()), &opts);
    assert_eq!(r.valid, !r.diagnostics.iter().any(|d| d.is_error()));
    r.diagnostics
        .into_iter()
        .map(|d| {
            (
                d.severity,
                d.field.unwrap_or_default(),
                d.file.unwrap_or_default(),
                d.message,
            )
        })
        .collect()
}

fn messages(found: &[(Severity, String, String, String)]) -> String {
    found
        .iter()
        .map(|f| format!("{f:?}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn has(
    found: &[(Severity, String, String, String)],
    severity: Severity,
    field: &str,
    fragment: &str,
) {
    assert!(
        found
            .iter()
            .any(|(s, f, _, m)| *s == severity && f == field && m.contains(fragment)),
        "no {severity:?} at '{field}' containing {fragment:?} in:\n{}",
        messages(found)
    );
}

const WF: &str = "workflows/w/workflow.yaml";
const MIN: &str =
    "instructions: Work.\nskills: { allow_always: [] }\nstates:\n  a:\n    triggers: { manual: }\n";

#[test]
fn a_minimal_workflow_is_clean() {
    let found = check(&[(WF, MIN)], ValidateOptions::new("w"));
    assert!(found.is_empty(), "{}", messages(&found));
}

#[test]
fn loader_framing() {
    let found = check(&[], ValidateOptions::new("w"));
    assert_eq!(
        found,
        vec![(
            Severity::Error,
            String::new(),
            WF.to_string(),
            "No workflow.yaml found for workflow 'w'".to_string()
        )]
    );
    let found = check(&[(WF, "- a\n")], ValidateOptions::new("w"));
    assert_eq!(found.len(), 1, "{}", messages(&found));
    assert!(
        found[0]
            .3
            .starts_with("workflows/w/workflow.yaml machine spec is not a YAML mapping")
    );
    let found = check(
        &[("workflows/Bad_Name/workflow.yaml", MIN)],
        ValidateOptions::new("Bad_Name"),
    );
    has(
        &found,
        Severity::Error,
        "workflow",
        "is not hyphen-separated kebab-case",
    );
    let found = check(&[], ValidateOptions::new("  "));
    has(
        &found,
        Severity::Error,
        "workflow",
        "No workflow slug provided",
    );
    let found = check(
        &[(WF, &format!("{MIN}    title: ''\n"))],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Error,
        "states.a.title",
        "workflows/w/workflow.yaml: 'states.a.title': must be a non-empty string",
    );
    let found = check(
        &[
            (WF, MIN),
            ("workflows/w/WORKFLOW.md", "---\ntitle: x\n---\nProse\n"),
        ],
        ValidateOptions::new("w"),
    );
    assert_eq!(found.len(), 1, "{}", messages(&found));
    assert_eq!(found[0].2, "workflows/w/WORKFLOW.md");
    assert!(found[0].3.contains("frontmatter"));
    let found = check(
        &[(WF, &format!("runtime: {{ version: 99 }}\n{MIN}"))],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Error,
        "runtime",
        "Unsupported runtime contract 'archmax-harness@99'. Supported: archmax-harness@1, archmax-harness@2.",
    );
}

#[test]
fn skills_pass() {
    let spec = "instructions: Work.\nskills: { allow_always: [alpha, ghost] }\nstates:\n  a:\n    triggers: { manual: }\n    skills: { forbid: [phantom] }\n";
    let found = check(
        &[
            (WF, spec),
            (
                "skills/alpha/SKILL.md",
                "---\nname: alpha\ndescription: First.\n---\nBody\n",
            ),
            (
                "skills/beta/SKILL.md",
                "---\nname: gamma\ndescription: Misnamed.\n---\n",
            ),
            (
                "skills/delta/SKILL.md",
                "---\nname: delta\n---\nno description\n",
            ),
        ],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Warning,
        "skills",
        "Skipping skill 'delta' at skills/delta/: SKILL.md has no 'description'",
    );
    has(
        &found,
        Severity::Error,
        "skills",
        "Skill 'gamma' should match directory name 'beta'",
    );
    has(
        &found,
        Severity::Error,
        "skills.allow_always",
        "'skills.allow_always' names skill 'ghost', which no source provides. Known skills: alpha, beta.",
    );
    has(
        &found,
        Severity::Error,
        "states.a.skills.forbid",
        "State 'a' 'skills.forbid' names skill 'phantom'",
    );
    let found = check(
        &[
            (
                WF,
                "instructions: Work.\nstates:\n  a:\n    triggers: { manual: }\n",
            ),
            (
                "skills/alpha/SKILL.md",
                "---\nname: alpha\ndescription: A.\n---\n",
            ),
        ],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Warning,
        "skills",
        "This workflow declares no root 'skills' block",
    );
}

#[test]
fn mounts_pass() {
    let mut opts = ValidateOptions::new("w");
    opts.mounts = Some(vec![
        MountDecl {
            name: "reference".into(),
            kind: MountKind::Dir,
            governed: true,
            read_only: true,
        },
        MountDecl {
            name: "shared".into(),
            kind: MountKind::Dir,
            governed: false,
            read_only: false,
        },
    ]);
    let spec = "instructions: Work.\nskills: { allow_always: [] }\nmounts: { allow_always: [{ mount: reference, access: read_write }, shared, nowhere] }\nstates:\n  a:\n    triggers: { manual: }\n    mounts: { forbid: [reference] }\n  b:\n    mounts: { forbid: [reference] }\n";
    let found = check(&[(WF, spec)], opts.clone());
    has(
        &found,
        Severity::Warning,
        "mounts.allow_always",
        "serves read-only",
    );
    has(
        &found,
        Severity::Warning,
        "mounts.allow_always",
        "does not declare governed",
    );
    has(
        &found,
        Severity::Error,
        "mounts.allow_always",
        "'mounts.allow_always' names mount 'nowhere', which the workspace does not mount. Mounts: reference, shared.",
    );
    assert!(
        !found.iter().any(|f| f.1 == "states.a.mounts.forbid"),
        "root grants reference: {}",
        messages(&found)
    );
    let found = check(&[(WF, MIN)], opts);
    has(
        &found,
        Severity::Warning,
        "mounts",
        "This workflow declares no root 'mounts' block",
    );
}

#[test]
fn hook_scripts() {
    let spec = "instructions: Work.\nskills: { allow_always: [] }\nstates:\n  a:\n    triggers: { manual: }\n    before: { script: hooks/gate.js }\n    after:\n      - { script: hooks/missing.js }\n      - { webhook: https://example.invalid }\n";
    let found = check(
        &[
            (WF, spec),
            (
                "workflows/w/hooks/gate.js",
                "/** Gate. */\nimport { defineHook } from '@archmax-ai/harness/sandbox';\nimport fs from 'node:fs';\nexport default defineHook(() => ({ verdict: 'ok' }));\n",
            ),
        ],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Error,
        "states.a.before",
        "Hook script 'workflows/w/hooks/gate.js' imports from 'node:fs'",
    );
    has(
        &found,
        Severity::Error,
        "states.a.after",
        "State 'a' 'after' hook script not found: workflows/w/hooks/missing.js",
    );
    has(
        &found,
        Severity::Error,
        "states.a.after",
        "hook uses unknown kind 'webhook'",
    );
    assert_eq!(found.len(), 3, "{}", messages(&found));
    let spec = "instructions: Work.\nskills: { allow_always: [] }\nstates:\n  a:\n    triggers: { manual: }\n    before: { script: ../../secrets.js }\n";
    let found = check(&[(WF, spec)], ValidateOptions::new("w"));
    has(&found, Severity::Error, "states.a.before", "must be a hook");
    has(
        &found,
        Severity::Error,
        "states.a.before",
        "resolves outside 'hooks/'",
    );
}

#[test]
fn governance_probes() {
    let spec = "instructions: Work.\nskills: { allow_always: [] }\ntools: { forbid_always: [lookup] }\nstates:\n  a:\n    triggers: { manual: }\n    tools:\n      allow:\n        - task\n        - lookup\n        - audit\n        - { tool: write_file, paths: ['workflows/w/**'] }\n        - { tool: write_file, args: { file_path: 'checkpoints/x' } }\n        - { tool: archmax_run, paths: ['bin/**'] }\n        - { tool: read_file, paths: ['skills/alpha/**'] }\n        - { tool: archmax_advance, args: { to: [ghost, b] } }\n      forbid: [audit]\n  b: {}\n";
    let found = check(
        &[
            (WF, spec),
            (
                "skills/alpha/SKILL.md",
                "---\nname: alpha\ndescription: A.\n---\n",
            ),
        ],
        ValidateOptions::new("w"),
    );
    let f = "states.a.tools.allow";
    // `task` is a tool like any other: its grant is not a problem.
    assert!(
        !found.iter().any(|(_, _, _, m)| m.contains("'task'")),
        "{found:#?}"
    );
    has(
        &found,
        Severity::Error,
        f,
        "allows 'lookup', which 'tools.forbid_always' denies in every state",
    );
    has(
        &found,
        Severity::Error,
        f,
        "allows 'audit' and forbids it in the same state",
    );
    has(
        &found,
        Severity::Error,
        f,
        "names the authoring plane ('workflows/')",
    );
    has(&found, Severity::Error, f, "runtime-owned run area");
    has(&found, Severity::Error, f, "outside every skill bundle");
    has(
        &found,
        Severity::Error,
        f,
        "which can only match inside skill 'alpha'",
    );
    has(
        &found,
        Severity::Warning,
        f,
        "allows archmax_advance to undefined state 'ghost'",
    );
    has(
        &found,
        Severity::Warning,
        "states.a.transitions",
        "allows archmax_advance to 'b' but declares no edge to it",
    );
}

#[test]
fn zone_and_mount_probes() {
    let mut opts = ValidateOptions::new("w");
    opts.mounts = Some(vec![
        MountDecl {
            name: "skills".into(),
            kind: MountKind::Dir,
            governed: false,
            read_only: true,
        },
        MountDecl {
            name: "catalogs/eu".into(),
            kind: MountKind::Dir,
            governed: true,
            read_only: true,
        },
        MountDecl {
            name: "ledger".into(),
            kind: MountKind::Dir,
            governed: true,
            read_only: false,
        },
    ]);
    let spec = "instructions: Work.\nskills: { allow_always: [] }\nmounts: { allow_always: [] }\nstates:\n  a:\n    triggers: { manual: }\n    tools:\n      allow:\n        - { tool: write_file, paths: ['skills/x/notes.md'] }\n        - { tool: read_file, paths: ['ledger/**'] }\n        - { tool: read_file, paths: ['catalogs/eu/*.csv'] }\n  b:\n    mounts: { allow: [ledger] }\n    tools: { allow: [{ tool: read_file, paths: ['ledger/**'] }] }\n";
    let found = check(&[(WF, spec)], opts);
    let f = "states.a.tools.allow";
    has(
        &found,
        Severity::Error,
        f,
        "allows 'write_file' on 'skills/x/notes.md', which is in the read-only zone of mount 'skills'",
    );
    has(
        &found,
        Severity::Warning,
        f,
        "allows 'read_file' on 'ledger/**', which can only match inside mount 'ledger'",
    );
    has(
        &found,
        Severity::Warning,
        f,
        "can only match inside mount 'catalogs/eu'",
    );
    assert!(
        !found.iter().any(|x| x.1 == "states.b.tools.allow"),
        "b enables ledger: {}",
        messages(&found)
    );
    assert_eq!(found.len(), 3, "{}", messages(&found));
}

#[test]
fn sub_workflows() {
    let caller = |targets: &str| {
        format!(
            "instructions: Work.\nskills: {{ allow_always: [] }}\nstates:\n  a:\n    triggers: {{ manual: }}\n    tools: {{ allow: [{targets}] }}\n"
        )
    };
    let leaf = "instructions: Leaf.\nskills: { allow_always: [] }\nstates:\n  s:\n    triggers: { manual: }\n";
    let found = check(
        &[
            (
                WF,
                &caller(
                    "archmax_workflow_gone, archmax_workflow_nomanual, archmax_workflow_off, archmax_workflow_Bad, archmax_workflow_w",
                ),
            ),
            (
                "workflows/nomanual/workflow.yaml",
                "states:\n  s:\n    triggers: { mail: }\n",
            ),
            (
                "workflows/off/workflow.yaml",
                &format!("disabled: true\n{leaf}"),
            ),
        ],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Error,
        "states",
        "state 'a' allows 'archmax_workflow_gone', but 'workflows/gone/workflow.yaml' is missing or has no valid machine spec.",
    );
    has(
        &found,
        Severity::Error,
        "states",
        "declares no 'manual' trigger",
    );
    has(&found, Severity::Warning, "states", "but 'off' is disabled");
    has(
        &found,
        Severity::Error,
        "states",
        "whose target 'Bad' is not hyphen-separated kebab-case",
    );
    // A workflow may call itself: its child runs, and the child's own call is the one the
    // runtime refuses, which is a warning. What the child's targets are is said once.
    has(
        &found,
        Severity::Warning,
        "states",
        "workflow 'w' (state 'a') allows 'archmax_workflow_w', which is already running in this chain (w → w → w), so the runtime refuses that call and the recursion stops there.",
    );
    assert!(
        !found
            .iter()
            .any(|(_, _, _, m)| m.starts_with("state 'a' allows 'archmax_workflow_w'")),
        "{}",
        messages(&found)
    );
    assert_eq!(
        found
            .iter()
            .filter(|(_, _, _, m)| m.contains("'workflows/gone/workflow.yaml' is missing"))
            .count(),
        1,
        "{}",
        messages(&found)
    );
    // A chain of five: w → l1 → l2 → l3 → l4 is four delegations deep.
    let found = check(
        &[
            (WF, &caller("archmax_workflow_l1")),
            ("workflows/l1/workflow.yaml", &caller("archmax_workflow_l2")),
            ("workflows/l2/workflow.yaml", &caller("archmax_workflow_l3")),
            ("workflows/l3/workflow.yaml", &caller("archmax_workflow_l4")),
            ("workflows/l4/workflow.yaml", leaf),
        ],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Error,
        "states",
        "workflow 'l3' (state 'a') allows 'archmax_workflow_l4', reaching 4 levels (w → l1 → l2 → l3 → l4)",
    );
}

#[test]
fn sub_workflow_cycles_through_others_and_broken_target_signatures() {
    let caller = |targets: &str| {
        format!(
            "instructions: Work.\nskills: {{ allow_always: [] }}\nstates:\n  a:\n    triggers: {{ manual: }}\n    tools: {{ allow: [{targets}] }}\n"
        )
    };
    // w → b → w runs (w is not among its own delegations), and that w's call of b is refused;
    // a disabled target is walked into.
    let found = check(
        &[
            (
                WF,
                &caller("archmax_workflow_b, archmax_workflow_off, archmax_workflow_typo"),
            ),
            ("workflows/b/workflow.yaml", &caller("archmax_workflow_w")),
            (
                "workflows/off/workflow.yaml",
                &format!("disabled: true\n{}", caller("archmax_workflow_off")),
            ),
            // A target whose signature does not parse is not usable: the call is refused.
            (
                "workflows/typo/workflow.yaml",
                "instructions: T.\nstates:\n  s:\n    triggers:\n      manual:\n        requires: [{ name: order_id, type: widget }]\n",
            ),
        ],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Warning,
        "states",
        "workflow 'w' (state 'a') allows 'archmax_workflow_b', which is already running in this chain (w → b → w → b)",
    );
    has(&found, Severity::Warning, "states", "but 'off' is disabled");
    has(
        &found,
        Severity::Warning,
        "states",
        "workflow 'off' (state 'a') allows 'archmax_workflow_off', which is already running in this chain (w → off → off)",
    );
    // A refused call stops the recursion; the spec is not wrong for it.
    assert!(
        !found
            .iter()
            .any(|(sev, _, _, m)| *sev == Severity::Error && m.contains("already running")),
        "{}",
        messages(&found)
    );
    assert_eq!(
        found
            .iter()
            .filter(|(_, _, _, m)| m.contains("already running"))
            .count(),
        2,
        "{}",
        messages(&found)
    );
    has(
        &found,
        Severity::Error,
        "states",
        "state 'a' allows 'archmax_workflow_typo', but 'workflows/typo/workflow.yaml' is missing or has no valid machine spec.",
    );
}

#[test]
fn case_files() {
    let found = check(
        &[
            (WF, MIN),
            (
                "workflows/w/tests/a.test.yaml",
                "title: ok\ndescription: fine\ntrigger: { id: mail }\nsteps:\n  - send: hi\n",
            ),
            (
                "workflows/w/tests/nested/b.test.yml",
                "title: ok\ndescription: fine\nversion: 2\n",
            ),
            (
                "workflows/w/tests/c.test.yaml",
                "title: ok\ndescription: fine\nworkspace:\n  x.json: { from: ../secret.json }\n  y.json: { from: fixtures/missing.json }\n",
            ),
            ("workflows/w/tests/notes.yaml", "not: a case\n"),
            ("workflows/w/tests.config.js", "export default {}\n"),
        ],
        ValidateOptions::new("w"),
    );
    has(
        &found,
        Severity::Error,
        "trigger",
        "'workflows/w/tests/a.test.yaml' declares trigger 'mail', which no state of this workflow declares (declared: manual only)",
    );
    has(
        &found,
        Severity::Error,
        "",
        "workflows/w/tests/nested/b.test.yml: unknown key 'version'",
    );
    has(
        &found,
        Severity::Error,
        "workspace",
        "'from: ../secret.json' escapes the tests directory",
    );
    has(
        &found,
        Severity::Error,
        "workspace",
        "references 'from: fixtures/missing.json', but 'workflows/w/tests/fixtures/missing.json' does not exist",
    );
    has(
        &found,
        Severity::Error,
        "tests",
        "tests.config.js was removed",
    );
    assert_eq!(found.len(), 5, "{}", messages(&found));
}

#[test]
fn sub_workflow_mocks_are_held_to_their_targets() {
    let child = "instructions: Enrich.\nskills: { allow_always: [] }\nstates:\n  e:\n    triggers:\n      manual:\n        returns: [{ name: risk, type: string }]\n";
    let case = "title: ok\ndescription: fine\nmocks:\n  - { tool: archmax_workflow_enrich, result: { returns: { risk: 3 } } }\n  - { tool: archmax_workflow_enrich, result: { returns: { risk: low } } }\n  - { tool: archmax_workflow_gone, result: done }\nsteps:\n  - send: hi\n";
    let ws = TempWorkspace::new(&[
        (WF, MIN),
        ("workflows/enrich/workflow.yaml", child),
        ("workflows/w/tests/m.test.yaml", case),
    ]);
    let r = validate_workflow(&DiskFiles::new(ws.root()), &ValidateOptions::new("w"));
    let mocks: Vec<(String, Option<u32>)> = r
        .diagnostics
        .iter()
        .filter(|d| d.field.as_deref() == Some("mocks"))
        .map(|d| (d.message.clone(), d.line))
        .collect();
    assert_eq!(mocks.len(), 2, "{:?}", r.diagnostics);
    assert!(
        mocks[0].0.starts_with(
            "workflows/w/tests/m.test.yaml: mocks[0]: its returns break the 'manual' trigger of 'enrich': "
        ),
        "{mocks:?}"
    );
    assert_eq!(mocks[0].1, Some(4));
    assert_eq!(
        mocks[1],
        (
            "workflows/w/tests/m.test.yaml: mocks[2]: mocks 'archmax_workflow_gone', but 'workflows/gone/workflow.yaml' is missing or has no valid machine spec.".to_string(),
            Some(6)
        )
    );
}

#[test]
fn state_slugs() {
    let spec = "instructions: Work.\nskills: { allow_always: [] }\nstates:\n  Identify Case:\n    triggers: { manual: }\n  '':\n    title: nobody\n";
    let found = check(&[(WF, spec)], ValidateOptions::new("w"));
    has(
        &found,
        Severity::Error,
        "states.Identify Case",
        "State slug 'Identify Case' is not a valid slug",
    );
    has(
        &found,
        Severity::Error,
        "states",
        "A state is declared with an empty slug",
    );
}
