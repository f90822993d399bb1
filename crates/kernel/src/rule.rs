//! Rule ids: stable names hosts and tests match on.

use serde::{Serialize, Serializer};

/// The rule that decided a call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RuleId {
    /// Nothing else decided (lifecycle origin only).
    Allow,
    /// A declared path argument holds something other than paths.
    PathArgument,
    /// A path climbs above the workspace root (a host's own loop; the runtime's router
    /// refuses it before the kernel is asked).
    OutsideWorkspace,
    /// A script or hook addressed `workflows/`.
    GovernancePlane,
    /// `archmax_run` outside every skill bundle.
    SkillOnly,
    /// Any call in a reply-only turn.
    ReplyOnly,
    /// An unnamespaced `eval`.
    Eval,
    /// A write into a read-only mount.
    ReadOnlyZone,
    /// Any access to the runtime's bookkeeping areas.
    RuntimeInternal,
    /// A write into the offload areas.
    RuntimeManaged,
    /// A skill bundle denied by a forbid list.
    SkillForbidden,
    /// A skill bundle not enabled in the state.
    SkillNotAllowed,
    /// A write to a mount the state may only read.
    MountReadOnly,
    /// A mount denied by a forbid list.
    MountForbidden,
    /// A governed mount the state was not given.
    MountNotAllowed,
    /// Matches `tools.forbid_always`.
    Forbidden,
    /// Matches the state's `tools.forbid`.
    ForbiddenHere,
    /// A granted default file tool in `scratchpad/`.
    Scratchpad,
    /// A granted default file tool reading the offload areas.
    OffloadRead,
    /// An effective allow entry matched, or an always-allowed control.
    Allowed,
    /// Nothing grants it.
    NotAllowed,
    /// A guard reference could not be resolved (terminal).
    UnresolvedVariable,
    /// Leaving a state whose `requires` are unset.
    TransitionRequires,
    /// No edge to the target.
    TransitionNoEdge,
    /// A host rule's own id.
    Custom(String),
}

impl RuleId {
    /// The id as hosts see it.
    pub fn as_str(&self) -> &str {
        match self {
            RuleId::Allow => "allow",
            RuleId::PathArgument => "tool.path-argument",
            RuleId::OutsideWorkspace => "path.outside-workspace",
            RuleId::GovernancePlane => "zone.governance-plane",
            RuleId::SkillOnly => "script.skill-only",
            RuleId::ReplyOnly => "tool.reply-only",
            RuleId::Eval => "tool.eval",
            RuleId::ReadOnlyZone => "zone.read-only",
            RuleId::RuntimeInternal => "zone.runtime-internal",
            RuleId::RuntimeManaged => "zone.runtime-managed",
            RuleId::SkillForbidden => "skill.forbidden",
            RuleId::SkillNotAllowed => "skill.not-allowed",
            RuleId::MountReadOnly => "mount.read-only",
            RuleId::MountForbidden => "mount.forbidden",
            RuleId::MountNotAllowed => "mount.not-allowed",
            RuleId::Forbidden => "tool.forbidden",
            RuleId::ForbiddenHere => "tool.forbidden-here",
            RuleId::Scratchpad => "tool.scratchpad",
            RuleId::OffloadRead => "tool.offload-read",
            RuleId::Allowed => "tool.allowed",
            RuleId::NotAllowed => "tool.not-allowed",
            RuleId::UnresolvedVariable => "tool.unresolved-variable",
            RuleId::TransitionRequires => "transition.requires",
            RuleId::TransitionNoEdge => "transition.no-edge",
            RuleId::Custom(id) => id,
        }
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RuleId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
