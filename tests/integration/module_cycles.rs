//! No crate's modules import each other in a circle. For every crate under `crates/`, each
//! `.rs` file of its `src` is a module named by its path (`turn/dispatch.rs` and
//! `turn/dispatch/mod.rs` are `turn::dispatch`, `lib.rs` and `main.rs` the crate root), and
//! each `crate::…` or `super::…` path in it (a `use` tree's branches each on its own) is an
//! import of the longest module the path names. The imports must form no strongly connected
//! component of more than one module; each one found is reported as `crate: a → b → a`, every
//! step with the file, line and path that makes it.
//!
//! A module that names one of its ancestors imports it; a parent's `mod child;` is no import,
//! and neither is a relative path (`child::x`, `self::x`), nor an item of the crate root
//! (`crate::Thing`), which every module may share. Comments, literals and `#[cfg(test)]`
//! items (test modules inline or in files of their own) are not read.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/ lists")
        .map(|e| e.expect("a crates/ entry").path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    assert!(crates.len() > 1, "no crate found under {}", root.display());
    let mut found = Vec::new();
    for dir in crates {
        let name = dir.file_name().expect("a crate directory's name");
        let name = name.to_string_lossy();
        let graph = ModuleGraph::read(&root, &dir.join("src"));
        assert!(
            !graph.modules.is_empty(),
            "no module read in {}",
            dir.display()
        );
        found.extend(graph.circles().iter().map(|c| c.shown(&name)));
    }
    assert!(
        found.is_empty(),
        "modules that import each other in a circle (move what both need into a module both \
         import, pass it in as a parameter or trait, or move a function to the module that owns \
         its data):\n{}",
        found.join("\n")
    );
}

/// The reader on a small crate of every shape it meets: a circle through a `use` tree, a
/// relative `super::super`, a raw string and a comment that only look like imports, a test
/// module inline and one in a file of its own.
#[test]
fn the_module_reader_finds_the_circles_the_compiler_would_follow() {
    let files: &[(&str, &str)] = &[
        (
            "lib.rs",
            "mod a;\nmod b;\nmod c;\nmod d;\n#[cfg(test)]\nmod tests;\npub use a::A;\n",
        ),
        (
            "a.rs",
            "//! Uses crate::d only in this comment.\nuse crate::{b::{self, inner::f}, c as _};\n\
             pub struct A;\nconst S: &str = r#\"crate::d\"#;\nconst C: char = '\"';\n",
        ),
        ("b.rs", "pub mod inner;\npub struct B;\n"),
        (
            "b/inner.rs",
            "pub fn f() -> super::super::a::A { crate::a::A }\n\
             /* crate::d /* nested */ crate::d */\npub fn g() -> super::B { super::B }\n",
        ),
        (
            "c.rs",
            "pub fn g() {}\n#[cfg(test)]\n#[allow(unused)]\nmod tests {\n    use crate::d::D;\n}\n",
        ),
        ("d.rs", "pub struct D;\nfn f() { crate::c::g() }\n"),
        ("tests.rs", "use crate::a::A;\nuse crate::d::D;\n"),
    ];
    let sources = files
        .iter()
        .map(|(file, text)| (PathBuf::from(file), text.to_string()));
    let graph = ModuleGraph::of(sources);
    assert_eq!(
        graph.modules.iter().map(String::as_str).collect::<Vec<_>>(),
        ["", "a", "b", "b::inner", "c", "d"],
        "the test module's file is left out"
    );
    let edges: Vec<String> = graph
        .imports
        .iter()
        .flat_map(|(from, to)| to.keys().map(move |t| format!("{from} → {t}")))
        .collect();
    assert_eq!(
        edges,
        [
            "a → b",
            "a → b::inner",
            "a → c",
            "b::inner → a",
            "b::inner → b",
            "d → c"
        ],
        "comments, literals and the test module import nothing; a use of an ancestor does"
    );
    let shown: Vec<String> = graph.circles().iter().map(|c| c.shown("demo")).collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with(
            "demo: a → b::inner → a\n    a → b::inner: a.rs:2 crate::b::inner::f\n    \
             b::inner → a: b/inner.rs:1 super::super::a::A"
        ),
        "{}",
        shown[0]
    );
}

