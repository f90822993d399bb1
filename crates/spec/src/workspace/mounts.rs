//! Placeholder pass.
use super::Context;
use crate::diagnostic::Diagnostic;
/// Directory or file mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountKind { Dir, File }
/// One entry of the host's mount table.
#[derive(Debug, Clone, PartialEq)]
pub struct MountDecl { pub name: String, pub kind: MountKind, pub governed: bool, pub read_only: bool }
pub(crate) fn check(_ctx: &Context<'_>, _out: &mut Vec<Diagnostic>) {}
