#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::glob::Glob;
use super::text::{
    TRUNCATION_GUIDANCE, format_numbered, format_size, locale_cmp, mime_of, truncate_lines,
};
use super::tools::GREP_CAP_NOTE;
use super::*;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A temp workspace: `skills/order-data/SKILL.md`, `.platform/prompt.md`,
/// `AGENTS.md`, `workflows/x/workflow.yaml`, a writable `data/` mount and
/// session `s`. Removed on drop.
struct Fx {
    ws: Workspace,
}

impl Drop for Fx {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.ws.root);
    }
}

impl Fx {
    fn new() -> Fx {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let root = std::env::temp_dir().join(format!("files-tools-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let mut mounts = Workspace::default_mounts();
        mounts.push(MountRoute::dir("data").writable());
        let fx = Fx {
            ws: Workspace::new(&root, "s", mounts),
        };
        fx.put_root("skills/order-data/SKILL.md", b"# Order data\nUse it.\n");
        fx.put_root(".platform/prompt.md", b"prompt\n");
        fx.put_root("AGENTS.md", b"agents\n");
        fx.put_root("workflows/x/workflow.yaml", b"name: x\n");
        fs::create_dir_all(root.join("data")).unwrap();
        fs::create_dir_all(&fx.ws.session).unwrap();
        fx
    }

    fn put_root(&self, rel: &str, bytes: &[u8]) {
        let p = self.ws.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.ws.session.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    fn session_path(&self, rel: &str) -> PathBuf {
        self.ws.session.join(rel)
    }

    fn run(&self, tool: &str, args: Value) -> ToolOutput {
        run_tool(&self.ws, tool, &args)
    }

    fn ok(&self, tool: &str, args: Value) -> String {
        let out = self.run(tool, args);
        assert!(!out.is_error, "unexpected error: {}", out.text);
        out.text
    }

    fn err(&self, tool: &str, args: Value) -> String {
        let out = self.run(tool, args);
        assert!(out.is_error, "expected an error, got: {}", out.text);
        out.text
    }
}

const RO: &str = "it is served by a read-only mount. Only run state is writable in this workspace.";

// ---- routing -----------------------------------------------------------

#[test]
fn write_lands_in_the_session_folder() {
    let fx = Fx::new();
    let text = fx.ok(
        "write_file",
        json!({"file_path": "scratchpad/a.txt", "content": "hi"}),
    );
    assert_eq!(text, "Successfully wrote to 'scratchpad/a.txt'");
    let on_disk = fx.ws.root.join("sessions/s/scratchpad/a.txt");
    assert_eq!(fs::read_to_string(on_disk).unwrap(), "hi");
    assert!(!fx.ws.root.join("scratchpad").exists());
}

#[test]
fn skills_read_from_the_authored_workspace() {
    let fx = Fx::new();
    let text = fx.ok(
        "read_file",
        json!({"file_path": "/skills/order-data/SKILL.md"}),
    );
    assert_eq!(text, "     1\t# Order data\n     2\tUse it.\n     3\t");
}

#[test]
fn file_mount_is_exact() {
    let fx = Fx::new();
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "AGENTS.md"})),
        "     1\tagents\n     2\t"
    );
    // AGENTS.md.bak is not captured by the AGENTS.md file mount.
    fx.ok(
        "write_file",
        json!({"file_path": "AGENTS.md.bak", "content": "b"}),
    );
    assert!(fx.session_path("AGENTS.md.bak").is_file());
}

#[test]
fn workflows_have_no_route() {
    let fx = Fx::new();
    assert_eq!(
        fx.err(
            "read_file",
            json!({"file_path": "workflows/x/workflow.yaml"})
        ),
        "Error: File '/workflows/x/workflow.yaml' not found"
    );
}

#[test]
fn session_qualified_and_store_paths() {
    let fx = Fx::new();
    fx.put("scratchpad/n.txt", b"x");
    // A session-qualified path is scoped once, before the kernel decides
    // (`crate::governed`); the router routes what was decided, literally.
    let scoped = crate::scope::scope_path("s/scratchpad/n.txt", Some("s")).unwrap();
    assert_eq!(
        fx.ok("read_file", json!({"file_path": scoped})),
        "     1\tx"
    );
    fx.put("s/scratchpad/n.txt", b"nested");
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "s/scratchpad/n.txt"})),
        "     1\tnested"
    );
    fx.put_root("sessions/_specs/h.json", b"{}");
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "_specs/h.json"})),
        "     1\t{}"
    );
}