/// Where an import is written: the file, the line, the path as spelled out.
#[derive(Debug, Clone)]
struct Site {
    file: String,
    line: usize,
    path: String,
}

/// The modules of one crate and the imports between them.
#[derive(Debug, Default)]
struct ModuleGraph {
    /// Module paths (`turn::dispatch`; the crate root is `""`).
    modules: BTreeSet<String>,
    /// Importer → imported → where the first such import is written.
    imports: BTreeMap<String, BTreeMap<String, Site>>,
}

/// One strongly connected component: its modules, and circles through all of them.
struct Tangle {
    modules: BTreeSet<String>,
    circles: Vec<Vec<(String, String, Site)>>,
}

impl Tangle {
    /// Each circle as `crate: a → b → a`, each step on a line of its own under it; when
    /// one circle does not pass through every module of the tangle, a line naming them
    /// all first.
    fn shown(&self, krate: &str) -> String {
        let mut out = Vec::new();
        if self.circles.len() > 1 {
            let names: Vec<&str> = self.modules.iter().map(String::as_str).collect();
            out.push(format!(
                "{krate}: {} import each other through these {} circles:",
                names.join(", "),
                self.circles.len()
            ));
        }
        for circle in &self.circles {
            let mut line = format!("{krate}: {}", circle[0].0);
            for (_, to, _) in circle {
                line.push_str(&format!(" → {to}"));
            }
            out.push(line);
            for (from, to, site) in circle {
                out.push(format!(
                    "    {from} → {to}: {}:{} {}",
                    site.file, site.line, site.path
                ));
            }
        }
        out.join("\n")
    }
}

