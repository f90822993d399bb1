//! `archmax graph [workflow] [--format mermaid|svg|dot]`: the workflow's diagram on stdout,
//! the one the inbox of `archmax serve` shows ([`archmax_spec::graph`]).

use archmax_spec::DiskFiles;
use archmax_spec::graph::{Format, Graph};
use archmax_spec::workspace::load_workflow;

use crate::args::Parsed;
use crate::workspace::{resolve_root, workflow_slot};
use crate::{Cli, Failure};

/// Prints the diagram; a workflow that does not load is the loader's error.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let format = match parsed.non_empty("format") {
        None => Format::Mermaid,
        Some(name) => Format::parse(name).ok_or_else(|| {
            Failure::Usage(format!(
                "--format must be mermaid, svg or dot, got '{name}'"
            ))
        })?,
    };
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    let given = positionals.first().and_then(Option::as_deref);
    let workflow = workflow_slot(given, &root).map_err(Failure::Usage)?;
    let loaded = load_workflow(&DiskFiles::new(&root), &workflow, &[])
        .map_err(|e| Failure::Command(e.to_string()))?;
    cli.out(&Graph::of(&loaded.spec).render(format));
    Ok(0)
}