#[test]
fn writable_mount_writes_to_the_workspace() {
    let fx = Fx::new();
    fx.ok(
        "write_file",
        json!({"file_path": "data/out.json", "content": "{}"}),
    );
    assert!(fx.ws.root.join("data/out.json").is_file());
}

#[test]
fn escaping_paths_are_refused_by_the_router() {
    let fx = Fx::new();
    let expected = "Path \"../secret\" resolves outside the workspace root; workspace paths may not traverse above it.";
    assert_eq!(
        fx.err("read_file", json!({"file_path": "../secret"})),
        expected
    );
    assert_eq!(
        fx.err(
            "write_file",
            json!({"file_path": "../secret", "content": ""})
        ),
        expected
    );
    assert_eq!(
        fx.err("ls", json!({"path": "a/../../b"})),
        "Path \"a/../../b\" resolves outside the workspace root; workspace paths may not traverse above it."
    );
    assert_eq!(
        fx.err("grep", json!({"pattern": "x", "path": "../"})),
        "Path \"../\" resolves outside the workspace root; workspace paths may not traverse above it."
    );
    assert_eq!(
        escape_error("a\"b/../../c"),
        "Path \"a\\\"b/../../c\" resolves outside the workspace root; workspace paths may not traverse above it."
    );
}

// ---- read_file ---------------------------------------------------------

#[test]
fn read_file_formats() {
    let fx = Fx::new();
    fx.put("notes.txt", b"alpha\nbeta\ngamma");
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "/notes.txt"})),
        "     1\talpha\n     2\tbeta\n     3\tgamma"
    );
    assert_eq!(
        fx.ok(
            "read_file",
            json!({"file_path": "notes.txt", "offset": 1, "limit": 1})
        ),
        "     2\tbeta"
    );
    assert_eq!(
        fx.ok(
            "read_file",
            json!({"file_path": "notes.txt", "offset": "2"})
        ),
        "     3\tgamma"
    );
    assert_eq!(
        fx.err("read_file", json!({"file_path": "notes.txt", "offset": 3})),
        "Error: Line offset 3 exceeds file length (3 lines)"
    );
}

#[test]
fn read_file_default_limit_is_100() {
    let fx = Fx::new();
    let body: Vec<String> = (1..=150).map(|i| format!("l{i}")).collect();
    fx.put("long.txt", body.join("\n").as_bytes());
    let text = fx.ok("read_file", json!({"file_path": "long.txt"}));
    assert_eq!(text.lines().count(), 100);
    assert!(text.ends_with("   100\tl100"));
}

#[test]
fn read_file_splits_long_lines() {
    let fx = Fx::new();
    let line = "x".repeat(12_001);
    fx.put("wide.txt", format!("a\n{line}").as_bytes());
    let expected = format!(
        "     1\ta\n     2\t{}\n   2.1\t{}\n   2.2\t{}",
        "x".repeat(5000),
        "x".repeat(5000),
        "x".repeat(2001)
    );
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "wide.txt"})),
        expected
    );
    assert_eq!(format_numbered(&["a", "b"], 99_999), " 99999\ta\n100000\tb");
}

#[test]
fn read_file_empty_and_missing() {
    let fx = Fx::new();
    fx.put("empty.txt", b"");
    fx.put("blank.txt", b" \n\t\n");
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "empty.txt"})),
        "System reminder: File exists but has empty contents"
    );
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "blank.txt"})),
        "System reminder: File exists but has empty contents"
    );
    assert_eq!(
        fx.err("read_file", json!({"file_path": "nope.txt"})),
        "Error: File '/nope.txt' not found"
    );
    assert_eq!(
        fx.err("read_file", json!({"file_path": "./a//b/../nope.txt"})),
        "Error: File '/a/nope.txt' not found"
    );
    fs::create_dir_all(fx.session_path("dir")).unwrap();
    assert_eq!(
        fx.err("read_file", json!({"file_path": "dir"})),
        "Error: File '/dir' not found"
    );
}

