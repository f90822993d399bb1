//! A deliberately naive reference of the digest's §2.1 precedence (with the 0.9.0
//! deltas), written from the digest and not from the kernel's code: plain loops,
//! string-prefix zone checks and a tiny segment-wise glob matcher (`*`, `**`, `?`,
//! literal text). Generated specs and random calls must get the same `allowed`
//! and rule id from the kernel and from the reference. Plus: `decide` never panics
//! on garbage arguments.

use archmax_kernel::{
    CallContext, CustomRule, Decision, Mounts, Origin, Policy, PolicyOptions, SkillDir, ToolCall,
    ToolPaths, Variables,
};
use serde_json::{Map, Value, json};

use crate::{spec, strs};

// ---------------------------------------------------------------------------
// PRNG
// ---------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn subset(&mut self, items: &[&str], percent: u64) -> Vec<String> {
        items
            .iter()
            .filter(|_| self.chance(percent))
            .map(|s| (*s).to_string())
            .collect()
    }
}

// ---------------------------------------------------------------------------
// Fixed world: mounts, skills, host path declarations
// ---------------------------------------------------------------------------

const DIR_MOUNTS: [&str; 5] = ["skills", "data", "catalogs/eu", "shared", "vault"];
const FILE_MOUNTS: [&str; 1] = ["AGENTS.md"];
const WRITABLE: [&str; 1] = ["shared"];
const GOVERNED: [&str; 3] = ["catalogs/eu", "shared", "vault"];
const SKILLS: [&str; 2] = ["order-data", "refund-policy"];

fn world_mounts() -> Mounts {
    Mounts {
        dirs: strs(&DIR_MOUNTS),
        files: strs(&FILE_MOUNTS),
        writable: strs(&WRITABLE),
        governed: strs(&GOVERNED),
        unsearchable: Vec::new(),
    }
}

fn world_skills() -> Vec<SkillDir> {
    SKILLS
        .iter()
        .map(|s| SkillDir {
            slug: (*s).to_string(),
            prefix: format!("skills/{s}"),
        })
        .collect()
}

fn world_tool_paths() -> ToolPaths {
    let mut t = ToolPaths::new();
    for (tool, args) in [
        ("pack_files", vec![("files", "read")]),
        ("stash", vec![("target", "write")]),
        ("bundle", vec![("src", "read"), ("dst", "write")]),
    ] {
        let owned: Vec<(String, String)> = args
            .iter()
            .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
            .collect();
        t.declare(tool, &owned).expect("declaration");
    }
    t
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Acc {
    Read,
    List,
    Search,
    Write,
    Remove,
    Execute,
}

fn mutating(a: Acc) -> bool {
    a == Acc::Write || a == Acc::Remove
}

/// §6, written out again: (arg, access, alias).
fn declared(tool: &str) -> Option<Vec<(&'static str, Acc, Option<&'static str>)>> {
    Some(match tool {
        "read_file" => vec![("file_path", Acc::Read, Some("path"))],
        "write_file" => vec![("file_path", Acc::Write, Some("path"))],
        "edit_file" => vec![("file_path", Acc::Write, Some("path"))],
        "ls" => vec![("path", Acc::List, Some("file_path"))],
        "glob" => vec![("path", Acc::Search, Some("file_path"))],
        "grep" => vec![("path", Acc::Search, Some("file_path"))],
        "archmax_run" => vec![("file_path", Acc::Execute, Some("path"))],
        "copy_file" => vec![
            ("source", Acc::Read, None),
            ("destination", Acc::Write, None),
        ],
        "move_file" => vec![
            ("source", Acc::Remove, None),
            ("destination", Acc::Write, None),
        ],
        "remove_file" => vec![("file_path", Acc::Remove, None)],
        "pack_files" => vec![("files", Acc::Read, None)],
        "stash" => vec![("target", Acc::Write, None)],
        "bundle" => vec![("src", Acc::Read, None), ("dst", Acc::Write, None)],
        _ => return None,
    })
}

const DEFAULTS: [&str; 12] = [
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "copy_file",
    "move_file",
    "remove_file",
    "glob",
    "grep",
    "write_todos",
    "archmax_eval",
    "archmax_run",
];
const CONTROLS: [&str; 6] = [
    "archmax_advance",
    "archmax_reset",
    "archmax_wait",
    "archmax_raise",
    "archmax_get_variables",
    "archmax_set_variables",
];

// ---------------------------------------------------------------------------
// The generated spec, as data (rendered to YAML for the kernel)
// ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum G {
    Bare,
    Paths(Vec<String>),
    Args(Vec<(String, Vec<String>)>),
}

#[derive(Clone, Debug)]
struct E {
    tool: String,
    g: G,
}

#[derive(Clone, Debug)]
struct MGrant {
    name: String,
    read_only: bool,
    with_access: bool,
}

#[derive(Clone, Debug, Default)]
struct St {
    name: String,
    to: Vec<String>,
    allow: Option<Vec<E>>,
    forbid: Option<Vec<E>>,
    skills_allow: Vec<String>,
    skills_forbid: Vec<String>,
    mounts_allow: Vec<MGrant>,
    mounts_forbid: Vec<String>,
}

#[derive(Clone, Debug)]
struct Sp {
    allow_always: Option<Vec<E>>,
    forbid_always: Vec<E>,
    skills_allow_always: Vec<String>,
    skills_forbid_always: Vec<String>,
    mounts_allow_always: Vec<MGrant>,
    mounts_forbid_always: Vec<String>,
    states: Vec<St>,
    essential: Vec<String>,
    custom: bool,
}

const GRANT_TOOLS: [&str; 19] = [
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "copy_file",
    "move_file",
    "remove_file",
    "glob",
    "grep",
    "write_todos",
    "archmax_eval",
    "archmax_run",
    "web_fetch",
    "send_email",
    "pack_files",
    "stash",
    "notify",
    "bundle",
    "archmax_advance",
];

