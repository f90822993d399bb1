//! Layer 4: `validateWorkflow`, the checks that read the rest of a workspace.
//!
//! Passes, in the original's order, after the loader's findings and the runtime
//! contract: skills → mounts → per state (slug, hook scripts, governance probes) →
//! `allow_always` probes → sub-workflows → test cases.

pub mod cases;
mod frontmatter;
mod hooks;
mod mounts;
mod probes;
pub mod skills;
mod subworkflows;

use serde::Serialize;
use ts_rs::TS;

use crate::diagnostic::Diagnostic;
use crate::grammar::is_slug;
use crate::runtime_contract::{is_supported, resolve_contract, unsupported_message};
use crate::{NOT_A_MAPPING, read_spec};

pub use mounts::{MountDecl, MountKind, zero_config};
pub use skills::SkillBundle;

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The file or directory name.
    pub name: String,
    /// True for a directory.
    pub is_dir: bool,
}

/// Read access to a workspace through workspace-relative `/` paths.
pub trait Files {
    /// The text of a file, or `None` when it cannot be read.
    fn read(&self, path: &str) -> Option<String>;
    /// The text of a file: `Ok(None)` when there is none, `Err` with what is wrong
    /// (`is a named pipe (FIFO), not a regular file`, `is larger than …`) when something
    /// is there that the workspace does not read.
    fn read_checked(&self, path: &str) -> Result<Option<String>, String> {
        Ok(self.read(path))
    }
    /// The entries of a directory, sorted by name; empty when it cannot be read.
    fn list(&self, dir: &str) -> Vec<DirEntry>;
}

/// A workspace held in memory: path → text. Directories are implied by paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemFiles {
    files: std::collections::BTreeMap<String, String>,
}

impl MemFiles {
    /// An empty workspace.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds (or replaces) a file.
    pub fn insert(&mut self, path: impl Into<String>, text: impl Into<String>) {
        self.files.insert(path.into(), text.into());
    }
}

