//! Model configuration from the `ARCHMAX_*` environment (cli.md §12, public-api.md §13–14).

use std::fmt;
use std::time::Duration;

use super::types::Usage;

/// Name of the required base-URL variable.
pub const ENV_API_BASE_URL: &str = "ARCHMAX_API_BASE_URL";
/// Name of the required API-key variable.
pub const ENV_API_KEY: &str = "ARCHMAX_API_KEY";
/// Name of the required default-model variable.
pub const ENV_MODEL: &str = "ARCHMAX_MODEL";
/// Name of the optional temperature variable.
pub const ENV_TEMPERATURE: &str = "ARCHMAX_TEMPERATURE";
/// Name of the optional max-output-tokens variable.
pub const ENV_MAX_TOKENS: &str = "ARCHMAX_MAX_TOKENS";
/// Name of the optional streaming switch.
pub const ENV_STREAMING: &str = "ARCHMAX_STREAMING";
/// Name of the optional prompt-cache switch.
pub const ENV_PROMPT_CACHE: &str = "ARCHMAX_PROMPT_CACHE";
/// Name of the optional prompt-cache lifetime variable.
pub const ENV_PROMPT_CACHE_TTL: &str = "ARCHMAX_PROMPT_CACHE_TTL";
/// Name of the optional per-request timeout variable (milliseconds).
pub const ENV_REQUEST_TIMEOUT_MS: &str = "ARCHMAX_REQUEST_TIMEOUT_MS";
/// Name of the optional retry-count variable (retries after the first attempt).
pub const ENV_MAX_RETRIES: &str = "ARCHMAX_MAX_RETRIES";
/// Name of the optional response-size bound (bytes).
pub const ENV_MAX_RESPONSE_BYTES: &str = "ARCHMAX_MAX_RESPONSE_BYTES";
/// Name of the optional bound on concurrent calls per endpoint, process-wide.
pub const ENV_MAX_CONCURRENT_CALLS: &str = "ARCHMAX_MAX_CONCURRENT_CALLS";
/// Default bound on one model response body: 8 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 8 * 1024 * 1024;
/// Largest response bound `ARCHMAX_MAX_RESPONSE_BYTES` accepts: 1 GiB.
pub const MAX_RESPONSE_BYTES_LIMIT: u64 = 1024 * 1024 * 1024;
/// Longest per-request timeout `ARCHMAX_REQUEST_TIMEOUT_MS` accepts (one hour).
pub const MAX_REQUEST_TIMEOUT_MS: u64 = 3_600_000;
/// Most retries `ARCHMAX_MAX_RETRIES` accepts.
pub const MAX_RETRIES_LIMIT: u32 = 10;

/// Name of the input price variable (USD per 1M tokens).
pub const ENV_PRICE_INPUT: &str = "ARCHMAX_PRICE_INPUT";
/// Name of the output price variable (USD per 1M tokens).
pub const ENV_PRICE_OUTPUT: &str = "ARCHMAX_PRICE_OUTPUT";
/// Name of the cache-read price variable (USD per 1M tokens).
pub const ENV_PRICE_CACHE_READ: &str = "ARCHMAX_PRICE_CACHE_READ";
/// Name of the cache-write price variable (USD per 1M tokens).
pub const ENV_PRICE_CACHE_WRITE: &str = "ARCHMAX_PRICE_CACHE_WRITE";

/// A configuration error; each `Display` text is the contract text of cli.md §12.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A required variable is missing, empty or whitespace-only.
    #[error(
        "Missing required environment variable: {name}. Copy .env.example to .env and fill it in."
    )]
    Missing {
        /// The variable name.
        name: String,
    },
    /// A numeric variable is not a number.
    #[error("Environment variable {name} must be a number, got: {raw}")]
    NotANumber {
        /// The variable name.
        name: String,
        /// The value as given (untrimmed).
        raw: String,
    },
    /// A whole-number variable is outside its range.
    #[error("Environment variable {name} must be a whole number from {min} to {max}, got: {raw}")]
    OutOfRange {
        /// The variable name.
        name: String,
        /// The value as given (untrimmed).
        raw: String,
        /// The smallest accepted value.
        min: u64,
        /// The largest accepted value.
        max: u64,
    },
    /// A boolean variable is not one of `1/true/yes/on`, `0/false/no/off`.
    #[error("Environment variable {name} must be a boolean, got: {raw}")]
    NotABoolean {
        /// The variable name.
        name: String,
        /// The value as given (untrimmed).
        raw: String,
    },
}

