// The Node baseline for `benches/benches/kernel.rs`: the four decide() calls on the
// example workflow done the way the original (TypeScript) harness does them, with
// picomatch 4 (`dot: true`): a static guard's globs compiled once, when the policy
// is built; a `${{…}}`-bound guard substituted, glob-escaped, compiled and matched
// on every call. Around the matching, the same per-call work the kernel does, in a
// plain JS implementation: path arguments read and canonicalized, the zone of each
// path classified by prefix, the skill owning it found, the forbid lists scanned,
// the allow entries of the tool looked up, and a denial's text built.
//
// Prints one line per case and, last, one JSON line: { case: median ns per call }.
// Usage: node scripts/bench-kernel.mjs [--quick]
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import picomatch from "picomatch";
import { parseMachineSpec } from "../js/spec.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const root = join(repo, "examples/customer-support");
const quick = process.argv.includes("--quick");
const PM = { dot: true };

// ---- the workspace, as a zero-config host sees it (setup, not timed) ----------------
const parsed = parseMachineSpec(readFileSync(join(root, "workflows/order-lookup/workflow.yaml"), "utf8"));
if (!parsed.ok) throw new Error(`example workflow: ${JSON.stringify(parsed.issues)}`);
const spec = parsed.spec;
const skills = readdirSync(join(root, "skills"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, "skills", d.name, "SKILL.md")))
  .map((d) => ({ slug: d.name, prefix: `skills/${d.name}` }))
  .sort((a, b) => b.prefix.length - a.prefix.length || a.slug.localeCompare(b.slug));
const mounts = { dirs: ["skills", ".platform"], files: ["AGENTS.md"], writable: [], governed: [] };

// ---- paths and zones ----------------------------------------------------------------
const PATH_ARGS = {
  read_file: [["file_path", "read", "path"]],
  write_file: [["file_path", "write", "path"]],
  edit_file: [["file_path", "write", "path"]],
  ls: [["path", "list", "file_path"]],
  glob: [["path", "search", "file_path"]],
  grep: [["path", "search", "file_path"]],
  archmax_run: [["file_path", "execute", "path"]],
  remove_file: [["file_path", "remove", null]],
  copy_file: [["source", "read", null], ["destination", "write", null]],
  move_file: [["source", "remove", null], ["destination", "write", null]],
};
const mutating = (a) => a === "write" || a === "remove";

// As the original does it: `path.posix.normalize` of the workspace-relative path.
function canonicalize(p) {
  let n = posix.normalize(p.replace(/^\/+/, "") || ".");
  if (n === "." || n === "./") n = "";
  else if (n.endsWith("/")) n = n.slice(0, -1);
  return { path: n, escapes: n === ".." || n.startsWith("../") };
}
const under = (path, prefix) => path === prefix || path.startsWith(prefix + "/");
function mountOf(path, m) {
  let dir;
  for (const d of m.dirs) if (under(path, d) && (!dir || d.length > dir.length)) dir = d;
  const file = m.files.find((f) => f === path);
  if (dir && file) return file.length >= dir.length ? file : dir;
  return dir ?? file;
}
const NO_MOUNTS = { dirs: [], files: [], writable: [], governed: [] };
function classify(c, m) {
  if (c.escapes) return "escapes";
  if (c.path === "") return "root";
  const mount = mountOf(c.path, m);
  if (mount !== undefined && !m.writable.includes(mount)) return "authored";
  const first = c.path.split("/", 1)[0];
  if (first === "checkpoints" || first === "artifacts" || first === "_specs") return "run-internal";
  if (first === "large_tool_results" || first === "conversation_history") return "run-offload";
  if (first === "scratchpad") return "run-open";
  return "run";
}
function skillOf(c) {
  if (c.escapes) return undefined;
  for (const s of skills) if (under(c.path, s.prefix)) return s.slug; // longest prefix first
  return undefined;
}