impl Files for MemFiles {
    fn read(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }
    fn list(&self, dir: &str) -> Vec<DirEntry> {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let mut out: Vec<DirEntry> = Vec::new();
        for path in self.files.keys() {
            let Some(rest) = path.strip_prefix(&prefix) else {
                continue;
            };
            let (name, is_dir) = match rest.split_once('/') {
                Some((d, _)) => (d, true),
                None => (rest, false),
            };
            if !out.iter().any(|e| e.name == name) {
                out.push(DirEntry {
                    name: name.to_string(),
                    is_dir,
                });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// Where a script does not parse: the parser's words and the 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSyntaxError {
    /// The parser's reason (`unexpected token in expression: ')'`).
    pub message: String,
    /// 1-based line in the script.
    pub line: u32,
    /// 1-based column in the script.
    pub column: u32,
}

/// Parses one hook script without running it: `None` when it parses. The language crate runs
/// no JavaScript; a host with a JavaScript engine hands it one (`archmax validate` hands it the
/// sandbox's, so a hook is parsed exactly as a run would parse it).
pub type ScriptParser = fn(file: &str, source: &str) -> Option<ScriptSyntaxError>;

/// What to validate.
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    /// The workflow slug (the directory under `workflows/`).
    pub workflow: String,
    /// Skill sources, workspace-relative (default `["skills/"]`).
    pub skills: Vec<String>,
    /// The host's mount table; `None` = the zero-config table.
    pub mounts: Option<Vec<MountDecl>>,
    /// Parses every hook script found, reporting a syntax error in the script's file; `None`
    /// (the default) leaves scripts unparsed.
    pub parse_script: Option<ScriptParser>,
}

impl ValidateOptions {
    /// Defaults for `workflow`.
    pub fn new(workflow: impl Into<String>) -> Self {
        ValidateOptions {
            workflow: workflow.into(),
            skills: vec!["skills/".to_string()],
            mounts: None,
            parse_script: None,
        }
    }
}

/// The outcome of [`validate_workflow`].
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
#[serde(rename_all = "camelCase")]
pub struct ValidationResult {
    /// No error-severity diagnostic.
    pub valid: bool,
    /// The workflow slug validated.
    pub workflow: String,
    /// The workspace root, when validated on disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_dir: Option<String>,
    /// Every finding, in pass order.
    pub diagnostics: Vec<Diagnostic>,
}

/// The spec file of a workflow.
pub fn spec_file(workflow: &str) -> String {
    format!("workflows/{workflow}/workflow.yaml")
}

/// What loading one workflow found: the typed spec (if it loads), the raw tree,
/// and the loader's diagnostics with files set.
pub(crate) struct Loaded {
    /// The typed spec, when the shape is clean.
    pub spec: Option<crate::model::Workflow>,
    pub tree: Option<crate::yaml::Node>,
    pub diagnostics: Vec<Diagnostic>,
    /// No load-blocking issue (lint errors do not count).
    pub usable: bool,
}

/// The workspace's persona file, read into every prompt.
pub const PERSONA_FILE: &str = "AGENTS.md";

/// Loads `workflows/<w>/workflow.yaml` and `WORKFLOW.md` as the runtime would.
pub(crate) fn load(files: &dyn Files, workflow: &str) -> Option<Loaded> {
    let file = spec_file(workflow);
    let text = match files.read_checked(&file) {
        Ok(text) => text?,
        Err(why) => {
            return Some(Loaded {
                spec: None,
                tree: None,
                diagnostics: vec![Diagnostic::error("", format!("{file} {why}")).in_file(&file)],
                usable: false,
            });
        }
    };
    let read = read_spec(&text);
    let mut diagnostics = Vec::new();
    let mut usable = read.validation.ok;
    if read.tree.is_none() {
        // The reader's finding (`machine spec is not a YAML mapping: <the parser's reason>`,
        // or `… (found <kind>)`), after the file: the contract's prefix, and why.
        let first = read.validation.schema.first();
        let finding = first
            .map(|d| d.message.as_str())
            .filter(|m| m.starts_with(NOT_A_MAPPING))
            .unwrap_or(NOT_A_MAPPING);
        diagnostics.push(
            Diagnostic::error("", format!("{file} {finding}"))
                .in_file(&file)
                .at(first
                    .and_then(|d| d.line.zip(d.column))
                    .map(|(line, column)| crate::yaml::Pos { line, column })),
        );
        return Some(Loaded {
            spec: None,
            tree: None,
            diagnostics,
            usable: false,
        });
    }
    for d in &read.validation.schema {
        let mut d = d.clone();
        d.message = match &d.field {
            Some(f) => format!("{file}: '{f}': {}", d.message),
            None => format!("{file}: {}", d.message),
        };
        diagnostics.push(d.in_file(&file));
    }
    let md = format!("workflows/{workflow}/WORKFLOW.md");
    match files.read_checked(&md) {
        Ok(Some(prose)) if frontmatter::has_frontmatter(&prose) => {
            usable = false;
            diagnostics.push(
                Diagnostic::error("", frontmatter::competing_message(&md, &file)).in_file(&md),
            );
        }
        Ok(_) => {}
        Err(why) => {
            usable = false;
            diagnostics.push(Diagnostic::error("", format!("{md} {why}")).in_file(&md));
        }
    }
    for d in &read.validation.lint {
        let mut d = d.clone();
        d.message = format!("{file}: {}", d.message);
        diagnostics.push(d.in_file(&file));
    }
    Some(Loaded {
        spec: read.validation.spec,
        tree: read.tree,
        diagnostics,
        usable,
    })
}

/// A workflow as the runtime loads it: the typed spec and the skill registry.
#[derive(Debug, Clone)]
pub struct LoadedWorkflow {
    /// The typed spec (shape and document rules clean).
    pub spec: crate::model::Workflow,
    /// The skill bundles the workspace provides.
    pub skills: Vec<SkillBundle>,
    /// Lint findings and registry warnings: reported, never blocking.
    pub warnings: Vec<Diagnostic>,
}

/// Why a workflow cannot be loaded: `WorkflowLoadError.problem`, and its TypeScript type.
#[derive(Debug, Clone, PartialEq, Eq, TS)]
#[ts(
    export,
    type = r#""no workflow.yaml found" | "no valid machine spec" | `the file ${string}`"#
)]
pub enum LoadProblem {
    /// No `workflows/<slug>/workflow.yaml`.
    Missing,
    /// The file is there, but its spec has an error that blocks loading.
    Invalid,
    /// The file cannot be read as an authored file (not a regular file, too large, …): the reason.
    Unreadable(String),
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadProblem::Missing => f.write_str("no workflow.yaml found"),
            LoadProblem::Invalid => f.write_str("no valid machine spec"),
            LoadProblem::Unreadable(why) => write!(f, "the file {why}"),
        }
    }
}

