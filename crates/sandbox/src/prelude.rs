//! The JavaScript installed once per context. It closes over two private host functions (console
//! sink and tool call) and defines a non-writable, non-configurable `__archmax_setup(kind, names,
//! argsJson)` that each run calls to (re)install `console`, `tools`, `args`, the verdict helpers
//! and `SANDBOX_CONTRACT`.

/// Contract version reported as `globalThis.__SANDBOX_VERSION`.
pub(crate) const SANDBOX_VERSION: u32 = 2;

/// Evaluates to a function `(hostLog, hostCall) => void`.
pub(crate) const PRELUDE: &str = r#"(function (hostLog, hostCall) {
  "use strict";
  const G = globalThis;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const isArray = Array.isArray;
  const fmt = (a) => {
    if (typeof a === "object" && a !== null) {
      try {
        const s = stringify(a);
        return s === undefined ? String(a) : s;
      } catch (e) {
        return String(a);
      }
    }
    return String(a);
  };
  const line = (args) => {
    let out = "";
    for (let i = 0; i < args.length; i++) out += (i ? " " : "") + fmt(args[i]);
    return out;
  };
  const console = {
    log: function () { hostLog(line(arguments)); },
    info: function () { hostLog(line(arguments)); },
    debug: function () { hostLog(line(arguments)); },
    warn: function () { hostLog("[warn] " + line(arguments)); },
    error: function () { hostLog("[error] " + line(arguments)); },
  };
  const tools = {};
  const makeTool = (name, camel) => function (input) {
    const a = (input !== null && typeof input === "object" && !isArray(input)) ? input : {};
    let json;
    try {
      json = stringify(a);
    } catch (e) {
      return Promise.reject(new Error("Tool '" + name + "' failed: arguments are not JSON: " + String(e && e.message)));
    }
    return hostCall(name, camel, json).then((r) => {
      if (r.charAt(0) === "o") return r.slice(1);
      throw new Error(r.slice(1));
    });
  };
  const blank = (r) => r === undefined || r === null || String(r).trim() === "";
  const helper = (verdict, fallback) => (reason) => ({ verdict, reason: blank(reason) ? fallback : String(reason) });
  const ok = helper("ok", "ok");
  const veto = helper("veto", "vetoed by hook");
  const correct = helper("correct", "correction requested");
  const defineHook = (fn) => { G.__hookDef = fn; return fn; };
  const setup = function (kind, names, argsJson) {
    G.__SANDBOX_VERSION = __VERSION__;
    G.console = console;
    for (const k of Object.keys(tools)) delete tools[k];
    for (let i = 0; i < names.length; i += 2) tools[names[i + 1]] = makeTool(names[i], names[i + 1]);
    if (names.length > 0) G.tools = tools; else delete G.tools;
    if (kind === "hook") {
      G.ok = ok;
      G.veto = veto;
      G.correct = correct;
      G.defineHook = defineHook;
      G.__hookDef = undefined;
      G.SANDBOX_CONTRACT = { context: "lifecycle-hook", version: __VERSION__ };
    } else {
      G.SANDBOX_CONTRACT = { context: "ptc", version: __VERSION__ };
    }
    if (argsJson !== undefined) G.args = parse(argsJson);
  };
  Object.defineProperty(G, "__archmax_setup", { value: setup, writable: false, configurable: false, enumerable: false });
})"#;