/// Retry behaviour of the HTTP client.
///
/// With the defaults an endpoint that never answers fails after 3 × 60 s plus 1.5 s of backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts, the first included (default 3: `ARCHMAX_MAX_RETRIES` = 2). `0` is
    /// treated as 1.
    pub attempts: u32,
    /// Delay before the first retry; doubled for each further retry (default 500 ms).
    pub base_delay: Duration,
    /// Upper bound of any single delay, a `Retry-After` value included (default 30 s).
    pub max_delay: Duration,
    /// Timeout of one attempt, response body included (default 60 s,
    /// `ARCHMAX_REQUEST_TIMEOUT_MS`).
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            timeout: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The policy with `ARCHMAX_REQUEST_TIMEOUT_MS` and `ARCHMAX_MAX_RETRIES` applied (read
    /// through `lookup`; empty counts as unset): a timeout of 1 ms to one hour, 0 to 10 retries.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<RetryPolicy, ConfigError> {
        let mut policy = RetryPolicy::default();
        let optional = |name: &str| lookup(name).filter(|raw| !raw.trim().is_empty());
        if let Some(raw) = optional(ENV_REQUEST_TIMEOUT_MS) {
            let ms = parse_in_range(ENV_REQUEST_TIMEOUT_MS, &raw, 1, MAX_REQUEST_TIMEOUT_MS)?;
            policy.timeout = Duration::from_millis(ms);
        }
        if let Some(raw) = optional(ENV_MAX_RETRIES) {
            let retries = parse_in_range(ENV_MAX_RETRIES, &raw, 0, u64::from(MAX_RETRIES_LIMIT))?;
            policy.attempts = u32::try_from(retries).unwrap_or(MAX_RETRIES_LIMIT) + 1;
        }
        Ok(policy)
    }

    /// Retries after the first attempt.
    pub fn retries(&self) -> u32 {
        self.attempts.max(1) - 1
    }

    /// The backoff before retry number `retry` (1 = the first retry):
    /// `base_delay × 2^(retry−1)`, capped at `max_delay`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = retry.saturating_sub(1).min(30);
        self.base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay)
    }
}

/// Prompt-cache lifetime.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheTtl {
    /// `5m` (the default).
    #[default]
    FiveMinutes,
    /// `1h`.
    OneHour,
}

impl CacheTtl {
    /// Reads `5m` or `1h` (trimmed); any other value falls back to `5m`
    /// (public-api.md §8 `promptCache`).
    pub fn parse(raw: &str) -> CacheTtl {
        match raw.trim() {
            "1h" => CacheTtl::OneHour,
            _ => CacheTtl::FiveMinutes,
        }
    }

    /// The wire text: `5m` or `1h`.
    pub fn as_str(&self) -> &'static str {
        match self {
            CacheTtl::FiveMinutes => "5m",
            CacheTtl::OneHour => "1h",
        }
    }
}

/// One price entry, USD per 1M tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pricing {
    /// Input (prompt) rate.
    pub input: Option<f64>,
    /// Output (completion) rate.
    pub output: Option<f64>,
    /// Cache-read rate; defaults to the input rate.
    pub cache_read: Option<f64>,
    /// Cache-write rate; defaults to the input rate.
    pub cache_write: Option<f64>,
}

impl Pricing {
    /// The `default` price entry of `ARCHMAX_PRICE_INPUT`, `_OUTPUT`, `_CACHE_READ` and
    /// `_CACHE_WRITE` (read through `lookup`), `None` when none is set; a value that is not a
    /// number is refused. An empty or whitespace-only value counts as unset.
    pub fn from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Pricing>, ConfigError> {
        let number = |name: &str| {
            lookup(name)
                .filter(|raw| !raw.trim().is_empty())
                .map(|raw| parse_number(name, &raw))
                .transpose()
        };
        let prices = Pricing {
            input: number(ENV_PRICE_INPUT)?,
            output: number(ENV_PRICE_OUTPUT)?,
            cache_read: number(ENV_PRICE_CACHE_READ)?,
            cache_write: number(ENV_PRICE_CACHE_WRITE)?,
        };
        Ok((prices != Pricing::default()).then_some(prices))
    }

