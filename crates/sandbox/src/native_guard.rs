//! Keeps QuickJS's native loops under the time limit.
//!
//! QuickJS consults the interrupt handler on bytecode jumps and function calls, never inside a
//! builtin's own C loop. `Array.prototype.sort`, `reverse`, `copyWithin`, `splice`, `shift`,
//! `unshift`, `slice`, `join`, `concat`, `flat` and friends walk `0..length` in C, so an array (or
//! array-like, or Proxy) with a length of 2³² or 2⁵³ keeps the thread busy for minutes to forever,
//! and a default-order `sort` of a large dense array does O(n log n) string conversions without a
//! single call into JavaScript. `JSON.stringify` walks array holes the same way.
//!
//! The script below runs once per context, before the prelude and before any user code, and
//! replaces those builtins with wrappers that hold the originals in a closure no script can reach
//! (`CallSite.prototype.getFunction`, the one API that hands out the function of a stack frame,
//! is disabled too). A wrapper calls the original directly for what cannot run long: a real array
//! (not a Proxy) of at most [`NATIVE_MAX`] elements. Anything else (a longer array, an array-like,
//! a Proxy, a typed array through `Array.prototype`) is handed to the original through a
//! forwarding Proxy view whose traps are JavaScript functions, so every element the C loop touches
//! is a call where QuickJS polls the interrupt handler, whatever `length` says or however often
//! it changes. Sorts without a comparator get a JavaScript one past [`SORT_NATIVE_MAX`] elements,
//! `flat`/`flatMap` are written in JavaScript (their C loop recurses into nested arrays), and
//! `JSON.stringify` always runs with a replacer function (called once per value).
//!
//! Regular expressions need nothing: QuickJS's regex engine polls the same handler while it
//! backtracks. `Atomics.wait` cannot block (the runtime is not allowed to).

/// Longest real array a wrapped builtin works on directly (2²⁰ elements): beyond it the work goes
/// through the polling view.
pub(crate) const NATIVE_MAX: u32 = 1 << 20;

/// Longest array a comparator-less sort orders with QuickJS's native comparison (65 536
/// elements, about 0.1 s of string comparisons); longer ones are sorted with an equivalent
/// JavaScript comparator.
pub(crate) const SORT_NATIVE_MAX: u32 = 1 << 16;

/// Wrapped calls between two deadline checks (a host call each).
pub(crate) const CHECK_EVERY: u32 = 32;