const PATH_GLOBS: [&str; 24] = [
    "scratchpad/**",
    "data/*.json",
    "data/**",
    "output/**",
    "output/*",
    "reports/**",
    "skills/**",
    "skills/order-data/**",
    "**",
    "*",
    "catalogs/eu/**",
    "shared/*",
    "secrets/**",
    "logs/?.txt",
    "**/x.md",
    "",
    "/output/**",
    "./data/**",
    "**/b/**",
    "large_tool_results/**",
    "${{dir}}/**",
    "out*/**",
    "../**",
    "*.md",
];

const URL_GLOBS: [&str; 6] = [
    "https://x.com/*",
    "https://x.com/**",
    "*",
    "**",
    "https:/x.com/*",
    "https://evil.com/**",
];
const TO_GLOBS: [&str; 6] = ["*@x.com", "a@b.c", "${{email}}", "", "*", "ann@*"];

fn gen_globs(rng: &mut Rng, pool: &[&str]) -> Vec<String> {
    let n = 1 + rng.below(2);
    (0..n).map(|_| (*rng.pick(pool)).to_string()).collect()
}

/// The argument an `args:` guard on `tool` names, and its glob pool.
fn guard_arg(rng: &mut Rng, tool: &str) -> (String, &'static [&'static str]) {
    match tool {
        "web_fetch" => ("url".into(), &URL_GLOBS),
        "send_email" | "notify" => ((if rng.chance(80) { "to" } else { "cc" }).into(), &TO_GLOBS),
        "archmax_advance" => ("to".into(), &TO_GLOBS),
        _ => match declared(tool) {
            Some(d) => {
                let (name, _, alias) = *rng.pick(&d);
                let name = match alias {
                    Some(a) if rng.chance(20) => a,
                    _ => name,
                };
                (name.into(), &PATH_GLOBS)
            }
            None => ("file_path".into(), &PATH_GLOBS),
        },
    }
}

fn gen_entry(rng: &mut Rng, forbid: bool) -> E {
    let tool = if forbid && rng.chance(15) {
        "*".to_string()
    } else {
        (*rng.pick(&GRANT_TOOLS)).to_string()
    };
    let roll = rng.below(100);
    let g = if roll < 45 {
        G::Bare
    } else if roll < 75 {
        G::Paths(gen_globs(rng, &PATH_GLOBS))
    } else {
        let (arg, pool) = if tool == "*" {
            ("file_path".to_string(), &PATH_GLOBS[..])
        } else {
            guard_arg(rng, &tool)
        };
        G::Args(vec![(arg, gen_globs(rng, pool))])
    };
    E { tool, g }
}

fn gen_entries(rng: &mut Rng, max: usize, forbid: bool) -> Vec<E> {
    let n = rng.below(max + 1);
    (0..n).map(|_| gen_entry(rng, forbid)).collect()
}

fn gen_mgrants(rng: &mut Rng) -> Vec<MGrant> {
    let names = ["catalogs/eu", "shared", "vault", "data"];
    let mut out = Vec::new();
    for n in names {
        if !rng.chance(30) {
            continue;
        }
        let with_access = rng.chance(50);
        out.push(MGrant {
            name: n.to_string(),
            read_only: with_access && rng.chance(50),
            with_access,
        });
    }
    out
}

const SLUGS: [&str; 3] = ["order-data", "refund-policy", "ghost"];
const MOUNT_NAMES: [&str; 6] = [
    "catalogs/eu",
    "shared",
    "vault",
    "data",
    "skills",
    "AGENTS.md",
];

fn gen_spec(rng: &mut Rng) -> Sp {
    let n = 5;
    let mut states = Vec::new();
    for i in 0..n {
        let mut to = Vec::new();
        if i + 1 < n && (i == 0 || rng.chance(70)) {
            to.push(format!("s{}", i + 1));
        }
        if i >= 2 && rng.chance(30) {
            to.push("s0".to_string());
        }
        states.push(St {
            name: format!("s{i}"),
            to,
            allow: rng.chance(75).then(|| gen_entries(rng, 4, false)),
            forbid: rng.chance(40).then(|| gen_entries(rng, 2, true)),
            skills_allow: rng.subset(&SLUGS, 30),
            skills_forbid: rng.subset(&SLUGS, 15),
            mounts_allow: gen_mgrants(rng),
            mounts_forbid: rng.subset(&MOUNT_NAMES, 10),
        });
    }
    Sp {
        allow_always: rng.chance(50).then(|| {
            let mut v = gen_entries(rng, 5, false);
            if rng.chance(50) {
                v.push(E {
                    tool: "read_file".into(),
                    g: G::Bare,
                });
            }
            v
        }),
        forbid_always: gen_entries(rng, 2, true),
        skills_allow_always: rng.subset(&SLUGS, 25),
        skills_forbid_always: rng.subset(&SLUGS, 15),
        mounts_allow_always: gen_mgrants(rng),
        mounts_forbid_always: rng.subset(&MOUNT_NAMES, 10),
        states,
        essential: rng.subset(&["stash", "notify", "write_todos"], 40),
        custom: rng.chance(50),
    }
}

fn q(s: &str) -> String {
    format!("\"{s}\"")
}

fn render_globs(v: &[String]) -> String {
    format!(
        "[{}]",
        v.iter().map(|g| q(g)).collect::<Vec<_>>().join(", ")
    )
}

fn render_entry(e: &E) -> String {
    match &e.g {
        G::Bare => q(&e.tool),
        G::Paths(p) => format!("{{ tool: {}, paths: {} }}", q(&e.tool), render_globs(p)),
        G::Args(a) => {
            let parts: Vec<String> = a
                .iter()
                .map(|(n, g)| format!("{}: {}", q(n), render_globs(g)))
                .collect();
            format!(
                "{{ tool: {}, args: {{ {} }} }}",
                q(&e.tool),
                parts.join(", ")
            )
        }
    }
}