/// Why a workflow cannot be loaded. The message is the original's
/// `WorkflowLoadError` text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "Cannot load workflow '{workflow}' ({path}): {problem}. Run 'archmax validate {workflow}' for details."
)]
pub struct WorkflowLoadError {
    /// The workflow slug.
    pub workflow: String,
    /// The spec file.
    pub path: String,
    /// [`LoadProblem`] in words: `no workflow.yaml found`, `no valid machine spec`, or
    /// `the file <reason>`.
    pub problem: String,
    /// The diagnostics that make it unusable.
    pub diagnostics: Vec<Diagnostic>,
}

/// Loads a workflow for running: the spec must be usable (no shape, document-rule
/// or competing-frontmatter error); lint findings come back as warnings.
pub fn load_workflow(
    files: &dyn Files,
    workflow: &str,
    skill_sources: &[String],
) -> Result<LoadedWorkflow, WorkflowLoadError> {
    let fail = |problem: LoadProblem, diagnostics: Vec<Diagnostic>| WorkflowLoadError {
        workflow: workflow.to_string(),
        path: spec_file(workflow),
        problem: problem.to_string(),
        diagnostics,
    };
    if let Err(why) = files.read_checked(&spec_file(workflow)) {
        return Err(fail(LoadProblem::Unreadable(why), Vec::new()));
    }
    let loaded = load(files, workflow).ok_or_else(|| fail(LoadProblem::Missing, Vec::new()))?;
    let Some(spec) = loaded.spec.filter(|_| loaded.usable) else {
        let errors = loaded
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect();
        return Err(fail(LoadProblem::Invalid, errors));
    };
    let (skills, _) = skills::discover(files, skill_sources);
    let warnings = loaded.diagnostics;
    Ok(LoadedWorkflow {
        spec,
        skills,
        warnings,
    })
}

/// Validates a workflow of a workspace: the spec, its prose, and everything it
/// points at. Never fails; a missing workflow is a diagnostic.
pub fn validate_workflow(files: &dyn Files, opts: &ValidateOptions) -> ValidationResult {
    let w = opts.workflow.as_str();
    let file = spec_file(w);
    let mut out = Vec::new();
    if w.trim().is_empty() {
        out.push(Diagnostic::error(
            "workflow",
            "No workflow slug provided: a workflow is named by its directory under 'workflows/' \
             (e.g. 'order-lookup').",
        ));
        return result(w, out);
    }
    if !is_slug(w) {
        out.push(
            Diagnostic::error(
                "workflow",
                format!(
                    "Workflow slug '{w}' is not hyphen-separated kebab-case: rename the directory \
                     'workflows/{w}/' to lowercase letters and digits joined by single hyphens \
                     (e.g. 'order-lookup'). A human-readable name belongs in 'title'."
                ),
            )
            .in_file(&file),
        );
    }
    let Some(loaded) = load(files, w) else {
        out.push(
            Diagnostic::error("", format!("No workflow.yaml found for workflow '{w}'"))
                .in_file(&file),
        );
        return result(w, out);
    };
    out.extend(loaded.diagnostics.iter().cloned());
    // Read as a run reads it (the persona of every prompt), so the two agree on it.
    if let Err(why) = files.read_checked(PERSONA_FILE) {
        out.push(Diagnostic::error("", format!("{PERSONA_FILE} {why}")).in_file(PERSONA_FILE));
    }
    let Some(tree) = &loaded.tree else {
        return result(w, out);
    };
    let runtime = tree.get("runtime").map(crate::yaml::Node::to_json);
    let contract = resolve_contract(runtime.as_ref().filter(|r| r.is_object()));
    if !is_supported(&contract) {
        out.push(
            Diagnostic::error("runtime", unsupported_message(&contract))
                .in_file(&file)
                .at(crate::locate(tree, "runtime")),
        );
    }
    let states_ok = tree
        .get("states")
        .and_then(|s| s.as_map())
        .is_some_and(|m| !m.is_empty());
    if !states_ok {
        return result(w, out);
    }
    let (bundles, skill_issues) = skills::discover(files, &opts.skills);
    let default_mounts = mounts::zero_config();
    let mount_table = opts.mounts.as_deref().unwrap_or(&default_mounts);
    let ctx = Context {
        files,
        workflow: w,
        file: &file,
        tree,
        bundles: &bundles,
        mounts: mount_table,
        parse_script: opts.parse_script,
    };
    skills::check(&ctx, skill_issues, &mut out);
    mounts::check(&ctx, &mut out);
    probes::per_state(&ctx, &mut out);
    probes::allow_always(&ctx, &mut out);
    subworkflows::check(&ctx, &mut out);
    cases::check(&ctx, &mut out);
    result(w, out)
}

