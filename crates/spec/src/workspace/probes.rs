//! Placeholder pass.
use super::Context;
use crate::diagnostic::Diagnostic;
pub(crate) fn check(_ctx: &Context<'_>, _out: &mut Vec<Diagnostic>) {}
pub(crate) fn per_state(_ctx: &Context<'_>, _out: &mut Vec<Diagnostic>) {}
pub(crate) fn allow_always(_ctx: &Context<'_>, _out: &mut Vec<Diagnostic>) {}