fn render_list(out: &mut String, indent: &str, key: &str, items: &[String]) {
    out.push_str(&format!(
        "{indent}{key}: [{}]\n",
        items.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
    ));
}

fn render_entries(out: &mut String, indent: &str, key: &str, items: &[E]) {
    if items.is_empty() {
        out.push_str(&format!("{indent}{key}: []\n"));
        return;
    }
    out.push_str(&format!("{indent}{key}:\n"));
    for e in items {
        out.push_str(&format!("{indent}  - {}\n", render_entry(e)));
    }
}

fn render_mgrants(out: &mut String, indent: &str, key: &str, items: &[MGrant]) {
    let parts: Vec<String> = items
        .iter()
        .map(|g| {
            if g.with_access {
                format!(
                    "{{ mount: {}, access: {} }}",
                    q(&g.name),
                    if g.read_only { "read" } else { "read_write" }
                )
            } else {
                q(&g.name)
            }
        })
        .collect();
    out.push_str(&format!("{indent}{key}: [{}]\n", parts.join(", ")));
}

fn render(sp: &Sp) -> String {
    let mut y = String::new();
    y.push_str("tools:\n");
    if let Some(a) = &sp.allow_always {
        render_entries(&mut y, "  ", "allow_always", a);
    }
    render_entries(&mut y, "  ", "forbid_always", &sp.forbid_always);
    y.push_str("skills:\n");
    render_list(&mut y, "  ", "allow_always", &sp.skills_allow_always);
    render_list(&mut y, "  ", "forbid_always", &sp.skills_forbid_always);
    y.push_str("mounts:\n");
    render_mgrants(&mut y, "  ", "allow_always", &sp.mounts_allow_always);
    render_list(&mut y, "  ", "forbid_always", &sp.mounts_forbid_always);
    y.push_str("states:\n");
    for (i, st) in sp.states.iter().enumerate() {
        y.push_str(&format!("  {}:\n", st.name));
        if i == 0 {
            y.push_str("    triggers: { manual: }\n");
        }
        y.push_str(&format!("    instructions: State {}.\n", st.name));
        if st.allow.is_some() || st.forbid.is_some() {
            y.push_str("    tools:\n");
            if let Some(a) = &st.allow {
                render_entries(&mut y, "      ", "allow", a);
            }
            if let Some(f) = &st.forbid {
                render_entries(&mut y, "      ", "forbid", f);
            }
        }
        y.push_str("    skills:\n");
        render_list(&mut y, "      ", "allow", &st.skills_allow);
        render_list(&mut y, "      ", "forbid", &st.skills_forbid);
        y.push_str("    mounts:\n");
        render_mgrants(&mut y, "      ", "allow", &st.mounts_allow);
        render_list(&mut y, "      ", "forbid", &st.mounts_forbid);
        if !st.to.is_empty() {
            y.push_str("    transitions:\n");
            for t in &st.to {
                y.push_str(&format!("      - to: {t}\n"));
            }
        }
    }
    y
}

// ---------------------------------------------------------------------------
// The host rule both sides know
// ---------------------------------------------------------------------------

struct Host;

impl CustomRule for Host {
    fn check(&self, call: &ToolCall<'_>, _ctx: &CallContext<'_>) -> Option<Decision> {
        custom_verdict(call.tool, call.args).map(|(allow, id)| {
            if allow {
                Decision::custom_allow(id)
            } else {
                Decision::custom_block(id, "host says no")
            }
        })
    }
}

fn custom_verdict(tool: &str, args: &Value) -> Option<(bool, &'static str)> {
    if tool == "notify" {
        return Some((false, "host.block"));
    }
    if tool == "web_fetch" && args.get("url").and_then(Value::as_str) == Some("https://x.com/y") {
        return Some((true, "host.allow"));
    }
    None
}

// ---------------------------------------------------------------------------
// The naive reference
// ---------------------------------------------------------------------------

/// §5.1.
fn canon(p: &str) -> (String, bool) {
    let mut stack: Vec<String> = Vec::new();
    let mut escapes = false;
    let trimmed = p.trim_start_matches('/');
    for seg in trimmed.split('/') {
        if seg.is_empty() || seg == "." {
            continue;
        }
        if seg == ".." {
            if !stack.is_empty() && stack[stack.len() - 1] != ".." {
                stack.pop();
            } else {
                stack.push("..".to_string());
                escapes = true;
            }
            continue;
        }
        stack.push(seg.to_string());
    }
    (stack.join("/"), escapes)
}

fn under(path: &str, prefix: &str) -> bool {
    path == prefix || path.starts_with(&format!("{prefix}/"))
}

fn mount_of(path: &str) -> Option<String> {
    let mut best: Option<&str> = None;
    for d in DIR_MOUNTS {
        if under(path, d) && best.is_none_or(|b| d.len() > b.len()) {
            best = Some(d);
        }
    }
    for f in FILE_MOUNTS {
        if path == f && best.is_none_or(|b| f.len() >= b.len()) {
            best = Some(f);
        }
    }
    best.map(str::to_string)
}

fn skill_of(path: &str, escapes: bool) -> Option<String> {
    if escapes {
        return None;
    }
    let mut best: Option<&str> = None;
    for s in SKILLS {
        let prefix = format!("skills/{s}");
        if under(path, &prefix) && best.is_none_or(|b| prefix.len() > b.len() + 7) {
            best = Some(s);
        }
    }
    best.map(str::to_string)
}

#[derive(PartialEq, Eq, Debug, Clone, Copy)]
enum Zn {
    Escapes,
    Root,
    Authored,
    Internal,
    Offload,
    Open,
    Run,
}

