//! Validating the example workspace in process.
//!
//! Baseline, measured in the same run: `read_files`, which only reads the files
//! validation reads (the IO floor). `scripts/bench.sh` prints the ratio.
//!
//! `validate_scaling` validates generated workflows of `n` and `2n` unknown root keys and
//! of `n` and `2n` chained states, and prints the time ratio per doubling (about 2 when
//! validation is linear; it was 4–5 before the key index and the reachability set).

use std::hint::black_box;
use std::path::PathBuf;

use archmax_spec::workspace::{Files, MemFiles};
use archmax_spec::{DiskFiles, ValidateOptions, validate_spec, validate_workflow};
use criterion::{Criterion, criterion_group};

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

/// A workflow with `n` unknown root keys.
fn unknown_keys(n: usize) -> String {
    let mut s = String::from("states:\n  a:\n    triggers: { manual: }\n");
    for i in 0..n {
        s.push_str(&format!("k{i}: 1\n"));
    }
    s
}

/// A workflow of `n` states, each moving to the next.
fn chained_states(n: usize) -> String {
    let mut s = String::from("states:\n");
    for i in 0..n {
        s.push_str(&format!("  s{i}:\n    instructions: Do {i}.\n"));
        if i == 0 {
            s.push_str("    triggers: { manual: }\n");
        }
        if i + 1 < n {
            s.push_str(&format!(
                "    transitions: [{{ to: s{}, description: Next. }}]\n",
                i + 1
            ));
        }
    }
    s
}

fn workspace_of(spec: &str) -> MemFiles {
    let mut mem = MemFiles::new();
    mem.insert("workflows/w/workflow.yaml", spec);
    mem
}

/// A generated workflow: its name, how to make one of size `n`, and the `n` measured.
type Generated = (&'static str, fn(usize) -> String, usize);

const SCALING: [Generated; 2] = [
    ("unknown_keys", unknown_keys, 20_000),
    ("states", chained_states, 5_000),
];

fn scaling(c: &mut Criterion) {
    let opts = ValidateOptions::new("w");
    let mut g = c.benchmark_group("validate_scaling");
    g.sample_size(10);
    for (name, make, n) in SCALING {
        for size in [n, 2 * n] {
            let mem = workspace_of(&make(size));
            g.bench_function(format!("{name}/{size}"), |b| {
                b.iter(|| black_box(validate_workflow(&mem, &opts)))
            });
        }
    }
    g.finish();
}

/// The best of a few runs, in seconds.
fn best_of(mem: &MemFiles, opts: &ValidateOptions) -> f64 {
    (0..5)
        .map(|_| {
            let t = std::time::Instant::now();
            black_box(validate_workflow(mem, opts));
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

/// Prints the time ratio of `2n` over `n` for each generated workflow.
fn print_scaling_ratios() {
    let opts = ValidateOptions::new("w");
    for (name, make, n) in SCALING {
        let small = best_of(&workspace_of(&make(n)), &opts);
        let large = best_of(&workspace_of(&make(2 * n)), &opts);
        println!(
            "validate_scaling {name}: n={n} {:.1} ms, 2n {:.1} ms, ratio per doubling {:.2} (linear = 2)",
            small * 1e3,
            large * 1e3,
            large / small
        );
    }
}

criterion_group!(validate, benches, scaling);

fn main() {
    validate();
    print_scaling_ratios();
    Criterion::default().configure_from_args().final_summary();
}