#[test]
fn read_file_refuses_binary() {
    // The notice is an answer, not a failed call (as in the original): status ok.
    let fx = Fx::new();
    fx.put("scratchpad/chart.png", &vec![7u8; 24_678]);
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "scratchpad/chart.png"})),
        "Error: 'scratchpad/chart.png' is a binary file (image/png, 24.1 KB) and was not read; read_file returns text files only."
    );
    fx.put("Deck.PDF", &[1u8; 500]);
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "/Deck.PDF"})),
        "Error: 'Deck.PDF' is a binary file (application/pdf, 500 B) and was not read; read_file returns text files only."
    );
    fx.put("scratchpad/export.zip", b"PK\x03\x04\0\0");
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "scratchpad/export.zip"})),
        "Error: 'scratchpad/export.zip' is a binary file (application/octet-stream) and was not read; read_file returns text files only."
    );
    // SVG is text.
    fx.put("logo.svg", b"<svg/>");
    assert_eq!(
        fx.ok("read_file", json!({"file_path": "logo.svg"})),
        "     1\t<svg/>"
    );
}

#[test]
fn sizes_and_mime() {
    assert_eq!(format_size(0), "0 B");
    assert_eq!(format_size(1023), "1023 B");
    assert_eq!(format_size(1024), "1.0 KB");
    assert_eq!(format_size(3 * 1024 * 1024), "3.0 MB");
    assert_eq!(mime_of("a/.png"), "text/plain");
    assert_eq!(mime_of("a/x.JPG"), "image/jpeg");
    assert_eq!(mime_of("x.tar.gz"), "text/plain");
    assert_eq!(mime_of("x.json"), "application/json");
}

// ---- write_file / edit_file ------------------------------------------------

#[test]
fn write_file_overwrites_and_creates_parents() {
    let fx = Fx::new();
    fx.ok(
        "write_file",
        json!({"file_path": "/out/deep/x.txt", "content": "one"}),
    );
    let text = fx.ok(
        "write_file",
        json!({"file_path": "/out/deep/x.txt", "content": "two"}),
    );
    assert_eq!(text, "Successfully wrote to '/out/deep/x.txt'");
    assert_eq!(
        fs::read_to_string(fx.session_path("out/deep/x.txt")).unwrap(),
        "two"
    );
}

#[test]
fn write_file_binary_path_takes_base64() {
    let fx = Fx::new();
    fx.ok(
        "write_file",
        json!({"file_path": "img.png", "content": "iVBORw0KGgo="}),
    );
    assert_eq!(
        fs::read(fx.session_path("img.png")).unwrap(),
        vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]
    );
}

#[test]
fn read_only_mounts_refuse_writes_and_edits() {
    let fx = Fx::new();
    assert_eq!(
        fx.err(
            "write_file",
            json!({"file_path": "skills/order-data/SKILL.md", "content": "x"})
        ),
        format!("Cannot write '/skills/order-data/SKILL.md': {RO}")
    );
    assert_eq!(
        fx.err(
            "write_file",
            json!({"file_path": "/AGENTS.md", "content": "x"})
        ),
        format!("Cannot write '/AGENTS.md': {RO}")
    );
    assert_eq!(
        fx.err(
            "edit_file",
            json!({"file_path": ".platform/prompt.md", "old_string": "p", "new_string": "q"})
        ),
        format!("Cannot edit '/.platform/prompt.md': {RO}")
    );
    assert_eq!(
        fs::read_to_string(fx.ws.root.join("AGENTS.md")).unwrap(),
        "agents\n"
    );
}

#[test]
fn edit_file_results_and_errors() {
    let fx = Fx::new();
    fx.put("e.txt", b"foo bar foo");
    let edit = |old: &str, new: &str, all: bool| {
        fx.run(
            "edit_file",
            json!({"file_path": "e.txt", "old_string": old, "new_string": new, "replace_all": all}),
        )
    };
    assert_eq!(
        edit("foo", "x", false).text,
        "Error: String 'foo' has multiple occurrences (appears 2 times) in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context."
    );
    assert_eq!(
        edit("zzz", "x", false).text,
        "Error: String not found in file: 'zzz'"
    );
    assert_eq!(
        edit("", "x", false).text,
        "Error: oldString cannot be empty when file has content"
    );
    let done = edit("bar", "baz", false);
    assert!(!done.is_error);
    assert_eq!(
        done.text,
        "Successfully replaced 1 occurrence(s) in 'e.txt'"
    );
    assert_eq!(
        edit("foo", "q", true).text,
        "Successfully replaced 2 occurrence(s) in 'e.txt'"
    );
    assert_eq!(
        fs::read_to_string(fx.session_path("e.txt")).unwrap(),
        "q baz q"
    );
    assert_eq!(
        fx.err(
            "edit_file",
            json!({"file_path": "/missing.txt", "old_string": "a", "new_string": "b"})
        ),
        "Error: File '/missing.txt' not found"
    );
    fx.put("empty.txt", b"");
    assert_eq!(
        fx.ok(
            "edit_file",
            json!({"file_path": "empty.txt", "old_string": "", "new_string": "seed"})
        ),
        "Successfully replaced 0 occurrence(s) in 'empty.txt'"
    );
    assert_eq!(
        fs::read_to_string(fx.session_path("empty.txt")).unwrap(),
        "seed"
    );
}