fn zone(path: &str, escapes: bool) -> Zn {
    if escapes {
        return Zn::Escapes;
    }
    if path.is_empty() {
        return Zn::Root;
    }
    if let Some(m) = mount_of(path)
        && !WRITABLE.contains(&m.as_str())
    {
        return Zn::Authored;
    }
    let first = path.split('/').next().unwrap_or("");
    match first {
        "checkpoints" | "artifacts" | "_specs" => Zn::Internal,
        "large_tool_results" | "conversation_history" => Zn::Offload,
        "scratchpad" => Zn::Open,
        _ => Zn::Run,
    }
}

/// One segment against one glob segment: `*` any run, `?` one char, the rest literal.
fn seg_match(g: &[char], v: &[char]) -> bool {
    match g.first() {
        None => v.is_empty(),
        Some('*') => (0..=v.len()).any(|k| seg_match(&g[1..], &v[k..])),
        Some('?') => !v.is_empty() && seg_match(&g[1..], &v[1..]),
        Some(c) => v.first() == Some(c) && seg_match(&g[1..], &v[1..]),
    }
}

fn segs_match(g: &[&str], v: &[&str]) -> bool {
    match g.first() {
        None => v.is_empty(),
        Some(&"**") => (0..=v.len()).any(|k| {
            v[..k].iter().all(|s| *s != "." && *s != "..") && segs_match(&g[1..], &v[k..])
        }),
        Some(gs) => {
            let Some(vs) = v.first() else { return false };
            let wild = gs.contains('*') || gs.contains('?');
            if wild && (*vs == "." || *vs == "..") {
                return false;
            }
            let gc: Vec<char> = gs.chars().collect();
            let vc: Vec<char> = vs.chars().collect();
            seg_match(&gc, &vc) && segs_match(&g[1..], &v[1..])
        }
    }
}

/// §5.3 for the generated subset: leading `/` and `./` stripped from the glob;
/// `""` matches only `""`; an empty value matches no other glob; `**` as a whole
/// segment spans zero or more segments (so `a/**` also matches `a`); wildcards
/// never match a `.` or `..` segment.
fn glob_match(glob: &str, value: &str) -> bool {
    let g = glob.trim_start_matches('/');
    let g = g.strip_prefix("./").unwrap_or(g);
    if g.is_empty() || value.is_empty() {
        return g == value;
    }
    let gs: Vec<&str> = g.split('/').collect();
    let vs: Vec<&str> = value.split('/').collect();
    segs_match(&gs, &vs)
}

/// `${{name}}` against the fixed variable set; `None` when unresolvable.
fn resolve(glob: &str, vars: Option<&Variables>) -> Option<String> {
    let mut out = String::new();
    let mut rest = glob;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 3..];
        let j = after.find("}}")?;
        let name = after[..j].trim();
        match vars?.get(name)? {
            Value::String(s) => out.push_str(s),
            _ => return None,
        }
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    Some(out)
}

fn js_string(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(a) => Some(
            a.iter()
                .map(|x| js_string(x).unwrap_or_default())
                .collect::<Vec<_>>()
                .join(","),
        ),
        Value::Object(_) => Some("[object Object]".to_string()),
    }
}

fn is_path_arg(tool: &str, arg: &str) -> bool {
    match declared(tool) {
        Some(d) => d.iter().any(|(n, _, a)| *n == arg || *a == Some(arg)),
        None => arg == "file_path",
    }
}

struct Path {
    arg: &'static str,
    acc: Acc,
    raw: String,
    c: String,
    esc: bool,
}

struct Call<'a> {
    tool: &'a str,
    args: &'a Value,
    paths: Vec<Path>,
}

impl Call<'_> {
    /// The values a `paths:` guard tests: per declared argument its paths, or one
    /// absent value; an undeclared tool's `file_path`.
    fn path_values(&self) -> Vec<Option<String>> {
        match declared(self.tool) {
            Some(d) => {
                let mut out = Vec::new();
                for (name, _, _) in d {
                    let mine: Vec<&Path> = self.paths.iter().filter(|p| p.arg == name).collect();
                    if mine.is_empty() {
                        out.push(None);
                    }
                    for p in mine {
                        out.push(Some(p.raw.clone()));
                    }
                }
                out
            }
            None => vec![self.args.get("file_path").and_then(js_string)],
        }
    }
}

enum Res {
    Match,
    NoMatch,
    Unresolved,
}

fn resolve_all(globs: &[String], vars: Option<&Variables>) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for g in globs {
        out.push(resolve(g, vars)?);
    }
    Some(out)
}

fn any_glob(globs: &[String], v: &str) -> bool {
    globs.iter().any(|g| glob_match(g, v))
}

fn deny_matches(e: &E, call: &Call<'_>, vars: Option<&Variables>) -> bool {
    if e.tool != "*" && e.tool != call.tool {
        return false;
    }
    match &e.g {
        G::Bare => true,
        G::Paths(globs) => {
            let Some(globs) = resolve_all(globs, vars) else {
                return true;
            };
            call.path_values()
                .iter()
                .flatten()
                .any(|v| any_glob(&globs, &canon(v).0))
        }
        G::Args(list) => list.iter().all(|(arg, globs)| {
            let Some(globs) = resolve_all(globs, vars) else {
                return true;
            };
            let Some(v) = call.args.get(arg.as_str()).and_then(js_string) else {
                return false;
            };
            if is_path_arg(call.tool, arg) {
                any_glob(&globs, &canon(&v).0)
            } else {
                any_glob(&globs, &v) || any_glob(&globs, &canon(&v).0)
            }
        }),
    }
}