fn result(workflow: &str, diagnostics: Vec<Diagnostic>) -> ValidationResult {
    ValidationResult {
        valid: !diagnostics.iter().any(Diagnostic::is_error),
        workflow: workflow.to_string(),
        root_dir: None,
        diagnostics,
    }
}

/// Every trigger id the states of a raw spec tree declare, in document order.
pub(crate) fn trigger_ids(tree: &crate::yaml::Node) -> Vec<String> {
    tree.get("states")
        .and_then(crate::yaml::Node::as_map)
        .unwrap_or(&[])
        .iter()
        .filter_map(|e| e.value.get("triggers").and_then(crate::yaml::Node::as_map))
        .flat_map(|t| t.iter().map(|e| e.key.clone()))
        .collect()
}

/// Everything a pass needs.
pub(crate) struct Context<'a> {
    pub files: &'a dyn Files,
    pub workflow: &'a str,
    pub file: &'a str,
    /// The raw tree: passes read it so they still run when the shape failed.
    pub tree: &'a crate::yaml::Node,
    /// The skill registry, discovered once.
    pub bundles: &'a [skills::SkillBundle],
    /// The host's mount table (or the zero-config one).
    pub mounts: &'a [MountDecl],
    /// The host's script parser, if it gave one.
    pub parse_script: Option<ScriptParser>,
}

