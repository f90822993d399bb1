//! The hosts' telemetry settings, read the OpenTelemetry way: the standard `OTEL_*`
//! variables (or a JS host's `telemetry` option, which fills the same fields), plus
//! `ARCHMAX_LOG` and `ARCHMAX_LOG_FILE` for the structured logs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::Error;

/// How spans travel to the collector (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`, the specification's default.
    HttpProtobuf,
    /// `http/json`.
    HttpJson,
    /// `grpc` (the `grpc` feature of this crate).
    Grpc,
}

impl Protocol {
    /// Reads a protocol name as the specification spells it.
    pub fn parse(name: &str, from: &str) -> Result<Protocol, Error> {
        match name.trim() {
            "http/protobuf" => Ok(Protocol::HttpProtobuf),
            "http/json" => Ok(Protocol::HttpJson),
            "grpc" => Ok(Protocol::Grpc),
            other => Err(Error(format!(
                "{from} is '{other}': expected one of http/protobuf, http/json, grpc"
            ))),
        }
    }
}

/// Where and how to export spans.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    /// The traces endpoint, complete (`…/v1/traces` for HTTP).
    pub endpoint: String,
    pub protocol: Protocol,
    /// Sent with every export request (`OTEL_EXPORTER_OTLP_HEADERS`).
    pub headers: BTreeMap<String, String>,
    /// Per export request (`OTEL_EXPORTER_OTLP_TIMEOUT`, milliseconds).
    pub timeout_ms: Option<u64>,
}

/// Everything the hosts' telemetry needs to start.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// `None`: no spans leave the process.
    pub export: Option<Export>,
    /// `OTEL_SERVICE_NAME` (default `archmax`).
    pub service_name: String,
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: model spans carry the
    /// messages.
    pub capture_content: bool,
    /// `ARCHMAX_LOG`: an `EnvFilter` directive; `None`: no logs.
    pub log_filter: Option<String>,
    /// `ARCHMAX_LOG_FILE`: the logs go there (appended) instead of stderr.
    pub log_file: Option<PathBuf>,
}

const DEFAULT_SERVICE: &str = "archmax";

impl Config {
    /// Reads the settings from `var` (the process environment, or the CLI's with its
    /// `.env`). `OTEL_SDK_DISABLED=true` turns the export off; the logs stay as
    /// `ARCHMAX_LOG` says.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Config, Error> {
        let get = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let disabled =
            get("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let export = if disabled {
            None
        } else {
            export_from_env(&get)?
        };
        Ok(Config {
            export,
            service_name: get("OTEL_SERVICE_NAME").unwrap_or_else(|| DEFAULT_SERVICE.to_string()),
            capture_content: get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
            log_filter: get("ARCHMAX_LOG"),
            log_file: get("ARCHMAX_LOG_FILE").map(PathBuf::from),
        })
    }

    /// Whether anything is to be done: spans to export or logs to write.
    pub fn is_active(&self) -> bool {
        self.export.is_some() || self.log_filter.is_some()
    }
}

fn export_from_env(get: &dyn Fn(&str) -> Option<String>) -> Result<Option<Export>, Error> {
    let (protocol_var, protocol) = match get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") {
        Some(p) => ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", Some(p)),
        None => (
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            get("OTEL_EXPORTER_OTLP_PROTOCOL"),
        ),
    };
    let protocol = match protocol {
        Some(p) => Protocol::parse(&p, protocol_var)?,
        None => Protocol::HttpProtobuf,
    };
    let endpoint = match (
        get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        get("OTEL_EXPORTER_OTLP_ENDPOINT"),
    ) {
        (Some(signal), _) => signal,
        (None, Some(base)) => signal_endpoint(&base, protocol),
        (None, None) => return Ok(None),
    };
    let mut headers = BTreeMap::new();
    for var in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Some(list) = get(var) {
            headers.extend(parse_headers(&list, var)?);
        }
    }
    let timeout_ms = match get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        .map(|t| ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", t))
        .or_else(|| get("OTEL_EXPORTER_OTLP_TIMEOUT").map(|t| ("OTEL_EXPORTER_OTLP_TIMEOUT", t)))
    {
        Some((var, t)) => Some(
            t.trim()
                .parse::<u64>()
                .map_err(|_| Error(format!("{var} is '{t}': expected a number of milliseconds")))?,
        ),
        None => None,
    };
    Ok(Some(Export {
        endpoint,
        protocol,
        headers,
        timeout_ms,
    }))
}

/// The traces endpoint under a base `OTEL_EXPORTER_OTLP_ENDPOINT`: HTTP appends
/// `v1/traces`, gRPC uses the base as it is.
pub fn signal_endpoint(base: &str, protocol: Protocol) -> String {
    match protocol {
        Protocol::Grpc => base.to_string(),
        _ => format!("{}/v1/traces", base.trim_end_matches('/')),
    }
}

/// `key1=value1,key2=value2`, values percent-decoded, as the specification writes headers.
pub fn parse_headers(list: &str, from: &str) -> Result<BTreeMap<String, String>, Error> {
    let mut headers = BTreeMap::new();
    for pair in list.split(',').filter(|p| !p.trim().is_empty()) {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(Error(format!("{from}: '{}' is not key=value", pair.trim())));
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s.trim())
                .decode_utf8_lossy()
                .into_owned()
        };
        headers.insert(decode(k), decode(v));
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        let c = Config::from_env(env(&[("OTEL_SERVICE_NAME", "svc")])).expect("config");
        assert_eq!(c.export, None);
        assert_eq!(c.service_name, "svc");
        assert!(!c.is_active());
    }

    #[test]
    fn a_base_endpoint_gets_the_traces_path_and_a_signal_endpoint_is_kept() {
        let c = Config::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20x,x-team=a",
            ),
        ]))
        .expect("config");
        let e = c.export.expect("export");
        assert_eq!(e.endpoint, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(e.protocol, Protocol::HttpJson);
        assert_eq!(e.headers["authorization"], "Bearer x");
        assert_eq!(e.headers["x-team"], "a");
        let c = Config::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:1/x"),
        ]))
        .expect("config");
        let e = c.export.expect("export");
        assert_eq!(e.endpoint, "http://traces:1/x");
        assert_eq!(e.protocol, Protocol::HttpProtobuf);
    }

    #[test]
    fn the_sdk_switch_turns_export_off_and_bad_values_are_named() {
        let c = Config::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SDK_DISABLED", "true"),
            ("ARCHMAX_LOG", "info"),
        ]))
        .expect("config");
        assert_eq!(c.export, None);
        assert!(c.is_active());
        let e = Config::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"),
        ]))
        .expect_err("bad protocol");
        assert_eq!(
            e.0,
            "OTEL_EXPORTER_OTLP_PROTOCOL is 'thrift': expected one of http/protobuf, http/json, grpc"
        );
        let e = Config::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "novalue"),
        ]))
        .expect_err("bad header");
        assert_eq!(
            e.0,
            "OTEL_EXPORTER_OTLP_HEADERS: 'novalue' is not key=value"
        );
    }
}