fn grant_matches(e: &E, call: &Call<'_>, vars: Option<&Variables>) -> Res {
    match &e.g {
        G::Bare => Res::Match,
        G::Paths(globs) => {
            let Some(globs) = resolve_all(globs, vars) else {
                return Res::Unresolved;
            };
            let values = call.path_values();
            if !values.is_empty()
                && values
                    .iter()
                    .all(|v| v.as_ref().is_some_and(|v| any_glob(&globs, &canon(v).0)))
            {
                Res::Match
            } else {
                Res::NoMatch
            }
        }
        G::Args(list) => {
            for (arg, globs) in list {
                let Some(globs) = resolve_all(globs, vars) else {
                    return Res::Unresolved;
                };
                let Some(v) = call.args.get(arg.as_str()).and_then(js_string) else {
                    return Res::NoMatch;
                };
                let ok = if is_path_arg(call.tool, arg) {
                    any_glob(&globs, &canon(&v).0)
                } else {
                    any_glob(&globs, &v)
                };
                if !ok {
                    return Res::NoMatch;
                }
            }
            Res::Match
        }
    }
}

impl Sp {
    fn state(&self, name: &str) -> &St {
        self.states.iter().find(|s| s.name == name).expect("state")
    }

    /// D1: tier 1 the state's entries; tier 2 the declared `allow_always` (or the
    /// twelve defaults) for tools the state does not name and that are not host
    /// essentials; tier 3 the host essentials the state does not name.
    fn effective(&self, st: &St) -> Vec<E> {
        let tier1: Vec<E> = st.allow.clone().unwrap_or_default();
        let named = |t: &str| tier1.iter().any(|e| e.tool == t);
        let essential = |t: &str| self.essential.iter().any(|x| x == t);
        let mut out = tier1.clone();
        match &self.allow_always {
            Some(list) => {
                for e in list {
                    if !named(&e.tool) && !essential(&e.tool) {
                        out.push(e.clone());
                    }
                }
            }
            None => {
                for t in DEFAULTS {
                    if !named(t) && !essential(t) {
                        out.push(E {
                            tool: t.to_string(),
                            g: G::Bare,
                        });
                    }
                }
            }
        }
        for t in &self.essential {
            if !named(t) {
                out.push(E {
                    tool: t.clone(),
                    g: G::Bare,
                });
            }
        }
        out
    }

    fn skill_enabled(&self, st: &St, slug: &str) -> bool {
        let listed = st.skills_allow.iter().any(|s| s == slug)
            || self.skills_allow_always.iter().any(|s| s == slug);
        listed
            && SKILLS.contains(&slug)
            && !self.skills_forbid_always.iter().any(|s| s == slug)
            && !st.skills_forbid.iter().any(|s| s == slug)
    }

    fn mount_enabled(&self, st: &St, name: &str) -> bool {
        let granted = st
            .mounts_allow
            .iter()
            .chain(&self.mounts_allow_always)
            .any(|g| g.name == name);
        granted
            && GOVERNED.contains(&name)
            && !self.mounts_forbid_always.iter().any(|m| m == name)
            && !st.mounts_forbid.iter().any(|m| m == name)
    }

    fn mount_granted_anywhere(&self, name: &str) -> bool {
        self.mounts_allow_always.iter().any(|g| g.name == name)
            || self
                .states
                .iter()
                .any(|s| s.mounts_allow.iter().any(|g| g.name == name))
    }

    fn mount_read_only_here(&self, st: &St, name: &str) -> bool {
        st.mounts_allow
            .iter()
            .chain(&self.mounts_allow_always)
            .any(|g| g.name == name && g.with_access && g.read_only)
    }