impl ModuleGraph {
    /// The modules of the crate source directory `src`, its files named relative to `root`
    /// in what a circle shows.
    fn read(root: &Path, src: &Path) -> ModuleGraph {
        let mut files = Vec::new();
        let mut dirs = vec![src.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("a source directory lists") {
                let path = entry.expect("a source directory's entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        files.sort();
        let prefix = src.strip_prefix(root).unwrap_or(src).to_path_buf();
        let mut graph = ModuleGraph::of(files.iter().map(|path| {
            let text = std::fs::read_to_string(path).expect("a source file reads");
            let rel = path.strip_prefix(src).expect("under src").to_path_buf();
            (rel, text)
        }));
        for to in graph.imports.values_mut() {
            for site in to.values_mut() {
                site.file = prefix.join(&site.file).display().to_string();
            }
        }
        graph
    }

    /// The graph of source files given by their paths relative to the crate's `src`.
    fn of(files: impl Iterator<Item = (PathBuf, String)>) -> ModuleGraph {
        let mut read = Vec::new();
        let mut tests: Vec<String> = Vec::new();
        for (rel, text) in files {
            let module = module_of(&rel);
            let facts = Facts::of(&module, &text);
            if facts.test_file {
                tests.push(module.join("::"));
            }
            tests.extend(facts.test_children.iter().map(|m| m.join("::")));
            read.push((rel, module.join("::"), facts));
        }
        let is_test = |m: &str| {
            tests
                .iter()
                .any(|t| m == t || m.starts_with(&format!("{t}::")))
        };
        let mut graph = ModuleGraph::default();
        for (_, module, _) in &read {
            if !is_test(module) {
                graph.modules.insert(module.clone());
            }
        }
        for (rel, module, facts) in &read {
            if !graph.modules.contains(module) {
                continue;
            }
            for (segments, line, path) in &facts.uses {
                let Some(target) = graph.resolve(segments) else {
                    continue;
                };
                if &target == module {
                    continue;
                }
                graph
                    .imports
                    .entry(module.clone())
                    .or_default()
                    .entry(target)
                    .or_insert_with(|| Site {
                        file: rel.display().to_string(),
                        line: *line,
                        path: path.clone(),
                    });
            }
        }
        graph
    }

    /// The longest module `segments` (a path from the crate root) names, if it names one
    /// below the root.
    fn resolve(&self, segments: &[String]) -> Option<String> {
        (1..=segments.len())
            .rev()
            .map(|n| segments[..n].join("::"))
            .find(|m| self.modules.contains(m))
    }

    fn next(&self, m: &str) -> impl Iterator<Item = &String> {
        self.imports.get(m).into_iter().flat_map(|to| to.keys())
    }

    /// The strongly connected components of more than one module (Tarjan), each with a
    /// shortest circle through each of its modules, fewest circles first covering them all.
    fn circles(&self) -> Vec<Tangle> {
        let mut state = Tarjan::default();
        for m in &self.modules {
            if !state.index.contains_key(m) {
                state.visit(self, m);
            }
        }
        state
            .components
            .into_iter()
            .map(|component| {
                let mut covered = BTreeSet::new();
                let mut circles = Vec::new();
                for m in &component {
                    if covered.contains(m) {
                        continue;
                    }
                    let circle = self.shortest_circle(m, &component);
                    covered.extend(circle.iter().map(|(from, _, _)| from.clone()));
                    circles.push(circle);
                }
                Tangle {
                    modules: component,
                    circles,
                }
            })
            .collect()
    }

    /// A shortest circle from `start` back to it within `component` (breadth first), as
    /// its steps.
    fn shortest_circle(
        &self,
        start: &str,
        component: &BTreeSet<String>,
    ) -> Vec<(String, String, Site)> {
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        let mut last = None;
        'search: while let Some(m) = queue.pop_front() {
            for t in self.next(m).filter(|t| component.contains(*t)) {
                if t == start {
                    last = Some(m);
                    break 'search;
                }
                if !came_from.contains_key(t.as_str()) {
                    came_from.insert(t, m);
                    queue.push_back(t);
                }
            }
        }
        let mut path = vec![start];
        let mut at = last.expect("a strongly connected module has a way back to itself");
        while at != start {
            path.push(at);
            at = came_from[at];
        }
        path.push(start);
        path.reverse();
        path.windows(2)
            .map(|w| {
                let site = self.imports[w[0]][w[1]].clone();
                (w[0].to_string(), w[1].to_string(), site)
            })
            .collect()
    }
}

#[derive(Default)]
struct Tarjan {
    counter: usize,
    index: BTreeMap<String, usize>,
    low: BTreeMap<String, usize>,
    stack: Vec<String>,
    on_stack: BTreeSet<String>,
    components: Vec<BTreeSet<String>>,
}

impl Tarjan {
    fn visit(&mut self, graph: &ModuleGraph, m: &str) {
        self.index.insert(m.to_string(), self.counter);
        self.low.insert(m.to_string(), self.counter);
        self.counter += 1;
        self.stack.push(m.to_string());
        self.on_stack.insert(m.to_string());
        for t in graph.next(m) {
            if !self.index.contains_key(t) {
                self.visit(graph, t);
                let low = self.low[m].min(self.low[t]);
                self.low.insert(m.to_string(), low);
            } else if self.on_stack.contains(t) {
                let low = self.low[m].min(self.index[t]);
                self.low.insert(m.to_string(), low);
            }
        }
        if self.low[m] == self.index[m] {
            let mut component = BTreeSet::new();
            while let Some(t) = self.stack.pop() {
                self.on_stack.remove(&t);
                let done = t == m;
                component.insert(t);
                if done {
                    break;
                }
            }
            if component.len() > 1 {
                self.components.push(component);
            }
        }
    }
}

/// The module path of a file given relative to `src`: `a/b.rs` and `a/b/mod.rs` are
/// `[a, b]`; `lib.rs` and `main.rs` the root, `[]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] || parts == ["main"] {
        parts.pop();
    }
    parts
}

/// A token of Rust source, as far as finding paths needs: comments are dropped and every
/// literal is one [`Tok::Lit`].
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(u8),
    Lit,
}

