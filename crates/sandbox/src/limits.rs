//! Per-run limits.

use std::time::Duration;

/// Limits applied to every run of a [`crate::Sandbox`]. They are fixed when the sandbox is built
/// (the original freezes a session's quotas at its first eval).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock budget of one run (`settings.timeoutMs`; default 15 s). Enforced both by the
    /// QuickJS interrupt handler (JavaScript time) and a tokio timeout (time spent awaiting host
    /// futures).
    pub timeout: Duration,
    /// QuickJS heap limit in bytes (`settings.memoryLimitBytes`; default 64 MiB).
    pub memory_bytes: usize,
    /// QuickJS native stack limit in bytes (default 1 MiB).
    pub stack_bytes: usize,
    /// `tools.*` calls allowed per run (`settings.maxPtcCalls`; default `Some(256)`; `None` =
    /// unlimited; `Some(0)` refuses every call).
    pub max_tool_calls: Option<u32>,
    /// Cap, in characters, on the captured console output of one run and, separately, on the
    /// rendered result value of an eval (`settings.maxResultChars`; default 20 000).
    pub max_result_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_millis(15_000),
            memory_bytes: 64 * 1024 * 1024,
            stack_bytes: 1024 * 1024,
            max_tool_calls: Some(256),
            max_result_chars: 20_000,
        }
    }
}