    /// The cost of `usage` in USD, rounded to 6 decimals; `None` when both `input` and
    /// `output` are unset (cost is never guessed).
    ///
    /// Formula (an unset rate counts as 0):
    /// `(input × max(in − cacheRead − cacheCreate, 0) + output × out
    /// + (cache_read ?? input) × cacheRead + (cache_write ?? input) × cacheCreate) / 1e6`.
    pub fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        if self.input.is_none() && self.output.is_none() {
            return None;
        }
        let input = self.input.unwrap_or(0.0);
        let output = self.output.unwrap_or(0.0);
        let cache_read = self.cache_read.or(self.input).unwrap_or(0.0);
        let cache_write = self.cache_write.or(self.input).unwrap_or(0.0);
        let uncached = usage
            .input_tokens
            .saturating_sub(usage.cache_read_tokens)
            .saturating_sub(usage.cache_creation_tokens);
        let raw = input * uncached as f64
            + output * usage.output_tokens as f64
            + cache_read * usage.cache_read_tokens as f64
            + cache_write * usage.cache_creation_tokens as f64;
        let cost = raw / 1e6;
        Some((cost * 1e6).round() / 1e6)
    }
}

/// A pricing table keyed by model id, with `default` as the fallback key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PricingTable {
    /// The entries, in declaration order.
    pub entries: Vec<(String, Pricing)>,
}

impl PricingTable {
    /// The key of the fallback entry.
    pub const DEFAULT_KEY: &'static str = "default";

    /// A table of one entry, `default`: every model is priced alike (`ARCHMAX_PRICE_*`).
    pub fn default_only(pricing: Pricing) -> Self {
        PricingTable {
            entries: vec![(Self::DEFAULT_KEY.to_owned(), pricing)],
        }
    }

    /// The entry for `model`: the exact id, else the longest key (other than `default`) that is a
    /// substring of the id (the first declared wins a tie), else `default`.
    pub fn lookup(&self, model: &str) -> Option<&Pricing> {
        if let Some((_, p)) = self.entries.iter().find(|(k, _)| k == model) {
            return Some(p);
        }
        let mut best: Option<(&str, &Pricing)> = None;
        for (key, pricing) in &self.entries {
            if key == Self::DEFAULT_KEY || !model.contains(key.as_str()) {
                continue;
            }
            if best.is_none_or(|(b, _)| key.len() > b.len()) {
                best = Some((key, pricing));
            }
        }
        best.map(|(_, p)| p).or_else(|| {
            self.entries
                .iter()
                .find(|(k, _)| k == Self::DEFAULT_KEY)
                .map(|(_, p)| p)
        })
    }

    /// The cost of `usage` for `model`; `None` when no entry matches or the entry has neither an
    /// input nor an output rate.
    pub fn cost_usd(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.lookup(model)?.cost_usd(usage)
    }
}

/// Everything needed to build the model client, plus the model-related env switches.
#[derive(Clone, PartialEq)]
pub struct ModelConfig {
    /// The OpenAI-compatible base URL (e.g. `https://api.openai.com/v1`).
    pub base_url: String,
    /// The API key, sent as `Authorization: Bearer <key>`.
    pub api_key: String,
    /// The default model id.
    pub model: String,
    /// Sampling temperature sent when the request has none.
    pub temperature: Option<f64>,
    /// Max output tokens sent when the request has none.
    pub max_tokens: Option<u64>,
    /// Retry and timeout behaviour.
    pub retry: RetryPolicy,
    /// Largest response body read, in bytes (`ARCHMAX_MAX_RESPONSE_BYTES`, default 8 MiB); a
    /// longer one fails the call with [`super::ModelError::TooLarge`].
    pub max_response_bytes: u64,
    /// `ARCHMAX_STREAMING` (default on): the agent's calls ask for a stream
    /// (`OpenAiClient::send_streaming`) and their text is shown as `agent-text-delta`s.
    pub streaming: bool,
    /// `ARCHMAX_PROMPT_CACHE` (default on).
    pub prompt_cache: bool,
    /// `ARCHMAX_PROMPT_CACHE_TTL` (default `5m`).
    pub prompt_cache_ttl: CacheTtl,
    /// The `default` price entry from `ARCHMAX_PRICE_*`, when any of them is set.
    pub pricing: Option<Pricing>,
    /// How many calls the process sends this endpoint at once (`ARCHMAX_MAX_CONCURRENT_CALLS`,
    /// default 16); the rest queue ([`super::limit`]).
    pub max_concurrent_calls: u32,
}

impl fmt::Debug for ModelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("retry", &self.retry)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("streaming", &self.streaming)
            .field("prompt_cache", &self.prompt_cache)
            .field("prompt_cache_ttl", &self.prompt_cache_ttl)
            .field("pricing", &self.pricing)
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .finish()
    }
}

