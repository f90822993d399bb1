//! Scripts that spend their time inside QuickJS's native (C) code rather than in bytecode: loops
//! over a huge `length`, sorts, string and regex work. Each must end within the sandbox's time
//! limit (or with another limit's error) like any other script. Shared by
//! `tests/containment.rs` and `examples/containment_probe.rs`.

/// `(name, script)`: every script would run for seconds to forever without the sandbox's
/// guards.
pub const NATIVE_LOOPS: &[(&str, &str)] = &[
    // A real array whose length is far beyond anything dense.
    ("sparse.sort", "const a = []; a.length = 2e9; a.sort()"),
    (
        "sparse.sort(cmp)",
        "const a = []; a.length = 2e9; a.sort((x, y) => x - y)",
    ),
    (
        "sparse.reverse",
        "const a = []; a.length = 2e9; a.reverse()",
    ),
    (
        "sparse.copyWithin",
        "const a = []; a.length = 2e9; a.copyWithin(0, 1)",
    ),
    ("sparse.fill", "const a = []; a.length = 2e9; a.fill(0)"),
    (
        "sparse.splice",
        "const a = []; a.length = 2e9; a.splice(0, 1)",
    ),
    (
        "sparse.splice(insert)",
        "const a = []; a.length = 2e9; a.splice(1, 0, 'x')",
    ),
    (
        "sparse.unshift",
        "const a = []; a.length = 2e9; a.unshift(1)",
    ),
    ("sparse.shift", "const a = []; a.length = 2e9; a.shift()"),
    ("sparse.slice", "const a = []; a.length = 2e9; a.slice(1)"),
    (
        "sparse.join('')",
        "const a = []; a.length = 2e9; a.join('')",
    ),
    ("sparse.join", "const a = []; a.length = 2e9; a.join()"),
    ("sparse.toString", "const a = []; a.length = 2e9; String(a)"),
    (
        "sparse.toLocaleString",
        "const a = []; a.length = 2e9; a.toLocaleString()",
    ),
    (
        "sparse.indexOf",
        "const a = []; a.length = 2e9; a.indexOf(1)",
    ),
    (
        "sparse.lastIndexOf",
        "const a = []; a.length = 2e9; a.lastIndexOf(1)",
    ),
    (
        "sparse.includes",
        "const a = []; a.length = 2e9; a.includes(1)",
    ),
    (
        "sparse.forEach",
        "const a = []; a.length = 2e9; a.forEach(() => {})",
    ),
    (
        "sparse.map",
        "const a = []; a.length = 2e9; a.map((x) => x)",
    ),
    (
        "sparse.filter",
        "const a = []; a.length = 2e9; a.filter(() => true)",
    ),
    (
        "sparse.every",
        "const a = []; a.length = 2e9; a.every(() => true)",
    ),
    (
        "sparse.some",
        "const a = []; a.length = 2e9; a.some(() => false)",
    ),
    (
        "sparse.reduce",
        "const a = [1]; a.length = 2e9; a.reduce((x) => x)",
    ),
    (
        "sparse.reduceRight",
        "const a = []; a.length = 2e9; a[0] = 1; a.reduceRight((x) => x)",
    ),
    (
        "sparse.find",
        "const a = []; a.length = 2e9; a.find(() => false)",
    ),
    (
        "sparse.findLastIndex",
        "const a = []; a.length = 2e9; a.findLastIndex(() => false)",
    ),
    (
        "sparse.concat",
        "const a = []; a.length = 2e9; [].concat(a)",
    ),
    ("sparse.flat", "const a = []; a.length = 2e9; a.flat()"),
    (
        "sparse.flatMap",
        "const a = []; a.length = 2e9; a.flatMap((x) => x)",
    ),
    (
        "sparse.toSorted",
        "const a = []; a.length = 2 ** 32 - 1; a.toSorted()",
    ),
    (
        "sparse.toReversed",
        "const a = []; a.length = 2 ** 32 - 1; a.toReversed()",
    ),
    (
        "sparse.toSpliced",
        "const a = []; a.length = 2 ** 32 - 1; a.toSpliced(0, 1)",
    ),
    (
        "sparse.with",
        "const a = []; a.length = 2 ** 32 - 1; a.with(0, 1)",
    ),
    (
        "sparse.keys",
        "const a = []; a.length = 2e9; Array.from(a.keys())",
    ),
    (
        "sparse.Array.from",
        "const a = []; a.length = 2e9; Array.from(a)",
    ),
    ("sparse.spread", "const a = []; a.length = 2e9; [...a]"),
    ("sparse.new Set", "const a = []; a.length = 2e9; new Set(a)"),
    (
        "sparse.JSON",
        "const a = []; a.length = 2e9; JSON.stringify(a)",
    ),
    (
        "sparse.apply",
        "const a = []; a.length = 2e9; Math.max.apply(null, a)",
    ),
    (
        "sparse.Object.groupBy",
        "const a = []; a.length = 2e9; Object.groupBy(a, () => 'k')",
    ),
    ("new Array(n).join", "new Array(2 ** 32 - 1).join('')"),
    // Generic array-likes, through `.call`.
    (
        "like.copyWithin",
        "Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 0, 1)",
    ),
    (
        "like.sort",
        "Array.prototype.sort.call({ length: 2 ** 53 - 1 })",
    ),
    (
        "like.reverse",
        "Array.prototype.reverse.call({ length: 2 ** 53 - 1 })",
    ),
    (
        "like.splice",
        "Array.prototype.splice.call({ length: 2 ** 53 - 1 }, 0, 1)",
    ),
    (
        "like.unshift",
        "Array.prototype.unshift.call({ length: 2 ** 53 - 2 }, 1)",
    ),
    (
        "like.shift",
        "Array.prototype.shift.call({ length: 2 ** 53 - 1 })",
    ),
    (
        "like.fill",
        "Array.prototype.fill.call({ length: 2 ** 53 - 1 }, 0)",
    ),
    (
        "like.join('')",
        "Array.prototype.join.call({ length: 2 ** 53 - 1 }, '')",
    ),
    (
        "like.indexOf",
        "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)",
    ),
    (
        "like.lastIndexOf",
        "Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1)",
    ),
    (
        "like.includes",
        "Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)",
    ),
    (
        "like.forEach",
        "Array.prototype.forEach.call({ length: 2 ** 53 - 1 }, () => {})",
    ),
    (
        "like.every",
        "Array.prototype.every.call({ length: 2 ** 53 - 1 }, () => true)",
    ),
    (
        "like.reduce",
        "Array.prototype.reduce.call({ length: 2 ** 53 - 1, 0: 1 }, (x) => x)",
    ),
    (
        "like.findLast",
        "Array.prototype.findLast.call({ length: 2 ** 53 - 1 }, () => false)",
    ),
    (
        "like.slice",
        "Array.prototype.slice.call({ length: 2 ** 53 - 1 }, 2 ** 53 - 2e9)",
    ),
    (
        "like.toSorted",
        "Array.prototype.toSorted.call({ length: 2 ** 32 - 1 })",
    ),
    (
        "like.toReversed",
        "Array.prototype.toReversed.call({ length: 2 ** 32 - 1 })",
    ),
    (
        "like.with",
        "Array.prototype.with.call({ length: 2 ** 32 - 1 }, 0, 1)",
    ),
    ("like.Array.from", "Array.from({ length: 2 ** 32 - 1 })"),
    (
        "like.Uint8Array.from",
        "Uint8Array.from({ length: 2 ** 32 - 1 })",
    ),
    (
        "like.concat(spreadable)",
        "[].concat({ length: 2e9, [Symbol.isConcatSpreadable]: true })",
    ),
    (
        "like.apply",
        "Math.max.apply(null, { length: 2 ** 32 - 1 })",
    ),
    (
        "like.Reflect.apply",
        "Reflect.apply(Math.max, null, { length: 2 ** 32 - 1 })",
    ),
    // Lengths that lie: a getter or a Proxy trap answers small once, then huge.
    (
        "getter.copyWithin",
        "let n = 0; Array.prototype.copyWithin.call({ get length() { return n++ ? 2 ** 53 - 1 : 1 } }, 0, 1)",
    ),
    (
        "getter.sort",
        "let n = 0; Array.prototype.sort.call({ get length() { return n++ ? 2 ** 53 - 1 : 1 } })",
    ),
    (
        "proxy.copyWithin",
        "const p = new Proxy({}, { get: (t, k) => k === 'length' ? 2 ** 53 - 1 : undefined }); Array.prototype.copyWithin.call(p, 0, 1)",
    ),
    (
        "proxy-array.sort",
        "const p = new Proxy([], { get: (t, k) => k === 'length' ? 2 ** 53 - 1 : Reflect.get(t, k) }); p.sort()",
    ),
    (
        "proxy-array.reverse",
        "const p = new Proxy([1, 2], { get: (t, k) => k === 'length' ? 2 ** 53 - 1 : Reflect.get(t, k) }); p.reverse()",
    ),
    (
        "proxy-array.join",
        "const p = new Proxy([], { get: (t, k) => k === 'length' ? 2 ** 32 - 1 : Reflect.get(t, k) }); p.join('')",
    ),
    // Dense data a script may legitimately build, under the memory limit.
    (
        "dense.sort",
        "const a = new Array(1e6).fill(0).map((_, i) => (i * 7919) % 1e6); a.sort()",
    ),
    (
        "dense.join",
        "const a = new Array(1e6).fill(123456789); for (;;) a.join('').length",
    ),
    (
        "typed.sort",
        "const t = new Float64Array(6e6); for (let i = 0; i < t.length; i += 4096) t[i] = Math.random(); t.sort()",
    ),
    (
        "typed.Array.sort",
        "Array.prototype.sort.call(new Uint8Array(5e7))",
    ),
    ("typed.join", "new Uint8Array(5e7).join('').length"),
    (
        "Atomics.wait",
        "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)",
    ),
    // Strings, regular expressions, numbers.
    ("regex.backtrack", "/(a+)+$/.test('a'.repeat(40) + 'b')"),
    (
        "regex.backtrack2",
        "/^(([a-z])+.)+[A-Z]([a-z])+$/.test('a'.repeat(40) + '!')",
    ),
    ("string.repeat", "'abc'.repeat(2 ** 28).length"),
    ("string.padStart", "''.padStart(2 ** 29, 'ab').length"),
    (
        "string.replace",
        "'a'.repeat(2 ** 22).replace(/a/g, 'bb').length",
    ),
    ("string.split", "'ab'.repeat(2 ** 22).split('').length"),
    ("bigint.pow", "(7n ** 3000000n) % 10n"),
    ("bigint.toString", "String(7n ** 300000n).length"),
    // One builtin call is bounded, but QuickJS asks its interrupt handler only every 10 000
    // polls: a loop of builtins that each work for milliseconds without polling.
    (
        "loop.reverse",
        "const a = new Array(1e6).fill(1); for (;;) a.reverse()",
    ),
    ("loop.repeat", "for (;;) 'x'.repeat(1e7)"),
    (
        "loop.repeat-caught",
        "for (;;) { try { 'x'.repeat(1e7) } catch (e) {} }",
    ),
    ("loop.bigint", "const b = 7n ** 200000n; for (;;) b * b"),
    (
        "loop.typed.fill",
        "const t = new Uint8Array(3e7); for (;;) t.fill(1)",
    ),
    (
        "loop.JSON.parse",
        "const s = JSON.stringify(new Array(2e5).fill('abcdefgh')); for (;;) JSON.parse(s)",
    ),
    ("flat.nested", "const a = []; a.length = 2e9; [a].flat()"),
    (
        "concat.nested-proxy",
        "const p = new Proxy([], { get: (t, k) => k === 'length' ? 2 ** 53 - 1 : Reflect.get(t, k) }); [1].concat(p)",
    ),
    (
        "JSON.list-replacer",
        "const a = []; a.length = 2e9; JSON.stringify(a, ['x'])",
    ),
    (
        "JSON.nested",
        "const a = []; a.length = 2e9; JSON.stringify({ a })",
    ),
    (
        "console.log",
        "const a = []; a.length = 2e9; console.log(a)",
    ),
    ("toString.nested", "const a = []; a.length = 2e9; `${[a]}`"),
    (
        "getFunction",
        "let native; Error.prepareStackTrace = (e, s) => s; [2, 1].sort((x, y) => { native = native || new Error().stack.map((c) => c.getFunction()).find((f) => f && f.name === 'sort'); return x - y; }); native ? native.call({ length: 2 ** 53 - 1 }) : 'native unreachable'",
    ),
];
