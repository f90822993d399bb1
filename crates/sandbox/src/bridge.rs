//! The host side of `tools.*`.

use std::future::Future;
use std::pin::Pin;

/// Tools never exposed on `tools`, even when a bridge lists them (the original's PTC-excluded set).
pub const PTC_EXCLUDED_TOOLS: &[&str] = &[
    "archmax_advance",
    "archmax_reset",
    "archmax_wait",
    "archmax_eval",
    "archmax_run",
    "archmax_get_variables",
    "archmax_set_variables",
    "archmax_raise",
    "eval",
];

/// The host's tool gateway, as seen from a script. Every `tools.*` call lands here.
pub trait ToolBridge: Send + Sync {
    /// The tool names scripts may call (exposed camelCased on `tools`: read_file -> tools.readFile).
    /// Names in [`PTC_EXCLUDED_TOOLS`] are dropped.
    fn tools(&self) -> Vec<String>;
    /// Calls a tool; Err(text) is a refusal or failure the script can catch: the promise rejects
    /// with an `Error` whose message is `Tool '<name>' failed: <text>` (the original's wording, so
    /// a governance refusal's message contains `[workflow] BLOCKED`).
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: serde_json::Value,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;
}