impl ModelConfig {
    /// A configuration with the three required values and every default.
    pub fn new(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        ModelConfig {
            base_url: base_url.into(),
            api_key: api_key.into(),
            model: model.into(),
            temperature: None,
            max_tokens: None,
            retry: RetryPolicy::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            streaming: true,
            prompt_cache: true,
            prompt_cache_ttl: CacheTtl::default(),
            pricing: None,
            max_concurrent_calls: super::limit::DEFAULT_MAX_CONCURRENT_CALLS,
        }
    }

    /// Reads the configuration through `lookup` (e.g. `|k| std::env::var(k).ok()`).
    ///
    /// Order of checks: `ARCHMAX_API_BASE_URL`, `ARCHMAX_API_KEY` (optional for a
    /// [loopback](is_loopback_url) endpoint), `ARCHMAX_MODEL` (trimmed; blank is missing), then `ARCHMAX_TEMPERATURE`, `ARCHMAX_MAX_TOKENS`, `ARCHMAX_STREAMING`,
    /// `ARCHMAX_PROMPT_CACHE`, `ARCHMAX_PROMPT_CACHE_TTL`, `ARCHMAX_PRICE_INPUT`, `_OUTPUT`,
    /// `_CACHE_READ`, `_CACHE_WRITE`, `ARCHMAX_REQUEST_TIMEOUT_MS`, `ARCHMAX_MAX_RETRIES`,
    /// `ARCHMAX_MAX_RESPONSE_BYTES`, `ARCHMAX_MAX_CONCURRENT_CALLS`. An empty or whitespace-only optional value counts as
    /// unset. The first failure is returned.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<ModelConfig, ConfigError> {
        let required = |name: &str| -> Result<String, ConfigError> {
            lookup(name)
                .map(|raw| raw.trim().to_owned())
                .filter(|value| !value.is_empty())
                .ok_or_else(|| ConfigError::Missing {
                    name: name.to_owned(),
                })
        };
        let base_url = required(ENV_API_BASE_URL)?;
        // A server on this machine needs no key (local servers rarely check one).
        let api_key = match required(ENV_API_KEY) {
            Err(_) if is_loopback_url(&base_url) => String::new(),
            other => other?,
        };
        let model = required(ENV_MODEL)?;
        let optional = |name: &str| lookup(name).filter(|raw| !raw.trim().is_empty());
        let number = |name: &str| {
            optional(name)
                .map(|raw| parse_number(name, &raw))
                .transpose()
        };
        let boolean = |name: &str| optional(name).map(|raw| parse_bool(name, &raw)).transpose();

        let temperature = number(ENV_TEMPERATURE)?;
        let max_tokens = match optional(ENV_MAX_TOKENS) {
            None => None,
            Some(raw) => Some(parse_count(ENV_MAX_TOKENS, &raw)?),
        };
        let streaming = boolean(ENV_STREAMING)?.unwrap_or(true);
        let (prompt_cache, prompt_cache_ttl) = prompt_cache_from_env(&lookup)?;
        let pricing = Pricing::from_env(&lookup)?;
        let retry = RetryPolicy::from_env(&lookup)?;
        let max_response_bytes = match optional(ENV_MAX_RESPONSE_BYTES) {
            None => DEFAULT_MAX_RESPONSE_BYTES,
            Some(raw) => {
                parse_in_range(ENV_MAX_RESPONSE_BYTES, &raw, 1024, MAX_RESPONSE_BYTES_LIMIT)?
            }
        };
        let max_concurrent_calls = match optional(ENV_MAX_CONCURRENT_CALLS) {
            None => super::limit::DEFAULT_MAX_CONCURRENT_CALLS,
            Some(raw) => parse_in_range(
                ENV_MAX_CONCURRENT_CALLS,
                &raw,
                1,
                u64::from(super::limit::MAX_CONCURRENT_CALLS_LIMIT),
            )
            .map(|n| u32::try_from(n).unwrap_or(super::limit::MAX_CONCURRENT_CALLS_LIMIT))?,
        };
        Ok(ModelConfig {
            base_url,
            api_key,
            model,
            temperature,
            max_tokens,
            retry,
            max_response_bytes,
            streaming,
            prompt_cache,
            prompt_cache_ttl,
            pricing,
            max_concurrent_calls,
        })
    }

    /// The pricing table the env defines: `{ default: pricing }`, or empty.
    pub fn pricing_table(&self) -> PricingTable {
        self.pricing
            .map(PricingTable::default_only)
            .unwrap_or_default()
    }
}