fn is_ident_byte(b: u8) -> bool {
    b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80
}

/// The tokens of `src`, each with its line.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let b = src.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    // The end of a quoted literal whose body starts at `j`; `raw`: no escapes, closed by `"`
    // and `hashes` `#`s.
    let quoted = |mut j: usize, raw: bool, hashes: usize, line: &mut usize| -> usize {
        while j < b.len() {
            match b[j] {
                b'\\' if !raw => {
                    if at(j + 1) == b'\n' {
                        *line += 1;
                    }
                    j += 2;
                }
                b'"' if (1..=hashes).all(|k| at(j + k) == b'#') => return j + 1 + hashes,
                c => {
                    if c == b'\n' {
                        *line += 1;
                    }
                    j += 1;
                }
            }
        }
        j
    };
    while i < b.len() {
        let c = b[i];
        let start_line = line;
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            _ if c.is_ascii_whitespace() => i += 1,
            b'/' if at(i + 1) == b'/' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if at(i + 1) == b'*' => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && at(i + 1) == b'*' {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && at(i + 1) == b'/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if b[i] == b'\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            b'"' => {
                i = quoted(i + 1, false, 0, &mut line);
                out.push((Tok::Lit, start_line));
            }
            b'\'' => match char_literal_end(src, i) {
                Some(end) => {
                    i = end;
                    out.push((Tok::Lit, start_line));
                }
                None => {
                    // A lifetime or a label: its name follows as an identifier.
                    out.push((Tok::Punct(c), start_line));
                    i += 1;
                }
            },
            _ if c.is_ascii_digit() => {
                while i < b.len() && is_ident_byte(b[i]) {
                    i += 1;
                }
                out.push((Tok::Lit, start_line));
            }
            _ if is_ident_byte(c) => {
                let start = i;
                while i < b.len() && is_ident_byte(b[i]) {
                    i += 1;
                }
                let word = &src[start..i];
                let hashes = b[i..].iter().take_while(|&&h| h == b'#').count();
                if matches!(word, "r" | "br" | "cr") && at(i + hashes) == b'"' {
                    i = quoted(i + hashes + 1, true, hashes, &mut line);
                    out.push((Tok::Lit, start_line));
                } else if matches!(word, "b" | "c") && at(i) == b'"' {
                    i = quoted(i + 1, false, 0, &mut line);
                    out.push((Tok::Lit, start_line));
                } else if word == "b" && at(i) == b'\'' {
                    i = char_literal_end(src, i).unwrap_or(i + 1);
                    out.push((Tok::Lit, start_line));
                } else if word == "r" && hashes == 1 && is_ident_byte(at(i + 1)) {
                    // A raw identifier, `r#type`.
                    let start = i + 1;
                    i = start;
                    while i < b.len() && is_ident_byte(b[i]) {
                        i += 1;
                    }
                    out.push((Tok::Ident(src[start..i].to_string()), start_line));
                } else {
                    out.push((Tok::Ident(word.to_string()), start_line));
                }
            }
            b':' if at(i + 1) == b':' => {
                out.push((Tok::Sep, start_line));
                i += 2;
            }
            _ => {
                out.push((Tok::Punct(c), start_line));
                i += 1;
            }
        }
    }
    out
}

/// The end of the character literal opening at `i` (a `'`), or `None` when the `'` opens a
/// lifetime or a label.
fn char_literal_end(src: &str, i: usize) -> Option<usize> {
    let b = src.as_bytes();
    if b.get(i + 1) == Some(&b'\\') {
        // An escape: `'\''`, `'\n'`, `'\u{…}'`; the escaped character is skipped first.
        let mut j = i + 3;
        while j < b.len() && b[j] != b'\'' {
            j += 1;
        }
        return Some(j + 1);
    }
    let c = src.get(i + 1..)?.chars().next()?;
    let after = i + 1 + c.len_utf8();
    (b.get(after) == Some(&b'\'')).then_some(after + 1)
}