// ---- ls ------------------------------------------------------------------

#[test]
fn ls_root_while_bound() {
    let fx = Fx::new();
    fx.put("notes.txt", b"hello");
    fx.put("empty.txt", b"");
    fx.put("scratchpad/a.txt", b"a");
    fx.put("checkpoints/cp-1.json", b"{}");
    fx.put("artifacts/trail.json", b"{}");
    fx.put("large_tool_results/call_1", b"big");
    let expected = [
        "/.platform/ (directory)",
        "/AGENTS.md (7 bytes)",
        "/data/ (directory)",
        "/empty.txt",
        "/large_tool_results/ (directory)",
        "/notes.txt (5 bytes)",
        "/scratchpad/ (directory)",
        "/skills/ (directory)",
    ]
    .join("\n");
    assert_eq!(fx.ok("ls", json!({})), expected);
    assert_eq!(fx.ok("ls", json!({"path": "/"})), expected);
}

#[test]
fn ls_subdirectories_and_empty() {
    let fx = Fx::new();
    fx.put("scratchpad/b.txt", b"bb");
    fx.put("scratchpad/A.txt", b"a");
    fx.put("scratchpad/sub/c.txt", b"c");
    fs::create_dir_all(fx.session_path("scratchpad/empty")).unwrap();
    assert_eq!(
        fx.ok("ls", json!({"path": "scratchpad"})),
        "/scratchpad/A.txt (1 bytes)\n/scratchpad/b.txt (2 bytes)\n/scratchpad/empty/ (directory)\n/scratchpad/sub/ (directory)"
    );
    assert_eq!(
        fx.ok("ls", json!({"path": "skills"})),
        "/skills/order-data/ (directory)"
    );
    assert_eq!(
        fx.ok("ls", json!({"path": "scratchpad/empty"})),
        "No files found in scratchpad/empty"
    );
    assert_eq!(
        fx.ok("ls", json!({"path": "/nowhere"})),
        "No files found in /nowhere"
    );
    assert_eq!(
        fx.ok("ls", json!({"path": "workflows"})),
        "No files found in workflows"
    );
}

#[test]
fn ls_mount_overlays_a_session_entry_of_the_same_name() {
    let fx = Fx::new();
    fx.put("skills/shadow.md", b"s");
    assert_eq!(
        fx.ok("ls", json!({"path": "/skills"})),
        "/skills/order-data/ (directory)"
    );
}

// ---- glob ----------------------------------------------------------------

#[test]
fn glob_patterns() {
    let fx = Fx::new();
    fx.put("notes.txt", b"n");
    fx.put(".env", b"e");
    fx.put("scratchpad/a.txt", b"a");
    fx.put("scratchpad/notes.md", b"m");
    fx.put("checkpoints/cp.json", b"{}");
    assert_eq!(
        fx.ok("glob", json!({"pattern": "**/*.md"})),
        "/.platform/prompt.md\n/AGENTS.md\n/scratchpad/notes.md\n/skills/order-data/SKILL.md"
    );
    assert_eq!(fx.ok("glob", json!({"pattern": "*.txt"})), "/notes.txt");
    assert_eq!(
        fx.ok("glob", json!({"pattern": "*"})),
        "/.env\n/AGENTS.md\n/notes.txt"
    );
    assert_eq!(
        fx.ok("glob", json!({"pattern": "*.txt", "path": "/scratchpad"})),
        "/scratchpad/a.txt"
    );
    assert_eq!(
        fx.ok("glob", json!({"pattern": "scratchpad/*.{md,txt}"})),
        "/scratchpad/a.txt\n/scratchpad/notes.md"
    );
    assert_eq!(
        fx.ok("glob", json!({"pattern": "**/*.json"})),
        "No files found matching pattern '**/*.json'"
    );
}