/// `ARCHMAX_PROMPT_CACHE` (a boolean, default on) and `ARCHMAX_PROMPT_CACHE_TTL` (`5m` or `1h`;
/// anything else falls back to `5m`), read through `lookup`.
pub fn prompt_cache_from_env(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<(bool, CacheTtl), ConfigError> {
    let optional = |name: &str| lookup(name).filter(|raw| !raw.trim().is_empty());
    let enabled = optional(ENV_PROMPT_CACHE)
        .map(|raw| parse_bool(ENV_PROMPT_CACHE, &raw))
        .transpose()?
        .unwrap_or(true);
    let ttl = optional(ENV_PROMPT_CACHE_TTL)
        .map(|raw| CacheTtl::parse(&raw))
        .unwrap_or_default();
    Ok((enabled, ttl))
}

/// A finite decimal number (trimmed); `NaN`/infinities are rejected.
fn parse_number(name: &str, raw: &str) -> Result<f64, ConfigError> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .ok_or_else(|| ConfigError::NotANumber {
            name: name.to_owned(),
            raw: raw.to_owned(),
        })
}

/// A number that must also be a non-negative whole count (e.g. `1024` or `1024.0`).
fn parse_count(name: &str, raw: &str) -> Result<u64, ConfigError> {
    let n = parse_number(name, raw)?;
    if n >= 0.0 && n.fract() == 0.0 && n <= u64::MAX as f64 {
        Ok(n as u64)
    } else {
        Err(ConfigError::NotANumber {
            name: name.to_owned(),
            raw: raw.to_owned(),
        })
    }
}

/// A whole number from `min` to `max` (trimmed; `1024.0` counts as whole).
fn parse_in_range(name: &str, raw: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let n = parse_number(name, raw)?;
    if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 {
        Ok(n as u64)
    } else {
        Err(ConfigError::OutOfRange {
            name: name.to_owned(),
            raw: raw.to_owned(),
            min,
            max,
        })
    }
}

fn parse_bool(name: &str, raw: &str) -> Result<bool, ConfigError> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::NotABoolean {
            name: name.to_owned(),
            raw: raw.to_owned(),
        }),
    }
}