// ---- compiling the policy (once) ----------------------------------------------------
const REF = /\$\{\{\s*([a-z][a-z0-9_]*)((?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
const hasRef = (s) => s.includes("${{");
const escapeGlob = (v) => v.replace(/[\\*?[\]{}()!+@|^$]/g, "\\$&");
function compileGlobs(globs) {
  const fixed = globs.filter((g) => !hasRef(g));
  return { raw: globs, match: fixed.length ? picomatch(fixed, PM) : null, bound: globs.filter(hasRef) };
}
function compileEntry(e) {
  if (typeof e === "string") return { tool: e, guard: null };
  if (e.args) {
    return { tool: e.tool, guard: { kind: "args", args: Object.entries(e.args).map(([name, g]) => ({ name, ...compileGlobs([g].flat()) })) } };
  }
  if (e.paths) return { tool: e.tool, guard: { kind: "paths", ...compileGlobs(e.paths) } };
  return { tool: e.tool, guard: null };
}
const DEFAULT_TOOLS = ["ls", "read_file", "write_file", "edit_file", "copy_file", "move_file", "remove_file", "glob", "grep", "write_todos", "archmax_eval", "archmax_run"];
const ALWAYS_ALLOWED = new Set(["archmax_advance", "archmax_reset", "archmax_wait", "archmax_raise", "archmax_get_variables", "archmax_set_variables"]);
const allowAlways = (spec.tools?.allow_always ?? DEFAULT_TOOLS).map(compileEntry);
const forbidAlways = (spec.tools?.forbid_always ?? []).map(compileEntry);
const states = new Map();
for (const [slug, st] of Object.entries(spec.states)) {
  const tier1 = (st.tools?.allow ?? []).map(compileEntry);
  const named = new Set(tier1.map((e) => e.tool));
  const effective = new Map();
  for (const e of [...tier1, ...allowAlways.filter((e) => !named.has(e.tool))]) {
    if (!effective.has(e.tool)) effective.set(e.tool, []);
    effective.get(e.tool).push(e);
  }
  const denied = new Set(st.skills?.forbid ?? []);
  const skillsEnabled = new Set(
    [...(st.skills?.allow ?? []), ...(spec.skills?.allow_always ?? [])]
      .filter((s) => skills.some((k) => k.slug === s) && !(spec.skills?.forbid_always ?? []).includes(s) && !denied.has(s)),
  );
  states.set(slug, { slug, effective, forbid: (st.tools?.forbid ?? []).map(compileEntry), skillsEnabled, skillsDenied: denied });
}

// ---- matching -----------------------------------------------------------------------
function substitute(template, vars) {
  let failed = false;
  const out = template.replace(REF, (_, name, path) => {
    let v = vars?.[name];
    for (const k of path ? path.slice(1).split(".") : []) v = v?.[k];
    if (v === undefined || v === null || typeof v === "object") { failed = true; return ""; }
    return escapeGlob(String(v));
  });
  return failed ? null : out;
}
// undefined = a reference did not resolve
function globsMatch(g, value, vars) {
  if (g.match && g.match(value)) return true;
  for (const t of g.bound) {
    const glob = substitute(t, vars);
    if (glob === null) return undefined;
    if (picomatch(glob, PM)(value)) return true; // compiled and matched per call
  }
  return false;
}
function grantsEntry(e, call, ctx) {
  if (!e.guard) return true;
  if (e.guard.kind === "paths") {
    const values = call.paths.length ? call.paths.map((p) => p.canon.path) : [];
    return values.length > 0 && values.every((v) => globsMatch(e.guard, v, ctx.variables) === true);
  }
  return e.guard.args.every((a) => {
    const v = call.args[a.name];
    return v != null && globsMatch(a, String(v), ctx.variables) === true;
  });
}
function denies(e, call, ctx) {
  if (e.tool !== "*" && e.tool !== call.tool) return false;
  if (!e.guard) return true;
  if (e.guard.kind === "paths") return call.paths.some((p) => globsMatch(e.guard, p.canon.path, ctx.variables) !== false);
  return e.guard.args.every((a) => {
    const v = call.args[a.name];
    return v != null && globsMatch(a, String(v), ctx.variables) !== false;
  });
}

// ---- decide -------------------------------------------------------------------------
const allow = (rule) => ({ allowed: true, rule });
const block = (rule, message) => ({ allowed: false, rule, message });
function forbidden(call, e, rule, by, key) {
  const on = call.paths.length ? ` on ${call.paths.map((p) => `'${p.raw}'`).join(", ")}` : "";
  const guard = e.guard?.kind === "paths" ? `: paths=${e.guard.raw.join("|")}` : "";
  return block(rule, `Tool '${call.tool}'${on} is forbidden by ${by} (${key}${guard}). Do not retry it; use another tool or move on with archmax_advance.`);
}

function decide(tool, args, ctx) {
  const decl = PATH_ARGS[tool];
  const paths = [];
  for (const [name, access, alias] of decl ?? []) {
    const v = args[name] ?? (alias ? args[alias] : undefined);
    if (v == null) continue;
    for (const raw of Array.isArray(v) ? v : [v]) {
      if (typeof raw !== "string") return block("tool.path-argument", `Tool '${tool}': '${name}' must be a path.`);
      paths.push({ arg: name, access, raw, canon: canonicalize(raw) });
    }
  }
  const call = { tool, args, paths };
  const st = states.get(ctx.state);

  // safety rules
  for (const p of paths) {
    if (p.access === "execute" && skillOf(p.canon) === undefined) return block("script.skill-only", `'${p.raw}' is not a skill script.`);
  }
  if (ctx.replyOnly) return block("tool.reply-only", `The run is waiting for a person; '${tool}' is refused.`);
  if (tool === "eval") return block("tool.eval", "Use archmax_eval.");
  for (const p of paths) {
    if (mutating(p.access) && classify(p.canon, mounts) === "authored") return block("zone.read-only", `'${p.raw}' is read-only.`);
  }
  for (const p of paths) {
    const z = classify(p.canon, NO_MOUNTS);
    if (z === "run-internal") return block("zone.runtime-internal", `'${p.raw}' is runtime-internal.`);
    if (z === "run-offload" && mutating(p.access)) return block("zone.runtime-managed", `'${p.raw}' is runtime-managed.`);
  }
  for (const p of paths) {
    const slug = skillOf(p.canon);
    if (slug === undefined || st?.skillsEnabled.has(slug)) continue;
    const rule = st?.skillsDenied.has(slug) ? "skill.forbidden" : "skill.not-allowed";
    return block(rule, `'${p.raw}' is in skill '${slug}', which state '${ctx.state}' does not enable. Enabled here: ${[...(st?.skillsEnabled ?? [])].join(", ") || "none"}.`);
  }
  for (const p of paths) {
    const m = p.canon.escapes ? undefined : mountOf(p.canon.path, mounts);
    if (m !== undefined && mounts.governed.includes(m)) return block("mount.not-allowed", `'${p.raw}' is in mount '${m}'.`);
  }

  // declared denials
  for (const e of forbidAlways) if (denies(e, call, ctx)) return forbidden(call, e, "tool.forbidden", "the workflow", "tools.forbid_always");
  if (st) {
    for (const e of st.forbid) if (denies(e, call, ctx)) return forbidden(call, e, "tool.forbidden-here", `state '${st.slug}'`, `states.${st.slug}.tools.forbid`);
  }

  // open areas
  if (st && paths.length && DEFAULT_TOOLS.includes(tool) && st.effective.has(tool)) {
    let open = true, offloadOnly = true;
    for (const p of paths) {
      const z = classify(p.canon, NO_MOUNTS);
      if (z === "run-open" && p.access !== "search" && p.access !== "execute") offloadOnly = false;
      else if (!(z === "run-offload" && (p.access === "read" || p.access === "list"))) { open = false; break; }
    }
    if (open) return allow(offloadOnly ? "tool.offload-read" : "tool.scratchpad");
  }

  // grants
  if (ALWAYS_ALLOWED.has(tool)) return allow("tool.allowed");
  for (const e of st?.effective.get(tool) ?? []) if (grantsEntry(e, call, ctx)) return allow("tool.allowed");
  const on = typeof args.file_path === "string" ? ` on '${args.file_path}'` : "";
  return block("tool.not-allowed", `Tool '${tool}'${on} is not allowed in state '${ctx.state}'. Allowed here: ${[...(st?.effective.keys() ?? [])].join(", ")}.`);
}

// ---- the four calls -----------------------------------------------------------------
const cases = [
  { name: "bare_grant", state: "order-question", tool: "read_file",
    args: { file_path: "skills/order-data/assets/orders.json" }, allowed: true, rule: "tool.allowed" },
  { name: "path_guard", state: "refund-request", tool: "archmax_run",
    args: { file_path: "skills/refund-policy/scripts/refund-limit.js" }, allowed: true, rule: "tool.allowed" },
  { name: "variable_guard", state: "refund-approved", tool: "write_file", variables: { order_id: "KK-2043" },
    args: { file_path: "outbox/refund-KK-2043.md", content: "Refund confirmed." }, allowed: true, rule: "tool.allowed" },
  { name: "denial", state: "classify", tool: "write_file",
    args: { file_path: "scratchpad/notes.md", content: "x" }, allowed: false, rule: "tool.forbidden-here" },
];

let sink = 0;
function batch(c, ctx, n) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink += decide(c.tool, c.args, ctx).rule.length;
  return Number(process.hrtime.bigint() - t) / n;
}
const out = {};
for (const c of cases) {
  const ctx = { state: c.state, variables: c.variables, replyOnly: false };
  const d = decide(c.tool, c.args, ctx);
  if (d.allowed !== c.allowed || d.rule !== c.rule) throw new Error(`${c.name}: decided ${JSON.stringify(d)}`);
  // Warm-up (JIT), then size batches to ~20 ms (5 ms with --quick).
  const warmEnd = performance.now() + (quick ? 100 : 500);
  let per = 0;
  while (performance.now() < warmEnd) per = batch(c, ctx, 1000);
  const n = Math.max(1000, Math.round(((quick ? 5 : 20) * 1e6) / per));
  const times = [];
  for (let b = 0; b < (quick ? 11 : 31); b++) times.push(batch(c, ctx, n));
  times.sort((a, b) => a - b);
  out[c.name] = Math.round(times[times.length >> 1] * 10) / 10;
  console.log(`${c.name.padEnd(15)} ${out[c.name].toFixed(1).padStart(9)} ns/call  (${times.length} batches of ${n})`);
}
if (sink === 0) console.log("(sink)");
console.log(JSON.stringify(out));
