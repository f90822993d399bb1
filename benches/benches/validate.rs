//! Validating the example workspace in process.
//!
//! Baseline, measured in the same run: `read_files`, which only reads the files
//! validation reads (the IO floor). `scripts/bench.sh` prints the ratio.

use std::hint::black_box;
use std::path::PathBuf;

use archmax_spec::workspace::{Files, MemFiles};
use archmax_spec::{DiskFiles, ValidateOptions, validate_spec, validate_workflow};
use criterion::{Criterion, criterion_group, criterion_main};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/customer-support")
}

/// Every file under `dir`, workspace-relative.
fn all_files(root: &PathBuf, rel: &str, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if e.path().is_dir() {
            all_files(root, &path, out);
        } else {
            out.push(path);
        }
    }
}

fn benches(c: &mut Criterion) {
    let root = example();
    let disk = DiskFiles::new(&root);
    let opts = ValidateOptions::new("order-lookup");
    let mut paths = Vec::new();
    all_files(&root, "", &mut paths);
    let mut mem = MemFiles::new();
    for p in &paths {
        if let Some(text) = disk.read(p) {
            mem.insert(p.clone(), text);
        }
    }
    let spec_text = disk
        .read("workflows/order-lookup/workflow.yaml")
        .unwrap_or_default();

    let mut g = c.benchmark_group("validate");
    g.bench_function("read_files", |b| {
        b.iter(|| {
            let mut n = 0;
            for p in &paths {
                n += disk.read(p).map_or(0, |t| t.len());
            }
            black_box(n)
        })
    });
    g.bench_function("workspace_disk", |b| {
        b.iter(|| black_box(validate_workflow(&disk, &opts)))
    });
    g.bench_function("workspace_memory", |b| {
        b.iter(|| black_box(validate_workflow(&mem, &opts)))
    });
    g.bench_function("spec_only", |b| {
        b.iter(|| black_box(validate_spec(&spec_text)))
    });
    g.finish();
}

criterion_group!(validate, benches);
criterion_main!(validate);