#[test]
fn glob_matcher() {
    let g = |p: &str, s: &str| Glob::new(p).is_match(s);
    assert!(g("*.md", "a.md"));
    assert!(!g("*.md", "x/a.md"));
    assert!(g("**/*.md", "a.md"));
    assert!(g("**/*.md", "x/y/a.md"));
    assert!(g("/x/*", "x/a"));
    assert!(g("./x/*", "x/a"));
    assert!(g("*", ".env"));
    assert!(g("a?c", "abc"));
    assert!(!g("a?c", "a/c"));
    assert!(g("[ab]x", "bx"));
    assert!(!g("[!ab]x", "bx"));
    assert!(g("[!ab]x", "cx"));
    assert!(g("[a-c]x", "bx"));
    assert!(g("{a,b/c}.md", "b/c.md"));
    assert!(g("{a}.md", "{a}.md"));
    assert!(g("x/**", "x/y/z"));
    assert!(g("a**/c", "ab/c"));
    assert!(g("\\*.md", "*.md"));
    assert!(!g("\\*.md", "a.md"));
    assert!(g("a*b*c", "aXbYbZc"));
}

// ---- grep ----------------------------------------------------------------

#[test]
fn grep_groups_by_file() {
    let fx = Fx::new();
    fx.put("notes.txt", b"hello world\nbye\n");
    fx.put("scratchpad/a.txt", b"one\nhello again\nhello.* literal\n");
    fx.put("scratchpad/pic.png", b"hello");
    fx.put("scratchpad/blob.bin", b"hello\0");
    assert_eq!(
        fx.ok("grep", json!({"pattern": "hello"})),
        "\n/notes.txt:\n  1: hello world\n\n/scratchpad/a.txt:\n  2: hello again\n  3: hello.* literal"
    );
    assert_eq!(
        fx.ok("grep", json!({"pattern": "hello.*"})),
        "\n/scratchpad/a.txt:\n  3: hello.* literal"
    );
    assert_eq!(
        fx.ok(
            "grep",
            json!({"pattern": "hello", "path": "/scratchpad", "glob": "*.txt"})
        ),
        "\n/scratchpad/a.txt:\n  2: hello again\n  3: hello.* literal"
    );
    assert_eq!(
        fx.ok("grep", json!({"pattern": "Use it", "path": "skills"})),
        "\n/skills/order-data/SKILL.md:\n  2: Use it."
    );
    assert_eq!(
        fx.ok("grep", json!({"pattern": "absent"})),
        "No matches found for pattern 'absent'"
    );
}

#[test]
fn grep_max_count() {
    let fx = Fx::new();
    fx.put("a.txt", b"x1\nx2\nx3\n");
    assert_eq!(
        fx.ok("grep", json!({"pattern": "x", "max_count": 3})),
        "\n/a.txt:\n  1: x1\n  2: x2\n  3: x3"
    );
    assert_eq!(
        fx.ok("grep", json!({"pattern": "x", "max_count": 2})),
        format!("\n/a.txt:\n  1: x1\n  2: x2\n\n{GREP_CAP_NOTE}")
    );
    assert_eq!(
        fx.err("grep", json!({"pattern": "x", "max_count": 0})),
        "Error: invalid arguments for grep: 'max_count' must be a positive integer"
    );
}

#[test]
fn long_listing_results_are_truncated() {
    let lines: Vec<String> = (0..100).map(|i| format!("{i:0>1000}")).collect();
    let out = truncate_lines(lines.clone());
    let kept: Vec<&str> = out.split('\n').collect();
    assert_eq!(kept.len(), 81);
    assert_eq!(kept[79], lines[79]);
    assert_eq!(kept[80], TRUNCATION_GUIDANCE);
    assert_eq!(
        TRUNCATION_GUIDANCE,
        "... [results truncated, try being more specific with your parameters]"
    );
    let short: Vec<String> = vec!["a".into(), "b".into()];
    assert_eq!(truncate_lines(short), "a\nb");

    let fx = Fx::new();
    let name = "n".repeat(200);
    for i in 0..450 {
        fx.put(&format!("big/{name}{i:03}.txt"), b"x");
    }
    let text = fx.ok("glob", json!({"pattern": "**/*.txt"}));
    assert!(text.ends_with(&format!("\n{TRUNCATION_GUIDANCE}")));
    assert!(text.chars().count() <= 80_000 + TRUNCATION_GUIDANCE.len() + 400);
}

