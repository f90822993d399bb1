//! Placeholder pass.
use super::Context;
use crate::diagnostic::Diagnostic;
pub(crate) fn check(_ctx: &Context<'_>, _out: &mut Vec<Diagnostic>) {}