    /// §2.1, in order. Returns (allowed, rule id).
    fn decide(
        &self,
        state: &str,
        origin: Origin,
        reply_only: bool,
        tool: &str,
        args: &Value,
        vars: Option<&Variables>,
    ) -> (bool, String) {
        let block = |r: &str| (false, r.to_string());
        let allow = |r: &str| (true, r.to_string());
        let st = self.state(state);
        let lifecycle = origin == Origin::Lifecycle;

        // 1 tool.path-argument (and the call's paths).
        let mut paths = Vec::new();
        if let Some(d) = declared(tool) {
            for (name, acc, alias) in d {
                let mut v = args.get(name).filter(|v| !v.is_null());
                if v.is_none()
                    && let Some(a) = alias
                {
                    v = args.get(a).filter(|v| !v.is_null());
                }
                let Some(v) = v else { continue };
                let mut raws = Vec::new();
                match v {
                    Value::String(s) => raws.push(s.clone()),
                    Value::Array(items) if items.iter().all(Value::is_string) => {
                        for i in items {
                            raws.push(i.as_str().unwrap_or_default().to_string());
                        }
                    }
                    _ => return block("tool.path-argument"),
                }
                for raw in raws {
                    let (c, esc) = canon(&raw);
                    paths.push(Path {
                        arg: name,
                        acc,
                        raw,
                        c,
                        esc,
                    });
                }
            }
        }
        let call = Call { tool, args, paths };

        // 2 zone.governance-plane (script / lifecycle).
        if origin != Origin::Agent {
            let mut targets: Vec<String> = call.paths.iter().map(|p| p.raw.clone()).collect();
            if targets.is_empty() {
                let fp = args.get("file_path").filter(|v| !v.is_null());
                let t = fp.or_else(|| args.get("path"));
                if let Some(Value::String(s)) = t {
                    targets.push(s.clone());
                }
            }
            for t in targets {
                let (c, esc) = canon(&t);
                if !esc && under(&c, "workflows") {
                    return block("zone.governance-plane");
                }
            }
        }
        // 3 script.skill-only.
        for p in &call.paths {
            if p.acc == Acc::Execute && skill_of(&p.c, p.esc).is_none() {
                return block("script.skill-only");
            }
        }
        // 4–6.
        if reply_only {
            return block("tool.reply-only");
        }
        if tool == "eval" {
            return block("tool.eval");
        }
        // 7–9 zones.
        for p in &call.paths {
            if mutating(p.acc) && zone(&p.c, p.esc) == Zn::Authored {
                return block("zone.read-only");
            }
        }
        for p in &call.paths {
            if zone(&p.c, p.esc) == Zn::Internal {
                return block("zone.runtime-internal");
            }
        }
        for p in &call.paths {
            if mutating(p.acc) && zone(&p.c, p.esc) == Zn::Offload {
                return block("zone.runtime-managed");
            }
        }
        // 10 skills (lifecycle: only the workflow's skills.forbid_always, D14).
        for p in &call.paths {
            let Some(slug) = skill_of(&p.c, p.esc) else {
                continue;
            };
            let always = self.skills_forbid_always.contains(&slug);
            if lifecycle {
                if always {
                    return block("skill.forbidden");
                }
                continue;
            }
            if !self.skill_enabled(st, &slug) {
                if always || st.skills_forbid.contains(&slug) {
                    return block("skill.forbidden");
                }
                return block("skill.not-allowed");
            }
        }
        // 11 mounts (lifecycle: mounts.forbid_always, and governed mounts some grant names, D14).
        for p in &call.paths {
            if p.esc {
                continue;
            }
            let Some(name) = mount_of(&p.c) else {
                continue;
            };
            let denied = self.mounts_forbid_always.contains(&name)
                || (!lifecycle && st.mounts_forbid.contains(&name));
            if denied {
                return block("mount.forbidden");
            }
            let governed = GOVERNED.contains(&name.as_str());
            let reachable = !governed
                || if lifecycle {
                    self.mount_granted_anywhere(&name)
                } else {
                    self.mount_enabled(st, &name)
                };
            if !reachable {
                return block("mount.not-allowed");
            }
            if !lifecycle
                && mutating(p.acc)
                && WRITABLE.contains(&name.as_str())
                && self.mount_read_only_here(st, &name)
            {
                return block("mount.read-only");
            }
        }
        // 12 tools.forbid_always.
        for e in &self.forbid_always {
            if deny_matches(e, &call, vars) {
                return block("tool.forbidden");
            }
        }
        // 13 the state's tools.forbid (not for lifecycle, D13).
        if !lifecycle {
            for e in st.forbid.iter().flatten() {
                if deny_matches(e, &call, vars) {
                    return block("tool.forbidden-here");
                }
            }
        }
        // 14 host rules.
        if self.custom
            && let Some((ok, id)) = custom_verdict(tool, args)
        {
            return (ok, id.to_string());
        }
        let effective = self.effective(st);
        // 15 the open areas (D6).
        let opens = self.essential.iter().any(|e| e == tool)
            || (DEFAULTS.contains(&tool) && effective.iter().any(|e| e.tool == tool));
        if opens && declared(tool).is_some() && !call.paths.is_empty() {
            let mut all_offload = true;
            let mut ok = true;
            for p in &call.paths {
                match zone(&p.c, p.esc) {
                    Zn::Open
                        if matches!(p.acc, Acc::Read | Acc::List | Acc::Write | Acc::Remove) =>
                    {
                        all_offload = false;
                    }
                    Zn::Offload if matches!(p.acc, Acc::Read | Acc::List) => {}
                    _ => ok = false,
                }
            }
            if ok {
                return allow(if all_offload {
                    "tool.offload-read"
                } else {
                    "tool.scratchpad"
                });
            }
        }
        // 16 the grants.
        if lifecycle {
            return allow("allow");
        }
        if CONTROLS.contains(&tool) {
            return allow("tool.allowed");
        }
        let mut unresolved = false;
        for e in effective.iter().filter(|e| e.tool == tool) {
            match grant_matches(e, &call, vars) {
                Res::Match => return allow("tool.allowed"),
                Res::Unresolved => unresolved = true,
                Res::NoMatch => {}
            }
        }
        if unresolved {
            block("tool.unresolved-variable")
        } else {
            block("tool.not-allowed")
        }
    }
}

// ---------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------

const PATHS: [&str; 40] = [
    "scratchpad/a.txt",
    "scratchpad/",
    "/scratchpad/x.md",
    "scratchpad/../checkpoints/c.json",
    "scratchpad/../output/o.json",
    "skills/order-data/SKILL.md",
    "skills/order-data/scripts/q.js",
    "skills/refund-policy/scripts/r.js",
    "skills/README.md",
    "skills/order-data/../refund-policy/x.md",
    "./skills//refund-policy/SKILL.md",
    "checkpoints/cp-1.json",
    "artifacts",
    "_specs/h.json",
    "large_tool_results/r",
    "conversation_history",
    "../x",
    "scratchpad/../../x",
    "workflows/w/workflow.yaml",
    "./workflows",
    "data/a.json",
    "data/sub/b.json",
    "AGENTS.md",
    "AGENTS.md.bak",
    "catalogs/eu/skus.csv",
    "catalogs/uk/x",
    "shared/n.md",
    "vault/k",
    "output/answer.json",
    "output/q/r.md",
    "reports/q1.md",
    "secrets",
    "secrets/key",
    "logs/a.txt",
    "/",
    ".",
    "x.md",
    "a/b/x.md",
    ".env",
    "outbox/b/c",
];

const CALL_TOOLS: [&str; 25] = [
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "copy_file",
    "move_file",
    "remove_file",
    "glob",
    "grep",
    "write_todos",
    "archmax_eval",
    "archmax_run",
    "web_fetch",
    "send_email",
    "pack_files",
    "stash",
    "notify",
    "bundle",
    "eval",
    "task",
    "archmax_advance",
    "archmax_reset",
    "archmax_get_variables",
    "unknown_tool",
    "read_file",
];

const URLS: [&str; 5] = [
    "https://x.com/y",
    "https://x.com/a/b",
    "http://x.com/y",
    "https://evil.com/x",
    "",
];
const ADDRS: [&str; 5] = ["a@b.c", "ann@x.com", "", "x@y.z", "ann@y.org"];

fn path_value(rng: &mut Rng) -> Value {
    let r = rng.below(100);
    if r < 80 {
        json!(*rng.pick(&PATHS))
    } else if r < 90 {
        let n = rng.below(3);
        Value::Array((0..n).map(|_| json!(*rng.pick(&PATHS))).collect())
    } else if r < 93 {
        json!(3)
    } else if r < 95 {
        json!([*rng.pick(&PATHS), 3])
    } else if r < 97 {
        json!({"path": "x"})
    } else {
        Value::Null
    }
}