impl Context<'_> {
    /// The states mapping of the raw tree.
    pub fn states(&self) -> &[crate::yaml::Entry] {
        self.tree
            .get("states")
            .and_then(crate::yaml::Node::as_map)
            .unwrap_or(&[])
    }
    /// The node at a dotted field path of the raw tree (keys with dots matched greedily).
    pub fn node(&self, field: &str) -> Option<&crate::yaml::Node> {
        let segs: Vec<&str> = field.split('.').collect();
        let mut node = self.tree;
        let mut i = 0;
        while i < segs.len() {
            let (n, take) = (1..=segs.len() - i)
                .rev()
                .find_map(|take| node.get(&segs[i..i + take].join(".")).map(|n| (n, take)))?;
            node = n;
            i += take;
        }
        Some(node)
    }
    /// The four list positions of a governance block (`skills` or `mounts`):
    /// `(field, state, list key)`, root lists first, then each state's.
    pub fn governance_lists(&self, block: &str) -> Vec<(String, Option<String>, String)> {
        let mut lists = vec![
            (
                format!("{block}.allow_always"),
                None,
                format!("{block}.allow_always"),
            ),
            (
                format!("{block}.forbid_always"),
                None,
                format!("{block}.forbid_always"),
            ),
        ];
        for e in self.states() {
            for kind in ["allow", "forbid"] {
                lists.push((
                    format!("states.{}.{block}.{kind}", e.key),
                    Some(e.key.clone()),
                    format!("{block}.{kind}"),
                ));
            }
        }
        lists
    }
    /// A diagnostic about the spec file, positioned at `field`.
    pub fn at(&self, d: Diagnostic) -> Diagnostic {
        let pos = crate::locate(self.tree, d.field.as_deref().unwrap_or(""));
        d.in_file(self.file).at(pos)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_load_problem_is_one_of_the_words_its_typescript_type_lists() {
        use ts_rs::TS;
        let ty = super::LoadProblem::inline(&ts_rs::Config::default());
        for p in [super::LoadProblem::Missing, super::LoadProblem::Invalid] {
            assert!(ty.contains(&format!("\"{p}\"")), "{p} in {ty}");
        }
        let unreadable = super::LoadProblem::Unreadable("is a FIFO".into()).to_string();
        assert!(
            unreadable.starts_with("the file ") && ty.contains("`the file ${string}`"),
            "{ty}"
        );
    }

    use super::*;

    const SPEC: &str = "instructions: Work.\nstates:\n  a:\n    triggers: { manual: }\n    instructions: Do it.\n    after: { script: hooks/check.js }\n";

    fn files(hook: &str) -> MemFiles {
        let mut files = MemFiles::new();
        files.insert("workflows/w/workflow.yaml", SPEC);
        files.insert("workflows/w/hooks/check.js", hook);
        files
    }

    #[test]
    fn a_yaml_syntax_error_keeps_the_contract_prefix_and_says_why() {
        let mut files = MemFiles::new();
        files.insert(
            "workflows/w/workflow.yaml",
            "instructions: \"Work.\nstates:\n  a: {\n",
        );
        let found = validate_workflow(&files, &ValidateOptions::new("w")).diagnostics;
        assert_eq!(found.len(), 1, "{found:?}");
        let prefix = "workflows/w/workflow.yaml machine spec is not a YAML mapping: ";
        assert!(
            found[0].message.starts_with(prefix) && found[0].message.len() > prefix.len(),
            "{}",
            found[0].message
        );
        assert!(found[0].line.is_some() && found[0].column.is_some());
        let mut files = MemFiles::new();
        files.insert("workflows/w/workflow.yaml", "- a\n");
        let found = validate_workflow(&files, &ValidateOptions::new("w")).diagnostics;
        assert_eq!(
            found[0].message,
            "workflows/w/workflow.yaml machine spec is not a YAML mapping (found array)"
        );
    }

    fn at_line_two(_file: &str, source: &str) -> Option<ScriptSyntaxError> {
        source.contains("((").then(|| ScriptSyntaxError {
            message: "unexpected token".into(),
            line: 2,
            column: 7,
        })
    }

    #[test]
    fn a_host_parser_reports_a_hook_that_does_not_parse_in_its_file() {
        let mut opts = ValidateOptions::new("w");
        let broken = files("export default () => {\n  ok((\n}\n");
        assert!(
            validate_workflow(&broken, &opts).valid,
            "no parser, no parse"
        );
        opts.parse_script = Some(at_line_two);
        let found = validate_workflow(&broken, &opts).diagnostics;
        let d = found
            .iter()
            .find(|d| d.message.contains("does not parse"))
            .expect("the syntax error");
        assert_eq!(
            d.message,
            "State 'a' 'after' hook script 'workflows/w/hooks/check.js' does not parse: unexpected token"
        );
        assert_eq!(d.file.as_deref(), Some("workflows/w/hooks/check.js"));
        assert_eq!((d.line, d.column), (Some(2), Some(7)));
        assert_eq!(d.field.as_deref(), Some("states.a.after"));
        assert!(validate_workflow(&files("export default () => true\n"), &opts).valid);
        // A refused import is the one finding: a run stops there.
        let found = validate_workflow(&files("import x from 'lodash'\nok((\n"), &opts).diagnostics;
        assert!(found.iter().all(|d| !d.message.contains("does not parse")));
        assert!(
            found
                .iter()
                .any(|d| d.message.contains("imports from 'lodash'"))
        );
    }
}