// ---- copy / move / remove ---------------------------------------------------

#[test]
fn file_operation_path_checks_come_first() {
    let fx = Fx::new();
    assert_eq!(
        fx.err("copy_file", json!({"source": "../x", "destination": "/"})),
        "Error: Cannot copy '../x': it resolves outside the workspace root."
    );
    assert_eq!(
        fx.err("copy_file", json!({"source": "a.txt", "destination": "./"})),
        "Error: Cannot copy './': it names the workspace root, not a file."
    );
    assert_eq!(
        fx.err("move_file", json!({"source": "/", "destination": "../y"})),
        "Error: Cannot move '/': it names the workspace root, not a file."
    );
    assert_eq!(
        fx.err("remove_file", json!({"file_path": "a/../../etc"})),
        "Error: Cannot remove 'a/../../etc': it resolves outside the workspace root."
    );
    assert_eq!(
        fx.err("remove_file", json!({"file_path": ""})),
        "Error: Cannot remove '': it names the workspace root, not a file."
    );
}

#[test]
fn copy_check_order() {
    let fx = Fx::new();
    fx.put("scratchpad/a.txt", b"hello");
    fx.put("scratchpad/b.txt", b"old");
    // 2 before 5: the same file, even when it does not exist.
    assert_eq!(
        fx.err(
            "copy_file",
            json!({"source": "scratchpad/none.txt", "destination": "./scratchpad//none.txt"})
        ),
        "Error: Cannot copy 'scratchpad/none.txt' onto itself: the source and the destination are the same file."
    );
    // 3 before 5: destination occupied, source missing.
    assert_eq!(
        fx.err(
            "copy_file",
            json!({"source": "scratchpad/none.txt", "destination": "scratchpad/b.txt"})
        ),
        "Error: Cannot copy to 'scratchpad/b.txt': a file is already there. Pass overwrite: true to replace it, or choose another destination."
    );
    assert_eq!(
        fx.err(
            "copy_file",
            json!({"source": "scratchpad/none.txt", "destination": "out/x.txt"})
        ),
        "Error: Cannot copy 'scratchpad/none.txt': it does not exist."
    );
    fs::create_dir_all(fx.session_path("scratchpad/dir")).unwrap();
    assert_eq!(
        fx.err(
            "copy_file",
            json!({"source": "scratchpad/dir", "destination": "out/x.txt"})
        ),
        "Error: Cannot copy 'scratchpad/dir': it is a directory; this tool works on one file."
    );
    assert_eq!(
        fx.err(
            "copy_file",
            json!({"source": "scratchpad/a.txt", "destination": "skills/new.md"})
        ),
        "Error: Cannot copy to 'skills/new.md': it is served by a read-only mount."
    );
    assert_eq!(
        fx.err(
            "copy_file",
            json!({"source": "scratchpad/a.txt", "destination": "scratchpad/dir", "overwrite": true})
        ),
        "Error: Cannot copy to 'scratchpad/dir': it is a directory; this tool works on one file."
    );
    assert_eq!(
        fx.ok(
            "copy_file",
            json!({"source": "/scratchpad/a.txt", "destination": "output/a.txt"})
        ),
        "Copied 'scratchpad/a.txt' to 'output/a.txt' (5 B)."
    );
    assert_eq!(
        fs::read_to_string(fx.session_path("output/a.txt")).unwrap(),
        "hello"
    );
    assert_eq!(
        fx.ok(
            "copy_file",
            json!({"source": "scratchpad/a.txt", "destination": "scratchpad/b.txt", "overwrite": true})
        ),
        "Copied 'scratchpad/a.txt' to 'scratchpad/b.txt' (5 B)."
    );
    assert_eq!(
        fs::read_to_string(fx.session_path("scratchpad/b.txt")).unwrap(),
        "hello"
    );
}