fn gen_args(rng: &mut Rng, tool: &str) -> Value {
    let mut m = Map::new();
    match declared(tool) {
        Some(d) => {
            for (name, _, alias) in d {
                if rng.chance(10) {
                    continue;
                }
                let key = match alias {
                    Some(a) if rng.chance(15) => a,
                    _ => name,
                };
                m.insert(key.to_string(), path_value(rng));
            }
        }
        None => {
            if rng.chance(15) {
                let key = if rng.chance(50) { "file_path" } else { "path" };
                m.insert(key.to_string(), json!(*rng.pick(&PATHS)));
            }
        }
    }
    match tool {
        "web_fetch" => {
            m.insert("url".into(), json!(*rng.pick(&URLS)));
        }
        "send_email" | "notify" | "archmax_advance" => {
            if rng.chance(90) {
                m.insert("to".into(), json!(*rng.pick(&ADDRS)));
            }
            if rng.chance(30) {
                m.insert("cc".into(), json!(*rng.pick(&ADDRS)));
            }
        }
        _ => {}
    }
    Value::Object(m)
}

fn variables(rng: &mut Rng) -> Option<Variables> {
    match rng.below(4) {
        0 => None,
        1 => Some(Variables::new()),
        _ => {
            let mut v = Variables::new();
            v.insert("email".into(), json!("a@b.c"));
            v.insert("dir".into(), json!(*rng.pick(&["output", "reports"])));
            Some(v)
        }
    }
}

// ---------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------

#[test]
fn kernel_agrees_with_the_naive_reference() {
    const SPECS: u64 = 25;
    const CALLS: usize = 4_000;
    let mut total = 0usize;
    let mut disagreements = 0usize;
    let mut first: Option<String> = None;
    let mut rules_seen = std::collections::BTreeMap::<String, usize>::new();
    for seed in 1..=SPECS {
        let mut rng = Rng::new(seed);
        let sp = gen_spec(&mut rng);
        let yaml = render(&sp);
        let wf = spec(&yaml);
        let policy = Policy::compile(
            &wf,
            PolicyOptions {
                mounts: world_mounts(),
                skills: world_skills(),
                tool_paths: world_tool_paths(),
                essential_tools: sp.essential.clone(),
                custom_rules: if sp.custom {
                    vec![Box::new(Host)]
                } else {
                    Vec::new()
                },
            },
        )
        .expect("policy");
        for _ in 0..CALLS {
            let st = format!("s{}", rng.below(sp.states.len()));
            let origin = match rng.below(10) {
                0 | 1 => Origin::Script,
                2 | 3 => Origin::Lifecycle,
                _ => Origin::Agent,
            };
            let reply_only = rng.chance(4);
            let tool = *rng.pick(&CALL_TOOLS);
            let args = gen_args(&mut rng, tool);
            let vars = variables(&mut rng);
            let ctx = CallContext {
                state: &st,
                origin,
                reply_only,
                variables: vars.as_ref(),
                inherited: &[],
            };
            let got = policy.decide(&ToolCall::new(tool, &args), &ctx);
            let want = sp.decide(&st, origin, reply_only, tool, &args, vars.as_ref());
            total += 1;
            *rules_seen.entry(want.1.clone()).or_default() += 1;
            if got.allowed != want.0 || got.rule.as_str() != want.1 {
                disagreements += 1;
                if first.is_none() {
                    first = Some(format!(
                        "seed {seed}: state {st}, origin {origin:?}, reply_only {reply_only}, \
                         tool {tool}, args {args}, variables {}\n  kernel:    allowed={} rule={} message={:?}\n  reference: allowed={} rule={}\n--- spec (essential_tools={:?}, host rule={}) ---\n{yaml}",
                        vars.as_ref()
                            .map_or("none".to_string(), |v| Value::Object(v.clone()).to_string()),
                        got.allowed,
                        got.rule.as_str(),
                        got.message,
                        want.0,
                        want.1,
                        sp.essential,
                        sp.custom,
                    ));
                }
            }
        }
    }
    assert!(total >= 100_000, "ran {total} calls");
    assert!(
        first.is_none(),
        "{disagreements} of {total} calls disagree; the first:\n{}",
        first.unwrap_or_default()
    );
    // the generator reaches every rule of the pipeline.
    for r in [
        "tool.path-argument",
        "zone.governance-plane",
        "script.skill-only",
        "tool.reply-only",
        "tool.eval",
        "zone.read-only",
        "zone.runtime-internal",
        "zone.runtime-managed",
        "skill.forbidden",
        "skill.not-allowed",
        "mount.read-only",
        "mount.forbidden",
        "mount.not-allowed",
        "tool.forbidden",
        "tool.forbidden-here",
        "host.block",
        "host.allow",
        "tool.scratchpad",
        "tool.offload-read",
        "tool.allowed",
        "tool.not-allowed",
        "tool.unresolved-variable",
        "allow",
    ] {
        assert!(
            rules_seen.contains_key(r),
            "the generator never reached {r}: {rules_seen:?}"
        );
    }
}

/// The reference's own glob matcher against the digest's §5.3 table (so a
/// disagreement above is not the reference's fault).
#[test]
fn the_reference_glob_matcher_follows_the_digest() {
    for (g, v, want) in [
        ("*", "a/b", false),
        ("*", ".env", true),
        ("a/**/x", "a/.git/x", true),
        ("secrets/**", "secrets", true),
        ("**/b/**", "b", true),
        ("*", "", false),
        ("**", "", false),
        ("**", "..", false),
        ("**", "../y", false),
        ("*", "..", false),
        ("../*", "../y", true),
        ("", "", true),
        ("", "a", false),
        ("./secrets/**", "secrets/x", true),
        ("/output/**", "output/x", true),
        ("a**/c", "ab/c", true),
        ("logs/?.txt", "logs/a.txt", true),
        ("logs/?.txt", "logs/ab.txt", false),
        ("https://x.com/*", "https://x.com/y", true),
        ("https://x.com/*", "https://x.com/a/b", false),
        ("*@x.com", "ann@x.com", true),
    ] {
        assert_eq!(glob_match(g, v), want, "glob {g:?} vs {v:?}");
    }
}