/// What one file says about the module graph.
#[derive(Debug, Default)]
struct Facts {
    /// The whole file is test code (`#![cfg(test)]`).
    test_file: bool,
    /// Child modules declared `#[cfg(test)] mod name;`, as module paths.
    test_children: Vec<Vec<String>>,
    /// Each `crate::…`/`super::…` path outside test code, from the crate root: its
    /// segments, its line, and how it is written.
    uses: Vec<(Vec<String>, usize, String)>,
}

impl Facts {
    /// Reads the source of `module`.
    fn of(module: &[String], src: &str) -> Facts {
        let toks = tokens(src);
        let tok = |i: usize| toks.get(i).map(|(t, _)| t);
        let ident = |i: usize, word: &str| matches!(tok(i), Some(Tok::Ident(w)) if w == word);
        let punct = |i: usize, p: u8| tok(i) == Some(&Tok::Punct(p));
        let mut facts = Facts::default();
        // The inline modules (`mod name { … }`) open around the current token, each with
        // the brace depth inside it.
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut depth = 0;
        let mut i = 0;
        while i < toks.len() {
            let here = || -> Vec<String> {
                let mut path = module.to_vec();
                path.extend(inline.iter().map(|(name, _)| name.clone()));
                path
            };
            if let Some((inner, after)) = cfg_test(&toks, i) {
                if inner {
                    facts.test_file |= depth == 0;
                    i = after;
                } else {
                    let (end, child) = skip_item(&toks, after);
                    if let Some(child) = child {
                        let mut path = here();
                        path.push(child);
                        facts.test_children.push(path);
                    }
                    i = end;
                }
                continue;
            }
            let after_sep = i > 0 && tok(i - 1) == Some(&Tok::Sep);
            match tok(i) {
                Some(Tok::Ident(w)) if w == "mod" && punct(i + 2, b'{') => {
                    if let Some(Tok::Ident(name)) = tok(i + 1) {
                        depth += 1;
                        inline.push((name.clone(), depth));
                    }
                    i += 3;
                    continue;
                }
                Some(Tok::Punct(b'{')) => depth += 1,
                Some(Tok::Punct(b'}')) => {
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                    depth = depth.saturating_sub(1);
                }
                Some(Tok::Ident(w))
                    if (w == "crate" || w == "super")
                        && !after_sep
                        && tok(i + 1) == Some(&Tok::Sep) =>
                {
                    let line = toks[i].1;
                    let mut written = vec![w.clone()];
                    let mut base = if w == "crate" { Vec::new() } else { here() };
                    let mut j = i + 2;
                    let mut valid = true;
                    if w == "super" {
                        valid = base.pop().is_some();
                        while ident(j, "super") && tok(j + 1) == Some(&Tok::Sep) {
                            valid &= base.pop().is_some();
                            written.push("super".to_string());
                            j += 2;
                        }
                    }
                    let mut found = Vec::new();
                    let end = use_tree(&toks, j, base, &mut found);
                    if valid {
                        for (segments, tail) in found {
                            let mut shown = written.clone();
                            shown.extend(tail);
                            facts.uses.push((segments, line, shown.join("::")));
                        }
                    }
                    i = end.max(i + 1);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        facts
    }
}

/// Whether the tokens at `i` are `#[cfg(test)]` (`Some(false, after)`) or `#![cfg(test)]`
/// (`Some(true, after)`).
fn cfg_test(toks: &[(Tok, usize)], i: usize) -> Option<(bool, usize)> {
    let tok = |i: usize| toks.get(i).map(|(t, _)| t);
    if tok(i) != Some(&Tok::Punct(b'#')) {
        return None;
    }
    let inner = tok(i + 1) == Some(&Tok::Punct(b'!'));
    let j = i + 1 + usize::from(inner);
    let want = [
        Tok::Punct(b'['),
        Tok::Ident("cfg".into()),
        Tok::Punct(b'('),
        Tok::Ident("test".into()),
        Tok::Punct(b')'),
        Tok::Punct(b']'),
    ];
    want.iter()
        .enumerate()
        .all(|(k, t)| tok(j + k) == Some(t))
        .then_some((inner, j + want.len()))
}

/// Skips the item that starts at `i` (after its `#[cfg(test)]`): its other attributes, then
/// up to its `;`, or its body's closing brace, or (a field, an arm) its `,`. Answers where
/// it ends and, for `mod name;`, the name.
fn skip_item(toks: &[(Tok, usize)], mut i: usize) -> (usize, Option<String>) {
    let tok = |i: usize| toks.get(i).map(|(t, _)| t);
    while tok(i) == Some(&Tok::Punct(b'#')) && tok(i + 1) == Some(&Tok::Punct(b'[')) {
        i = close(toks, i + 1);
    }
    let mut j = i;
    if tok(j) == Some(&Tok::Ident("pub".into())) {
        j += 1;
        if tok(j) == Some(&Tok::Punct(b'(')) {
            j = close(toks, j);
        }
    }
    if let (Some(Tok::Ident(m)), Some(Tok::Ident(name)), Some(Tok::Punct(b';'))) =
        (tok(j), tok(j + 1), tok(j + 2))
        && m == "mod"
    {
        return (j + 3, Some(name.clone()));
    }
    let item = matches!(
        tok(j),
        Some(Tok::Ident(w)) if matches!(
            w.as_str(),
            "mod" | "fn" | "impl" | "struct" | "enum" | "trait" | "use" | "const" | "static"
                | "type" | "unsafe" | "async" | "extern" | "macro_rules"
        )
    );
    let mut depth = 0;
    while let Some(t) = tok(i) {
        match t {
            Tok::Punct(b'(' | b'[' | b'{') => depth += 1,
            Tok::Punct(b')' | b']' | b'}') => {
                if depth == 0 {
                    return (i, None);
                }
                depth -= 1;
                if depth == 0 && t == &Tok::Punct(b'}') {
                    return (i + 1, None);
                }
            }
            Tok::Punct(b';') if depth == 0 => return (i + 1, None),
            Tok::Punct(b',') if depth == 0 && !item => return (i + 1, None),
            _ => {}
        }
        i += 1;
    }
    (i, None)
}

/// The index after the bracket that closes the one at `i`.
fn close(toks: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0;
    while let Some((t, _)) = toks.get(i) {
        match t {
            Tok::Punct(b'(' | b'[' | b'{') => depth += 1,
            Tok::Punct(b')' | b']' | b'}') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Reads the path or `use` tree that continues at `i` below `prefix` (after `crate::` or
/// `super::`): each path it names as its full segments and as written after the prefix.
/// Answers the index after it.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
    found: &mut Vec<(Vec<String>, Vec<String>)>,
) -> usize {
    let tok = |i: usize| toks.get(i).map(|(t, _)| t);
    let mut written = Vec::new();
    loop {
        match tok(i) {
            Some(Tok::Punct(b'{')) => {
                i += 1;
                loop {
                    match tok(i) {
                        None => return i,
                        Some(Tok::Punct(b'}')) => return i + 1,
                        Some(Tok::Punct(b',')) => i += 1,
                        Some(Tok::Ident(w)) if w == "as" => i += 2,
                        _ => {
                            let mut inner = Vec::new();
                            let next = use_tree(toks, i, prefix.clone(), &mut inner);
                            for (segments, tail) in inner {
                                let mut shown = written.clone();
                                shown.extend(tail);
                                found.push((segments, shown));
                            }
                            i = next.max(i + 1);
                        }
                    }
                }
            }
            Some(Tok::Ident(w)) if w == "self" => {
                found.push((prefix, written));
                return i + 1;
            }
            Some(Tok::Ident(w)) => {
                prefix.push(w.clone());
                written.push(w.clone());
                i += 1;
                if tok(i) == Some(&Tok::Sep) {
                    i += 1;
                } else {
                    found.push((prefix, written));
                    return i;
                }
            }
            _ => {
                found.push((prefix, written));
                return i;
            }
        }
    }
}