#[test]
fn copy_keeps_exact_bytes_and_reads_mounts() {
    let fx = Fx::new();
    let bytes: Vec<u8> = (0..=255u8).cycle().take(2048).collect();
    fx.put("scratchpad/raw.dat", &bytes);
    assert_eq!(
        fx.ok(
            "copy_file",
            json!({"source": "scratchpad/raw.dat", "destination": "scratchpad/copy.png"})
        ),
        "Copied 'scratchpad/raw.dat' to 'scratchpad/copy.png' (2.0 KB)."
    );
    assert_eq!(
        fs::read(fx.session_path("scratchpad/copy.png")).unwrap(),
        bytes
    );
    assert_eq!(
        fx.ok(
            "copy_file",
            json!({"source": "skills/order-data/SKILL.md", "destination": "scratchpad/SKILL.md"})
        ),
        "Copied 'skills/order-data/SKILL.md' to 'scratchpad/SKILL.md' (21 B)."
    );
}

#[test]
fn move_check_order_and_result() {
    let fx = Fx::new();
    fx.put("scratchpad/a.txt", b"hello");
    fx.put("scratchpad/taken.txt", b"t");
    // 3 before 4.
    assert_eq!(
        fx.err(
            "move_file",
            json!({"source": "skills/order-data/SKILL.md", "destination": "scratchpad/taken.txt"})
        ),
        "Error: Cannot move to 'scratchpad/taken.txt': a file is already there. Pass overwrite: true to replace it, or choose another destination."
    );
    // 4 before 5: authored source, even a missing one.
    assert_eq!(
        fx.err(
            "move_file",
            json!({"source": "skills/none.md", "destination": "scratchpad/x.md"})
        ),
        "Error: Cannot move 'skills/none.md': it is served by a read-only mount, so it cannot be removed. Use copy_file to copy it instead."
    );
    assert_eq!(
        fx.err(
            "move_file",
            json!({"source": "AGENTS.md", "destination": "scratchpad/x.md"})
        ),
        "Error: Cannot move 'AGENTS.md': it is served by a read-only mount, so it cannot be removed. Use copy_file to copy it instead."
    );
    assert_eq!(
        fx.ok(
            "move_file",
            json!({"source": "scratchpad/a.txt", "destination": "/done/a.txt"})
        ),
        "Moved 'scratchpad/a.txt' to 'done/a.txt' (5 B)."
    );
    assert!(!fx.session_path("scratchpad/a.txt").exists());
    assert_eq!(
        fs::read_to_string(fx.session_path("done/a.txt")).unwrap(),
        "hello"
    );
    // A writable mount may be moved out of.
    fx.put_root("data/in.csv", b"a,b\n");
    assert_eq!(
        fx.ok(
            "move_file",
            json!({"source": "data/in.csv", "destination": "scratchpad/in.csv"})
        ),
        "Moved 'data/in.csv' to 'scratchpad/in.csv' (4 B)."
    );
    assert!(!fx.ws.root.join("data/in.csv").exists());
}