// ---------------------------------------------------------------------------
// Garbage never panics
// ---------------------------------------------------------------------------

fn nested(depth: usize) -> Value {
    let mut v = json!("leaf");
    for i in 0..depth {
        v = if i % 2 == 0 {
            Value::Array(vec![v])
        } else {
            let mut m = Map::new();
            m.insert("a".into(), v);
            Value::Object(m)
        };
    }
    v
}

#[test]
fn decide_never_panics_on_garbage() {
    let yaml = r#"
tools:
  forbid_always:
    - { tool: "*", paths: ["secrets/**", "${{dir}}/**"] }
    - { tool: web_fetch, args: { "a.b.c": ["x*"], "url.0": ["*"], "to.-1": ["${{o.list.-1}}"] } }
states:
  s:
    triggers: { manual: }
    instructions: S.
    tools:
      allow:
        - { tool: read_file, args: { file_path: ["${{dir}}/*", "$${{x}}", "${{ dir }}"], "x.length": ["*"] } }
        - { tool: send_email, args: { to: ["${{email}}", ""], "cc.__proto__": ["*"] } }
        - { tool: pack_files, paths: ["**"] }
        - { tool: web_fetch, args: { url: ["${{o}}"], "headers.h.0": ["?"] } }
      forbid:
        - { tool: copy_file, args: { source: ["${{missing.x}}"] } }
    transitions:
      - to: t
  t:
    instructions: T.
"#;
    let wf = spec(yaml);
    let policy = Policy::compile(
        &wf,
        PolicyOptions {
            mounts: world_mounts(),
            skills: world_skills(),
            tool_paths: world_tool_paths(),
            essential_tools: strs(&["stash"]),
            custom_rules: vec![Box::new(Host)],
        },
    )
    .expect("policy");
    let huge = "a/".repeat(20_000);
    let climb = "../".repeat(10_000);
    let slashes = "/".repeat(20_000);
    let deep = nested(300);
    let leaves: Vec<Value> = vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-0.0),
        json!(1e308),
        json!(-12345678901234567_i64),
        json!(u64::MAX),
        json!(""),
        json!("\0"),
        json!("${{email}}"),
        json!("$${{email}}"),
        json!("ü/ß/中文/😀"),
        json!(huge),
        json!(climb),
        json!(slashes),
        json!([]),
        json!([1, "a"]),
        json!(["a", ["b"]]),
        json!({}),
        json!({"path": "x", "file_path": 3}),
        deep.clone(),
        Value::Array(vec![json!("x"); 1000]),
    ];
    let tools = [
        "read_file",
        "write_file",
        "ls",
        "grep",
        "copy_file",
        "move_file",
        "remove_file",
        "archmax_run",
        "pack_files",
        "stash",
        "bundle",
        "web_fetch",
        "send_email",
        "notify",
        "archmax_advance",
        "eval",
        "task",
        "",
        "*",
        "😀",
    ];
    let arg_names = [
        "file_path",
        "path",
        "source",
        "destination",
        "files",
        "target",
        "src",
        "dst",
        "url",
        "to",
        "cc",
        "a",
        "x",
        "headers",
    ];
    let mut v = Variables::new();
    v.insert("email".into(), json!("*"));
    v.insert("dir".into(), deep.clone());
    v.insert("o".into(), json!({"list": []}));
    let var_sets = [None, Some(Variables::new()), Some(v)];
    let mut calls = 0usize;
    for tool in tools {
        // non-object args
        for whole in &leaves {
            for vars in &var_sets {
                for origin in [Origin::Agent, Origin::Script, Origin::Lifecycle] {
                    for state in ["s", "missing"] {
                        let ctx = CallContext {
                            state,
                            origin,
                            reply_only: false,
                            variables: vars.as_ref(),
                            inherited: &[],
                        };
                        let _ = policy.decide(&ToolCall::new(tool, whole), &ctx);
                        calls += 1;
                    }
                }
            }
        }
        // every argument name holding every garbage value
        for name in arg_names {
            for leaf in &leaves {
                let mut m = Map::new();
                m.insert(name.to_string(), leaf.clone());
                m.insert("a".into(), json!({"b": {"c": leaf.clone()}}));
                m.insert("headers".into(), json!({"h": [leaf.clone()]}));
                let args = Value::Object(m);
                for (vars, origin) in
                    var_sets
                        .iter()
                        .zip([Origin::Agent, Origin::Script, Origin::Lifecycle])
                {
                    let ctx = CallContext {
                        state: "s",
                        origin,
                        reply_only: false,
                        variables: vars.as_ref(),
                        inherited: &[],
                    };
                    let d = policy.decide(&ToolCall::new(tool, &args), &ctx);
                    assert!(
                        d.allowed || d.message.is_some(),
                        "a block without a message: {d:?}"
                    );
                    calls += 1;
                }
            }
        }
    }
    assert!(calls > 5_000, "{calls}");
    for state in ["s", "t", "missing", ""] {
        let _ = policy.surface(state);
        let _ = policy.describe_allowed(state);
        for text in [
            "",
            "\n\n",
            &huge,
            &slashes,
            "  \n:\n/skills/order-data:\n  x",
            "\0\u{feff}😀",
        ] {
            let _ = policy.redact_listing(state, Origin::Agent, text);
        }
        let _ = policy.transition(state, "t", None);
    }
}