/// Whether `url`'s host is a loopback address (`localhost` and `*.localhost`, `127.0.0.0/8`,
/// `::1`, an IPv4-mapped loopback): an endpoint there may omit `ARCHMAX_API_KEY`. The URL is
/// read as a browser reads it, so `http://127.1/v1` and `http://[0:0:0:0:0:0:0:1]/v1` are
/// loopback too. The one rule: `createAgent`'s model factory settings read it from here.
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url.trim()) else {
        return false;
    };
    let Some(host) = parsed.host_str() else {
        return false;
    };
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
    {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    const BASE: [(&str, &str); 3] = [
        ("ARCHMAX_API_BASE_URL", " https://api.example.com/v1 "),
        ("ARCHMAX_API_KEY", "sk-1"),
        ("ARCHMAX_MODEL", "gpt-x"),
    ];

    fn with(extra: &[(&str, &str)]) -> Result<ModelConfig, ConfigError> {
        let mut pairs = BASE.to_vec();
        pairs.extend_from_slice(extra);
        ModelConfig::from_env(env(&pairs))
    }

    fn err_text(extra: &[(&str, &str)]) -> String {
        match with(extra) {
            Ok(config) => format!("unexpected Ok: {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_loopback_endpoint_needs_no_key() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://[::1]:9/v1",
            "http://127.1.2.3/v1",
            // Read as a browser reads them (and so as `createAgent`'s factory settings were).
            "http://127.1:9/v1",
            "http://[0:0:0:0:0:0:0:1]:9/v1",
            "http://LOCALHOST:9/v1",
            "http://api.localhost/v1",
            "http://[::ffff:127.0.0.1]:9/v1",
            "http://2130706433/v1",
        ] {
            let config = ModelConfig::from_env(env(&[
                ("ARCHMAX_API_BASE_URL", url),
                ("ARCHMAX_MODEL", "m"),
            ]))
            .expect(url);
            assert_eq!(config.api_key, "", "{url}");
        }
        for url in [
            "https://api.example.com/v1",
            "http://127.0.0.1.example.com/v1",
            "http://10.0.0.1/v1",
            "http://localhost.example.com/v1",
            "not a url",
        ] {
            assert_eq!(
                ModelConfig::from_env(env(&[
                    ("ARCHMAX_API_BASE_URL", url),
                    ("ARCHMAX_MODEL", "m")
                ]))
                .err(),
                Some(ConfigError::Missing {
                    name: "ARCHMAX_API_KEY".to_owned()
                }),
                "{url}"
            );
        }
    }

    #[test]
    fn minimal_env_gives_defaults() {
        let config = with(&[]).expect("valid");
        assert_eq!(config.base_url, "https://api.example.com/v1");
        assert_eq!(config.api_key, "sk-1");
        assert_eq!(config.model, "gpt-x");
        assert_eq!(config.temperature, None);
        assert_eq!(config.max_tokens, None);
        assert!(config.streaming);
        assert!(config.prompt_cache);
        assert_eq!(config.prompt_cache_ttl, CacheTtl::FiveMinutes);
        assert_eq!(config.pricing, None);
        assert_eq!(config.retry, RetryPolicy::default());
        assert!(config.pricing_table().entries.is_empty());
    }

    #[test]
    fn required_variables_are_checked_in_order() {
        let missing = |name: &str| {
            format!(
                "Missing required environment variable: {name}. Copy .env.example to .env and fill it in."
            )
        };
        let text = |pairs: &[(&str, &str)]| match ModelConfig::from_env(env(pairs)) {
            Ok(_) => "Ok".to_owned(),
            Err(e) => e.to_string(),
        };
        assert_eq!(text(&[]), missing("ARCHMAX_API_BASE_URL"));
        assert_eq!(
            text(&[("ARCHMAX_API_BASE_URL", "   ")]),
            missing("ARCHMAX_API_BASE_URL")
        );
        assert_eq!(
            text(&[("ARCHMAX_API_BASE_URL", "u"), ("ARCHMAX_MODEL", "m")]),
            missing("ARCHMAX_API_KEY")
        );
        assert_eq!(
            text(&[("ARCHMAX_API_BASE_URL", "u"), ("ARCHMAX_API_KEY", "")]),
            missing("ARCHMAX_API_KEY")
        );
        assert_eq!(
            text(&[
                ("ARCHMAX_API_BASE_URL", "u"),
                ("ARCHMAX_API_KEY", "k"),
                ("ARCHMAX_MODEL", "\t\n")
            ]),
            missing("ARCHMAX_MODEL")
        );
        assert_eq!(
            ModelConfig::from_env(env(&[])),
            Err(ConfigError::Missing {
                name: "ARCHMAX_API_BASE_URL".into()
            })
        );
    }

    #[test]
    fn numbers_parse_and_empty_is_unset() {
        let config = with(&[
            ("ARCHMAX_TEMPERATURE", " 0.25 "),
            ("ARCHMAX_MAX_TOKENS", "4096"),
        ])
        .expect("valid");
        assert_eq!(config.temperature, Some(0.25));
        assert_eq!(config.max_tokens, Some(4096));
        let config =
            with(&[("ARCHMAX_TEMPERATURE", ""), ("ARCHMAX_MAX_TOKENS", "  ")]).expect("valid");
        assert_eq!(config.temperature, None);
        assert_eq!(config.max_tokens, None);
        assert_eq!(
            with(&[("ARCHMAX_MAX_TOKENS", "1e3")])
                .expect("valid")
                .max_tokens,
            Some(1000)
        );
    }

    #[test]
    fn bad_numbers_name_the_variable_and_raw_value() {
        assert_eq!(
            err_text(&[("ARCHMAX_TEMPERATURE", "warm")]),
            "Environment variable ARCHMAX_TEMPERATURE must be a number, got: warm"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_TEMPERATURE", "NaN")]),
            "Environment variable ARCHMAX_TEMPERATURE must be a number, got: NaN"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_MAX_TOKENS", " 12abc")]),
            "Environment variable ARCHMAX_MAX_TOKENS must be a number, got:  12abc"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_MAX_TOKENS", "1.5")]),
            "Environment variable ARCHMAX_MAX_TOKENS must be a number, got: 1.5"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_MAX_TOKENS", "-1")]),
            "Environment variable ARCHMAX_MAX_TOKENS must be a number, got: -1"
        );
        for name in [
            "ARCHMAX_PRICE_INPUT",
            "ARCHMAX_PRICE_OUTPUT",
            "ARCHMAX_PRICE_CACHE_READ",
            "ARCHMAX_PRICE_CACHE_WRITE",
        ] {
            assert_eq!(
                err_text(&[(name, "$3")]),
                format!("Environment variable {name} must be a number, got: $3")
            );
        }
    }

    #[test]
    fn booleans_accept_the_documented_spellings() {
        for (raw, expected) in [
            ("1", true),
            ("TRUE", true),
            (" yes ", true),
            ("On", true),
            ("0", false),
            ("false", false),
            ("NO", false),
            (" off", false),
        ] {
            let config =
                with(&[("ARCHMAX_STREAMING", raw), ("ARCHMAX_PROMPT_CACHE", raw)]).expect("valid");
            assert_eq!(config.streaming, expected, "{raw}");
            assert_eq!(config.prompt_cache, expected, "{raw}");
        }
        assert_eq!(
            err_text(&[("ARCHMAX_STREAMING", "maybe")]),
            "Environment variable ARCHMAX_STREAMING must be a boolean, got: maybe"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_PROMPT_CACHE", "2")]),
            "Environment variable ARCHMAX_PROMPT_CACHE must be a boolean, got: 2"
        );
    }

    #[test]
    fn optional_checks_run_in_documented_order() {
        assert_eq!(
            err_text(&[
                ("ARCHMAX_PRICE_INPUT", "x"),
                ("ARCHMAX_STREAMING", "x"),
                ("ARCHMAX_MAX_TOKENS", "x"),
                ("ARCHMAX_TEMPERATURE", "x"),
            ]),
            "Environment variable ARCHMAX_TEMPERATURE must be a number, got: x"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_PRICE_INPUT", "x"), ("ARCHMAX_STREAMING", "x")]),
            "Environment variable ARCHMAX_STREAMING must be a boolean, got: x"
        );
        // A missing required variable is reported before any bad optional one.
        assert_eq!(
            ModelConfig::from_env(env(&[("ARCHMAX_TEMPERATURE", "x")]))
                .map_err(|e| e.to_string()),
            Err("Missing required environment variable: ARCHMAX_API_BASE_URL. Copy .env.example to .env and fill it in.".to_owned())
        );
    }

    #[test]
    fn ttl_accepts_5m_and_1h_and_falls_back() {
        let ttl = |raw: &str| {
            with(&[("ARCHMAX_PROMPT_CACHE_TTL", raw)])
                .expect("valid")
                .prompt_cache_ttl
        };
        assert_eq!(ttl("1h"), CacheTtl::OneHour);
        assert_eq!(ttl(" 1h "), CacheTtl::OneHour);
        assert_eq!(ttl("5m"), CacheTtl::FiveMinutes);
        assert_eq!(ttl("2h"), CacheTtl::FiveMinutes);
        assert_eq!(CacheTtl::OneHour.as_str(), "1h");
        assert_eq!(CacheTtl::FiveMinutes.as_str(), "5m");
    }

    #[test]
    fn any_price_creates_a_default_entry() {
        let config = with(&[("ARCHMAX_PRICE_OUTPUT", "15")]).expect("valid");
        assert_eq!(
            config.pricing,
            Some(Pricing {
                input: None,
                output: Some(15.0),
                cache_read: None,
                cache_write: None
            })
        );
        let table = config.pricing_table();
        assert_eq!(table.entries.len(), 1);
        assert_eq!(table.entries[0].0, "default");
        let config = with(&[("ARCHMAX_PRICE_CACHE_READ", "0.3")]).expect("valid");
        let pricing = config.pricing.expect("entry");
        assert_eq!(pricing.cache_read, Some(0.3));
        // An entry with neither input nor output never yields a cost.
        assert_eq!(pricing.cost_usd(&Usage::default()), None);
    }

    #[test]
    fn cost_formula_defaults_cache_rates_to_input() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 600_000,
            cache_creation_tokens: 200_000,
        };
        let pricing = Pricing {
            input: Some(3.0),
            output: Some(15.0),
            cache_read: None,
            cache_write: None,
        };
        // 3×0.2 + 15×0.1 + 3×0.6 + 3×0.2
        assert_eq!(pricing.cost_usd(&usage), Some(4.5));
        let pricing = Pricing {
            cache_read: Some(0.3),
            cache_write: Some(3.75),
            ..pricing
        };
        // 0.6 + 1.5 + 0.18 + 0.75
        assert_eq!(pricing.cost_usd(&usage), Some(3.03));
        // Cache counts larger than the input clamp the uncached part at 0.
        let odd = Usage {
            input_tokens: 10,
            output_tokens: 0,
            cache_read_tokens: 20,
            cache_creation_tokens: 0,
        };
        assert_eq!(pricing.cost_usd(&odd), Some(0.000006));
        // Rounded to 6 decimals.
        let tiny = Usage {
            input_tokens: 1,
            ..Usage::default()
        };
        let p = Pricing {
            input: Some(0.4),
            ..Pricing::default()
        };
        assert_eq!(p.cost_usd(&tiny), Some(0.0));
        let p = Pricing {
            output: Some(1.0),
            ..Pricing::default()
        };
        assert_eq!(p.cost_usd(&usage), Some(0.1));
    }

    #[test]
    fn pricing_table_lookup_order() {
        let price = |n: f64| Pricing {
            input: Some(n),
            ..Pricing::default()
        };
        let table = PricingTable {
            entries: vec![
                ("default".into(), price(1.0)),
                ("claude".into(), price(2.0)),
                ("claude-sonnet".into(), price(3.0)),
                ("gpt-4o".into(), price(4.0)),
                ("gpt-4o-mini".into(), price(5.0)),
            ],
        };
        let input = |model: &str| table.lookup(model).and_then(|p| p.input);
        assert_eq!(input("gpt-4o"), Some(4.0));
        assert_eq!(input("anthropic/claude-sonnet-4"), Some(3.0));
        assert_eq!(input("claude-haiku"), Some(2.0));
        assert_eq!(input("gpt-4o-mini-2024"), Some(5.0));
        assert_eq!(input("llama"), Some(1.0));
        assert_eq!(input("default-ish"), Some(1.0));
        let usage = Usage {
            input_tokens: 1_000_000,
            ..Usage::default()
        };
        assert_eq!(table.cost_usd("llama", &usage), Some(1.0));
        assert_eq!(PricingTable::default().cost_usd("x", &usage), None);
    }

    fn config_bytes(extra: &[(&str, &str)]) -> u64 {
        with(extra).expect("valid").max_response_bytes
    }

    #[test]
    fn request_timeout_and_retries_come_from_the_env() {
        let config = with(&[]).expect("valid");
        assert_eq!(config.retry.timeout, Duration::from_secs(60));
        assert_eq!(config.retry.retries(), 2);
        let config = with(&[
            ("ARCHMAX_REQUEST_TIMEOUT_MS", " 1500 "),
            ("ARCHMAX_MAX_RETRIES", "0"),
        ])
        .expect("valid");
        assert_eq!(config.retry.timeout, Duration::from_millis(1500));
        assert_eq!(config.retry.attempts, 1);
        assert_eq!(
            with(&[("ARCHMAX_MAX_RETRIES", "10")])
                .expect("valid")
                .retry
                .attempts,
            11
        );
        assert_eq!(
            err_text(&[("ARCHMAX_REQUEST_TIMEOUT_MS", "soon")]),
            "Environment variable ARCHMAX_REQUEST_TIMEOUT_MS must be a number, got: soon"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_REQUEST_TIMEOUT_MS", "0")]),
            "Environment variable ARCHMAX_REQUEST_TIMEOUT_MS must be a whole number from 1 to 3600000, got: 0"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_MAX_RETRIES", "2.5")]),
            "Environment variable ARCHMAX_MAX_RETRIES must be a whole number from 0 to 10, got: 2.5"
        );
        assert_eq!(config_bytes(&[]), 8 * 1024 * 1024);
        assert_eq!(
            config_bytes(&[("ARCHMAX_MAX_RESPONSE_BYTES", "65536")]),
            65536
        );
        assert_eq!(
            err_text(&[("ARCHMAX_MAX_RESPONSE_BYTES", "10")]),
            "Environment variable ARCHMAX_MAX_RESPONSE_BYTES must be a whole number from 1024 to 1073741824, got: 10"
        );
        assert_eq!(
            err_text(&[("ARCHMAX_MAX_RETRIES", "11")]),
            "Environment variable ARCHMAX_MAX_RETRIES must be a whole number from 0 to 10, got: 11"
        );
        assert_eq!(with(&[]).expect("valid").max_concurrent_calls, 16);
        assert_eq!(
            with(&[("ARCHMAX_MAX_CONCURRENT_CALLS", "8")])
                .expect("valid")
                .max_concurrent_calls,
            8
        );
        assert_eq!(
            err_text(&[("ARCHMAX_MAX_CONCURRENT_CALLS", "0")]),
            "Environment variable ARCHMAX_MAX_CONCURRENT_CALLS must be a whole number from 1 to 1024, got: 0"
        );
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let policy = RetryPolicy {
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(3),
            ..RetryPolicy::default()
        };
        assert_eq!(policy.backoff(1), Duration::from_millis(500));
        assert_eq!(policy.backoff(2), Duration::from_millis(1000));
        assert_eq!(policy.backoff(3), Duration::from_millis(2000));
        assert_eq!(policy.backoff(4), Duration::from_secs(3));
        assert_eq!(policy.backoff(200), Duration::from_secs(3));
    }

    #[test]
    fn debug_redacts_the_key() {
        let text = format!("{:?}", ModelConfig::new("u", "sk-secret", "m"));
        assert!(!text.contains("sk-secret"), "{text}");
        assert!(text.contains("<redacted>"), "{text}");
    }
}