#[test]
fn remove_file_results() {
    let fx = Fx::new();
    fx.put("scratchpad/a.txt", b"a");
    fs::create_dir_all(fx.session_path("scratchpad/dir")).unwrap();
    assert_eq!(
        fx.err("remove_file", json!({"file_path": "scratchpad/dir"})),
        "Error: Cannot remove 'scratchpad/dir': it is a directory; this tool works on one file."
    );
    assert_eq!(
        fx.err("remove_file", json!({"file_path": "scratchpad/none"})),
        "Error: Cannot remove 'scratchpad/none': it does not exist."
    );
    assert_eq!(
        fx.err(
            "remove_file",
            json!({"file_path": "/skills/order-data/SKILL.md"})
        ),
        "Error: Cannot remove 'skills/order-data/SKILL.md': it is served by a read-only mount."
    );
    assert!(fx.ws.root.join("skills/order-data/SKILL.md").is_file());
    assert_eq!(
        fx.ok("remove_file", json!({"file_path": "/scratchpad/./a.txt"})),
        "Removed 'scratchpad/a.txt'."
    );
    assert!(!fx.session_path("scratchpad/a.txt").exists());
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_not_followed() {
    let fx = Fx::new();
    fx.put("real.txt", b"secret");
    std::os::unix::fs::symlink(fx.session_path("real.txt"), fx.session_path("link.txt")).unwrap();
    assert_eq!(
        fx.err("remove_file", json!({"file_path": "link.txt"})),
        "Error: Cannot remove 'link.txt': it is a symbolic link, which the workspace does not follow."
    );
    assert_eq!(
        fx.err(
            "copy_file",
            json!({"source": "link.txt", "destination": "c.txt"})
        ),
        "Error: Cannot copy 'link.txt': it is a symbolic link, which the workspace does not follow."
    );
    assert_eq!(
        fx.err("read_file", json!({"file_path": "link.txt"})),
        "Error: Symlinks are not allowed: /link.txt"
    );
    // Listings skip links.
    assert!(!fx.ok("ls", json!({"path": "/"})).contains("link.txt"));
    assert!(Path::new(&fx.session_path("link.txt")).exists());
}

// ---- write_todos / offload / dispatch -------------------------------------

#[test]
fn write_todos_confirms() {
    let fx = Fx::new();
    assert_eq!(
        fx.ok(
            "write_todos",
            json!({"todos": [{"content": "Read data", "status": "in_progress"}, {"content": "Write", "status": "pending"}]})
        ),
        r#"Updated todo list to [{"content":"Read data","status":"in_progress"},{"content":"Write","status":"pending"}]"#
    );
    assert_eq!(
        fx.err(
            "write_todos",
            json!({"todos": [{"content": "x", "status": "done"}]})
        ),
        "Error: invalid arguments for write_todos: todos[0] must be { content: string, status: pending|in_progress|completed }"
    );
}

#[test]
fn argument_errors_and_unknown_tools() {
    let fx = Fx::new();
    assert_eq!(
        fx.err("read_file", json!({})),
        "Error: invalid arguments for read_file: 'file_path' is required and must be a string"
    );
    assert_eq!(
        fx.err("copy_file", json!({"source": "a"})),
        "Error: invalid arguments for copy_file: 'destination' is required and must be a string"
    );
    assert_eq!(
        fx.err("delete", json!({})),
        "Error: 'delete' is not a file tool."
    );
}

#[test]
fn offload_large_results() {
    let fx = Fx::new();
    assert_eq!(offload(&fx.ws, "call.1/x", "short", 10), Ok(None));
    let big: String = (1..=20).map(|i| format!("row {i}\n")).collect();
    let pointer = offload(&fx.ws, "call.1/x", &big, 10).unwrap().unwrap();
    let expected = format!(
        "Tool result too large ({} characters), so it was saved to the file '/large_tool_results/call_1_x' instead of being shown here.\n\
         Read it with read_file, a part at a time: read_file(file_path=\"/large_tool_results/call_1_x\", offset=0, limit=100) shows the first 100 lines; raise offset to continue.\n\n\
         The first lines of the result:\n{}",
        big.chars().count(),
        (1..=10)
            .map(|i| format!("{i:>6}\trow {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(pointer, expected);
    assert_eq!(
        fs::read_to_string(fx.ws.root.join("sessions/s/large_tool_results/call_1_x")).unwrap(),
        big
    );
    // The pointer's path reads back through read_file.
    let back = fx.ok(
        "read_file",
        json!({"file_path": "/large_tool_results/call_1_x", "limit": 1}),
    );
    assert_eq!(back, "     1\trow 1");
    assert_eq!(sanitize_call_id(""), "tool_result");
    assert_eq!(sanitize_call_id("a\\b.c/d"), "a_b_c_d");
}

#[test]
fn locale_order() {
    let mut v = vec!["/b", "/B", "/a.txt", "/a/", "/_x", "/1", "/.p", "/Z"];
    v.sort_by(|a, b| locale_cmp(a, b));
    assert_eq!(
        v,
        vec!["/_x", "/.p", "/1", "/a.txt", "/a/", "/b", "/B", "/Z"]
    );
}

#[test]
fn offload_never_follows_a_link_out_of_the_session_folder() {
    let fx = Fx::new();
    let outside = fx.ws.root.join("outside");
    fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, fx.session_path("large_tool_results")).unwrap();
    let big = "x".repeat(50);
    let refused = offload(&fx.ws, "c1", &big, 10).unwrap_err();
    assert!(
        refused.starts_with("Error: the tool result was too large to show (50 characters) and could not be saved to '/large_tool_results/c1': "),
        "{refused}"
    );
    assert!(
        refused.contains("large_tool_results' is a symbolic link"),
        "{refused}"
    );
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing written outside"
    );
}
