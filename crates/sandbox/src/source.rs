//! Host-side source preparation: a small JavaScript tokenizer, `@archmax-ai/harness` import
//! stripping and the rewrites that make a script re-runnable in a long-lived context.
//!
//! Every edit keeps the number of lines of the source, so QuickJS line numbers in errors point at
//! the author's original lines. Only the columns of an edited line may move.

use std::fmt;

/// The import specifier every sandbox script may import from (types only; the import is removed).
pub const HARNESS_SPECIFIER: &str = "@archmax-ai/harness";

/// A static import of anything other than `@archmax-ai/harness` or `@archmax-ai/harness/*`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ImportError {
    /// The refused module specifier, exactly as written between the quotes.
    pub specifier: String,
    /// The 1-based line where the refused `import` (or `export … from`) statement starts.
    pub line: usize,
    /// The script's path, when known (see [`ImportError::with_file`]).
    pub file: Option<String>,
}

impl ImportError {
    /// Returns the error with the script's path attached, so the message names the file.
    #[must_use]
    pub fn with_file(mut self, file: &str) -> Self {
        self.file = Some(file.to_owned());
        self
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sandbox scripts may import only from '@archmax-ai/harness/*' type-carrier entry points; found 'import ... from \"{}\"'",
            self.specifier
        )?;
        if let Some(file) = &self.file {
            write!(f, " in {file}")?;
        }
        write!(
            f,
            " (line {}). Sandbox scripts are self-contained — inline the logic or use the tools bridge.",
            self.line
        )
    }
}

/// True when `specifier` is `@archmax-ai/harness` or starts with `@archmax-ai/harness/`.
#[must_use]
pub fn is_harness_specifier(specifier: &str) -> bool {
    specifier == HARNESS_SPECIFIER
        || specifier
            .strip_prefix(HARNESS_SPECIFIER)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Removes every static `import` (and `export … from`) of `@archmax-ai/harness` or
/// `@archmax-ai/harness/*`, keeping its newlines so later line numbers do not move.
///
/// Any other static import is refused with an [`ImportError`] naming the specifier and the line.
/// Dynamic `import(...)` and `import.meta` are left alone (the sandbox has no module loader, so a
/// dynamic import fails at run time). Imports inside strings, comments or nested blocks are not
/// statements and are ignored.
pub fn strip_harness_imports(source: &str) -> Result<String, ImportError> {
    let toks = tokenize(source);
    let mut edits: Vec<Edit> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let prev_is_dot = i > 0 && toks[i - 1].is_punct(source, b'.');
        if t.depth != 0 || prev_is_dot || t.kind != Kind::Ident {
            i += 1;
            continue;
        }
        let word = t.text(source);
        let spec_idx = match word {
            "import" => import_specifier(source, &toks, i),
            "export" => export_from_specifier(source, &toks, i),
            _ => None,
        };
        let Some(spec_idx) = spec_idx else {
            i += 1;
            continue;
        };
        let spec_tok = &toks[spec_idx];
        let specifier = string_body(spec_tok.text(source)).to_owned();
        if !is_harness_specifier(&specifier) {
            return Err(ImportError {
                specifier,
                line: t.line,
                file: None,
            });
        }
        let mut end_idx = spec_idx;
        if toks
            .get(spec_idx + 1)
            .is_some_and(|n| n.is_punct(source, b';'))
        {
            end_idx = spec_idx + 1;
        }
        edits.push(Edit::blank(t.start, toks[end_idx].end));
        i = end_idx + 1;
    }
    Ok(apply_edits(source, &mut edits))
}

/// How [`prepare`] treats `export default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `export default X` becomes `globalThis.__hookDef = X` (a hook registering its function).
    Hook,
    /// `export default X` becomes plain `X` (its value is the completion value).
    Eval,
}

