//! Parsing a hook script without running it: what `archmax validate` asks of every hook, so
//! a script that cannot parse is found before a run reaches it.
//!
//! ```
//! let e = archmax_sandbox::check_hook_syntax("hooks/check.js", "export default () => {\n  ok((\n}\n")
//!     .unwrap_err();
//! assert_eq!(e.line, 3);
//! assert!(archmax_sandbox::check_hook_syntax("hooks/check.js", "export default () => true").is_ok());
//! ```

use std::ffi::CString;

use rquickjs::{Coerced, Context, Runtime, Value, qjs};

use crate::source::{Mode, prepare, strip_harness_imports};

/// The heap a parse may use: a hook is a small file; a larger one is refused, not parsed slowly.
const PARSE_MEMORY: usize = 64 * 1024 * 1024;

/// The native stack a parse may use: deeply nested source fails with a `RangeError` instead of
/// overflowing the process's stack.
const PARSE_STACK: usize = 512 * 1024;

/// Where a script does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at {file}:{line}:{column})")]
pub struct SyntaxError {
    /// The script's path as given.
    pub file: String,
    /// The parser's reason, `<Name>: <message>` (`SyntaxError: unexpected token in expression: ')'`).
    pub message: String,
    /// 1-based line in the script as written.
    pub line: u32,
    /// 1-based column in the script (a line the sandbox rewrote, an `export` line, may be off
    /// by the rewrite).
    pub column: u32,
}

/// Parses a hook script exactly as a run would (its `@archmax-ai/harness` imports blanked,
/// module forms rewritten, then compiled as a global async script), without running any of it.
/// A refused import is an error at its line, as a run reports it.
pub fn check_hook_syntax(file: &str, source: &str) -> Result<(), SyntaxError> {
    let fail = |message: String, line: u32, column: u32| SyntaxError {
        file: file.to_owned(),
        message,
        line,
        column,
    };
    let stripped = strip_harness_imports(source).map_err(|e| {
        let line = u32::try_from(e.line).unwrap_or(u32::MAX);
        fail(e.with_file(file).to_string(), line, 1)
    })?;
    let prepared = prepare(&stripped, Mode::Hook);
    let src = match CString::new(prepared.as_bytes()) {
        Ok(src) => src,
        Err(e) => {
            let (line, column) = line_column(&prepared, e.nul_position());
            return Err(fail(
                "the script holds a NUL character".to_owned(),
                line,
                column,
            ));
        }
    };
    let name = CString::new(file.replace('\0', "")).unwrap_or_default();
    let unavailable = |e: rquickjs::Error| fail(format!("cannot start the parser: {e}"), 1, 1);
    let rt = Runtime::new().map_err(unavailable)?;
    rt.set_memory_limit(PARSE_MEMORY);
    rt.set_max_stack_size(PARSE_STACK);
    let ctx = Context::full(&rt).map_err(unavailable)?;
    ctx.with(|ctx| {
        let flags = (qjs::JS_EVAL_TYPE_GLOBAL
            | qjs::JS_EVAL_FLAG_ASYNC
            | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as i32;
        let raw = ctx.as_raw().as_ptr();
        #[allow(unsafe_code)]
        // SAFETY: `raw` is the live context this closure holds the lock of; `src` is
        // NUL-terminated and `len` excludes the terminator, as `JS_Eval` requires; with
        // `COMPILE_ONLY` QuickJS compiles the script to a function object and runs nothing.
        // The answer (that object, or the exception marker) is owned by the `Value`, which
        // frees it when dropped. The stack top is refreshed first, as rquickjs does before
        // every eval under its `parallel` feature.
        let value = unsafe {
            qjs::JS_UpdateStackTop(qjs::JS_GetRuntime(raw));
            let answer = qjs::JS_Eval(raw, src.as_ptr(), prepared.len() as _, name.as_ptr(), flags);
            Value::from_raw(ctx.clone(), answer)
        };
        if !value.is_exception() {
            return Ok(());
        }
        let thrown = ctx.catch();
        let field = |key: &str| {
            thrown
                .as_object()
                .and_then(|o| o.get::<_, Coerced<String>>(key).ok())
                .map(|c| c.0)
                .filter(|s| !s.is_empty())
        };
        let message = match (field("name"), field("message")) {
            (Some(name), Some(message)) => format!("{name}: {message}"),
            (None, Some(message)) => message,
            (Some(name), None) => name,
            (None, None) => "the script does not parse".to_owned(),
        };
        let (line, column) = field("stack")
            .and_then(|stack| position(&stack, file))
            .unwrap_or((1, 1));
        Err(fail(message, line, column))
    })
}

/// The 1-based line and column of byte `at` of `text`.
fn line_column(text: &str, at: usize) -> (u32, u32) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[start..].chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// The `line:column` of the first stack frame in `file` (else the first frame).
fn position(stack: &str, file: &str) -> Option<(u32, u32)> {
    let frames: Vec<&str> = stack
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("at "))
        .collect();
    let frame = frames
        .iter()
        .find(|l| l.contains(file))
        .or_else(|| frames.first())?;
    let location = frame
        .rsplit_once('(')
        .map_or(*frame, |(_, loc)| loc.trim_end_matches(')'));
    let mut parts = location.rsplitn(3, ':');
    let column = parts.next()?.trim().parse().ok()?;
    let line = parts.next()?.trim().parse().ok()?;
    Some((line, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(source: &str) -> SyntaxError {
        check_hook_syntax("workflows/w/hooks/check.js", source).expect_err("a syntax error")
    }

    #[test]
    fn every_form_a_run_accepts_parses() {
        for source in [
            "export default () => true\n",
            "import { defineHook, veto } from '@archmax-ai/harness/sandbox'\nexport default defineHook(async (input) => {\n  const r = await tools.read_file({ path: 'x' })\n  return r ? true : veto('no')\n})\n",
            "const a = await Promise.resolve(1)\na === 1\n",
            "with (Math) { max(1, 2) }\n",
            "let x = 010\nx\n",
            "",
        ] {
            assert_eq!(check_hook_syntax("hooks/h.js", source), Ok(()), "{source}");
        }
    }

    #[test]
    fn a_syntax_error_names_the_reason_line_and_column() {
        let e = error("export default async (input) => {\n  const ok = input.to ===\n}\n");
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert!(e.message.starts_with("SyntaxError: "), "{e}");
        assert_eq!(e.file, "workflows/w/hooks/check.js");
        let e = error("const a = 1\n  foo(;\n");
        assert_eq!(
            e.to_string(),
            "SyntaxError: unexpected token in expression: ';' (at workflows/w/hooks/check.js:2:7)"
        );
    }

    #[test]
    fn nothing_of_the_script_runs() {
        // It would loop forever, or throw, if it ran.
        assert_eq!(check_hook_syntax("h.js", "for (;;) {}\n"), Ok(()));
        assert_eq!(
            check_hook_syntax("h.js", "throw new Error('ran')\n"),
            Ok(())
        );
    }

    #[test]
    fn a_refused_import_and_a_nul_are_positioned() {
        let e = error("// a hook\nimport _ from 'lodash'\n");
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("'import ... from \"lodash\"'"), "{e}");
        let e = error("const a = 1\nconst b = '\0'\n");
        assert_eq!((e.line, e.column), (2, 12));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let source = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(
            error(&source).message,
            "RangeError: Maximum call stack size exceeded"
        );
    }
}
