//! The error answer of the routes and the MCP tools: `{ error, code }` with a status, and
//! the status each runtime refusal ([`RunError`]) answers with.

use archmax_machine::RunError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error answer: `{ "error": <text>, "code": <class name> }` with a status.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    code: String,
    message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code.to_string(),
            message: message.into(),
        }
    }
    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "BadRequestError", message)
    }
    /// What went wrong, in words.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
    /// The error's class name (`NotAnApproverError`, …).
    pub(crate) fn code(&self) -> &str {
        &self.code
    }
    pub(crate) fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "NotFoundError", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.message, "code": self.code });
        (self.status, Json(body)).into_response()
    }
}

impl From<RunError> for ApiError {
    fn from(e: RunError) -> ApiError {
        let status = match &e {
            RunError::UnknownTrigger { .. }
            | RunError::UnknownSessionTrigger(_)
            | RunError::InvalidDecisionTarget { .. }
            | RunError::MissingDecisionTarget { .. }
            | RunError::EmptyMessage(_)
            | RunError::MissingDeliveryTrigger(_)
            | RunError::SessionId(_)
            | RunError::SessionPath { .. }
            | RunError::Options(_)
            | RunError::InvalidVariableName { .. } => StatusCode::BAD_REQUEST,
            RunError::Busy { .. }
            | RunError::Parked(_)
            | RunError::SessionNotParked(_)
            | RunError::SessionNotAwaitingInput(_)
            | RunError::WorkflowDisabled(_) => StatusCode::CONFLICT,
            RunError::WorkflowLoad(_)
            | RunError::UnsupportedRuntimeContract(_)
            | RunError::Fork(_) => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.code(), e.to_string())
    }
}
