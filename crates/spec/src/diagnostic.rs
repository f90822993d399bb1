//! What every check reports: a [`Diagnostic`].

use serde::Serialize;
use ts_rs::TS;

use crate::yaml::Pos;

/// How bad a finding is. There is no third level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Blocks `validate` (and, for shape and document rules, loading).
    Error,
    /// Reported, never fails.
    Warning,
}

/// One finding about a workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct Diagnostic {
    /// `error` or `warning`.
    pub severity: Severity,
    /// What is wrong, in words an author can act on.
    pub message: String,
    /// Workspace-relative file, when the finding is about a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Dotted path into the spec (`states.review.transitions.0.to`); absent at the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// 1-based line in `file` (or in the YAML text given), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

impl Diagnostic {
    /// An error at `field` (empty = the root).
    pub fn error(field: &str, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, field, message)
    }
    /// A warning at `field` (empty = the root).
    pub fn warning(field: &str, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, field, message)
    }
    fn new(severity: Severity, field: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            message: message.into(),
            file: None,
            field: (!field.is_empty()).then(|| field.to_string()),
            line: None,
            column: None,
        }
    }
    /// Sets the position.
    #[must_use]
    pub fn at(mut self, pos: Option<Pos>) -> Self {
        if let Some(p) = pos {
            self.line = Some(p.line);
            self.column = Some(p.column);
        }
        self
    }
    /// Sets the file.
    #[must_use]
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
    /// True for an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
