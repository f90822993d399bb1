//! The model edge: OpenAI-compatible chat-completions types, client and configuration.

pub mod cassette;
pub mod client;
pub mod config;
pub mod delta;
pub mod fallback;
pub mod limit;
pub mod stream;
pub mod types;

pub use client::{Model, ModelError, ModelFuture, OpenAiClient, show_whole};
pub use config::{
    CacheTtl, ConfigError, DEFAULT_MAX_RESPONSE_BYTES, MAX_REQUEST_TIMEOUT_MS,
    MAX_RESPONSE_BYTES_LIMIT, MAX_RETRIES_LIMIT, ModelConfig, Pricing, PricingTable, RetryPolicy,
    prompt_cache_from_env,
};
pub use stream::{Chunks, NoText, TextSink};
pub use types::{
    AssistantMessage, CacheControl, ChatMessage, ChatRequest, ChatResponse, ContentPart, ImageUrl,
    MessageContent, ModelRole, ToolCall, ToolDef, Usage,
};