/// Evaluates to a function `(isProxy, deadlinePassed) => void` that installs the guards.
pub(crate) const NATIVE_GUARD: &str = r#"(function (isProxy, deadlinePassed) {
  "use strict";
  const G = globalThis;
  const NATIVE_MAX = __NATIVE_MAX__;
  const SORT_NATIVE_MAX = __SORT_NATIVE_MAX__;
  const apply = Reflect.apply;
  const R_get = Reflect.get, R_set = Reflect.set, R_has = Reflect.has;
  const R_delete = Reflect.deleteProperty, R_define = Reflect.defineProperty;
  const R_own = Reflect.getOwnPropertyDescriptor;
  const defineProperty = Object.defineProperty;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const getPrototypeOf = Object.getPrototypeOf;
  const ObjectCtor = Object;
  const isArray = Array.isArray;
  const ProxyCtor = Proxy;
  const WeakSetCtor = WeakSet;
  const ws_has = WeakSet.prototype.has, ws_add = WeakSet.prototype.add;
  const TypeErrorCtor = TypeError;
  const spreadable = Symbol.isConcatSpreadable;
  const numberValueOf = Number.prototype.valueOf, stringValueOf = String.prototype.valueOf;
  const booleanValueOf = Boolean.prototype.valueOf, bigintValueOf = BigInt.prototype.valueOf;
  const MAX_SAFE = 9007199254740991;

  // Every trap is a JavaScript call, where QuickJS polls its interrupt handler.
  const handler = {
    get: (t, k) => R_get(t, k),
    set: (t, k, v) => R_set(t, k, v),
    has: (t, k) => R_has(t, k),
    deleteProperty: (t, k) => R_delete(t, k),
    defineProperty: (t, k, d) => R_define(t, k, d),
    getOwnPropertyDescriptor: (t, k) => R_own(t, k),
  };
  const viewOf = (o) => new ProxyCtor(o, handler);
  const isObject = (v) => v !== null && (typeof v === "object" || typeof v === "function");
  const direct = (o) => !isProxy(o) && isArray(o) && o.length <= NATIVE_MAX;
  // A wrapped builtin may work for milliseconds without polling; QuickJS asks the interrupt
  // handler only every 10 000 polls, so every CHECK_EVERY-th call checks the deadline itself
  // and, once it has passed, spins until the handler ends the run.
  const CHECK_EVERY = __CHECK_EVERY__;
  let unchecked = 0;
  const check = () => {
    if (++unchecked < CHECK_EVERY) return;
    unchecked = 0;
    if (deadlinePassed()) for (;;) {}
  };
  const floor = Math.floor, trunc = Math.trunc;
  const toLength = (v) => {
    const n = +v;
    if (!(n > 0)) return 0;
    return n >= MAX_SAFE ? MAX_SAFE : floor(n);
  };
  const toIntegerOrInfinity = (v) => {
    const n = +v;
    if (n !== n || n === 0) return 0;
    return n === Infinity || n === -Infinity ? n : trunc(n);
  };
  // The default sort order (ToString, then code units); undefined and holes never reach it.
  const stringOrder = (x, y) => {
    const a = `${x}`, b = `${y}`;
    return a < b ? -1 : a > b ? 1 : 0;
  };
  // The default typed-array order: numeric, -0 before +0, NaN last.
  const numericOrder = (x, y) => {
    if (x < y) return -1;
    if (x > y) return 1;
    if (x === y) {
      if (x !== 0) return 0;
      const a = 1 / x, b = 1 / y;
      return a < b ? -1 : a > b ? 1 : 0;
    }
    if (x !== x) return y !== y ? 0 : 1;
    return -1;
  };
  const install = (proto, name, wrapper, native) => {
    const d = getOwnPropertyDescriptor(proto, name);
    defineProperty(wrapper, "length", { value: native.length, configurable: true });
    defineProperty(proto, name, { value: wrapper, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable });
  };

  // CallSite.getFunction would hand a comparator or a getter the builtin that called it.
  const previous = Error.prepareStackTrace;
  Error.prepareStackTrace = (e, sites) => sites;
  const sites = new Error().stack;
  Error.prepareStackTrace = previous;
  if (isArray(sites) && sites.length > 0) {
    defineProperty(getPrototypeOf(sites[0]), "getFunction", {
      value: { getFunction() { return undefined; } }.getFunction,
      writable: false, enumerable: false, configurable: false,
    });
  }

  const AP = Array.prototype;
  // The wrappers inline `check` and `direct`: they run on every call of ordinary array code.
  const viaView = (native, self, args) => {
    const o = ObjectCtor(self);
    const view = viewOf(o);
    const r = apply(native, view, args);
    return r === view ? o : r;
  };
  const generic = ["reverse", "copyWithin", "fill", "splice", "unshift", "shift", "slice", "join",
    "toLocaleString", "toReversed", "toSpliced", "with"];
  for (const name of generic) {
    const native = AP[name];
    if (typeof native !== "function") continue;
    const w = { [name](...args) {
      if (++unchecked >= CHECK_EVERY) { unchecked = 0; if (deadlinePassed()) for (;;) {} }
      const self = this;
      if (self === null || self === undefined || (isArray(self) && !isProxy(self) && self.length <= NATIVE_MAX)) {
        return apply(native, self, args);
      }
      return viaView(native, self, args);
    } }[name];
    install(AP, name, w, native);
  }

  for (const name of ["sort", "toSorted"]) {
    const native = AP[name];
    if (typeof native !== "function") continue;
    install(AP, name, { [name](comparefn) {
      if (++unchecked >= CHECK_EVERY) { unchecked = 0; if (deadlinePassed()) for (;;) {} }
      const self = this;
      if (self === null || self === undefined) return apply(native, self, [comparefn]);
      if (isArray(self) && !isProxy(self) && self.length <= NATIVE_MAX) {
        const order = comparefn === undefined && self.length > SORT_NATIVE_MAX ? stringOrder : comparefn;
        return apply(native, self, [order]);
      }
      return viaView(native, self, [comparefn === undefined ? stringOrder : comparefn]);
    } }[name], native);
  }

  const nativeConcat = AP.concat;
  install(AP, "concat", { concat(...items) {
    check();
    for (let i = 0; i < items.length; i++) {
      const e = items[i];
      if (!isObject(e) || direct(e)) continue;
      const s = e[spreadable];
      if (s !== undefined ? !!s : isArray(e)) items[i] = viewOf(e);
    }
    const self = this;
    if (self === null || self === undefined || !isObject(self) || direct(self)) {
      return apply(nativeConcat, self, items);
    }
    const s = self[spreadable];
    if (!(s !== undefined ? !!s : isArray(self))) return apply(nativeConcat, self, items);
    return apply(nativeConcat, viewOf(self), items);
  } }.concat, nativeConcat);

  // flat / flatMap: the spec's FlattenIntoArray, in JavaScript.
  const nativeSlice = AP.slice;
  const flatten = (target, source, sourceLen, start, depth, mapper, thisArg) => {
    let n = start;
    for (let i = 0; i < sourceLen; i++) {
      if (!(i in source)) continue;
      let el = source[i];
      if (mapper !== undefined) el = apply(mapper, thisArg, [el, i, source]);
      if (depth > 0 && isArray(el)) {
        n = flatten(target, el, toLength(el.length), n, depth - 1);
      } else {
        if (n >= MAX_SAFE) throw new TypeErrorCtor("flat: result is too long");
        defineProperty(target, n, { value: el, writable: true, enumerable: true, configurable: true });
        n++;
      }
    }
    return n;
  };
  // ArraySpeciesCreate(o, 0): a slice of nothing (the view only keeps a foreign `length` read
  // interruptible).
  const speciesCreate = (o) => apply(nativeSlice, direct(o) ? o : viewOf(o), [0, 0]);
  if (typeof AP.flat === "function") {
    install(AP, "flat", { flat(depth) {
      if (this === null || this === undefined) throw new TypeErrorCtor("cannot convert to object");
      const o = ObjectCtor(this);
      const len = toLength(o.length);
      let d = depth === undefined ? 1 : toIntegerOrInfinity(depth);
      if (d < 0) d = 0;
      check();
      const a = speciesCreate(o);
      flatten(a, o, len, 0, d);
      return a;
    } }.flat, AP.flat);
  }
  if (typeof AP.flatMap === "function") {
    install(AP, "flatMap", { flatMap(mapper, thisArg) {
      if (this === null || this === undefined) throw new TypeErrorCtor("cannot convert to object");
      const o = ObjectCtor(this);
      const len = toLength(o.length);
      if (typeof mapper !== "function") throw new TypeErrorCtor("not a function");
      check();
      const a = speciesCreate(o);
      flatten(a, o, len, 0, 1, mapper, thisArg);
      return a;
    } }.flatMap, AP.flatMap);
  }

  // Typed arrays hold real memory, but a comparator-less sort of millions of elements runs
  // seconds in C.
  const TAP = getPrototypeOf(Uint8Array.prototype);
  const taLength = getOwnPropertyDescriptor(TAP, "length").get;
  for (const name of ["sort", "toSorted"]) {
    const native = TAP[name];
    if (typeof native !== "function") continue;
    install(TAP, name, { [name](comparefn) {
      check();
      if (comparefn === undefined) {
        const len = apply(taLength, this, []);
        if (len > SORT_NATIVE_MAX) return apply(native, this, [numericOrder]);
      }
      return apply(native, this, [comparefn]);
    } }[name], native);
  }

  // Typed-array scans and fills allocate nothing and never poll: a loop of them over tens of
  // megabytes would outrun the handler's 10 000-poll rhythm.
  for (const name of ["fill", "copyWithin", "set", "reverse", "indexOf", "lastIndexOf", "includes"]) {
    const native = TAP[name];
    if (typeof native !== "function") continue;
    install(TAP, name, { [name](...args) { check(); return apply(native, this, args); } }[name], native);
  }

  // JSON.stringify walks arrays (holes included) in C; a replacer function is a call per value.
  const JSONObject = JSON;
  const nativeStringify = JSONObject.stringify;
  const same = function (k, v) { return v; };
  const hasSlot = (valueOf, v) => {
    try { apply(valueOf, v, []); return true; } catch (e) { return false; }
  };
  const isBoxed = (v) => hasSlot(numberValueOf, v) || hasSlot(stringValueOf, v)
    || hasSlot(booleanValueOf, v) || hasSlot(bigintValueOf, v);
  // An array replacer (a property list) as a replacer function: each plain object becomes a copy
  // holding the listed keys in list order.
  const listReplacer = (list) => {
    const keys = [];
    let count = 0;
    for (let i = 0; i < list.length; i++) {
      const x = list[i];
      let k;
      if (typeof x === "string") k = x;
      else if (typeof x === "number") k = `${x}`;
      else if (isObject(x) && (hasSlot(numberValueOf, x) || hasSlot(stringValueOf, x))) k = `${x}`;
      if (k === undefined) continue;
      let seen = false;
      for (let j = 0; j < count; j++) if (keys[j] === k) seen = true;
      if (!seen) defineProperty(keys, count++, { value: k, writable: true, enumerable: true, configurable: true });
    }
    const copies = new WeakSetCtor();
    return function (key, v) {
      if (!isObject(v) || typeof v === "function" || isArray(v) || apply(ws_has, copies, [v]) || isBoxed(v)) return v;
      const copy = {};
      for (let i = 0; i < count; i++) {
        defineProperty(copy, keys[i], { value: v[keys[i]], writable: true, enumerable: true, configurable: true });
      }
      apply(ws_add, copies, [copy]);
      return copy;
    };
  };
  defineProperty(JSONObject, "stringify", {
    value: { stringify(value, replacer, space) {
      check();
      let r = same;
      if (typeof replacer === "function") r = replacer;
      else if (isArray(replacer)) r = listReplacer(replacer);
      return apply(nativeStringify, JSONObject, [value, r, space]);
    } }.stringify,
    writable: true, enumerable: false, configurable: true,
  });
  defineProperty(JSONObject.stringify, "length", { value: 3, configurable: true });
})"#;
