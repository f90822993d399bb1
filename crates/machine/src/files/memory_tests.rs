//! The file tools over a session held in memory answer exactly what they answer over the
//! session folder on disk: one corpus of calls, run in order against both, compared byte
//! for byte (texts and error flags), plus the memory area's own bound.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::*;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// An authored workspace on disk (mounts `skills/`, `.platform/`, `AGENTS.md`, a
/// writable `data/`, a read-only `charts/`) and session `S`, its area on disk or in
/// memory, after the store's first commit (`scratchpad/` made; on disk also the
/// store's `checkpoints/`).
struct Side {
    ws: Workspace,
    root: PathBuf,
}

impl Drop for Side {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

const PNG: &[u8] = &[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2];

impl Side {
    fn new(memory: bool) -> Side {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let root = std::env::temp_dir().join(format!("files-mem-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        put(
            &root,
            "skills/order-data/SKILL.md",
            b"# Order data\nUse it.\n",
        );
        put(&root, "skills/order-data/scripts/sum.js", b"1 + 1\n");
        put(&root, ".platform/prompt.md", b"prompt\n");
        put(&root, "AGENTS.md", b"agents\nalpha in the persona\n");
        put(&root, "workflows/x/workflow.yaml", b"name: x\n");
        put(&root, "charts/a.png", PNG);
        fs::create_dir_all(root.join("data")).unwrap();
        let mut mounts = Workspace::default_mounts();
        mounts.push(MountRoute::dir("data").writable());
        mounts.push(MountRoute::dir("charts"));
        let ws = if memory {
            let area = Arc::new(MemArea::new(Path::new(MEMORY_ROOT).join("S")));
            area.first_commit().unwrap();
            let files = SessionFiles {
                dir: area.base().to_path_buf(),
                backend: area,
            };
            Workspace::with_files(&root, files, mounts)
        } else {
            let ws = Workspace::new(&root, "s", mounts);
            fs::create_dir_all(ws.session.join("scratchpad")).unwrap();
            fs::create_dir_all(ws.session.join("checkpoints")).unwrap();
            fs::write(ws.session.join("checkpoints/transcript.jsonl"), b"{}\n").unwrap();
            ws
        };
        Side { ws, root }
    }

    fn run(&self, tool: &str, args: &Value) -> ToolOutput {
        run_tool(&self.ws, tool, args)
    }
}

fn big_text() -> String {
    (0..400)
        .map(|i| format!("line {i}: {}", "x".repeat(60)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The calls, in order; each sees what the earlier ones did. The store's own records
/// (`checkpoints/`, refused by the kernel to every origin as `zone.runtime-internal`)
/// are the one thing the two sides hold differently, so no call names them.
#[rustfmt::skip]
fn corpus() -> Vec<(&'static str, Value)> {
    let png64 = "iVBORw0KGgoAAQI=";
    // Names past the disk's NAME_MAX: refused alike.
    let long = format!("scratchpad/{}.md", "n".repeat(300));
    let long_dir = format!("scratchpad/{}/x.md", "d".repeat(300));
    vec![
        ("ls", json!({})),
        ("ls", json!({"path": "/scratchpad"})),
        ("ls", json!({"path": "nope"})),
        ("read_file", json!({"file_path": "scratchpad/none.md"})),
        ("write_file", json!({"file_path": "scratchpad/a.md", "content": "alpha\nbeta\nalpha again\n"})),
        ("write_file", json!({"file_path": "scratchpad/b.md", "content": "beta"})),
        ("write_file", json!({"file_path": "/scratchpad/deep/er/c.txt", "content": "gamma alpha"})),
        ("write_file", json!({"file_path": "outbox/refund.md", "content": "KK-2043"})),
        ("write_file", json!({"file_path": "notes.txt", "content": ""})),
        ("write_file", json!({"file_path": "scratchpad/img.png", "content": png64})),
        ("write_file", json!({"file_path": "scratchpad", "content": "x"})),
        ("write_file", json!({"file_path": "scratchpad/b.md/under", "content": "x"})),
        ("write_file", json!({"file_path": "AGENTS.md", "content": "x"})),
        ("write_file", json!({"file_path": "skills/order-data/new.md", "content": "x"})),
        ("write_file", json!({"file_path": "data/out.json", "content": "{\"a\": 1}"})),
        ("write_file", json!({"file_path": "../escape", "content": "x"})),
        ("write_file", json!({"file_path": "scratchpad/big.txt", "content": big_text()})),
        ("ls", json!({})),
        ("ls", json!({"path": "scratchpad"})),
        ("ls", json!({"path": "scratchpad/deep"})),
        ("ls", json!({"path": "scratchpad/a.md"})),
        ("ls", json!({"path": "skills"})),
        ("read_file", json!({"file_path": "scratchpad/a.md"})),
        ("read_file", json!({"file_path": "scratchpad/a.md", "offset": 1, "limit": 1})),
        ("read_file", json!({"file_path": "scratchpad/a.md", "offset": 9})),
        ("read_file", json!({"file_path": "scratchpad/big.txt", "offset": "390"})),
        ("read_file", json!({"file_path": "notes.txt"})),
        ("read_file", json!({"file_path": "scratchpad"})),
        ("read_file", json!({"file_path": "scratchpad/b.md/under"})),
        ("read_file", json!({"file_path": "scratchpad/img.png"})),
        ("read_file", json!({"file_path": "charts/a.png"})),
        ("read_file", json!({"file_path": "AGENTS.md"})),
        ("read_file", json!({"file_path": "workflows/x/workflow.yaml"})),
        ("read_file", json!({"file_path": "_specs/h.json"})),
        ("read_file", json!({"path": "outbox/refund.md"})),
        ("edit_file", json!({"file_path": "scratchpad/a.md", "old_string": "alpha", "new_string": "ALPHA"})),
        ("edit_file", json!({"file_path": "scratchpad/a.md", "old_string": "alpha", "new_string": "ALPHA", "replace_all": true})),
        ("edit_file", json!({"file_path": "scratchpad/a.md", "old_string": "zeta", "new_string": "x"})),
        ("edit_file", json!({"file_path": "scratchpad/a.md", "old_string": "", "new_string": "x"})),
        ("edit_file", json!({"file_path": "notes.txt", "old_string": "", "new_string": "now\n"})),
        ("edit_file", json!({"file_path": "scratchpad/missing.md", "old_string": "a", "new_string": "b"})),
        ("edit_file", json!({"file_path": "AGENTS.md", "old_string": "agents", "new_string": "x"})),
        ("read_file", json!({"file_path": "scratchpad/a.md"})),
        ("glob", json!({"pattern": "**/*.md"})),
        ("glob", json!({"pattern": "*.md", "path": "scratchpad"})),
        ("glob", json!({"pattern": "**/*", "path": "/scratchpad/deep"})),
        ("glob", json!({"pattern": "*.zip"})),
        ("glob", json!({"pattern": "**/*.png"})),
        ("grep", json!({"pattern": "alpha"})),
        ("grep", json!({"pattern": "ALPHA", "path": "scratchpad"})),
        ("grep", json!({"pattern": "a", "glob": "*.txt"})),
        ("grep", json!({"pattern": "line", "max_count": 3})),
        ("grep", json!({"pattern": "KK", "path": "outbox/refund.md"})),
        ("grep", json!({"pattern": "nothing-matches"})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": "scratchpad/a-copy.md"})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": "scratchpad/a-copy.md"})),
        ("copy_file", json!({"source": "scratchpad/b.md", "destination": "scratchpad/a-copy.md", "overwrite": true})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": "scratchpad/a.md"})),
        ("copy_file", json!({"source": "skills/order-data/SKILL.md", "destination": "scratchpad/skill.md"})),
        ("copy_file", json!({"source": "charts/a.png", "destination": "scratchpad/charts/a.png"})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": "charts/a.md"})),
        ("copy_file", json!({"source": "scratchpad/deep", "destination": "scratchpad/d2"})),
        ("copy_file", json!({"source": "scratchpad/none", "destination": "scratchpad/d2"})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": "scratchpad/deep"})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": "scratchpad/b.md/x"})),
        ("copy_file", json!({"source": "/", "destination": "x"})),
        ("copy_file", json!({"source": "../x", "destination": "x"})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": "data/a.md"})),
        ("move_file", json!({"source": "scratchpad/a-copy.md", "destination": "scratchpad/moved/a.md"})),
        ("move_file", json!({"source": "skills/order-data/SKILL.md", "destination": "scratchpad/s.md"})),
        ("move_file", json!({"source": "data/a.md", "destination": "scratchpad/from-data.md"})),
        ("move_file", json!({"source": "scratchpad/moved/a.md", "destination": "scratchpad/b.md"})),
        ("remove_file", json!({"file_path": "scratchpad/b.md"})),
        ("remove_file", json!({"file_path": "scratchpad/b.md"})),
        ("remove_file", json!({"file_path": "scratchpad/deep"})),
        ("remove_file", json!({"file_path": "AGENTS.md"})),
        ("remove_file", json!({"file_path": "/"})),
        ("write_file", json!({"file_path": long, "content": "x"})),
        ("write_file", json!({"file_path": long_dir, "content": "x"})),
        ("read_file", json!({"file_path": long})),
        ("edit_file", json!({"file_path": long, "old_string": "x", "new_string": "y"})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": long})),
        ("copy_file", json!({"source": "scratchpad/a.md", "destination": long_dir})),
        ("copy_file", json!({"source": long, "destination": "scratchpad/l.md"})),
        ("remove_file", json!({"file_path": long})),
        ("ls", json!({"path": long_dir})),
        ("glob", json!({"pattern": "*", "path": long})),
        ("ls", json!({})),
        ("ls", json!({"path": "scratchpad"})),
        ("glob", json!({"pattern": "**"})),
        ("grep", json!({"pattern": "a"})),
        ("write_todos", json!({"todos": [{"content": "x", "status": "pending"}]})),
    ]
}

#[test]
fn every_call_answers_the_same_over_memory_and_disk() {
    let disk = Side::new(false);
    let memory = Side::new(true);
    for (i, (tool, args)) in corpus().iter().enumerate() {
        let on_disk = disk.run(tool, args);
        let in_memory = memory.run(tool, args);
        assert_eq!(in_memory, on_disk, "call {i}: {tool} {args}");
    }
    // Nothing of the memory session reached the disk.
    assert!(!memory.root.join("sessions").exists());
    assert!(memory.root.join("data/out.json").is_file());
}

#[test]
fn offloads_and_images_read_back_the_same() {
    let disk = Side::new(false);
    let memory = Side::new(true);
    let text = big_text();
    for side in [&disk, &memory] {
        let pointer = offload(&side.ws, "call.1/x", &text, 1_000)
            .unwrap()
            .unwrap();
        assert!(
            pointer.contains("'/large_tool_results/call_1_x'"),
            "{pointer}"
        );
    }
    let read = json!({"file_path": "large_tool_results/call_1_x", "offset": 10, "limit": 5});
    assert_eq!(memory.run("read_file", &read), disk.run("read_file", &read));
    assert_eq!(memory.run("ls", &json!({})), disk.run("ls", &json!({})));
    let opts = crate::images::ImageReads::default();
    for path in ["charts/a.png", "scratchpad/none.png"] {
        let args = json!({"file_path": path});
        assert_eq!(
            crate::images::answer(&memory.ws, &args, &opts),
            crate::images::answer(&disk.ws, &args, &opts)
        );
    }
    let png = json!({"file_path": "scratchpad/i.png", "content": "iVBORw0KGgoAAQI="});
    assert_eq!(memory.run("write_file", &png), disk.run("write_file", &png));
    let args = json!({"file_path": "scratchpad/i.png"});
    let shown = crate::images::answer(&memory.ws, &args, &opts);
    assert_eq!(shown, crate::images::answer(&disk.ws, &args, &opts));
    assert!(shown.unwrap().0.contains("is shown below"));
}

#[test]
fn scripts_run_from_a_skill_read_the_same() {
    let disk = Side::new(false);
    let memory = Side::new(true);
    for path in [
        "skills/order-data/scripts/sum.js",
        "scratchpad/none.js",
        "scratchpad",
    ] {
        let read = |side: &Side| {
            let route = route::resolve(&side.ws, path).unwrap();
            route
                .fs
                .read_regular(&route.disk, 1024)
                .map_err(|e| e.to_string())
        };
        assert_eq!(read(&memory), read(&disk), "{path}");
    }
}

#[test]
fn a_session_area_is_bounded() {
    let memory = Side::new(true);
    let half = "x".repeat((MAX_BYTES / 2 + 1) as usize);
    let write = |name: &str| {
        memory.run(
            "write_file",
            &json!({"file_path": format!("scratchpad/{name}"), "content": half}),
        )
    };
    assert!(!write("one.txt").is_error);
    let refused = write("two.txt");
    assert_eq!(
        refused,
        ToolOutput::err(
            "Error writing file '/scratchpad/two.txt': the session's files would pass their limit of 64 MiB in memory"
        )
    );
    // Replacing a file counts its new size only.
    assert!(!write("one.txt").is_error);
    let copy = memory.run(
        "copy_file",
        &json!({"source": "scratchpad/one.txt", "destination": "scratchpad/three.txt"}),
    );
    assert_eq!(
        copy.text,
        "Error: Cannot copy to 'scratchpad/three.txt': the session's files would pass their limit of 64 MiB in memory."
    );
    let text = "y".repeat((MAX_BYTES / 2) as usize);
    let lost = offload(&memory.ws, "c9", &text, 10).unwrap_err();
    assert!(
        lost.contains("could not be saved to '/large_tool_results/c9': the session's files would pass their limit of 64 MiB in memory."),
        "{lost}"
    );
    assert!(
        !memory
            .run("remove_file", &json!({"file_path": "scratchpad/one.txt"}))
            .is_error
    );
    assert!(!write("two.txt").is_error);
}

#[test]
fn a_session_area_holds_a_bounded_number_of_entries() {
    let area = MemArea::new("/m/S");
    for i in 0..MAX_ENTRIES {
        area.write(Path::new(&format!("/m/S/f{i}")), b"").unwrap();
    }
    let e = area.write(Path::new("/m/S/one-more"), b"").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
    assert_eq!(
        over_limit(&e).as_deref(),
        Some("the session's files would pass their limit of 10000 files and folders in memory")
    );
    // Paths are bounded as on disk: a name of 255 bytes, a path of 4095.
    let deep = format!("/m/S/{}", vec!["d".repeat(200); 21].join("/"));
    assert_eq!(
        area.create_dir_all(Path::new(&deep)).unwrap_err().kind(),
        std::io::ErrorKind::InvalidFilename
    );
    // Replacing a file is not a new entry; removing one makes room.
    area.write(Path::new("/m/S/f0"), b"again").unwrap();
    area.remove_file(Path::new("/m/S/f1")).unwrap();
    area.create_dir_all(Path::new("/m/S/dir")).unwrap();
}

#[test]
fn areas_are_per_session_and_go_with_their_session() {
    let areas = MemAreas::new();
    let one = areas.session_files("s1");
    one.backend
        .write_confined(&one.dir, &one.dir.join("scratchpad/a.md"), b"a")
        .unwrap();
    let child = areas.session_files("s1~review:child:1");
    child
        .backend
        .write_confined(&child.dir, &child.dir.join("b.md"), b"b")
        .unwrap();
    let other = areas.session_files("s2");
    assert!(
        other
            .backend
            .meta(&other.dir.join("scratchpad/a.md"))
            .is_err()
    );
    assert!(
        one.backend
            .meta(&one.dir.join("scratchpad/a.md"))
            .unwrap()
            .is_file()
    );
    areas.remove("s1");
    assert!(areas.existing("s1").is_none());
    assert!(areas.existing("s1~review:child:1").is_none());
    assert!(areas.existing("s2").is_some());
    // Paths outside the area are neither read nor written.
    assert_eq!(
        other
            .backend
            .read(Path::new("/etc/passwd"))
            .unwrap_err()
            .kind(),
        std::io::ErrorKind::NotFound
    );
    assert_eq!(
        other
            .backend
            .write(Path::new("/tmp/x"), b"x")
            .unwrap_err()
            .kind(),
        std::io::ErrorKind::PermissionDenied
    );
}