/// Rewrites a script (already import-stripped) so it can run as a global async script, again and
/// again, in one context:
/// - `export default` is rewritten per [`Mode`]; other `export` keywords are dropped and
///   `export { … }` lists are blanked;
/// - top-level `let`/`const` become `var` and a top-level `class C` becomes `var C = class C`, so
///   re-running a script (or a later `archmax_eval`) does not fail with a redeclaration error and
///   the bindings live on `globalThis`, as the original's transform does.
pub(crate) fn prepare(source: &str, mode: Mode) -> String {
    let toks = tokenize(source);
    let mut edits: Vec<Edit> = Vec::new();
    // Indices of tokens that start a statement because an `export` before them was dropped.
    let mut forced_start: Option<usize> = None;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.depth != 0 || t.kind != Kind::Ident {
            i += 1;
            continue;
        }
        let prev_is_dot = i > 0 && toks[i - 1].is_punct(source, b'.');
        if prev_is_dot {
            i += 1;
            continue;
        }
        let word = t.text(source);
        let at_start = forced_start == Some(i) || statement_start(source, &toks, i);
        match word {
            "export" if at_start => {
                let Some(next) = toks.get(i + 1) else {
                    i += 1;
                    continue;
                };
                let next_word = next.text(source);
                if next.kind == Kind::Ident && next_word == "default" {
                    match mode {
                        Mode::Hook => {
                            edits.push(Edit::replace(t.start, next.end, "globalThis.__hookDef ="));
                            if let Some(close) = declaration_body_end(source, &toks, i + 2) {
                                edits.push(Edit::replace(toks[close].end, toks[close].end, ";"));
                            }
                        }
                        Mode::Eval => edits.push(Edit::blank(t.start, next.end)),
                    }
                    i += 2;
                    continue;
                }
                if next.kind == Kind::Ident
                    && matches!(
                        next_word,
                        "const" | "let" | "var" | "function" | "async" | "class"
                    )
                {
                    edits.push(Edit::blank(t.start, t.end));
                    forced_start = Some(i + 1);
                    i += 1;
                    continue;
                }
                if next.is_punct(source, b'{')
                    && let Some(close) = matching_close(&toks, i + 1)
                {
                    let mut end = toks[close].end;
                    if toks
                        .get(close + 1)
                        .is_some_and(|n| n.is_punct(source, b';'))
                    {
                        end = toks[close + 1].end;
                    }
                    edits.push(Edit::blank(t.start, end));
                    i = close + 1;
                    continue;
                }
                i += 1;
            }
            "let" | "const" if at_start => {
                let declares = toks.get(i + 1).is_some_and(|n| {
                    (n.kind == Kind::Ident && !is_operator_word(n.text(source)))
                        || n.is_punct(source, b'[')
                        || n.is_punct(source, b'{')
                });
                if declares {
                    let replacement = if word == "let" { "var" } else { "var  " };
                    edits.push(Edit::replace(t.start, t.end, replacement));
                }
                i += 1;
            }
            "class" if at_start => {
                if let Some(name) = toks.get(i + 1)
                    && name.kind == Kind::Ident
                    && name.text(source) != "extends"
                {
                    let text = format!("var {} = class", name.text(source));
                    edits.push(Edit::replace(t.start, t.end, &text));
                    if let Some(close) = declaration_body_end(source, &toks, i) {
                        edits.push(Edit::replace(toks[close].end, toks[close].end, ";"));
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    apply_edits(source, &mut edits)
}

/// Converts a tool name to the name it has on `tools`: every `-` or `_` followed by a lowercase
/// ASCII letter is dropped and the letter upper-cased (`read_file` → `readFile`,
/// `archmax_workflow_enrich-order` → `archmaxWorkflowEnrichOrder`).
#[must_use]
pub fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if (c == '_' || c == '-')
            && let Some(&n) = chars.peek()
            && n.is_ascii_lowercase()
        {
            out.push(n.to_ascii_uppercase());
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Tokenizer

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Punct,
    Str,
    Template,
    Regex,
    Num,
}

#[derive(Debug, Clone, Copy)]
struct Tok {
    kind: Kind,
    start: usize,
    end: usize,
    /// 1-based line of `start`.
    line: usize,
    /// Bracket nesting depth: for an opener the depth before it, for a closer the depth after it,
    /// so a matching pair shares one depth.
    depth: usize,
}

impl Tok {
    fn text<'s>(&self, src: &'s str) -> &'s str {
        src.get(self.start..self.end).unwrap_or("")
    }

    fn is_punct(&self, src: &str, c: u8) -> bool {
        self.kind == Kind::Punct && src.as_bytes().get(self.start) == Some(&c)
    }
}

/// Words after which a `/` starts a regular expression rather than a division.
fn regex_follows_word(w: &str) -> bool {
    matches!(
        w,
        "return"
            | "typeof"
            | "case"
            | "do"
            | "else"
            | "in"
            | "of"
            | "new"
            | "delete"
            | "void"
            | "throw"
            | "instanceof"
            | "yield"
            | "await"
    )
}

fn is_operator_word(w: &str) -> bool {
    matches!(w, "in" | "of" | "instanceof")
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn tokenize(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let n = b.len();
    let mut toks: Vec<Tok> = Vec::new();
    // Open brackets; b'`' marks a `${` template substitution.
    let mut stack: Vec<u8> = Vec::new();
    let mut pos = 0;
    let mut line = 1;

    // Scans template text starting at `p` (just after "`" or "}"); returns the position after the
    // closing "`" (and false) or after "${" (and true).
    fn scan_template(b: &[u8], mut p: usize, line: &mut usize) -> (usize, bool) {
        while p < b.len() {
            match b[p] {
                b'\\' => p += 2,
                b'`' => return (p + 1, false),
                b'$' if b.get(p + 1) == Some(&b'{') => return (p + 2, true),
                c => {
                    if c == b'\n' {
                        *line += 1;
                    }
                    p += 1;
                }
            }
        }
        (b.len(), false)
    }

    while pos < n {
        let c = b[pos];
        if c == b'\n' {
            line += 1;
            pos += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            pos += 1;
            continue;
        }
        let start = pos;
        let start_line = line;
        if c == b'/' && b.get(pos + 1) == Some(&b'/') {
            while pos < n && b[pos] != b'\n' {
                pos += 1;
            }
            continue;
        }
        if c == b'/' && b.get(pos + 1) == Some(&b'*') {
            pos += 2;
            while pos < n && !(b[pos] == b'*' && b.get(pos + 1) == Some(&b'/')) {
                if b[pos] == b'\n' {
                    line += 1;
                }
                pos += 1;
            }
            pos = (pos + 2).min(n);
            continue;
        }
        let depth = stack.len();
        if c == b'"' || c == b'\'' {
            pos += 1;
            while pos < n && b[pos] != c && b[pos] != b'\n' {
                pos += if b[pos] == b'\\' { 2 } else { 1 };
            }
            pos = (pos + 1).min(n);
            toks.push(Tok {
                kind: Kind::Str,
                start,
                end: pos,
                line: start_line,
                depth,
            });
            continue;
        }
        if c == b'`' {
            let (p, opened) = scan_template(b, pos + 1, &mut line);
            pos = p;
            toks.push(Tok {
                kind: Kind::Template,
                start,
                end: pos,
                line: start_line,
                depth,
            });
            if opened {
                stack.push(b'`');
            }
            continue;
        }
        if c == b'}' && stack.last() == Some(&b'`') {
            stack.pop();
            let (p, opened) = scan_template(b, pos + 1, &mut line);
            pos = p;
            toks.push(Tok {
                kind: Kind::Template,
                start,
                end: pos,
                line: start_line,
                depth: stack.len(),
            });
            if opened {
                stack.push(b'`');
            }
            continue;
        }
        if c == b'/' {
            let regex = match toks.last() {
                None => true,
                Some(p) => match p.kind {
                    Kind::Punct => !matches!(b[p.start], b')' | b']' | b'}'),
                    Kind::Ident => regex_follows_word(p.text(src)),
                    _ => false,
                },
            };
            if regex {
                pos += 1;
                let mut in_class = false;
                while pos < n && b[pos] != b'\n' {
                    match b[pos] {
                        b'\\' => pos += 1,
                        b'[' => in_class = true,
                        b']' => in_class = false,
                        b'/' if !in_class => break,
                        _ => {}
                    }
                    pos += 1;
                }
                pos = (pos + 1).min(n);
                while pos < n && is_ident_byte(b[pos]) {
                    pos += 1;
                }
                toks.push(Tok {
                    kind: Kind::Regex,
                    start,
                    end: pos,
                    line: start_line,
                    depth,
                });
                continue;
            }
        }
        if c.is_ascii_digit() {
            while pos < n && (is_ident_byte(b[pos]) || b[pos] == b'.') {
                pos += 1;
            }
            toks.push(Tok {
                kind: Kind::Num,
                start,
                end: pos,
                line: start_line,
                depth,
            });
            continue;
        }
        if is_ident_byte(c) {
            while pos < n && is_ident_byte(b[pos]) {
                pos += 1;
            }
            toks.push(Tok {
                kind: Kind::Ident,
                start,
                end: pos,
                line: start_line,
                depth,
            });
            continue;
        }
        // Punctuation, one byte per token.
        let depth = match c {
            b'{' | b'(' | b'[' => {
                stack.push(c);
                depth
            }
            b'}' | b')' | b']' => {
                stack.pop();
                stack.len()
            }
            _ => depth,
        };
        pos += 1;
        toks.push(Tok {
            kind: Kind::Punct,
            start,
            end: pos,
            line: start_line,
            depth,
        });
    }
    toks
}

/// Whether token `i` begins a statement (roughly: first token, after `;` or `}`, or after a
/// line break that ends the previous statement).
fn statement_start(src: &str, toks: &[Tok], i: usize) -> bool {
    let Some(prev) = i.checked_sub(1).and_then(|p| toks.get(p)) else {
        return true;
    };
    if prev.is_punct(src, b';') || prev.is_punct(src, b'}') || prev.is_punct(src, b'{') {
        return true;
    }
    let Some(cur) = toks.get(i) else {
        return false;
    };
    let newline_between = src
        .get(prev.end..cur.start)
        .is_some_and(|gap| gap.contains('\n'));
    if !newline_between {
        return false;
    }
    match prev.kind {
        Kind::Ident => !regex_follows_word(prev.text(src)),
        Kind::Num | Kind::Str | Kind::Template | Kind::Regex => true,
        Kind::Punct => prev.is_punct(src, b')') || prev.is_punct(src, b']'),
    }
}

/// The index of the closer matching the opener at `open`.
fn matching_close(toks: &[Tok], open: usize) -> Option<usize> {
    let depth = toks.get(open)?.depth;
    toks.iter()
        .enumerate()
        .skip(open + 1)
        .find(|(_, t)| t.kind == Kind::Punct && t.depth == depth)
        .map(|(k, _)| k)
}

/// For a `function`/`async function`/`class` declaration starting at token `from`, the index of
/// the `}` closing its body. `None` when the tokens there are something else.
fn declaration_body_end(src: &str, toks: &[Tok], from: usize) -> Option<usize> {
    let mut k = from;
    let first = toks.get(k)?;
    let mut word = first.text(src);
    if first.kind == Kind::Ident && word == "async" {
        k += 1;
        word = toks.get(k)?.text(src);
    }
    if word != "function" && word != "class" {
        return None;
    }
    let base = toks.get(k)?.depth;
    let open = toks
        .iter()
        .enumerate()
        .skip(k + 1)
        .find(|(_, t)| t.depth == base && t.is_punct(src, b'{'))
        .map(|(j, _)| j)?;
    matching_close(toks, open)
}

/// For an `import` at `i`, the index of its specifier string token.
fn import_specifier(src: &str, toks: &[Tok], i: usize) -> Option<usize> {
    let next = toks.get(i + 1)?;
    if next.is_punct(src, b'(') || next.is_punct(src, b'.') {
        return None;
    }
    if next.kind == Kind::Str {
        return Some(i + 1);
    }
    from_specifier(src, toks, i + 1)
}

/// For an `export * …` / `export { … }` at `i`, the index of the `from` specifier, if any.
fn export_from_specifier(src: &str, toks: &[Tok], i: usize) -> Option<usize> {
    let next = toks.get(i + 1)?;
    if next.is_punct(src, b'*') {
        return from_specifier(src, toks, i + 1);
    }
    if next.is_punct(src, b'{') {
        let close = matching_close(toks, i + 1)?;
        let f = toks.get(close + 1)?;
        if f.kind == Kind::Ident && f.text(src) == "from" {
            return toks
                .get(close + 2)
                .filter(|s| s.kind == Kind::Str)
                .map(|_| close + 2);
        }
    }
    None
}

/// Scans forward from `k` to `from "<spec>"` at top level, stopping at `;`.
fn from_specifier(src: &str, toks: &[Tok], mut k: usize) -> Option<usize> {
    while let Some(t) = toks.get(k) {
        if t.depth == 0 && t.is_punct(src, b';') {
            return None;
        }
        if t.depth == 0 && t.kind == Kind::Ident && t.text(src) == "from" {
            return toks
                .get(k + 1)
                .filter(|s| s.kind == Kind::Str)
                .map(|_| k + 1);
        }
        k += 1;
    }
    None
}

fn string_body(lit: &str) -> &str {
    let inner = lit.get(1..).unwrap_or("");
    inner.strip_suffix(['"', '\'']).unwrap_or(inner)
}

// ---------------------------------------------------------------------------------------------
// Edits

struct Edit {
    start: usize,
    end: usize,
    /// `None` blanks the range (every byte but line breaks becomes a space).
    text: Option<String>,
}

impl Edit {
    fn blank(start: usize, end: usize) -> Self {
        Self {
            start,
            end,
            text: None,
        }
    }

    fn replace(start: usize, end: usize, text: &str) -> Self {
        Self {
            start,
            end,
            text: Some(text.to_owned()),
        }
    }
}

fn apply_edits(src: &str, edits: &mut [Edit]) -> String {
    edits.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(src.len() + 32);
    let mut pos = 0;
    for e in edits.iter() {
        if e.start < pos || e.end > src.len() {
            continue;
        }
        out.push_str(src.get(pos..e.start).unwrap_or(""));
        match &e.text {
            Some(t) => out.push_str(t),
            None => {
                for ch in src.get(e.start..e.end).unwrap_or("").chars() {
                    match ch {
                        '\n' | '\r' => out.push(ch),
                        _ => out.push(' '),
                    }
                }
            }
        }
        pos = e.end;
    }
    out.push_str(src.get(pos..).unwrap_or(""));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_harness_imports_keeping_lines() {
        let src = "import { ok } from \"@archmax-ai/harness/sandbox\";\nimport {\n  veto,\n} from '@archmax-ai/harness';\nimport \"@archmax-ai/harness/types\"\nconst x = 1;\n";
        let out = strip_harness_imports(src).expect("allowed");
        assert_eq!(out.lines().count(), src.lines().count());
        assert_eq!(out.lines().nth(5), Some("const x = 1;"));
        assert!(!out.contains("import"));
        assert!(out.lines().take(5).all(|l| l.trim().is_empty()));
    }

    #[test]
    fn refuses_foreign_import_naming_specifier_and_line() {
        let src = "// header\n\nimport fs from \"node:fs\";\n";
        let err = strip_harness_imports(src).expect_err("refused");
        assert_eq!(err.specifier, "node:fs");
        assert_eq!(err.line, 3);
        assert_eq!(
            err.clone().with_file("hooks/a.js").to_string(),
            "sandbox scripts may import only from '@archmax-ai/harness/*' type-carrier entry points; found 'import ... from \"node:fs\"' in hooks/a.js (line 3). Sandbox scripts are self-contained — inline the logic or use the tools bridge."
        );
        assert!(!err.to_string().contains(" in "));
    }

    #[test]
    fn refuses_lookalike_and_reexport() {
        let e = strip_harness_imports("import x from '@archmax-ai/harnessy';").expect_err("x");
        assert_eq!(e.specifier, "@archmax-ai/harnessy");
        let e = strip_harness_imports("export * from 'os'").expect_err("x");
        assert_eq!(e.specifier, "os");
        let e = strip_harness_imports("export { a } from 'os'").expect_err("x");
        assert_eq!(e.specifier, "os");
    }

    #[test]
    fn ignores_imports_in_strings_comments_and_dynamic() {
        let src = "const s = `\nimport x from \"fs\"\n`;\n// import y from 'os'\n/* import z from 'net' */\nconst m = import('fs');\nimport.meta;\n";
        assert_eq!(strip_harness_imports(src).expect("ok"), src);
    }

    #[test]
    fn prepare_rewrites_declarations_and_exports() {
        let out = prepare(
            "const a = 1;\nlet b = 2\nclass C { m() { const z = 1; } }\nfor (let i = 0; i < 1; i++) {}\nexport const d = 4;\nexport { a, b };\nexport default function check(i) { return a; }\n(1)",
            Mode::Hook,
        );
        assert_eq!(
            out,
            "var   a = 1;\nvar b = 2\nvar C = class C { m() { const z = 1; } };\nfor (let i = 0; i < 1; i++) {}\n       var   d = 4;\n                \nglobalThis.__hookDef = function check(i) { return a; };\n(1)"
        );
        let eval = prepare("export default 1 + 1", Mode::Eval);
        assert_eq!(eval, "               1 + 1");
    }

    #[test]
    fn prepare_leaves_non_declarations() {
        let src = "obj.let = 1; x = a / b / c; r = /const x/g; t = `${ {let: 1}.let }`;";
        assert_eq!(prepare(src, Mode::Eval), src);
    }

    #[test]
    fn camel_cases_tool_names() {
        assert_eq!(camel_case("read_file"), "readFile");
        assert_eq!(
            camel_case("archmax_workflow_enrich-order"),
            "archmaxWorkflowEnrichOrder"
        );
        assert_eq!(camel_case("grep"), "grep");
        assert_eq!(camel_case("a_1"), "a_1");
        assert_eq!(camel_case("a__b"), "a_B");
    }
}
